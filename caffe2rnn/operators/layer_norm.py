"""LayerNorm / LayerNormGradient: normalise each row to zero mean, unit variance.

``X`` is viewed as a matrix: rows are the dimensions before ``axis``
(default 1; negative counts from the end), a row is everything from
``axis`` on. Per row (Ba et al., arXiv:1607.06450)::

    μ = mean(x)    σ = sqrt(mean(x²) − μ² + epsilon)    y = (x − μ) / σ

Outputs ``Y`` (X's shape), ``mean`` and ``stdev`` (``X.dims[:axis] + [1]``).
The learned gain and bias are *not* part of the op: ``brew.layer_norm`` adds
them with ``Mul``/``Add``. The gradient ``[dY, Y, mean, stdev, X] → dX``
uses the saved statistics::

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
    """``[dY, Y, mean, stdev, X] → dX``.

    ``epsilon`` is read as LayerNormGradientOp read it (default 0.001) and, as
    there, not used: the saved ``stdev`` already holds it."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)
        self.epsilon = self.args.single("epsilon", 0.001, float)

    def run(self):
        x, axis, left, right = self.rows(4)
        stats_shape = x.shape[:axis] + (1,)
        for j, role, shape in (
            (0, "dY", x.shape),
            (1, "Y", x.shape),
            (2, "mean", stats_shape),
            (3, "stdev", stats_shape),
        ):
            if self.float_input(j).shape != shape:
                raise self.shape_error(
                    j, "%s (%s of input 4 '%s')" % (shape, role, self.input_name(4))
                )
        self.same_dtype(0, 1, 2, 3, 4)
        dy = self.input(0).reshape(left, right)
        y = self.input(1).reshape(left, right)
        stdev = self.input(3).reshape(left, 1)
        dx = dy - dy.mean(axis=1, keepdims=True) - y * (dy * y).mean(axis=1, keepdims=True)
        dx /= stdev
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
