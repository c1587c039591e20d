"""RecurrentNetwork over hand-built cells vs unrolled NumPy references.

Each test builds a forward and a backward step net op by op (as Caffe2's own
hypothesis tests did), runs the op and its gradient (made by the registered
gradient maker), and compares every output and every gradient with an
unrolled NumPy computation written here, then the gradients with central
finite differences of the op itself.
"""

import numpy as np
import pytest
from rnn_test_builders import (
    check_two_state_outputs,
    check_with_finite_differences,
    net,
    op,
    rnn_op,
    run_backward,
    run_forward,
    seeded_state_gradients,
)

from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument

T, N, D = 4, 2, 3
MUL_LINKS = [("hidden_t_prev", "hidden", 0), ("hidden_t", "hidden", 1), ("input_t", "input", 0)]
MUL_BACKWARD_LINKS = [
    ("hidden_t_prev_grad", "hidden_grad", 0),
    ("hidden_t_grad", "hidden_grad", 1),
    ("input_t_grad", "input_grad", 0),
]
HIDDEN_ALIASES = [("hidden", "hidden_all", 1), ("hidden", "hidden_last", -1)]


def mul_cell_op(as_text=True):
    """h_t = x_t * h_{t-1}; its backward written by hand."""
    step = net(
        "mul_step",
        [op("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"])],
        ["input_t", "hidden_t_prev"],
    )
    backward = net(
        "mul_step_backward",
        [
            op("Mul", ["hidden_t_grad", "hidden_t_prev"], ["input_t_grad"]),
            op("Mul", ["hidden_t_grad", "input_t"], ["hidden_t_prev_grad"]),
        ],
        ["hidden_t_grad", "hidden_t_prev", "input_t"],
    )
    return rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        backward,
        states=["hidden"],
        initial_ids=[1],
        links=MUL_LINKS,
        backward_links=MUL_BACKWARD_LINKS,
        aliases=HIDDEN_ALIASES,
        outputs_with_grads=[0, 1],
        as_text=as_text,
    )


def output_grads(rng, *shapes):
    return {j: rng.standard_normal(shape) for j, shape in enumerate(shapes)}


def fold_initial_gradient(dh0, h0):
    """The reference gradient of h0 in h0's own shape (1-D: summed over the batch)."""
    return dh0.sum(axis=0) if h0.ndim == 1 else dh0.reshape(h0.shape)


