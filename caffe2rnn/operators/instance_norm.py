"""InstanceNorm and InstanceNormGradient: each image's channel normalised alone.

``InstanceNorm([X, scale, bias] → [Y, (mean), (inv_stdev)])``: X is ``(N, C,
H, W)`` (``order="NCHW"``, the default) or ``(N, H, W, C)``; for every image n
and channel c, over its ``H · W`` values::

    mean = Σ x / HW,   inv_stdev = 1 / sqrt(Σ (x − mean)² / HW + epsilon)
    Y = (X − mean) · inv_stdev · scale[c] + bias[c]

``epsilon`` defaults to 1e-5 and must be ≥ 0 (Caffe2's ``CAFFE_ENFORCE``). The
optional outputs keep ``mean`` and ``inv_stdev`` as ``(N, C)`` tensors. Y may
overwrite X in NCHW order only (NHWC: "Can't run InstanceNorm NHWC in-place").

``InstanceNormGradient([X, scale, bias, dY, (mean), (inv_stdev)] → [dX,
dscale, dbias])`` — Caffe2's maker passes the saved statistics when the
forward op wrote them — computes, as instance_norm_gradient_op.cc did, per
image and channel over the ``HW`` positions, with ``xc = x − mean`` (``mean``
given, or X's)::

    inv_stdev = 1 / sqrt(mean(xc²) + epsilon)       (unless given: then from xc,
                                                     i.e. from the *given* mean)
    g  = −inv_stdev³ · mean(xc · dY) · xc + inv_stdev · dY
    dX = scale[c] · (g − mean(g))
    dscale[c] = Σ_n Σ xc · inv_stdev · dY,   dbias[c] = Σ_n Σ dY

which is the exact derivative when the statistics are X's own. In NHWC order
Caffe2 never zeroed dscale and dbias: it *added* into them, so running the
op again on the same outputs accumulates (caffe2rnn does the same); a new
output tensor starts at 0 here, where Caffe2 added into memory nothing had
written.

Caffe2: caffe2/operators/instance_norm_op.{h,cc},
instance_norm_gradient_op.cc at 0cdd09da6 (the same at 042e8ede4).
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _InstanceNormBase(Operator):
    def setup(self):
        self.epsilon = self.args.single("epsilon", 1e-5, float)
        if self.epsilon < 0:
            raise ArgumentError("Must pass a nonnegative epsilon.")
        self.order = self.args.single("order", "NCHW", str)
        if self.order not in ("NCHW", "NHWC"):
            raise ArgumentError("argument order is '%s'; expected NCHW or NHWC" % self.order)

    def nchw(self, i):
        """Input i as an NCHW float array (a view for NHWC)."""
        x = self.typed_input(i, (np.float32, np.float64), "a float image tensor", ndim=4)
        self.same_dtype(0, i)
        return x if self.order == "NCHW" else x.transpose(0, 3, 1, 2)

    def channel_vectors(self, channels):
        for i in (1, 2):
            v = self.typed_input(i, (np.float32, np.float64), "a float vector", ndim=1)
            self.same_dtype(0, i)
            if v.shape != (channels,):
                raise self.shape_error(i, "(%d,), one value per channel" % channels)
        return self.input(1)[None, :, None, None], self.input(2)[None, :, None, None]

    def statistics(self, x):
        mean = x.mean(axis=(2, 3), keepdims=True)
        var = ((x - mean) ** 2).mean(axis=(2, 3), keepdims=True)
        return mean, 1 / np.sqrt(var + x.dtype.type(self.epsilon))

    def layout(self, array):
        """An NCHW array back in the op's order."""
        return array if self.order == "NCHW" else array.transpose(0, 2, 3, 1)


@register("InstanceNorm", inputs=3, outputs=(1, 3), inplace=[(0, 0)])
class InstanceNorm(_InstanceNormBase):
    """Y = per-(image, channel) normalised X, scaled and shifted per channel."""

    def run(self):
        if self.order == "NHWC" and self.def_.output[0] == self.def_.input[0]:
            raise ArgumentError("Can't run InstanceNorm NHWC in-place")
        x = self.nchw(0)
        n, c = x.shape[:2]
        scale, bias = self.channel_vectors(c)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean, inv_stdev = self.statistics(x)
            y = (x - mean) * (inv_stdev * scale) + bias
        stats = (mean, inv_stdev)[: len(self.outputs) - 1]
        self.output(0, self.input(0).shape, x.dtype)[...] = self.layout(y)
        for k, value in enumerate(stats, start=1):
            self.output(k, (n, c), x.dtype)[...] = value.reshape(n, c)


@register("InstanceNormGradient", inputs=(4, 6), outputs=3)
class InstanceNormGradient(_InstanceNormBase):
    """[X, scale, bias, dY, (mean), (inv_stdev)] → [dX, dscale, dbias]."""

    def run(self):
        x = self.nchw(0)
        dy = self.nchw(3)
        n, c = x.shape[:2]
        if dy.shape != x.shape:
            raise self.shape_error(3, "the shape of input 0 %s" % (self.input(0).shape,))
        scale, _ = self.channel_vectors(c)
        saved = {}
        for k in range(4, len(self.inputs)):
            value = self.typed_input(k, (x.dtype.type,), "an (N, C) %s tensor" % x.dtype)
            if value.shape != (n, c):
                raise self.shape_error(k, "(%d, %d): one value per image and channel" % (n, c))
            saved[k] = value.reshape(n, c, 1, 1)
        hw = (2, 3)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            mean = saved[4] if 4 in saved else x.mean(axis=hw, keepdims=True)
            xc = x - mean
            if 5 in saved:
                inv_stdev = saved[5]
            else:  # from xc: the given mean's deviations, as the C++ computed it
                var = np.square(xc).mean(axis=hw, keepdims=True)
                inv_stdev = 1 / np.sqrt(var + x.dtype.type(self.epsilon))
            g = -(inv_stdev**3) * (xc * dy).mean(axis=hw, keepdims=True) * xc + dy * inv_stdev
            dx = scale * (g - g.mean(axis=hw, keepdims=True))
            dscale = (xc * inv_stdev * dy).sum(axis=(0, 2, 3))
            dbias = dy.sum(axis=(0, 2, 3))
        if self.order == "NHWC":  # Caffe2 added into dscale and dbias (module docstring)
            for k, value in ((1, dscale), (2, dbias)):
                old = self.outputs[k].value
                kept = type(old) is np.ndarray and old.dtype == x.dtype and old.size == c
                out = self.output(k, (c,), x.dtype)
                if not kept:
                    out[...] = 0
                out += value
        else:
            self.output(1, (c,), x.dtype)[...] = dscale
            self.output(2, (c,), x.dtype)[...] = dbias
        self.output(0, self.input(0).shape, x.dtype)[...] = self.layout(dx)


@register_gradient("InstanceNorm")
class GetInstanceNormGradient(GradientMaker):
    """``InstanceNormGradient([I0, I1, I2, GO0, (O1), (O2)] → [GI0, GI1, GI2])``."""

    def get_gradient_defs(self):
        inputs = [self.I(0), self.I(1), self.I(2), self.GO(0)]
        inputs += [self.O(k) for k in range(1, len(self.def_.output))]
        return [self.op_def("InstanceNormGradient", inputs, [self.GI(0), self.GI(1), self.GI(2)])]
