"""SpatialSoftmaxWithLoss and its gradient (caffe2rnn/operators/softmax.py):
a softmax per pixel against a loop written here, the gradient against finite
differences, refusals naming the blob or the argument."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run_fails, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close


def _loop(x, labels, weights=None):
    n, d, h, w = x.shape
    p = np.zeros_like(x, dtype=np.float64)
    loss, total = 0.0, 0.0
    for i in range(n):
        for y in range(h):
            for c in range(w):
                e = np.exp(x[i, :, y, c] - x[i, :, y, c].max())
                p[i, :, y, c] = e / e.sum()
                k = labels[i, y, c]
                if k != -1:
                    wt = 1.0 if weights is None else weights[i, y, c]
                    loss += -np.log(max(p[i, k, y, c], 1e-20)) * wt
                    total += wt
    return p, (loss / total if total else 0.0)


def _case(seed=0):
    x = random((2, 3, 2, 2), seed, low=-2, high=2)
    labels = np.random.RandomState(seed).randint(-1, 3, size=(2, 2, 2)).astype(np.int32)
    labels[0, 0, 0] = 1
    return x, labels


@pytest.mark.parametrize("weighted", [False, True])
def test_spatial_softmax_with_loss_forward(weighted):
    x, labels = _case(1)
    feed = {"x": x, "t": labels}
    weights = None
    if weighted:
        weights = random((2, 2, 2), 4, low=0.5, high=2)
        feed["w"] = weights
    ws = run_op("SpatialSoftmaxWithLoss", feed, ["p", "loss"])
    p, loss = _loop(x, labels, weights)
    np.testing.assert_allclose(ws.fetch("p"), p, rtol=1e-5)
    np.testing.assert_allclose(ws.fetch("loss"), loss, rtol=1e-5)
    assert ws.fetch("loss").shape == ()


def test_spatial_softmax_with_loss_all_ignored_gives_zero():
    x, _ = _case()
    ws = run_op(
        "SpatialSoftmaxWithLoss", {"x": x, "t": np.full((2, 2, 2), -1, np.int32)}, ["p", "loss"]
    )
    assert ws.fetch("loss") == 0.0


@pytest.mark.parametrize("weighted", [False, True])
def test_spatial_softmax_with_loss_gradient(weighted):
    x, labels = _case(2)
    names = ["x", "t"] + (["w"] if weighted else [])
    ops, g_input = gradient_of("SpatialSoftmaxWithLoss", names, ["p", "loss"], scale=2.0)
    assert [op[:4] for op in ops] == [
        ("SpatialSoftmaxWithLossGradient", "", names + ["p", "loss_grad"], ["x_grad"])
    ]
    assert ("scale", 2.0) in ops[0][4]
    assert g_input[0] == "x_grad"
    inputs = [x.astype(np.float64), labels]
    if weighted:
        inputs.append(random((2, 2, 2), 6, low=0.5, high=2).astype(np.float64))
    op = core.CreateOperator("SpatialSoftmaxWithLoss", names, ["p", "loss"])
    assert_gradient_close(op, inputs, 0, outputs_with_grads=(1,))


def test_spatial_softmax_gradient_scale_and_ignored_pixels():
    x, labels = _case(3)
    ws = run_op("SpatialSoftmaxWithLoss", {"x": x, "t": labels}, ["p", "loss"])
    p = ws.fetch("p")
    dloss = np.array(0.5, np.float32)
    run_op(
        "SpatialSoftmaxWithLossGradient",
        {"x": x, "t": labels, "p": p, "g": dloss},
        ["dx"],
        ws=ws,
        scale=3.0,
    )
    expected = p.astype(np.float64).copy()
    keep = labels != -1
    for i, y, c in zip(*np.nonzero(keep)):
        expected[i, labels[i, y, c], y, c] -= 1
    expected *= keep[:, None]
    expected *= 3.0 / keep.sum() * 0.5
    np.testing.assert_allclose(ws.fetch("dx"), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "feed, error, match",
    [
        ({"x": random((2, 3, 4), 0)}, ShapeError, "'x'.*4 dimensions"),
        ({"t": np.zeros((2, 1, 2), np.int32)}, ShapeError, "'t'.*8 labels"),
        ({"t": np.full((2, 2, 2), 3, np.int32)}, ShapeError, "'t'.*Label seems incorrect"),
        ({"t": np.full((2, 2, 2), -2, np.int32)}, ShapeError, "'t'.*Label seems incorrect"),
        ({"t": np.zeros((2, 2, 2), np.int64)}, DTypeError, "'t'.*int32"),
        ({"w": np.ones(7, np.float32)}, ShapeError, "'w'.*8 weights"),
    ],
)
def test_spatial_softmax_with_loss_refusals(feed, error, match):
    x, labels = _case()
    inputs = {"x": x, "t": labels}
    inputs.update(feed)
    run_fails("SpatialSoftmaxWithLoss", inputs, error, match, outputs=("p", "loss"))


@pytest.mark.parametrize(
    "labels, match", [((2, 4), "'t'.*3 dimensions"), ((1, 2, 2), "'t'.*first 2")]
)
def test_labels_of_another_shape_are_refused_from_e6(labels, match):
    """CAFFE_ENFORCE_EQ(T.ndim(), 3) and T.dim32(0) == N at 042e8ede4."""
    x, _ = _case()
    with eras.use("E6"):
        feed = {"x": x, "t": np.zeros(labels, np.int32)}
        run_fails("SpatialSoftmaxWithLoss", feed, ShapeError, match, outputs=("p", "loss"))


@pytest.mark.parametrize("shape", [(2, 4), (8,), (4, 2, 1)])
def test_labels_of_another_shape_run_flat_at_e5(shape):
    """At 0cdd09da6 the shape checks were DCHECKs (off in a release build): the
    loop reads the labels flat, so any N·H·W of them give the 3-D labels' loss."""
    x, labels = _case(1)
    with eras.use("E5"):
        flat = run_op("SpatialSoftmaxWithLoss", {"x": x, "t": labels.reshape(shape)}, ["p", "loss"])
        want = run_op("SpatialSoftmaxWithLoss", {"x": x, "t": labels}, ["p", "loss"])
    assert flat.fetch("loss") == want.fetch("loss")
    np.testing.assert_array_equal(flat.fetch("p"), want.fetch("p"))


def test_spatial_softmax_with_loss_argument_refusals():
    x, labels = _case()
    run_fails(
        "SpatialSoftmaxWithLoss",
        {"x": x, "t": labels},
        ArgumentError,
        "scale",
        outputs=("p", "loss"),
        scale=-1.0,
    )
    run_fails(
        "SpatialSoftmaxWithLoss",
        {"x": x, "t": labels},
        EnforceNotMet,
        "NCHW",
        outputs=("p", "loss"),
        order="NHWC",
    )
    run_fails(
        "SpatialSoftmaxWithLossGradient",
        {"x": x, "t": labels, "p": x},
        ShapeError,
        "got 3 inputs",
        outputs=("dx",),
    )
