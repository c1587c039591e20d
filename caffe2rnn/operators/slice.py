"""Slice / SliceGradient: a contiguous block of a tensor, along one dimension.

``Slice(data, starts=[...], ends=[...])`` keeps, along each dimension d that
``starts``/``ends`` cover, the indices ``starts[d] <= i < ends[d]``;
dimensions they do not cover are kept whole. ``starts``/``ends`` may also come
as 1-D int32 tensors (inputs 1 and 2). Soft-coverage attention slices the
encoder length out of ``Shape(encoder_outputs)`` with it. The gradient writes
``dY`` into a zero tensor shaped like ``data``.

The rules are Caffe2's ``SliceImpl`` (caffe2/operators/utility_ops.h at
0cdd09da6, slice_op.h at 042e8ede4), and some surprise:

* a negative index counts from one *past* the end: ``start < 0`` becomes
  ``dims[d] + 1 + start``, and so does a negative end — ``end = -1`` is "to the
  end", and ``start = -2`` is the last index (``start = -1`` would be
  ``dims[d]``, which is refused);
* ``0 <= start < dims[d]`` (``CAFFE_ENFORCE_LT``: even an empty slice may not
  start at the end) and ``start <= end <= dims[d]``; a dimension of size 0
  ignores its start and end;
* only **one** dimension may actually be cut ("Currently only possible to
  slice in 1 dimension."); cutting none copies ``data`` whole;
* ``starts``/``ends`` are int32 (the op is registered as ``SliceOp<int>``):
  int64 tensors are refused, and argument values must fit 32 bits;
* an empty ``data`` is not copied: Slice gives an empty output whose
  dimensions beyond those ``starts`` covers are 0 (Caffe2 sized them so), and
  SliceGradient leaves its output as it was.

One refusal Caffe2 did not make: Slice cutting a (non-empty) block while
``starts`` covers fewer dimensions than ``data`` has. Caffe2 sized the output 0
in the uncovered dimensions and then copied the block into it, past its end
(an out-of-bounds write); here it is an error naming the op. (SliceGradient
sized its output like ``data`` and has no such problem.)

In SliceGradient, ``dY`` is read as Caffe2 read it: as many elements as the
slice has, in order; a ``dY`` with fewer is refused (Caffe2 read past its
end), one with more has its tail ignored; when nothing is cut, ``dX`` is a
copy of ``dY``.
"""

import numpy as np

from ..errors import ArgumentError, EnforceNotMet, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

_INT32 = (np.iinfo(np.int32).min, np.iinfo(np.int32).max)


class _SliceBase(Operator):
    #: the number of inputs that means "starts and ends are inputs 1 and 2"
    tensor_bounds_inputs = 3

    def setup(self):
        self.starts = self.args.repeated("starts", (), int)
        self.ends = self.args.repeated("ends", (), int)
        for name, values in (("starts", self.starts), ("ends", self.ends)):
            for v in values:  # GetRepeatedArgument<int>: lossless conversion
                if not _INT32[0] <= v <= _INT32[1]:
                    raise ArgumentError(
                        "%s: value %d of argument '%s' cannot be represented correctly "
                        "in a target type (int32)" % (self.op_type, v, name)
                    )

    def bounds(self):
        """``(starts, ends)``: the arguments, or inputs 1 and 2 (int32, 1-D)."""
        if len(self.inputs) == self.tensor_bounds_inputs:
            starts, ends = [
                self.typed_input(i, (np.int32,), "a 1-D int32 tensor of slice bounds", ndim=1)
                for i in (1, 2)
            ]
            return [int(v) for v in starts], [int(v) for v in ends]
        for name in ("starts", "ends"):
            if not self.args.has(name):
                raise ArgumentError(
                    "%s needs the argument '%s' (or starts and ends as inputs 1 and 2)"
                    % (self.op_type, name)
                )
        if len(self.starts) != len(self.ends):
            raise ArgumentError(
                "%s: starts %s and ends %s have different lengths"
                % (self.op_type, self.starts, self.ends)
            )
        return self.starts, self.ends

    def region(self, data):
        """``(index, cut, out_shape)``: the tuple of slices selected in
        ``data``, the dimension cut (None: none) and the output's shape as
        Caffe2 computed it (``dst_sizes``)."""
        starts, ends = self.bounds()
        if len(starts) != len(ends):
            raise ArgumentError(
                "%s: starts (%d values) and ends (%d values) differ in length"
                % (self.op_type, len(starts), len(ends))
            )
        if len(starts) > data.ndim:
            raise ArgumentError(
                "%s: %d starts for the %d dimensions of '%s'"
                % (self.op_type, len(starts), data.ndim, self.input_name(0))
            )
        index, out_shape = [], []
        for d, size in enumerate(data.shape):
            if d >= len(starts):
                index.append(slice(0, size))
                out_shape.append(0)  # Caffe2 left dst_sizes[d] at 0 here
                continue
            if size == 0:
                index.append(slice(0, 0))
                out_shape.append(0)
                continue
            start, end = starts[d], ends[d]
            start = size + 1 + start if start < 0 else start
            end = size + 1 + end if end < 0 else end
            if not (0 <= start < size and start <= end <= size):
                raise ArgumentError(
                    "%s: start %d, end %d (after counting negatives from one past the end) "
                    "are out of range for dimension %d (size %d) of '%s': Caffe2 requires "
                    "0 <= start < size and start <= end <= size"
                    % (self.op_type, start, end, d, size, self.input_name(0))
                )
            index.append(slice(start, end))
            out_shape.append(end - start)
        if data.size == 0:
            return tuple(index), None, tuple(out_shape)
        cut = [d for d, s in enumerate(index) if s.start > 0 or s.stop < data.shape[d]]
        if len(cut) > 1:
            raise EnforceNotMet(
                "%s: Currently only possible to slice in 1 dimension (dimensions %s of '%s' "
                "are cut)" % (self.op_type, cut, self.input_name(0))
            )
        return tuple(index), (cut[0] if cut else None), tuple(out_shape)


