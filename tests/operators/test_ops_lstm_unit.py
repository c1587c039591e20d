"""LSTMUnit / LSTMUnitGradient: forward against an independent per-row NumPy
reference (masking, forget_bias, drop_states, both input forms), outputs
written into existing memory, gradients against finite differences, the
gradient maker, and bad input."""

import warnings

import numpy as np
import pytest
from ops_testing import gradient_of, random

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.operators.lstm_unit import lstm_unit_forward
from caffe2rnn.runtime import Workspace

pytestmark = pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)

N, D = 3, 2
FULL = ["h_prev", "c_prev", "gates", "seq_lengths", "timestep"]
OLD = FULL[1:]  # E0-E1: no hidden_t_prev


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(h_prev, c_prev, gates, seq_lengths, t, forget_bias=0.0, drop_states=False):
    """One LSTM step, one batch row at a time (h_prev None: the 4-input form)."""
    h, c = np.empty_like(c_prev), np.empty_like(c_prev)
    for n in range(c_prev.shape[1]):
        x = gates[0, n]
        if t < seq_lengths[n]:
            i, f = sigmoid(x[:D]), sigmoid(x[D : 2 * D] + forget_bias)
            o, g = sigmoid(x[2 * D : 3 * D]), np.tanh(x[3 * D :])
            c[0, n] = f * c_prev[0, n] + i * g
            h[0, n] = o * np.tanh(c[0, n])
        else:
            c[0, n] = 0 if drop_states else c_prev[0, n]
            h[0, n] = 0 if drop_states or h_prev is None else h_prev[0, n]
    return h, c


def step_inputs(dtype=np.float32, seq_lengths=(3, 1, 2), t=1, seed=0):
    return {
        "h_prev": random((1, N, D), seed, dtype),
        "c_prev": random((1, N, D), seed + 1, dtype),
        "gates": random((1, N, 4 * D), seed + 2, dtype, -3, 3),
        "seq_lengths": np.array(seq_lengths, np.int32),
        "timestep": np.array([t], np.int32),
    }


def run_step(inputs, ws=None, **args):
    ws = ws or Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    ws.run_operator_once(
        core.CreateOperator("LSTMUnit", list(inputs), ["hidden_t", "cell_t"], **args)
    )
    return ws.fetch("hidden_t"), ws.fetch("cell_t")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "args", [{}, {"forget_bias": 1.0}, {"drop_states": 1}, {"forget_bias": -0.5, "drop_states": 1}]
)
@pytest.mark.parametrize("t", [0, 1, 2, 3])
def test_forward_matches_reference(dtype, args, t):
    inputs = step_inputs(dtype, t=t)
    h, c = run_step(inputs, **args)
    assert h.dtype == dtype and h.shape == c.shape == (1, N, D)
    ref_h, ref_c = reference(
        *[inputs[k] for k in FULL[:3]],
        inputs["seq_lengths"],
        t,
        args.get("forget_bias", 0.0),
        args.get("drop_states", 0),
    )
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(h, ref_h, rtol=tol, atol=tol)
    np.testing.assert_allclose(c, ref_c, rtol=tol, atol=tol)


