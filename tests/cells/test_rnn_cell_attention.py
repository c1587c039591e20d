"""``rnn_cell.LSTMWithAttention`` (E5 graph) against the NumPy attention decoder,
forward and every gradient by central differences; attention's return values
per era."""

import numpy as np
import numpy_cells as ref
import pytest
import rnn_cell_harness as h

from caffe2rnn import eras, errors, rnn_cell, workspace
from caffe2rnn.attention import AttentionType, apply_regular_attention
from caffe2rnn.model_helper import ModelHelper

RTOL, ATOL = 1e-6, 1e-9


def decoder(model, D, H, E, attention_type, **kw):
    return rnn_cell.LSTMWithAttention(
        model,
        "decoder_inputs",
        "seq_lengths",
        "h0",
        "c0",
        "ctx0",
        encoder_output_dim=E,
        encoder_outputs="encoder_outputs",
        decoder_input_dim=D,
        decoder_state_dim=H,
        scope="att",
        attention_type=attention_type,
        outputs_with_grads=(0, 4),
        **kw,
    )


def reference_params(p):
    g = lambda name: p["att/" + name]  # noqa: E731
    out = dict(
        w_x=g("decoder/i2h_w"),
        b_x=g("decoder/i2h_b"),
        w_g=g("decoder/gates_t_w"),
        b_g=g("decoder/gates_t_b"),
        w_enc=g("weighted_encoder_outputs_w"),
        b_enc=g("weighted_encoder_outputs_b"),
        w_dec=g("weighted_decoder_hidden_state_w"),
        b_dec=g("weighted_decoder_hidden_state_b"),
        # the logits' bias shifts every score equally: softmax ignores it
        v=g("attention_logits_w"),
    )
    if "att/weighted_prev_attention_context_w" in p:
        out.update(
            w_ctx=g("weighted_prev_attention_context_w"),
            b_ctx=g("weighted_prev_attention_context_b"),
        )
    return out


CASES = [(1, 1, 1, 2, 2, 2, [1]), (3, 2, 2, 2, 3, 2, [3, 2])]


@pytest.mark.parametrize("attention_type", [AttentionType.Regular, AttentionType.Recurrent])
@pytest.mark.parametrize("T,S,N,D,H,E,lengths", CASES)
@pytest.mark.parametrize("memory_optimization", [False, True])
def test_lstm_with_attention_matches_numpy(
    attention_type, T, S, N, D, H, E, lengths, memory_optimization
):
    rng = np.random.default_rng(2)
    model, outputs, grad_map = h.build(
        decoder,
        (0, 4),
        D=D,
        H=H,
        E=E,
        attention_type=attention_type,
        lstm_memory_optimization=memory_optimization,
        attention_memory_optimization=memory_optimization,
    )
    assert [str(o) for o in outputs[::2]] == [
        "att/hidden_t_external_all",
        "att/decoder/cell_t_all",
        "att/attention_weighted_encoder_context_all",
    ]
    p = h.init_params(model, rng)
    x = rng.uniform(-1, 1, size=(T, N, D))
    enc = rng.uniform(-1, 1, size=(S, N, E))
    h0, c0 = rng.uniform(-1, 1, size=(1, N, H)), rng.uniform(-1, 1, size=(1, N, H))
    ctx0 = rng.uniform(-1, 1, size=(1, N, E))
    lengths = np.array(lengths, dtype=np.int32)
    g_h, g_ctx = rng.normal(size=(T, N, H)), rng.normal(size=(T, N, E))
    inputs = {"decoder_inputs": x, "encoder_outputs": enc, "h0": h0, "c0": c0, "ctx0": ctx0}
    h.feed(inputs)
    h.feed(
        {
            str(outputs[0]) + "_given_grad": g_h,
            str(outputs[4]) + "_given_grad": g_ctx,
            "seq_lengths": lengths,
        }
    )
    workspace.RunNetOnce(model.net)

    recurrent = attention_type == AttentionType.Recurrent
    fwd = ref.attention_lstm_forward(x, h0, c0, ctx0, enc, lengths, reference_params(p), recurrent)
    for j, key in [(0, "h_all"), (2, "c_all"), (4, "ctx_all")]:
        h.assert_close(workspace.FetchBlob(str(outputs[j])), fwd[key], key, RTOL, 1e-12)
        h.assert_close(workspace.FetchBlob(str(outputs[j + 1]))[0], fwd[key][-1], key, RTOL, 1e-12)

    def loss():
        f = ref.attention_lstm_forward(
            x, h0, c0, ctx0, enc, lengths, reference_params(p), recurrent
        )
        return np.sum(f["h_all"] * g_h) + np.sum(f["ctx_all"] * g_ctx)

    values = dict(p, **inputs)
    for name, value in values.items():
        numeric = ref.numeric_gradient(loss, value)
        h.assert_close(workspace.FetchBlob(str(grad_map[name])), numeric, "d/d" + name, RTOL, ATOL)


