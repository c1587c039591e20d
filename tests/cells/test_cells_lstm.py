"""recurrent.LSTM against the unrolled NumPy LSTM with hand-written BPTT."""

import cell_harness as h
import numpy as np
import numpy_cells as ref
import pytest

from caffe2rnn import workspace
from caffe2rnn.recurrent import LSTM

# (T, N, D, H, seq_lengths, initial-state ndim)
SHAPES = [
    (1, 1, 2, 3, [1], 3),
    (3, 2, 4, 5, [3, 2], 3),
    (4, 3, 3, 2, [4, 1, 2], 2),
    (5, 4, 2, 3, [5, 5, 3, 0], 1),
]
OUTPUT_SETS = [(0,), (1,), (0, 1, 2, 3), (2, 3)]
# output index → name of the gradient in the reference's vocabulary
OUTPUT_KEYS = ["h_all", "h_last", "c_all", "c_last"]


def lstm_cell(model, outputs_with_grads, D, H, **kw):
    return LSTM(
        model,
        "input",
        "seq_lengths",
        ("h0", "c0"),
        D,
        H,
        scope="lstm",
        outputs_with_grads=outputs_with_grads,
        **kw,
    )


def initial(rng, N, H, ndim):
    shape = {1: (H,), 2: (N, H), 3: (1, N, H)}[ndim]
    return rng.uniform(-1, 1, size=shape)


def run_case(T, N, D, H, lengths, ndim, outputs_with_grads, seed=0, **kw):
    rng = np.random.default_rng(seed)
    model, outputs, grad_map = h.build(lstm_cell, outputs_with_grads, D=D, H=H, **kw)
    p = h.init_params(model, rng)
    x = rng.uniform(-1, 1, size=(T, N, D))
    h0, c0 = initial(rng, N, H, ndim), initial(rng, N, H, ndim)
    seq_lengths = np.array(lengths, dtype=np.int32)
    given = {j: rng.standard_normal(workspace_shape(j, T, N, H)) for j in outputs_with_grads}
    h.feed({"input": x, "h0": h0, "c0": c0, "seq_lengths": seq_lengths})
    h.feed({str(outputs[j]) + "_given_grad": g for j, g in given.items()})
    workspace.RunNetOnce(model.net)
    return dict(
        model=model,
        outputs=outputs,
        grad_map=grad_map,
        p=p,
        x=x,
        h0=h0,
        c0=c0,
        seq_lengths=seq_lengths,
        given=given,
    )


def workspace_shape(j, T, N, H):
    return (T, N, H) if j in (0, 2) else (1, N, H)


def reference(case, forget_bias=0.0, drop_states=False):
    p = case["p"]
    fwd = ref.lstm_forward(
        case["x"],
        case["h0"],
        case["c0"],
        p["lstm/i2h_w"],
        p["lstm/i2h_b"],
        p["lstm/gates_t_w"],
        p["lstm/gates_t_b"],
        case["seq_lengths"],
        forget_bias,
        drop_states,
    )
    grads = {OUTPUT_KEYS[j]: (g if j in (0, 2) else g[0]) for j, g in case["given"].items()}
    back = ref.lstm_backward(
        case["x"],
        case["h0"],
        case["c0"],
        p["lstm/i2h_w"],
        p["lstm/gates_t_w"],
        fwd,
        grads,
        drop_states,
    )
    return fwd, back


