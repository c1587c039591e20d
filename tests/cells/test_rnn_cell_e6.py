"""Era E6 cells: GRU, LayerNormLSTM, Dot / SoftCoverage attention with encoder
lengths — against the NumPy references and central differences — and what the
era selects (names, initializers, DropoutCell's is_test)."""

import numpy as np
import numpy_cells as ref
import numpy_cells_late as late
import pytest
import rnn_cell_harness as h

from caffe2rnn import eras, errors, gru_cell, rnn_cell, workspace
from caffe2rnn.attention import AttentionType
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.proto import caffe2_pb2

T, N, D = 3, 2, 2
LENGTHS = np.array([3, 2], dtype=np.int32)


@pytest.fixture(autouse=True)
def era_e6():
    with eras.use("E6"):
        yield


def check_gradients(loss, values, grad_map, rtol=1e-6, atol=1e-9):
    for name, value in values.items():
        numeric = ref.numeric_gradient(loss, value)
        h.assert_close(workspace.FetchBlob(str(grad_map[name])), numeric, "d/d" + name, rtol, atol)


@pytest.mark.parametrize("dims", [[3], [2, 3]])
def test_gru_matches_numpy_and_finite_differences(dims):
    L = len(dims)
    initial = ["h0_%d" % i for i in range(L)]

    def fn(model):
        return gru_cell.GRU(
            model,
            "input",
            "seq_lengths",
            initial,
            D,
            dims if L > 1 else dims[0],
            scope="gru",
            outputs_with_grads=(0, 1),
            return_last_layer_only=False,
        )

    model, outputs, grad_map = h.build(fn, [2 * (L - 1), 2 * (L - 1) + 1])
    assert len(outputs) == 2 * L
    rng = np.random.default_rng(L)
    p = h.init_params(model, rng)
    inputs = {"input": rng.uniform(-1, 1, (T, N, D))}
    inputs.update({n: rng.uniform(-1, 1, (1, N, dims[i])) for i, n in enumerate(initial)})
    g_all, g_last = rng.normal(size=(T, N, dims[-1])), rng.normal(size=(1, N, dims[-1]))
    h.feed(inputs)
    h.feed(
        {
            "seq_lengths": LENGTHS,
            str(outputs[-2]) + "_given_grad": g_all,
            str(outputs[-1]) + "_given_grad": g_last,
        }
    )
    workspace.RunNetOnce(model.net)
    names = h.layer_names("gru", L)

    def forward():
        layer_input, hs = inputs["input"], []
        for i, name in enumerate(names):
            g = lambda n, name=name: p[name + "/" + n]  # noqa: E731
            hs.append(
                late.gru_forward(
                    layer_input, inputs[initial[i]], g("i2h_w"), g("i2h_b"),
                    g("reset_gate_t_w"), g("reset_gate_t_b"), g("update_gate_t_w"),
                    g("update_gate_t_b"), g("output_gate_t_w"), g("output_gate_t_b"), LENGTHS,
                )
            )  # fmt: skip
            layer_input = hs[-1]
        return hs

    for i, h_all in enumerate(forward()):
        h.assert_close(workspace.FetchBlob(str(outputs[2 * i])), h_all, "layer %d h_all" % i)
        h.assert_close(workspace.FetchBlob(str(outputs[2 * i + 1]))[0], h_all[-1], "h_last")

    def loss():
        h_all = forward()[-1]
        return np.sum(h_all * g_all) + np.sum(h_all[-1] * g_last[0])

    check_gradients(loss, dict(p, **inputs), grad_map)


