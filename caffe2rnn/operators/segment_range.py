"""SortedSegmentRange{Sum,LogSumExp,LogMeanExp,Mean,Max}: reduce runs of rows.

``SortedSegmentRangeR([DATA, SEGMENT_IDS])``: SEGMENT_IDS (int32, one per row
of DATA) must be sorted and without gaps, ``0, 0, 1, 2, 2, 2, ...``; each
run of equal ids is reduced to one output row, element by element, so the
output has ``SEGMENT_IDS[-1] + 1`` rows shaped like DATA's:

* ``Sum``; ``Mean`` (each value divided by the count, then added);
* ``LogSumExp``: ``m + ln Σ exp(x - m)`` with ``m`` the run's maximum — the
  CRF's forward algorithm sums path scores this way (``crf.py``);
* ``LogMeanExp``: the same with the mean of the exponentials;
* ``Max``.

Gradients, ``SortedSegmentRangeRGradient([DATA, OUTPUT, dOUTPUT, SEGMENT_IDS])``:
Sum copies dOUTPUT to each row of the run; Mean divides it by the count;
LogSumExp multiplies it by ``exp(x - OUTPUT)`` (the softmax weights),
LogMeanExp also divides by the count; Max gives it to the *first* row
holding the maximum, zeros elsewhere.

Caffe2 sources at 0cdd09da6: caffe2/operators/segment_reduction_op.{h,cc}
(``AbstractSortedSegmentRangeOp``, its gradient op and maker),
reducer_functors.h (the range reducers). Registered for float32 with int32
ids; float64 data is accepted too.
"""

import numpy as np

from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


def sorted_runs(op, ids_index, rows, count=None):
    """``(starts, counts)`` of the runs of equal ids; Caffe2's checks
    ("SEGMENT_IDS must be a vector", "Indices must be sorted and not have
    gaps")."""
    ids = op.typed_input(
        ids_index, (np.int32,), "int32 segment ids (SEGMENT_IDS must be a vector)", ndim=1
    )
    if ids.size != rows:
        raise op.shape_error(
            ids_index,
            "(%d,): SEGMENT_IDS must have the same length as outer dimension of DATA" % rows,
        )
    if ids.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    steps = np.diff(ids.astype(np.int64))
    if ids[0] != 0 or np.any((steps != 0) & (steps != 1)):
        raise ShapeError(
            "input %d ('%s'): Indices must be sorted and not have gaps (got %s)"
            % (ids_index, op.input_name(ids_index), ids.tolist()[:10])
        )
    if count is not None and ids[-1] + 1 != count:
        raise ShapeError(
            "input %d ('%s'): Indices must be sorted and not have gaps (the last id is %d, "
            "but the segment gradients have %d rows)"
            % (ids_index, op.input_name(ids_index), ids[-1], count)
        )
    starts = np.flatnonzero(np.concatenate([[1], steps]))
    return starts, np.diff(np.append(starts, ids.size))


def _max_per_run(x, starts):
    return np.maximum.reduceat(x, starts, axis=0)


def _forward(name, x, starts, counts):
    """The reduced rows, ``len(starts) × row``."""
    shape = (-1,) + (1,) * (x.ndim - 1)
    if name == "Sum":
        return np.add.reduceat(x, starts, axis=0)
    if name == "Mean":
        per_row = np.repeat(counts, counts).astype(x.dtype).reshape(shape)
        return np.add.reduceat(x / per_row, starts, axis=0)
    if name == "Max":
        return _max_per_run(x, starts)
    m = _max_per_run(x, starts)
    total = np.add.reduceat(np.exp(x - np.repeat(m, counts, axis=0)), starts, axis=0)
    if name == "LogMeanExp":
        total = total / counts.astype(x.dtype).reshape(shape)
    return np.log(total) + m


