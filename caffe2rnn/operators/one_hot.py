"""One-hot encodings: OneHot, SegmentOneHot, BatchOneHot, BatchBucketOneHot.

* ``OneHot([indices, index_size]) → one_hots``: a float32 matrix
  ``len(indices) × index_size`` with a 1.0 at ``[i, indices[i]]``, zeros
  elsewhere. ``crf.py`` builds its transition lookups with it.
* ``SegmentOneHot([lengths, indices, index_size])``: one row per segment,
  1.0 at every index of the segment (``lengths`` consecutive indices each).
* ``BatchOneHot([X, lengths, values])``: column j of the ``N × D`` matrix X
  becomes ``lengths[j]`` columns, ``X[n, j] == values[p]`` for the values of
  that column, in X's type.

The index types were fixed: int64 indices and sizes, int32 lengths
(``Tensor::data<T>()`` enforced them); BatchOneHot took int32 or int64 X and
values of the same type. Caffe2 checked an index against ``index_size``
only with a ``DCHECK`` (gone in release builds): an index outside would have
written outside the matrix, so it is refused here.

* ``BatchBucketOneHot([X, lengths, boundaries])`` (from 042e8ede4, era
  E6): column j of the float32 ``N × D`` matrix X has ``lengths[j]``
  boundaries (the next ones of ``boundaries``) and becomes ``lengths[j] + 1``
  columns, 1.0 in the bucket of its value: buckets are right-inclusive,
  ``(-inf, b1], (b1, b2], ..., (bk, inf)``, found by ``std::lower_bound``
  (a binary search: the boundaries of a column should be sorted). It refuses
  (``CAFFE_ENFORCE``) a 0-d X, a number of lengths other than X's columns,
  lengths that do not add up to the boundaries, and a length below 1. It
  has no gradient: the C++'s ``NO_GRADIENT(BucketBatchOneHot)`` names
  another type, so asking for one fails as for an op without a maker.

Caffe2 sources: caffe2/operators/one_hot_ops.{h,cc} at 0cdd09da6 (E6's
BatchBucketOneHot: at 042e8ede4 and 929c33cee).
"""

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient


def index_size_input(op, i):
    size = op.typed_input(i, (np.int64,), "int64 (the index size)")
    if size.size != 1:
        raise op.shape_error(i, "a single value (the index size)")
    value = int(size.reshape(-1)[0])
    if value < 0:
        raise ArgumentError(
            "input %d ('%s') is %d; expected a non-negative index size"
            % (i, op.input_name(i), value)
        )
    return value


def check_hot_indices(op, i, indices, size):
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise ShapeError(
            "input %d ('%s') holds indices from %d to %d; expected them in [0, %d) "
            "(the index size)" % (i, op.input_name(i), indices.min(), indices.max(), size)
        )


@register("OneHot", inputs=2, outputs=1)
class OneHot(Operator):
    """``one_hots[i, indices[i]] = 1.0`` in a ``len(indices) × index_size`` float matrix."""

    def run(self):
        indices = self.typed_input(0, (np.int64,), "int64 indices", ndim=1)
        size = index_size_input(self, 1)
        check_hot_indices(self, 0, indices, size)
        out = self.output(0, (indices.size, size), np.float32)
        out.fill(0)
        out[np.arange(indices.size), indices] = 1.0


@register("SegmentOneHot", inputs=3, outputs=1)
class SegmentOneHot(Operator):
    """Row i has 1.0 at each of the ``lengths[i]`` indices of segment i."""

    def run(self):
        lengths = self.typed_input(0, (np.int32,), "int32 lengths", ndim=1)
        indices = self.typed_input(1, (np.int64,), "int64 indices", ndim=1)
        size = index_size_input(self, 2)
        if size <= 0:
            raise ArgumentError(
                "input 2 ('%s') is %d; expected index_size > 0" % (self.input_name(2), size)
            )
        counts = np.maximum(lengths.astype(np.int64), 0)  # a negative length reads nothing
        total = int(counts.sum())
        if total > indices.size:
            raise self.shape_error(1, "at least %d indices (the sum of the lengths)" % total)
        used = indices[:total]
        check_hot_indices(self, 1, used, size)
        out = self.output(0, (lengths.size, size), np.float32)
        out.fill(0)
        out[np.repeat(np.arange(lengths.size), counts), used] = 1.0


