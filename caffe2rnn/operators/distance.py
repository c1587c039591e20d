"""Row-wise distances: SquaredL2Distance and DotProduct, with their gradients.

Both ops (``caffe2/operators/distance_op.cc``) take X and Y of the same dims
and treat them as ``N`` rows of ``D`` values, ``N = X.dim(0)`` (1 for a 0-d
tensor) and ``D = X.size / N``, giving one value per row::

    SquaredL2Distance:  Z[i] = ½ · Σ_d (X[i, d] − Y[i, d])²      Z: (N,)
    DotProduct:         Z[i] =     Σ_d  X[i, d] · Y[i, d]        Z: (N,)

The demos train a recurrent net by feeding the squared distance to
``AveragedLoss``. Gradients, with ``dZ`` of shape ``(N,)``:

* ``SquaredL2DistanceGradient([X, Y, dZ] → [dX, dY])``:
  ``dX[i] = (X[i] − Y[i]) · dZ[i]`` and ``dY = −dX``;
* ``DotProductGradient([X, Y, dZ] → [dX, dY])``: ``dX[i] = Y[i] · dZ[i]``,
  ``dY[i] = X[i] · dZ[i]``.
"""

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


def _rows(op):
    """X, Y (validated alike) and their ``(N, D)`` row view."""
    x = op.float_input(0)
    y = op.input(1)
    if y.shape != x.shape:
        raise op.shape_error(1, "%s like input 0 ('%s')" % (x.shape, op.input_name(0)))
    if y.dtype != x.dtype:
        raise DTypeError(
            "input 1 ('%s') has type %s; expected %s like input 0 ('%s')"
            % (op.input_name(1), y.dtype, x.dtype, op.input_name(0))
        )
    n = x.shape[0] if x.ndim else 1
    d = x.size // n if n else 0
    return x, y, n, d


def _row_gradient(op, x, n):
    """Input 2, dZ: one value per row of X, of X's type."""
    dz = op.input(2)
    if dz.shape != (n,):
        raise op.shape_error(
            2, "(%d,), one value per row of input 0 ('%s')" % (n, op.input_name(0))
        )
    if dz.dtype != x.dtype:
        raise DTypeError(
            "input 2 ('%s') has type %s; expected %s like input 0"
            % (op.input_name(2), dz.dtype, x.dtype)
        )
    return dz


@register("SquaredL2Distance", inputs=2, outputs=1)
class SquaredL2Distance(Operator):
    """Z[i] = ½‖X[i] − Y[i]‖² over the flattened rows; Z has shape (N,)."""

    def run(self):
        x, y, n, d = _rows(self)
        diff = np.subtract(x, y).reshape(n, d)
        z = self.output(0, (n,), x.dtype)
        np.einsum("ij,ij->i", diff, diff, out=z)
        z *= 0.5


@register("SquaredL2DistanceGradient", inputs=3, outputs=2)
class SquaredL2DistanceGradient(Operator):
    """Inputs X, Y, dZ (N,) → dX = (X − Y) · dZ per row, dY = −dX."""

    def run(self):
        x, y, n, d = _rows(self)
        dz = _row_gradient(self, x, n)
        dx = self.output(0, x.shape, x.dtype)
        dx2 = dx.reshape(n, d)
        np.subtract(x.reshape(n, d), y.reshape(n, d), out=dx2)
        dx2 *= dz[:, None]
        np.negative(dx, out=self.output(1, x.shape, x.dtype))


@register_gradient("SquaredL2Distance")
class GetSquaredL2DistanceGradient(GradientMaker):
    """``SquaredL2DistanceGradient([I0, I1, GO0] → [GI0, GI1])``."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "SquaredL2DistanceGradient",
                [self.I(0), self.I(1), self.GO(0)],
                [self.GI(0), self.GI(1)],
            )
        ]


@register("DotProduct", inputs=2, outputs=1)
class DotProduct(Operator):
    """Z[i] = ⟨X[i], Y[i]⟩ over the flattened rows; Z has shape (N,)."""

    def run(self):
        x, y, n, d = _rows(self)
        np.einsum("ij,ij->i", x.reshape(n, d), y.reshape(n, d), out=self.output(0, (n,), x.dtype))


@register("DotProductGradient", inputs=3, outputs=2)
class DotProductGradient(Operator):
    """Inputs X, Y, dZ (N,) → dX = Y · dZ, dY = X · dZ, row by row."""

    def run(self):
        x, y, n, d = _rows(self)
        dz = _row_gradient(self, x, n)
        dx = self.output(0, x.shape, x.dtype)
        np.multiply(y.reshape(n, d), dz[:, None], out=dx.reshape(n, d))
        dy = self.output(1, y.shape, y.dtype)
        np.multiply(x.reshape(n, d), dz[:, None], out=dy.reshape(n, d))


@register_gradient("DotProduct")
class GetDotProductGradient(GradientMaker):
    """``DotProductGradient([I0, I1, GO0] → [GI0, GI1])``."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "DotProductGradient", [self.I(0), self.I(1), self.GO(0)], [self.GI(0), self.GI(1)]
            )
        ]
