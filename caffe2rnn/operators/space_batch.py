"""SpaceToBatch and BatchToSpace: move ``block_size × block_size`` spatial
offsets into the batch dimension and back (NCHW float tensors).

``SpaceToBatch(X → Y)``: X ``(B, C, H, W)`` is zero-padded (``pad_t`` rows on
top, ``pad`` rows at the bottom and ``pad`` columns on either side — Caffe2
read the left, bottom and right pads all from ``pad``) to ``(H', W')``, both
divisible by ``block_size = b`` (``CAFFE_ENFORCE``); then::

    Y[(oh_off · b + ow_off) · B + n, c, i, j] = Xpad[n, c, i·b + oh_off, j·b + ow_off]

so Y is ``(B·b², C, H'/b, W'/b)``. ``BatchToSpace`` is the inverse: input
``(B·b², C, h, w)`` → ``(B, C, h·b − pad_t − pad, w·b − 2·pad)``, dropping
what fell in the padding. Each is the other's gradient (Caffe2's makers).
``pad`` defaults to 0, ``block_size`` to 2; ``order`` must be NCHW.

Refused where Caffe2 would have divided by zero or sized a negative tensor:
``block_size < 1``, BatchToSpace with fewer than ``b²`` batch entries, or
pads larger than the image. Where BatchToSpace's batch is not a multiple of
``b²`` the extra entries overwrite earlier ones, as Caffe2's loop did.

Caffe2: caffe2/operators/space_batch_op.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _SpaceBatch(Operator):
    def setup(self):
        pad = self.args.single("pad", 0, int)
        self.pad_t = self.args.single("pad_t", pad, int)
        self.pad = pad  # Caffe2's pad_l_, pad_b_ and pad_r_ all read "pad"
        self.block = self.args.single("block_size", 2, int)
        order = self.args.single("order", "NCHW", str)
        if order != "NCHW":
            raise ArgumentError("%s supports order NCHW only, got %r" % (self.def_.type, order))
        if self.block < 1:
            raise ArgumentError("block_size must be >= 1, got %d" % self.block)

    def image(self):
        x = self.typed_input(0, (np.float32, np.float64), "a float NCHW tensor")
        if x.ndim != 4:
            raise self.shape_error(0, "4 dims (N, C, H, W)")
        return x

    def rows(self, size, offset):
        """Input row/column of each (offset in block, output position); valid mask."""
        index = np.arange(size)[None, :] * self.block + np.arange(self.block)[:, None] - offset
        return index, index >= 0


@register("SpaceToBatch", inputs=1, outputs=1)
class SpaceToBatch(_SpaceBatch):
    """Spatial blocks to batch entries, after zero padding."""

    def run(self):
        x = self.image()
        n, c, h, w = x.shape
        height, width = h + self.pad_t + self.pad, w + 2 * self.pad
        if height < 0 or width < 0 or height % self.block or width % self.block:
            raise self.shape_error(
                0,
                "a padded height and width divisible by block_size %d (they are %d and %d)"
                % (self.block, height, width),
            )
        oh, ow = height // self.block, width // self.block
        in_h, ok_h = self.rows(oh, self.pad_t)
        in_w, ok_w = self.rows(ow, self.pad)
        ok_h &= in_h < h
        ok_w &= in_w < w
        # gathered[n, c, bh, i, bw, j] = X[n, c, in_h[bh, i], in_w[bw, j]] (0 in the padding)
        gathered = np.zeros((n, c, self.block, oh, self.block, ow), x.dtype)
        if x.size:
            rows = x[:, :, np.clip(in_h, 0, h - 1), :]
            values = rows[..., np.clip(in_w, 0, w - 1)]
            mask = ok_h[:, :, None, None] & ok_w[None, None, :, :]
            gathered[...] = np.where(mask, values, 0)
        y = self.output(0, (n * self.block * self.block, c, oh, ow), x.dtype)
        y[...] = gathered.transpose(2, 4, 0, 1, 3, 5).reshape(y.shape)


@register("BatchToSpace", inputs=1, outputs=1)
class BatchToSpace(_SpaceBatch):
    """Batch entries back to spatial blocks, the padding dropped."""

    def run(self):
        x = self.image()
        batch, c, h, w = x.shape
        out_batch = batch // (self.block * self.block)
        out_h = h * self.block - self.pad_t - self.pad
        out_w = w * self.block - 2 * self.pad
        if batch and out_batch == 0:
            raise self.shape_error(0, "a batch of at least block_size² = %d" % self.block**2)
        if out_h < 0 or out_w < 0:
            raise self.shape_error(0, "an image larger than the padding it drops")
        y = self.output(0, (out_batch, c, out_h, out_w), x.dtype)
        y[...] = 0  # positions no entry reaches (Caffe2 left them unwritten)
        for entry in range(batch):  # in order: a later entry overwrites, as in Caffe2
            k = entry // out_batch
            to_h = np.arange(h) * self.block + k // self.block - self.pad_t
            to_w = np.arange(w) * self.block + k % self.block - self.pad
            keep_h = np.flatnonzero((to_h >= 0) & (to_h < out_h))
            keep_w = np.flatnonzero((to_w >= 0) & (to_w < out_w))
            channels = np.arange(c)
            y[entry % out_batch][np.ix_(channels, to_h[keep_h], to_w[keep_w])] = x[entry][
                np.ix_(channels, keep_h, keep_w)
            ]


class _Inverse(GradientMaker):
    """The gradient of one op is the other on dY (arguments copied)."""

    inverse = ""  # the other op's type

    def get_gradient_defs(self):
        return [self.op_def(self.inverse, [self.GO(0)], [self.GI(0)])]


@register_gradient("SpaceToBatch")
class GetSpaceToBatchGradient(_Inverse):
    inverse = "BatchToSpace"


@register_gradient("BatchToSpace")
class GetBatchToSpaceGradient(_Inverse):
    inverse = "SpaceToBatch"
