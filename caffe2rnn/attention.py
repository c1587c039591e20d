"""``caffe2.python.attention``: additive attention inside a decoder's step net.

With encoder outputs ``s_j`` (S × N × E) and the decoder state ``h_t``
(1 × N × H), one step computes (Bahdanau et al., arXiv:1409.0473):

* regular: ``e_tj = v · tanh(W_e s_j + W_h h_t)``;
* recurrent (arXiv:1601.03317 §4.1): ``e_tj = v · tanh(W_e s_j + W_h h_t +
  W_c c_{t-1})``, feeding the previous context ``c_{t-1}`` back;
* then ``α_t = softmax_j(e_tj)`` and the context ``c_t = Σ_j α_tj s_j``
  (1 × N × E).

``W_e s_j`` (``weighted_encoder_outputs``) is computed once, outside the
recurrence, and enters the step net as a reference. The ``Add`` ops
broadcast an N × E term over the S encoder positions (``broadcast=1``).

Two graphs of the same formulas, chosen by the era's policy
``attention_graph`` (:mod:`caffe2rnn.eras`):

* **"v_vector"** (until 2017-05; eras E0–E4, and what
  :func:`caffe2rnn.recurrent.LSTMWithAttention`, the 2017-04 module, always
  builds): ``v`` is the parameter ``attention_v`` (1 × E, XavierFill) used as
  an FC weight with the bias ``attention_zeros``; ``Softmax`` over N × S, then
  ``ExpandDims`` to ``attention_weights_3d`` (N × S × 1); every sum is a
  broadcast ``Add``.
* **"fc_logits"** (2017-06, 0cdd09da6; eras E5 to E7): ``brew.fc`` to one unit
  with a frozen bias (``attention_logits_w``/``_b``), transposed to N × S × 1
  and soft-maxed along axis 1; the recurrent sum adds its two N × E terms
  first.

From faaafeccd (2017-04-11; era E4 on) the functions return ``(context,
attention_weights_3d, attention_blobs)``: ``attention_blobs`` are the large
S × N × E blobs a step may recompute in the backward pass instead of storing
(``attention_memory_optimization``); before, ``(context,
attention_weights_3d)`` (policy ``attention_returns_blobs``).

Era E6 (2017-09 on) adds ``AttentionType.Dot`` (:func:`apply_dot_attention`,
``e_tj = s_j · h_t``) and ``AttentionType.SoftCoverage``
(:func:`apply_soft_coverage_attention`, the attention received so far feeds
the match), and ``encoder_lengths``: logits of padded encoder positions are
masked to −∞ (``SequenceMask``) before the softmax.
"""

from . import brew, eras
from .errors import ArgumentError
from .recurrent_stages import scoped_name


class _AttentionTypeMeta(type):
    """``AttentionType.Dot``/``SoftCoverage`` exist from era E6 on (2017-09)."""

    def __getattr__(cls, name):
        if name in _LATE_TYPES:
            if eras.current().late_2017_cells:
                return _LATE_TYPES[name]
            raise AttributeError(
                "AttentionType.%s arrived in Caffe2 after 2017-06 (era E6); the era in "
                "force is %s: use eras.use('E6')" % (name, eras.current().name)
            )
        raise AttributeError("type object 'AttentionType' has no attribute %r" % name)


_LATE_TYPES = {"Dot": 2, "SoftCoverage": 3}


class AttentionType(metaclass=_AttentionTypeMeta):
    """Regular (0) and Recurrent (1); from E6 also Dot (2) and SoftCoverage (3)."""

    Regular, Recurrent = tuple(range(2))


def attention_type_name(attention_type):
    """``'Regular'``... for an :class:`AttentionType` value of the era in force;
    an :class:`~caffe2rnn.errors.ArgumentError` naming the argument otherwise."""
    names = {0: "Regular", 1: "Recurrent"}
    if eras.current().late_2017_cells:
        names.update({v: k for k, v in _LATE_TYPES.items()})
    # Caffe2's cells asserted ``attention_type in [...]``: any equal value
    # (True, 1.0, numpy integers) was accepted.
    if attention_type not in names:
        raise ArgumentError(
            "attention_type=%r is not an AttentionType of era %s; expected one of %s"
            % (
                attention_type,
                eras.current().name,
                ", ".join("AttentionType.%s (%d)" % (n, v) for v, n in sorted(names.items())),
            )
        )
    return names[attention_type]


