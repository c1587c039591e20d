"""Row-wise distances: SquaredL2Distance, DotProduct, L1Distance, CosineSimilarity.

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

``L1Distance`` is ``Σ_d |X[i, d] − Y[i, d]|``: one value per row since
993e43955 (2017-08-07, E6); before (E5, 0cdd09da6) one sum over every element,
shape ``(1,)`` (:attr:`caffe2rnn.eras.Era.l1_distance_rowwise`). Its gradient
is ``±dZ`` by the sign of ``X − Y``, and 0 where ``|X − Y| ≤ 1e-12``.
``CosineSimilarity`` is ``⟨X[i], Y[i]⟩ / sqrt(max(‖X[i]‖², ε) · max(‖Y[i]‖², ε))``
with ε = 1e-12, one value per row. ``DotProductWithPadding`` (rows of
different lengths) lives in :mod:`.padded_dot`.
"""

import numpy as np

from .. import eras
from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


def _rows(op, empty_has_no_rows=False):
    """X, Y (validated alike) and their ``(N, D)`` row view. ``empty_has_no_rows``:
    DotProduct's rule, ``if (X.size() > 0) {N = ...} else {N = 0; D = 0;}`` — an
    empty X of shape (3, 0) has no rows there (the other ops: N = dim 0)."""
    x = op.float_input(0)
    y = op.input(1)
    if y.shape != x.shape:
        raise op.shape_error(1, "%s like input 0 ('%s')" % (x.shape, op.input_name(0)))
    if y.dtype != x.dtype:
        raise DTypeError(
            "input 1 ('%s') has type %s; expected %s like input 0 ('%s')"
            % (op.input_name(1), y.dtype, x.dtype, op.input_name(0))
        )
    if empty_has_no_rows and x.size == 0:
        return x, y, 0, 0
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
    """Z[i] = ½‖X[i] − Y[i]‖² over the flattened rows; Z has shape (N,) — computed as
    Caffe2 computed it, not as written.

    Caffe2's distance_op.cc (0cdd09da6, 042e8ede4) took three float32 dot products
    per row and combined them: ``Z = (‖x‖² + ‖y‖²) · 0.5 − x·y`` (the sum in
    float32, the rest in double, stored as float32). That is ½‖x − y‖² in exact
    arithmetic but not in floating point: when x and y are close and large, the
    two big terms cancel and their rounding errors remain. For x = [[1e4, 1e4]],
    y = [[1e4 + 1, 1e4 − 1]] the true value is 1.0; Caffe2 gave 0.0 (float32
    holds (1e4 ± 1)² only to ±4), and so does this operator. Subtracting first
    (``½ (x − y)·(x − y)``) would have been exact here; caffe2rnn shows Caffe2's
    number. The dot products here sum in NumPy's order, Caffe2's BLAS in its own,
    so the last bits may differ.
    """

    def run(self):
        x, y, n, d = _rows(self)
        x2, y2 = x.reshape(n, d), y.reshape(n, d)
        xs = np.einsum("ij,ij->i", x2, x2)
        ys = np.einsum("ij,ij->i", y2, y2)
        cross = np.einsum("ij,ij->i", x2, y2)
        scale = np.add(xs, ys)  # float + float: float32 for float32 inputs
        z = scale.astype(np.float64) * 0.5 - cross  # "* 0.5" is a double in the C++
        np.copyto(self.output(0, (n,), x.dtype), z, casting="unsafe")


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
        x, y, n, d = _rows(self, empty_has_no_rows=True)
        np.einsum("ij,ij->i", x.reshape(n, d), y.reshape(n, d), out=self.output(0, (n,), x.dtype))


@register("DotProductGradient", inputs=3, outputs=2)
class DotProductGradient(Operator):
    """Inputs X, Y, dZ (N,) → dX = Y · dZ, dY = X · dZ, row by row."""

    def run(self):
        x, y, n, d = _rows(self, empty_has_no_rows=True)
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