def _backward(name, x, y, dy, starts, counts):
    """dDATA from the run-wise ``y`` and ``dy`` (Sum reads neither x nor y)."""
    shape = (-1,) + (1,) * (dy.ndim - 1)
    dy_rows = np.repeat(dy, counts, axis=0)
    per_row = np.repeat(counts, counts).astype(dy.dtype).reshape(shape)
    if name == "Sum":
        return dy_rows
    if name == "Mean":
        # MeanRangeReducerGradient: const auto in_grad = 1.0 / blocks (a double);
        # data_grad = out_grad * in_grad, in double, stored as T
        return (dy_rows.astype(np.float64) * (1.0 / per_row.astype(np.float64))).astype(dy.dtype)
    if name == "Max":
        hit = (x == np.repeat(y, counts, axis=0)).reshape(x.shape[0], -1)
        first = np.zeros_like(hit)
        run_of = np.repeat(np.arange(starts.size), counts)
        for column in range(hit.shape[1]):
            rows = np.flatnonzero(hit[:, column])
            # the first matching row of each run
            _, pick = np.unique(run_of[rows], return_index=True)
            first[rows[pick], column] = True
        return np.where(first.reshape(x.shape), dy_rows, 0).astype(x.dtype)
    weights = np.exp(x - np.repeat(y, counts, axis=0))
    grad = dy_rows * weights
    return grad / per_row if name == "LogMeanExp" else grad


def float_rows(op, i):
    """Input i: a float tensor of at least one dimension (rows to reduce)."""
    x = op.float_input(i)
    if x.ndim < 1:
        raise op.shape_error(i, "at least 1 dimension")
    return x


class _SortedSegmentRange(Operator):
    reducer = ""

    def run(self):
        x = float_rows(self, 0)
        starts, counts = sorted_runs(self, 1, x.shape[0])
        out = self.output(0, (starts.size,) + x.shape[1:], x.dtype)
        if starts.size:
            with np.errstate(all="ignore"):
                np.copyto(out, _forward(self.reducer, x, starts, counts))


class _SortedSegmentRangeGradient(Operator):
    reducer = ""

    def run(self):
        dy = float_rows(self, 2)
        n = self.input(3).shape[0] if self.input(3).ndim == 1 else -1
        starts, counts = sorted_runs(self, 3, n, count=dy.shape[0] if n > 0 else None)
        row = dy.shape[1:]
        # the C++ took data<T>() of DATA and OUTPUT for every reducer (a type check);
        # only LogSumExp, LogMeanExp and Max read them
        x, y = self.float_input(0), self.float_input(1)
        self.same_dtype(0, 1, 2)
        if self.reducer not in ("Sum", "Mean"):
            if x.size != n * int(np.prod(row)):
                raise self.shape_error(0, "%s (one row per segment id)" % ((n,) + row,))
            if y.size != dy.size:
                raise self.shape_error(1, "%s like input 2 ('%s')" % (dy.shape, self.input_name(2)))
            x, y = x.reshape((n,) + row), y.reshape(dy.shape)
        out = self.output(0, (n,) + row, dy.dtype)
        if n:
            with np.errstate(all="ignore"):
                np.copyto(out, _backward(self.reducer, x, y, dy, starts, counts))


def _make_gradient_maker(name):
    class GetSortedSegmentRangeGradient(GradientMaker):
        """``…Gradient([DATA, OUTPUT, dOUTPUT, SEGMENT_IDS] → dDATA)``."""

        def get_gradient_defs(self):
            return [
                self.op_def(
                    "SortedSegmentRange%sGradient" % name,
                    [self.I(0), self.O(0), self.GO(0), self.I(1)],
                    [self.GI(0)],
                )
            ]

    return GetSortedSegmentRangeGradient


REDUCERS = ("Sum", "LogSumExp", "LogMeanExp", "Mean", "Max")

for _name in REDUCERS:
    _forward_type = "SortedSegmentRange" + _name
    globals()[_forward_type] = register(_forward_type, inputs=2, outputs=1)(
        type(_forward_type, (_SortedSegmentRange,), {"reducer": _name, "__module__": __name__})
    )
    globals()[_forward_type + "Gradient"] = register(
        _forward_type + "Gradient", inputs=4, outputs=1
    )(
        type(
            _forward_type + "Gradient",
            (_SortedSegmentRangeGradient,),
            {"reducer": _name, "__module__": __name__},
        )
    )
    register_gradient(_forward_type)(_make_gradient_maker(_name))
