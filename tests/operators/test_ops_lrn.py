"""LRN and LRNGradient: forward against the formula in both orders, gradients
against finite differences (with and without the saved scale), errors."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run_op

from caffe2rnn.errors import ArgumentError, ShapeError

# float32-exact values: arguments travel as float32 in the proto
ARGS = {"size": 3, "alpha": 0.5, "beta": 0.75, "bias": 1.5}


def reference_lrn(x, size, alpha, beta, bias, channel_axis):
    """scale[c] = bias + alpha/size · Σ_{|c'−c| ≤ (size−1)/2} x[c']², one channel at a time."""
    xc = np.moveaxis(x, channel_axis, 0)
    half = (size - 1) // 2
    scale = np.empty_like(xc)
    for c in range(xc.shape[0]):
        lo, hi = max(0, c - half), min(xc.shape[0], c + half + 1)
        scale[c] = bias + alpha / size * (xc[lo:hi] ** 2).sum(axis=0)
    scale = np.moveaxis(scale, 0, channel_axis)
    return x * scale**-beta, scale


@pytest.mark.parametrize(
    "order, axis, size", [("NCHW", 1, 3), ("NHWC", 3, 3), ("NCHW", 1, 5), ("NHWC", 3, 1)]
)
def test_forward(order, axis, size):
    x = random((2, 4, 3, 2) if order == "NCHW" else (2, 3, 2, 4), 1, np.float64, -2, 2)
    args = dict(ARGS, size=size)
    ws = run_op("LRN", {"X": x}, ["Y", "scale"], order=order, **args)
    y, scale = reference_lrn(x, size, ARGS["alpha"], ARGS["beta"], ARGS["bias"], axis)
    np.testing.assert_allclose(ws.fetch("Y"), y, rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("scale"), scale, rtol=1e-12)
    only_y = run_op("LRN", {"X": x}, ["Y"], order=order, **args)
    np.testing.assert_allclose(only_y.fetch("Y"), y, rtol=1e-12)


@pytest.mark.parametrize("era, axis", [("E5", 3), ("E6", 1), (None, 1)])
def test_default_order_by_era_and_bias_one(era, axis):
    """local_response_normalization_op.h: GetSingleArgument<string>("order", "NHWC") at
    0cdd09da6, "NCHW" at 042e8ede4 (today's op)."""
    from caffe2rnn import core
    from caffe2rnn.proto import caffe2_pb2
    from caffe2rnn.runtime import Workspace

    x = random((1, 5, 2, 5), 2, np.float64)
    ws = Workspace()
    ws.feed("X", x)
    netdef = caffe2_pb2.NetDef(name="lrn")
    netdef.op.extend(
        [core.CreateOperator("LRN", ["X"], ["Y", "scale"], size=5, alpha=1.0, beta=0.5)]
    )
    ws.run_net_once(netdef, era=era)
    np.testing.assert_allclose(ws.fetch("Y"), reference_lrn(x, 5, 1.0, 0.5, 1.0, axis)[0])


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("outputs", [["Y", "scale"], ["Y"]])
def test_gradients(order, outputs):
    x = random((2, 4, 2, 3), 3, low=-2, high=2)
    check_gradients("LRN", {"X": x}, outputs, order=order, **ARGS)


def test_gradient_maker():
    ops, g_input = gradient_of("LRN", ["X"], ["Y", "s"], size=3, alpha=1.0, beta=0.5)
    assert ops[0][:4] == ("LRNGradient", "", ["X", "Y", "s", "Y_grad"], ["X_grad"])
    assert g_input == ["X_grad"]
    ops, _ = gradient_of("LRN", ["X"], ["Y"], size=3, alpha=1.0, beta=0.5)
    assert ops[0][2] == ["X", "Y", "Y_grad"]


@pytest.mark.parametrize(
    "args, match",
    [
        ({"size": 2, "alpha": 1.0, "beta": 0.5}, "odd size"),
        ({"alpha": 1.0, "beta": 0.5}, "odd size"),
        ({"size": 3, "beta": 0.5}, "alpha and beta"),
        ({"size": 3, "alpha": 1.0, "beta": 0.5, "order": "CHW"}, "order"),
    ],
)
def test_argument_errors(args, match):
    with pytest.raises(ArgumentError, match=match):
        run_op("LRN", {"X": random((1, 2, 2, 2))}, ["Y", "s"], **args)


def test_shape_errors_name_the_blob():
    with pytest.raises(ShapeError, match=r"input 0 \('X'\) has shape \(2, 3\); expected 4 dims"):
        run_op("LRN", {"X": random((2, 3))}, ["Y"], **ARGS)
    x = random((1, 2, 2, 2))
    with pytest.raises(ShapeError, match=r"input 3 \('dY'\)"):
        run_op(
            "LRNGradient",
            {"X": x, "Y": x, "scale": x, "dY": random((1, 2, 2, 3))},
            ["dX"],
            **ARGS,
        )