def test_layer_norm_lstm_matches_numpy_and_finite_differences():
    H = 3

    def fn(model):
        return rnn_cell.LayerNormLSTM(
            model, "input", "seq_lengths", ("h0", "c0"), D, H, scope="ln", outputs_with_grads=(0, 3)
        )

    model, outputs, grad_map = h.build(fn, [0, 3])
    rng = np.random.default_rng(3)
    p = h.init_params(model, rng)
    inputs = {
        "input": rng.uniform(-1, 1, (T, N, D)),
        "h0": rng.uniform(-1, 1, (1, N, H)),
        "c0": rng.uniform(-1, 1, (1, N, H)),
    }
    g_h, g_c = rng.normal(size=(T, N, H)), rng.normal(size=(1, N, H))
    h.feed(inputs)
    h.feed(
        {
            "seq_lengths": LENGTHS,
            str(outputs[0]) + "_given_grad": g_h,
            str(outputs[3]) + "_given_grad": g_c,
        }
    )
    workspace.RunNetOnce(model.net)
    g = lambda n: p["ln/" + n]  # noqa: E731
    eps = float(np.float32(1e-4))  # brew.layer_norm's epsilon, a float32 argument

    def forward():
        return late.layer_norm_lstm_forward(
            inputs["input"], inputs["h0"], inputs["c0"], g("i2h_w"), g("i2h_b"),
            g("gates_t_w"), g("gates_t_b"), g("gates_t_norm_scale"), g("gates_t_norm_bias"),
            LENGTHS, eps,
        )  # fmt: skip

    fwd = forward()
    h.assert_close(workspace.FetchBlob(str(outputs[0])), fwd["h_all"], "h_all")
    h.assert_close(workspace.FetchBlob(str(outputs[3]))[0], fwd["c_all"][-1], "c_last")

    def loss():
        f = forward()
        return np.sum(f["h_all"] * g_h) + np.sum(f["c_all"][-1] * g_c[0])

    check_gradients(loss, dict(p, **inputs), grad_map)


def attention_params(p, kind):
    g = lambda name: p["att/" + name]  # noqa: E731
    out = dict(
        w_x=g("decoder/i2h_w"),
        b_x=g("decoder/i2h_b"),
        w_g=g("decoder/gates_t_w"),
        b_g=g("decoder/gates_t_b"),
    )
    optional = {
        "w_enc": "weighted_encoder_outputs_w",
        "b_enc": "weighted_encoder_outputs_b",
        "w_dec": "weighted_decoder_hidden_state_w",
        "b_dec": "weighted_decoder_hidden_state_b",
        "w_ctx": "weighted_prev_attention_context_w",
        "b_ctx": "weighted_prev_attention_context_b",
        "w_cov": "coverage_weights_w",
        "b_cov": "coverage_weights_b",
        "v": "attention_logits_w",
    }
    out.update({k: g(v) for k, v in optional.items() if "att/" + v in p})
    return out


ATTENTION = [
    ("regular", "Regular", 3, [2, 3]),
    ("recurrent", "Recurrent", 3, None),
    ("dot", "Dot", 2, [3, 1]),  # H == E: the hidden state itself
    ("dot", "Dot", 3, None),  # H != E: an FC to E first
    ("coverage", "SoftCoverage", 3, [1, 3]),
]


