"""LSTM cells: ``LSTMCell`` and the multiplicative-integration ``MILSTMCell``.

One LSTM step (Caffe2 ``rnn_cell.LSTMCell``, 0cdd09da6)::

    i2h     = FC(x)                      # prepare_input: all T steps at once
    gates_t = FC(h_{t-1}) + i2h_t        # 1 × N × 4H, gate order i, f, o, g
    h_t, c_t = LSTMUnit(h_{t-1}, c_{t-1}, gates_t, seq_lengths, timestep)

``LSTMUnit`` holds no weights; ``forget_bias`` is added to the forget gate
inside it, and ``drop_states`` zeroes (instead of carrying) the states of
sequences that have ended. ``extra_inputs`` (attention's context) are
concatenated to ``h_{t-1}`` before the recurrent FC.
"""

from .. import brew
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

    def get_input_params(self):
        return {"weights": self.scope("i2h") + "_w", "biases": self.scope("i2h") + "_b"}

    def get_recurrent_params(self):
        return {"weights": self.scope("gates_t") + "_w", "biases": self.scope("gates_t") + "_b"}

    def prepare_input(self, model, input_blob):
        return self.gates_fc(model, input_blob, "i2h", self.input_size, 4)

    def get_state_names(self):
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
