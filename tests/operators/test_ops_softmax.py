"""Softmax / SoftmaxWithLoss: forward against NumPy formulas, gradient makers,
gradients against finite differences, bad input."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import ArgumentError, DTypeError, ShapeError


def np_softmax(x, axis):
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


# --- Softmax -----------------------------------------------------------------------
@pytest.mark.parametrize("axis, canonical", [(1, 1), (2, 2), (-1, 2), (0, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows(axis, canonical, dtype):
    x = random((2, 3, 4), dtype=dtype) * 5
    y = run1("Softmax", {"x": x}, axis=axis)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, np_softmax(x, canonical), rtol=1e-6)


def test_softmax_is_stable_for_large_logits():
    y = run1("Softmax", {"x": np.array([[1000.0, 1000.0]], np.float32)})
    np.testing.assert_allclose(y, [[0.5, 0.5]])


def test_softmax_gradient_maker_copies_args_and_engine():
    from ops_testing import describe

    from caffe2rnn import core
    from caffe2rnn.operators.gradient_maker import get_gradient_for_op

    op = core.CreateOperator("Softmax", ["x"], ["y"], axis=2, engine="CUDNN")
    ops, g_input = get_gradient_for_op(op, ["y_grad"])
    assert [describe(g) for g in ops] == [
        ("SoftmaxGradient", "", ["y", "y_grad"], ["x_grad"], [("axis", 2)], True)
    ]
    assert ops[0].engine == "CUDNN" and g_input == ["x_grad"]


@pytest.mark.parametrize("axis", [1, 2])
def test_softmax_gradient(axis):
    check_gradients("Softmax", {"x": random((2, 2, 3))}, ["y"], axis=axis)


def test_softmax_gradient_op_formula():
    y = np_softmax(random((3, 4), 1), 1)
    dy = random((3, 4), 2)
    dx = run1("SoftmaxGradient", {"y": y, "dy": dy})
    np.testing.assert_allclose(dx, y * (dy - (dy * y).sum(1, keepdims=True)), rtol=1e-5)


def test_softmax_bad_input():
    with pytest.raises(ShapeError, match="'x'.*axis=3"):
        run1("Softmax", {"x": random((2, 3))}, axis=3)
    with pytest.raises(DTypeError, match="'x'"):
        run1("Softmax", {"x": np.ones((2, 3), np.int32)})
    with pytest.raises(ShapeError, match="'dy'"):
        run1("SoftmaxGradient", {"y": random((2, 3)), "dy": random((3, 2))})


# --- SoftmaxWithLoss ------------------------------------------------------------------
def np_loss(x, labels, weights=None, scale=1.0, label_prob=False):
    p = np_softmax(x, 1).reshape(len(x), -1)
    logp = np.log(np.maximum(p, 1e-20))
    rows = -(logp * labels).sum(1) if label_prob else -logp[np.arange(len(x)), labels]
    w = np.ones(len(x)) if weights is None else weights
    return scale * (w * rows).sum() / w.sum()


LABELS = np.array([0, 2, 1], np.int32)
WEIGHTS = np.array([0.5, 2.0, 1.0], np.float32)
PROBS = np_softmax(random((3, 4), 7), 1).astype(np.float32)


@pytest.mark.parametrize("weights", [None, WEIGHTS])
def test_softmax_with_loss_forward(weights):
    x = random((3, 4), 1) * 3
    inputs = {"x": x, "t": LABELS}
    if weights is not None:
        inputs["w"] = weights
    ws = run_op("SoftmaxWithLoss", inputs, ["p", "loss"], scale=2.0)
    np.testing.assert_allclose(ws.fetch("p"), np_softmax(x, 1), rtol=1e-6)
    loss = ws.fetch("loss")
    assert loss.shape == () and loss.dtype == np.float32
    np.testing.assert_allclose(loss, np_loss(x, LABELS, weights, 2.0), rtol=1e-5)


def test_softmax_with_loss_label_prob():
    x = random((3, 4), 1)
    ws = run_op("SoftmaxWithLoss", {"x": x, "t": PROBS}, ["p", "loss"], label_prob=1)
    np.testing.assert_allclose(ws.fetch("loss"), np_loss(x, PROBS, label_prob=True), rtol=1e-5)


def test_softmax_with_loss_zero_total_weight_gives_zero():
    ws = run_op(
        "SoftmaxWithLoss",
        {"x": random((3, 4)), "t": LABELS, "w": np.zeros(3, np.float32)},
        ["p", "loss"],
    )
    assert ws.fetch("loss") == 0


@pytest.mark.parametrize("with_weights", [False, True])
def test_softmax_with_loss_gradient_maker(with_weights):
    inputs = ["x", "t", "w"] if with_weights else ["x", "t"]
    ops, g_input = gradient_of(
        "SoftmaxWithLoss", inputs, ["p", "loss"], [None, "loss_grad"], scale=0.5
    )
    assert ops == [
        (
            "SoftmaxWithLossGradient",
            "",
            inputs + ["p", "loss_grad"],
            ["x_grad"],
            [("scale", 0.5)],
            True,
        )
    ]
    assert g_input == ["x_grad"] + [None] * (len(inputs) - 1)


@pytest.mark.parametrize(
    "inputs, args",
    [
        ({"x": random((3, 4)), "t": LABELS}, {"scale": 1.5}),
        ({"x": random((3, 4)), "t": LABELS, "w": WEIGHTS}, {}),
        ({"x": random((3, 4)), "t": PROBS}, {"label_prob": 1}),
        ({"x": random((3, 4)), "t": PROBS, "w": WEIGHTS}, {"label_prob": 1, "scale": 2.0}),
    ],
)
def test_softmax_with_loss_gradient(inputs, args):
    from caffe2rnn import core
    from caffe2rnn.gradient_checker import assert_gradient_close

    op = core.CreateOperator("SoftmaxWithLoss", list(inputs), ["p", "loss"], **args)
    arrays = [v.astype(np.float64) if v.dtype.kind == "f" else v for v in inputs.values()]
    assert_gradient_close(op, arrays, 0, outputs_with_grads=(1,))


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        (
            {"x": random((3, 4)), "t": np.array([0, 4, 1], np.int32)},
            {},
            ShapeError,
            "'t'.*\\[0, 4\\)",
        ),
        ({"x": random((3, 4)), "t": np.array([0, 1], np.int32)}, {}, ShapeError, "'t'"),
        ({"x": random((3, 4)), "t": LABELS.astype(np.int64)}, {}, DTypeError, "'t'.*int32"),
        ({"x": random((3, 4)), "t": LABELS, "w": WEIGHTS[:2]}, {}, ShapeError, "'w'"),
        ({"x": random((3, 4)), "t": PROBS[:2]}, {"label_prob": 1}, ShapeError, "'t'"),
        ({"x": random((3, 4)), "t": LABELS}, {"scale": -1.0}, ArgumentError, "scale"),
    ],
)
def test_softmax_with_loss_bad_input(inputs, args, error, match):
    with pytest.raises(error, match=match):
        run_op("SoftmaxWithLoss", inputs, ["p", "loss"], **args)


@pytest.mark.parametrize("op_type", ["SoftmaxWithLoss", "SoftmaxWithLossGradient"])
def test_softmax_with_loss_order_must_be_nchw(op_type):
    """softmax_with_loss_op.h (0cdd09da6, 042e8ede4): order_ = StringToStorageOrder(
    GetSingleArgument<string>("order", "NCHW")); CAFFE_ENFORCE_EQ(order_, NCHW, "Only NCHW
    order is supported right now.") — in the constructor, before any input is read."""
    from caffe2rnn.errors import EnforceNotMet

    x = np.zeros((2, 3), np.float32)
    t = np.zeros(2, np.int32)
    feeds = {"x": x, "t": t}
    outputs = ["p", "loss"]
    if op_type == "SoftmaxWithLossGradient":
        feeds.update({"p": x, "dl": np.ones((), np.float32)})
        outputs = ["dx"]
    for order in ("NHWC", "nchw"):
        with pytest.raises(EnforceNotMet, match="Only NCHW order is supported right now"):
            run_op(op_type, feeds, outputs, order=order)
    run_op(op_type, feeds, outputs, order="NCHW", only_loss=1)
