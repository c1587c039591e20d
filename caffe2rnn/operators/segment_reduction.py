"""Segment reductions: rows of DATA summed or averaged per segment.

Caffe2 generated a family of ops from three ways of naming the segments and
two reducers (``Sum``, ``Mean``); here one class covers each:

* ``SortedSegmentR([DATA, SEGMENT_IDS])``: int32 ids, sorted, starting at
  0, no gaps (``0 0 1 2 2``); output rows ``SEGMENT_IDS[-1] + 1``.
* ``UnsortedSegmentR([DATA, SEGMENT_IDS])``: ids in any order; output rows
  ``num_segments`` (argument) or ``max(ids) + 1``, zeros for an empty
  segment. ``Net.DeduplicateGradientSlices`` merges sparse gradients with it.
* ``LengthsR([DATA, LENGTHS])``: consecutive ranges of ``LENGTHS[k]`` rows
  (int32), which must add up to DATA's rows; an empty range gives zeros.

``Sparse…`` variants take ``INDICES`` before the ids or lengths (int64 only
until 0cdd09da6, eras E4 and E5; int32 or int64 from 042e8ede4, era E6 and
today: the era's ``sparse_int32_indices``) and
reduce ``DATA[INDICES]`` — Gather and reduction fused — and their gradient
is sparse: the slice ``(INDICES, gradient values)``.

Gradients, ``…RGradient([dOUTPUT, SEGMENT_IDS or LENGTHS])``: each row gets
its segment's gradient (``Mean``: divided by the segment's size). Sorted
and sparse-sorted share ``SortedSegmentRGradient``, likewise unsorted;
``SparseLengthsRGradient`` is its own name. From 042e8ede4 (era E6) the
makers of ``LengthsSum`` and ``SparseLengthsSum`` write the
``…IndicesInGradientSumGradient`` ops instead (one more input:
:mod:`caffe2rnn.operators.lengths_reducers`, with ``LengthsMax`` and
``SparseLengthsWeightedSum``).

Caffe2 sources at 0cdd09da6: caffe2/operators/segment_reduction_op.{h,cc}
(``AbstractSortedSegmentOp``, ``AbstractUnsortedSegmentOp``,
``AbstractLengthsOp``, their gradient ops, ``SegmentOpGetGradient``,
``LengthsOpGetGradient``), reducer_functors.h (``SumReducer``,
``MeanReducer``). Registered for float32 data; float64 is accepted too (the
extension of :mod:`caffe2rnn.runtime.settings`).
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker
from .segment_range import float_rows, sorted_runs


def int32_ids(op, i, what):
    return op.typed_input(i, (np.int32,), "int32 %s (it must be a vector)" % what, ndim=1)


def check_segment_range(op, i, ids, count):
    if ids.size and (ids.min() < 0 or ids.max() >= count):
        bad = ids[(ids < 0) | (ids >= count)][0]
        raise ShapeError(
            "input %d ('%s'): Segment id out of range: %d, range 0 to %d"
            % (i, op.input_name(i), bad, count)
        )


def _row_shape(x):
    return (-1,) + (1,) * (x.ndim - 1)


class _SegmentReduction(Operator):
    layout = ""  # "sorted", "unsorted" or "lengths"
    sparse = False
    mean = False

    num_segments = -1

    def rows(self):
        """DATA's rows to reduce (gathered by INDICES for the sparse ops)."""
        x = float_rows(self, 0)
        if not self.sparse:
            return x
        if self.era is None or eras.get(self.era).sparse_int32_indices:  # today's: 042e8ede4
            types, what = (np.int32, np.int64), "int32 or int64 indices"
        else:  # E4, E5: Input(INDICES).data<TIndex>()
            types, what = (np.int64,), "int64 indices (int32 from 042e8ede4, era E6)"
        indices = self.typed_input(1, types, what + " (INDICES must be a vector)", ndim=1)
        if indices.size and (indices.min() < 0 or indices.max() >= x.shape[0]):
            raise ShapeError(
                "input 1 ('%s'): Index out of bounds: %d, range 0 to %d"
                % (
                    self.input_name(1),
                    indices[(indices < 0) | (indices >= x.shape[0])][0],
                    x.shape[0],
                )
            )
        return x[indices]

    def run(self):
        x = self.rows()
        last = len(self.inputs) - 1
        n = x.shape[0]
        if self.layout == "lengths":
            lengths = np.maximum(int32_ids(self, last, "lengths").astype(np.int64), 0)
            if int(lengths.sum()) != n:
                raise ShapeError(
                    "input %d ('%s'): the lengths add up to %d, but there are %d rows to reduce"
                    % (last, self.input_name(last), lengths.sum(), n)
                )
            ids = np.repeat(np.arange(lengths.size), lengths)
            count = lengths.size
        else:
            ids = int32_ids(self, last, "segment ids")
            if ids.size != n:
                raise self.shape_error(last, "(%d,): one segment id per row to reduce" % n)
            if self.layout == "sorted":
                count = sorted_runs(self, last, n)[0].size
            elif self.num_segments != -1:
                count = self.num_segments
                if count < 0:
                    raise ArgumentError("num_segments=%d; expected >= 0 (or -1)" % count)
            else:
                count = int(ids.max()) + 1 if ids.size else 0
            check_segment_range(self, last, ids, count)
        out = self.output(0, (count,) + x.shape[1:], x.dtype)
        out.fill(0)
        np.add.at(out, ids, x)
        if self.mean:
            # MeanReducer::finish: ScaleFixedSize(block_size, 1.0 / current_size_, ...),
            # its alpha a float: the sum times float(1 / count)
            sizes = np.bincount(ids, minlength=count)[:count]
            hit = sizes > 0
            out[hit] *= _inverse(sizes[hit]).reshape(_row_shape(x))


