"""Im2Col and Col2Im: image patches as columns, and back (summing overlaps).

``Im2Col(X → Y)``: for every output position ``(oh, ow)`` and kernel offset
``(i, j)``, the input pixel ``(oh·stride_h + i·dilation_h − pad, ow·stride_w
+ j·dilation_w − pad)`` (0 outside the image)::

    NCHW: X (N, C, H, W) → Y (N, C·kh·kw, out_h, out_w),  row (c·kh + i)·kw + j
    NHWC: X (N, H, W, C) → Y (N, out_h, out_w, kh·kw·C),  column (i·kw + j)·C + c

with ``out = (size + 2·pad − (dilation·(k − 1) + 1)) // stride + 1``.
``Col2Im([Y, Z] → X)`` is the adjoint: X shaped like Z, each column value
added back into the pixel it came from. Arguments: ``kernel`` (or
``kernel_h``/``kernel_w``), ``stride`` (``_h``/``_w``, default 1), ``dilation``
(``_h``/``_w``, default 1), ``pad`` (one value, default 0), ``order``. Refused
as Caffe2 did (``CAFFE_ENFORCE``): a kernel, stride or dilation below 1, a
negative pad, an image smaller than the dilated kernel (before padding), a
column tensor of the wrong size.

No gradient, deliberately. E5 (0cdd09da6) registered none; E6 (042e8ede4)
registered makers that fed the forward *output* where the output's gradient
belongs (``GetIm2ColGradient``: ``Col2Im({O(0), I(0)}) → GI(0)``;
``GetCol2ImGradient``: ``Im2Col({O(0)}) → GI(0)``, im2col_op.cc), so what they
computed was not a gradient. caffe2rnn refuses the request in every era
("Gradient maker ... not implemented", as E5) rather than train on it
(listed in tests/contracts/contract_differences.py).

Caffe2: caffe2/operators/im2col_op.{h,cc}, utils/math_cpu.cc at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register
from .base import Operator


class _Patches(Operator):
    def setup(self):
        args = self.args

        def pair(name, default):
            both = args.single(name, default, int)
            return args.single(name + "_h", both, int), args.single(name + "_w", both, int)

        self.kernel = pair("kernel", 0)
        self.stride = pair("stride", 1)
        self.dilation = pair("dilation", 1)
        self.pad = args.single("pad", 0, int)
        self.order = args.single("order", "NCHW", str)
        if min(self.kernel + self.stride + self.dilation) < 1 or self.pad < 0:
            raise ArgumentError(
                "kernel %s, stride %s and dilation %s must be > 0 and pad %d >= 0"
                % (self.kernel, self.stride, self.dilation, self.pad)
            )
        if self.order not in ("NCHW", "NHWC"):
            raise ArgumentError("Unknown storage order: %s" % self.order)

    def geometry(self, shape, i):
        """(N, C, H, W) of an image shape, and the output (out_h, out_w)."""
        if len(shape) != 4:
            raise self.shape_error(i, "4 dims (%s)" % self.order)
        n, c, h, w = shape if self.order == "NCHW" else (shape[0], shape[3], shape[1], shape[2])
        out = []
        for size, k, s, d in zip((h, w), self.kernel, self.stride, self.dilation):
            span = d * (k - 1) + 1
            if size < span:
                raise self.shape_error(i, "spatial dims of at least the dilated kernel %d" % span)
            out.append((size + 2 * self.pad - span) // s + 1)
        return (n, c, h, w), tuple(out)

    def windows(self, out):
        """For each kernel offset (i, j): the padded-image slices it reads."""
        (oh, ow), (sh, sw), (dh, dw) = out, self.stride, self.dilation
        for i in range(self.kernel[0]):
            for j in range(self.kernel[1]):
                rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
                yield rows, cols

    def columns_shape(self, nchw, out):
        n, c = nchw[:2]
        kh, kw = self.kernel
        if self.order == "NCHW":
            return (n, c * kh * kw) + out
        return (n,) + out + (kh * kw * c,)


@register("Im2Col", inputs=1, outputs=1)
class Im2Col(_Patches):
    """Y: every (dilated, strided) kernel window of X as a column."""

    def run(self):
        x = self.typed_input(0, (np.float32, np.float64), "a float image tensor")
        nchw, out = self.geometry(x.shape, 0)
        image = x if self.order == "NCHW" else x.transpose(0, 3, 1, 2)
        p = self.pad
        padded = np.pad(image, ((0, 0), (0, 0), (p, p), (p, p)))
        patches = np.stack([padded[:, :, r, c] for r, c in self.windows(out)], axis=2)
        n, ch = nchw[:2]
        if self.order == "NCHW":  # (N, C, k, oh, ow) → (N, C·k, oh, ow)
            y = patches.reshape((n, ch * patches.shape[2]) + out)
        else:  # (N, C, k, oh, ow) → (N, oh, ow, k, C)
            y = patches.transpose(0, 3, 4, 2, 1).reshape(self.columns_shape(nchw, out))
        self.output(0, y.shape, x.dtype)[...] = y


@register("Col2Im", inputs=2, outputs=1)
class Col2Im(_Patches):
    """X shaped like input 1: the columns added back into their pixels."""

    def run(self):
        cols = self.typed_input(0, (np.float32, np.float64), "float columns")
        like = self.input(1)
        nchw, out = self.geometry(like.shape, 1)
        expected = self.columns_shape(nchw, out)
        if cols.size != int(np.prod(expected)):
            raise self.shape_error(0, "%d values (a %s)" % (int(np.prod(expected)), expected))
        n, c, h, w = nchw
        k = self.kernel[0] * self.kernel[1]
        if self.order == "NCHW":
            patches = cols.reshape((n, c, k) + out)
        else:
            patches = cols.reshape((n,) + out + (k, c)).transpose(0, 4, 3, 1, 2)
        p = self.pad
        padded = np.zeros((n, c, h + 2 * p, w + 2 * p), cols.dtype)
        for index, (r, s) in enumerate(self.windows(out)):
            padded[:, :, r, s] += patches[:, :, index]
        image = padded[:, :, p : p + h, p : p + w]
        result = image if self.order == "NCHW" else image.transpose(0, 2, 3, 1)
        self.output(0, like.shape, cols.dtype)[...] = result
