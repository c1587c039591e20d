"""PRelu and PReluGradient: forward against a NumPy formula in both orders, shared and
per-channel slopes, gradients against finite differences, and bad input."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError


def away_from_zero(x):
    """X with no element near the kink at 0 (finite differences straddle it otherwise)."""
    return np.where(np.abs(x) < 0.05, 0.3, x).astype(x.dtype)


def reference(x, slope, order):
    if slope.size == 1:
        w = slope.reshape(())
    elif order == "NCHW":
        w = slope.reshape((1, -1) + (1,) * (x.ndim - 2))
    else:
        w = slope.reshape(-1)
    return np.where(x > 0, x, w * x)


CASES = [  # (X's shape, order, shared)
    ((2, 3, 4, 5), "NCHW", False),
    ((2, 4, 5, 3), "NHWC", False),
    ((2, 3, 4, 5), "NCHW", True),
    ((2, 4, 5, 3), "NHWC", True),
    ((4, 3), "NCHW", False),
    ((4, 3), "NHWC", False),
    ((2, 3, 5), "NCHW", False),
]


def operands(shape, order, shared, dtype=np.float32):
    x = away_from_zero(random(shape, 1, dtype))
    channels = shape[1] if order == "NCHW" else shape[-1]
    slope = random((1,) if shared else (channels,), 2, dtype, 0.1, 0.9)
    return x, slope


@pytest.mark.parametrize("shape, order, shared", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(shape, order, shared, dtype):
    x, slope = operands(shape, order, shared, dtype)
    y = run1("PRelu", {"X": x, "W": slope}, order=order)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, reference(x, slope, order), rtol=1e-6)


def test_forward_in_place():
    x, slope = operands((2, 3, 4), "NCHW", False)
    ws = run_op("PRelu", {"X": x.copy(), "W": slope}, ["X"])
    np.testing.assert_allclose(ws.fetch("X"), reference(x, slope, "NCHW"), rtol=1e-6)


@pytest.mark.parametrize("shape, order, shared", CASES)
def test_gradients(shape, order, shared):
    x, slope = operands(shape, order, shared)
    check_gradients("PRelu", {"X": x, "W": slope}, ["Y"], order=order)


def test_gradient_maker():
    ops, g_input = gradient_of("PRelu", ["X", "W"], ["Y"], order="NHWC")
    assert ops == [
        (
            "PReluGradient",
            "",
            ["Y", "Y_grad", "X", "W"],
            ["X_grad", "W_grad"],
            [("order", "NHWC")],
            True,
        )
    ]
    assert g_input == ["X_grad", "W_grad"]


def test_slope_gradient_sums_dy_times_x_where_x_is_not_positive():
    x = np.array([[1.0, -2.0], [-3.0, 0.0]], np.float32)  # (N=2, C=2)
    dy = np.array([[5.0, 7.0], [11.0, 13.0]], np.float32)
    slope = np.array([0.5, 0.25], np.float32)
    ws = run_op("PReluGradient", {"Y": x, "dY": dy, "X": x, "W": slope}, ["dX", "dW"], order="NCHW")
    np.testing.assert_allclose(ws.fetch("dW"), [-3.0 * 11.0, -2.0 * 7.0 + 0.0 * 13.0])
    np.testing.assert_allclose(ws.fetch("dX"), [[5.0, 0.25 * 7.0], [0.5 * 11.0, 0.25 * 13.0]])


def test_nan_reaches_the_nhwc_slope_gradient_only():
    """Caffe2's NCHW loop summed where X <= 0, its NHWC expression where not X > 0."""
    x = np.array([[np.nan, -1.0]], np.float32)
    inputs = {"Y": x, "dY": np.ones_like(x), "X": x, "W": np.array([0.5], np.float32)}
    nchw = run_op("PReluGradient", inputs, ["dX", "dW"], order="NCHW").fetch("dW")
    nhwc = run_op("PReluGradient", inputs, ["dX", "dW"], order="NHWC").fetch("dW")
    assert nchw.tolist() == [-1.0] and np.isnan(nhwc).all()


def test_unknown_order_runs_with_a_shared_slope_only():
    x = random((2, 3), 3)
    y = run1("PRelu", {"X": x, "W": np.array([0.5], np.float32)}, order="NCWH")
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.5 * x), rtol=1e-6)
    run_fails(
        "PRelu",
        {"X": x, "W": random(3)},
        ArgumentError,
        "Unknown storage order: 'NCWH'",
        order="NCWH",
    )


def test_gradient_of_an_in_place_prelu_is_refused():
    x, slope = operands((2, 3), "NCHW", False)
    ws = run_op("PRelu", {"X": x, "W": slope}, ["X"])
    ws.feed("X_grad", np.ones_like(x))
    op = core.CreateOperator("PReluGradient", ["X", "X_grad", "X", "W"], ["dX", "dW"])
    with pytest.raises(EnforceNotMet, match="in-place PReLU.*'X'"):
        ws.run_operator_once(op)


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"X": random((2, 3, 4)), "W": random(4)}, {}, ShapeError, "'W'.*3 slopes"),
        ({"X": random((2, 3, 4)), "W": random(3)}, {"order": "NHWC"}, ShapeError, "'W'.*4"),
        ({"X": random(5), "W": random(1)}, {}, ShapeError, "'X'.*channel dim"),
        ({"X": random((2, 3)), "W": random(3, dtype=np.float64)}, {}, DTypeError, "'W'"),
        ({"X": np.ones((2, 3), np.int32), "W": random(3)}, {}, DTypeError, "'X'"),
    ],
)
def test_bad_inputs(inputs, args, error, match):
    run_fails("PRelu", inputs, error, match, **args)


def test_gradient_bad_inputs():
    x = random((2, 3))
    inputs = {"Y": x, "dY": random((2, 4)), "X": x, "W": random(3)}
    run_fails("PReluGradient", inputs, ShapeError, "'dY'", outputs=("dX", "dW"))
    inputs = {"Y": x, "dY": x, "X": x, "W": random(3)}
    run_fails(
        "PReluGradient", inputs, ArgumentError, "Unknown storage order", ("dX", "dW"), order="N"
    )