@pytest.mark.parametrize("h0_shape", [(D,), (N, D), (1, N, D)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("as_text", [True, False], ids=["text", "netdef"])
def test_mul_cell(h0_shape, as_text):
    rng = np.random.RandomState(1)
    x, h0 = rng.standard_normal((T, N, D)), rng.standard_normal(h0_shape)
    o = mul_cell_op(as_text)
    ws = run_forward(o, {"input": x, "h0": h0})

    h = np.empty((T + 1, N, D))
    h[0] = np.broadcast_to(h0.reshape(-1, D), (N, D))
    for t in range(T):
        h[t + 1] = x[t] * h[t]
    np.testing.assert_allclose(ws.fetch("hidden_all"), h[1:], rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("hidden_last"), h[T:], rtol=1e-12)

    g = output_grads(rng, (T, N, D), (1, N, D))
    grads = run_backward(o, ws, g)
    dh = np.zeros((T + 1, N, D))
    dh[1:] += g[0]
    dh[T] += g[1][0]
    dx = np.empty_like(x)
    for t in range(T - 1, -1, -1):
        dx[t] = dh[t + 1] * h[t]
        dh[t] += dh[t + 1] * x[t]
    np.testing.assert_allclose(grads["input"], dx, rtol=1e-12)
    np.testing.assert_allclose(grads["h0"], fold_initial_gradient(dh[0], h0), rtol=1e-12)
    check_with_finite_differences(o, {"input": x, "h0": h0}, ["input", "h0"], (0, 1))


def test_sum_then_mul_cell():
    """s_t = x_t + h_{t-1}; h_t = x_t * s_t. The recurrent gradient comes out of
    a pass-through Sum, so the backward link reads ``s_t_grad`` directly."""
    step = net(
        "sm_step",
        [
            op("Sum", ["input_t", "hidden_t_prev"], ["s_t"]),
            op("Mul", ["input_t", "s_t"], ["hidden_t"]),
        ],
        ["input_t", "hidden_t_prev"],
    )
    backward = net(
        "sm_step_backward",
        [
            op("Mul", ["hidden_t_grad", "s_t"], ["input_t_grad_direct"]),
            op("Mul", ["hidden_t_grad", "input_t"], ["s_t_grad"]),
            op("Sum", ["s_t_grad", "input_t_grad_direct"], ["input_t_grad"]),
        ],
        ["hidden_t_grad", "input_t", "s_t"],
    )
    o = rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        backward,
        states=["hidden"],
        initial_ids=[1],
        links=MUL_LINKS,
        backward_links=[
            ("s_t_grad", "hidden_grad", 0),
            ("hidden_t_grad", "hidden_grad", 1),
            ("input_t_grad", "input_grad", 0),
        ],
        aliases=HIDDEN_ALIASES,
        outputs_with_grads=[0, 1],
    )
    rng = np.random.RandomState(2)
    x, h0 = rng.standard_normal((T, N, D)), rng.standard_normal((N, D))
    ws = run_forward(o, {"input": x, "h0": h0})
    h = [h0]
    for t in range(T):
        h.append(x[t] * (x[t] + h[t]))
    np.testing.assert_allclose(ws.fetch("hidden_all"), np.stack(h[1:]), rtol=1e-12)

    g = output_grads(rng, (T, N, D), (1, N, D))
    grads = run_backward(o, ws, g)
    dh = np.zeros((T + 1, N, D))
    dh[1:] += g[0]
    dh[T] += g[1][0]
    dx = np.empty_like(x)
    for t in range(T - 1, -1, -1):
        dx[t] = dh[t + 1] * (2 * x[t] + h[t])
        dh[t] += dh[t + 1] * x[t]
    np.testing.assert_allclose(grads["input"], dx, rtol=1e-12)
    np.testing.assert_allclose(grads["h0"], dh[0], rtol=1e-12)
    check_with_finite_differences(o, {"input": x, "h0": h0}, ["input", "h0"], (0, 1))


def two_state_op():
    """u = x_t * w; c_t = u * h_{t-1}; h_t = c_t * c_{t-1}. Parameter w; the
    cell writes w's step gradient to ``w_cell_grad`` (named by param_grads)."""
    step = net(
        "two_step",
        [
            op("Mul", ["input_t", "w"], ["u_t"]),
            op("Mul", ["u_t", "hidden_t_prev"], ["cell_t"]),
            op("Mul", ["cell_t", "cell_t_prev"], ["hidden_t"]),
        ],
        ["input_t", "hidden_t_prev", "cell_t_prev", "w"],
    )
    backward = net(
        "two_step_backward",
        [
            op("Mul", ["hidden_t_grad", "cell_t_prev"], ["cell_t_grad_inner"]),
            op("Mul", ["hidden_t_grad", "cell_t"], ["cell_t_prev_grad"]),
            op("Sum", ["cell_t_grad", "cell_t_grad_inner"], ["cell_t_grad_total"]),
            op("Mul", ["cell_t_grad_total", "hidden_t_prev"], ["u_t_grad"]),
            op("Mul", ["cell_t_grad_total", "u_t"], ["hidden_t_prev_grad"]),
            op("Mul", ["u_t_grad", "w"], ["input_t_grad"]),
            op("Mul", ["u_t_grad", "input_t"], ["w_cell_grad"]),
        ],
        [
            "hidden_t_grad",
            "cell_t_grad",
            "cell_t",
            "cell_t_prev",
            "hidden_t_prev",
            "u_t",
            "w",
            "input_t",
        ],
    )
    links = [
        ("hidden_t_prev", "hidden", 0),
        ("hidden_t", "hidden", 1),
        ("cell_t_prev", "cell", 0),
        ("cell_t", "cell", 1),
        ("input_t", "input", 0),
    ]
    backward_links = [
        ("hidden_t_prev_grad", "hidden_grad", 0),
        ("hidden_t_grad", "hidden_grad", 1),
        ("cell_t_prev_grad", "cell_grad", 0),
        ("cell_t_grad", "cell_grad", 1),
        ("input_t_grad", "input_grad", 0),
    ]
    return rnn_op(
        ["input", "h0", "c0", "w"],
        ["hidden_all", "hidden_last", "cell_all", "cell_last", "step_workspaces"],
        step,
        backward,
        states=["hidden", "cell"],
        initial_ids=[1, 2],
        links=links,
        backward_links=backward_links,
        aliases=HIDDEN_ALIASES + [("cell", "cell_all", 1), ("cell", "cell_last", -1)],
        params=[3],
        param_grads=["w_cell_grad"],
        outputs_with_grads=[0, 1, 2, 3],
    )


def test_two_state_cell_with_parameter():
    rng = np.random.RandomState(3)
    x = rng.uniform(0.5, 1.2, (T, N, D))
    h0, c0 = rng.uniform(0.5, 1.2, (N, D)), rng.uniform(0.5, 1.2, (D,))
    w = rng.uniform(0.5, 1.2, (1, N, D))
    feeds = {"input": x, "h0": h0, "c0": c0, "w": w}
    o = two_state_op()
    ws = run_forward(o, feeds)
    h, c = [h0], [np.tile(c0, (N, 1))]
    for t in range(T):
        c.append(x[t] * w[0] * h[t])
        h.append(c[t + 1] * c[t])
    h, c = np.stack(h), np.stack(c)
    check_two_state_outputs(ws, h, c, rtol=1e-12)

    g = output_grads(rng, (T, N, D), (1, N, D), (T, N, D), (1, N, D))
    grads = run_backward(o, ws, g)
    gh, gc = seeded_state_gradients(h, c, g)
    dx, dw = np.empty_like(x), np.zeros_like(w[0])
    for t in range(T - 1, -1, -1):
        dc_new = gc[t + 1] + gh[t + 1] * c[t]
        gc[t] += gh[t + 1] * c[t + 1]
        du = dc_new * h[t]
        gh[t] += dc_new * x[t] * w[0]
        dx[t] = du * w[0]
        dw += du * x[t]
    np.testing.assert_allclose(grads["input"], dx, rtol=1e-11)
    np.testing.assert_allclose(grads["w"], dw[None], rtol=1e-11)
    np.testing.assert_allclose(grads["h0"], gh[0], rtol=1e-11)
    np.testing.assert_allclose(grads["c0"], gc[0].sum(axis=0), rtol=1e-11)
    check_with_finite_differences(o, feeds, ["input", "w", "h0", "c0"], (0, 1, 2, 3))


def window_op(k=2, zero_tail_rows=True):
    """h_t = x_t * (h_{t-2} + h_{t-1}): k = 2 initial rows, a window-2 link.

    Caffe2 zeroed only the last row of the states gradient, so row T (read by
    the window's accumulating Sum at t = T - 1) kept the previous run's value;
    ``caffe2rnn_zero_tail_rows`` zeroes all k rows (see
    ``test_one_zeroed_row_makes_a_second_backward_run_differ``)."""
    step = net(
        "win_step",
        [
            op("ReduceFrontSum", ["window_t"], ["window_sum_t"]),
            op("Mul", ["input_t", "window_sum_t"], ["hidden_t"], broadcast=1),
        ],
        ["input_t", "window_t"],
    )
    # Row t is first reached (backward) as window row 0: written; row t + 1 was
    # written by step t + 1 and is accumulated into.
    backward = net(
        "win_step_backward",
        [
            op("Mul", ["hidden_t_grad", "window_sum_t"], ["input_t_grad"], broadcast=1),
            op("Mul", ["hidden_t_grad", "input_t"], ["window_sum_t_grad"]),
            op("Copy", ["window_sum_t_grad"], ["window_row0_grad"]),
            op("Sum", ["window_row1_grad", "window_sum_t_grad"], ["window_row1_grad"]),
        ],
        ["hidden_t_grad", "window_sum_t", "input_t"],
    )
    return rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        backward,
        states=["hidden"],
        initial_ids=[1],
        links=[("window_t", "hidden", 0, k), ("hidden_t", "hidden", k), ("input_t", "input", 0)],
        backward_links=[
            ("window_row0_grad", "hidden_grad", 0),
            ("window_row1_grad", "hidden_grad", 1),
            ("hidden_t_grad", "hidden_grad", k),
            ("input_t_grad", "input_grad", 0),
        ],
        aliases=[("hidden", "hidden_all", k), ("hidden", "hidden_last", -1)],
        outputs_with_grads=[1],
        **({"caffe2rnn_zero_tail_rows": 1} if zero_tail_rows else {}),
    )


