"""The GRU cell (Caffe2 ``gru_cell.GRUCell``, 486f549da, 2017-07; era E6).

One step, in Caffe2's arrangement (Cho et al., arXiv:1406.1078): the input
projection to 3H is computed for all timesteps outside the recurrence
(``prepare_input``); the step net adds the reset gate's FC of ``h_{t-1}``,
applies the reset before the candidate's FC, and ``GRUUnit``
(:mod:`caffe2rnn.operators.gru_unit`) finishes the update. The module API
(``gru_cell.GRUCell``, ``gru_cell.GRU``, available from era E6) is
:mod:`caffe2rnn.gru_cell`.

Era E7 (policy ``gru_linear_before_reset``: Caffe2 7d4c7690d, 2018-01-08, and
its fix 3a981e1ac) adds ``linear_before_reset``: the reset gate then
multiplies the candidate's FC output, ``r ⊙ (W_o h_{t-1} + b_o)``, instead of
its input, ``W_o (r ⊙ h_{t-1}) + b_o`` — cuDNN's and PyTorch's GRU — and the
candidate's sum is ``<name>/output_gate_t_summed`` (before: written in
place into ``output_gate_t``). Era E7 also takes ``seq_lengths=None``
(policy ``optional_sequence_lengths``, 55a489f6d): ``GRUUnit`` without lengths.
"""

from .. import brew, eras
from ..errors import ArgumentTypeError
from .base import RNNCell


class GRUCell(RNNCell):
    """A GRU layer's step. State: ``(<name>/hidden_t,)``."""

    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        linear_before_reset=None,
        **kwargs,
    ):
        if linear_before_reset is not None and not eras.current().gru_linear_before_reset:
            raise ArgumentTypeError(
                "GRUCell: linear_before_reset arrived in Caffe2 7d4c7690d (2018-01-08, era E7); "
                "the era in force is %s: use eras.use('E7')" % eras.current().name
            )
        super().__init__(**kwargs)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.forget_bias = float(forget_bias)  # unused, as in Caffe2
        self.memory_optimization = memory_optimization
        self.drop_states = drop_states
        self.linear_before_reset = bool(linear_before_reset)

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
        if self.linear_before_reset:  # E7: r ⊙ FC(h_{t-1}), cuDNN's candidate
            output_gate_fc = self._fc(model, hidden_t_prev, "output_gate_t")
            output_gate_t = model.net.Mul(
                [reset_gate_t_sigmoid, output_gate_fc], self.scope("output_gate_t_mul")
            )
        else:
            modified_hidden_t_prev = model.net.Mul(
                [reset_gate_t_sigmoid, hidden_t_prev], self.scope("modified_hidden_t_prev")
            )
            output_gate_t = self._fc(model, modified_hidden_t_prev, "output_gate_t")
        update_gate_t = model.net.Sum([update_gate_t, input_t_update], self.scope("update_gate_t"))
        era = eras.current()
        summed = "output_gate_t_summed" if era.gru_linear_before_reset else "output_gate_t"
        output_gate_t = model.net.Sum([output_gate_t, input_t_output], self.scope(summed))
        gates_t, _ = model.net.Concat(
            [reset_gate_t, update_gate_t, output_gate_t],
            [self.scope("gates_t"), self.scope("_gates_t_concat_dims")],
            axis=2,
        )
        unit_inputs = [hidden_t_prev, gates_t, seq_lengths, timestep]
        unit_args = {}
        if era.optional_sequence_lengths:  # 55a489f6d: the argument, always given
            unit_args["sequence_lengths"] = seq_lengths is not None
            if seq_lengths is None:
                del unit_inputs[2]
        hidden_t = model.net.GRUUnit(
            unit_inputs,
            list(self.get_state_names()),
            forget_bias=self.forget_bias,
            drop_states=self.drop_states,
            **unit_args,
        )
        model.net.AddExternalOutputs(hidden_t)
        if self.memory_optimization:
            self.recompute_blobs = [gates_t]
        return (hidden_t,)

    def prepare_input(self, model, input_blob):
        return self.gates_fc(model, input_blob, "i2h", self.input_size, 3)

    def get_state_names(self):
        return (self.scope("hidden_t"),)

    def get_output_dim(self):
        return self.hidden_size
