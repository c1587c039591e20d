"""Flatten, FlattenToVec and ResizeLike: shapes and values, gradients through
ResizeLike, errors."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1

from caffe2rnn.errors import ShapeError


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (3, 1, 2, 2), (0, 3)])
def test_flatten_keeps_dim_0(shape):
    x = random(shape, 1)
    y = run1("Flatten", {"X": x})
    rest = int(np.prod(shape[1:]))
    assert y.shape == (shape[0], rest)
    np.testing.assert_array_equal(y, x.reshape(shape[0], rest))


def test_flatten_to_vec_and_any_type():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    v = run1("FlattenToVec", {"X": x})
    assert v.dtype == np.int64
    np.testing.assert_array_equal(v, np.arange(24))
    np.testing.assert_array_equal(run1("Flatten", {"X": x}), x.reshape(2, 12))


def test_resize_like():
    x, like = random((6,), 1), random((2, 3), 2)
    np.testing.assert_array_equal(run1("ResizeLike", {"X": x, "like": like}), x.reshape(2, 3))
    with pytest.raises(ShapeError, match=r"input 0 \('X'\) has shape \(6,\); expected 4 elements"):
        run1("ResizeLike", {"X": x, "like": random((2, 2))})


@pytest.mark.parametrize("op_type, shape", [("Flatten", (2, 3, 2)), ("FlattenToVec", (2, 3))])
def test_gradients_resize_back(op_type, shape):
    ops, g_input = gradient_of(op_type, ["X"], ["Y"])
    assert ops == [("ResizeLike", "", ["Y_grad", "X"], ["X_grad"], [], True)]
    assert g_input == ["X_grad"]
    check_gradients(op_type, {"X": random(shape, 3)}, ["Y"])


def test_rank_errors_name_the_blob():
    with pytest.raises(ShapeError, match=r"input 0 \('X'\) has shape \(4,\); expected rank >= 2"):
        run1("Flatten", {"X": random((4,))})
    with pytest.raises(ShapeError, match=r"input 0 \('X'\) has shape \(\); expected rank >= 1"):
        run1("FlattenToVec", {"X": random(())})


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_e6_flatten_at_an_axis(axis):
    from caffe2rnn import eras

    x = random((2, 3, 4), 1)
    with eras.use("E6"):
        y = run1("Flatten", {"X": x}, axis=axis)
        np.testing.assert_array_equal(y, x.reshape(int(np.prod(x.shape[:axis])), -1))
        np.testing.assert_array_equal(run1("Flatten", {"X": random((4,))}), random((4,))[:, None])
        with pytest.raises(ShapeError, match=r"input 0 \('X'\).*rank >= axis \(4\)"):
            run1("Flatten", {"X": x}, axis=4)
