"""``Operator``: the base class of every operator implementation.

Creating an operator (C++ ``OperatorBase`` constructor) binds it to the blobs
it reads and writes: every input must already exist in the workspace (or a
parent), every output is created if it does not. Arguments are parsed once
here (:meth:`Operator.setup`); :meth:`Operator.run` then only computes.

Helpers for implementations:

* ``self.input(i)`` — input i's tensor (a clear error if it is not a tensor);
* ``self.output(i, shape, dtype)`` — the array to write output i into (keeps
  the existing memory when the size matches, see :meth:`Blob.resize`);
* ``self.check(cond, msg)`` and ``self.shape_error(...)`` for validation.

**Element types.** An operator Caffe2 registered for ``float`` reads its float
inputs with :meth:`Operator.float_input`, which takes float32 and — caffe2rnn's
one stated extension — float64, so that gradients can be checked against
finite differences in double precision. Caffe2 refused a double tensor there
("Tensor type mismatch"); ``caffe2rnn.runtime.settings.set_float64(False)``
makes caffe2rnn refuse it too (:mod:`caffe2rnn.runtime.settings`).
"""

import math
from typing import Any, Optional

import numpy as np

from ..errors import BlobNotFoundError, DTypeError, EnforceNotMet, ShapeError
from ..runtime import settings
from ..runtime.arguments import ArgumentHelper

#: The float types of caffe2rnn's float operators: float32, which Caffe2
#: registered, and float64, the extension (module docstring).
FLOAT_TYPES = (np.float32, np.float64)


def describe_content(blob):
    """What a blob holds, for error messages: ``a float32 tensor of shape (2, 3)``."""
    value = blob.value
    if type(value) is np.ndarray:
        return "a %s tensor of shape %s" % (value.dtype, value.shape)
    return "nothing" if value is None else blob.type_name()


