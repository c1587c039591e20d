"""TopK: the k largest entries along the last dimension, and their gradient.

``TopK(X, k=k) → [Values, Indices(, FlattenIndices)]``: for X of shape
``[a_1, ..., a_n, r]``, Values and Indices are ``[a_1, ..., a_n, k]``: the k
largest entries of each row, largest first, and their positions in the row.
Equal values keep the lower index first. The optional third output is 1-D:
each index plus its row's offset into the flattened X (``row · r``). Beam
search picks its ``beam_size`` best continuations with it
(``models/seq2seq/beam_search.py``).

``TopKGradient([dValues, Indices, X]) → dX`` scatters each row's gradients
back to the positions they came from, zeros elsewhere.

Caffe2 sources: caffe2/operators/top_k.{h,cc} at 0cdd09da6 (unchanged at
042e8ede4). The kernels were float32 only (``TopKOp<float>``) and read any
input's bytes as float32; here a non-float input is refused rather than
misread, and float64 is kept as float64. Indices are int64 (``TIndex``).
"""

import math

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


@register("TopK", inputs=1, outputs=(2, 3))
class TopK(Operator):
    """``[Values, Indices(, FlattenIndices)]`` of the k largest per row (module doc)."""

    def setup(self):
        self.k = self.args.single("k", -1, int)

    def run(self):
        x = self.float_input(0)
        k = self.k
        if x.ndim == 0:
            raise self.shape_error(0, "at least 1 dimension (TopK works on the last one)")
        r = x.shape[-1]
        if r < k:
            # CAFFE_ENFORCE in TopKOp::RunOnDevice.
            raise ArgumentError(
                "k=%d: k argment should not be greater than last dim (%d, of input 0 '%s')"
                % (k, r, self.input_name(0))
            )
        if k < 0 or (k == 0 and r > 0):
            # A negative size, or the top of an empty heap: Caffe2 crashed.
            raise ArgumentError("k=%d: expected k >= 1 (the 'k' argument is required)" % k)
        rows = math.prod(x.shape[:-1])
        order = np.argsort(-x.reshape(rows, r), axis=1, kind="stable")[:, :k]
        shape = x.shape[:-1] + (k,)
        values = self.output(0, shape, x.dtype)
        np.copyto(values, np.take_along_axis(x.reshape(rows, r), order, axis=1).reshape(shape))
        np.copyto(self.output(1, shape, np.int64), order.reshape(shape))
        if len(self.outputs) > 2:
            flat = order + (np.arange(rows, dtype=np.int64) * r)[:, None]
            np.copyto(self.output(2, (rows * k,), np.int64), flat.reshape(-1))


@register("TopKGradient", inputs=3, outputs=1)
class TopKGradient(Operator):
    """``dX`` of X's shape: zeros, and ``dX[row, Indices[row, j]] = dValues[row, j]``.

    Caffe2 wrote without checking; the checks here are the ones that keep
    every write inside dX (indices in ``[0, X.shape[-1])``, no more rows than
    X has) and read the indices as they are (int32 or int64).
    """

    def run(self):
        dv = self.float_input(0)
        indices = self.typed_input(1, (np.int32, np.int64), "int64 (or int32) indices")
        original = self.input(2)
        if dv.ndim == 0:
            raise self.shape_error(0, "at least 1 dimension")
        if indices.shape != dv.shape:
            raise self.shape_error(1, "%s like input 0 ('%s')" % (dv.shape, self.input_name(0)))
        if original.ndim == 0:
            raise self.shape_error(2, "at least 1 dimension")
        cols = original.shape[-1]
        rows = math.prod(dv.shape[:-1])
        if rows and dv.shape[-1] and rows * cols > original.size:
            raise self.shape_error(2, "at least %d rows (one per row of input 0)" % rows)
        if indices.size and (indices.min() < 0 or indices.max() >= cols):
            raise ShapeError(
                "input 1 ('%s') holds indices from %d to %d; expected them in [0, %d) "
                "(the last dimension of input 2 '%s')"
                % (
                    self.input_name(1),
                    indices.min(),
                    indices.max(),
                    cols,
                    self.input_name(2),
                )
            )
        out = self.output(0, original.shape, dv.dtype)
        out.fill(0)
        if dv.size:
            grid = out.reshape(-1)[: rows * cols].reshape(rows, cols)
            np.put_along_axis(grid, indices.reshape(rows, -1), dv.reshape(rows, -1), axis=1)


@register_gradient("TopK")
class GetTopKGradient(GradientMaker):
    """``TopKGradient([dValues, Indices, X] → dX)``."""

    def get_gradient_defs(self):
        return [self.op_def("TopKGradient", [self.GO(0), self.O(1), self.I(0)], [self.GI(0)])]
