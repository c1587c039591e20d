"""LSTMUnit and GRUUnit without ``seq_lengths`` (``sequence_lengths=0``; Caffe2
2bf8d0cd4 and 55a489f6d, era E7): forward against independent per-row NumPy
references in which every row is valid, gradients against central
differences, the gradient makers of E7 and of the eras before it, the
fifth/fourth input left unread, and the eras that ignore the argument."""

import numpy as np
import pytest
from ops_testing import gradient_of, random

from caffe2rnn import core, eras
from caffe2rnn.errors import DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.runtime import Workspace

pytestmark = pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)

N, D = 3, 2
NO_LENGTHS = ["h_prev", "c_prev", "gates", "timestep"]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_reference(h_prev, c_prev, gates, forget_bias=0.0):
    """One LSTM step on every row (none has ended), a row at a time."""
    h, c = np.empty_like(c_prev), np.empty_like(c_prev)
    for n in range(c_prev.shape[1]):
        x = gates[0, n]
        i, f = sigmoid(x[:D]), sigmoid(x[D : 2 * D] + forget_bias)
        o, g = sigmoid(x[2 * D : 3 * D]), np.tanh(x[3 * D :])
        c[0, n] = f * c_prev[0, n] + i * g
        h[0, n] = o * np.tanh(c[0, n])
    return h, c


def gru_reference(h_prev, gates):
    """One GRU state update on every row: h = z h_prev + (1 - z) tanh(x_o)."""
    h = np.empty_like(h_prev)
    for n in range(h_prev.shape[1]):
        x = gates[0, n]
        z, o = sigmoid(x[D : 2 * D]), np.tanh(x[2 * D :])
        h[0, n] = z * h_prev[0, n] + (1 - z) * o
    return h


def lstm_inputs(dtype=np.float64, t=5, seed=0):
    return {
        "h_prev": random((1, N, D), seed, dtype),
        "c_prev": random((1, N, D), seed + 1, dtype),
        "gates": random((1, N, 4 * D), seed + 2, dtype, -3, 3),
        "timestep": np.array([t], np.int32),
    }


def gru_inputs(dtype=np.float64, t=5, seed=0):
    return {
        "h_prev": random((1, N, D), seed, dtype),
        "gates": random((1, N, 3 * D), seed + 1, dtype, -2, 2),
        "timestep": np.array([t], np.int32),
    }


def run(op_type, inputs, outputs, era=None, ws=None, **args):
    ws = ws or Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    op = core.CreateOperator(op_type, list(inputs), outputs, **args)
    ws.run_operator_once(op, None if era is None else eras.get(era))
    return [ws.fetch(o) for o in outputs]


# --- LSTMUnit ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("args", [{}, {"forget_bias": 0.75}, {"drop_states": 1}])
@pytest.mark.parametrize("t", [0, 3, 2**31 - 1])  # no timestep ends a row
def test_lstm_unit_without_lengths_steps_every_row(dtype, args, t):
    inputs = lstm_inputs(dtype, t)
    h, c = run("LSTMUnit", inputs, ["h", "c"], sequence_lengths=0, **args)
    ref_h, ref_c = lstm_reference(
        inputs["h_prev"], inputs["c_prev"], inputs["gates"], args.get("forget_bias", 0.0)
    )
    assert h.dtype == c.dtype == dtype and h.shape == (1, N, D)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(h, ref_h, rtol=tol, atol=tol)
    np.testing.assert_allclose(c, ref_c, rtol=tol, atol=tol)


def test_lstm_unit_without_lengths_equals_lengths_no_row_reaches():
    inputs = lstm_inputs(np.float32, t=2)
    free = run("LSTMUnit", inputs, ["h", "c"], sequence_lengths=0, forget_bias=0.25)
    with_lengths = {k: inputs[k] for k in ("h_prev", "c_prev", "gates")}
    with_lengths["seq_lengths"] = np.array([7, 7, 7], np.int32)
    with_lengths["timestep"] = inputs["timestep"]
    both = run("LSTMUnit", with_lengths, ["h", "c"], forget_bias=0.25)
    for a, b in zip(free, both):
        np.testing.assert_array_equal(a, b)


def test_lstm_unit_without_lengths_leaves_a_fifth_input_unread():
    # Caffe2 (NumInputs(4, 5)) read the timestep right after the gates and
    # nothing after it: a fifth input, of any type, changes nothing.
    inputs = lstm_inputs(np.float32, t=1)
    expected = run("LSTMUnit", inputs, ["h", "c"], sequence_lengths=0)
    inputs["unread"] = np.array(["text"], dtype=object)
    got = run("LSTMUnit", inputs, ["h", "c"], sequence_lengths=0)
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)


def test_lstm_unit_without_lengths_still_reads_an_int32_timestep():
    inputs = lstm_inputs(np.float32)
    inputs["timestep"] = np.array([1.0], np.float32)
    with pytest.raises(DTypeError, match=r"input 3 \('timestep'\).*int32"):
        run("LSTMUnit", inputs, ["h", "c"], sequence_lengths=0)


@pytest.mark.parametrize("args", [{}, {"forget_bias": 0.5, "drop_states": 1}])
def test_lstm_unit_without_lengths_gradients(args):
    inputs = lstm_inputs(np.float64, t=4, seed=3)
    op = core.CreateOperator("LSTMUnit", NO_LENGTHS, ["h", "c"], sequence_lengths=0, **args)
    with eras.use("E7"):
        for index in range(3):
            assert_gradient_close(op, list(inputs.values()), index, outputs_with_grads=(0, 1))


