"""LSTMUnit / LSTMUnitGradient: the element-wise half of one LSTM step.

An LSTM step in Caffe2 is ``gates = FC(hidden_t_prev) + input_t`` (the GEMMs)
followed by this op, which turns the ``4D`` pre-activations of each batch row
into the new hidden and cell states. Gate order along the last axis:
**input i, forget f, output o, cell candidate g**, each a block of D::

    i = σ(x_i)   f = σ(x_f + forget_bias)   o = σ(x_o)   g = tanh(x_g)
    c = f · c_prev + i · g                  h = o · tanh(c)

Rows whose sequence has ended (``t >= seq_lengths[n]``) carry the previous
state through (``h = h_prev``, ``c = c_prev``), or zeros with ``drop_states``,
so padded batches give the same final states as unpadded ones.

Three input forms (Caffe2's ``lstm_unit_op.h``: 4 inputs until 2017-02, 5
after, and from 2018-01 the ``seq_lengths`` input may be left out):

* 5 inputs (from 2017-02, eras E2+): ``hidden_t_prev (1, N, D), cell_t_prev
  (1, N, D), gates (1, N, 4D), seq_lengths (N,) int32, timestep`` (int32, value
  t) → ``hidden_t, cell_t``;
* 4 inputs (eras E0–E1): no ``hidden_t_prev``; finished rows get ``h = 0``;
* ``sequence_lengths=0`` (Caffe2 2bf8d0cd4, 2018-01-26; era E7 and today's
  operator): ``hidden_t_prev, cell_t_prev, gates, timestep`` — no
  ``seq_lengths``, every row is valid at every step (what ONNX means when
  its LSTM's sequence lengths are left out). A fifth input is not read, as in
  Caffe2. An op created for an earlier era ignores the argument, as Caffe2
  did then.

Without ``sequence_lengths=0`` a 4-input op is the E0–E1 form in every era: a
deliberate extension (Caffe2 from 2017-02 refused 4 inputs), so that the
nets of the scratch era run on today's operator.

The maths (σ, tanh = 2σ(2x) − 1 in the input dtype, as Caffe2) is the
kernel pair ``lstm_unit_forward`` / ``lstm_unit_backward`` of
:mod:`caffe2rnn.kernels.lstm_unit`, compiled in ``_ext/lstm_unit.pyx``: it is
the hottest op of every LSTM (once per timestep each way), so one call does
the whole step. The ops validate their inputs (and remember the shapes they
validated, so a step net pays for it once) and call the checked kernels.

Caffe2: caffe2/operators/lstm_unit_op.{h,cc}.
"""

import numpy as np

from .. import eras, kernels
from ..errors import DTypeError, EnforceNotMet
from ..kernels import checked
from ..kernels.checked import lstm_unit_backward, lstm_unit_forward  # noqa: F401
from ..runtime.arguments import ArgumentHelper
from ..runtime.registry import register, register_gradient
from .base import Operator
from .bound_call import BoundCall
from .gradient_maker import GradientMaker


