"""MILSTM and the attention decoders against independent NumPy references.

The references are forward-only; their gradients are central differences of
that independent forward (float64, eps 1e-6), which the net's analytic
gradients must match.
"""

import cell_harness as h
import numpy as np
import numpy_cells as ref
import pytest

from caffe2rnn import workspace
from caffe2rnn.attention import AttentionType
from caffe2rnn.recurrent import MILSTM, LSTMWithAttention

RTOL, ATOL = 1e-6, 1e-8


def milstm_cell(model, outputs_with_grads, D, H, **kw):
    return MILSTM(
        model,
        "input",
        "seq_lengths",
        ("h0", "c0"),
        D,
        H,
        scope="milstm",
        outputs_with_grads=outputs_with_grads,
        **kw,
    )


def milstm_reference(p, x, h0, c0, lengths, forget_bias=0.0):
    g = lambda name: p["milstm/" + name]  # noqa: E731
    return ref.milstm_forward(
        x,
        h0,
        c0,
        g("i2h_w"),
        g("i2h_b"),
        g("prev_t_w"),
        g("prev_t_b"),
        g("alpha"),
        g("beta1"),
        g("beta2"),
        g("b"),
        lengths,
        forget_bias=forget_bias,
    )


@pytest.mark.parametrize(
    "T,N,D,H,lengths", [(1, 1, 2, 2, [1]), (3, 2, 2, 2, [3, 1]), (4, 3, 3, 2, [2, 4, 3])]
)
def test_milstm_matches_reference(T, N, D, H, lengths):
    rng = np.random.default_rng(1)
    owg = (0, 3)
    model, outputs, grad_map = h.build(milstm_cell, owg, D=D, H=H, forget_bias=0.5)
    p = h.init_params(model, rng)
    x = rng.uniform(-1, 1, size=(T, N, D))
    h0, c0 = rng.uniform(-1, 1, size=(1, N, H)), rng.uniform(-1, 1, size=(1, N, H))
    lengths = np.array(lengths, dtype=np.int32)
    g_all, g_last = rng.normal(size=(T, N, H)), rng.normal(size=(1, N, H))
    h.feed(
        {
            "input": x,
            "h0": h0,
            "c0": c0,
            "seq_lengths": lengths,
            str(outputs[0]) + "_given_grad": g_all,
            str(outputs[3]) + "_given_grad": g_last,
        }
    )
    workspace.RunNetOnce(model.net)

    fwd = milstm_reference(p, x, h0, c0, lengths, 0.5)
    got = h.fetch(outputs)
    for j, key in [(0, "h_all"), (2, "c_all")]:  # _all, then _last = its last row
        np.testing.assert_allclose(got[str(outputs[j])], fwd[key], rtol=RTOL, atol=1e-12)
        np.testing.assert_allclose(got[str(outputs[j + 1])][0], fwd[key][-1], rtol=RTOL, atol=1e-12)

    def loss():
        f = milstm_reference(p, x, h0, c0, lengths, 0.5)
        return np.sum(f["h_all"] * g_all) + np.sum(f["c_all"][-1] * g_last[0])

    checked = dict(p, input=x, h0=h0, c0=c0)
    for name, value in checked.items():
        numeric = ref.numeric_gradient(loss, value)
        analytic = workspace.FetchBlob(str(grad_map[name]))
        np.testing.assert_allclose(
            analytic, numeric, rtol=RTOL, atol=ATOL, err_msg="gradient of %s" % name
        )


def attention_cell(model, outputs_with_grads, D, H, E, attention_type):
    return LSTMWithAttention(
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
        outputs_with_grads=outputs_with_grads,
    )


def attention_params(p):
    g = lambda name: p["att/" + name]  # noqa: E731
    out = dict(
        w_x=g("i2h_w"),
        b_x=g("i2h_b"),
        w_enc=g("weighted_encoder_outputs_w"),
        b_enc=g("weighted_encoder_outputs_b"),
        w_g=g("gates_t_w"),
        b_g=g("gates_t_b"),
        w_dec=g("weighted_decoder_hidden_state_w"),
        b_dec=g("weighted_decoder_hidden_state_b"),
        v=g("attention_v"),
    )
    if "att/weighted_prev_attention_context_w" in p:
        out.update(
            w_ctx=g("weighted_prev_attention_context_w"),
            b_ctx=g("weighted_prev_attention_context_b"),
        )
    return out


@pytest.mark.parametrize("attention_type", [AttentionType.Regular, AttentionType.Recurrent])
@pytest.mark.parametrize(
    "T,S,N,D,H,E,lengths", [(1, 1, 1, 2, 2, 2, [1]), (3, 2, 2, 2, 3, 2, [3, 2])]
)
def test_attention_decoder_matches_reference(attention_type, T, S, N, D, H, E, lengths):
    rng = np.random.default_rng(2)
    owg = (0, 4)
    model, outputs, grad_map = h.build(
        attention_cell, owg, D=D, H=H, E=E, attention_type=attention_type
    )
    p = h.init_params(model, rng)
    p["att/attention_zeros"][...] = 0.0  # the logits' fixed zero bias
    workspace.FeedBlob("att/attention_zeros", p["att/attention_zeros"])
    x = rng.uniform(-1, 1, size=(T, N, D))
    enc = rng.uniform(-1, 1, size=(S, N, E))
    h0, c0 = rng.uniform(-1, 1, size=(1, N, H)), rng.uniform(-1, 1, size=(1, N, H))
    ctx0 = rng.uniform(-1, 1, size=(1, N, E))
    lengths = np.array(lengths, dtype=np.int32)
    g_h, g_ctx = rng.normal(size=(T, N, H)), rng.normal(size=(T, N, E))
    h.feed(
        {
            "decoder_inputs": x,
            "encoder_outputs": enc,
            "h0": h0,
            "c0": c0,
            "ctx0": ctx0,
            "seq_lengths": lengths,
            str(outputs[0]) + "_given_grad": g_h,
            str(outputs[4]) + "_given_grad": g_ctx,
        }
    )
    workspace.RunNetOnce(model.net)

    recurrent = attention_type == AttentionType.Recurrent
    ap = attention_params(p)
    fwd = ref.attention_lstm_forward(x, h0, c0, ctx0, enc, lengths, ap, recurrent)
    got = h.fetch(outputs)
    for j, key in [(0, "h_all"), (2, "c_all"), (4, "ctx_all")]:
        np.testing.assert_allclose(
            got[str(outputs[j])], fwd[key], rtol=RTOL, atol=1e-12, err_msg=key
        )
        np.testing.assert_allclose(
            got[str(outputs[j + 1])][0], fwd[key][-1], rtol=RTOL, atol=1e-12, err_msg=key + " last"
        )

    def loss():
        f = ref.attention_lstm_forward(
            x, h0, c0, ctx0, enc, lengths, attention_params(p), recurrent
        )
        return np.sum(f["h_all"] * g_h) + np.sum(f["ctx_all"] * g_ctx)

    checked = {k: v for k, v in p.items() if k != "att/attention_zeros"}
    checked.update({"decoder_inputs": x, "encoder_outputs": enc, "h0": h0, "c0": c0, "ctx0": ctx0})
    for name, value in checked.items():
        numeric = ref.numeric_gradient(loss, value)
        analytic = workspace.FetchBlob(str(grad_map[name]))
        np.testing.assert_allclose(
            analytic, numeric, rtol=RTOL, atol=ATOL, err_msg="gradient of %s" % name
        )