class Operator:
    """An operator bound to a workspace. Subclasses implement :meth:`run`."""

    op_type: Optional[str] = None
    schema: Any = None

    #: The Caffe2 era this operator was created for (an
    #: :class:`~caffe2rnn.eras.Era`), or None for today's operators: the era
    #: of the net that created it, handed on to the step nets an operator
    #: such as ``RecurrentNetwork`` creates (:mod:`caffe2rnn.runtime.registry`).
    era = None

    #: Whether :meth:`run` writes every element of each output and reads no
    #: blob but its inputs (an output that is also an input does not count).
    #: Then ``RunNet``'s rollback journal may hand such an output a spare
    #: array instead of copying its old contents (:mod:`caffe2rnn.runtime.rollback`).
    writes_outputs_whole = False

    def __init__(self, op_def, ws, era=None):
        self.def_ = op_def
        self.ws = ws
        self.era = era
        self.args = ArgumentHelper(op_def)
        self.inputs = []
        for name in op_def.input:
            blob = ws.get_blob(name)
            if blob is None:
                raise BlobNotFoundError("Encountered a non-existing input blob: %s" % name)
            self.inputs.append(blob)
        self.outputs = [ws.create_blob(name) for name in op_def.output]
        self.setup()

    def setup(self):
        """Parse arguments; called once at creation. Override as needed."""

    def run(self):
        raise NotImplementedError(self.op_type)

    def bind(self):
        """This op's *bound calls* for the RNN executor, or None if it has none.

        Called right after :meth:`run`, it returns a list of
        :class:`~caffe2rnn.operators.bound_call.BoundCall` s that repeat
        exactly what that run computed — the same NumPy calls or kernels on
        the arrays the op's blobs hold now, each declaring what it reads,
        writes and costs — for as long as those blobs keep holding them (the
        executor checks that). None means "no compiled form": the executor
        calls :meth:`run` itself instead. A bind may also set
        ``self.loop_prologue``, ``(key, call)`` pairs the executor calls once
        before each run of the loop (FC refreshes its cached Wᵀ there). See
        :mod:`caffe2rnn.operators.rnn.executor`.
        """
        return None

    # --- reading inputs --------------------------------------------------------
    def input(self, i):
        value = self.inputs[i].value
        if type(value) is not np.ndarray:
            raise DTypeError(
                "input %d ('%s') is %s, not a tensor"
                % (
                    i,
                    self.inputs[i].name,
                    "empty" if value is None else "a " + type(value).__name__,
                )
            )
        return value

    def float_input(self, i):
        """Input i, which must be a float32 tensor — or float64, the extension
        (module docstring; off: ``settings.set_float64(False)``)."""
        x = self.inputs[i].value
        if type(x) is np.ndarray and x.dtype in settings.float_dtypes:  # the common case
            return x
        x = self.input(i)  # raises for a non-tensor
        if x.dtype == np.float64:
            raise DTypeError(
                "input %d ('%s') has type float64; Caffe2 registered %s for float32 only "
                "(caffe2rnn's float64 extension is off: settings.set_float64)"
                % (i, self.inputs[i].name, self.op_type)
            )
        raise DTypeError(
            "input %d ('%s') has type %s; expected %s"
            % (
                i,
                self.inputs[i].name,
                x.dtype,
                "float32 or float64" if settings.float64_enabled() else "float32",
            )
        )

    def typed_input(self, i, types, expected, ndim=None):
        """Input i, whose element type must be one of ``types`` (Caffe2's
        ``data<T>()`` or ``DispatchHelper`` list) and, if given, whose rank is
        ``ndim``; ``expected`` says what it holds, for the errors:
        ``typed_input(1, (np.int32, np.int64), "int32 or int64 indices", ndim=1)``."""
        x = self.input(i)
        if x.dtype not in types:
            raise DTypeError(
                "input %d ('%s') has type %s; expected %s"
                % (i, self.inputs[i].name, x.dtype, expected)
            )
        if ndim is not None and x.ndim != ndim:
            raise self.shape_error(i, "a %d-D tensor of %s" % (ndim, expected))
        return x

    def input_name(self, i):
        return self.inputs[i].name

    # --- writing outputs ------------------------------------------------------
    def output(self, i, shape, dtype=np.float32):
        if math.prod(shape) > settings.unchecked_elements:  # cheap: most outputs are small
            settings.check_allocation(shape, dtype, "output %d ('%s')" % (i, self.outputs[i].name))
        return self.outputs[i].resize(shape, dtype)

    def set_output(self, i, value):
        """Make output i hold ``value`` itself (shares memory; no copy)."""
        self.outputs[i].value = value

    def copy_to_output(self, i, value):
        """Write ``value`` into output i, reusing its memory when possible."""
        out = self.output(i, value.shape, value.dtype)
        if out is not value:
            np.copyto(out, value)
        return out

    # --- validation -----------------------------------------------------------
    def check(self, condition, message, error=EnforceNotMet):
        if not condition:
            raise error(message)

    def shape_error(self, i, expected, got=None):
        got = self.input(i).shape if got is None else got
        return ShapeError(
            "input %d ('%s') has shape %s; expected %s"
            % (i, self.inputs[i].name, tuple(got), expected)
        )

    def same_dtype(self, *indices):
        dtypes = {self.input(i).dtype for i in indices}
        if len(dtypes) > 1:
            raise DTypeError(
                "inputs %s have different types: %s"
                % (
                    ", ".join("%d ('%s')" % (i, self.inputs[i].name) for i in indices),
                    ", ".join(str(self.input(i).dtype) for i in indices),
                )
            )
        return dtypes.pop()


class WithoutBroadcast(Operator):
    """Base of gradient ops Caffe2 registered as ``BinaryElementwiseOp<...,
    WithoutBroadcast<Functor>>`` (SigmoidGradient, TanhGradient, SoftsignGradient,
    Abs/Sin/CosGradient...): they read the binary ops' arguments ``broadcast``,
    ``axis``, ``axis_str`` and ``order`` (caffe2/operators/elementwise_op.h at
    0cdd09da6 and 042e8ede4) and refuse ``broadcast=1``, which
    ``WithoutBroadcast`` left ``CAFFE_NOT_IMPLEMENTED``; the others change
    nothing without it."""

    def setup(self):
        broadcast = self.args.single("broadcast", 0, int)
        self.args.single("axis", -1, int)
        self.args.single("axis_str", "", str)
        self.args.single("order", "NCHW", str)
        if broadcast:
            raise EnforceNotMet(
                "%s: broadcast=1 is not implemented (Caffe2's WithoutBroadcast functor: "
                "CAFFE_NOT_IMPLEMENTED)" % self.op_type
            )