class _LSTMUnitBase(Operator):
    """Arguments and the validation of the step inputs, shared by both ops.

    A step net runs the op T times on inputs of one shape, so the full
    validation (named errors) runs only when the inputs' types or shapes
    differ from the last validated ones; then the kernel is called through
    its checked entry point, otherwise directly.
    """

    has_hidden = True

    def setup(self):
        self.forget_bias = self.args.single("forget_bias", 0.0, float)
        self.drop_states = self.args.single("drop_states", False, bool)
        self.has_lengths = reads_seq_lengths_input(self)
        self._validated = None  # signature of the inputs last validated
        self._all_valid = None  # without seq_lengths: N lengths no timestep reaches

    @property
    def first_input(self):
        """Index of cell_t_prev: 1 after hidden_t_prev, 0 in the E0-E1 form."""
        return 1 if self.has_hidden else 0

    @property
    def timestep_input(self):
        """Index of the timestep: right after gates when seq_lengths is left out."""
        return self.first_input + (3 if self.has_lengths else 2)

    def signature(self):
        """(type, shape, dtype) of every input value; None if one is no array."""
        try:
            return [(type(v), v.shape, v.dtype) for v in [blob.value for blob in self.inputs]]
        except AttributeError:
            return None

    def kernel(self, name, key):
        """The kernel to call: checked after a (re)validation, raw otherwise."""
        if key is not None and key == self._validated:
            return getattr(kernels.current(), name)
        self.validate()
        self._validated = key
        return getattr(checked, name)

    def validate(self):
        """Check the forward inputs; remember (N, D) and the state shape."""
        k = self.first_input  # index of cell_t_prev
        c_prev = self.float_input(k)
        if c_prev.ndim != 3 or c_prev.shape[0] != 1:
            raise self.shape_error(k, "(1, N, D) (cell_t_prev)")
        _, n, d = c_prev.shape
        if self.has_hidden and self.float_input(0).shape != c_prev.shape:
            raise self.shape_error(0, "%s (hidden_t_prev, like cell_t_prev)" % (c_prev.shape,))
        gates = self.float_input(k + 1)
        if gates.shape != (1, n, 4 * d):
            raise self.shape_error(k + 1, "(1, %d, %d) (4 x cell_t_prev.dim(2))" % (n, 4 * d))
        self.same_dtype(*range(k + 2))
        if self.has_lengths:
            seq_lengths = self.input(k + 2)
            if seq_lengths.dtype != np.int32 or seq_lengths.size != n:
                raise DTypeError(
                    "input %d ('%s') is %s %s; seq_lengths must be int32 "
                    "of size N = %d"
                    % (k + 2, self.input_name(k + 2), seq_lengths.dtype, seq_lengths.shape, n)
                )
        elif self._all_valid is None or self._all_valid.size != n:
            # Caffe2 passes a null seqLengths and counts every row valid; the
            # kernels get lengths no int32 timestep reaches, with t = 0.
            self._all_valid = np.full(n, np.iinfo(np.int32).max, np.int32)
        j = self.timestep_input
        timestep = self.input(j)
        if timestep.dtype != np.int32 or timestep.size < 1:
            raise DTypeError(
                "input %d ('%s') is %s %s; the timestep must be an "
                "int32 tensor (value t)" % (j, self.input_name(j), timestep.dtype, timestep.shape)
            )
        self.n, self.d, self.shape, self.dtype = n, d, c_prev.shape, c_prev.dtype

    def contiguous(self):
        """True if every input and output is C-contiguous: the 2-D views the
        kernels get are then views, which bound calls may keep."""
        return all(
            type(blob.value) is np.ndarray and blob.value.flags.c_contiguous
            for blob in self.inputs + self.outputs
        )

    def step_inputs(self):
        """2-D views ``(h_prev or None, c_prev, gates, seq_lengths)`` and t
        (without seq_lengths: every row's length out of reach, and t = 0)."""
        n, d, k = self.n, self.d, self.first_input
        values = [blob.value for blob in self.inputs[: self.timestep_input + 1]]
        h_prev = values[0].reshape(n, d) if self.has_hidden else None
        if self.has_lengths:
            seq_lengths, t = values[k + 2].reshape(n), values[k + 3].item(0)
        else:
            seq_lengths, t = self._all_valid, 0
        return h_prev, values[k].reshape(n, d), values[k + 1].reshape(n, 4 * d), seq_lengths, t


@register("LSTMUnit", inputs=(4, 5), outputs=2)
class LSTMUnit(_LSTMUnitBase):
    """hidden_t, cell_t = one LSTM step (module docstring); outputs (1, N, D)."""

    def setup(self):
        super().setup()
        self.has_hidden = len(self.inputs) == 5 or not self.has_lengths

    def run(self):
        kernel = self.kernel("lstm_unit_forward", self.signature())
        h_prev, c_prev, gates, seq_lengths, t = self.step_inputs()
        n, d = self.n, self.d
        h_out = self.outputs[0].resize(self.shape, self.dtype).reshape(n, d)
        c_out = self.outputs[1].resize(self.shape, self.dtype).reshape(n, d)
        kernel(
            h_prev, c_prev, gates, seq_lengths, t, self.forget_bias, self.drop_states, h_out, c_out
        )

    def bind(self):
        """The kernel call of run() on this run's arrays (for the RNN executor)."""
        if not self.contiguous():
            return None
        h_prev, c_prev, gates, seq_lengths, t = self.step_inputs()
        n, d = self.n, self.d
        h_out, c_out = (blob.value.reshape(n, d) for blob in self.outputs)
        impl = kernels.current()
        args = (h_prev, c_prev, gates, seq_lengths, t, self.forget_bias, self.drop_states)
        reads = [a for a in (h_prev, c_prev, gates, seq_lengths) if a is not None]
        call = BoundCall.kernel(
            impl.lstm_unit_forward,
            "lstm_unit_forward",
            args + (h_out, c_out),
            reads,
            (h_out, c_out),
            impl.releases_gil,
            c_out.size,
        )
        return [call]


