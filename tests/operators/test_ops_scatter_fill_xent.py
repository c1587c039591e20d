"""ScatterAssign, UniformIntFill, GivenTensorDoubleFill, CrossEntropy (soft
labels) and SigmoidCrossEntropyWithLogits, against NumPy formulas written
here; gradients by finite differences."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.runtime import Workspace


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_scatter_assign_overwrites_rows_in_place(dtype):
    data = (random((5, 2, 3), 1) * 10).astype(dtype)
    indices = np.array([3, 0, 3], np.int32)
    slices = (random((3, 2, 3), 2) * 10).astype(dtype)
    ws = run_op("ScatterAssign", {"data": data, "ind": indices, "x": slices}, ["data"])
    expected = data.copy()
    expected[0] = slices[1]
    expected[3] = slices[2]  # the last of the repeated index, as Caffe2's loop left it
    np.testing.assert_array_equal(ws.fetch("data"), expected)


def test_scatter_assign_refusals():
    data, slices = random((4, 2)), random((2, 2))
    with pytest.raises(EnforceNotMet, match="input 0 and output 0 to be the same blob"):
        run_op("ScatterAssign", {"d": data, "i": np.array([0, 1]), "x": slices}, ["other"])
    with pytest.raises(ShapeError, match=r"input 1 \('i'\) holds indices from 0 to 4"):
        run_op("ScatterAssign", {"d": data, "i": np.array([0, 4]), "x": slices}, ["d"])
    with pytest.raises(ShapeError, match=r"input 2 \('x'\).*6 values"):
        run_op("ScatterAssign", {"d": data, "i": np.array([0, 1, 2]), "x": slices}, ["d"])
    with pytest.raises(DTypeError, match=r"input 2 \('x'\) has type float64"):
        run_op(
            "ScatterAssign",
            {"d": data, "i": np.array([0, 1]), "x": slices.astype(np.float64)},
            ["d"],
        )


def test_uniform_int_fill_draws_both_bounds():
    out = run1("UniformIntFill", {}, shape=[2000], min=-2, max=1)
    assert out.dtype == np.int32 and out.shape == (2000,)
    assert set(np.unique(out).tolist()) == {-2, -1, 0, 1}
    with pytest.raises(ArgumentError, match="Max value should be bigger than min value"):
        run1("UniformIntFill", {}, shape=[3], min=2, max=2)


def test_uniform_int_fill_with_bound_blobs():
    ws = Workspace()
    ws.feed("shape", np.array([3, 4], np.int64))
    ws.feed("a", np.array([5], np.int32))
    ws.feed("b", np.array([7], np.int32))
    op = core.CreateOperator("UniformIntFill", ["shape", "a", "b"], ["y"], input_as_shape=1)
    ws.run_operator_once(op)
    y = ws.fetch("y")
    assert y.shape == (3, 4) and y.min() >= 5 and y.max() <= 7
    ws.feed("a", np.array([9], np.int32))
    ws.run_operator_once(op)
    assert ws.fetch("y").shape == (0, 4)  # min > max: empty along dim 0, as Caffe2
    ws.feed("a", np.array([1.0], np.float32))
    with pytest.raises(DTypeError, match=r"input 1 \('a'\)"):
        ws.run_operator_once(op)


def test_given_tensor_double_fill():
    out = run1("GivenTensorDoubleFill", {}, shape=[2, 2], values=[1.5, -2.0, 0.25, 3.0])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[1.5, -2.0], [0.25, 3.0]])


@pytest.mark.parametrize(
    "x_shape, label_shape", [((4, 3), (4, 3)), ((2, 3, 2), (2, 6)), ((5,), (1, 5))]
)
def test_cross_entropy_with_soft_labels(x_shape, label_shape):
    x = random(x_shape, 1, np.float64, 0.05, 1.0)
    label = random(label_shape, 2, np.float64, 0.0, 1.0)
    n = x_shape[0] if len(x_shape) > 1 else 1
    expected = -(label.reshape(n, -1) * np.log(x.reshape(n, -1))).sum(axis=1)
    np.testing.assert_allclose(run1("CrossEntropy", {"X": x, "label": label}), expected)
    check_gradients("CrossEntropy", {"X": x, "label": label}, ["Y"], indices=[0])


def test_cross_entropy_refusals():
    x = random((2, 3), 1, np.float32, 0.1, 1.0)
    with pytest.raises(ArgumentError, match="Soft label seems incorrect"):
        run1("CrossEntropy", {"X": x, "label": np.full((2, 3), 1.5, np.float32)})
    with pytest.raises(ShapeError, match=r"input 1 \('label'\)"):
        run1("CrossEntropy", {"X": x, "label": np.full((2,), 0.5, np.float32)})
    ops, _ = gradient_of("CrossEntropy", ["X", "label"], ["Y"])
    assert [(o[0], o[2], o[3]) for o in ops] == [
        ("CrossEntropyGradient", ["X", "label", "Y_grad"], ["X_grad"])
    ]


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (5,)])
def test_sigmoid_cross_entropy_with_logits(shape):
    logits = random(shape, 1, np.float64, -4, 4)
    targets = random(shape, 2, np.float64, 0, 1)
    p = 1 / (1 + np.exp(-logits))
    expected = -(targets * np.log(p) + (1 - targets) * np.log(1 - p)).mean(axis=-1)
    y = run1("SigmoidCrossEntropyWithLogits", {"logits": logits, "targets": targets})
    assert y.shape == shape[:-1]
    np.testing.assert_allclose(y, expected)
    check_gradients(
        "SigmoidCrossEntropyWithLogits", {"l": logits, "t": targets}, ["Y"], indices=[0]
    )


def test_sigmoid_cross_entropy_is_finite_for_large_logits():
    logits = np.array([[80.0, -80.0]], np.float32)
    targets = np.array([[1.0, 0.0]], np.float32)
    y = run1("SigmoidCrossEntropyWithLogits", {"logits": logits, "targets": targets})
    assert np.isfinite(y).all() and abs(y[0]) < 1e-6
    with pytest.raises(ShapeError, match=r"input 0 \('logits'\).*last dim > 0"):
        run1("SigmoidCrossEntropyWithLogits", {"logits": logits[:, :0], "targets": targets[:, :0]})


def test_weighted_sigmoid_cross_entropy_with_logits():
    logits = random((3, 4), 1, np.float64, -4, 4)
    targets = random((3, 4), 2, np.float64, 0, 1)
    weights = random((3, 4), 3, np.float64, 0, 2)
    p = 1 / (1 + np.exp(-logits))
    terms = targets * np.log(p) + (1 - targets) * np.log(1 - p)
    inputs = {"l": logits, "t": targets, "w": weights}
    y = run1("WeightedSigmoidCrossEntropyWithLogits", inputs)
    np.testing.assert_allclose(y, -(terms * weights).mean(axis=-1))
    check_gradients("WeightedSigmoidCrossEntropyWithLogits", inputs, ["Y"], indices=[0])
    ops, _ = gradient_of("WeightedSigmoidCrossEntropyWithLogits", ["l", "t", "w"], ["Y"])
    assert [(o[0], o[2]) for o in ops] == [
        ("WeightedSigmoidCrossEntropyWithLogitsGradient", ["Y_grad", "l", "t", "w"])
    ]
