"""Gather, SparseToDense (its adjoint), EnsureDense, LengthsGather, BatchGather.

``Gather([DATA, INDICES])`` picks rows of DATA's first dimension::

    OUTPUT[i_1, ..., i_q, ...] = DATA[INDICES[i_1, ..., i_q], ...]
    OUTPUT.shape = INDICES.shape + DATA.shape[1:]

This is how an embedding is looked up (``seq2seq_util.py``: tokens → word
vectors) and how beam search reorders its hypotheses. Its gradient is
*sparse*: only the rows that were read get one. Caffe2's maker therefore
wrote no op at all by default — the input gradient is the
:class:`~caffe2rnn.core.GradientSlice` ``(INDICES, dOUTPUT)``, "row
``INDICES[k]`` receives ``dOUTPUT[k]``" — and the optimizers update only
those rows (``ScatterWeightedSum``, ``SparseAdagrad``). With
``dense_gradient=1`` (``crf.py``) the maker writes
``SparseToDense([INDICES, dOUTPUT, DATA])`` instead, a full-size gradient.

``SparseToDense([indices, values(, like)])`` adds each ``values[k]`` into row
``indices[k]`` of a zero tensor; the first dimension is ``like.shape[0]``,
the ``output_first_dim`` argument, or ``max(indices) + 1``.

E6's ``BatchGather([DATA, INDICES])`` gathers along DATA's *second* dimension,
for every entry of the first: ``OUTPUT[b, i..., ...] = DATA[b, INDICES[i...],
...]``, shape ``(DATA.dim(0),) + INDICES.shape + DATA.shape[2:]`` (DATA at
least 2-D); its gradient ``BatchGatherGradient([DATA, INDICES, dOUTPUT])`` adds
each row back where it was read (batch_gather_ops.{h,cc} at 042e8ede4).

Caffe2 sources, 0cdd09da6: caffe2/operators/utility_ops.{h,cc} (``GatherOp``,
``GetGatherGradient``), caffe2/operators/sparse_to_dense_op.{h,cc}.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime import settings
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, ShouldNotDoGradient, single_op_gradient
from .training import index_input

_INDEX_TYPES = (np.int32, np.int64)


@register("Gather", inputs=2, outputs=1)
class Gather(Operator):
    """``OUTPUT = DATA[INDICES]`` along DATA's first dimension (module doc).

    DATA may hold any element type and must have at least one dimension;
    INDICES are int32 or int64 of any rank. Each index must lie in
    ``[0, DATA.shape[0])``: Caffe2 enforced it (``GatherOp::DoRunWithType``,
    "INDICES element is out of DATA bounds"); negative indices are not
    counted from the end.
    """

    def run(self):
        data = self.input(0)
        if data.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension (DATA should be at least 1-D)")
        indices = self.input(1)
        flat = index_input(self, 1, data.shape[0])
        out = self.output(0, indices.shape + data.shape[1:], data.dtype)
        # mode="clip" only avoids NumPy's buffered copy: every index is in range.
        np.take(data, flat, axis=0, out=out.reshape((flat.size,) + data.shape[1:]), mode="clip")


@register_gradient("Gather")
class GetGatherGradient(GradientMaker):
    """Sparse: DATA's gradient is the slice ``(INDICES, dOUTPUT)``, no op.
    ``dense_gradient=1``: ``SparseToDense([INDICES, dOUTPUT, DATA] → dDATA)``."""

    def get_gradient_defs(self):
        if self.arg("dense_gradient", 0):
            return [self.op_def("SparseToDense", [self.I(1), self.GO(0), self.I(0)], [self.GI(0)])]
        self.SetSparse(0, self.I(1), self.GO(0))
        return []


#: Value types SparseToDense adds (Caffe2: float, int32, int64; float64 is
#: caffe2rnn's, so that float64 gradients can be checked tightly).
_SUMMABLE = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


@register("SparseToDense", inputs=(2, 3), outputs=1)
class SparseToDense(Operator):
    """``output[indices[k]] += values[k]`` over zeros (module doc).

    Caffe2's checks (``SparseToDenseOp::DoRunWithType2``): indices 1-D,
    values at least 1-D with one row per index, every index in
    ``[0, first dim)``; ``output_first_dim`` only without the third input.
    """

    def setup(self):
        self.first_dim = self.args.single("output_first_dim", 0, int)
        if self.first_dim > 0 and len(self.inputs) != 2:
            raise ArgumentError(
                "output_first_dim=%d is given, so SparseToDense takes 2 inputs, not %d"
                % (self.first_dim, len(self.inputs))
            )

    def run(self):
        indices = self.typed_input(0, _INDEX_TYPES, "int32 or int64 indices")
        if indices.ndim != 1:
            raise self.shape_error(0, "a 1-D tensor of indices")
        values = self.input(1)
        if values.ndim < 1 or values.shape[0] != indices.size:
            raise self.shape_error(1, "(%d, ...): one row per index" % indices.size)
        self.typed_input(1, _SUMMABLE, "float32, float64, int32 or int64 values to add")
        first = self._first_dim(indices)
        flat = index_input(self, 0, first)
        out = self.output(0, (first,) + values.shape[1:], values.dtype)
        out.fill(0)
        np.add.at(out, flat, values)

    def _first_dim(self, indices):
        if self.first_dim > 0:
            return self.first_dim
        if len(self.inputs) == 3:
            like = self.input(2)
            if like.ndim < 1:
                raise ShapeError(
                    "input 2 ('%s') is a scalar; expected at least 1 dimension (its first "
                    "dimension sizes the output)" % self.input_name(2)
                )
            return like.shape[0]
        return int(indices.max()) + 1 if indices.size else 0


single_op_gradient("SparseToDense", "Gather", ["GO0", "I0"], grad_input=1)


@register("EnsureDense", inputs=1, outputs=1, inplace=[(0, 0)])
class EnsureDense(Operator):
    """A copy of the input (at least 1-D, ``CAFFE_ENFORCE_GT(ndim, 0)``). What it
    is for is its gradient: a sparse (GradientSlice) gradient of the output
    becomes a dense one, ``SparseToDense([indices, values, X])``; a dense one
    passes through."""

    def run(self):
        x = self.input(0)
        if x.ndim < 1:
            raise self.shape_error(0, "at least a vector")
        self.copy_to_output(0, x)


@register_gradient("EnsureDense")
class GetEnsureDenseGradient(GradientMaker):
    """Dense dY: passed through. Sparse dY: ``SparseToDense([dY.indices, dY.values, X])``."""

    def get_gradient_defs(self):
        if not self.is_sparse_GO(0):
            self.SetDense(0, self.GO(0))
            return []
        return [self.op_def("SparseToDense", [self.GO_I(0), self.GO_V(0), self.I(0)], [self.GI(0)])]


@register("LengthsGather", inputs=3, outputs=1)
class LengthsGather(Operator):
    """``[ITEMS, LENGTHS, INDICES]``: the ranges ``INDICES`` picks out of ITEMS,
    cut into consecutive ranges of ``LENGTHS`` rows, concatenated.

    Caffe2's checks (``LengthsGatherOp``): ITEMS at least 1-D, LENGTHS (int32)
    and INDICES (int32/int64) 1-D, each index below ``len(LENGTHS)``, the
    lengths adding up to ITEMS' rows. A negative index or length would have
    copied from outside ITEMS; they are refused. No gradient.
    """

    def run(self):
        items = self.input(0)
        if items.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension (ITEMS should be at least 1-D)")
        lengths = self.typed_input(1, (np.int32,), "int32 lengths", ndim=1)
        self.typed_input(2, _INDEX_TYPES, "int32 or int64 indices", ndim=1)
        if lengths.size and lengths.min() < 0:
            raise ShapeError("input 1 ('%s') holds a negative length" % self.input_name(1))
        if int(lengths.sum(dtype=np.int64)) != items.shape[0]:
            raise ShapeError(
                "input 1 ('%s'): LENGTHS must match the first dimension of ITEMS ('%s', %d rows)"
                % (self.input_name(1), self.input_name(0), items.shape[0])
            )
        picked = index_input(self, 2, lengths.size)
        starts = np.cumsum(lengths, dtype=np.int64) - lengths
        rows = np.concatenate(
            [np.arange(starts[k], starts[k] + lengths[k]) for k in picked]
            or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        out = self.output(0, (rows.size,) + items.shape[1:], items.dtype)
        np.copyto(out, items[rows])


register_gradient("LengthsGather")(ShouldNotDoGradient)


def _batch_indices(op):
    """DATA, INDICES and INDICES flattened. As batch_gather_ops.h (042e8ede4)
    checked each index inside its loop over the batch, an empty batch checks
    none: its indices are only required to be int32 or int64."""
    data = op.input(0)
    if data.ndim < 2:
        raise op.shape_error(0, "at least 2 dimensions (DATA should be at least 2-D)")
    indices = op.input(1)
    if data.shape[0] == 0:  # no batch: the types are checked, no index is
        op.typed_input(1, _INDEX_TYPES, "int32 or int64 indices")
        return data, indices, indices.reshape(-1)
    return data, indices, index_input(op, 1, data.shape[1])


@register("BatchGather", inputs=2, outputs=1)
class BatchGather(Operator):
    """``OUTPUT[b] = DATA[b][INDICES]`` for every b (module doc)."""

    def run(self):
        data, indices, flat = _batch_indices(self)
        out = self.output(0, data.shape[:1] + indices.shape + data.shape[2:], data.dtype)
        if data.shape[0]:
            out.reshape((data.shape[0], flat.size) + data.shape[2:])[...] = data[:, flat]


@register("BatchGatherGradient", inputs=3, outputs=1)
class BatchGatherGradient(Operator):
    """``[DATA, INDICES, dOUTPUT] → dDATA``: dOUTPUT added back where it was read.

    Caffe2 dispatched on DATA's type with ``TensorTypes2<float,
    GenericTensorImplementation>``: float DATA only (float64 too here, the
    extension), anything else "BatchGatherGradient is not implemented on tensor
    of type ..."; dOUTPUT must then be of DATA's type, have DATA's batch size
    ("batch sizes should be the same") and is read as the first ``B · N ·
    block`` values of its buffer, whatever its other dimensions.
    """

    def run(self):
        data = self.input(0)
        if data.dtype not in settings.float_dtypes:
            raise DTypeError(
                "BatchGatherGradient is not implemented on tensor of type %s (input 0 '%s'; "
                "Caffe2 registered float)" % (data.dtype, self.input_name(0))
            )
        data, indices, flat = _batch_indices(self)
        grad = self.float_input(2)
        self.same_dtype(0, 2)
        rows = (data.shape[0], flat.size) + data.shape[2:]
        if grad.ndim == 0 or grad.shape[0] != data.shape[0]:
            raise self.shape_error(2, "batch size %d (batch sizes should be the same)" % rows[0])
        need = int(np.prod(rows))
        if grad.size < need:
            raise self.shape_error(2, "at least %d values, the gathered rows %s" % (need, rows))
        dx = np.zeros(data.shape, data.dtype)
        if data.shape[0]:
            np.add.at(dx, (slice(None), flat), grad.reshape(-1)[:need].reshape(rows))
        self.output(0, data.shape, data.dtype)[...] = dx


GetBatchGatherGradient = single_op_gradient(
    "BatchGather", "BatchGatherGradient", ["I0", "I1", "GO0"]
)
