"""Lengths (the sizes of consecutive segments) turned into other descriptions.

For ``lengths = [2, 0, 3]``:

* ``LengthsRangeFill`` → ``[0, 1, 0, 1, 2]``: each element's position in its
  segment (int32); ``crf.py`` numbers time steps with it.
* ``LengthsToSegmentIds`` → ``[0, 0, 2, 2, 2]``: each element's segment.
* ``LengthsToRanges`` → ``[[0, 2], [2, 0], [2, 3]]``: (offset, length) pairs.
* ``LengthsToWeights`` → ``1 / length^power`` per element (``power``,
  default 0.5), float32.
* ``LengthsToShape`` → ``[len(lengths), l]`` when every length is ``l``.
* ``SegmentIdsToLengths`` and ``SegmentIdsToRanges`` go back from sorted
  ids (int32 or int64; a second input's first dimension may ask for more,
  empty, segments).

Lengths are int32 where Caffe2 read them with ``data<int32_t>()``. A negative
length is refused where Caffe2 would have written outside the output.
Caffe2 sources at 0cdd09da6: caffe2/operators/filler_op.{h,cc}
(LengthsRangeFill), utility_ops.{h,cc} (the others).
"""

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient, ShouldNotDoGradient


def int32_vector(op, i, what="lengths"):
    """Input i: a 1-D int32 tensor (Caffe2 read it with ``data<int32_t>()``)."""
    return op.typed_input(i, (np.int32,), "int32 %s (Input must be a vector.)" % what, ndim=1)


def nonnegative_lengths(op, i):
    """int32 lengths, none negative (Caffe2 would have written before or past
    its output for a negative one)."""
    lengths = int32_vector(op, i)
    if lengths.size and lengths.min() < 0:
        raise ArgumentError(
            "input %d ('%s') holds a negative length (%d)" % (i, op.input_name(i), lengths.min())
        )
    return lengths


@register("LengthsRangeFill", inputs=1, outputs=1)
class LengthsRangeFill(Operator):
    """``0 .. l-1`` for each length l, concatenated (int32)."""

    def run(self):
        lengths = nonnegative_lengths(self, 0)
        total = int(lengths.sum(dtype=np.int64))
        out = self.output(0, (total,), np.int32)
        starts = np.repeat(np.cumsum(lengths, dtype=np.int64) - lengths, lengths)
        np.subtract(np.arange(total, dtype=np.int64), starts, out=out, casting="unsafe")


register_gradient("LengthsRangeFill")(NoGradient)


@register("LengthsToShape", inputs=1, outputs=1)
class LengthsToShape(Operator):
    """``[len(lengths), l]`` for equal lengths ``l`` (int32)."""

    def run(self):
        lengths = int32_vector(self, 0)
        if lengths.size == 0:
            # Caffe2 read lengths[0] of an empty tensor.
            raise self.shape_error(0, "at least one length")
        if np.any(lengths != lengths[0]):
            raise ShapeError(
                "input 0 ('%s'): All elements of input must be same (got %s)"
                % (self.input_name(0), np.unique(lengths).tolist())
            )
        out = self.output(0, (2,), np.int32)
        out[0], out[1] = lengths.size, lengths[0]


register_gradient("LengthsToShape")(ShouldNotDoGradient)


@register("LengthsToSegmentIds", inputs=1, outputs=1)
class LengthsToSegmentIds(Operator):
    """Each element's segment number, ``lengths[k]`` times ``k`` (int32)."""

    def run(self):
        lengths = nonnegative_lengths(self, 0)
        ids = np.repeat(np.arange(lengths.size, dtype=np.int32), lengths)
        np.copyto(self.output(0, ids.shape, np.int32), ids)


register_gradient("LengthsToSegmentIds")(ShouldNotDoGradient)


@register("LengthsToRanges", inputs=1, outputs=1)
class LengthsToRanges(Operator):
    """``[offset, length]`` of each segment, ``len(lengths) × 2`` (int32)."""

    def run(self):
        lengths = int32_vector(self, 0)
        out = self.output(0, (lengths.size, 2), np.int32)
        out[:, 0] = np.cumsum(lengths, dtype=np.int64) - lengths
        out[:, 1] = lengths


@register("LengthsToWeights", inputs=1, outputs=1)
class LengthsToWeights(Operator):
    """``1 / length^power`` for every element of every segment (float32)."""

    def setup(self):
        self.power = self.args.single("power", 0.5, float)

    def run(self):
        lengths = self.typed_input(0, (np.int32, np.int64), "int32 or int64 lengths", ndim=1)
        if lengths.size and lengths.min() < 0:
            raise ArgumentError(
                "input 0 ('%s'): unexpected negative length value" % self.input_name(0)
            )
        with np.errstate(divide="ignore"):
            weights = 1.0 / np.power(lengths.astype(np.float64), np.float32(self.power))
        out = np.repeat(weights, lengths).astype(np.float32)
        np.copyto(self.output(0, out.shape, np.float32), out)


class _FromSegmentIds(Operator):
    """Sorted segment ids (int32/int64) → per-segment facts (int32)."""

    vector_only = True

    def segments(self):
        """``(ids, count)``: the ids, checked, and the number of segments."""
        ids = self.typed_input(0, (np.int32, np.int64), "int32 or int64 segment ids")
        if ids.ndim != 1 and (self.vector_only or ids.ndim != 2 or 1 not in ids.shape):
            raise self.shape_error(0, "a vector of segment ids (Input must be a vector.)")
        ids = ids.reshape(-1)
        count = int(ids[-1]) + 1 if ids.size else 0
        if len(self.inputs) > 1:
            like = self.input(1)
            if like.ndim < 1 or like.shape[0] < count:
                raise self.shape_error(
                    1,
                    "a first dimension of at least %d: The number of segments inferred should "
                    "*NOT* be larger than the size of Input(1)'s first dimension" % count,
                )
            count = like.shape[0]
        # SegmentIdsToLengths compared with 0 first: a negative first id is
        # "not sorted"; SegmentIdsToRanges would have written before its output.
        if ids.size and (ids[0] < 0 or np.any(np.diff(ids) < 0)):
            raise ShapeError(
                "input 0 ('%s'): Segment ids must be sorted, from 0 up: %s"
                % (self.input_name(0), ids.tolist()[:10])
            )
        return ids.astype(np.int64), count


@register("SegmentIdsToLengths", inputs=(1, 2), outputs=1)
class SegmentIdsToLengths(_FromSegmentIds):
    """How many ids each segment has (1-D, or a 2-D row or column, of ids)."""

    vector_only = False

    def run(self):
        ids, count = self.segments()
        np.copyto(self.output(0, (count,), np.int32), np.bincount(ids, minlength=count)[:count])


@register("SegmentIdsToRanges", inputs=(1, 2), outputs=1)
class SegmentIdsToRanges(_FromSegmentIds):
    """``[first position, length]`` of each segment (``[0, 0]`` before the first id)."""

    def run(self):
        ids, count = self.segments()
        out = self.output(0, (count, 2), np.int32)
        out.fill(0)
        if ids.size:
            # Caffe2 moved each segment's start along from the first id to the
            # last; segments outside that span keep [0, 0].
            segments = np.arange(int(ids[0]), int(ids[-1]) + 1)
            out[segments, 0] = np.searchsorted(ids, segments)
            out[:, 1] = np.bincount(ids, minlength=count)[:count]


for _op_type in ("SegmentIdsToLengths", "SegmentIdsToRanges"):
    register_gradient(_op_type)(ShouldNotDoGradient)