@pytest.mark.parametrize("kind,type_name,H,enc_lengths", ATTENTION)
def test_lstm_with_attention_e6_matches_numpy(kind, type_name, H, enc_lengths):
    S, E = 3, 2
    attention_type = getattr(AttentionType, type_name)

    def fn(model):
        return rnn_cell.LSTMWithAttention(
            model,
            "decoder_inputs",
            "seq_lengths",
            "h0",
            "c0",
            "ctx0",
            E,
            "encoder_outputs",
            "encoder_lengths" if enc_lengths else None,  # E6: positional, after the outputs
            D,
            H,
            scope="att",
            attention_type=attention_type,
        )

    model, outputs, grad_map = h.build(fn, [0, 4])
    assert len(outputs) == (8 if kind == "coverage" else 6)
    for op in model.net.Proto().op:
        if list(op.output) == ["att/initial_coverage"]:  # float32 zeros, as in Caffe2:
            op.arg.add(name="dtype", i=caffe2_pb2.TensorProto.DOUBLE)  # float64 here
    rng = np.random.default_rng(4)
    p = h.init_params(model, rng)
    inputs = {
        "decoder_inputs": rng.uniform(-1, 1, (T, N, D)),
        "encoder_outputs": rng.uniform(-1, 1, (S, N, E)),
        "h0": rng.uniform(-1, 1, (1, N, H)),
        "c0": rng.uniform(-1, 1, (1, N, H)),
        "ctx0": rng.uniform(-1, 1, (1, N, E)),
    }
    g_h, g_ctx = rng.normal(size=(T, N, H)), rng.normal(size=(T, N, E))
    h.feed(inputs)
    h.feed(
        {
            "seq_lengths": LENGTHS,
            str(outputs[0]) + "_given_grad": g_h,
            str(outputs[4]) + "_given_grad": g_ctx,
        }
    )
    if enc_lengths:
        workspace.FeedBlob("encoder_lengths", np.array(enc_lengths, np.int32))
    workspace.RunNetOnce(model.net)

    def forward():
        return late.attention_decoder_forward(
            inputs["decoder_inputs"], inputs["h0"], inputs["c0"], inputs["ctx0"],
            inputs["encoder_outputs"], LENGTHS, attention_params(p, kind), kind, enc_lengths,
        )  # fmt: skip

    fwd = forward()
    for j, key in [(0, "h_all"), (2, "c_all"), (4, "ctx_all")] + (
        [(6, "cov_all")] if kind == "coverage" else []
    ):
        h.assert_close(workspace.FetchBlob(str(outputs[j])), fwd[key], key, 1e-6, 1e-12)

    def loss():
        f = forward()
        return np.sum(f["h_all"] * g_h) + np.sum(f["ctx_all"] * g_ctx)

    check_gradients(loss, dict(p, **inputs), grad_map)


# -- what the era selects ----------------------------------------------------------


def test_late_names_exist_only_from_e6():
    assert rnn_cell.LayerNormLSTM and gru_cell.GRU and AttentionType.Dot == 2
    with eras.use("E5"):
        for get in (
            lambda: rnn_cell.LayerNormLSTM,
            lambda: gru_cell.GRUCell,
            lambda: AttentionType.SoftCoverage,
        ):
            with pytest.raises(AttributeError, match="era E6"):
                get()
        with pytest.raises(errors.ArgumentError, match="attention_type=2"):
            rnn_cell.LSTMWithAttention(
                ModelHelper(name="x"), "d", "s", "h", "c", "x", 2, "e", 2, 2, "a", attention_type=2
            )


def test_e6_initial_states_none_uses_the_cells_initializers():
    model = ModelHelper(name="learned")
    rnn_cell.LSTM(model, "input", "seq_lengths", None, D, [2, 3], scope="rc")
    # Caffe2's names: the stack's scope, then each layer's own (full) name
    assert [str(p) for p in model.params if "initial" in str(p)] == [
        "rc/rc/layer_0/initial_hidden_state",
        "rc/rc/layer_0/initial_cell_state",
        "rc/rc/layer_1/initial_hidden_state",
        "rc/rc/layer_1/initial_cell_state",
    ]
    with pytest.raises(errors.ArgumentError, match="initializer"):
        gru_cell.GRU(ModelHelper(name="g"), "input", "seq_lengths", None, D, 2, scope="g")


def test_e6_dropout_cell_requires_is_test_and_passes_it_on():
    cell = rnn_cell.LSTMCell(D, 2, 0.0, False, name="d")
    with pytest.raises(errors.ArgumentError, match="is_test"):
        rnn_cell.DropoutCell(cell, dropout_ratio=0.5, name="d")
    dropout = rnn_cell.DropoutCell(cell, dropout_ratio=0.5, name="d", is_test=True)
    model = ModelHelper(name="drop")
    dropout.apply_over_sequence(model, "input", "seq_lengths", ["h0", "c0"])
    (op,) = [op for op in model.net.Proto().op if op.type == "Dropout"]
    assert {a.name: a.i for a in op.arg if a.name == "is_test"} == {"is_test": 1}
