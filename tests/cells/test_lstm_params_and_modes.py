"""InitFromLSTMParams, gate layouts, forward_only and recompute_blobs_on_backward."""

import numpy as np
import numpy_cells as ref

from caffe2rnn import workspace
from caffe2rnn.cnn import CNNModelHelper
from caffe2rnn.recurrent import LSTM, GetLSTMParamNames, InitFromLSTMParams

T, N, D, H = 4, 3, 5, 4
GATE_NAMES = {"i": "input_gate", "f": "forget_gate", "o": "output_gate", "g": "cell"}


def build_lstm(name="lstm_params", **kw):
    model = CNNModelHelper(name=name)
    outputs = LSTM(model, "input", "seq_lengths", ("h0", "c0"), D, H, scope="lstm", **kw)
    return model, outputs


def feed_inputs(seed=0):
    rng = np.random.default_rng(seed)
    values = {
        "input": rng.uniform(-1, 1, (T, N, D)).astype(np.float32),
        "seq_lengths": np.array([4, 2, 3], dtype=np.int32),
        "h0": rng.uniform(-1, 1, (1, N, H)).astype(np.float32),
        "c0": rng.uniform(-1, 1, (1, N, H)).astype(np.float32),
    }
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    return values


def gate_values(weights, biases, layout):
    """{'input_gate_w': block, ..., 'cell_b': block} from (4H, ·) matrices in
    the given gate row layout (e.g. 'ifgo' for PyTorch)."""
    out = {}
    for g, w, b in zip(layout, np.split(weights, 4), np.split(biases, 4)):
        out[GATE_NAMES[g] + "_w"] = w
        out[GATE_NAMES[g] + "_b"] = b
    return out


def test_param_names_are_caffe2_gate_order():
    assert GetLSTMParamNames() == {
        "weights": ["input_gate_w", "forget_gate_w", "output_gate_w", "cell_w"],
        "biases": ["input_gate_b", "forget_gate_b", "output_gate_b", "cell_b"],
    }


def test_init_from_lstm_params_round_trip():
    model, outputs = build_lstm(return_params=True)
    params = outputs[-1]
    workspace.RunNetOnce(model.param_init_net)
    rng = np.random.default_rng(4)
    values = {
        "input": {
            name: rng.normal(size=(H, D) if name.endswith("_w") else (H,))
            for name in sum(GetLSTMParamNames().values(), [])
        },
        "recurrent": {
            name: rng.normal(size=(H, H) if name.endswith("_w") else (H,))
            for name in sum(GetLSTMParamNames().values(), [])
        },
    }
    InitFromLSTMParams(params, values)
    for input_type, blobs in params.items():
        weights = workspace.FetchBlob(blobs["weights"])
        biases = workspace.FetchBlob(blobs["biases"])
        fetched = gate_values(weights, biases, "ifog")
        for name, value in values[input_type].items():
            np.testing.assert_array_equal(
                fetched[name], value.astype(np.float32), err_msg="%s %s" % (input_type, name)
            )


def torch_style_lstm(x, h0, c0, w_ih, b_ih, w_hh, b_hh):
    """An LSTM in PyTorch's layout: gate rows (i, f, g, o), two biases."""
    h, c = h0, c0
    hs = []
    for t in range(x.shape[0]):
        a = x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(a, 4, axis=1)
        c = ref.sigmoid(f) * c + ref.sigmoid(i) * np.tanh(g)
        h = ref.sigmoid(o) * np.tanh(c)
        hs.append(h)
    return np.stack(hs)


