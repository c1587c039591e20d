"""Flatten, FlattenToVec and ResizeLike: the same values under another shape.

* ``Flatten(X → Y)``: X of rank ≥ 2 becomes a matrix that keeps the first
  dimension, ``Y: (X.dim(0), X.size / X.dim(0))``. lstm_benchmark flattens
  the ``T × N × H`` LSTM output this way before ``SoftmaxWithLoss``. From E6
  (1b0ac3c45, 2017-10-13) it reads ``axis`` (default 1): ``Y`` is
  ``(Π dims before axis, Π dims from axis)`` and X needs rank ≥ axis.
* ``FlattenToVec(X → Y)``: X of rank ≥ 1 becomes a vector, ``Y: (X.size,)``.
* ``ResizeLike([X, like] → Y)``: X's values with ``like``'s shape (the sizes
  must agree). It is the gradient of both flattens: ``dX =
  ResizeLike([dY, X])`` puts the gradient back into X's shape.

All three copy the values (of any type) into the output, like Caffe2's
``CopyItems``; none may run in place.

Caffe2: caffe2/operators/utility_ops.{h,cc}.
"""

import math

from .. import eras
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, ShouldNotDoGradient


def _copy_reshaped(op, x, shape):
    out = op.output(0, shape, x.dtype)
    out[...] = x.reshape(shape)


@register("Flatten", inputs=1, outputs=1)
class Flatten(Operator):
    """``Y = X`` as a ``dim(0) × rest`` matrix; X must have rank ≥ 2."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int) if eras.current().flatten_axis else None

    def run(self):
        x = self.input(0)
        if self.axis is None:
            if x.ndim < 2:
                raise self.shape_error(0, "rank >= 2 (Flatten keeps dim 0 and joins the rest)")
            axis = 1
        else:
            axis = self.axis
            if not 0 <= axis <= x.ndim:
                raise self.shape_error(0, "rank >= axis (%d)" % axis)
        _copy_reshaped(self, x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))


@register("FlattenToVec", inputs=1, outputs=1)
class FlattenToVec(Operator):
    """``Y = X`` as a vector of ``X.size`` values; X must have rank ≥ 1."""

    def run(self):
        x = self.input(0)
        if x.ndim < 1:
            raise self.shape_error(0, "rank >= 1")
        _copy_reshaped(self, x, (x.size,))


@register("ResizeLike", inputs=2, outputs=1)
class ResizeLike(Operator):
    """``Y`` = the values of input 0 in the shape of input 1 (same size)."""

    def run(self):
        x, like = self.input(0), self.input(1)
        if x.size != like.size:
            raise self.shape_error(
                0,
                "%d elements, the size of input 1 ('%s', shape %s)"
                % (like.size, self.input_name(1), like.shape),
            )
        _copy_reshaped(self, x, like.shape)


class GetResizeLikeInputGradient(GradientMaker):
    """``ResizeLike([GO0, I0] → GI0)``: the gradient back in the input's shape."""

    def get_gradient_defs(self):
        return [self.op_def("ResizeLike", [self.GO(0), self.I(0)], [self.GI(0)])]


register_gradient("Flatten")(GetResizeLikeInputGradient)
register_gradient("FlattenToVec")(GetResizeLikeInputGradient)
register_gradient("ResizeLike")(ShouldNotDoGradient)
