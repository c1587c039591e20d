"""Element-wise activations Tanh, Sigmoid, Relu and their gradients.

Each forward op may run in place (``X → X``), and each gradient op reads the
forward **output** Y, not X (``[Y, dY] → dX``), because every one of these
derivatives is cheapest in terms of Y:

* tanh:    ``dX = dY ⊙ (1 − Y²)``
* sigmoid: ``dX = dY ⊙ Y ⊙ (1 − Y)``
* relu:    ``dX = dY ⊙ sign(Y)`` (Caffe2's ``dYvec * Yvec.cwiseSign()``: 0 where
  Y is 0, so an infinite dY there gives NaN, and −dY where a Y fed to the
  gradient is negative; sign(NaN) is 0, as in Eigen's ``(a > 0) − (a < 0)``)

Reading Y is also what lets the forward op overwrite X. The gradient ops may
write dX over dY (in place ``{1 → 0}``). float32 or float64 only.
"""

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import (
    register,
    register_gradient,
    register_gradient_variant,
    register_variant,
)
from .base import Operator, WithoutBroadcast
from .gradient_maker import GradientMaker


@register("Tanh", inputs=1, outputs=1, inplace=[(0, 0)])
class Tanh(Operator):
    """Y = tanh(X). Caffe2 wrote it ``1 − 2 / (exp(2X) + 1)`` with Eigen's float
    exp (tanh_op.cc at 0cdd09da6 and 042e8ede4): the same function, but float32
    results can differ from ``np.tanh`` in the last bit (tanh(0.5): Caffe2
    0.46211714, here 0.46211717). Caffe2's numbers need its formula with a
    correctly rounded exp, about seven times the cost of ``np.tanh`` in the
    attention step net's Tanh; caffe2rnn keeps ``np.tanh`` (E6's
    ``brew_test.test_tanh``, which checks the mean to 7 places, is listed in
    tests/caffe2_suites/caffe2_expectations.py for it)."""

    def run(self):
        x = self.float_input(0)
        np.tanh(x, out=self.output(0, x.shape, x.dtype))


@register("Sigmoid", inputs=1, outputs=1, inplace=[(0, 0)])
class Sigmoid(Operator):
    """Y = 1 / (1 + exp(−X))."""

    def run(self):
        x = self.float_input(0)
        y = self.output(0, x.shape, x.dtype)
        np.negative(x, out=y)
        np.exp(y, out=y)
        y += 1
        np.reciprocal(y, out=y)


@register("Relu", inputs=1, outputs=1, inplace=[(0, 0)])
class Relu(Operator):
    """Y = max(X, 0)."""

    def run(self):
        x = self.float_input(0)
        np.maximum(x, 0, out=self.output(0, x.shape, x.dtype))


class ActivationGradient(Operator):
    """``[Y, dY] → dX``; subclasses implement :meth:`compute`."""

    def run(self):
        y = self.float_input(0)
        dy = self.input(1)
        if dy.shape != y.shape:
            raise self.shape_error(1, "%s like input 0 ('%s')" % (y.shape, self.input_name(0)))
        if dy.dtype != y.dtype:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected %s like input 0 "
                "('%s')" % (self.input_name(1), dy.dtype, y.dtype, self.input_name(0))
            )
        # The factor is computed before dX is touched: dX may be dY's memory.
        self.compute(y, dy, self.output(0, y.shape, y.dtype))


_GRADIENT_SCHEMA = dict(inputs=2, outputs=1, inplace=[(1, 0)])


@register("TanhGradient", **_GRADIENT_SCHEMA)
class TanhGradient(WithoutBroadcast, ActivationGradient):
    """dX = dY ⊙ (1 − Y²)."""

    @staticmethod
    def compute(y, dy, dx):
        # An explicit buffer: on a 0-d Y (e.g. after SumElements) NumPy
        # ufuncs return scalars, which cannot be written into.
        factor = np.square(y, out=np.empty_like(y))
        np.subtract(1, factor, out=factor)
        np.multiply(dy, factor, out=dx)


@register("SigmoidGradient", **_GRADIENT_SCHEMA)
class SigmoidGradient(WithoutBroadcast, ActivationGradient):
    """dX = dY ⊙ Y ⊙ (1 − Y)."""

    @staticmethod
    def compute(y, dy, dx):
        factor = np.subtract(1, y, out=np.empty_like(y))
        factor *= y
        np.multiply(dy, factor, out=dx)


@register("ReluGradient", **_GRADIENT_SCHEMA)
class ReluGradient(ActivationGradient):
    """dX = dY ⊙ sign(Y), as Caffe2's relu_op.cc computed it (module docstring)."""

    @staticmethod
    def compute(y, dy, dx):
        sign = np.greater(y, 0).astype(y.dtype)
        sign -= np.less(y, 0)
        np.multiply(dy, sign, out=dx)


def _register_output_based_gradient(op_type):
    @register_gradient(op_type)
    class GetGradient(GradientMaker):
        def get_gradient_defs(self):
            return [self.op_def(op_type + "Gradient", [self.O(0), self.GO(0)], [self.GI(0)])]

    GetGradient.__name__ = GetGradient.__qualname__ = "Get%sGradient" % op_type
    GetGradient.__doc__ = "``%sGradient([O0, GO0] → GI0)``." % op_type
    return GetGradient


GetTanhGradient = _register_output_based_gradient("Tanh")
GetSigmoidGradient = _register_output_based_gradient("Sigmoid")
GetReluGradient = _register_output_based_gradient("Relu")


@register_variant("ReluGradient", eras=["E4"], inputs=3, outputs=1, inplace=[(2, 0)])
class ReluGradientX(ReluGradient):
    """E4's ``ReluGradient([X, Y, dY] → dX)``: X is taken and not read
    (relu_op.cc from c2913bcac, 2017-04-12, to 4a1713b83, which went back to
    ``[Y, dY]``; the schema: 3 inputs, dY in place as dX)."""

    def run(self):
        y = self.float_input(1)
        dy = self.input(2)
        if dy.shape != y.shape:
            raise self.shape_error(2, "%s like input 1 ('%s')" % (y.shape, self.input_name(1)))
        if dy.dtype != y.dtype:
            raise DTypeError(
                "input 2 ('%s') has type %s; expected %s like input 1 "
                "('%s')" % (self.input_name(2), dy.dtype, y.dtype, self.input_name(1))
            )
        self.compute(y, dy, self.output(0, y.shape, y.dtype))


@register_gradient_variant("Relu", eras=["E4"])
class GetReluGradientX(GradientMaker):
    """E4: ``ReluGradient([I0, O0, GO0] → GI0)`` (relu_op.cc at c2913bcac)."""

    def get_gradient_defs(self):
        return [self.op_def("ReluGradient", [self.I(0), self.O(0), self.GO(0)], [self.GI(0)])]
