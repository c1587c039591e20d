"""InstanceNorm against a NumPy formula (NCHW and NHWC, with and without the
saved statistics), its gradient by finite differences for X, scale and bias."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run_op

from caffe2rnn.errors import ArgumentError, ShapeError


def reference(x, scale, bias, epsilon):
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    y = (x - mean) / np.sqrt(var + epsilon)
    return (
        y * scale[None, :, None, None] + bias[None, :, None, None],
        mean,
        1 / np.sqrt(var + epsilon),
    )


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_instance_norm_forward_and_statistics(order):
    x = random((2, 3, 4, 5), 1, np.float64)
    scale, bias = random((3,), 2, np.float64), random((3,), 3, np.float64)
    y, mean, inv = reference(x, scale, bias, 1e-3)
    fed = x if order == "NCHW" else x.transpose(0, 2, 3, 1)
    ws = run_op(
        "InstanceNorm",
        {"X": fed, "scale": scale, "bias": bias},
        ["Y", "mean", "inv"],
        epsilon=1e-3,
        order=order,
    )
    expected = y if order == "NCHW" else y.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(ws.fetch("Y"), expected, rtol=1e-6)
    np.testing.assert_allclose(ws.fetch("mean"), mean.reshape(2, 3))
    np.testing.assert_allclose(ws.fetch("inv"), inv.reshape(2, 3))


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("outputs", [["Y"], ["Y", "mean", "inv"]])
def test_instance_norm_gradients(order, outputs):
    x = random((2, 3, 3, 2), 1, np.float64)
    x = x if order == "NCHW" else x.transpose(0, 2, 3, 1)
    inputs = {"X": x, "scale": random((3,), 2) + 1.5, "bias": random((3,), 3)}
    check_gradients("InstanceNorm", inputs, outputs, epsilon=1e-2, order=order)


def test_gradient_maker_passes_saved_statistics():
    ops, _ = gradient_of("InstanceNorm", ["X", "s", "b"], ["Y", "m", "v"])
    assert ops[0][:4] == (
        "InstanceNormGradient",
        "",
        ["X", "s", "b", "Y_grad", "m", "v"],
        ["X_grad", "s_grad", "b_grad"],
    )


def test_instance_norm_refusals():
    x = random((1, 2, 2, 2))
    with pytest.raises(ArgumentError, match="nonnegative epsilon"):
        run_op("InstanceNorm", {"X": x, "s": random((2,)), "b": random((2,))}, ["Y"], epsilon=-1.0)
    with pytest.raises(ShapeError, match=r"input 1 \('s'\).*one value per channel"):
        run_op("InstanceNorm", {"X": x, "s": random((3,)), "b": random((2,))}, ["Y"])
