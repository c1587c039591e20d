"""``AttentionCell``: a decoder cell that attends over encoder outputs each step.

States: the decoder cell's states, with its output state renamed
``<name>/hidden_t_external``, plus ``<name>/attention_weighted_encoder_context_t``
(the context ``c_t``, 1 × N × E). One step (Caffe2 ``rnn_cell.AttentionCell``,
0cdd09da6; the ordering of arXiv:1508.04025):

1. the decoder cell runs on ``input_t`` with ``c_{t-1}`` concatenated to its
   recurrent input (``extra_inputs``);
2. attention (:mod:`caffe2rnn.attention`) over the encoder outputs with the
   new hidden state gives ``c_t``;
3. the hidden state is copied to ``hidden_t_external`` (the linked state: a
   step output must have its own blob).

From E6: ``encoder_lengths`` masks padded encoder positions; ``Dot``
attention needs no weighted encoder outputs; ``SoftCoverage`` adds a third
state ``<name>/coverage_t`` (1 × N × S, the attention received so far),
started by :meth:`AttentionCell.build_initial_coverage`.

``prepare_input`` also makes, once, the two attention references:
``encoder_outputs_transposed`` (N × E × S) and ``weighted_encoder_outputs``
(an FC of the encoder outputs, unless given). The cell's output is
``[h_t, c_t]`` concatenated (``<name>/states_and_context_combination``).
"""

from .. import attention, brew, core
from ..errors import ArgumentError
from .base import RNNCell
from .lstm import LSTMCell, MILSTMCell


