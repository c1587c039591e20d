"""GRUUnit / GRUUnitGradient: the element-wise end of one GRU step.

Caffe2's GRU (``gru_cell.GRUCell``, 486f549da, 2017-07) computes the reset
gate in the step net — it must multiply ``h_prev`` *before* the output gate's
FC — so this op only mixes the old state and the candidate. ``gates`` holds
three pre-activation blocks of D per batch row, **reset r, update z,
output o**; the op reads z and o (r was used upstream)::

    z = σ(x_z)    o = tanh(x_o)    h = z · h_prev + (1 − z) · o

Rows whose sequence has ended (``t >= seq_lengths[n]``) carry ``h_prev``
through, or zeros with ``drop_states``.

Inputs ``hidden_t_prev (1, N, D), gates (1, N, 3D), seq_lengths (N,) int32,
timestep`` (int32, value t) → ``hidden_t (1, N, D)``. The gradient op also
reads ``hidden_t`` and its gradient, and writes the gradients of
``hidden_t_prev`` and ``gates``; the reset block's gradient is 0 here (it
flows back through the step net's own ops).

From Caffe2 55a489f6d (2018-02-05; era E7 and today's operator)
``sequence_lengths=0`` leaves ``seq_lengths`` out: ``hidden_t_prev, gates,
timestep``, every row valid at every step (with four inputs the fourth is
not read, as in Caffe2). Without it, or in an earlier era, which did not
read the argument, the op takes exactly four inputs.

Caffe2: caffe2/operators/gru_unit_op.{h,cc}.
"""

import numpy as np

from .. import eras
from ..errors import DTypeError, EnforceNotMet
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker
from .lstm_unit import reads_seq_lengths_input, seq_lengths_flag


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class _GRUUnitBase(Operator):
    #: inputs after the forward ones (hidden_t and its gradient for the gradient op)
    extra_inputs = 0

    def setup(self):
        self.drop_states = self.args.single("drop_states", False, bool)
        self.has_lengths = reads_seq_lengths_input(self)
        forward = 4 if self.has_lengths else 3
        # Caffe2 indexed its inputs from the flag: with seq_lengths, fewer
        # than four forward inputs left the timestep's index past the end.
        if self.has_lengths and len(self.inputs) < forward + self.extra_inputs:
            raise EnforceNotMet(
                "%s takes %d inputs (%d with sequence_lengths=0, from era E7); got %d"
                % (
                    self.op_type,
                    forward + self.extra_inputs,
                    forward - 1 + self.extra_inputs,
                    len(self.inputs),
                )
            )
        self.timestep_input = forward - 1

    def validate(self):
        """Check the forward inputs; return 2-D views and the valid rows."""
        h_prev = self.float_input(0)
        if h_prev.ndim != 3 or h_prev.shape[0] != 1:
            raise self.shape_error(0, "(1, N, D) (hidden_t_prev)")
        _, n, d = h_prev.shape
        gates = self.float_input(1)
        if gates.shape != (1, n, 3 * d):
            raise self.shape_error(1, "(1, %d, %d) (3 x hidden_t_prev.dim(2))" % (n, 3 * d))
        self.same_dtype(0, 1)
        if self.has_lengths:
            seq_lengths = self.input(2)
            if seq_lengths.dtype != np.int32 or seq_lengths.size != n:
                raise DTypeError(
                    "input 2 ('%s') is %s %s; seq_lengths must be int32 of size N = %d"
                    % (self.input_name(2), seq_lengths.dtype, seq_lengths.shape, n)
                )
        j = self.timestep_input
        timestep = self.input(j)
        if timestep.dtype != np.int32 or timestep.size < 1:
            raise DTypeError(
                "input %d ('%s') is %s %s; the timestep must be an int32 tensor (value t)"
                % (j, self.input_name(j), timestep.dtype, timestep.shape)
            )
        if self.has_lengths:
            t = int(timestep.reshape(-1)[0])
            valid = (t < seq_lengths.reshape(n)).reshape(n, 1)
        else:
            valid = np.ones((n, 1), bool)  # Caffe2: a null seqLengths, every row valid
        return h_prev.reshape(n, d), gates.reshape(n, 3 * d), valid, d

    @staticmethod
    def gate_values(gates, d):
        z = _sigmoid(gates[:, d : 2 * d])
        o = np.tanh(gates[:, 2 * d :])
        return z, o


@register("GRUUnit", inputs=(3, 4), outputs=1)
class GRUUnit(_GRUUnitBase):
    """hidden_t = one GRU state update (module docstring)."""

    def run(self):
        h_prev, gates, valid, d = self.validate()
        z, o = self.gate_values(gates, d)
        h = z * h_prev + (1 - z) * o
        finished = np.zeros_like(h_prev) if self.drop_states else h_prev
        shape = self.inputs[0].value.shape
        out = self.output(0, shape, h_prev.dtype)
        out[...] = np.where(valid, h, finished).reshape(shape)


@register("GRUUnitGradient", inputs=(5, 6), outputs=2)
class GRUUnitGradient(_GRUUnitBase):
    """``[hidden_t_prev, gates, seq_lengths, timestep, hidden_t, hidden_t_grad]
    → [hidden_t_prev_grad, gates_grad]`` (without ``seq_lengths`` when
    ``sequence_lengths=0``)."""

    extra_inputs = 2

    def run(self):
        h_prev, gates, valid, d = self.validate()
        shape = self.inputs[0].value.shape
        first = self.timestep_input + 1  # hidden_t
        for j, role in ((first, "hidden_t"), (first + 1, "hidden_t_grad")):
            x = self.float_input(j)
            if x.shape != shape or x.dtype != h_prev.dtype:
                raise self.shape_error(
                    j, "%s %s (%s, like hidden_t_prev)" % (h_prev.dtype, shape, role)
                )
        dh = self.inputs[first + 1].value.reshape(h_prev.shape)
        z, o = self.gate_values(gates, d)
        # Everything is computed before any output is written (outputs may
        # share memory with dh in a step net).
        dgates = np.zeros_like(gates)
        dgates[:, d : 2 * d] = np.where(valid, dh * (h_prev - o) * z * (1 - z), 0)
        dgates[:, 2 * d :] = np.where(valid, dh * (1 - z) * (1 - o * o), 0)
        through = np.zeros_like(dh) if self.drop_states else dh
        dh_prev = np.where(valid, dh * z, through)
        gates_shape = self.inputs[1].value.shape
        self.output(0, shape, h_prev.dtype)[...] = dh_prev.reshape(shape)
        self.output(1, gates_shape, h_prev.dtype)[...] = dgates.reshape(gates_shape)


@register_gradient("GRUUnit")
class GetGRUUnitGradient(GradientMaker):
    """GRUUnitGradient([I0..I3, O0, GO0] → [GI0, GI1]); arguments copied.

    Built in an era whose ``GRUUnit`` reads ``sequence_lengths`` (E7), a false
    one gives ``[I0..I2, O0, GO0]`` (Caffe2 55a489f6d)."""

    def get_gradient_defs(self):
        forward = 4
        if eras.current().optional_sequence_lengths and not seq_lengths_flag(self.def_):
            forward = 3
        return [
            self.op_def(
                "GRUUnitGradient",
                [self.I(i) for i in range(forward)] + [self.O(0), self.GO(0)],
                [self.GI(0), self.GI(1)],
            )
        ]
