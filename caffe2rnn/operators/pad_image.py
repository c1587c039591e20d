"""PadImage and PadImageGradient: pad (or crop) the two spatial dims of images.

``PadImage(X → Y)``: X is ``(N, C, H, W)`` (``order="NCHW"``, the default) or
``(N, H, W, C)`` (``"NHWC"``); Y has ``H + pad_t + pad_b`` rows and ``W +
pad_l + pad_r`` columns. The pads come as ConvPoolOpBase read them: ``pads``
``[t, l, b, r]``, or ``pad`` for all four, or ``pad_t``/``pad_l``/``pad_b``/
``pad_r`` (all four needed; default 0). A negative pad crops (Caffe2 checked
pads ≥ 0 only for ops named Conv…/…Pool), down to one row or column: each
padded dim must keep at least one cell (``ComputeSizeAndPad``: ``in + pads >=
kernel``, and PadImage's kernel is 1). ``value`` is a float (``value=2`` is
refused, as Caffe2's ``GetSingleArgument<float>`` refused it). ``mode``:

* ``"constant"`` (default): the new cells hold ``value`` (default 0);
* ``"reflect"``: the image mirrored at its edge row/column, without repeating
  it (``np.pad``'s "reflect"); one reflection only, so a pad must stay below
  the image's size — Caffe2 read outside the image otherwise: refused here;
* ``"edge"``: the nearest edge row/column repeated.

``PadImageGradient(dY → dX)`` (Caffe2's maker, arguments copied) adds each
cell of dY into the cell of X it came from; cells of ``value`` give nothing.
Refused as Caffe2 did: ``legacy_pad``, a dilation other than 1 (and for
PadImage a stride other than 1; PadImageGradient's constructor did not check
it), an empty X (``SetOutputSize``); and, for the gradient, a dX size below 0.

Caffe2: caffe2/operators/pad_op.{h,cc}, conv_pool_op_base.h at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .conv_pool_base import NOTSET, ConvPoolArguments
from .gradient_maker import GradientMaker


class _PadImageBase(Operator):
    #: PadImage checks the stride too (PadImageGradient's constructor did not)
    forward = True

    def setup(self):
        a = ConvPoolArguments(self)  # PadImageOp derives ConvPoolOpBase
        if a.legacy_pad != NOTSET:
            raise ArgumentError("Padding layer only supports explicit pad values.")
        if a.dilation[:2] != [1, 1]:
            raise ArgumentError("Pooling op does not support dilation right now.")
        if self.forward and a.stride[:2] != [1, 1]:
            raise ArgumentError("Pooling op does not support stride right now.")
        if len(a.pads) != 4:  # pad_t() ... pad_r() read pads_[0..3]
            raise ArgumentError("argument pads is %s; expected 4 values [t, l, b, r]" % a.pads)
        self.pads = a.pads
        self.order = a.order
        if self.order not in ("NCHW", "NHWC"):
            raise ArgumentError("argument order is '%s'; expected NCHW or NHWC" % self.order)
        self.mode = self.args.single("mode", "constant", str)
        if self.mode not in ("constant", "reflect", "edge"):
            raise ArgumentError("Unknown padding mode: %s" % self.mode)

    def spatial_axes(self):
        return (2, 3) if self.order == "NCHW" else (1, 2)

    def source_index(self, size, head, tail, i):
        """For each padded position along a dim: the source index (−1: the constant)."""
        out = size + head + tail
        least = 1 if self.forward else 0  # ComputeSizeAndPad: in + pads >= the kernel (1)
        if out < least:
            raise self.shape_error(
                i,
                "at least %d cells along a padded dim (pads %s)" % (least - head - tail, self.pads),
            )
        index = np.arange(out) - head
        if self.mode == "constant":
            return np.where((index >= 0) & (index < size), index, -1)
        if self.mode == "edge":
            return np.clip(index, 0, size - 1)
        index = np.abs(index)
        index = np.minimum(index, 2 * size - index - 2)
        if out and (index.min() < 0 or index.max() >= size):
            raise ArgumentError(
                "reflect mode: pads %s reach past a dim of %d (one reflection only)"
                % (self.pads, size)
            )
        return index

    def maps(self, image_shape, i):
        """Source index arrays for the two spatial dims of an image of ``image_shape``."""
        ah, aw = self.spatial_axes()
        t, left, b, r = self.pads
        return (
            self.source_index(image_shape[ah], t, b, i),
            self.source_index(image_shape[aw], left, r, i),
        )


@register("PadImage", inputs=1, outputs=1)
class PadImage(_PadImageBase):
    """Y = X with its spatial dims padded (or cropped) as ``mode`` says."""

    def setup(self):
        super().setup()
        self.value = self.args.single("value", 0.0, float)

    def run(self):
        x = self.typed_input(0, (np.float32, np.float64), "a float image tensor", ndim=4)
        if x.size == 0:
            raise self.shape_error(0, "a non-empty image tensor")
        rows, cols = self.maps(x.shape, 0)
        ah, aw = self.spatial_axes()
        y = np.take(np.take(x, np.maximum(rows, 0), axis=ah), np.maximum(cols, 0), axis=aw)
        if self.mode == "constant":
            shape = [1, 1, 1, 1]
            shape[ah], shape[aw] = len(rows), len(cols)
            outside = ((rows < 0)[:, None] | (cols < 0)[None, :]).reshape(shape)
            y = np.where(outside, x.dtype.type(self.value), y)
        self.output(0, y.shape, x.dtype)[...] = y


@register("PadImageGradient", inputs=1, outputs=1)
class PadImageGradient(_PadImageBase):
    """dX: every cell of dY added into the cell of X it was copied from."""

    forward = False

    def run(self):
        dy = self.typed_input(0, (np.float32, np.float64), "a float image gradient", ndim=4)
        ah, aw = self.spatial_axes()
        t, left, b, r = self.pads
        shape = list(dy.shape)
        shape[ah] -= t + b
        shape[aw] -= left + r
        if min(shape) < 0:
            raise self.shape_error(0, "spatial dims larger than the pads %s" % self.pads)
        if self.mode != "constant" and dy.size and 0 in (shape[ah], shape[aw]):
            raise self.shape_error(0, "a gradient of a non-empty image")
        rows, cols = self.maps(shape, 0)
        # The C++ loop: for ph, for pw (each image and channel): dX[h(ph), w(pw)] +=
        # dY[ph, pw]. One unbuffered add per padded cell, in that order, so a cell that
        # several padded cells fold into (edge, reflect) sums them as the C++ did.
        height, width = shape[ah], shape[aw]
        r, c = np.meshgrid(rows, cols, indexing="ij")
        inside = ((r >= 0) & (c >= 0)).reshape(-1)
        targets = (r * width + c).reshape(-1)[inside]
        sources = np.flatnonzero(inside)
        dy2 = np.moveaxis(dy, (ah, aw), (2, 3))
        lead = dy2.shape[:2]
        dy2 = dy2.reshape(lead[0] * lead[1], -1)
        dx2 = np.zeros((dy2.shape[0], height * width), dy.dtype)
        np.add.at(dx2, (slice(None), targets), dy2[:, sources])
        dx = np.moveaxis(dx2.reshape(lead + (height, width)), (2, 3), (ah, aw))
        self.output(0, tuple(shape), dy.dtype)[...] = dx


@register_gradient("PadImage")
class GetPadImageGradient(GradientMaker):
    """``PadImageGradient(GO0 → GI0)``, the forward arguments copied."""

    def get_gradient_defs(self):
        return [self.op_def("PadImageGradient", [self.GO(0)], [self.GI(0)])]
