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

Two input forms, chosen by the number of inputs (Caffe2's
``lstm_unit_op.h``: 4 inputs until 2017-02, 5 after):

* 5 inputs (from 2017-02, eras E2+): ``hidden_t_prev (1, N, D), cell_t_prev
  (1, N, D), gates (1, N, 4D), seq_lengths (N,) int32, timestep`` (int32, value
  t) → ``hidden_t, cell_t``;
* 4 inputs (eras E0–E1): no ``hidden_t_prev``; finished rows get ``h = 0``.

The maths (σ, tanh = 2σ(2x) − 1 in the input dtype, as Caffe2) is the
kernel pair ``lstm_unit_forward`` / ``lstm_unit_backward`` of
:mod:`caffe2rnn.kernels.lstm_unit`, compiled in ``_ext/lstm_unit.pyx``: it is
the hottest op of every LSTM (once per timestep each way), so one call does
the whole step. The ops validate their inputs (and remember the shapes they
validated, so a step net pays for it once) and call the checked kernels.

Caffe2: caffe2/operators/lstm_unit_op.{h,cc}.
"""

import numpy as np

from .. import kernels
from ..errors import DTypeError, EnforceNotMet
from ..kernels import checked
from ..kernels.checked import lstm_unit_backward, lstm_unit_forward  # noqa: F401
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
        self._validated = None  # signature of the inputs last validated

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
        k = 1 if self.has_hidden else 0  # index of cell_t_prev
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
        seq_lengths = self.input(k + 2)
        if seq_lengths.dtype != np.int32 or seq_lengths.size != n:
            raise DTypeError(
                "input %d ('%s') is %s %s; seq_lengths must be int32 "
                "of size N = %d"
                % (k + 2, self.input_name(k + 2), seq_lengths.dtype, seq_lengths.shape, n)
            )
        timestep = self.input(k + 3)
        if timestep.dtype != np.int32 or timestep.size < 1:
            raise DTypeError(
                "input %d ('%s') is %s %s; the timestep must be an "
                "int32 tensor (value t)"
                % (k + 3, self.input_name(k + 3), timestep.dtype, timestep.shape)
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
        """2-D views ``(h_prev or None, c_prev, gates, seq_lengths)`` and t."""
        n, d, k = self.n, self.d, 1 if self.has_hidden else 0
        values = [blob.value for blob in self.inputs[: k + 4]]
        h_prev = values[0].reshape(n, d) if self.has_hidden else None
        return (
            h_prev,
            values[k].reshape(n, d),
            values[k + 1].reshape(n, 4 * d),
            values[k + 2].reshape(n),
            values[k + 3].item(0),
        )


@register("LSTMUnit", inputs=(4, 5), outputs=2)
class LSTMUnit(_LSTMUnitBase):
    """hidden_t, cell_t = one LSTM step (module docstring); outputs (1, N, D)."""

    def setup(self):
        super().setup()
        self.has_hidden = len(self.inputs) == 5

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

    Outputs: (hidden_t_prev_grad,) cell_t_prev_grad, gates_grad.
    """

    def setup(self):
        super().setup()
        self.has_hidden = len(self.inputs) == 9
        if len(self.outputs) != (3 if self.has_hidden else 2):
            raise EnforceNotMet(
                "LSTMUnitGradient with %d inputs has %d outputs "
                "(9 inputs → 3 outputs, 8 → 2)" % (len(self.inputs), len(self.outputs))
            )

    def validate(self):
        super().validate()
        first = 5 if self.has_hidden else 4  # index of hidden_t
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
        first = 5 if self.has_hidden else 4  # index of hidden_t
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
        first = 5 if self.has_hidden else 4  # index of hidden_t
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
    forget_bias and drop_states reach the gradient op.
    """

    def get_gradient_defs(self):
        n_inputs = len(self.def_.input)
        inputs = [self.I(i) for i in range(n_inputs)]
        inputs += [self.O(0), self.O(1), self.GO(0), self.GO(1)]
        n_grads = 3 if n_inputs == 5 else 2
        return [self.op_def("LSTMUnitGradient", inputs, [self.GI(i) for i in range(n_grads)])]