def test_pytorch_gate_layout_maps_onto_caffe2_with_init_from_lstm_params():
    """(i, f, g, o) weights placed gate by gate give the same outputs."""
    rng = np.random.default_rng(5)
    w_ih, b_ih = rng.normal(size=(4 * H, D)), rng.normal(size=4 * H)
    w_hh, b_hh = rng.normal(size=(4 * H, H)), rng.normal(size=4 * H)
    model, outputs = build_lstm(return_params=True)
    workspace.RunNetOnce(model.param_init_net)
    InitFromLSTMParams(
        outputs[-1],
        {
            "input": gate_values(w_ih, b_ih, "ifgo"),
            "recurrent": gate_values(w_hh, b_hh, "ifgo"),
        },
    )
    x = feed_inputs()
    workspace.FeedBlob("seq_lengths", np.full(N, T, dtype=np.int32))
    workspace.RunNetOnce(model.net)
    expected = torch_style_lstm(
        x["input"].astype(np.float64), x["h0"][0], x["c0"][0], w_ih, b_ih, w_hh, b_hh
    )
    np.testing.assert_allclose(workspace.FetchBlob(outputs[0]), expected, rtol=2e-5, atol=2e-6)


def step_workspaces(scope="lstm"):
    scratch = workspace.C_Workspace().get_blob(scope + "/step_workspaces").value
    return [ws for ws in scratch.step_workspaces if ws is not None]


def test_forward_only_matches_training_outputs():
    train, train_out = build_lstm("train")
    infer, infer_out = build_lstm("infer", forward_only=True)
    rnn_op = [op for op in infer.net.Proto().op if op.type == "RecurrentNetwork"][0]
    assert not [a for a in rnn_op.arg if a.name == "backward_step_net"]
    workspace.RunNetOnce(train.param_init_net)
    feed_inputs()
    workspace.RunNetOnce(train.net)
    expected = [workspace.FetchBlob(o) for o in train_out]
    assert len(step_workspaces()) == T

    workspace.RunNetOnce(infer.net)  # same weights and inputs, same blob names
    for out, want in zip(infer_out, expected):
        np.testing.assert_array_equal(workspace.FetchBlob(out), want)


def test_forward_only_keeps_num_workspaces_whatever_the_length():
    model, outputs = build_lstm("long", forward_only=True)
    workspace.RunNetOnce(model.param_init_net)
    rng = np.random.default_rng(0)
    for length in (3, 50):
        workspace.FeedBlob("input", rng.uniform(-1, 1, (length, N, D)).astype(np.float32))
        workspace.FeedBlob("seq_lengths", np.full(N, length, dtype=np.int32))
        workspace.FeedBlob("h0", np.zeros((1, N, H), np.float32))
        workspace.FeedBlob("c0", np.zeros((1, N, H), np.float32))
        workspace.RunNetOnce(model.net)
        assert workspace.FetchBlob(outputs[0]).shape == (length, N, H)
        assert len(step_workspaces()) <= 2


def stored_blobs(scope="lstm"):
    """Blobs kept per timestep: local blobs of every step workspace."""
    return sum(len(ws.local_blob_names()) for ws in step_workspaces(scope))


def test_recompute_gives_identical_gradients_and_stores_fewer_blobs():
    results = {}
    for memory_optimization in (False, True):
        workspace.ResetWorkspace()
        model, outputs = build_lstm(
            "mem%d" % memory_optimization, memory_optimization=memory_optimization
        )
        loss = model.net.SumElements(outputs[0], "loss")
        grad_map = model.AddGradientOperators([loss])
        workspace.RunNetOnce(model.param_init_net)
        for p in model.params:  # same weights in both runs
            shape = workspace.FetchBlob(p).shape
            workspace.FeedBlob(
                p, np.random.default_rng(7).uniform(-0.5, 0.5, shape).astype(np.float32)
            )
        feed_inputs()
        workspace.RunNetOnce(model.net)
        grads = {
            str(b): workspace.FetchBlob(grad_map[b])
            for b in ["input", "h0", "c0"] + [str(p) for p in model.params]
        }
        results[memory_optimization] = (grads, stored_blobs())
        rnn_op = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"][0]
        recompute = [a for a in rnn_op.arg if a.name == "recompute_blobs_on_backward"][0]
        assert list(recompute.strings) == ([b"lstm/gates_t"] if memory_optimization else [])

    plain, optimized = results[False], results[True]
    for name, value in plain[0].items():
        np.testing.assert_array_equal(optimized[0][name], value, err_msg=name)
    assert optimized[1] < plain[1]