def test_attention_returns_three_values_from_april_11_and_two_before():
    def build():
        model = ModelHelper(name="ret")
        return apply_regular_attention(
            model,
            encoder_output_dim=2,
            encoder_outputs_transposed="enc_t",
            weighted_encoder_outputs="wenc",
            decoder_hidden_state_t="h",
            decoder_hidden_state_dim=2,
            scope="a",
        ), model

    (context, weights, blobs), model = build()
    assert str(weights) == "a/attention_weights_3d" and [str(b) for b in blobs] == [
        "a/decoder_hidden_encoder_outputs_sum"
    ]
    assert "a/attention_logits_w" in map(str, model.params)
    with eras.use("E3"):
        result, model = build()
    assert len(result) == 2 and "a/attention_v" in map(str, model.params)


def test_unknown_attention_type_names_the_argument():
    model = ModelHelper(name="bad_att")
    with pytest.raises(errors.ArgumentError, match=r"attention_type=7 is not an AttentionType"):
        decoder(model, 2, 2, 2, attention_type=7)
    assert len(model.net.Proto().op) == 0


def test_recurrent_lstm_with_attention_memory_optimizations_keep_gradients():
    """The 2017-04 ``recurrent.LSTMWithAttention`` with Caffe2 8be1311d9's options:
    the recomputed blobs are named in the op, the gradients do not change."""
    from caffe2rnn import recurrent
    from caffe2rnn.cnn import CNNModelHelper

    def run(**flags):
        workspace.ResetWorkspace()
        model = CNNModelHelper(name="rec_att")
        outputs = recurrent.LSTMWithAttention(
            model, "d", "s", "h0", "c0", "x0", 2, "enc", 2, 3, scope="att",
            attention_type=AttentionType.Recurrent, **flags,
        )  # fmt: skip
        grad_map = model.AddGradientOperators([outputs[0], outputs[4]])
        rng = np.random.default_rng(8)
        workspace.RunNetOnce(model.param_init_net)
        f32 = np.float32
        h.feed(
            {
                "d": rng.uniform(-1, 1, (3, 2, 2)).astype(f32),
                "enc": rng.uniform(-1, 1, (2, 2, 2)).astype(f32),
                "h0": np.zeros((1, 2, 3), f32),
                "c0": np.zeros((1, 2, 3), f32),
                "x0": np.zeros((1, 2, 2), f32),
                "s": np.array([3, 2], np.int32),
            }
        )
        params = {str(p): workspace.FetchBlob(str(p)) for p in model.params}
        return model, params, grad_map

    plain, params, grad_map = run()
    workspace.RunNetOnce(plain.net)
    grads = {p: workspace.FetchBlob(str(grad_map[p])) for p in params}
    optimized, _, o_grad_map = run(
        lstm_memory_optimization=True, attention_memory_optimization=True
    )
    (op,) = [o for o in optimized.net.Proto().op if o.type == "RecurrentNetwork"]
    (recompute,) = [a for a in op.arg if a.name == "recompute_blobs_on_backward"]
    assert {s.decode() for s in recompute.strings} == {
        "att/gates_t",
        "att/decoder_hidden_encoder_outputs_sum",
    }
    h.feed(params)
    workspace.RunNetOnce(optimized.net)
    for p, g in grads.items():
        np.testing.assert_allclose(workspace.FetchBlob(str(o_grad_map[p])), g, rtol=1e-6, err_msg=p)