#: ``s(scope, name)`` → ``<scope>/<name>`` (Caffe2's name in this module).
s = scoped_name


def _calc_weighted_context(
    model, encoder_outputs_transposed, encoder_output_dim, attention_weights_3d, scope
):
    """``c_t = Σ_j α_tj s_j`` as a batched (E × S)·(S × 1) product → 1 × N × E."""
    context = model.net.BatchMatMul(
        [encoder_outputs_transposed, attention_weights_3d],
        s(scope, "attention_weighted_encoder_context"),
    )  # N × E × 1
    context, _ = model.net.Reshape(
        context,
        [context, s(scope, "attention_weighted_encoder_context_old_shape")],
        shape=[1, -1, encoder_output_dim],
    )  # in place → 1 × N × E
    return context


def _attention_weights(model, logits, scope, v_row, encoder_lengths=None):
    """``α_t``, N × S × 1: softmax over the encoder positions.

    With ``encoder_lengths`` (E6) the logits past each encoder sequence's
    length become −∞ first (``SequenceMask``), so those positions get weight 0.
    """
    if encoder_lengths is not None:
        logits = model.net.SequenceMask(
            [logits, encoder_lengths], ["masked_attention_logits"], mode="sequence"
        )
    if v_row:
        weights = model.Softmax(logits, s(scope, "attention_weights"), engine="CUDNN")  # N × S
        return model.net.ExpandDims(weights, s(scope, "attention_weights_3d"), dims=[2])
    return brew.softmax(model, logits, s(scope, "attention_weights_3d"), engine="CUDNN", axis=1)


def _attention_logits(model, summed, encoder_output_dim, scope, v_row):
    """``e_tj = v · tanh(sum_j)``, transposed so the batch comes first."""
    summed = model.net.Tanh(summed, summed)  # in place: S × N × E
    if v_row:
        attention_v = model.param_init_net.XavierFill(
            [], s(scope, "attention_v"), shape=[1, encoder_output_dim]
        )
        model.add_param(attention_v)
        attention_zeros = model.param_init_net.ConstantFill(
            [], s(scope, "attention_zeros"), value=0.0, shape=[1]
        )
        logits = model.net.FC(
            [summed, attention_v, attention_zeros], [s(scope, "attention_logits")], axis=2
        )  # S × N × 1
        logits = model.net.Squeeze([logits], [logits], dims=[2])  # S × N
        return model.Transpose(logits, s(scope, "attention_logits_transposed"), axes=[1, 0])
    logits = brew.fc(
        model,
        summed,
        s(scope, "attention_logits"),
        dim_in=encoder_output_dim,
        dim_out=1,
        axis=2,
        freeze_bias=True,
    )  # S × N × 1
    return brew.transpose(
        model, logits, s(scope, "attention_logits_transposed"), axes=[1, 0, 2]
    )  # N × S × 1


def _apply_fc_weight_for_sum_match(model, input, dim_in, dim_out, scope, name):
    """``W x`` for one timestep's 1 × N × dim_in blob, squeezed to N × dim_out."""
    output = brew.fc(model, input, s(scope, name), dim_in=dim_in, dim_out=dim_out, axis=2)
    return model.net.Squeeze(output, output, dims=[0])


def _finish(
    model,
    summed,
    encoder_outputs_transposed,
    encoder_output_dim,
    scope,
    v_row,
    encoder_lengths=None,
):
    logits = _attention_logits(model, summed, encoder_output_dim, scope, v_row)
    weights_3d = _attention_weights(model, logits, scope, v_row, encoder_lengths)
    context = _calc_weighted_context(
        model, encoder_outputs_transposed, encoder_output_dim, weights_3d, scope
    )
    return context, weights_3d, [summed]


