"""RowMul / ReduceTailSum (gradients by finite differences), MultiClassAccuracy
and Perplexity, against NumPy formulas."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn.errors import ShapeError


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 2), (5,)])
def test_row_mul_and_reduce_tail_sum(shape):
    mat, w = random(shape, 1, np.float64), random((shape[0],), 2, np.float64)
    expected = mat * w.reshape((-1,) + (1,) * (len(shape) - 1))
    np.testing.assert_allclose(run1("RowMul", {"mat": mat, "w": w}), expected)
    np.testing.assert_allclose(
        run1("ReduceTailSum", {"mat": mat}), mat.reshape(shape[0], -1).sum(axis=1)
    )
    check_gradients("RowMul", {"mat": mat, "w": w}, ["Y"])


def test_row_mul_gradient_maker():
    ops, g_input = gradient_of("RowMul", ["mat", "w"], ["Y"])
    assert [(op[0], op[2], op[3]) for op in ops] == [
        ("RowMul", ["Y_grad", "w"], ["mat_grad"]),
        ("Mul", ["Y_grad", "mat"], ["w_gradbefore_aggregate"]),
        ("ReduceTailSum", ["w_gradbefore_aggregate"], ["w_grad"]),
    ]
    assert g_input == ["mat_grad", "w_grad"]


def test_row_mul_needs_one_weight_per_row():
    with pytest.raises(ShapeError, match=r"input 1 \('w'\).*3 elements, one per row"):
        run1("RowMul", {"mat": random((3, 2)), "w": random((2,))})


def test_multi_class_accuracy():
    rng = np.random.RandomState(0)
    x = rng.rand(12, 4).astype(np.float32)
    x[0] = 0.5  # a tie: the first class wins
    labels = rng.randint(0, 4, 12).astype(np.int32)
    labels[3] = 2
    labels[labels == 3] = 1  # class 3 has no row: accuracy 0
    ws = run_op("MultiClassAccuracy", {"X": x, "labels": labels}, ["acc", "amounts"])
    predicted = x.argmax(axis=1)
    for c in range(4):
        rows = labels == c
        assert ws.fetch("amounts")[c] == rows.sum()
        expected = (predicted[rows] == c).mean() if rows.any() else 0.0
        np.testing.assert_allclose(ws.fetch("acc")[c], expected, rtol=1e-6)
    assert ws.fetch("acc").dtype == np.float32 and ws.fetch("amounts").dtype == np.int32
    with pytest.raises(ShapeError, match=r"input 1 \('labels'\) holds labels from"):
        run_op("MultiClassAccuracy", {"X": x, "labels": labels + 2}, ["acc", "amounts"])


def test_perplexity():
    p = np.array([0.5, 0.25, 0.8, 0.1], np.float32)
    value = run1("Perplexity", {"p": p})
    assert value.shape == () and value.dtype == np.float32
    np.testing.assert_allclose(value, np.prod(p.astype(np.float64) ** (-1 / 4)), rtol=1e-6)
    assert run1("Perplexity", {"p": np.zeros(0, np.float32)}) == 1.0
    with pytest.raises(ShapeError, match=r"input 0 \('p'\).*1-D"):
        run1("Perplexity", {"p": np.ones((2, 2), np.float32)})