@pytest.mark.parametrize("seq_len", [1, 2, 5])
def test_several_initial_rows_with_a_window_link(seq_len):
    rng = np.random.RandomState(4)
    x, h0 = rng.uniform(0.5, 1.1, (seq_len, N, D)), rng.standard_normal((2, N, D))
    o = window_op()
    ws = run_forward(o, {"input": x, "h0": h0})
    h = list(h0)
    for t in range(seq_len):
        h.append(x[t] * (h[t] + h[t + 1]))
    h = np.stack(h)
    np.testing.assert_allclose(ws.fetch("hidden_all"), h[2:], rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("hidden_last"), h[-1:], rtol=1e-12)

    g_last = rng.standard_normal((1, N, D))
    grads = run_backward(o, ws, {1: g_last})
    gh = np.zeros_like(h)
    gh[-1] = g_last[0]
    dx = np.empty_like(x)
    for t in range(seq_len - 1, -1, -1):
        dx[t] = gh[t + 2] * (h[t] + h[t + 1])
        gh[t] += gh[t + 2] * x[t]
        gh[t + 1] += gh[t + 2] * x[t]
    np.testing.assert_allclose(grads["input"], dx, rtol=1e-11)
    np.testing.assert_allclose(grads["h0"], gh[:2], rtol=1e-11)
    check_with_finite_differences(o, {"input": x, "h0": h0}, ["input", "h0"], (1,))


