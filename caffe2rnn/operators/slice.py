"""Slice / SliceGradient: a contiguous block of a tensor.

``Slice(data, starts=[...], ends=[...])`` keeps, along each dimension d,
indices ``starts[d] <= i < ends[d]``; a negative end counts from one past
the last index (``-1`` = to the end), as in Caffe2. ``starts``/``ends`` may
also come as int tensors (inputs 1 and 2). Soft-coverage attention slices
the encoder length out of ``Shape(encoder_outputs)`` with it.

The gradient writes ``dY`` into a zero tensor shaped like ``data``.

Caffe2: caffe2/operators/slice_op.{h,cc}.
"""

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _SliceBase(Operator):
    def setup(self):
        self.starts = list(self.args.repeated("starts", (), int))
        self.ends = list(self.args.repeated("ends", (), int))

    def region(self, data, from_inputs):
        """The tuple of slices selected in ``data`` (validated); ``from_inputs``:
        starts/ends are inputs 1 and 2 instead of arguments."""
        starts, ends = self.starts, self.ends
        if from_inputs:
            starts = [int(v) for v in self.input(1).reshape(-1)]
            ends = [int(v) for v in self.input(2).reshape(-1)]
        if len(starts) != len(ends) or len(starts) > data.ndim:
            raise ArgumentError(
                "Slice: starts %s and ends %s must have one entry per dimension of '%s' (%d)"
                % (starts, ends, self.input_name(0), data.ndim)
            )
        region = []
        for d, size in enumerate(data.shape):
            start = starts[d] if d < len(starts) else 0
            end = ends[d] if d < len(ends) else -1
            if end < 0:
                end = size + 1 + end
            if not (0 <= start <= size and start <= end <= size):
                raise ArgumentError(
                    "Slice: [%d, %d) is out of range for dimension %d (size %d) of '%s'"
                    % (start, end, d, size, self.input_name(0))
                )
            region.append(slice(start, end))
        return tuple(region)


@register("Slice", inputs=(1, 3), outputs=1)
class Slice(_SliceBase):
    def run(self):
        data = self.input(0)
        block = data[self.region(data, len(self.inputs) == 3)]
        self.output(0, block.shape, data.dtype)[...] = block


@register("SliceGradient", inputs=(2, 4), outputs=1)
class SliceGradient(_SliceBase):
    """``[data, (starts, ends,) dY] → d data``."""

    def run(self):
        data = self.input(0)
        region = self.region(data, len(self.inputs) == 4)
        dy = self.input(len(self.inputs) - 1)
        expected = data[region].shape
        if dy.shape != expected:
            raise self.shape_error(len(self.inputs) - 1, "%s (the slice of input 0)" % (expected,))
        out = self.output(0, data.shape, dy.dtype)
        out[...] = 0
        out[region] = dy


@register_gradient("Slice")
class GetSliceGradient(GradientMaker):
    def get_gradient_defs(self):
        inputs = [self.I(i) for i in range(len(self.def_.input))] + [self.GO(0)]
        return [self.op_def("SliceGradient", inputs, [self.GI(0)])]