@register("LSTMUnitGradient", inputs=(8, 9), outputs=(2, 3))
class LSTMUnitGradient(_LSTMUnitBase):
    """Inputs: the forward inputs, hidden_t, cell_t, hidden_t_grad, cell_t_grad.

    Outputs: (hidden_t_prev_grad,) cell_t_prev_grad, gates_grad. With
    ``sequence_lengths=0`` (era E7) the forward inputs are the four of that
    form: 8 inputs, 3 outputs.
    """

    def setup(self):
        super().setup()
        self.has_hidden = len(self.inputs) == 9 or not self.has_lengths
        if len(self.outputs) != (3 if self.has_hidden else 2):
            raise EnforceNotMet(
                "LSTMUnitGradient with %d inputs%s has %d outputs (9 inputs → 3 outputs, 8 → 2; "
                "8 with sequence_lengths=0 → 3)"
                % (
                    len(self.inputs),
                    "" if self.has_lengths else " and sequence_lengths=0",
                    len(self.outputs),
                )
            )

    @property
    def hidden_t_input(self):
        """Index of hidden_t, the first input after the forward ones."""
        return self.timestep_input + 1

    def validate(self):
        super().validate()
        first = self.hidden_t_input
        for j, role in enumerate(("hidden_t", "cell_t", "hidden_t_grad", "cell_t_grad")):
            x = self.float_input(first + j)
            if x.shape != self.shape or x.dtype != self.dtype:
                raise self.shape_error(
                    first + j, "%s %s (%s, like cell_t_prev)" % (self.dtype, self.shape, role)
                )

    def run(self):
        kernel = self.kernel("lstm_unit_backward", self.signature())
        _, c_prev, gates, seq_lengths, t = self.step_inputs()
        n, d, shape, dtype = self.n, self.d, self.shape, self.dtype
        first = self.hidden_t_input
        c, dh, dc = (self.inputs[first + j].value.reshape(n, d) for j in (1, 2, 3))
        outputs = self.outputs
        dh_prev = outputs[0].resize(shape, dtype).reshape(n, d) if self.has_hidden else None
        dc_prev = outputs[-2].resize(shape, dtype).reshape(n, d)
        dgates = outputs[-1].resize((1, n, 4 * d), dtype).reshape(n, 4 * d)
        kernel(
            c_prev,
            gates,
            seq_lengths,
            t,
            c,
            dh,
            dc,
            self.forget_bias,
            self.drop_states,
            dh_prev,
            dc_prev,
            dgates,
        )

    def bind(self):
        """The kernel call of run() on this run's arrays (for the RNN executor)."""
        if not self.contiguous():
            return None
        _, c_prev, gates, seq_lengths, t = self.step_inputs()
        n, d = self.n, self.d
        first = self.hidden_t_input
        c, dh, dc = (self.inputs[first + j].value.reshape(n, d) for j in (1, 2, 3))
        outputs = self.outputs
        dh_prev = outputs[0].value.reshape(n, d) if self.has_hidden else None
        dc_prev = outputs[-2].value.reshape(n, d)
        dgates = outputs[-1].value.reshape(n, 4 * d)
        impl = kernels.current()
        args = (c_prev, gates, seq_lengths, t, c, dh, dc, self.forget_bias, self.drop_states)
        written = [a for a in (dh_prev, dc_prev, dgates) if a is not None]
        call = BoundCall.kernel(
            impl.lstm_unit_backward,
            "lstm_unit_backward",
            args + (dh_prev, dc_prev, dgates),
            (c_prev, gates, seq_lengths, c, dh, dc),
            written,
            impl.releases_gil,
            dc_prev.size,
        )
        return [call]


@register_gradient("LSTMUnit")
class GetLSTMUnitGradient(GradientMaker):
    """LSTMUnitGradient([inputs..., hidden_t, cell_t, GO0, GO1] → [GI...]).

    Both output gradients are required (a missing one raises; rnn_cell feeds
    a ZeroGradient for an unused output). Arguments are copied, so
    forget_bias, drop_states and sequence_lengths reach the gradient op.
    Built in an era whose ``LSTMUnit`` reads ``sequence_lengths`` (E7), a
    false one gives the gradient of the 4-input form without seq_lengths
    (Caffe2 2bf8d0cd4: inputs I(0)..I(3), 3 gradients).
    """

    def get_gradient_defs(self):
        n_inputs = len(self.def_.input)
        if eras.current().optional_sequence_lengths and not seq_lengths_flag(self.def_):
            n_inputs, n_grads = 4, 3
        else:
            n_grads = 3 if n_inputs == 5 else 2
        inputs = [self.I(i) for i in range(n_inputs)]
        inputs += [self.O(0), self.O(1), self.GO(0), self.GO(1)]
        return [self.op_def("LSTMUnitGradient", inputs, [self.GI(i) for i in range(n_grads)])]


def seq_lengths_flag(op_def):
    """The ``sequence_lengths`` argument of ``op_def`` (default true), read as
    Caffe2's ``GetFlagArgument`` did: an integer field."""
    return ArgumentHelper(op_def, op_def.type).single("sequence_lengths", True, bool)


def reads_seq_lengths_input(op):
    """True unless ``op`` (an LSTMUnit or GRUUnit, forward or gradient) was
    told ``sequence_lengths=0`` in an era that reads it: E7 (Caffe2 2bf8d0cd4
    and 55a489f6d) and today's operators. Ops created for an earlier era
    ignore the argument, as Caffe2 did then."""
    if op.era is not None and not op.era.optional_sequence_lengths:
        return True
    return seq_lengths_flag(op.def_)
