"""RowMul and ReduceTailSum: scale each row of a matrix, sum each row.

``RowMul([mat, w] → Y)``: ``Y[i, ...] = mat[i, ...] · w[i]``, w holding one
value per row of mat (``w.size == mat.dim(0)``, Caffe2's
``CAFFE_ENFORCE_EQ``). Its gradient (Caffe2's maker, rowmul_op.cc at
0cdd09da6) is three ops::

    RowMul([dY, w]) → d_mat
    Mul([dY, mat]) → d_w + "before_aggregate"
    ReduceTailSum(d_w + "before_aggregate") → d_w

``ReduceTailSum(mat → Y)``: ``Y[i] = Σ mat[i, ...]``, one sum per row (shape
``(mat.dim(0),)``). Caffe2 called both "hacky": a Mul with broadcast and
its gradient, before Mul had one.
"""

import numpy as np

from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


def _rows(op):
    """Input 0 as an ``(N, block)`` matrix (N = its first dim)."""
    mat = op.float_input(0)
    if mat.ndim == 0:
        raise op.shape_error(0, "at least 1 dim (its rows)")
    n = mat.shape[0]
    return mat, mat.reshape(n, int(np.prod(mat.shape[1:], dtype=np.int64)))


@register("RowMul", inputs=2, outputs=1)
class RowMul(Operator):
    """Y[i] = mat[i] · w[i] for every row i."""

    def run(self):
        mat, rows = _rows(self)
        w = self.float_input(1)
        self.same_dtype(0, 1)
        if w.size != mat.shape[0]:
            raise self.shape_error(1, "%d elements, one per row of input 0" % mat.shape[0])
        y = self.output(0, mat.shape, mat.dtype)
        np.multiply(rows, w.reshape(-1, 1), out=y.reshape(rows.shape))


@register("ReduceTailSum", inputs=1, outputs=1)
class ReduceTailSum(Operator):
    """Y[i] = the sum of row i of mat; Y has shape (N,)."""

    def run(self):
        mat, rows = _rows(self)
        np.sum(rows, axis=1, out=self.output(0, (mat.shape[0],), mat.dtype))


@register_gradient("RowMul")
class GetRowMulGradient(GradientMaker):
    """RowMul for d_mat; Mul then ReduceTailSum for d_w."""

    def get_gradient_defs(self):
        before = self.GI(1) + "before_aggregate"
        return [
            self.op_def("RowMul", [self.GO(0), self.I(1)], [self.GI(0)]),
            self.op_def("Mul", [self.GO(0), self.I(0)], [before]),
            self.op_def("ReduceTailSum", [before], [self.GI(1)]),
        ]