class _SegmentReductionGradient(Operator):
    layout = ""
    mean = False

    def run(self):
        dy = float_rows(self, 0)
        count = dy.shape[0]
        if self.layout == "lengths":
            lengths = np.maximum(int32_ids(self, 1, "lengths").astype(np.int64), 0)
            if lengths.size != count:
                raise self.shape_error(1, "(%d,): one length per row of input 0" % count)
            ids = np.repeat(np.arange(count), lengths)
        else:
            ids = int32_ids(self, 1, "segment ids")
            if self.layout == "sorted":
                sorted_runs(self, 1, ids.size, count=count)
            check_segment_range(self, 1, ids, count)
        grad = dy[ids]
        if self.mean:
            # MeanReducerGradient::fillGrad: ScaleFixedSize(block_size, 1.0 / length, ...)
            sizes = np.bincount(ids, minlength=count)[ids]
            grad = grad * _inverse(sizes).reshape(_row_shape(dy))
        np.copyto(self.output(0, (ids.size,) + dy.shape[1:], dy.dtype), grad)


def _inverse(counts):
    """``1.0 / n`` in double, passed as math::Scale's ``const float alpha``."""
    return (1.0 / counts.astype(np.float64)).astype(np.float32)


class _UnsortedSegmentReduction(_SegmentReduction):
    def setup(self):
        # OP_SINGLE_ARG(int, "num_segments", ...): the unsorted ops only
        self.num_segments = self.args.single("num_segments", -1, int)


def _gradient_maker(forward_type, gradient_type, sparse):
    class GetSegmentReductionGradient(GradientMaker):
        """The gradient op on ``[dOUTPUT, ids or lengths]``; sparse ops give a slice."""

        def get_gradient_defs(self):
            inputs = [self.GO(0), self.I(len(self.def_.input) - 1)]
            name = gradient_type
            if forward_type in _INDICES_IN and eras.current().lengths_gradient_indices:
                # 042e8ede4: GradientNeedIndices (the indices, or DATA, as a third input)
                name = forward_type.replace("Lengths", "LengthsIndicesInGradient") + "Gradient"
                inputs.append(self.I(1 if sparse else 0))
            if not sparse:
                return [self.op_def(name, inputs, [self.GI(0)])]
            values = self.GI_V(0)
            self.SetSparse(0, self.I(1), values)
            return [self.op_def(name, inputs, [values])]

    GetSegmentReductionGradient.__name__ = "Get%sGradient" % forward_type
    return GetSegmentReductionGradient


#: the ops whose gradient from 042e8ede4 (era policy lengths_gradient_indices)
#: is the IndicesInGradient op of :mod:`caffe2rnn.operators.lengths_reducers`
_INDICES_IN = ("LengthsSum", "SparseLengthsSum")

_PREFIX = {"sorted": "SortedSegment", "unsorted": "UnsortedSegment", "lengths": "Lengths"}

for _layout, _prefix in _PREFIX.items():
    for _reducer in ("Sum", "Mean"):
        _attrs = {"layout": _layout, "mean": _reducer == "Mean", "__module__": __name__}
        _gradient_type = _prefix + _reducer + "Gradient"
        globals()[_gradient_type] = register(_gradient_type, inputs=2, outputs=1)(
            type(_gradient_type, (_SegmentReductionGradient,), dict(_attrs))
        )
        for _sparse in (False, True):
            _type = ("Sparse" if _sparse else "") + _prefix + _reducer
            _base = _UnsortedSegmentReduction if _layout == "unsorted" else _SegmentReduction
            globals()[_type] = register(_type, inputs=3 if _sparse else 2, outputs=1)(
                type(_type, (_base,), dict(_attrs, sparse=_sparse))
            )
            # SparseLengths ops had a gradient op of their own name.
            _grad = ("Sparse" if _sparse and _layout == "lengths" else "") + _gradient_type
            if _grad not in globals():
                globals()[_grad] = register(_grad, inputs=2, outputs=1)(
                    type(_grad, (_SegmentReductionGradient,), dict(_attrs))
                )
            register_gradient(_type)(_gradient_maker(_type, _grad, _sparse))