def _result(outputs):
    """The era's return value: two items before faaafeccd (E3), three after."""
    return outputs if eras.current().attention_returns_blobs else outputs[:2]


def _weighted_decoder_hidden_state(model, hidden, hidden_dim, encoder_output_dim, scope):
    return _apply_fc_weight_for_sum_match(
        model, hidden, hidden_dim, encoder_output_dim, scope, "weighted_decoder_hidden_state"
    )


def _recurrent(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    attention_weighted_encoder_context_t_prev,
    scope,
    v_row,
    encoder_lengths=None,
):
    weighted_prev_context = _apply_fc_weight_for_sum_match(
        model,
        attention_weighted_encoder_context_t_prev,
        encoder_output_dim,
        encoder_output_dim,
        scope,
        "weighted_prev_attention_context",
    )
    weighted_hidden = _weighted_decoder_hidden_state(
        model, decoder_hidden_state_t, decoder_hidden_state_dim, encoder_output_dim, scope
    )
    if v_row:
        # the S × N × E sum first, then the previous context broadcast onto it
        summed_tmp = model.net.Add(
            [weighted_encoder_outputs, weighted_hidden],
            s(scope, "decoder_hidden_encoder_outputs_sum_tmp"),
            broadcast=1,
            use_grad_hack=1,
        )
        summed = model.net.Add(
            [summed_tmp, weighted_prev_context],
            s(scope, "decoder_hidden_encoder_outputs_sum"),
            broadcast=1,
            use_grad_hack=1,
        )
    else:
        # the two N × E terms first (cheap), then one broadcast over S
        summed_tmp = model.net.Add(
            [weighted_prev_context, weighted_hidden],
            s(scope, "decoder_hidden_encoder_outputs_sum_tmp"),
        )
        summed = model.net.Add(
            [weighted_encoder_outputs, summed_tmp],
            s(scope, "decoder_hidden_encoder_outputs_sum"),
            broadcast=1,
        )
    return _finish(
        model, summed, encoder_outputs_transposed, encoder_output_dim, scope, v_row, encoder_lengths
    )


def _regular(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    v_row,
    encoder_lengths=None,
):
    weighted_hidden = _weighted_decoder_hidden_state(
        model, decoder_hidden_state_t, decoder_hidden_state_dim, encoder_output_dim, scope
    )
    summed = model.net.Add(
        [weighted_encoder_outputs, weighted_hidden],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
        use_grad_hack=1,
    )
    return _finish(
        model, summed, encoder_outputs_transposed, encoder_output_dim, scope, v_row, encoder_lengths
    )


def v_vector_attention(attention_type, **kwargs):
    """The ``"v_vector"`` graph, whatever the era: ``(context, weights_3d, [sum])``.

    Used by :func:`caffe2rnn.recurrent.LSTMWithAttention`, which mirrors the
    module of that date; the third item is what its
    ``attention_memory_optimization`` recomputes.
    """
    # That module checked nothing: Recurrent attention when attention_type ==
    # AttentionType.Recurrent, Regular for any other value (23bd132c1).
    if attention_type == AttentionType.Recurrent:
        return _recurrent(v_row=True, **kwargs)
    kwargs.pop("attention_weighted_encoder_context_t_prev", None)
    return _regular(v_row=True, **kwargs)


def apply_recurrent_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    attention_weighted_encoder_context_t_prev,
    scope,
    encoder_lengths=None,
):
    """Recurrent attention: the previous context also enters the match.

    Returns ``(context_t, attention_weights_3d, attention_blobs)``
    (``(context_t, attention_weights_3d)`` under era E3). ``encoder_lengths``
    (int32, N; E6) masks padded encoder positions.
    """
    return _result(
        _recurrent(
            model,
            encoder_output_dim,
            encoder_outputs_transposed,
            weighted_encoder_outputs,
            decoder_hidden_state_t,
            decoder_hidden_state_dim,
            attention_weighted_encoder_context_t_prev,
            scope,
            v_row=eras.current().attention_graph == "v_vector",
            encoder_lengths=encoder_lengths,
        )
    )


