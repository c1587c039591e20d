"""Gradient makers: the per-op rules that write an op's backward ops.

Caffe2's C++ ``GradientMakerBase`` gives each maker a small vocabulary over
the forward op ``def``:

* ``I(i)`` / ``O(i)``: the forward op's i-th input / output name;
* ``GO(i)``: the gradient blob of output i (an error if it has none);
* ``GI(i)``: ``I(i) + "_grad"``, *and* records it as input i's gradient;
* ``SetDense(i, name)``: input i's gradient is an existing blob (``GO(0)``
  usually): a pass-through, no op needed (``Sum``, ``Alias``, ``Add``);
* sparse gradients, a :class:`GradientSlice` of ``indices`` and ``values``
  blobs (the rows of a parameter that were read, and their gradients):
  ``GO_I(i)`` / ``GO_V(i)`` read output i's, ``GI_I(i)`` / ``GI_V(i)`` name
  input i's ``<input>_grad_indices`` / ``_grad_values``, ``SetSparse(i,
  indices, values)`` passes existing blobs through (``Gather``). An input's
  gradient is dense or sparse, never both (Caffe2's ``CAFFE_ENFORCE`` checks in
  caffe2/core/operator_gradient.h at 0cdd09da6).

A maker returns the gradient ``OperatorDef``s; :func:`get_gradient_for_op`
then applies the post-processing every C++ maker went through (mark
``is_gradient_op``, copy device option, engine and, by default, all forward
arguments).
"""

import collections

from .. import eras
from ..errors import GradientError
from ..proto import caffe2_pb2
from ..runtime import registry
from ..runtime.arguments import ArgumentHelper
from ..utils import MakeArgument

#: A sparse gradient: ``values[k]`` is the gradient of row ``indices[k]`` of
#: the parameter (repeated indices add up). ``core.GradientSlice``.
GradientSlice = collections.namedtuple("GradientSlice", ["indices", "values"])


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
    def _index(self, accessor, i, size, what):
        """``i`` if ``0 <= i < size``. C++ read ``def_.input(i)`` and
        ``g_output_.at(i)``: a negative or too large index was out of range
        there (std::out_of_range, or protobuf reading past the field), never
        Python's count from the end."""
        if not (isinstance(i, int) and 0 <= i < size):
            raise GradientError(
                "%s gradient maker: %s(%r) is out of range: the op has %d %s"
                % (self.def_.type, accessor, i, size, what)
            )
        return i

    def I(self, i):  # noqa: E743 - Caffe2's name
        return self.def_.input[self._index("I", i, len(self.def_.input), "inputs")]

    def O(self, i):  # noqa: E743 - Caffe2's name
        return self.def_.output[self._index("O", i, len(self.def_.output), "outputs")]

    def GO(self, i):
        g = self.g_output[self._index("GO", i, len(self.g_output), "outputs")]
        if g is None or not isinstance(g, str):
            raise GradientError(
                "Input gradient for output %d ('%s') of %s is not a dense "
                "gradient blob" % (i, self.O(i), self.def_.type)
            )
        return g

    def has_GO(self, i):
        return isinstance(self.g_output[i], str)

    def is_sparse_GO(self, i):
        """Output i's gradient is a GradientSlice (C++ ``GradOut(i).IsSparse()``)."""
        return isinstance(self.g_output[i], GradientSlice)

    def _GO_slice(self, i):
        g = self.g_output[i]
        if not isinstance(g, GradientSlice):
            raise GradientError(
                "Gradient of output %d ('%s') of %s is either dense or not provided"
                % (i, self.O(i), self.def_.type)
            )
        return g

    def GO_I(self, i):
        return str(self._GO_slice(i).indices)

    def GO_V(self, i):
        return str(self._GO_slice(i).values)

    def _not_sparse(self, i):
        if isinstance(self.g_input[i], GradientSlice):
            raise GradientError("Input %s already set to sparse." % self.I(i))

    def _not_dense(self, i):
        if isinstance(self.g_input[i], str):
            raise GradientError("Input %s already set to dense." % self.I(i))

    def GI(self, i):
        self._index("GI", i, len(self.def_.input), "inputs")
        self._not_sparse(i)
        name = self.I(i) + "_grad"
        self.g_input[i] = name
        return name

    def _GI_half(self, i, half):
        """Name input i's ``_grad_<half>`` blob and record it in its slice."""
        self._not_dense(i)
        name = self.I(i) + "_grad_" + half
        current = self.g_input[i] or GradientSlice("", "")
        self.g_input[i] = current._replace(**{half: name})
        return name

    def GI_I(self, i):
        return self._GI_half(i, "indices")

    def GI_V(self, i):
        return self._GI_half(i, "values")

    def SetDense(self, i, name):
        self._not_sparse(i)
        self.g_input[i] = name

    def SetSparse(self, i, indices, values):
        self._not_dense(i)
        self.g_input[i] = GradientSlice(str(indices), str(values))

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


def single_op_gradient(op_type, gradient_type, inputs, grad_input=0, register=True):
    """Register the maker Caffe2 wrote as one ``SingleGradientDef``: a
    ``gradient_type`` op reading ``inputs`` — forward blobs named in the
    vocabulary above, ``"I0"``, ``"O1"``, ``"GO0"`` — and writing
    ``GI(grad_input)``; forward arguments copied. Returns the maker class
    (``register=False``: only returns it, e.g. for an era's variant)."""
    specs = [(spec.rstrip("0123456789"), int(spec.lstrip("GIO"))) for spec in inputs]

    class SingleOpGradient(GradientMaker):
        def get_gradient_defs(self):
            names = [getattr(self, kind)(index) for kind, index in specs]
            return [self.op_def(gradient_type, names, [self.GI(grad_input)])]

    SingleOpGradient.__name__ = SingleOpGradient.__qualname__ = "Get%sGradient" % op_type
    SingleOpGradient.__doc__ = "``%s([%s] → GI%d)``." % (
        gradient_type,
        ", ".join(inputs),
        grad_input,
    )
    return registry.register_gradient(op_type)(SingleOpGradient) if register else SingleOpGradient


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


class NotRegistered(GradientMaker):
    """An era whose C++ registered no gradient maker for the op: asking for one
    fails as ``GradientRegistry()->Create`` did for any unregistered type
    (:mod:`caffe2rnn.operators.era_gradients`)."""

    def get_gradient_defs(self):
        raise GradientError("Gradient maker for operator %s not implemented." % self.def_.type)


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