@pytest.mark.parametrize("drop_states", [0, 1])
def test_four_input_form_zeroes_hidden_of_finished_rows(drop_states):
    inputs = step_inputs(t=1)
    del inputs["h_prev"]
    h, c = run_step(inputs, drop_states=drop_states)
    ref_h, ref_c = reference(
        None, inputs["c_prev"], inputs["gates"], inputs["seq_lengths"], 1, drop_states=drop_states
    )
    np.testing.assert_allclose(h, ref_h, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(c, ref_c, rtol=1e-6, atol=1e-7)
    assert (h[0, 1] == 0).all()  # seq_lengths[1] = 1 <= t


def test_outputs_are_written_into_the_states_tensors():
    """In a recurrent net hidden_t/cell_t are rows of the (T+1, N, D) states."""
    ws = Workspace()
    states_h = np.zeros((3, N, D), np.float32)
    states_c = np.zeros((3, N, D), np.float32)
    ws.create_blob("hidden_t").value = states_h[1:2]
    ws.create_blob("cell_t").value = states_c[1:2]
    inputs = step_inputs(t=0)
    h, c = run_step(inputs, ws)
    np.testing.assert_array_equal(states_h[1], h[0])
    np.testing.assert_array_equal(states_c[1], c[0])
    assert not states_h[2].any() and not states_h[0].any()


def test_kernel_function_writes_into_given_buffers():
    inputs = step_inputs(np.float64, t=1)
    h_out = np.full((N, D), np.nan)
    c_out = np.full((N, D), np.nan)
    lstm_unit_forward(
        inputs["h_prev"][0],
        inputs["c_prev"][0],
        inputs["gates"][0],
        inputs["seq_lengths"],
        1,
        0.0,
        False,
        h_out,
        c_out,
    )
    ref_h, ref_c = reference(*[inputs[k] for k in FULL[:3]], inputs["seq_lengths"], 1)
    np.testing.assert_allclose(h_out, ref_h[0], rtol=1e-12)
    np.testing.assert_allclose(c_out, ref_c[0], rtol=1e-12)


def test_saturated_gates_give_finite_results():
    inputs = step_inputs(t=0)
    inputs["gates"] = np.full((1, N, 4 * D), 200.0, np.float32)
    inputs["gates"][0, 0] = -200.0
    with warnings.catch_warnings(), np.errstate(over="warn", invalid="raise"):
        warnings.simplefilter("error")  # no overflow warning reaches the user
        h, c = run_step(inputs)
    assert np.isfinite(h).all() and np.isfinite(c).all()


# --- gradients ---------------------------------------------------------------------
@pytest.mark.parametrize("args", [{}, {"forget_bias": 0.7}, {"drop_states": 1}])
@pytest.mark.parametrize("t", [0, 1, 2])
def test_gradients_against_finite_differences(args, t):
    inputs = step_inputs(np.float64, t=t, seed=3)
    op = core.CreateOperator("LSTMUnit", FULL, ["hidden_t", "cell_t"], **args)
    for index in range(3):
        assert_gradient_close(op, list(inputs.values()), index, outputs_with_grads=(0, 1))


@pytest.mark.parametrize("drop_states", [0, 1])
def test_four_input_form_gradients(drop_states):
    inputs = step_inputs(np.float64, t=1, seed=5)
    del inputs["h_prev"]
    op = core.CreateOperator("LSTMUnit", OLD, ["hidden_t", "cell_t"], drop_states=drop_states)
    for index in range(2):
        assert_gradient_close(op, list(inputs.values()), index, outputs_with_grads=(0, 1))


def test_gradient_maker_five_inputs_copies_arguments():
    ops, g_input = gradient_of(
        "LSTMUnit", FULL, ["hidden_t", "cell_t"], forget_bias=1.0, drop_states=True
    )
    assert ops == [
        (
            "LSTMUnitGradient",
            "",
            FULL + ["hidden_t", "cell_t", "hidden_t_grad", "cell_t_grad"],
            ["h_prev_grad", "c_prev_grad", "gates_grad"],
            [("forget_bias", 1.0), ("drop_states", 1)],
            True,
        )
    ]
    assert g_input == ["h_prev_grad", "c_prev_grad", "gates_grad", None, None]


def test_gradient_maker_four_inputs():
    ops, g_input = gradient_of("LSTMUnit", OLD, ["hidden_t", "cell_t"])
    assert ops == [
        (
            "LSTMUnitGradient",
            "",
            OLD + ["hidden_t", "cell_t", "hidden_t_grad", "cell_t_grad"],
            ["c_prev_grad", "gates_grad"],
            [],
            True,
        )
    ]
    assert g_input == ["c_prev_grad", "gates_grad", None, None]


@pytest.mark.parametrize("g_output", [["hidden_t_grad", None], [None, "cell_t_grad"]])
def test_gradient_maker_needs_both_output_gradients(g_output):
    with pytest.raises(GradientError, match="not a dense gradient"):
        gradient_of("LSTMUnit", FULL, ["hidden_t", "cell_t"], g_output)


def test_gradient_op_passes_gradients_of_finished_rows_through():
    inputs = step_inputs(np.float64, seq_lengths=(1, 1, 1), t=1)
    ws = Workspace()
    dh, dc = random((1, N, D), 8, np.float64), random((1, N, D), 9, np.float64)
    h, c = run_step(inputs, ws)
    ws.feed("hidden_t_grad", dh)
    ws.feed("cell_t_grad", dc)
    ws.run_operator_once(
        core.CreateOperator(
            "LSTMUnitGradient",
            FULL + ["hidden_t", "cell_t", "hidden_t_grad", "cell_t_grad"],
            ["dh", "dc", "dg"],
        )
    )
    np.testing.assert_array_equal(ws.fetch("dh"), dh)
    np.testing.assert_array_equal(ws.fetch("dc"), dc)
    assert not ws.fetch("dg").any()


# --- bad input ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"gates": random((1, N, 12))}, ShapeError, r"'gates'.*\(1, 3, 8\).*4 x cell_t_prev"),
        ({"c_prev": random((N, D))}, ShapeError, r"'c_prev'.*\(1, N, D\)"),
        ({"h_prev": random((1, N, D + 1))}, ShapeError, "'h_prev'"),
        (
            {"seq_lengths": np.array([1, 2, 3], np.int64)},
            DTypeError,
            "'seq_lengths'.*int32 of size N = 3",
        ),
        ({"seq_lengths": np.array([1, 2], np.int32)}, DTypeError, "'seq_lengths'"),
        ({"timestep": np.array([1], np.int64)}, DTypeError, "'timestep'.*int32 tensor"),
        ({"timestep": np.zeros(0, np.int32)}, DTypeError, "'timestep'"),
        ({"gates": random((1, N, 4 * D), dtype=np.float64)}, DTypeError, "'gates'"),
    ],
)
def test_bad_inputs_raise_before_writing(change, error, match):
    inputs = dict(step_inputs(), **change)
    ws = Workspace()
    with pytest.raises(error, match=match):
        run_step(inputs, ws)
    assert not ws.has_blob("hidden_t") and not ws.has_blob("cell_t")


def test_gradient_op_checks_output_count_and_gradient_shapes():
    ws = Workspace()
    inputs = step_inputs()
    run_step(inputs, ws)
    ws.feed("dh", random((1, N, D)))
    ws.feed("dc_bad", random((1, N, D + 1)))
    grad_inputs = FULL + ["hidden_t", "cell_t", "dh"]
    with pytest.raises(EnforceNotMet, match="3 outputs"):
        ws.run_operator_once(
            core.CreateOperator("LSTMUnitGradient", grad_inputs + ["dh"], ["a", "b"])
        )
    with pytest.raises(ShapeError, match="'dc_bad'.*cell_t_grad"):
        ws.run_operator_once(
            core.CreateOperator("LSTMUnitGradient", grad_inputs + ["dc_bad"], ["a", "b", "c"])
        )
