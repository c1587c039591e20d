"""Float element-wise functions: Log, Sqr, Sqrt, Pow, Clip, Logit, Softsign, ReplaceNaN, Sign,
Swish, Abs, Sin, Cos.

Each maps a float tensor to one of its shape and type, and may run in place:

* ``Log``: ``Y = ln X`` (translate.py turns beam probabilities into scores);
  gradient ``Div([dY, X]) = dY / X``.
* ``Sqr``: ``Y = X²`` (train.py's global gradient norm); gradient
  ``Scale(dY → dY, scale=2)`` — *in place on the output gradient*, which
  Caffe2's maker did and which therefore changes that blob — then
  ``Mul([dY, X]) = 2 dY X``.
* ``Pow``: ``Y = X^exponent`` (argument, default 0; from E7 required with
  one input); gradient ``Pow(X, exponent - 1) → dX``, ``Mul([dX, dY]) → dX``,
  ``Scale(dX, scale=exponent) → dX``, with no other forward argument.
  A negative X to a non-integer power gives NaN, as ``powf`` did. E7's
  ``Pow([X, E])`` takes a tensor of exponents instead (:class:`Pow`).
* ``Clip``: ``Y = min(max(X, min), max)``; gradient
  ``ClipGradient([Y, dY])``: dY where Y lies strictly inside the bounds.
* ``Logit`` (``ln(x / (1 - x))`` of X clamped to ``[eps, 1 - eps]``; no
  gradient until d75955a6b, 2017-09-26: E6's (and E7's) ``LogitGradient([X, dY])`` is
  ``dY / (x (1 − x))``, 0 where X lies outside ``[eps, 1 − eps]``),
  ``Softsign`` (``X / (1 + |X|)``), ``ReplaceNaN``.
* ``Abs``, ``Sin``, ``Cos`` (190209652, 2017-07-03; accepted in every era):
  gradients ``<Op>Gradient([X, dY])`` = ``sign(X) dY`` (0 at 0), ``cos(X) dY``,
  ``−sin(X) dY``.
* E6's ``Sign`` (−1, 0 or 1; 0 for NaN, as ``(x > 0) − (x < 0)``; no
  gradient, math_ops.cc at 042e8ede4) and ``Swish`` (``X · sigmoid(X)``,
  not in place; gradient ``SwishGradient([X, Y, dY]) = dY · (Y + σ(X)(1 − Y))``,
  which may overwrite dY; swish_op.{h,cc} at 042e8ede4).

Caffe2 registered them for float32 (``TensorTypes<float>``; ReplaceNaN also
double); float64 is kept as float64 here. Sources at 0cdd09da6:
caffe2/operators/log_op.cc, math_ops.{h,cc}, clip_op.cc, logit_op.cc,
softsign_op.cc, replace_nan_op.{h,cc}.
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError, EnforceNotMet, GradientError
from ..runtime.registry import register, register_gradient, register_gradient_variant
from .base import Operator, WithoutBroadcast
from .elementwise import BinaryElementwise, parse_broadcast_axis
from .gradient_maker import (
    GradientMaker,
    GradientNotImplementedYet,
    ShouldNotDoGradient,
    single_op_gradient,
)


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


single_op_gradient("Log", "Div", ["GO0", "I0"])


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


@register("Sqrt", inputs=1, outputs=1, inplace=[(0, 0)])
class Sqrt(_UnaryFloat):
    """Y = √X element-wise (NaN below 0, as Eigen's sqrt)."""

    def compute(self, x, out):
        np.sqrt(x, out=out)


@register_gradient("Sqrt")
class GetSqrtGradient(GradientMaker):
    """``Scale(GO0 → GI0, scale=0.5)`` then ``Div([GI0, O0] → GI0)``."""

    def get_gradient_defs(self):
        return [
            self.op_def("Scale", [self.GO(0)], [self.GI(0)], scale=0.5),
            self.op_def("Div", [self.GI(0), self.O(0)], [self.GI(0)]),
        ]


@register("Pow", inputs=(1, 2), outputs=1, inplace=[(0, 0), (1, 0)])
class Pow(BinaryElementwise):
    """Y = X ** exponent element-wise: an ``exponent`` argument, or (E7) a second input.

    Until 042e8ede4 (math_ops.cc) Pow had one input and the float argument
    ``exponent``, default 0. At 929c33cee (pow_op.{h,cc}; the era policy
    :attr:`~caffe2rnn.eras.Era.pow_tensor_exponent`) it reads the argument
    only with one input, and with two computes ``X ** E`` for a tensor E of
    exponents, with the broadcast rules of ``Mul`` (:mod:`.elementwise`:
    ``broadcast``, ``axis``, ``axis_str``, ``order``; E a scalar or a block
    of X's dims). The CAFFE_ENFORCE refusals of E7's ``PowOp``, here:

    * one input without ``exponent``: "Only a tensor with an argument or two
      input tensors are supported as input to pow operator" (its
      constructor's CAFFE_THROW);
    * ``axis`` or ``axis_str`` without ``broadcast=1``; both of them; an
      ``axis_str`` that is not one letter of ``order``;
    * E written in place as Y while broadcasting ("In-place is allowed only
      with the first tensor when broadcasting");
    * without ``broadcast``, E not shaped like X ("Dimension mismatch - did
      you forget to set broadcast=1?").

    Caffe2 registered float32 only (``TensorTypes<float>``, E read as X's
    type); float64 X and E are kept as float64 here. A negative base to a
    non-integer power gives NaN, as ``powf`` did.
    """

    input_types = frozenset(np.dtype(t) for t in (np.float32, np.float64))
    ufunc = np.power

    def setup(self):
        self.exponent = None
        if not (self.era is None or eras.get(self.era).pow_tensor_exponent):
            if len(self.inputs) == 2:
                # math_ops.cc, 042e8ede4: OPERATOR_SCHEMA(Pow).NumInputs(1)
                raise EnforceNotMet(
                    "Operator def did not pass schema checking: Pow takes 1 input, got 2 "
                    "(a tensor of exponents, input 1 '%s', came with Caffe2's pow_op.cc, "
                    "by 929c33cee)" % self.input_name(1)
                )
            self.exponent = self.args.single("exponent", 0.0, float)
        elif len(self.inputs) == 1:
            if not self.args.has("exponent"):
                raise ArgumentError(
                    "Only a tensor with an argument or two input tensors are supported "
                    "as input to pow operator (input 0 '%s' came without an 'exponent' "
                    "argument)" % self.input_name(0)
                )
            self.exponent = self.args.single("exponent", 0.0, float)
        else:  # BinaryElementwise's arguments (its setup, read here behind the era gate)
            self.broadcast = self.args.single("broadcast", 0, int) != 0
            self.axis = parse_broadcast_axis(self, self.broadcast)
            self.b_in_place = self.def_.input[1] == self.def_.output[0]

    def run(self):
        if self.exponent is None:
            self.float_input(0)  # refuses float64 when the extension is off
            with np.errstate(all="ignore"):  # inf and NaN results as in C
                super().run()
            return
        x = self.float_input(0)
        with np.errstate(all="ignore"):
            np.power(x, x.dtype.type(self.exponent), out=self.output(0, x.shape, x.dtype))


@register_gradient("Pow")
class GetPowGradient(GradientMaker):
    """The gradient of Pow as its era's maker built it; no forward argument copied.

    With an ``exponent`` (and, before E7, always): dX = exponent ·
    X^(exponent-1) · dY in three ops, ``Pow(X → dX, exponent - 1)``,
    ``Mul([dX, dY] → dX)``, ``Scale(dX → dX, scale=exponent)``; an in-place
    Pow built in E7 raises Y to ``(exponent - 1) / exponent`` instead
    (``CAFFE_ENFORCE(fabs(exponent) > 1e-12)``).

    E7 without an ``exponent`` (X ** E, pow_op.cc at 929c33cee): refused in
    place ("Gradient computation cannot be carried out if Pow uses in-place
    computation"), else ``ConstantFill(E → dE, value=1)``, ``Sub([E, dE] →
    dE)`` (E - 1), ``Pow([X, dE] → dX)``, ``Mul([dX, dY] → dX)``, ``Mul([dX,
    E] → dX)``; then ``Log(X → t)``, ``Mul([t, Y] → t)`` and ``Mul([t, dY] →
    dE)``, where t is ``<dE>_autogen_pre_red``. When the forward op has a
    ``broadcast`` argument (even 0), the second Pow and the Mul by E get
    ``broadcast``, ``axis`` (default -1), ``axis_str`` ("") and ``order``
    ("NCHW"), and the last Mul writes t, which ``SumReduceLike([t, E] → dE)``
    (``axis``, ``axis_str``, ``order``) sums back to E's shape.
    """

    copy_arguments = False

    def get_gradient_defs(self):
        if eras.current().pow_tensor_exponent:
            tensor = not self.has_arg("exponent")
        else:
            tensor = len(self.def_.input) == 2
        if tensor:
            return self.tensor_exponent_gradient()
        exponent = float(self.arg("exponent", 0.0))
        power = exponent - 1
        if self.I(0) == self.O(0) and eras.current().pow_inplace_gradient:
            # X was overwritten by Y = X^a: Y^((a-1)/a) is X^(a-1) (E7's pow_op.cc).
            if abs(exponent) <= 1e-12:
                raise EnforceNotMet(
                    "In-place Pow gradient needs a nonzero exponent (got %g)" % exponent
                )
            power = (exponent - 1) / exponent
        return [
            self.op_def("Pow", [self.I(0)], [self.GI(0)], exponent=power),
            self.op_def("Mul", [self.GI(0), self.GO(0)], [self.GI(0)]),
            self.op_def("Scale", [self.GI(0)], [self.GI(0)], scale=exponent),
        ]

    def tensor_exponent_gradient(self):
        x, e, y = self.I(0), self.I(1), self.O(0)
        if y in (x, e):
            raise GradientError(
                "Gradient computation cannot be carried out if Pow uses in-place "
                "computation: Pow([%s, %s] -> %s)" % (x, e, y)
            )
        broadcast = {}
        if self.has_arg("broadcast"):
            broadcast = {
                "broadcast": self.arg("broadcast", 0),
                "axis": self.arg("axis", -1),
                "axis_str": self.arg("axis_str", ""),
                "order": self.arg("order", "NCHW"),
            }
        dx, de, dy = self.GI(0), self.GI(1), self.GO(0)
        pre_red = de + "_autogen_pre_red"
        ops = [
            self.op_def("ConstantFill", [e], [de], value=1.0),
            self.op_def("Sub", [e, de], [de]),
            self.op_def("Pow", [x, de], [dx], **broadcast),
            self.op_def("Mul", [dx, dy], [dx]),
            self.op_def("Mul", [dx, e], [dx], **broadcast),
            self.op_def("Log", [x], [pre_red]),
            self.op_def("Mul", [pre_red, y], [pre_red]),
        ]
        if not broadcast:
            return ops + [self.op_def("Mul", [pre_red, dy], [de])]
        reduce_args = {k: broadcast[k] for k in ("axis", "axis_str", "order")}
        return ops + [
            self.op_def("Mul", [pre_red, dy], [pre_red]),
            self.op_def("SumReduceLike", [pre_red, e], [de], **reduce_args),
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


single_op_gradient("Clip", "ClipGradient", ["O0", "GO0"])


@register("Logit", inputs=1, outputs=1, inplace=[(0, 0)])
class Logit(_UnaryFloat):
    """Y = ln(x / (1 - x)) of X clamped to ``[eps, 1 - eps]`` (``eps``, default
    1e-6, ``CAFFE_ENFORCE``d in (0, 0.5)). No gradient yet in Caffe2
    (``GRADIENT_NOT_IMPLEMENTED_YET``). Source: caffe2/operators/logit_op.cc."""

    def setup(self):
        self.eps = self.args.single("eps", 1e-6, float)
        if not 0.0 < self.eps < 0.5:
            raise ArgumentError("eps=%g; expected 0 < eps < 0.5" % self.eps)

    def compute(self, x, out):
        eps = x.dtype.type(self.eps)
        clamped = np.maximum(np.minimum(x, 1 - eps), eps)
        np.log(clamped / (1 - clamped), out=out)


register_gradient("Logit")(GradientNotImplementedYet)


@register("LogitGradient", inputs=2, outputs=1)
class LogitGradient(Logit):
    """Inputs X, dY → dX = dY / (X (1 − X)) inside ``[eps, 1 − eps]``, else 0."""

    def run(self):
        x, dy = _same_size_pair(self)
        eps = x.dtype.type(self.eps)
        inside = (x >= eps) & (x <= 1 - eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            dx = np.where(inside, dy / ((1 - x) * x), 0)
        self.output(0, x.shape, x.dtype)[...] = dx


register_gradient_variant("Logit", eras=["E6", "E7"])(
    single_op_gradient("Logit", "LogitGradient", ["I0", "GO0"], register=False)
)


def _same_size_pair(op):
    """Inputs 0 and 1: two float tensors of one type and size (X and dY)."""
    x, dy = op.float_input(0), op.float_input(1)
    op.same_dtype(0, 1)
    if dy.size != x.size:
        raise op.shape_error(1, "%d elements like input 0" % x.size)
    return x, dy.reshape(x.shape)


#: Abs, Sin, Cos: (function, derivative) — the gradient op is dY times the derivative.
_SIMPLE = {
    "Abs": (np.abs, np.sign),
    "Sin": (np.sin, np.cos),
    "Cos": (np.cos, lambda x: -np.sin(x)),
}


def _simple_ops(name, function, derivative):
    forward = type(name, (_UnaryFloat,), {"compute": lambda self, x, out: function(x, out=out)})
    forward.__doc__ = "Y = %s(X), element-wise." % name.lower()

    def run(self):
        x, dy = _same_size_pair(self)
        np.multiply(dy, derivative(x), out=self.output(0, x.shape, x.dtype))

    gradient = type(name + "Gradient", (WithoutBroadcast,), {"run": run})
    gradient.__doc__ = "Inputs X, dY → dX = dY · %s'(X)." % name.lower()
    forward.__module__ = gradient.__module__ = __name__
    register(name, inputs=1, outputs=1)(forward)
    register(name + "Gradient", inputs=2, outputs=1)(gradient)
    single_op_gradient(name, name + "Gradient", ["I0", "GO0"])
    return forward, gradient


for _name, (_function, _derivative) in _SIMPLE.items():
    _simple_ops(_name, _function, _derivative)


@register("Softsign", inputs=1, outputs=1, inplace=[(0, 0)])
class Softsign(_UnaryFloat):
    """``Y = X / (1 + abs(X))``. Source: caffe2/operators/softsign_op.cc."""

    def compute(self, x, out):
        np.divide(x, 1 + np.abs(x), out=out)


@register("SoftsignGradient", inputs=2, outputs=1, inplace=[(1, 0)])
class SoftsignGradient(WithoutBroadcast):
    """Inputs X, dY (one shape) → ``dX = dY / (1 + abs(X))²``."""

    def run(self):
        x, dy = self.float_input(0), self.float_input(1)
        if dy.shape != x.shape:
            raise self.shape_error(1, "%s like input 0 ('%s')" % (x.shape, self.input_name(0)))
        self.same_dtype(0, 1)
        np.divide(dy, np.square(1 + np.abs(x)), out=self.output(0, x.shape, x.dtype))


@register_gradient("Softsign")
class GetSoftsignGradient(GradientMaker):
    """``SoftsignGradient([I0, GO0] → GI0)``; refused for an in-place Softsign."""

    def get_gradient_defs(self):
        if self.I(0) == self.O(0):
            raise GradientError(
                "Cannot compute softsign gradient if you choose to do an in-place calculation."
            )
        return [self.op_def("SoftsignGradient", [self.I(0), self.GO(0)], [self.GI(0)])]


@register("ReplaceNaN", inputs=1, outputs=1, inplace=[(0, 0)])
class ReplaceNaN(_UnaryFloat):
    """Y = X with every NaN replaced by ``value`` (default 0).
    Source: caffe2/operators/replace_nan_op.{h,cc}."""

    def setup(self):
        self.value = self.args.single("value", 0.0, float)

    def compute(self, x, out):
        np.copyto(out, np.where(np.isnan(x), x.dtype.type(self.value), x))


register_gradient("ReplaceNaN")(ShouldNotDoGradient)


@register("Sign", inputs=1, outputs=1)
class Sign(_UnaryFloat):
    """Y = 1 where X > 0, −1 where X < 0, else 0 (NaN included)."""

    def compute(self, x, out):
        np.subtract((x > 0).astype(x.dtype), x < 0, out=out)


register_gradient("Sign")(ShouldNotDoGradient)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


@register("Swish", inputs=1, outputs=1)
class Swish(_UnaryFloat):
    """Y = X / (1 + exp(−X))."""

    def compute(self, x, out):
        np.multiply(x, _sigmoid(x), out=out)


@register("SwishGradient", inputs=3, outputs=1, inplace=[(2, 0)])
class SwishGradient(Operator):
    """Inputs X, Y, dY → dX = dY · (Y + sigmoid(X) · (1 − Y))."""

    def run(self):
        x = self.float_input(0)
        for i in (1, 2):
            if self.float_input(i).size != x.size:
                raise self.shape_error(i, "%d elements like input 0" % x.size)
            self.same_dtype(0, i)
        y, dy = self.input(1).reshape(x.shape), self.input(2).reshape(x.shape)
        dx = dy * (y + _sigmoid(x) * (1 - y))
        self.output(0, self.input(1).shape, x.dtype)[...] = dx.reshape(self.input(1).shape)


@register_gradient("Swish")
class GetSwishGradient(GradientMaker):
    """``SwishGradient([I0, O0, GO0] → GI0)``."""

    def get_gradient_defs(self):
        return [self.op_def("SwishGradient", [self.I(0), self.O(0), self.GO(0)], [self.GI(0)])]
