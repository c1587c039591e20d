"""Gradient makers of Add, Sub and Mul, in their three 2017 versions.

With ``C = A op B`` and B broadcast over A, dA has A's shape but dB must be
*reduced* back to B's shape. Caffe2 got there in three steps,
selected here by ``eras.current().elementwise_gradient``:

* **A** (2016-11 … 2017-04-07; eras E0–E2): the makers copy no arguments. A
  broadcasting Add or Mul reduces dB with ``ReduceFrontSum`` when the forward
  op carries ``use_grad_hack`` (right only when B is broadcast along dim 0),
  otherwise with ``SumReduceLike`` (which carries no axis, so it assumes
  suffix matching). Sub always uses ``SumReduceLike`` in these eras. The first
  Mul gradient op gets only ``broadcast: 1``.
* **B** (2017-04-07 … 04-10; E3): ``use_grad_hack`` is ignored; the
  Sub/Mul ``SumReduceLike`` ops carry ``[broadcast, axis, axis_str, order]``;
  Add copies all forward arguments.
* **C** (2017-04-13 on; E4–E6, the default): as B, but the Sub/Mul
  ``SumReduceLike`` ops carry ``[axis, axis_str, order]`` only.

"Broadcasting" means the forward op *has* a ``broadcast`` argument (even
``broadcast=0``), exactly as Caffe2's ``HasArgument`` test did. A Mul written in
place cannot be differentiated: its gradient needs both original inputs.
"""

from .. import eras
from ..errors import GradientError
from ..proto import caffe2_pb2
from ..runtime.registry import register_gradient
from ..utils import MakeArgument
from .gradient_maker import GradientMaker

#: Defaults Caffe2 filled in for broadcast arguments the forward op lacked.
_DEFAULTS = {"broadcast": 0, "axis": -1, "axis_str": "", "order": "NCHW"}
_WITH_BROADCAST = ("broadcast", "axis", "axis_str", "order")
_AXIS_ONLY = ("axis", "axis_str", "order")
_PRE_REDUCTION = "_autogen_pre_red"


class ElementwiseGradientMaker(GradientMaker):
    """Shared vocabulary of the Add/Sub/Mul makers."""

    def get_gradient_defs(self):
        self.variant = eras.current().elementwise_gradient
        self.broadcasting = self.has_arg("broadcast")
        return self.gradient_defs()

    def forward_args(self, names):
        """The forward op's ``Argument`` of each name, or Caffe2's default."""
        found = {}
        for arg in self.def_.arg:
            found.setdefault(arg.name, arg)  # GetArgument returned the first one
        args = []
        for name in names:
            if name in found:
                arg = caffe2_pb2.Argument()
                arg.CopyFrom(found[name])
            else:
                arg = MakeArgument(name, _DEFAULTS[name])
            args.append(arg)
        return args

    def grad_op(self, op_type, inputs, outputs, name="", args=()):
        op = self.op_def(op_type, inputs, outputs, name)
        op.arg.extend(args)
        return op

    def reduce_to_b(self, source, name=""):
        """The op turning ``source`` (A-shaped) into GI(1) (B-shaped), per variant."""
        if self.variant == "A":
            return self.grad_op("SumReduceLike", [source, self.I(1)], [self.GI(1)], name)
        names = _WITH_BROADCAST if self.variant == "B" else _AXIS_ONLY
        return self.grad_op(
            "SumReduceLike", [source, self.I(1)], [self.GI(1)], name, self.forward_args(names)
        )


@register_gradient("Add")
class GetAddGradient(ElementwiseGradientMaker):
    """dA = dC (pass-through); dB = dC, or dC reduced to B's shape."""

    def gradient_defs(self):
        # Variant A copied no arguments; B and C copy them all (so `broadcast`,
        # `axis`, `use_grad_hack`... land on the SumReduceLike op).
        self.copy_arguments = self.variant != "A"
        self.SetDense(0, self.GO(0))
        if not self.broadcasting:
            self.SetDense(1, self.GO(0))
            return []
        if self.variant == "A" and self.has_arg("use_grad_hack"):
            return [self.grad_op("ReduceFrontSum", [self.GO(0)], [self.GI(1)], "add_grad")]
        return [self.grad_op("SumReduceLike", [self.GO(0), self.I(1)], [self.GI(1)])]


@register_gradient("Sub")
class GetSubGradient(ElementwiseGradientMaker):
    """dA = dC (pass-through); dB = -dC, reduced to B's shape when broadcasting."""

    copy_arguments = False

    def gradient_defs(self):
        self.SetDense(0, self.GO(0))
        if not self.broadcasting:
            return [self.grad_op("Negative", [self.GO(0)], [self.GI(1)])]
        pre_reduction = self.GI(1) + _PRE_REDUCTION
        return [
            self.grad_op("Negative", [self.GO(0)], [pre_reduction]),
            self.reduce_to_b(pre_reduction),
        ]


@register_gradient("Mul")
class GetMulGradient(ElementwiseGradientMaker):
    """dA = dC * B (broadcast like the forward); dB = dC * A, reduced to B's shape."""

    copy_arguments = False

    def gradient_defs(self):
        forward = self.def_
        if forward.output[0] in (forward.input[0], forward.input[1]):
            raise GradientError(
                "Gradient computation cannot be carried out if "
                "Mul uses in-place computation: %s" % forward
            )
        if not self.broadcasting:
            return [
                self.grad_op("Mul", [self.GO(0), self.I(1)], [self.GI(0)]),
                self.grad_op("Mul", [self.GO(0), self.I(0)], [self.GI(1)]),
            ]
        if self.variant == "A":
            first_args = [MakeArgument("broadcast", 1)]
        else:
            first_args = self.forward_args(_WITH_BROADCAST)
        pre_reduction = self.GI(1) + _PRE_REDUCTION
        ops = [
            self.grad_op(
                "Mul", [self.GO(0), self.I(1)], [self.GI(0)], "mul_grad_1st_op", first_args
            ),
            self.grad_op("Mul", [self.GO(0), self.I(0)], [pre_reduction], "mul_gradient_2nd_op"),
        ]
        if self.variant == "A" and self.has_arg("use_grad_hack"):
            ops.append(
                self.grad_op("ReduceFrontSum", [pre_reduction], [self.GI(1)], "mul_grad_3rd_op")
            )
        else:
            ops.append(self.reduce_to_b(pre_reduction, "mul_with_broadcast_grad_3"))
        return ops
