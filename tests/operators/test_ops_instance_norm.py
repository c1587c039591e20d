"""InstanceNorm against a NumPy formula (NCHW and NHWC, with and without the
saved statistics), its gradient by finite differences for X, scale and bias."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run_op

from caffe2rnn import core, errors
from caffe2rnn.errors import ArgumentError, ShapeError
from caffe2rnn.runtime import Workspace


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


def cpp_instance_norm_gradient(x, scale, dy, mean, inv_stdev, eps, nhwc, dscale0, dbias0):
    """InstanceNormGradientOp::RunOnDeviceWithOrderNHWC / NCHW (instance_norm_gradient_op.cc,
    0cdd09da6), per image and channel, in float64 loops. ``mean``/``inv_stdev``: given (N, C)
    or None; ``dscale0``/``dbias0``: what the outputs held (NHWC adds into them)."""
    if nhwc:
        x, dy = x.transpose(0, 3, 1, 2), dy.transpose(0, 3, 1, 2)
    n_size, c_size = x.shape[:2]
    dx = np.zeros(x.shape)
    dscale = np.array(dscale0, float) if nhwc else np.zeros(c_size)
    dbias = np.array(dbias0, float) if nhwc else np.zeros(c_size)
    for n in range(n_size):
        for c in range(c_size):
            xs, g = x[n, c].reshape(-1).astype(float), dy[n, c].reshape(-1).astype(float)
            mu = xs.mean() if mean is None else float(mean[n, c])
            xc = xs - mu
            inv = 1 / np.sqrt((xc**2).mean() + eps) if inv_stdev is None else float(inv_stdev[n, c])
            dbias[c] += g.sum()
            dscale[c] += (xc * inv * g).sum()
            temp = inv**3 * (xc * g).mean() * -1
            r = xc * temp + g * inv
            r -= r.mean()
            dx[n, c] = (r * scale[c]).reshape(x.shape[2:])
    if nhwc:
        dx = dx.transpose(0, 2, 3, 1)
    return dx, dscale, dbias


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("given", [(), ("mean",), ("mean", "inv_stdev")])
def test_instance_norm_gradient_matches_the_cpp(order, given):
    rng = np.random.default_rng(3)
    shape = (2, 3, 4, 5) if order == "NCHW" else (2, 4, 5, 3)
    x, dy = rng.normal(size=shape), rng.normal(size=shape)
    scale, bias = rng.normal(size=3), rng.normal(size=3)
    mean = rng.normal(size=(2, 3))  # not X's mean: the C++ builds inv_stdev from it
    inv = rng.uniform(0.5, 2.0, size=(2, 3))
    blobs = {"x": x, "s": scale, "b": bias, "dy": dy}
    if "mean" in given:
        blobs["m"] = mean
    if "inv_stdev" in given:
        blobs["v"] = inv
    ws = Workspace()
    ws.feed("ds", np.full(3, 10.0))  # what dscale and dbias held before
    ws.feed("db", np.full(3, -1.0))
    for k, v in blobs.items():
        ws.feed(k, v)
    op = core.CreateOperator(
        "InstanceNormGradient", list(blobs), ["dx", "ds", "db"], order=order, epsilon=1e-3
    )
    ds0, db0 = np.full(3, 10.0), np.full(3, -1.0)
    for _ in range(2):  # NHWC accumulates over reruns
        ws.run_operator_once(op)
        want = cpp_instance_norm_gradient(
            x,
            scale,
            dy,
            mean if "mean" in given else None,
            inv if "inv_stdev" in given else None,
            1e-3,
            order == "NHWC",
            ds0,
            db0,
        )
        for got, expected in zip((ws.fetch("dx"), ws.fetch("ds"), ws.fetch("db")), want):
            np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)
        ds0, db0 = want[1], want[2]


def test_instance_norm_nhwc_is_not_in_place():
    x = np.ones((1, 3, 2, 3), np.float32)  # C = 3 in either order
    ws = Workspace()
    for k, v in {"x": x, "s": np.ones(3, np.float32), "b": np.zeros(3, np.float32)}.items():
        ws.feed(k, v)
    with pytest.raises(errors.ArgumentError, match="Can't run InstanceNorm NHWC in-place"):
        ws.run_operator_once(
            core.CreateOperator("InstanceNorm", ["x", "s", "b"], ["x"], order="NHWC")
        )
    ws.run_operator_once(core.CreateOperator("InstanceNorm", ["x", "s", "b"], ["x"], order="NCHW"))
