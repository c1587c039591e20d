"""Gradient makers: the per-op rules that write an op's backward ops.

Caffe2's C++ ``GradientMakerBase`` gives each maker a small vocabulary over
the forward op ``def``:

* ``I(i)`` / ``O(i)``: the forward op's i-th input / output name;
* ``GO(i)``: the gradient blob of output i (an error if it has none);
* ``GI(i)``: ``I(i) + "_grad"``, *and* records it as input i's gradient;
* ``SetDense(i, name)``: input i's gradient is an existing blob (``GO(0)``
  usually): a pass-through, no op needed (``Sum``, ``Alias``, ``Add``).

A maker returns the gradient ``OperatorDef``s; :func:`get_gradient_for_op`
then applies the post-processing every C++ maker went through (mark
``is_gradient_op``, copy device option, engine and, by default, all forward
arguments).
"""

from .. import eras
from ..errors import GradientError
from ..proto import caffe2_pb2
from ..runtime import registry
from ..runtime.arguments import ArgumentHelper
from ..utils import MakeArgument


class GradientMaker:
    """Base of every native gradient maker (C++ ``GradientMakerBase``)."""

    copy_arguments = True
    copy_device_option = True
    copy_engine = True

    def __init__(self, op, g_output):
        self.def_ = op
        self.g_output = list(g_output)
        self.g_input = [None] * len(op.input)

    # --- the C++ vocabulary -------------------------------------------------
    def I(self, i):  # noqa: E743 - Caffe2's name
        return self.def_.input[i]

    def O(self, i):  # noqa: E743 - Caffe2's name
        return self.def_.output[i]

    def GO(self, i):
        g = self.g_output[i]
        if g is None or not isinstance(g, str):
            raise GradientError(
                "Input gradient for output %d ('%s') of %s is not a dense "
                "gradient blob" % (i, self.O(i), self.def_.type)
            )
        return g

    def has_GO(self, i):
        return isinstance(self.g_output[i], str)

    def GI(self, i):
        name = self.I(i) + "_grad"
        self.g_input[i] = name
        return name

    def SetDense(self, i, name):
        self.g_input[i] = name

    def op_def(self, op_type, inputs, outputs, name="", **args):
        """A gradient OperatorDef: type, name (present), inputs, outputs, args."""
        op = caffe2_pb2.OperatorDef()
        op.type = op_type
        op.name = name
        op.input.extend(inputs)
        op.output.extend(outputs)
        for key, value in args.items():
            op.arg.add().CopyFrom(MakeArgument(key, value))
        return op

    def arg(self, name, default=None):
        """The forward op's argument ``name`` as a Python value (or default)."""
        return ArgumentHelper(self.def_).value(name, default)

    def has_arg(self, name):
        return ArgumentHelper(self.def_).has(name)

    # --- to override --------------------------------------------------------
    def get_gradient_defs(self):
        raise NotImplementedError

    def make(self):
        return self.get_gradient_defs(), self.g_input


class NoGradient(GradientMaker):
    """``NO_GRADIENT``: the op has no gradient (fillers, StopGradient...)."""

    def get_gradient_defs(self):
        return []


class ShouldNotDoGradient(GradientMaker):
    """``SHOULD_NOT_DO_GRADIENT``: asking for this op's gradient is an error."""

    def get_gradient_defs(self):
        raise GradientError("One should not call gradient for operator %s." % self.def_.type)


class GradientNotImplementedYet(GradientMaker):
    def get_gradient_defs(self):
        raise GradientError(
            "Operator %s should have a gradient but is not implemented yet." % self.def_.type
        )


def _post_process(maker, forward, ops):
    for op in ops:
        op.is_gradient_op = True
        if maker.copy_device_option and forward.HasField("device_option"):
            op.device_option.CopyFrom(forward.device_option)
        if maker.copy_engine and forward.HasField("engine"):
            op.engine = forward.engine
        if maker.copy_arguments and len(forward.arg):
            op.arg.extend(forward.arg)
    return ops


def get_gradient_for_op(op, g_output):
    """The C++ ``GetGradientForOp``: ``(gradient ops, g_input)`` for ``op``.

    ``g_output`` has one entry per output of ``op``: a gradient name, a
    ``GradientSlice`` or ``None``. The maker is the one registered for the
    era code is built under (:func:`caffe2rnn.eras.current`). Raises
    :class:`GradientError` when no maker is registered, the op fails its
    schema, or the maker refuses.
    """
    maker_cls = registry.gradient_maker(op.type, eras.current())
    schema = registry.schema(op.type)
    if schema is not None:
        problem = schema.verify(op)
        if problem:
            raise GradientError(
                "(GradientMaker) Operator def did not pass schema checking: %s" % problem
            )
    maker = maker_cls(op, g_output)
    ops, g_input = maker.make()
    if len(g_input) != len(op.input):
        raise GradientError(
            "%s gradient maker returned %d input gradients for "
            "%d inputs" % (op.type, len(g_input), len(op.input))
        )
    return _post_process(maker, op, list(ops)), list(g_input)
