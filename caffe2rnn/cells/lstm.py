"""LSTM cells: ``LSTMCell`` and the multiplicative-integration ``MILSTMCell``.

One LSTM step (Caffe2 ``rnn_cell.LSTMCell``, 0cdd09da6)::

    i2h     = FC(x)                      # prepare_input: all T steps at once
    gates_t = FC(h_{t-1}) + i2h_t        # 1 × N × 4H, gate order i, f, o, g
    h_t, c_t = LSTMUnit(h_{t-1}, c_{t-1}, gates_t, seq_lengths, timestep)

``LSTMUnit`` holds no weights; ``forget_bias`` is added to the forget gate
inside it, and ``drop_states`` zeroes (instead of carrying) the states of
sequences that have ended. ``extra_inputs`` (attention's context) are
concatenated to ``h_{t-1}`` before the recurrent FC.

In era E7 (Caffe2 085ce4663, 2018-02) ``LSTMCell`` is written the new way
(:mod:`caffe2rnn.cells.base`): its step runs inside ``NameScope(name)``, its
``LSTMUnit`` writes ``<name>/hidden_state`` and ``<name>/cell_state`` (the
states keep their names ``hidden_t``, ``cell_t``: the step's outputs are
linked to them), and ``seq_lengths=None`` (2bf8d0cd4) builds the
``LSTMUnit`` without lengths (``sequence_lengths=0``). The MI and
layer-normalised cells kept the old ``_apply``, and their 5-input
``LSTMUnit``.
"""

from .. import brew, eras
from ..modeling.initializers import Initializer
from .base import RNNCell
from .initializers import LSTMInitializer


class LSTMCell(RNNCell):
    """A standard LSTM layer's step. States: ``(<name>/hidden_t, <name>/cell_t)``.

    ``memory_optimization`` recomputes ``gates_t`` in the backward step instead
    of storing it for every timestep (same gradients, less memory).
    """

    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        initializer=None,
        **kwargs,
    ):
        super().__init__(initializer=initializer or LSTMInitializer(hidden_size), **kwargs)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.forget_bias = float(forget_bias)
        self.memory_optimization = memory_optimization
        self.drop_states = drop_states

    def _recurrent_input(self, model, hidden_t_prev, extra_inputs):
        """``h_{t-1}``, or ``[h_{t-1}, extra...]`` concatenated on the last axis."""
        if not extra_inputs:
            return hidden_t_prev, self.hidden_size
        blobs, sizes = zip(*extra_inputs)
        concatenated, _ = model.net.Concat(
            [hidden_t_prev] + list(blobs),
            [
                self.scope("gates_concatenated_input_t"),
                self.scope("_gates_concatenated_input_t_concat_dims"),
            ],
            axis=2,
        )
        return concatenated, self.hidden_size + sum(sizes)

    def _lstm_unit(self, model, hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep, outs):
        hidden_t, cell_t = model.net.LSTMUnit(
            [hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep],
            outs,
            forget_bias=self.forget_bias,
            drop_states=self.drop_states,
        )
        if self.memory_optimization:
            self.recompute_blobs = [gates_t]
        return hidden_t, cell_t

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        if eras.current().cells_scope_their_ops:  # E7: scoped apply_override
            return super()._apply(model, input_t, seq_lengths, states, timestep, extra_inputs)
        hidden_t_prev, cell_t_prev = states
        fc_input, fc_input_dim = self._recurrent_input(model, hidden_t_prev, extra_inputs)
        gates_t = self.gates_fc(model, fc_input, "gates_t", fc_input_dim, 4)
        model.net.Sum([gates_t, input_t], gates_t)  # in place: + the projected input
        hidden_t, cell_t = self._lstm_unit(
            model,
            hidden_t_prev,
            cell_t_prev,
            gates_t,
            seq_lengths,
            timestep,
            list(self.get_state_names()),
        )
        model.net.AddExternalOutputs(hidden_t, cell_t)
        return hidden_t, cell_t

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        """The E7 step, inside ``NameScope(name)``: plain names are scoped."""
        hidden_t_prev, cell_t_prev = states
        fc_input, fc_input_dim = hidden_t_prev, self.hidden_size
        if extra_inputs is not None:
            blobs, sizes = zip(*extra_inputs)
            # Caffe2's brew.concat of 2017-09 on (ae193a1db): axis given, no order
            fc_input, _ = model.net.Concat(
                [hidden_t_prev] + list(blobs),
                ["gates_concatenated_input_t", "_gates_concatenated_input_t_concat_dims"],
                axis=2,
            )
            fc_input_dim += sum(sizes)
        gates_t = brew.fc(
            model, fc_input, "gates_t", dim_in=fc_input_dim, dim_out=4 * self.hidden_size, axis=2
        )
        brew.sum(model, [gates_t, input_t], gates_t)
        unit_inputs = [hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep]
        if seq_lengths is None:  # 2bf8d0cd4: every sequence runs all T steps
            del unit_inputs[3]
        hidden_t, cell_t = model.net.LSTMUnit(
            unit_inputs,
            ["hidden_state", "cell_state"],
            forget_bias=self.forget_bias,
            drop_states=self.drop_states,
            sequence_lengths=seq_lengths is not None,
        )
        model.net.AddExternalOutputs(hidden_t, cell_t)
        if self.memory_optimization:
            self.recompute_blobs = [gates_t]
        return hidden_t, cell_t

    def get_input_params(self):
        return {"weights": self.scope("i2h") + "_w", "biases": self.scope("i2h") + "_b"}

    def get_recurrent_params(self):
        return {"weights": self.scope("gates_t") + "_w", "biases": self.scope("gates_t") + "_b"}

    def prepare_input(self, model, input_blob):
        return self.gates_fc(model, input_blob, "i2h", self.input_size, 4)

    def get_state_names_override(self):
        return ["hidden_t", "cell_t"]

    def get_state_names(self):
        if eras.current().cells_scope_their_ops:  # E7: the override's names, scoped (a list)
            return super().get_state_names()
        return (self.scope("hidden_t"), self.scope("cell_t"))

    def get_output_dim(self):
        return self.hidden_size


