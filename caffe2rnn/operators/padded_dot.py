"""DotProductWithPadding: the row-wise dot product of rows of different lengths.

``DotProductWithPadding([X, Y] → Z)``: X and Y have the same number of rows
``N = X.dim(0)`` (a 0-d X is one row), of lengths ``DX = X.size / N`` and
``DY = Y.size / N``. With ``S`` the shorter row and ``L`` the longer::

    replicate=0 (default):  Z[i] = ⟨S[i], L[i, :DS]⟩ + pad_value · Σ L[i, DS:]
    replicate=1:            Z[i] = Σ_j ⟨S[i], L[i, j·DS:(j+1)·DS]⟩,  j < DL // DS

that is, the shorter row is padded with ``pad_value`` (default 0), or repeated
to the longer row's length. With ``replicate`` the forward op ignored a tail
of ``DL mod DS`` elements; its gradient refused rows whose lengths do not
divide (``CAFFE_ENFORCE(!replicate_ || DX % DY == 0 || DY % DX == 0)``), and
so does caffe2rnn's. A row length of 0 with ``replicate`` is refused too
(Caffe2 divided by it). The gradient maker passes ``pad_value`` and
``replicate`` on, as Caffe2's did.

Caffe2: caffe2/operators/distance_op.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _PaddedDot(Operator):
    def setup(self):
        self.pad_value = self.args.single("pad_value", 0.0, float)
        self.replicate = self.args.single("replicate", False, bool)

    def rows(self):
        """X and Y as ``(N, DX)`` and ``(N, DY)`` matrices, validated."""
        x = self.float_input(0)
        y = self.input(1)
        if y.dtype != x.dtype:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(1), y.dtype, x.dtype)
            )
        if y.ndim != x.ndim or (x.ndim and y.shape[0] != x.shape[0]):
            raise self.shape_error(
                1, "%d dims and dim 0 = %s like input 0" % (x.ndim, x.shape[:1] or "-")
            )
        n = (x.shape[0] if x.ndim else 1) if x.size else 0  # Caffe2: no row when X is empty
        if n == 0:
            return np.zeros((0, 0), x.dtype), np.zeros((0, 0), x.dtype)
        dx, dy = x.size // n, y.size // n
        if self.replicate and min(dx, dy) == 0 and max(dx, dy):
            raise ArgumentError(
                "replicate=1: a row of length 0 cannot be repeated to length %d" % max(dx, dy)
            )
        return x.reshape(n, dx), y.reshape(n, dy)

    def split(self, x, y):
        """(short, long, x_is_short) rows."""
        return (x, y, True) if x.shape[1] <= y.shape[1] else (y, x, False)


@register("DotProductWithPadding", inputs=2, outputs=1)
class DotProductWithPadding(_PaddedDot):
    """Z[i]: the dot product of row i of X and Y, the shorter padded or repeated."""

    def run(self):
        x, y = self.rows()
        short, long, _ = self.split(x, y)
        n, ds = short.shape
        z = self.output(0, (n,), x.dtype)
        if self.replicate:
            repeats = long.shape[1] // ds if ds else 0
            chunks = long[:, : repeats * ds].reshape(n, repeats, ds)
            np.einsum("ijk,ik->i", chunks, short, out=z)
        else:
            np.einsum("ij,ij->i", short, long[:, :ds], out=z)
            z += self.pad_value * long[:, ds:].sum(axis=1)


@register("DotProductWithPaddingGradient", inputs=3, outputs=2)
class DotProductWithPaddingGradient(_PaddedDot):
    """Inputs X, Y, dZ (N,) → dX, dY: each row's factor times dZ; the padded
    tail's gradient is ``pad_value · dZ`` (replicate: the repeats' sum)."""

    def run(self):
        x, y = self.rows()
        short, long, x_is_short = self.split(x, y)
        n, ds = short.shape
        dl = long.shape[1]
        if self.replicate and ds and dl % ds:
            raise ArgumentError(
                "replicate=1: row lengths %d and %d must divide one another"
                % (x.shape[1], y.shape[1])
            )
        dz = self.input(2)
        if dz.shape != (n,):
            raise self.shape_error(2, "(%d,), one value per row of input 0" % n)
        if dz.dtype != x.dtype:
            raise DTypeError(
                "input 2 ('%s') has type %s; expected %s" % (self.input_name(2), dz.dtype, x.dtype)
            )
        d_short = np.empty_like(short)
        d_long = np.empty_like(long)
        if self.replicate:
            repeats = dl // ds if ds else 0
            d_long[...] = np.tile(short, (1, repeats)) * dz[:, None]
            d_short[...] = long.reshape(n, repeats, ds).sum(axis=1) * dz[:, None]
        else:
            d_short[...] = long[:, :ds] * dz[:, None]
            d_long[:, :ds] = short * dz[:, None]
            d_long[:, ds:] = (self.pad_value * dz)[:, None]
        d_x, d_y = (d_short, d_long) if x_is_short else (d_long, d_short)
        for i, grad in enumerate((d_x, d_y)):
            shape = self.input(i).shape
            # Without rows (an empty X), Caffe2 left the gradients unwritten: zeros here.
            self.output(i, shape, x.dtype)[...] = grad.reshape(shape) if n else 0


@register_gradient("DotProductWithPadding")
class GetDotProductWithPaddingGradient(GradientMaker):
    """``DotProductWithPaddingGradient([I0, I1, GO0] → [GI0, GI1])`` with
    ``pad_value`` and ``replicate`` (their defaults where the op had none), then
    the forward arguments, as Caffe2's maker (distance_op.cc) gave both: it did
    not turn ``CopyArguments`` off."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "DotProductWithPaddingGradient",
                [self.I(0), self.I(1), self.GO(0)],
                [self.GI(0), self.GI(1)],
                pad_value=float(self.arg("pad_value", 0.0)),
                replicate=bool(self.arg("replicate", 0)),
            )
        ]
