"""``caffe2.python.gru_cell``: the GRU cell and layer (Caffe2 486f549da, 2017-07; era E6).

One GRU step (Cho et al., arXiv:1406.1078, in Caffe2's arrangement)::

    x_r, x_z, x_o = Split(i2h_t)                        # prepare_input: FC to 3H
    r   = σ(x_r + FC_r(h_{t-1}))                        # reset gate, in the step net
    u_o = x_o + FC_o(r ⊙ h_{t-1})                       # candidate pre-activation
    u_z = x_z + FC_z(h_{t-1})
    h_t = GRUUnit(h_{t-1}, [r, u_z, u_o], seq_lengths, timestep)
        = σ(u_z) ⊙ h_{t-1} + (1 − σ(u_z)) ⊙ tanh(u_o)

The reset gate must act *before* the candidate's FC, so it lives in the step
net; ``GRUUnit`` (:mod:`caffe2rnn.operators.gru_unit`) does the rest. One
state, ``<name>/hidden_t``; ``GRU(...)`` returns ``(hidden_all, hidden_last)``
per layer and needs explicit ``initial_states`` (one blob per layer).
``forget_bias`` is accepted and ignored, as in Caffe2.

``GRUCell`` and ``GRU`` exist from era E6 on (``with eras.use("E6")``).
"""

import functools

from . import brew, eras
from .cells.base import RNNCell
from .cells.layers import _LSTM


class _GRUCell(RNNCell):
    """A GRU layer's step. State: ``(<name>/hidden_t,)``."""

    def __init__(
        self, input_size, hidden_size, forget_bias, memory_optimization, drop_states=False, **kwargs
    ):
        super().__init__(**kwargs)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.forget_bias = float(forget_bias)  # unused, as in Caffe2
        self.memory_optimization = memory_optimization
        self.drop_states = drop_states

    def _fc(self, model, blob, name):
        return brew.fc(
            model,
            blob,
            self.scope(name),
            dim_in=self.hidden_size,
            dim_out=self.hidden_size,
            axis=2,
        )

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev = states[0]  # as Caffe2: further states are not read
        if extra_inputs:
            raise NotImplementedError("GRUCell takes no extra_inputs")
        input_t_reset, input_t_update, input_t_output = model.net.Split(
            [input_t],
            [
                self.scope("input_t_reset"),
                self.scope("input_t_update"),
                self.scope("input_t_output"),
            ],
            axis=2,
        )
        reset_gate_t = self._fc(model, hidden_t_prev, "reset_gate_t")
        update_gate_t = self._fc(model, hidden_t_prev, "update_gate_t")
        reset_gate_t = model.net.Sum([reset_gate_t, input_t_reset], self.scope("reset_gate_t"))
        reset_gate_t_sigmoid = model.net.Sigmoid(reset_gate_t, self.scope("reset_gate_t_sigmoid"))
        modified_hidden_t_prev = model.net.Mul(
            [reset_gate_t_sigmoid, hidden_t_prev], self.scope("modified_hidden_t_prev")
        )
        output_gate_t = self._fc(model, modified_hidden_t_prev, "output_gate_t")
        update_gate_t = model.net.Sum([update_gate_t, input_t_update], self.scope("update_gate_t"))
        output_gate_t = model.net.Sum([output_gate_t, input_t_output], self.scope("output_gate_t"))
        gates_t, _ = model.net.Concat(
            [reset_gate_t, update_gate_t, output_gate_t],
            [self.scope("gates_t"), self.scope("_gates_t_concat_dims")],
            axis=2,
        )
        hidden_t = model.net.GRUUnit(
            [hidden_t_prev, gates_t, seq_lengths, timestep],
            list(self.get_state_names()),
            forget_bias=self.forget_bias,
            drop_states=self.drop_states,
        )
        model.net.AddExternalOutputs(hidden_t)
        if self.memory_optimization:
            self.recompute_blobs = [gates_t]
        return (hidden_t,)

    def prepare_input(self, model, input_blob):
        return brew.fc(
            model,
            input_blob,
            self.scope("i2h"),
            dim_in=self.input_size,
            dim_out=3 * self.hidden_size,
            axis=2,
        )

    def get_state_names(self):
        return (self.scope("hidden_t"),)

    def get_output_dim(self):
        return self.hidden_size


_GRU = functools.partial(_LSTM, _GRUCell)
_GRU.__doc__ = """``GRU(model, input_blob, seq_lengths, initial_states, dim_in, dim_out,
scope, ...)``: GRU layers with the options of ``rnn_cell.LSTM``; outputs
``(hidden_all, hidden_last)`` (per layer unless ``return_last_layer_only``)."""

_ERA_NAMES = {"GRUCell": _GRUCell, "GRU": _GRU}


def __getattr__(name):
    if name in _ERA_NAMES:
        if eras.current().late_2017_cells:
            return _ERA_NAMES[name]
        raise AttributeError(
            "gru_cell.%s arrived in Caffe2 486f549da (2017-07-10, era E6); the era in force "
            "is %s: use eras.use('E6')" % (name, eras.current().name)
        )
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
