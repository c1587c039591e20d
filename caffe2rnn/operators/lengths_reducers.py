"""The weighted sum and the max over lengths, and the gradients that take indices.

``Lengths…`` ops reduce consecutive ranges of rows, ``LENGTHS[k]`` rows for
output row k (:mod:`caffe2rnn.operators.segment_reduction` has ``Sum`` and
``Mean``). This module adds:

* ``SparseLengthsWeightedSum([DATA, WEIGHTS, INDICES, LENGTHS])``: output row
  k is ``Σ WEIGHTS[j] · DATA[INDICES[j]]`` over the j of range k — a Gather,
  a scaling and a sum fused (an embedding bag with per-id weights).
  Argument ``grad_on_weights`` (default 0): the gradient also gives
  ``dWEIGHTS[j] = dOUTPUT[k] · DATA[INDICES[j]]``. Registered since E4
  (23bd132c1 and 0cdd09da6: segment_reduction_op.cc's generic
  ``AbstractSparseLengthsDef`` with the ``WeightedSumReducer``; from
  042e8ede4 an op of its own, lengths_reducer_ops.h): the same result and
  refusals in words of their own.
* ``LengthsMax([DATA, LENGTHS])`` (from 042e8ede4, era E6): the element-wise
  maximum of each range; its gradient gives ``dOUTPUT[k]`` to every row that
  equals the maximum (all of them on a tie) and 0 elsewhere.
* the gradients that name their indices: from 042e8ede4 (era E6; era policy
  ``lengths_gradient_indices``) the gradient of ``LengthsSum`` is
  ``LengthsIndicesInGradientSumGradient([dOUTPUT, LENGTHS, DATA])``, of
  ``SparseLengthsSum`` ``SparseLengthsIndicesInGradientSumGradient([dOUTPUT,
  LENGTHS, INDICES])``, of ``SparseLengthsWeightedSum``
  ``SparseLengthsIndicesInGradientWeightedSum[WithMainInput]Gradient``. The
  extra input was for Caffe2's GPU kernels: the CPU ops never read it (any
  blob will do). Before (eras E4, E5) the makers wrote ``LengthsSumGradient``,
  ``SparseLengthsSumGradient`` and
  ``SparseLengthsWeightedSum[WithMainInput]Gradient``, which later eras
  still register.

Refusals, as Caffe2 929c33cee's ``CAFFE_ENFORCE``s (lengths_reducer_ops.h,
perfkernels/embedding_lookup.cc, segment_reduction_op.h, reducer_functors.h;
the same at 042e8ede4): INDICES, LENGTHS and WEIGHTS must be vectors, WEIGHTS
as long as INDICES, every index in ``[0, len(DATA))``, the lengths adding up
to the indices (to DATA's rows for ``LengthsMax``); a gradient's LENGTHS
must have one entry per row of dOUTPUT. Lengths are int32 (``data<int>()``);
a negative one takes no row. Where the C++ went on without a check and
would have read or written outside a tensor (a gradient whose lengths add
up to more rows than it writes, an index outside DATA in a gradient, one
output where the weights' gradient is written), caffe2rnn refuses; rows
the C++ left unwritten (an empty range of ``LengthsMax``, gradient rows past
the lengths' sum) are 0 here.
"""

import numpy as np

from .. import eras
from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker
from .segment_range import float_rows
from .segment_reduction import _SegmentReductionGradient, int32_ids


def _lengths(op, i):
    """int32 lengths (``LENGTHS must be a vector``), negatives taking no row."""
    lengths = int32_ids(op, i, "lengths (LENGTHS must be a vector)")
    return np.maximum(lengths.astype(np.int64), 0)


def _indices(op, i):
    if op.era is None or eras.get(op.era).sparse_int32_indices:  # 042e8ede4: either type
        types, what = (np.int32, np.int64), "int32 or int64 indices"
    else:  # E4, E5: data<TIndex>()
        types, what = (np.int64,), "int64 indices (int32 from 042e8ede4, era E6)"
    return op.typed_input(i, types, what + " (INDICES must be a vector)", ndim=1)


def _check_indices(op, i, indices, rows):
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        j = int(np.flatnonzero((indices < 0) | (indices >= rows))[0])
        raise ShapeError(
            "input %d ('%s'): Index %d is out of bounds: %d, range 0 to %d"
            % (i, op.input_name(i), j, indices[j], rows)
        )


def _segment_ids(lengths):
    return np.repeat(np.arange(lengths.size), lengths)


def _segment_grads(op, i, lengths_index):
    """dOUTPUT (input i) and its LENGTHS: ``numSegments == dOUTPUT.dim(0)``."""
    dy = float_rows(op, i)  # CAFFE_ENFORCE(segmentGradsInput.ndim() > 0)
    lengths = _lengths(op, lengths_index)
    if lengths.size != dy.shape[0]:
        raise op.shape_error(
            lengths_index, "(%d,): one length per row of input %d" % (dy.shape[0], i)
        )
    return dy, lengths


def _rows_of(x):
    return (-1,) + (1,) * (x.ndim - 1)