def test_one_zeroed_row_makes_a_second_backward_run_differ():
    """Caffe2's rule (zero the last row only): with k = 2 initial rows the
    second backward run adds the first run's row T again; the option does not."""
    rng = np.random.RandomState(5)
    x, h0 = rng.uniform(0.5, 1.1, (3, N, D)), rng.standard_normal((2, N, D))
    g_last = rng.standard_normal((1, N, D))
    runs = {}
    for zero_tail_rows in (False, True):
        o = window_op(zero_tail_rows=zero_tail_rows)
        ws = run_forward(o, {"input": x, "h0": h0})
        ws.feed("hidden_grad", np.zeros((3 + 2, N, D)))  # a deterministic first run
        first = {k: v.copy() for k, v in run_backward(o, ws, {1: g_last}).items()}
        second = run_backward(o, ws, {1: g_last})
        runs[zero_tail_rows] = first, second
    (c_first, c_second), (z_first, z_second) = runs[False], runs[True]
    np.testing.assert_allclose(c_first["h0"], z_first["h0"], rtol=1e-12)
    np.testing.assert_allclose(z_second["h0"], z_first["h0"], rtol=1e-12)
    assert np.abs(c_second["h0"] - c_first["h0"]).max() > 1e-3
    np.testing.assert_allclose(c_first["input"], z_first["input"], rtol=1e-12)


