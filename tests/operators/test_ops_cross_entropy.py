"""LabelCrossEntropy and MakeTwoClass: forward against formulas written here,
gradients against finite differences, gradient makers, errors."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close


def probabilities(shape, seed):
    p = random(shape, seed, np.float64, 0.05, 1.0)
    return p / p.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("label_shape", [(4,), (4, 1)])
def test_label_cross_entropy_forward(label_shape):
    x = probabilities((4, 5), 1)
    label = np.array([0, 4, 2, 2], np.int32).reshape(label_shape)
    y = run1("LabelCrossEntropy", {"X": x, "label": label})
    expected = np.array([-np.log(x[i, label.reshape(-1)[i]]) for i in range(4)])
    assert y.shape == (4,) and y.dtype == np.float64
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_label_cross_entropy_views_rows_and_floors_zero():
    x = probabilities((2, 2, 3), 2)  # N = 2 rows of D = 6
    label = np.array([5, 0], np.int32)
    rows = x.reshape(2, 6)
    np.testing.assert_allclose(
        run1("LabelCrossEntropy", {"X": x, "label": label}),
        -np.log([rows[0, 5], rows[1, 0]]),
    )
    vector = probabilities((3,), 3)  # a 1-D X is one row
    np.testing.assert_allclose(
        run1("LabelCrossEntropy", {"X": vector, "label": np.array([1], np.int32)}),
        [-np.log(vector[1])],
    )
    zero = np.array([[0.0, 1.0]], np.float32)
    y = run1("LabelCrossEntropy", {"X": zero, "label": np.array([0], np.int32)})
    np.testing.assert_allclose(y, [-np.log(np.float32(1e-20))], rtol=1e-6)


def test_label_cross_entropy_gradient():
    x = probabilities((3, 4), 4).astype(np.float32)
    label = np.array([1, 3, 0], np.int32)
    ops, g_input = gradient_of("LabelCrossEntropy", ["X", "label"], ["Y"])
    assert ops == [
        ("LabelCrossEntropyGradient", "", ["X", "label", "Y_grad"], ["X_grad"], [], True)
    ]
    assert g_input == ["X_grad", None]
    op = core.CreateOperator("LabelCrossEntropy", ["X", "label"], ["Y"])
    assert_gradient_close(op, [x.astype(np.float64), label], 0)
    dy = random((3,), 5)
    dx = run_op("LabelCrossEntropyGradient", {"X": x, "label": label, "dY": dy}, ["dX"]).fetch("dX")
    expected = np.zeros_like(x)
    expected[np.arange(3), label] = -dy / x[np.arange(3), label]
    np.testing.assert_allclose(dx, expected, rtol=1e-6)


@pytest.mark.parametrize(
    "label, error, match",
    [
        (
            np.array([0, 5, 1], np.int32),
            ShapeError,
            r"input 1 \('label'\): label values must be in \[0, 5\)",
        ),
        (np.array([0, -1, 1], np.int32), ShapeError, r"got values from -1 to 1"),
        (
            np.array([0, 1], np.int32),
            ShapeError,
            r"input 1 \('label'\) has shape \(2,\); expected \(3,\)",
        ),
        (np.array([[0, 1, 1]], np.int32), ShapeError, r"input 1 \('label'\)"),
        (
            np.array([0, 1, 1], np.int64),
            DTypeError,
            r"input 1 \('label'\) has type int64; expected int32",
        ),
    ],
)
def test_label_cross_entropy_errors(label, error, match):
    with pytest.raises(error, match=match):
        run1("LabelCrossEntropy", {"X": probabilities((3, 5), 6), "label": label})
    with pytest.raises(ShapeError, match=r"input 2 \('dY'\)"):
        run_op(
            "LabelCrossEntropyGradient",
            {
                "X": probabilities((3, 5), 6),
                "label": np.array([0, 1, 2], np.int32),
                "dY": random((2,)),
            },
            ["dX"],
        )


@pytest.mark.parametrize("shape", [(4,), (2, 3), ()])
def test_make_two_class(shape):
    x = random(shape, 7, np.float64, 0.0, 1.0)
    y = run1("MakeTwoClass", {"X": x})
    assert y.shape == shape + (2,)
    np.testing.assert_allclose(y, np.stack([1 - x, x], axis=-1))
    check_gradients("MakeTwoClass", {"X": x}, ["Y"])
    ops, g_input = gradient_of("MakeTwoClass", ["X"], ["Y"])
    assert ops == [("MakeTwoClassGradient", "", ["Y_grad"], ["X_grad"], [], True)]
    dy = random(shape + (2,), 8, np.float64)
    np.testing.assert_allclose(run1("MakeTwoClassGradient", {"dY": dy}), dy[..., 1] - dy[..., 0])


def test_make_two_class_gradient_needs_two_columns():
    with pytest.raises(
        ShapeError, match=r"input 0 \('dY'\) has shape \(4, 3\); expected a last dimension of 2"
    ):
        run1("MakeTwoClassGradient", {"dY": random((4, 3))})