class MILSTMCell(LSTMCell):
    """Multiplicative-integration LSTM (Wu et al., arXiv:1606.06630).

    With ``x = i2h_t`` and ``u = FC(h_{t-1})`` (``prev_t``), the gates are
    ``α ⊙ x ⊙ u + β_h ⊙ u + β_i ⊙ x + b`` instead of ``x + u``; α, β_h, β_i
    (``alpha``, ``beta1``, ``beta2``, initialised to 1) and ``b`` (0) are
    4H vectors. Caffe2 computes it as ``(α x + β_h) ⊙ u + (β_i x + b)`` with two
    ``ElementwiseLinear`` ops. The hidden state is
    ``<name>/hidden_t_intermediate``.

    The four vectors are made with ``create_param`` (Caffe2 built them with
    bare fill ops until E6), so a static unroll shares them too.
    """

    def _mi_param(self, model, name, value):
        return model.create_param(
            param_name=self.scope(name),
            shape=[4 * self.hidden_size],
            initializer=Initializer("ConstantFill", value=value),
        )

    def _normalize_gates(self, model, gates_t):
        """The gates as LSTMUnit gets them (:class:`LayerNormMILSTMCell` normalises)."""
        return gates_t

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev, cell_t_prev = states
        fc_input, fc_input_dim = self._recurrent_input(model, hidden_t_prev, extra_inputs)
        prev_t = self.gates_fc(model, fc_input, "prev_t", fc_input_dim, 4)  # 1 × N × 4H
        alpha = self._mi_param(model, "alpha", 1.0)
        beta_h = self._mi_param(model, "beta1", 1.0)
        beta_i = self._mi_param(model, "beta2", 1.0)
        b = self._mi_param(model, "b", 0.0)
        alpha_x_plus_beta_h = model.net.ElementwiseLinear(
            [input_t, alpha, beta_h], self.scope("alpha_by_input_t_plus_beta_h"), axis=2
        )
        product = model.net.Mul(
            [alpha_x_plus_beta_h, prev_t], self.scope("alpha_by_input_t_plus_beta_h_by_prev_t")
        )
        beta_i_x_plus_b = model.net.ElementwiseLinear(
            [input_t, beta_i, b], self.scope("beta_i_by_input_t_plus_b"), axis=2
        )
        gates_t = model.net.Sum([product, beta_i_x_plus_b], self.scope("gates_t"))
        gates_t = self._normalize_gates(model, gates_t)
        hidden_t, cell_t = self._lstm_unit(
            model,
            hidden_t_prev,
            cell_t_prev,
            gates_t,
            seq_lengths,
            timestep,
            [self.scope("hidden_t_intermediate"), self.scope("cell_t")],
        )
        model.net.AddExternalOutputs(cell_t, hidden_t)
        return hidden_t, cell_t


class LayerNormLSTMCell(LSTMCell):
    """An LSTM step with layer normalisation of the gates (era E6, 2017-09).

    ``gates_t = FC(h_{t-1}) + i2h_t`` is normalised over its 4H units by
    ``brew.layer_norm`` (``<name>/gates_t_norm``: LayerNorm, then the learned
    ``gates_t_norm_scale``/``_bias``) before ``LSTMUnit`` (Ba et al.,
    arXiv:1607.06450, applied to the summed pre-activations as Caffe2 did).
    """

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev, cell_t_prev = states
        fc_input, fc_input_dim = self._recurrent_input(model, hidden_t_prev, extra_inputs)
        gates_t = self.gates_fc(model, fc_input, "gates_t", fc_input_dim, 4)
        brew.sum(model, [gates_t, input_t], gates_t)
        gates_t, _, _ = brew.layer_norm(
            model,
            self.scope("gates_t"),
            self.scope("gates_t_norm"),
            dim_in=4 * self.hidden_size,
            axis=-1,
        )
        hidden_t, cell_t = self._lstm_unit(
            model,
            hidden_t_prev,
            cell_t_prev,
            gates_t,
            seq_lengths,
            timestep,
            list(self.get_state_names()),
        )
        model.net.AddExternalOutputs(hidden_t, cell_t)
        return hidden_t, cell_t

    def get_state_names(self):
        # Caffe2's LayerNormLSTMCell defined its own (a tuple) in every era
        return (self.scope("hidden_t"), self.scope("cell_t"))


class LayerNormMILSTMCell(MILSTMCell):
    """An MILSTM step whose gates are layer-normalised (era E7; Caffe2
    d37199548, 2017-12-14, the commit "LayerConfigMILSTMCell").

    The MI gates ``α ⊙ x ⊙ u + β_h ⊙ u + β_i ⊙ x + b`` (``<name>/gates_t``,
    :class:`MILSTMCell`) go through ``brew.layer_norm`` (``<name>/gates_t_norm``
    with its learned ``_scale``/``_bias``, normalising over the 4H units)
    before ``LSTMUnit``, as :class:`LayerNormLSTMCell` does for the plain
    LSTM (Ba et al., arXiv:1607.06450).
    """

    def _normalize_gates(self, model, gates_t):
        gates_t, _, _ = brew.layer_norm(
            model,
            self.scope("gates_t"),
            self.scope("gates_t_norm"),
            dim_in=4 * self.hidden_size,
            axis=-1,
        )
        return gates_t
