"""``caffe2.python.attention`` as of 2017-04 (89ea32b11): additive attention.

Used by :func:`caffe2rnn.recurrent.LSTMWithAttention` inside the decoder's
step net. With encoder outputs ``s_j`` (S × N × E) and the decoder state
``h_t`` (1 × N × H), one step computes (Bahdanau et al., arXiv:1409.0473):

* regular: ``e_tj = v · tanh(W_e s_j + W_h h_t)``;
* recurrent (arXiv:1601.03317 §4.1): ``e_tj = v · tanh(W_e s_j + W_h h_t +
  W_c c_{t-1})``, feeding the previous context ``c_{t-1}`` back;
* then ``α_t = softmax_j(e_tj)`` and the context ``c_t = Σ_j α_tj s_j``
  (1 × N × E).

``W_e s_j`` (``weighted_encoder_outputs``) is computed once, outside the
recurrence, and enters the step net as a reference; ``v`` is ``attention_v``
(1 × E), added to the model's params by hand. The ``Add`` ops broadcast a
N × E term over the S encoder positions (``broadcast=1``).
"""


class AttentionType:
    Regular, Recurrent = range(2)


def s(scope, name):
    """Internal names are ``<scope>/<name>`` (scoped by hand, like recurrent_net)."""
    return f"{str(scope)}/{str(name)}"


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


def _calc_attention_weights(model, attention_logits_transposed, scope):
    """``α_t = softmax over encoder positions``, as N × S × 1 for BatchMatMul."""
    attention_weights = model.Softmax(
        attention_logits_transposed,
        s(scope, "attention_weights"),
        engine="CUDNN",
    )  # N × S
    return model.net.ExpandDims(attention_weights, s(scope, "attention_weights_3d"), dims=[2])


def _calc_attention_logits_from_sum_match(
    model, decoder_hidden_encoder_outputs_sum, encoder_output_dim, scope
):
    """``e_tj = v · tanh(sum_j)``: an FC with weight ``v`` and a zero bias."""
    summed = model.net.Tanh(
        decoder_hidden_encoder_outputs_sum, decoder_hidden_encoder_outputs_sum
    )  # in place
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
    return model.Transpose(logits, s(scope, "attention_logits_transposed"), axes=[1, 0])  # N × S


def _apply_fc_weight_for_sum_match(model, input, dim_in, dim_out, scope, name):
    """``W x`` for one timestep's 1 × N × dim_in blob, squeezed to N × dim_out."""
    output = model.FC(input, s(scope, name), dim_in=dim_in, dim_out=dim_out, axis=2)
    return model.net.Squeeze(output, output, dims=[0])


def _attend(model, summed, encoder_outputs_transposed, encoder_output_dim, scope):
    logits = _calc_attention_logits_from_sum_match(
        model=model,
        decoder_hidden_encoder_outputs_sum=summed,
        encoder_output_dim=encoder_output_dim,
        scope=scope,
    )
    weights_3d = _calc_attention_weights(
        model=model, attention_logits_transposed=logits, scope=scope
    )
    context = _calc_weighted_context(
        model=model,
        encoder_outputs_transposed=encoder_outputs_transposed,
        encoder_output_dim=encoder_output_dim,
        attention_weights_3d=weights_3d,
        scope=scope,
    )
    return context, weights_3d


def apply_recurrent_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    attention_weighted_encoder_context_t_prev,
    scope,
):
    """Recurrent attention: the previous context also enters the match.

    Returns ``(context_t, attention_weights_3d)``.
    """
    weighted_prev_attention_context = _apply_fc_weight_for_sum_match(
        model=model,
        input=attention_weighted_encoder_context_t_prev,
        dim_in=encoder_output_dim,
        dim_out=encoder_output_dim,
        scope=scope,
        name="weighted_prev_attention_context",
    )
    weighted_decoder_hidden_state = _apply_fc_weight_for_sum_match(
        model=model,
        input=decoder_hidden_state_t,
        dim_in=decoder_hidden_state_dim,
        dim_out=encoder_output_dim,
        scope=scope,
        name="weighted_decoder_hidden_state",
    )
    summed_tmp = model.net.Add(
        [weighted_encoder_outputs, weighted_decoder_hidden_state],
        s(scope, "decoder_hidden_encoder_outputs_sum_tmp"),
        broadcast=1,
        use_grad_hack=1,
    )
    summed = model.net.Add(
        [summed_tmp, weighted_prev_attention_context],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
        use_grad_hack=1,
    )
    return _attend(model, summed, encoder_outputs_transposed, encoder_output_dim, scope)


def apply_regular_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
):
    """Regular (Bahdanau) attention. Returns ``(context_t, attention_weights_3d)``."""
    weighted_decoder_hidden_state = _apply_fc_weight_for_sum_match(
        model=model,
        input=decoder_hidden_state_t,
        dim_in=decoder_hidden_state_dim,
        dim_out=encoder_output_dim,
        scope=scope,
        name="weighted_decoder_hidden_state",
    )
    summed = model.net.Add(
        [weighted_encoder_outputs, weighted_decoder_hidden_state],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
        use_grad_hack=1,
    )
    return _attend(model, summed, encoder_outputs_transposed, encoder_output_dim, scope)
