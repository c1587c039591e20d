"""LayerNorm / LayerNormGradient: normalise each row to zero mean, unit variance.

``X`` is viewed as a matrix: rows are the dimensions before ``axis``
(default 1; negative counts from the end), a row is everything from
``axis`` on. Per row (Ba et al., arXiv:1607.06450)::

    μ = mean(x)    σ = sqrt(mean(x²) − μ² + epsilon)    y = (x − μ) / σ

Outputs ``Y`` (X's shape), ``mean`` and ``stdev`` (``X.dims[:axis] + [1]``).
The learned gain and bias are *not* part of the op: ``brew.layer_norm`` adds
them with ``Mul``/``Add``. The gradient ``[dY, Y, mean, stdev, X] → dX``
uses the saved statistics (in Caffe2's form, from X, mean and stdev: the same
derivative as)::

    dX = (dY − mean(dY) − Y · mean(dY ⊙ Y)) / σ

``epsilon`` defaults to 1e-5 (Caffe2's forward default; the gradient maker
copies the forward op's arguments).

Caffe2: caffe2/operators/layer_norm_op.{h,cc} (2017-09).
"""

import math

import numpy as np

from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _LayerNormBase(Operator):
    def setup(self):
        self.axis = self.args.single("axis", 1, int)
        self.epsilon = self.args.single("epsilon", 1e-5, float)

    def rows(self, index):
        """Canonical axis and the (rows, row size) split of input ``index``."""
        x = self.float_input(index)
        ndim = x.ndim
        if self.op_type == "LayerNorm" and ndim < 2:
            # CAFFE_ENFORCE_GE(input.dims().size(), 2, "LayerNorm requires input dim >= 2")
            raise self.shape_error(index, "at least 2 dims (LayerNorm requires input dim >= 2)")
        if not -ndim <= self.axis < ndim:
            raise self.shape_error(
                index,
                "more than %d dims (argument axis=%d)"
                % (self.axis if self.axis >= 0 else -self.axis - 1, self.axis),
            )
        axis = self.axis % ndim
        return x, axis, math.prod(x.shape[:axis]), math.prod(x.shape[axis:])


@register("LayerNorm", inputs=1, outputs=3)
class LayerNorm(_LayerNormBase):
    """Y, mean, stdev = LayerNorm(X) (module docstring)."""

    def run(self):
        x, axis, left, right = self.rows(0)
        stats_shape = x.shape[:axis] + (1,)
        m = x.reshape(left, right)
        mean = m.mean(axis=1, keepdims=True)
        var = np.square(m).mean(axis=1, keepdims=True) - np.square(mean)
        stdev = np.sqrt(var + self.epsilon)
        y = (m - mean) / stdev
        self.output(1, stats_shape, x.dtype)[...] = mean.reshape(stats_shape)
        self.output(2, stats_shape, x.dtype)[...] = stdev.reshape(stats_shape)
        self.output(0, x.shape, x.dtype)[...] = y.reshape(x.shape)


@register("LayerNormGradient", inputs=5, outputs=1)
class LayerNormGradient(_LayerNormBase):
    """``[dY, Y, mean, stdev, X] → dX``, computed as LayerNormGradientOp did
    (layer_norm_op.cc at 042e8ede4), from X, mean and stdev — Y is not read::

        dstdev = −1/σ² · Σ_j (x_j − μ)·dy_j        dmean = Σ_j −dy_j/σ − μ/σ · dstdev
        dX     = dy/σ + (1/D)·(x/σ)·dstdev + (1/D)·dmean

    (the derivative of the forward op, like ``(dY − mean(dY) − Y·mean(dY⊙Y)) / σ``,
    with Caffe2's float rounding). ``epsilon`` is read as the op read it (default
    0.001) and, as there, not used: the saved ``stdev`` already holds it.
    dY, mean and stdev are read as flat arrays of ``rows × D``, ``rows`` and
    ``rows`` values: fewer is refused (the C++ read past their end), more is
    ignored."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)
        self.epsilon = self.args.single("epsilon", 0.001, float)

    def run(self):
        x, axis, left, right = self.rows(4)
        for j, role, n in ((0, "dY", left * right), (2, "mean", left), (3, "stdev", left)):
            if self.float_input(j).size < n:
                raise self.shape_error(
                    j, "%d elements (%s of input 4 '%s')" % (n, role, self.input_name(4))
                )
        self.same_dtype(0, 2, 3, 4)
        t = x.dtype.type
        one, inv_d = t(1), t(1) / t(right)
        dout = self.input(0).reshape(-1)[: left * right].reshape(left, right)
        mean = self.input(2).reshape(-1)[:left].reshape(left, 1)
        stdev = self.input(3).reshape(-1)[:left].reshape(left, 1)
        xm = x.reshape(left, right)
        neg_recip = -one / stdev
        dstdev_end = (-one / (stdev * stdev)) * ((xm - mean) * dout).sum(axis=1, keepdims=True)
        dmean_end = (neg_recip * dout).sum(axis=1, keepdims=True)
        dx_end = (one / stdev) * dout
        dmean_stdev = (neg_recip * mean) * dstdev_end
        dx_stdev = inv_d * ((xm / stdev) * dstdev_end)
        dx_mean = inv_d * (dmean_end + dmean_stdev)
        dx = dx_end + dx_stdev + dx_mean
        self.output(0, x.shape, x.dtype)[...] = dx.reshape(x.shape)


@register_gradient("LayerNorm")
class GetLayerNormGradient(GradientMaker):
    """LayerNormGradient([GO0, O0, O1, O2, I0] → [GI0])."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "LayerNormGradient",
                [self.GO(0), self.O(0), self.O(1), self.O(2), self.I(0)],
                [self.GI(0)],
            )
        ]