def lstm_op():
    """Caffe2's LSTM step: gates = FC(h_{t-1}) + x_t; LSTMUnit. Hand-written
    backward: LSTMUnitGradient, FCGradient, and the sum of both h_{t-1} grads."""
    step = net(
        "lstm_step",
        [
            op("FC", ["hidden_t_prev", "gates_w", "gates_b"], ["gates_t"], axis=2),
            op("Sum", ["gates_t", "input_t"], ["gates_t"]),
            op(
                "LSTMUnit",
                ["hidden_t_prev", "cell_t_prev", "gates_t", "seq_lengths", "timestep"],
                ["hidden_t", "cell_t"],
            ),
        ],
        ["hidden_t_prev", "cell_t_prev", "input_t", "gates_w", "gates_b", "seq_lengths"],
    )
    backward = net(
        "lstm_step_backward",
        [
            op(
                "LSTMUnitGradient",
                [
                    "hidden_t_prev",
                    "cell_t_prev",
                    "gates_t",
                    "seq_lengths",
                    "timestep",
                    "hidden_t",
                    "cell_t",
                    "hidden_t_grad",
                    "cell_t_grad",
                ],
                ["hidden_t_prev_grad_unit", "cell_t_prev_grad", "gates_t_grad"],
            ),
            op(
                "FCGradient",
                ["hidden_t_prev", "gates_w", "gates_t_grad"],
                ["gates_w_grad", "gates_b_grad", "hidden_t_prev_grad_fc"],
                axis=2,
            ),
            op("Sum", ["hidden_t_prev_grad_unit", "hidden_t_prev_grad_fc"], ["hidden_t_prev_grad"]),
        ],
        [
            "hidden_t_prev",
            "cell_t_prev",
            "gates_t",
            "seq_lengths",
            "hidden_t",
            "cell_t",
            "hidden_t_grad",
            "cell_t_grad",
            "gates_w",
        ],
    )
    links = [
        ("hidden_t_prev", "hidden", 0),
        ("hidden_t", "hidden", 1),
        ("cell_t_prev", "cell", 0),
        ("cell_t", "cell", 1),
        ("input_t", "input", 0),
    ]
    backward_links = [
        ("hidden_t_prev_grad", "hidden_grad", 0),
        ("hidden_t_grad", "hidden_grad", 1),
        ("cell_t_prev_grad", "cell_grad", 0),
        ("cell_t_grad", "cell_grad", 1),
        ("gates_t_grad", "input_grad", 0),
    ]
    return rnn_op(
        ["input", "h0", "c0", "gates_w", "gates_b", "seq_lengths"],
        ["hidden_all", "hidden_last", "cell_all", "cell_last", "step_workspaces"],
        step,
        backward,
        states=["hidden", "cell"],
        initial_ids=[1, 2],
        links=links,
        backward_links=backward_links,
        aliases=HIDDEN_ALIASES + [("cell", "cell_all", 1), ("cell", "cell_last", -1)],
        params=[3, 4],
        outputs_with_grads=[0, 1, 2, 3],
    )


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_lstm_unit_cell():
    rng = np.random.RandomState(5)
    lengths = np.array([T, T - 1], dtype=np.int32)
    feeds = {
        "input": rng.standard_normal((T, N, 4 * D)),
        "h0": rng.standard_normal((1, N, D)),
        "c0": rng.standard_normal((1, N, D)),
        "gates_w": rng.standard_normal((4 * D, D)) * 0.5,
        "gates_b": rng.standard_normal(4 * D) * 0.5,
        "seq_lengths": lengths,
    }
    x, W, b = feeds["input"], feeds["gates_w"], feeds["gates_b"]
    o = lstm_op()
    ws = run_forward(o, feeds)

    h, c, acts = [feeds["h0"][0]], [feeds["c0"][0]], []
    for t in range(T):
        z = x[t] + h[t] @ W.T + b
        i, f, og = sigmoid(z[:, :D]), sigmoid(z[:, D : 2 * D]), sigmoid(z[:, 2 * D : 3 * D])
        g = np.tanh(z[:, 3 * D :])
        valid = (t < lengths)[:, None]
        c_new = np.where(valid, f * c[t] + i * g, c[t])
        h.append(np.where(valid, og * np.tanh(c_new), h[t]))
        c.append(c_new)
        acts.append((i, f, og, g, valid))
    h, c = np.stack(h), np.stack(c)
    check_two_state_outputs(ws, h, c, rtol=1e-10)

    go = output_grads(rng, (T, N, D), (1, N, D), (T, N, D), (1, N, D))
    grads = run_backward(o, ws, go)
    gh, gc = seeded_state_gradients(h, c, go)
    dx, dW, db = np.empty_like(x), np.zeros_like(W), np.zeros_like(b)
    for t in range(T - 1, -1, -1):
        i, f, og, g, valid = acts[t]
        tc = np.tanh(c[t + 1])
        dc = gc[t + 1] + gh[t + 1] * og * (1 - tc**2)
        dz = np.concatenate(
            [
                dc * g * i * (1 - i),
                dc * c[t] * f * (1 - f),
                gh[t + 1] * tc * og * (1 - og),
                dc * i * (1 - g**2),
            ],
            axis=1,
        )
        dz = np.where(valid, dz, 0)
        dx[t] = dz
        dW += dz.T @ h[t]
        db += dz.sum(axis=0)
        gh[t] += np.where(valid, dz @ W, gh[t + 1])
        gc[t] += np.where(valid, dc * f, gc[t + 1])
    for name, ref in [
        ("input", dx),
        ("gates_w", dW),
        ("gates_b", db),
        ("h0", gh[:1]),
        ("c0", gc[:1]),
    ]:
        np.testing.assert_allclose(grads[name], ref, rtol=1e-9, atol=1e-12, err_msg=name)
    check_with_finite_differences(
        o, feeds, ["input", "gates_w", "gates_b", "h0", "c0"], (0, 1, 2, 3)
    )


