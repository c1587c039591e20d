"""Log, Sqr, Pow, Clip: float element-wise functions, and their gradient recipes.

Each maps a float tensor to one of its shape and type, and may run in place:

* ``Log``: ``Y = ln X`` (translate.py turns beam probabilities into scores);
  gradient ``Div([dY, X]) = dY / X``.
* ``Sqr``: ``Y = X²`` (train.py's global gradient norm); gradient
  ``Scale(dY → dY, scale=2)`` — *in place on the output gradient*, which
  Caffe2's maker did and which therefore changes that blob — then
  ``Mul([dY, X]) = 2 dY X``.
* ``Pow``: ``Y = X^exponent`` (argument, default 0); gradient
  ``Pow(X, exponent - 1) → dX``, ``Mul([dX, dY]) → dX``,
  ``Scale(dX, scale=exponent) → dX``, with no other forward argument.
  A negative X to a non-integer power gives NaN, as ``powf`` did.
* ``Clip``: ``Y = min(max(X, min), max)``; gradient
  ``ClipGradient([Y, dY])``: dY where Y lies strictly inside the bounds.

Caffe2 registered them for float32 (``TensorTypes<float>``); float64 is
kept as float64 here. Sources at 0cdd09da6: caffe2/operators/log_op.cc,
math_ops.{h,cc}.
"""

import numpy as np

from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _UnaryFloat(Operator):
    """``Y = f(X)`` for a float32/float64 X, Y shaped and typed like X."""

    def run(self):
        x = self.float_input(0)
        with np.errstate(all="ignore"):  # inf and NaN results as in C
            self.compute(x, self.output(0, x.shape, x.dtype))

    def compute(self, x, out):
        raise NotImplementedError


@register("Log", inputs=1, outputs=1, inplace=[(0, 0)])
class Log(_UnaryFloat):
    """Y = ln X element-wise (``-inf`` at 0, NaN below)."""

    def compute(self, x, out):
        np.log(x, out=out)


@register_gradient("Log")
class GetLogGradient(GradientMaker):
    """dX = dY / X: ``Div([GO0, I0] → GI0)``."""

    def get_gradient_defs(self):
        return [self.op_def("Div", [self.GO(0), self.I(0)], [self.GI(0)])]


@register("Sqr", inputs=1, outputs=1, inplace=[(0, 0)])
class Sqr(_UnaryFloat):
    """Y = X² element-wise."""

    def compute(self, x, out):
        np.multiply(x, x, out=out)


@register_gradient("Sqr")
class GetSqrGradient(GradientMaker):
    """``Scale(GO0 → GO0, scale=2)`` then ``Mul([GO0, I0] → GI0)``."""

    def get_gradient_defs(self):
        return [
            self.op_def("Scale", [self.GO(0)], [self.GO(0)], scale=2.0),
            self.op_def("Mul", [self.GO(0), self.I(0)], [self.GI(0)]),
        ]


@register("Pow", inputs=1, outputs=1, inplace=[(0, 0)])
class Pow(_UnaryFloat):
    """Y = X ** exponent element-wise (``exponent``: a float argument, default 0)."""

    def setup(self):
        self.exponent = self.args.single("exponent", 0.0, float)

    def compute(self, x, out):
        np.power(x, x.dtype.type(self.exponent), out=out)


@register_gradient("Pow")
class GetPowGradient(GradientMaker):
    """dX = exponent · X^(exponent-1) · dY, in three ops (module doc)."""

    copy_arguments = False

    def get_gradient_defs(self):
        exponent = float(self.arg("exponent", 0.0))
        return [
            self.op_def("Pow", [self.I(0)], [self.GI(0)], exponent=exponent - 1),
            self.op_def("Mul", [self.GI(0), self.GO(0)], [self.GI(0)]),
            self.op_def("Scale", [self.GI(0)], [self.GI(0)], scale=exponent),
        ]


@register("Clip", inputs=1, outputs=1, inplace=[(0, 0)])
class Clip(_UnaryFloat):
    """Y = X limited to ``[min, max]`` (arguments; default: the type's whole range).

    Caffe2: caffe2/operators/clip_op.{h,cc} at 0cdd09da6.
    """

    def setup(self):
        self.low = self.args.single("min", None, float) if self.args.has("min") else None
        self.high = self.args.single("max", None, float) if self.args.has("max") else None

    def compute(self, x, out):
        info = np.finfo(x.dtype)
        low = info.min if self.low is None else x.dtype.type(self.low)
        high = info.max if self.high is None else x.dtype.type(self.high)
        np.minimum(np.maximum(x, low), high, out=out)


@register("ClipGradient", inputs=2, outputs=1, inplace=[(1, 0)])
class ClipGradient(Clip):
    """Inputs Y, dY → dX = dY where ``min < Y < max`` (strictly), else 0."""

    def run(self):
        y = self.float_input(0)
        dy = self.float_input(1)
        if dy.size != y.size:
            raise self.shape_error(
                1, "%d elements like input 0 ('%s')" % (y.size, self.input_name(0))
            )
        self.same_dtype(0, 1)
        info = np.finfo(y.dtype)
        low = info.min if self.low is None else y.dtype.type(self.low)
        high = info.max if self.high is None else y.dtype.type(self.high)
        inside = (y > low) & (y < high)
        np.multiply(dy.reshape(y.shape), inside, out=self.output(0, y.shape, y.dtype))


@register_gradient("Clip")
class GetClipGradient(GradientMaker):
    """``ClipGradient([O0, GO0] → GI0)``, arguments copied."""

    def get_gradient_defs(self):
        return [self.op_def("ClipGradient", [self.O(0), self.GO(0)], [self.GI(0)])]