@register("SparseLengthsWeightedSum", inputs=4, outputs=1)
class SparseLengthsWeightedSum(Operator):
    """``OUT[k] = Σ_j WEIGHTS[j] · DATA[INDICES[j]]`` over range k (module doc)."""

    def run(self):
        x = float_rows(self, 0)
        indices = _indices(self, 2)
        lengths = _lengths(self, 3)
        weights = self.typed_input(
            1, (x.dtype,), "%s weights (WEIGHT must be a vector)" % x.dtype, ndim=1
        )
        if weights.size != indices.size:
            raise self.shape_error(
                1, "(%d,): Weight should have the same length as indices." % indices.size
            )
        used = int(lengths.sum())
        if used != indices.size:  # embedding_lookup.cc: CAFFE_ENFORCE_EQ(current, index_size)
            raise ShapeError(
                "input 3 ('%s'): the lengths add up to %d, input 2 ('%s') holds %d indices: "
                "the sum of lengths values should be the size of the indices tensor"
                % (self.input_name(3), used, self.input_name(2), indices.size)
            )
        _check_indices(self, 2, indices, x.shape[0])
        out = self.output(0, (lengths.size,) + x.shape[1:], x.dtype)
        out.fill(0)
        np.add.at(out, _segment_ids(lengths), x[indices] * weights.reshape(_rows_of(x)))


class _WeightedSumGradient(Operator):
    """``[WEIGHTS, dOUTPUT, LENGTHS(, INDICES)] → dDATA rows``:
    ``WEIGHTS[j] · dOUTPUT[k]`` (AbstractLengthsGradientOp)."""

    def run(self):
        dy, lengths = _segment_grads(self, 1, 2)
        weights = self.typed_input(0, (dy.dtype,), "%s weights" % dy.dtype)
        rows = int(lengths.sum())
        if weights.ndim < 1 or weights.shape[0] != rows:
            raise self.shape_error(
                0, "%d rows: Input 0 must have the same first dim as SEGMENT_IDS" % rows
            )
        grad = dy[_segment_ids(lengths)] * weights.reshape(-1)[:rows].reshape(_rows_of(dy))
        np.copyto(self.output(0, (rows,) + dy.shape[1:], dy.dtype), grad)


def _named(name, base, inputs, outputs):
    """``base``'s computation registered under one of Caffe2's names for it: the
    gradient makers write E5's names or, from E6, the ``IndicesInGradient`` ones
    (the era policy ``lengths_gradient_indices``)."""
    return register(name, inputs=inputs, outputs=outputs)(
        type(name, (base,), {"__module__": __name__})
    )


SparseLengthsWeightedSumGradient = _named(
    "SparseLengthsWeightedSumGradient", _WeightedSumGradient, 3, 1
)
SparseLengthsIndicesInGradientWeightedSumGradient = _named(
    "SparseLengthsIndicesInGradientWeightedSumGradient", _WeightedSumGradient, 4, 1
)


class _WeightedSumWithMainInputGradient(Operator):
    """``[WEIGHTS, dOUTPUT, LENGTHS, DATA, INDICES] → [dDATA rows, dWEIGHTS]``
    (AbstractLengthsWithMainInputGradientOp): also ``dWEIGHTS[j] =
    dOUTPUT[k] · DATA[INDICES[j]]``."""

    def run(self):
        dy, lengths = _segment_grads(self, 1, 2)
        x = float_rows(self, 3)
        indices = _indices(self, 4)
        weights = self.typed_input(0, (dy.dtype,), "%s weights" % dy.dtype)
        self.same_dtype(1, 3)
        rows = int(lengths.sum())
        block = int(np.prod(dy.shape[1:]))
        # The C++ checks none of this ("should've been verified in forward
        # pass"): it reads DATA's rows with dOUTPUT's row size, INDICES and
        # WEIGHTS up to the lengths' sum, and writes dWEIGHTS through a
        # pointer only a second output sets.
        if len(self.outputs) < 2:
            raise ShapeError(
                "%s writes the weights' gradient: it needs 2 outputs, got 1" % self.op_type
            )
        if int(np.prod(x.shape[1:])) != block:
            raise self.shape_error(3, "rows of %d elements (the rows of input 1)" % block)
        if rows > indices.size:
            raise self.shape_error(4, "at least %d indices (the sum of the lengths)" % rows)
        if weights.size < rows:
            raise self.shape_error(0, "at least %d weights (the sum of the lengths)" % rows)
        used = indices[:rows]
        _check_indices(self, 4, used, x.shape[0])
        seg = _segment_ids(lengths)
        w = weights.reshape(-1)[:rows]
        go = dy.reshape(dy.shape[0], block)[seg]
        d_w = np.einsum("ij,ij->i", go, x.reshape(x.shape[0], block)[used])
        d_x = self.output(0, (indices.size,) + dy.shape[1:], dy.dtype)
        d_x.fill(0)
        d_x.reshape(indices.size, block)[:rows] = go * w[:, None]
        d_weights = self.output(1, weights.shape, weights.dtype)
        d_weights.reshape(-1)[:rows] = d_w


