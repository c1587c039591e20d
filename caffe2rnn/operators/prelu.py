"""PRelu and PReluGradient: a ReLU whose negative side has a learned slope.

``PRelu([X, Slope] → Y)``::

    Y = X            where X > 0
    Y = Slope[c] · X  elsewhere

``c`` is the channel: dim 1 of X in ``order="NCHW"`` (the default), the last dim
in ``"NHWC"``; a Slope of one element is shared by every channel. X may have any
rank with a channel dim (a 2-D ``(N, C)`` batch is NCHW with no spatial dims).
``brew.prelu`` (helpers/nonlinearity.py) creates the slope as a parameter of C
values filled with 0.25 (or one shared value); ``model_helper`` lists PRelu among
the ops a model may call. It may run in place (``X → X``).

``PReluGradient([Y, dY, X, Slope] → [dX, dSlope])``::

    dX = dY           where X > 0,     else Slope[c] · dY
    dSlope[c] = Σ dY · X  over the elements of channel c where X ≤ 0

(summed over every element when the slope is shared). It reads X, so Caffe2
refused the gradient of an in-place PRelu, whose X is gone.

Caffe2: caffe2/operators/prelu_op.{h,cc} (at 0cdd09da6; unchanged at 042e8ede4).
"""

import numpy as np

from ..errors import ArgumentError, EnforceNotMet, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

ORDERS = ("NCHW", "NHWC")


class PReluBase(Operator):
    """The ``order`` argument and the channel layout shared by PRelu and its gradient."""

    def setup(self):
        self.order = self.args.single("order", "NCHW", str)

    def channels(self, x_index, slope_index):
        """``(X, slope, C, shared)``: X, the slope broadcastable against X, X's
        channel count and whether one slope is shared, validated."""
        x = self.float_input(x_index)
        slope = self.float_input(slope_index)
        self.same_dtype(x_index, slope_index)
        channel_dim = 1 if self.order == "NCHW" else x.ndim - 1
        if not 0 <= channel_dim < x.ndim:  # Tensor::dim(1) / dim(ndim - 1): "Exceeding ndim limit"
            raise self.shape_error(
                x_index, "a channel dim (dim %d for order %s)" % (channel_dim, self.order)
            )
        c = x.shape[channel_dim]
        shared = slope.size == 1
        if shared:
            return x, slope.reshape(()), c, True
        if slope.size != c:  # prelu_op.cc: CAFFE_ENFORCE_EQ(C, W.size())
            raise self.shape_error(
                slope_index,
                "%d slopes, one per channel of input %d ('%s', %s), or a single shared slope"
                % (c, x_index, self.input_name(x_index), self.order),
            )
        if self.order not in ORDERS:  # prelu_op.cc: CAFFE_THROW("Unknown storage order")
            raise ArgumentError("Unknown storage order: '%s'; expected NCHW or NHWC" % self.order)
        shape = [1] * x.ndim
        shape[channel_dim] = c
        return x, slope.reshape(shape), c, False


@register("PRelu", inputs=2, outputs=1, inplace=[(0, 0)])
class PRelu(PReluBase):
    """``Y = X`` where X > 0, else ``Slope[c] · X`` (module docstring)."""

    def run(self):
        x, slope, _, shared = self.channels(0, 1)
        if self.order == "NHWC" and not shared:
            y = np.where(x > 0, x, x * slope)
        else:  # Caffe2's Eigen form: max(X, 0) + min(X, 0) · slope
            y = np.minimum(x, 0) * slope
            y += np.maximum(x, 0)
        np.copyto(self.output(0, x.shape, x.dtype), y)


@register("PReluGradient", inputs=4, outputs=2)
class PReluGradient(PReluBase):
    """``[Y, dY, X, Slope] → [dX, dSlope]`` (module docstring)."""

    def run(self):
        if self.inputs[0] is self.inputs[2]:  # prelu_op.cc: CAFFE_ENFORCE(&Y != &X)
            raise EnforceNotMet(
                "Cannot backpropagate through an in-place PReLU (Y and X are both '%s')"
                % self.input_name(0)
            )
        if self.order not in ORDERS:  # the gradient switches on the order even when shared
            raise ArgumentError("Unknown storage order: '%s'; expected NCHW or NHWC" % self.order)
        x, slope, _, shared = self.channels(2, 3)
        y, dy = self.input(0), self.float_input(1)
        if not y.size == dy.size == x.size:  # every loop indexes all three with Y's size
            raise ShapeError(
                "PReluGradient: Y ('%s', %s), dY ('%s', %s) and X ('%s', %s) must have "
                "as many elements"
                % (
                    self.input_name(0),
                    y.shape,
                    self.input_name(1),
                    dy.shape,
                    self.input_name(2),
                    x.shape,
                )
            )
        dy = dy.reshape(x.shape)
        # The NCHW loop sums where X <= 0, the NHWC expression where not X > 0
        # (they differ only on NaN).
        negative = x <= 0 if self.order == "NCHW" else ~(x > 0)
        contributions = np.where(negative, dy * x, 0)
        if shared:
            dslope = contributions.sum(keepdims=True)
        else:
            channel_dim = 1 if self.order == "NCHW" else x.ndim - 1
            axes = tuple(d for d in range(x.ndim) if d != channel_dim)
            dslope = contributions.sum(axis=axes)
        dx = np.where(x > 0, dy, slope * dy)
        slope_shape = self.input(3).shape
        np.copyto(self.output(0, y.shape, x.dtype), dx.reshape(y.shape))
        np.copyto(self.output(1, slope_shape, x.dtype), dslope.reshape(slope_shape))


@register_gradient("PRelu")
class GetPReluGradient(GradientMaker):
    def get_gradient_defs(self):
        return [
            self.op_def(
                "PReluGradient",
                [self.O(0), self.GO(0), self.I(0), self.I(1)],
                [self.GI(0), self.GI(1)],
            )
        ]