def apply_regular_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths=None,
):
    """Regular (Bahdanau) attention.

    Returns ``(context_t, attention_weights_3d, attention_blobs)``
    (``(context_t, attention_weights_3d)`` under era E3). ``encoder_lengths``
    (int32, N; E6) masks padded encoder positions.
    """
    return _result(
        _regular(
            model,
            encoder_output_dim,
            encoder_outputs_transposed,
            weighted_encoder_outputs,
            decoder_hidden_state_t,
            decoder_hidden_state_dim,
            scope,
            v_row=eras.current().attention_graph == "v_vector",
            encoder_lengths=encoder_lengths,
        )
    )


def apply_dot_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths=None,
):
    """Dot-product attention (Luong et al., arXiv:1508.04025), era E6.

    ``e_tj = s_j · h'_t`` with ``h'_t = h_t`` when the decoder and encoder
    sizes agree, else an FC to E (``weighted_decoder_hidden_state``). No
    weighted encoder outputs are needed. Returns ``(context_t,
    attention_weights_3d, [])``.
    """
    if decoder_hidden_state_dim != encoder_output_dim:
        hidden = brew.fc(
            model,
            decoder_hidden_state_t,
            s(scope, "weighted_decoder_hidden_state"),
            dim_in=decoder_hidden_state_dim,
            dim_out=encoder_output_dim,
            axis=2,
        )
    else:
        hidden = decoder_hidden_state_t
    squeezed = model.net.Squeeze(
        hidden, s(scope, "squeezed_weighted_decoder_hidden_state"), dims=[0]
    )  # N × E
    expanded = model.net.ExpandDims(squeezed, squeezed, dims=[2])  # N × E × 1, in place
    logits = model.net.BatchMatMul(
        [encoder_outputs_transposed, expanded], s(scope, "attention_logits"), trans_a=1
    )  # (S × E)·(E × 1) per row: N × S × 1
    weights_3d = _attention_weights(model, logits, scope, False, encoder_lengths)
    context = _calc_weighted_context(
        model, encoder_outputs_transposed, encoder_output_dim, weights_3d, scope
    )
    return context, weights_3d, []


def apply_soft_coverage_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths,
    coverage_t_prev,
    coverage_weights,
):
    """Regular attention plus soft coverage (Tu et al., arXiv:1601.04811), era E6.

    ``coverage_t_prev`` (1 × N × S) is the attention each encoder position
    received so far; ``coverage_weights`` (S × N × E, an FC of the encoder
    outputs) scales it into the match::

        e_tj = v · tanh(W_e s_j + W_h h_t + cov_{t-1,j} · U s_j)
        coverage_t = coverage_{t-1} + α_t

    Returns ``(context_t, attention_weights_3d, attention_blobs, coverage_t)``.
    """
    weighted_hidden = _weighted_decoder_hidden_state(
        model, decoder_hidden_state_t, decoder_hidden_state_dim, encoder_output_dim, scope
    )
    summed = model.net.Add(
        [weighted_encoder_outputs, weighted_hidden],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
    )  # S × N × E
    coverage_2d = model.net.Squeeze(coverage_t_prev, s(scope, "coverage_t_prev_2d"), dims=[0])
    coverage_transposed = brew.transpose(
        model, coverage_2d, s(scope, "coverage_t_prev_transposed")
    )  # S × N
    scaled_coverage_weights = model.net.Mul(
        [coverage_weights, coverage_transposed],
        s(scope, "scaled_coverage_weights"),
        broadcast=1,
        axis=0,
    )  # S × N × E
    summed = model.net.Add([summed, scaled_coverage_weights], summed)  # in place
    context, weights_3d, blobs = _finish(
        model,
        summed,
        encoder_outputs_transposed,
        encoder_output_dim,
        scope,
        False,
        encoder_lengths,
    )
    weights_2d = model.net.Squeeze(weights_3d, s(scope, "attention_weights_2d"), dims=[2])
    coverage_t = model.net.Add(
        [coverage_t_prev, weights_2d], s(scope, "coverage_t"), broadcast=1
    )  # 1 × N × S
    return context, weights_3d, blobs, coverage_t
