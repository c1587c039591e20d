"""Test-only operator types for the gradient-registry tests.

Caffe2's core_gradients_test.py defined toy ops ``Direct``, ``UseInput``,
``UseOutput`` and ``Nogradient`` whose gradients have a known shape; these are
the same toys under names no real operator uses. Their makers are *native*
(C++-style) makers, so their gradient ops get ``is_gradient_op: true`` and
the forward op's device option. The rest stand in for Caffe2 ops the
pass-through examples need (Relu, Softmax, Add, Sub, DotProduct, Mul).
"""

from caffe2rnn import core
from caffe2rnn.operators.base import Operator
from caffe2rnn.operators.gradient_maker import GradientMaker, NoGradient
from caffe2rnn.runtime.registry import register, register_gradient


class SumOfInputs(Operator):
    """Forward of every toy: each output is the sum of the inputs."""

    def run(self):
        total = sum(self.float_input(i) for i in range(len(self.inputs)))
        for i in range(len(self.outputs)):
            self.copy_to_output(i, total)


def _toy(op_type, maker):
    register(op_type, inputs=(1, None), outputs=(0, None), inplace="any")(
        type(op_type + "Op", (SumOfInputs,), {})
    )
    register_gradient(op_type)(maker)


class _AllOutputGradients(GradientMaker):
    """Reads every output gradient (an error if one is missing, like
    Caffe2's ``NeedAll``) and writes every input gradient."""

    gradient_type = None

    def extra_inputs(self):
        return []

    def get_gradient_defs(self):
        grads = [self.GO(i) for i in range(len(self.def_.output))]
        outs = [self.GI(i) for i in range(len(self.def_.input))]
        return [self.op_def(self.gradient_type, self.extra_inputs() + grads, outs)]


class _Direct(_AllOutputGradients):
    gradient_type = "DirectGradient"


class _UseOutput(_AllOutputGradients):
    gradient_type = "UseOutputGradient"

    def extra_inputs(self):
        return list(self.def_.output)


class _UseInput(_AllOutputGradients):
    gradient_type = "UseInputGradient"

    def extra_inputs(self):
        return list(self.def_.input)


class _ReluLike(GradientMaker):
    """Relu / Softmax: the gradient op reads the output and its gradient."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                self.def_.type[len("Test") :] + "Gradient", [self.O(0), self.GO(0)], [self.GI(0)]
            )
        ]


class _AddLike(GradientMaker):
    """Add without broadcast: both inputs get the output gradient, no op."""

    def get_gradient_defs(self):
        self.SetDense(0, self.GO(0))
        self.SetDense(1, self.GO(0))
        return []


class _SubLike(GradientMaker):
    """Sub: input 0 passes the gradient through, input 1 gets its negative."""

    def get_gradient_defs(self):
        self.SetDense(0, self.GO(0))
        return [self.op_def("Negative", [self.GO(0)], [self.GI(1)])]


class _DotProductLike(GradientMaker):
    def get_gradient_defs(self):
        return [
            self.op_def(
                "DotProductGradient", [self.I(0), self.I(1), self.GO(0)], [self.GI(0), self.GI(1)]
            )
        ]


class _MulLike(GradientMaker):
    """Mul, variant C without broadcast: dA = dY * B, dB = dY * A."""

    def get_gradient_defs(self):
        return [
            self.op_def("Mul", [self.GO(0), self.I(1)], [self.GI(0)]),
            self.op_def("Mul", [self.GO(0), self.I(0)], [self.GI(1)]),
        ]


for _name, _maker in [
    ("TestDirect", _Direct),
    ("TestUseOutput", _UseOutput),
    ("TestUseInput", _UseInput),
    ("TestNogradient", NoGradient),
    ("TestStopGradient", NoGradient),
    ("TestRelu", _ReluLike),
    ("TestSoftmax", _ReluLike),
    ("TestAdd", _AddLike),
    ("TestSub", _SubLike),
    ("TestDotProduct", _DotProductLike),
    ("TestMul", _MulLike),
]:
    _toy(_name, _maker)


def grad_op(op_type, inputs, outputs, device_option=None, **kwargs):
    """The OperatorDef a native maker is expected to emit."""
    op = core.CreateOperator(op_type, inputs, outputs, **kwargs)
    op.is_gradient_op = True
    if device_option is not None:
        op.device_option.CopyFrom(device_option)
    return op


def texts(ops):
    """Ops as their printed text: exact comparison with readable diffs."""
    return [str(op) for op in ops]
