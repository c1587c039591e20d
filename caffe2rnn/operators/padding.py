"""AddPadding, RemovePadding, GatherPadding: rows around each range of a tensor.

A tensor's first dimension is cut into ranges by ``lengths`` (int32; without
it, one range of all N rows). With ``padding_width`` p (default 1) and
``end_padding_width`` q (default p):

* ``AddPadding([data, lengths, start_pad, end_pad])`` puts p rows before and
  q rows after each range: ``start_pad`` (a block shaped like one row; zeros
  if not given) and ``end_pad`` (default: ``start_pad``). The second output
  is the new lengths, ``lengths + p + q``.
* ``RemovePadding([data, lengths])`` drops the first p and last q rows of
  each range (``crf.py`` strips its begin/end-of-sequence rows this way);
  lengths become ``lengths - p - q``.
* ``GatherPadding([data, lengths])`` sums the start rows of all ranges (and
  the end rows, into the same output unless a second output is given): the
  gradient of AddPadding's paddings.

The two are each other's gradient: ``RemovePadding`` takes dY of an
``AddPadding`` (plus ``GatherPadding`` for the padding inputs), ``AddPadding``
with zeros takes dY of a ``RemovePadding``. The lengths must not add up to
more than N (Caffe2's ``CAFFE_ENFORCE_LE(total_length, outer_size)``); rows
after the last range are left out (AddPadding, RemovePadding: the matching
output rows are zero). A range shorter than ``p + q`` is refused where Caffe2
would have copied a reversed range. With ``p = q = 0`` data and lengths are
copied as they are.

Caffe2 sources: caffe2/operators/sequence_ops.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError, GradientError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

_PADDABLE = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_))


class _Padding(Operator):
    """Arguments, inputs and the ranges shared by the three ops."""

    def setup(self):
        self.start = self.args.single("padding_width", 1, int)
        if self.start < 0:
            raise ArgumentError("padding_width=%d; expected >= 0" % self.start)
        end = self.args.single("end_padding_width", -1, int)
        self.end = self.start if end < 0 else end

    def run(self):
        """AddPadding and RemovePadding: copy through, or :meth:`pad`."""
        if self.start == 0 and self.end == 0:
            return self.copy_through()
        x = self.data()
        self.pad(x, self.lengths(x.shape[0]))

    def pad(self, x, lengths):
        raise NotImplementedError

    def copy_through(self):
        """p = q = 0: outputs are copies of the inputs (any type)."""
        if len(self.outputs) == 2 and len(self.inputs) < 2:
            raise ArgumentError(
                "the second output copies input 1 (the lengths), but there is no input 1"
            )
        for i in range(len(self.outputs)):
            self.copy_to_output(i, self.input(i))

    def data(self):
        x = self.typed_input(0, _PADDABLE, "float32, float64, int32, int64 or bool")
        if x.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension")
        return x

    def lengths(self, n, allow_negative=False):
        """The int32 lengths (or ``[n]``), checked to fit in n rows."""
        if len(self.inputs) < 2:
            return np.array([n], dtype=np.int32)
        lengths = self.typed_input(1, (np.int32,), "int32 lengths").reshape(-1)
        if not allow_negative and lengths.size and lengths.min() < 0:
            raise ArgumentError("input 1 ('%s') holds a negative length" % self.input_name(1))
        # Caffe2 checked the running total after each range.
        if lengths.size and int(np.cumsum(lengths, dtype=np.int64).max()) > n:
            raise ShapeError(
                "input 1 ('%s'): the lengths add up to %d, more than the %d rows of input 0 "
                "('%s')" % (self.input_name(1), np.cumsum(lengths).max(), n, self.input_name(0))
            )
        return lengths

    def check_long_enough(self, lengths):
        short = lengths < self.start + self.end
        if np.any(short):
            raise ShapeError(
                "input 1 ('%s') holds a range of %d rows, shorter than its padding "
                "(%d + %d)" % (self.input_name(1), lengths[short][0], self.start, self.end)
            )

    def write_lengths(self, lengths, delta):
        if len(self.outputs) == 2:
            np.copyto(self.output(1, lengths.shape, np.int32), lengths + delta, casting="unsafe")


@register("AddPadding", inputs=(1, 4), outputs=(1, 2))
class AddPadding(_Padding):
    """p rows before and q rows after each range (module doc)."""

    def pad(self, x, lengths):
        row = x.shape[1:]
        pads = []
        for i in (2, 3):
            if i < len(self.inputs):
                pad = self.input(i)
                if pad.size != int(np.prod(row)):
                    raise self.shape_error(i, "%d elements (one row of input 0)" % np.prod(row))
                self.same_dtype(0, i)
                pads.append(pad.reshape(row))
        start_pad = pads[0] if pads else np.zeros(row, x.dtype)
        end_pad = pads[1] if len(pads) > 1 else start_pad
        width = self.start + self.end
        out = self.output(0, (x.shape[0] + width * lengths.size,) + row, x.dtype)
        out.fill(0)
        src = dst = 0
        for length in lengths.tolist():
            out[dst : dst + self.start] = start_pad
            dst += self.start
            out[dst : dst + length] = x[src : src + length]
            src, dst = src + length, dst + length
            out[dst : dst + self.end] = end_pad
            dst += self.end
        self.write_lengths(lengths, width)


@register("RemovePadding", inputs=(1, 2), outputs=(1, 2))
class RemovePadding(_Padding):
    """The first p and last q rows of each range dropped (module doc)."""

    def pad(self, x, lengths):
        self.check_long_enough(lengths)
        width = self.start + self.end
        out = self.output(0, (x.shape[0] - width * lengths.size,) + x.shape[1:], x.dtype)
        out.fill(0)
        src = dst = 0
        for length in lengths.tolist():
            kept = length - width
            out[dst : dst + kept] = x[src + self.start : src + self.start + kept]
            src, dst = src + length, dst + kept
        self.write_lengths(lengths, -width)


@register("GatherPadding", inputs=2, outputs=(1, 2))
class GatherPadding(_Padding):
    """Sums of the start (and end) padding rows of all ranges (module doc)."""

    def run(self):
        if self.start == 0 and self.end == 0:
            for i in range(len(self.outputs)):  # Caffe2: Resize({}), no data
                self.output(i, (), np.float32).fill(0)
            return
        x = self.data()
        lengths = self.lengths(x.shape[0], allow_negative=True)
        # Caffe2 walked the rows with one pointer: p start rows, skip
        # length - p - q, q end rows. A short range steps back, so every row
        # read is checked to lie inside the data.
        starts, ends, row = [], [], 0
        for length in lengths.tolist():
            starts.extend(range(row, row + self.start))
            row += length - self.end
            ends.extend(range(row, row + self.end))
            row += self.end
        read = starts + ends
        if read and (min(read) < 0 or max(read) >= x.shape[0]):
            raise ShapeError(
                "input 1 ('%s'): a range shorter than its padding makes GatherPadding read "
                "outside the %d rows of input 0" % (self.input_name(1), x.shape[0])
            )
        start_sum = x[starts].sum(axis=0, dtype=x.dtype)
        end_sum = x[ends].sum(axis=0, dtype=x.dtype)
        if len(self.outputs) == 1:
            np.copyto(self.output(0, x.shape[1:], x.dtype), start_sum + end_sum)
        else:
            np.copyto(self.output(0, x.shape[1:], x.dtype), start_sum)
            np.copyto(self.output(1, x.shape[1:], x.dtype), end_sum)


def _gradient_inputs(maker):
    """``[dY]`` plus the forward op's output lengths when it read lengths."""
    inputs = [maker.GO(0)]
    if len(maker.def_.input) > 1:
        if len(maker.def_.output) < 2:
            raise GradientError(
                "%s with lengths needs its lengths output for the gradient" % maker.def_.type
            )
        inputs.append(maker.O(1))
    return inputs


@register_gradient("AddPadding")
class GetAddPaddingGradient(GradientMaker):
    """``RemovePadding([dY, lengths_out] → dX)``; ``GatherPadding`` for the paddings."""

    def get_gradient_defs(self):
        inputs = _gradient_inputs(self)
        ops = [self.op_def("RemovePadding", inputs, [self.GI(0)])]
        n = len(self.def_.input)
        if n >= 3:
            outputs = [self.GI(2)] + ([self.GI(3)] if n == 4 else [])
            ops.append(self.op_def("GatherPadding", list(inputs), outputs))
        return ops


@register_gradient("RemovePadding")
class GetRemovePaddingGradient(GradientMaker):
    """``AddPadding([dY, lengths_out] → dX)`` (zero padding)."""

    def get_gradient_defs(self):
        return [self.op_def("AddPadding", _gradient_inputs(self), [self.GI(0)])]