@register("BatchOneHot", inputs=3, outputs=1)
class BatchOneHot(Operator):
    """Each column of X expanded to its values' one-hot columns (module doc)."""

    def run(self):
        x = self.typed_input(0, (np.int32, np.int64), "int32 or int64")
        if x.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension")
        n = x.shape[0]
        columns = x.reshape(n, -1) if n else x.reshape(0, int(np.prod(x.shape[1:])))
        lengths = self.typed_input(1, (np.int32,), "int32 lengths")
        if lengths.size != columns.shape[1]:
            raise self.shape_error(1, "%d lengths (one per column of input 0)" % columns.shape[1])
        if lengths.size and lengths.min() < 0:
            raise ArgumentError("input 1 ('%s') holds a negative length" % self.input_name(1))
        values = self.typed_input(2, (x.dtype,), "%s values (the type of input 0)" % x.dtype)
        total = int(lengths.astype(np.int64).sum())
        if values.size != total:
            raise self.shape_error(2, "%d values (the sum of the lengths)" % total)
        column_of = np.repeat(np.arange(lengths.size), lengths)
        out = self.output(0, (n, total), x.dtype)
        np.copyto(out, columns[:, column_of] == values.reshape(-1), casting="unsafe")


@register("BatchBucketOneHot", inputs=3, outputs=1)
class BatchBucketOneHot(Operator):
    """Each column of X bucketed by its boundaries, one-hot (module doc)."""

    def run(self):
        x = self.typed_input(0, (np.float32,), "float32 data")
        if x.ndim < 1:  # CAFFE_ENFORCE_GE(input.ndim(), 1)
            raise self.shape_error(0, "at least 1 dimension")
        n = x.shape[0]
        width = int(np.prod(x.shape[1:]))  # size_from_dim(1)
        lengths = self.typed_input(1, (np.int32,), "int32 lengths")
        if lengths.size != width:  # CAFFE_ENFORCE_EQ(lens.size(), D)
            raise self.shape_error(1, "%d lengths (one per column of input 0)" % width)
        boundaries = self.typed_input(2, (np.float32,), "float32 boundaries")
        flat = lengths.reshape(-1).astype(np.int64)
        if int(flat.sum()) != boundaries.size:
            raise self.shape_error(
                2,
                "%d boundaries: The sum of length should be equal to the length of "
                "boundaries" % flat.sum(),
            )
        if flat.size and flat.min() <= 0:  # CAFFE_ENFORCE_GT(lens_data[i], 0)
            raise ArgumentError(
                "input 1 ('%s') holds a length of %d; expected every length > 0"
                % (self.input_name(1), flat.min())
            )
        columns = x.reshape(n, width)
        bounds = boundaries.reshape(-1)
        out = self.output(0, (n, int(flat.sum()) + width), np.float32)
        out.fill(0)
        starts = np.cumsum(flat) - flat
        for j in range(width):
            bucket = _lower_bound(bounds[starts[j] : starts[j] + flat[j]], columns[:, j])
            out[np.arange(n), starts[j] + j + bucket] = 1.0


def _lower_bound(bounds, values):
    """std::lower_bound's binary search for each value (its result on unsorted
    boundaries too): the first position whose boundary is not below it."""
    first = np.zeros(values.shape, np.int64)
    count = np.full(values.shape, bounds.size, np.int64)
    while count.any():
        half = count >> 1
        middle = first + half
        below = np.zeros(values.shape, bool)
        live = count > 0
        below[live] = bounds[middle[live]] < values[live]
        first = np.where(below, middle + 1, first)
        count = np.where(below, count - half - 1, half)
    return first


for _op_type in ("OneHot", "SegmentOneHot", "BatchOneHot"):
    register_gradient(_op_type)(NoGradient)