@pytest.mark.parametrize("executor", [0, 1], ids=["op_by_op", "executor"])
def test_rows_a_windowed_link_leaves_unwritten_are_zeros(executor):
    # Link hidden_t spans rows t+1 .. t+2 (window 2), but Mul writes one row:
    # Resize keeps the front of the view's buffer (Caffe2's keep-on-shrink),
    # so step t writes row t+1 only and the last row is written by no step.
    # Caffe2 left it uninitialised; here it is zero, whatever np.empty held.
    o = mul_cell_op()
    links = [l if l[0] != "hidden_t" else ("hidden_t", "hidden", 1, 2) for l in MUL_LINKS]
    for arg in o.arg:
        if arg.name == "link_window":
            arg.ints[:] = [l[3] if len(l) > 3 else 1 for l in links]
        elif arg.name == "enable_rnn_executor":
            arg.i = executor
    if "enable_rnn_executor" not in [a.name for a in o.arg]:
        o.arg.add().CopyFrom(MakeArgument("enable_rnn_executor", executor))
    rng = np.random.RandomState(3)
    x, h0 = rng.standard_normal((T, N, D)), rng.standard_normal((2, N, D))
    ws = Workspace(name="windowed")
    ws.feed("hidden", np.full((T + 2, N, D), np.nan))  # what an allocator might leave
    ws = run_forward(o, {"input": x, "h0": h0}, ws)
    expected = [h0[0]]
    for t in range(T):
        expected.append(x[t] * expected[-1])
    np.testing.assert_allclose(ws.fetch("hidden_all")[:T], np.stack(expected[1:]))
    np.testing.assert_array_equal(ws.fetch("hidden_all")[T], np.zeros((N, D)))