def check_outputs(case, fwd):
    got = h.fetch(case["outputs"])
    hidden_all, hidden_last, cell_all, cell_last = [got[str(o)] for o in case["outputs"]]
    np.testing.assert_allclose(hidden_all, fwd["h_all"], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(cell_all, fwd["c_all"], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(hidden_last[0], fwd["h_all"][-1], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(cell_last[0], fwd["c_all"][-1], rtol=1e-6, atol=1e-12)


def check_gradients(case, back):
    gm = case["grad_map"]
    pairs = [
        ("input", "x"),
        ("h0", "h0"),
        ("c0", "c0"),
        ("lstm/i2h_w", "w_x"),
        ("lstm/i2h_b", "b_x"),
        ("lstm/gates_t_w", "w_h"),
        ("lstm/gates_t_b", "b_h"),
    ]
    for blob, key in pairs:
        got = workspace.FetchBlob(str(gm[blob]))
        np.testing.assert_allclose(
            got, back[key], rtol=1e-6, atol=1e-10, err_msg="gradient of %s" % blob
        )


@pytest.mark.parametrize("T,N,D,H,lengths,ndim", SHAPES)
@pytest.mark.parametrize("outputs_with_grads", OUTPUT_SETS)
def test_lstm_outputs_and_gradients_match_reference(T, N, D, H, lengths, ndim, outputs_with_grads):
    case = run_case(T, N, D, H, lengths, ndim, outputs_with_grads)
    fwd, back = reference(case)
    check_outputs(case, fwd)
    check_gradients(case, back)


@pytest.mark.parametrize("forget_bias,drop_states", [(1.0, False), (0.0, True), (-0.5, True)])
def test_lstm_forget_bias_and_drop_states(forget_bias, drop_states):
    case = run_case(
        4, 3, 2, 3, [4, 2, 1], 3, (0, 1, 2, 3), forget_bias=forget_bias, drop_states=drop_states
    )
    fwd, back = reference(case, forget_bias, drop_states)
    check_outputs(case, fwd)
    check_gradients(case, back)


def test_lstm_gradients_match_finite_differences():
    """The net's own loss, perturbed: checks the whole chain end to end."""
    case = run_case(3, 2, 2, 2, [3, 2], 3, (0, 3))
    net = case["model"].net
    given = [case["given"][0], case["given"][3]]
    outputs = [case["outputs"][0], case["outputs"][3]]
    for blob in ["input", "h0", "lstm/gates_t_w", "lstm/i2h_b"]:
        analytic = workspace.FetchBlob(str(case["grad_map"][blob]))
        value = workspace.FetchBlob(blob)

        def loss():
            workspace.FeedBlob(blob, value)
            workspace.RunNetOnce(net)
            return h.loss_of(outputs, given)

        numeric = ref.numeric_gradient(loss, value)
        np.testing.assert_allclose(
            analytic, numeric, rtol=1e-6, atol=1e-8, err_msg="finite differences for %s" % blob
        )


def test_reference_bptt_matches_finite_differences():
    """The hand-written reference backward is itself checked numerically."""
    rng = np.random.default_rng(3)
    T, N, D, H = 3, 2, 2, 3
    x, h0, c0 = rng.normal(size=(T, N, D)), rng.normal(size=(N, H)), rng.normal(size=(H,))
    w_x, b_x = rng.normal(size=(4 * H, D)), rng.normal(size=4 * H)
    w_h, b_h = rng.normal(size=(4 * H, H)), rng.normal(size=4 * H)
    lengths = np.array([3, 1])
    g_all, g_last = rng.normal(size=(T, N, H)), rng.normal(size=(N, H))

    def loss():
        fwd = ref.lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, lengths, 0.3)
        return np.sum(fwd["h_all"] * g_all) + np.sum(fwd["c_all"][-1] * g_last)

    fwd = ref.lstm_forward(x, h0, c0, w_x, b_x, w_h, b_h, lengths, 0.3)
    back = ref.lstm_backward(x, h0, c0, w_x, w_h, fwd, {"h_all": g_all, "c_last": g_last})
    for value, key in [(x, "x"), (h0, "h0"), (c0, "c0"), (w_x, "w_x"), (b_h, "b_h")]:
        np.testing.assert_allclose(
            back[key], ref.numeric_gradient(loss, value), rtol=1e-6, atol=1e-8, err_msg=key
        )


def test_running_twice_gives_identical_results():
    case = run_case(4, 2, 3, 2, [4, 3], 3, (0, 1, 2, 3))
    names = [str(o) for o in case["outputs"]] + [
        str(case["grad_map"][b]) for b in ("input", "h0", "lstm/gates_t_w")
    ]
    first = h.fetch(names)
    workspace.RunNetOnce(case["model"].net)
    second = h.fetch(names)
    for name in names:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
