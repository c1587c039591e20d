"""Tile: a tensor repeated ``tiles`` times along one axis, and its gradient.

``Tile(X, tiles=k, axis=a)`` gives ``Y.shape[a] = k · X.shape[a]``: each
block ``X[i_0, ..., i_{a-1}, ...]`` (everything from axis ``a`` on) is
written k times in a row, so tiling ``[[a b], [c d]]`` twice along axis 1
gives ``[[a b a b], [c d c d]]``. Beam search tiles the encoder outputs once
per hypothesis (``translate.py``), the CRF tiles scores per class
(``crf.py``). ``TileGradient`` adds the k copies back up.

``tiles`` and ``axis`` are arguments, or 1-element inputs 1 and 2 (which
override them). Caffe2 copied such an input's *bytes* into a pair of
``int32`` (tiles, axis) whatever its type; this is reproduced exactly (an
int64 ``tiles`` input of 3 gives tiles 3 *and axis 0*, its high word), and
refused only where the copy would have written past the pair.

Caffe2 sources: caffe2/operators/tile_op.{h,cc} at 0cdd09da6 (unchanged at
042e8ede4).
"""

import numpy as np

from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _TileParameters(Operator):
    """Reading ``tiles``/``axis`` as Caffe2's TileOp and TileGradientOp did."""

    def setup(self):
        self.tiles = self.args.single("tiles", 1, int)
        self.axis = self.args.single("axis", 0, int)
        n = len(self.inputs)
        required = ["axis"] if n == 2 else ["tiles", "axis"] if n == 1 else []
        for name in required:
            if not self.args.has(name):
                raise ArgumentError(
                    "Argument `%s` is missing and was not specified as input." % name
                )

    def parameters(self):
        """``(tiles, axis)`` for this run; kept for the next, as Caffe2's
        members were."""
        pair = bytearray(np.array([self.tiles, self.axis], dtype="<i4").tobytes())
        for i, offset in ((1, 0), (2, 4)):
            if i >= len(self.inputs):
                break
            value = self.input(i)
            if value.ndim != 1 or value.size != 1:
                raise self.shape_error(i, "a vector of size 1 (`%s`)" % ("tiles", "axis")[i - 1])
            raw = value.astype(value.dtype.newbyteorder("<")).tobytes()
            if value.dtype.hasobject or offset + len(raw) > len(pair):
                raise DTypeError(
                    "input %d ('%s') is %s; Caffe2 copied its bytes into an int32 and "
                    "would have written past it: give an int32 (or int64 tiles)"
                    % (i, self.input_name(i), value.dtype)
                )
            pair[offset : offset + len(raw)] = raw
        self.tiles, self.axis = (int(v) for v in np.frombuffer(bytes(pair), dtype="<i4"))
        return self.tiles, self.axis

    def canonical_axis(self, x, axis):
        if not -x.ndim <= axis < x.ndim:
            raise ArgumentError(
                "axis %d is out of range for input 0 ('%s') with %d dimensions"
                % (axis, self.input_name(0), x.ndim)
            )
        if axis < 0:
            # Caffe2 checked the canonical axis but resized the output at the
            # raw one: a negative index into the dims vector.
            raise ArgumentError(
                "axis %d: Caffe2's Tile wrote the output's dims at the negative index "
                "(out of bounds); give axis %d" % (axis, axis + x.ndim)
            )
        return axis


@register("Tile", inputs=(1, 3), outputs=1)
class Tile(_TileParameters):
    """``Y`` = X repeated ``tiles`` times along ``axis`` (module doc)."""

    def run(self):
        x = self.input(0)
        tiles, axis = self.parameters()
        axis = self.canonical_axis(x, axis)
        if tiles < 0:
            raise ArgumentError("tiles=%d: a negative output dimension" % tiles)
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis:], dtype=np.int64))
        shape = x.shape[:axis] + (x.shape[axis] * tiles,) + x.shape[axis + 1 :]
        out = self.output(0, shape, x.dtype)
        np.copyto(out.reshape(outer, tiles, inner), x.reshape(outer, 1, inner))


@register("TileGradient", inputs=(1, 3), outputs=1)
class TileGradient(_TileParameters):
    """``dX`` = the ``tiles`` copies in ``dY`` added up.

    ``dX.shape[axis] = dY.shape[axis] // tiles``. As in Caffe2, dY is read
    as consecutive blocks of dX's size from ``axis`` on: when ``tiles`` does
    not divide the dimension, the blocks run on past each row's end.
    """

    def run(self):
        dy = self.float_input(0)
        tiles, axis = self.parameters()
        axis = self.canonical_axis(dy, axis)
        if tiles <= 0:
            raise ArgumentError("tiles=%d: TileGradient divides by it" % tiles)
        shape = dy.shape[:axis] + (dy.shape[axis] // tiles,) + dy.shape[axis + 1 :]
        outer = int(np.prod(shape[:axis], dtype=np.int64))
        inner = int(np.prod(shape[axis:], dtype=np.int64))
        out = self.output(0, shape, dy.dtype)
        blocks = dy.reshape(-1)[: outer * tiles * inner].reshape(outer, tiles, inner)
        np.sum(blocks, axis=1, out=out.reshape(outer, inner))


@register_gradient("Tile")
class GetTileGradient(GradientMaker):
    """``TileGradient([dY] + the tiles/axis inputs → dX)``, arguments copied."""

    def get_gradient_defs(self):
        inputs = [self.GO(0)] + [self.I(i) for i in range(1, len(self.def_.input))]
        return [self.op_def("TileGradient", inputs, [self.GI(0)])]