@register("Slice", inputs=(1, 3), outputs=1)
class Slice(_SliceBase):
    def setup(self):
        super().setup()
        if len(self.inputs) == 2:
            raise ArgumentError(
                "Slice takes starts and ends both as inputs (3 inputs) or both as "
                "arguments (1 input); it has 2 inputs (Caffe2 read a missing input 2)"
            )

    def run(self):
        data = self.input(0)
        index, cut, out_shape = self.region(data)
        if cut is None and data.size:
            self.copy_to_output(0, data)
            return
        block = data[index]
        if data.size == 0 or block.size == 0:
            self.output(0, out_shape, data.dtype)  # nothing copied
            return
        if out_shape != block.shape:  # starts/ends do not cover every dimension
            raise ArgumentError(
                "Slice: starts/ends cover %d of the %d dimensions of '%s' and cut dimension "
                "%d: Caffe2 sized the output 0 in the dimensions they do not cover, then "
                "wrote the block past its end; give a start and an end for every dimension"
                % (len(self.bounds()[0]), data.ndim, self.input_name(0), cut)
            )
        self.output(0, block.shape, data.dtype)[...] = block


@register("SliceGradient", inputs=(2, None), outputs=1)
class SliceGradient(_SliceBase):
    """``[data, (starts, ends,) dY] → d data`` (4 inputs = bounds as inputs,
    else ``dY`` is input 1). No in-place use: E6's empty
    ``OPERATOR_SCHEMA(SliceGradient)`` allowed none (E5 had no schema and
    checked nothing)."""

    tensor_bounds_inputs = 4

    def run(self):
        data = self.input(0)
        index, cut, _ = self.region(data)
        k = 3 if len(self.inputs) == 4 else 1
        dy = self.input(k)
        if data.size == 0:
            return  # Caffe2 returned before touching the output
        if cut is None:
            self.copy_to_output(0, dy)
            return
        block = tuple(s.stop - s.start for s in index)
        need = int(np.prod(block))
        if 0 < dy.size < need:
            raise ShapeError(
                "SliceGradient: input %d ('%s') has %d elements; the slice of '%s' has %d "
                "(Caffe2 read past the end of the smaller one)"
                % (k, self.input_name(k), dy.size, self.input_name(0), need)
            )
        out = self.output(0, data.shape, dy.dtype)  # dX takes dY's type (a raw copy)
        out[...] = 0
        if dy.size:  # an empty dY: Caffe2 returned the zeroed gradient
            out[index] = dy.reshape(-1)[:need].reshape(block)


@register_gradient("Slice")
class GetSliceGradient(GradientMaker):
    def get_gradient_defs(self):
        inputs = [self.I(i) for i in range(len(self.def_.input))] + [self.GO(0)]
        return [self.op_def("SliceGradient", inputs, [self.GI(0)])]
