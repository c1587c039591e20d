"""Tanh, Sigmoid, Relu and their [Y, dY] → dX gradient ops."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import DTypeError, EnforceNotMet, ShapeError

FORWARD = {
    "Tanh": lambda x: 1 - 2 / (np.exp(2 * x) + 1),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Relu": lambda x: np.maximum(x, 0),
}
BACKWARD = {
    "Tanh": lambda y, dy: dy * (1 - y * y),
    "Sigmoid": lambda y, dy: dy * y * (1 - y),
    "Relu": lambda y, dy: dy * (y > 0),
}
ACTIVATIONS = sorted(FORWARD)


def away_from_zero(shape, seed):
    """Inputs whose |x| > 0.1, so Relu's kink is outside the finite-difference step."""
    x = random(shape, seed, np.float64)
    return x + np.where(x >= 0, 0.1, -0.1)


@pytest.mark.parametrize("op_type", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(op_type, dtype):
    x = random((3, 4), 1, dtype, -3, 3)
    y = run1(op_type, {"X": x})
    assert y.dtype == dtype
    np.testing.assert_allclose(y, FORWARD[op_type](x.astype(np.float64)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op_type", ACTIVATIONS)
def test_forward_in_place(op_type):
    x = random((2, 3), 1)
    ws = run_op(op_type, {"X": x}, ["X"])
    np.testing.assert_allclose(ws.fetch("X"), FORWARD[op_type](x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op_type", ACTIVATIONS)
@pytest.mark.parametrize("in_place", [False, True])
def test_gradient_op_formula(op_type, in_place):
    y = FORWARD[op_type](random((2, 5), 1, np.float64))
    dy = random((2, 5), 2, np.float64)
    out = "dY" if in_place else "dX"
    ws = run_op(op_type + "Gradient", {"Y": y, "dY": dy}, [out])
    np.testing.assert_allclose(ws.fetch(out), BACKWARD[op_type](y, dy))


@pytest.mark.parametrize("op_type", ACTIVATIONS)
def test_gradient_against_finite_differences(op_type):
    check_gradients(op_type, {"X": away_from_zero((3, 4), 1)}, ["Y"])
    check_gradients(op_type, {"X": away_from_zero((3, 4), 2)}, ["X"])


@pytest.mark.parametrize("op_type", ACTIVATIONS)
def test_gradient_maker_reads_the_output(op_type):
    ops, g_input = gradient_of(op_type, ["x"], ["y"])
    assert ops == [(op_type + "Gradient", "", ["y", "y_grad"], ["x_grad"], [], True)]
    assert g_input == ["x_grad"]


@pytest.mark.parametrize("op_type", ACTIVATIONS)
def test_integer_input_is_refused(op_type):
    with pytest.raises(
        DTypeError,
        match=r"input 0 \('X'\) has type int32; expected "
        r"float32 or float64",
    ):
        run1(op_type, {"X": np.arange(3, dtype=np.int32)})


@pytest.mark.parametrize("op_type", ACTIVATIONS)
def test_gradient_op_checks_dy(op_type):
    with pytest.raises(ShapeError, match=r"input 1 \('dY'\) has shape \(3,\); expected \(2,\)"):
        run1(op_type + "Gradient", {"Y": random((2,)), "dY": random((3,))})
    with pytest.raises(DTypeError, match=r"input 1 \('dY'\) has type float64"):
        run1(op_type + "Gradient", {"Y": random((2,)), "dY": random((2,), dtype=np.float64)})


def test_gradient_op_may_not_overwrite_y():
    with pytest.raises(EnforceNotMet, match="does not allow input 0"):
        run_op("TanhGradient", {"Y": random((2,)), "dY": random((2,))}, ["Y"])


def test_relu_gradient_multiplies_by_the_sign_of_y_as_the_cpp():
    """relu_op.cc (0cdd09da6, 042e8ede4): ``dXvec = dYvec * Yvec.cwiseSign()``, Eigen's sign
    being ``(a > 0) - (a < 0)`` (0 for NaN)."""
    y = np.array([2.0, 0.0, -3.0, np.nan, 0.0, 1.0], np.float32)
    dy = np.array([1.5, 2.0, 4.0, 1.0, np.inf, np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        want = np.array([dy[i] * (int(y[i] > 0) - int(y[i] < 0)) for i in range(6)], np.float32)
    with np.errstate(invalid="ignore"):
        got = run_op("ReluGradient", {"y": y, "dy": dy}, ["dx"]).fetch("dx")
    np.testing.assert_array_equal(got, want)  # [1.5, 0, -4, 0, nan, inf]