def test_lstm_unit_gradient_maker_of_e7_leaves_lengths_out():
    with eras.use("E7"):
        ops, g_input = gradient_of("LSTMUnit", NO_LENGTHS, ["h", "c"], sequence_lengths=0)
    assert ops == [
        (
            "LSTMUnitGradient",
            "",
            NO_LENGTHS + ["h", "c", "h_grad", "c_grad"],
            ["h_prev_grad", "c_prev_grad", "gates_grad"],
            [("sequence_lengths", 0)],
            True,
        )
    ]
    assert g_input == ["h_prev_grad", "c_prev_grad", "gates_grad", None]


def test_lstm_unit_gradient_maker_before_e7_ignores_the_argument():
    # E6's maker did not read sequence_lengths: four inputs are the E0-E1
    # form, whose two gradients are those of its inputs 0 and 1.
    with eras.use("E6"):
        ops, _ = gradient_of("LSTMUnit", NO_LENGTHS, ["h", "c"], sequence_lengths=0)
    assert len(ops[0][3]) == 2


def test_lstm_unit_named_earlier_era_ignores_the_argument():
    # In E6 the four inputs are read as the 2016 form: c_prev, gates, seq_lengths, t.
    inputs = {
        "c_prev": random((1, N, D), 1, np.float64),
        "gates": random((1, N, 4 * D), 2, np.float64, -3, 3),
        "seq_lengths": np.array([1, 5, 5], np.int32),
        "timestep": np.array([2], np.int32),
    }
    h, c = run("LSTMUnit", inputs, ["h", "c"], era="E6", sequence_lengths=0)
    np.testing.assert_array_equal(h[0, 0], 0)  # row 0 ended: the old form zeroes h
    np.testing.assert_array_equal(c[0, 0], inputs["c_prev"][0, 0])
    # E7 reads the same inputs as h_prev, c_prev, gates, timestep: c_prev is no h_prev.
    with pytest.raises(ShapeError, match=r"input 0 \('c_prev'\).*hidden_t_prev"):
        run("LSTMUnit", inputs, ["h", "c"], era="E7", sequence_lengths=0)


def test_lstm_unit_gradient_op_without_lengths_needs_three_outputs():
    names = NO_LENGTHS + ["h", "c", "dh", "dc"]
    op = core.CreateOperator("LSTMUnitGradient", names, ["a", "b"], sequence_lengths=0)
    ws = Workspace()
    for name in names:
        ws.feed(name, np.zeros((1, N, D)) if name != "timestep" else np.zeros(1, np.int32))
    with pytest.raises(EnforceNotMet, match="sequence_lengths=0 has 2 outputs"):
        ws.run_operator_once(op)


# --- GRUUnit -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("drop_states", [0, 1])
@pytest.mark.parametrize("t", [0, 9])
def test_gru_unit_without_lengths_steps_every_row(dtype, drop_states, t):
    inputs = gru_inputs(dtype, t)
    (h,) = run("GRUUnit", inputs, ["h"], sequence_lengths=0, drop_states=drop_states)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(h, gru_reference(inputs["h_prev"], inputs["gates"]), rtol=tol)
    assert h.dtype == dtype


def test_gru_unit_without_lengths_leaves_a_fourth_input_unread():
    inputs = gru_inputs(np.float64, t=1)
    expected = run("GRUUnit", inputs, ["h"], sequence_lengths=0)
    inputs["unread"] = np.zeros(7, np.int64)
    got = run("GRUUnit", inputs, ["h"], sequence_lengths=0)
    np.testing.assert_array_equal(expected[0], got[0])


@pytest.mark.parametrize("era", [None, "E6"])
def test_gru_unit_three_inputs_need_the_argument(era):
    # With sequence_lengths (the default, and every era before E7) the
    # timestep is input 3: Caffe2 had no fourth input to read.
    with pytest.raises(EnforceNotMet, match="GRUUnit takes 4 inputs.*got 3"):
        run(
            "GRUUnit",
            gru_inputs(),
            ["h"],
            era=era,
            **({} if era is None else {"sequence_lengths": 0}),
        )


def test_gru_unit_without_lengths_gradients():
    inputs = gru_inputs(np.float64, t=2, seed=4)
    op = core.CreateOperator("GRUUnit", list(inputs), ["h"], sequence_lengths=0)
    with eras.use("E7"):
        for index in (0, 1):
            assert_gradient_close(op, list(inputs.values()), index, rtol=1e-6, atol=1e-9)


def test_gru_unit_gradient_makers():
    names = ["h_prev", "gates", "timestep"]
    with eras.use("E7"):
        ops, g_input = gradient_of("GRUUnit", names, ["h"], sequence_lengths=0)
    assert ops[0][2:4] == (names + ["h", "h_grad"], ["h_prev_grad", "gates_grad"])
    assert g_input == ["h_prev_grad", "gates_grad", None]
    with eras.use("E7"):
        ops, _ = gradient_of("GRUUnit", names + ["t"], ["h"])
    assert ops[0][2] == names + ["t", "h", "h_grad"]
