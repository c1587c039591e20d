"""LRN: local response normalization across channels, and its gradient.

``LRN(X → [Y, scale])`` divides each value by a power of the sum of squares
of its neighbours along the channel axis (AlexNet's normalization)::

    scale[n, c, h, w] = bias + alpha / size · Σ_{c' ∈ window(c)} X[n, c', h, w]²
    Y = X · scale^(−beta)

``window(c)`` is the ``size`` channels centred on c (``size`` odd), cut at the
first and last channel. X is 4-D: ``order`` ``"NHWC"`` (the channel is the
last axis) or ``"NCHW"``. Without ``order`` the op took NHWC until 0cdd09da6
(E4, E5) and NCHW at 042e8ede4 (E6, today's op; the era's
``lrn_default_order``); brew's helper always passes the model's order. Arguments ``size``,
``alpha``, ``beta`` are required (positive, ``size`` odd); ``bias`` defaults
to 1.

The gradient, with ``r = dY · Y / scale``::

    dX = dY · scale^(−beta) − 2·alpha·beta/size · X · Σ_{c' ∈ window(c)} r[c']

``LRNGradient([X, Y, scale, dY] → dX)`` reads the scale the forward op saved.
Caffe2's CPU kernel needed that second output; here an LRN with one output
also works, and its gradient ``LRNGradient([X, Y, dY] → dX)`` recomputes the
scale (that form was Caffe2's cuDNN one).

Caffe2: caffe2/operators/local_response_normalization_op.{h,cc}.
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class LRNBase(Operator):
    """Arguments and the windowed channel sum shared by LRN and LRNGradient."""

    def setup(self):
        self.size = self.args.single("size", 0, int)
        self.alpha = self.args.single("alpha", 0.0, float)
        self.beta = self.args.single("beta", 0.0, float)
        self.bias = self.args.single("bias", 1.0, float)
        default = "NCHW" if self.era is None else eras.get(self.era).lrn_default_order
        self.order = self.args.single("order", default, str)
        if self.size <= 0 or self.size % 2 == 0:
            raise ArgumentError("argument size is %d; expected an odd size > 0" % self.size)
        if self.alpha <= 0 or self.beta <= 0:
            raise ArgumentError(
                "arguments alpha and beta must be > 0; got alpha=%g, beta=%g"
                % (self.alpha, self.beta)
            )
        if self.order not in ("NCHW", "NHWC"):
            raise ArgumentError("argument order is '%s'; expected NCHW or NHWC" % self.order)
        self.channel_axis = 1 if self.order == "NCHW" else 3

    def tensor(self, i, like=None):
        """Input i: a 4-D float tensor (of ``like``'s shape and type, if given)."""
        x = self.float_input(i)
        if like is None:
            if x.ndim != 4:
                raise self.shape_error(i, "4 dims (order %s)" % self.order)
        elif x.shape != like.shape or x.dtype != like.dtype:
            raise self.shape_error(i, "%s %s like input 0" % (like.dtype, like.shape))
        return x

    def window_sum(self, values):
        """Σ over ``window(c)`` along the channel axis, for every c."""
        v = np.moveaxis(values, self.channel_axis, 0)
        half = (self.size - 1) // 2
        padded = np.zeros((v.shape[0] + self.size - 1,) + v.shape[1:], v.dtype)
        padded[half : half + v.shape[0]] = v
        total = padded[: v.shape[0]].copy()
        for k in range(1, self.size):  # a few shifted adds: exact, no cumsum drift
            total += padded[k : k + v.shape[0]]
        return np.moveaxis(total, 0, self.channel_axis)

    def scale_of(self, x):
        return self.bias + (self.alpha / self.size) * self.window_sum(x * x)


@register("LRN", inputs=1, outputs=(1, 2))
class LRN(LRNBase):
    """``Y = X · scale^(−beta)``; output 1, if present, receives ``scale``."""

    def run(self):
        x = self.tensor(0)
        scale = self.scale_of(x)
        np.multiply(x, scale ** (-self.beta), out=self.output(0, x.shape, x.dtype))
        if len(self.outputs) == 2:
            np.copyto(self.output(1, x.shape, x.dtype), scale)


@register("LRNGradient", inputs=(3, 4), outputs=1)
class LRNGradient(LRNBase):
    """``[X, Y, (scale), dY] → dX`` (module docstring)."""

    def run(self):
        x = self.tensor(0)
        y = self.tensor(1, like=x)
        dy = self.tensor(len(self.inputs) - 1, like=x)
        scale = self.tensor(2, like=x) if len(self.inputs) == 4 else self.scale_of(x)
        ratio = self.window_sum(dy * y / scale)
        dx = dy * scale ** (-self.beta) - (2.0 * self.alpha * self.beta / self.size) * x * ratio
        np.copyto(self.output(0, x.shape, x.dtype), dx)


@register_gradient("LRN")
class GetLRNGradient(GradientMaker):
    """``LRNGradient([I0, O0, O1, GO0] → GI0)``, or ``[I0, O0, GO0]`` without the scale."""

    def get_gradient_defs(self):
        saved = [self.O(1)] if len(self.def_.output) == 2 else []
        return [
            self.op_def("LRNGradient", [self.I(0), self.O(0)] + saved + [self.GO(0)], [self.GI(0)])
        ]