def _pair_gradient_maker(op_type):
    """Register ``<op_type>Gradient([I0, I1, GO0] → [GI0, GI1])`` as the op's gradient."""

    @register_gradient(op_type)
    class GetGradient(GradientMaker):
        def get_gradient_defs(self):
            return [
                self.op_def(
                    op_type + "Gradient",
                    [self.I(0), self.I(1), self.GO(0)],
                    [self.GI(0), self.GI(1)],
                )
            ]

    GetGradient.__name__ = GetGradient.__qualname__ = "Get%sGradient" % op_type
    GetGradient.__doc__ = "``%sGradient([I0, I1, GO0] → [GI0, GI1])``." % op_type
    return GetGradient


def _l1_rows(op):
    """X, Y, and the (rows, row length) L1Distance of the running era sums over."""
    x, y, n, d = _rows(op)
    if not eras.current().l1_distance_rowwise:
        return x, y, 1, x.size
    return x, y, n, d


@register("L1Distance", inputs=2, outputs=1)
class L1Distance(Operator):
    """``Z[i] = Σ |X[i] − Y[i]|`` per row (E6); E5: one sum, Z of shape (1,)."""

    def run(self):
        x, y, n, d = _l1_rows(self)
        diff = np.abs(np.subtract(x, y)).reshape(n, d)
        np.sum(diff, axis=1, out=self.output(0, (n,), x.dtype))


@register("L1DistanceGradient", inputs=3, outputs=2)
class L1DistanceGradient(Operator):
    """Inputs X, Y, dZ → dX = sign(X − Y) · dZ (0 within 1e-12 of a tie), dY = −dX."""

    def run(self):
        x, y, n, d = _l1_rows(self)
        dz = _row_gradient(self, x, n)
        diff = np.subtract(x, y).reshape(n, d)
        sign = np.where(diff > 1e-12, 1, np.where(diff < -1e-12, -1, 0)).astype(x.dtype)
        dx = self.output(0, x.shape, x.dtype)
        np.multiply(sign, dz[:, None], out=dx.reshape(n, d))
        np.negative(dx, out=self.output(1, x.shape, x.dtype))


GetL1DistanceGradient = _pair_gradient_maker("L1Distance")

#: CosineSimilarity floors each squared norm here (Caffe2's kEps, distance_op.cc).
COSINE_EPSILON = 1e-12


def _cosine_terms(x, y, n, d):
    """Per row: ⟨x, y⟩, and the floored norms ‖x‖, ‖y‖ (float64 sums, then X's type)."""
    x2, y2 = x.reshape(n, d), y.reshape(n, d)
    dot = np.einsum("ij,ij->i", x2, y2)
    norm_x = np.sqrt(np.maximum(np.einsum("ij,ij->i", x2, x2), COSINE_EPSILON))
    norm_y = np.sqrt(np.maximum(np.einsum("ij,ij->i", y2, y2), COSINE_EPSILON))
    return x2, y2, dot, norm_x, norm_y


@register("CosineSimilarity", inputs=2, outputs=1)
class CosineSimilarity(Operator):
    """Z[i] = ⟨X[i], Y[i]⟩ / (‖X[i]‖ ‖Y[i]‖), squared norms floored at 1e-12."""

    def run(self):
        x, y, n, d = _rows(self)
        _, _, dot, norm_x, norm_y = _cosine_terms(x, y, n, d)
        np.divide(dot, norm_x * norm_y, out=self.output(0, (n,), x.dtype))


@register("CosineSimilarityGradient", inputs=3, outputs=2)
class CosineSimilarityGradient(Operator):
    """Inputs X, Y, dZ → per row ``dX = dZ (Y / (|X||Y|) − ⟨X,Y⟩ X / (|X|³|Y|))``, dY alike."""

    def run(self):
        x, y, n, d = _rows(self)
        dz = _row_gradient(self, x, n)
        x2, y2, dot, norm_x, norm_y = _cosine_terms(x, y, n, d)
        both = (norm_x * norm_y)[:, None]
        dz = dz[:, None]
        dx = self.output(0, x.shape, x.dtype)
        dx.reshape(n, d)[...] = dz * (y2 / both - dot[:, None] * x2 / (norm_x[:, None] ** 2 * both))
        dy = self.output(1, y.shape, y.dtype)
        dy.reshape(n, d)[...] = dz * (x2 / both - dot[:, None] * y2 / (norm_y[:, None] ** 2 * both))


GetCosineSimilarityGradient = _pair_gradient_maker("CosineSimilarity")