SparseLengthsWeightedSumWithMainInputGradient = _named(
    "SparseLengthsWeightedSumWithMainInputGradient", _WeightedSumWithMainInputGradient, 5, (1, None)
)
SparseLengthsIndicesInGradientWeightedSumWithMainInputGradient = _named(
    "SparseLengthsIndicesInGradientWeightedSumWithMainInputGradient",
    _WeightedSumWithMainInputGradient,
    5,
    2,
)


@register_gradient("SparseLengthsWeightedSum")
class GetSparseLengthsWeightedSumGradient(GradientMaker):
    """LengthsOpGetGradient for the weighted sum (segment_reduction_op.h)."""

    def get_gradient_defs(self):
        indices_in = eras.current().lengths_gradient_indices
        on_weights = bool(self.arg("grad_on_weights", 0))
        inputs = [self.I(1), self.GO(0), self.I(3)]
        suffix = "Gradient"
        if on_weights:
            inputs += [self.I(0), self.I(2)]
            suffix = "WithMainInputGradient"
        elif indices_in:
            inputs.append(self.I(2))
        values = self.GI_V(0)
        outputs = [values] + ([self.GI(1)] if on_weights else [])
        name = "SparseLengths%sWeightedSum%s" % ("IndicesInGradient" if indices_in else "", suffix)
        self.SetSparse(0, self.I(2), values)
        return [self.op_def(name, inputs, outputs)]


def _sum_gradient(name):
    """The IndicesInGradient Sum gradients: the Sum gradient, one more input."""
    cls = type(name, (_SegmentReductionGradient,), {"layout": "lengths", "__module__": __name__})
    return register(name, inputs=3, outputs=1)(cls)


SparseLengthsIndicesInGradientSumGradient = _sum_gradient(
    "SparseLengthsIndicesInGradientSumGradient"
)
LengthsIndicesInGradientSumGradient = _sum_gradient("LengthsIndicesInGradientSumGradient")


@register("LengthsMax", inputs=2, outputs=1)
class LengthsMax(Operator):
    """The element-wise maximum of each range of ``LENGTHS[k]`` rows."""

    def run(self):
        x = float_rows(self, 0)
        lengths = _lengths(self, 1)
        used = int(lengths.sum())
        if used != x.shape[0]:
            # AbstractLengthsOp: the index out of bounds, or dataIndex != dataToReduceSize
            raise ShapeError(
                "input 1 ('%s'): the lengths add up to %d, but input 0 ('%s') has %d rows"
                % (self.input_name(1), used, self.input_name(0), x.shape[0])
            )
        out = self.output(0, (lengths.size,) + x.shape[1:], x.dtype)
        out.fill(0)  # an empty range: MaxReducer wrote nothing there
        hit = lengths > 0
        if hit.any():
            starts = (np.cumsum(lengths) - lengths)[hit]
            out[hit] = np.maximum.reduceat(x, starts, axis=0)


@register("LengthsMaxWithMainInputAndForwardOutputGradient", inputs=4, outputs=(1, None))
class LengthsMaxWithMainInputAndForwardOutputGradient(Operator):
    """``[OUTPUT, dOUTPUT, LENGTHS, DATA] → dDATA``: ``dOUTPUT[k]`` where
    ``DATA == OUTPUT[k]``, else 0."""

    def run(self):
        dy, lengths = _segment_grads(self, 1, 2)
        y = self.float_input(0)
        if y.ndim < 1 or y.shape[0] != dy.shape[0]:  # forwardOutputInput.ndim() > 0, dim(0)
            raise self.shape_error(0, "%d rows (those of input 1)" % dy.shape[0])
        x = float_rows(self, 3)
        self.same_dtype(0, 1, 3)
        block = int(np.prod(dy.shape[1:]))
        for i, what in ((0, y), (3, x)):  # the C++ reads both with dOUTPUT's row size
            if int(np.prod(what.shape[1:])) != block:
                raise self.shape_error(i, "rows of %d elements (the rows of input 1)" % block)
        rows = int(lengths.sum())
        if rows > x.shape[0]:
            raise self.shape_error(3, "at least %d rows (the sum of the lengths)" % rows)
        seg = _segment_ids(lengths)
        data = x.reshape(x.shape[0], block)[:rows]
        keep = data == y.reshape(y.shape[0], block)[seg]
        out = self.output(0, (x.shape[0],) + dy.shape[1:], dy.dtype)
        out.fill(0)
        out.reshape(x.shape[0], block)[:rows] = np.where(
            keep, dy.reshape(dy.shape[0], block)[seg], 0
        )


@register_gradient("LengthsMax")
class GetLengthsMaxGradient(GradientMaker):
    """LengthsOpGetGradient with MaxReducerGradient: the forward output and DATA."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "LengthsMaxWithMainInputAndForwardOutputGradient",
                [self.O(0), self.GO(0), self.I(1), self.I(0)],
                [self.GI(0)],
            )
        ]
