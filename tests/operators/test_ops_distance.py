"""SquaredL2Distance (Z[i] = ½‖X[i] − Y[i]‖²) and DotProduct (Z[i] = ⟨X[i], Y[i]⟩)
over the rows of X and Y."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import DTypeError, ShapeError


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (5,), ()])
def test_forward(shape):
    x, y = random(shape, 1, np.float64), random(shape, 2, np.float64)
    z = run1("SquaredL2Distance", {"X": x, "Y": y})
    n = shape[0] if shape else 1
    expected = 0.5 * ((x - y).reshape(n, -1) ** 2).sum(axis=1)
    assert z.shape == (n,)
    np.testing.assert_allclose(z, expected)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), ()])
def test_gradients(shape):
    check_gradients("SquaredL2Distance", {"X": random(shape, 1), "Y": random(shape, 2)}, ["Z"])


def test_gradient_maker():
    ops, g_input = gradient_of("SquaredL2Distance", ["X", "Y"], ["Z"])
    assert ops == [
        ("SquaredL2DistanceGradient", "", ["X", "Y", "Z_grad"], ["X_grad", "Y_grad"], [], True)
    ]
    assert g_input == ["X_grad", "Y_grad"]


def test_errors_name_the_blob():
    with pytest.raises(ShapeError, match=r"input 1 \('Y'\) has shape \(3, 4\); expected \(4, 3\)"):
        run1("SquaredL2Distance", {"X": random((4, 3)), "Y": random((3, 4))})
    with pytest.raises(DTypeError, match=r"input 1 \('Y'\) has type float64"):
        run1("SquaredL2Distance", {"X": random((4, 3)), "Y": random((4, 3), dtype=np.float64)})
    with pytest.raises(ShapeError, match=r"input 2 \('dZ'\) has shape \(4, 1\); expected \(4,\)"):
        run_op(
            "SquaredL2DistanceGradient",
            {"X": random((4, 3)), "Y": random((4, 3)), "dZ": random((4, 1))},
            ["dX", "dY"],
        )


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (5,), (), (0, 3)])
def test_dot_product_forward(shape):
    x, y = random(shape, 1, np.float64), random(shape, 2, np.float64)
    z = run1("DotProduct", {"X": x, "Y": y})
    n = shape[0] if shape else 1
    expected = np.array([np.dot(x.reshape(n, -1)[i], y.reshape(n, -1)[i]) for i in range(n)])
    assert z.shape == (n,) and z.dtype == np.float64
    np.testing.assert_allclose(z, expected)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), ()])
def test_dot_product_gradients(shape):
    check_gradients("DotProduct", {"X": random(shape, 1), "Y": random(shape, 2)}, ["Z"])


def test_dot_product_gradient_maker_and_formula():
    ops, g_input = gradient_of("DotProduct", ["X", "Y"], ["Z"])
    assert ops == [("DotProductGradient", "", ["X", "Y", "Z_grad"], ["X_grad", "Y_grad"], [], True)]
    assert g_input == ["X_grad", "Y_grad"]
    x, y, dz = random((3, 2), 1), random((3, 2), 2), random((3,), 3)
    ws = run_op("DotProductGradient", {"X": x, "Y": y, "dZ": dz}, ["dX", "dY"])
    np.testing.assert_allclose(ws.fetch("dX"), y * dz[:, None], rtol=1e-6)
    np.testing.assert_allclose(ws.fetch("dY"), x * dz[:, None], rtol=1e-6)


def test_dot_product_errors_name_the_blob():
    with pytest.raises(ShapeError, match=r"input 1 \('Y'\) has shape \(3, 4\); expected \(4, 3\)"):
        run1("DotProduct", {"X": random((4, 3)), "Y": random((3, 4))})
    with pytest.raises(DTypeError, match=r"input 1 \('Y'\) has type float64"):
        run1("DotProduct", {"X": random((4, 3)), "Y": random((4, 3), dtype=np.float64)})
    with pytest.raises(ShapeError, match=r"input 2 \('dZ'\) has shape \(3,\); expected \(4,\)"):
        run_op(
            "DotProductGradient",
            {"X": random((4, 3)), "Y": random((4, 3)), "dZ": random((3,))},
            ["dX", "dY"],
        )


def cpp_squared_l2_distance(x, y):
    """SquaredL2DistanceOp<float, CPUContext>::RunOnDevice (distance_op.cc, 0cdd09da6): per row,
    three float32 dot products (summed here in order, as a reference BLAS sdot does), then
    ``distance = (Xscale + Yscale) * 0.5 - cross`` — a float sum, a double product and
    difference, stored as float."""
    n = x.shape[0] if x.ndim else 1
    d = x.size // n if n else 0
    xf, yf = x.reshape(-1), y.reshape(-1)
    out = np.empty(n, np.float32)
    for i in range(n):
        xscale = yscale = cross = np.float32(0)
        for k in range(i * d, (i + 1) * d):
            xscale = np.float32(xscale + xf[k] * xf[k])
            yscale = np.float32(yscale + yf[k] * yf[k])
            cross = np.float32(cross + xf[k] * yf[k])
        out[i] = np.float32(float(np.float32(xscale + yscale)) * 0.5 - float(cross))
    return out


def test_squared_l2_distance_is_caffe2s_float32_formula():
    x = np.array([[1e4, 1e4]], np.float32)
    y = np.array([[1e4 + 1, 1e4 - 1]], np.float32)
    got = run_op("SquaredL2Distance", {"x": x, "y": y}, ["z"]).fetch("z")
    assert cpp_squared_l2_distance(x, y)[0] == 0.0  # Caffe2's number; the exact one is 1.0
    np.testing.assert_array_equal(got, [0.0])
    rng = np.random.default_rng(0)
    x, y = (
        rng.normal(size=(5, 3, 2)).astype(np.float32),
        rng.normal(size=(5, 3, 2)).astype(np.float32),
    )
    got = run_op("SquaredL2Distance", {"x": x, "y": y}, ["z"]).fetch("z")
    # the same formula; the dot products' summation order may move the last bits
    np.testing.assert_allclose(got, cpp_squared_l2_distance(x, y), rtol=1e-6, atol=1e-6)