class AttentionCell(RNNCell):
    """Wrap ``decoder_cell`` with attention of ``attention_type``."""

    def __init__(
        self,
        encoder_output_dim,
        encoder_outputs,
        decoder_cell,
        decoder_state_dim,
        attention_type,
        weighted_encoder_outputs,
        attention_memory_optimization,
        encoder_lengths=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.attention_type_name = attention.attention_type_name(attention_type)
        #: int32 (N,) lengths of the encoder sequences: padded positions get
        #: attention weight 0 (E6)
        self.encoder_lengths = encoder_lengths
        self.coverage_weights = None
        self.attention_type = attention_type
        self.encoder_output_dim = encoder_output_dim
        self.decoder_state_dim = decoder_state_dim
        self.encoder_outputs = encoder_outputs
        self.decoder_cell = decoder_cell
        self.weighted_encoder_outputs = weighted_encoder_outputs
        self.encoder_outputs_transposed = None
        self.attention_memory_optimization = attention_memory_optimization

    def collected_recompute_blobs(self):
        return self.decoder_cell.collected_recompute_blobs() + list(self.recompute_blobs)

    @property
    def _coverage(self):
        return self.attention_type_name == "SoftCoverage"

    def _attend(self, model, hidden_t, context_t_prev, coverage_t_prev):
        """``(context_t, weights_3d, attention_blobs, [coverage_t])``."""
        common = dict(
            model=model,
            encoder_output_dim=self.encoder_output_dim,
            encoder_outputs_transposed=self.encoder_outputs_transposed,
            decoder_hidden_state_t=hidden_t,
            decoder_hidden_state_dim=self.decoder_state_dim,
            scope=self.name,
        )
        if self.encoder_lengths is not None:
            common["encoder_lengths"] = self.encoder_lengths
        kind = self.attention_type_name
        if kind == "Dot":
            return list(attention.apply_dot_attention(**common))
        common["weighted_encoder_outputs"] = self.weighted_encoder_outputs
        if kind == "SoftCoverage":
            context, weights, blobs, coverage_t = attention.apply_soft_coverage_attention(
                encoder_lengths=self.encoder_lengths,
                coverage_t_prev=coverage_t_prev,
                coverage_weights=self.coverage_weights,
                **{k: v for k, v in common.items() if k != "encoder_lengths"},
            )
            return [context, weights, blobs, coverage_t]
        if kind == "Recurrent":
            return list(
                attention.apply_recurrent_attention(
                    attention_weighted_encoder_context_t_prev=context_t_prev, **common
                )
            )
        return list(attention.apply_regular_attention(**common))

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        # states: decoder states..., context[, coverage]
        n_extra = 2 if self._coverage else 1
        decoder_prev_states = states[:-n_extra]
        context_t_prev = states[-n_extra]
        coverage_t_prev = states[-1] if self._coverage else None
        if extra_inputs is not None:
            raise NotImplementedError("AttentionCell takes no extra_inputs")
        decoder_states = self.decoder_cell._apply(
            model,
            input_t,
            seq_lengths,
            decoder_prev_states,
            timestep,
            extra_inputs=[(context_t_prev, self.encoder_output_dim)],
        )
        self.hidden_t_intermediate = self.decoder_cell._prepare_output(model, decoder_states)
        attended = self._attend(model, self.hidden_t_intermediate, context_t_prev, coverage_t_prev)
        context_t, self.attention_weights_3d, attention_blobs = attended[:3]
        if self.attention_memory_optimization:
            self.recompute_blobs.extend(attention_blobs)
        output = list(decoder_states) + [context_t] + attended[3:]
        index = self.decoder_cell.get_output_state_index()
        output[index] = model.Copy(output[index], self.scope("hidden_t_external"))
        model.net.AddExternalOutputs(*output)
        return output

    def build_initial_coverage(self, model):
        """Soft coverage (E6): the ``coverage_weights`` FC of the encoder outputs,
        and the initial coverage, ``[S]`` zeros sized at run time from
        ``Shape(encoder_outputs)`` (``<name>/initial_coverage``)."""
        if not self._coverage:
            raise ArgumentError("build_initial_coverage: attention_type is not SoftCoverage")
        self.coverage_weights = brew.fc(
            model,
            self.encoder_outputs,
            self.scope("coverage_weights"),
            dim_in=self.encoder_output_dim,
            dim_out=self.encoder_output_dim,
            axis=2,
        )
        encoder_length = model.net.Slice(
            model.net.Shape(self.encoder_outputs), starts=[0], ends=[1]
        )
        return model.net.ConstantFill(
            encoder_length, self.scope("initial_coverage"), value=0.0, input_as_shape=1
        )

    def get_attention_weights(self):
        """The last step's attention weights, N × S × 1."""
        return self.attention_weights_3d

    def prepare_input(self, model, input_blob):
        if self.encoder_outputs_transposed is None:
            self.encoder_outputs_transposed = brew.transpose(
                model,
                self.encoder_outputs,
                self.scope("encoder_outputs_transposed"),
                axes=[1, 2, 0],
            )
        if self.weighted_encoder_outputs is None and self.attention_type_name != "Dot":
            self.weighted_encoder_outputs = brew.fc(
                model,
                self.encoder_outputs,
                self.scope("weighted_encoder_outputs"),
                dim_in=self.encoder_output_dim,
                dim_out=self.encoder_output_dim,
                axis=2,
            )
        return self.decoder_cell.prepare_input(model, input_blob)

    def get_state_names(self):
        names = list(self.decoder_cell.get_state_names())
        names[self.get_output_state_index()] = self.scope("hidden_t_external")
        names.append(self.scope("attention_weighted_encoder_context_t"))
        if self._coverage:
            names.append(self.scope("coverage_t"))
        return names

    def get_output_dim(self):
        return self.decoder_state_dim + self.encoder_output_dim

    def get_output_state_index(self):
        return self.decoder_cell.get_output_state_index()

    def _combine(self, model, decoder_output, context):
        with core.NameScope(self.name or ""):
            output, _ = model.net.Concat(
                [decoder_output, context],
                [
                    "states_and_context_combination",
                    "_states_and_context_combination_concat_dims",
                ],
                axis=2,
            )
        return output

    def _prepare_output(self, model, states):
        context = states[-2] if self._coverage else states[-1]
        return self._combine(model, self.hidden_t_intermediate, context)

    def _prepare_output_sequence(self, model, state_outputs):
        n_extra = 2 if self._coverage else 1
        decoder_output = self.decoder_cell._prepare_output_sequence(
            model, state_outputs[: -2 * n_extra]
        )
        context_all = state_outputs[2 * (len(self.get_state_names()) - n_extra)]
        return self._combine(model, decoder_output, context_all)


def _decoder_with_attention(decoder_class):
    """``<Decoder>WithAttentionCell``: an AttentionCell around a ``decoder_class``
    named ``<name>/decoder``."""

    def __init__(
        self,
        encoder_output_dim,
        encoder_outputs,
        decoder_input_dim,
        decoder_state_dim,
        name,
        attention_type,
        weighted_encoder_outputs,
        forget_bias,
        lstm_memory_optimization,
        attention_memory_optimization,
        forward_only=False,
        encoder_lengths=None,
    ):
        decoder_cell = decoder_class(
            input_size=decoder_input_dim,
            hidden_size=decoder_state_dim,
            forget_bias=forget_bias,
            memory_optimization=lstm_memory_optimization,
            name=f"{name}/decoder",
            forward_only=False,
            drop_states=False,
        )
        AttentionCell.__init__(
            self,
            encoder_output_dim=encoder_output_dim,
            encoder_outputs=encoder_outputs,
            decoder_cell=decoder_cell,
            decoder_state_dim=decoder_state_dim,
            name=name,
            attention_type=attention_type,
            weighted_encoder_outputs=weighted_encoder_outputs,
            attention_memory_optimization=attention_memory_optimization,
            forward_only=forward_only,
            encoder_lengths=encoder_lengths,
        )

    return __init__


class LSTMWithAttentionCell(AttentionCell):
    """An :class:`~caffe2rnn.cells.lstm.LSTMCell` decoder with attention."""

    __init__ = _decoder_with_attention(LSTMCell)


class MILSTMWithAttentionCell(AttentionCell):
    """A :class:`~caffe2rnn.cells.lstm.MILSTMCell` decoder with attention."""

    __init__ = _decoder_with_attention(MILSTMCell)
