"""BatchMatMul: forward against NumPy per batch entry, the four gradient-maker
cases, and every gradient against finite differences."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1

from caffe2rnn.errors import DTypeError, ShapeError

FLAGS = [(0, 0), (1, 0), (0, 1), (1, 1)]


def operands(trans_a, trans_b, c=2, m=3, k=4, n=5):
    a = random((c, k, m) if trans_a else (c, m, k), 1)
    b = random((c, n, k) if trans_b else (c, k, n), 2)
    return a, b


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_matches_per_batch_products(trans_a, trans_b, dtype):
    a, b = (x.astype(dtype) for x in operands(trans_a, trans_b))
    y = run1("BatchMatMul", {"A": a, "B": b}, trans_a=trans_a, trans_b=trans_b)
    assert y.dtype == dtype and y.shape == (2, 3, 5)
    for c in range(2):
        expected = (a[c].T if trans_a else a[c]) @ (b[c].T if trans_b else b[c])
        np.testing.assert_allclose(y[c], expected, rtol=1e-5)


@pytest.mark.parametrize(
    "trans_a, trans_b, expected",
    [
        (
            0,
            0,
            [
                ("BatchMatMul", "", ["Y_grad", "B"], ["A_grad"], [("trans_b", 1)], True),
                ("BatchMatMul", "", ["A", "Y_grad"], ["B_grad"], [("trans_a", 1)], True),
            ],
        ),
        (
            1,
            0,
            [
                ("BatchMatMul", "", ["B", "Y_grad"], ["A_grad"], [("trans_b", 1)], True),
                ("BatchMatMul", "", ["A", "Y_grad"], ["B_grad"], [], True),
            ],
        ),
        (
            0,
            1,
            [
                ("BatchMatMul", "", ["Y_grad", "B"], ["A_grad"], [], True),
                ("BatchMatMul", "", ["Y_grad", "A"], ["B_grad"], [("trans_a", 1)], True),
            ],
        ),
        (
            1,
            1,
            [
                (
                    "BatchMatMul",
                    "",
                    ["B", "Y_grad"],
                    ["A_grad"],
                    [("trans_a", 1), ("trans_b", 1)],
                    True,
                ),
                (
                    "BatchMatMul",
                    "",
                    ["Y_grad", "A"],
                    ["B_grad"],
                    [("trans_a", 1), ("trans_b", 1)],
                    True,
                ),
            ],
        ),
    ],
)
def test_gradient_maker_cases_do_not_copy_arguments(trans_a, trans_b, expected):
    ops, g_input = gradient_of("BatchMatMul", ["A", "B"], ["Y"], trans_a=trans_a, trans_b=trans_b)
    assert ops == expected
    assert g_input == ["A_grad", "B_grad"]


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
def test_gradients(trans_a, trans_b):
    a, b = operands(trans_a, trans_b, c=2, m=2, k=3, n=2)
    check_gradients("BatchMatMul", {"A": a, "B": b}, ["Y"], trans_a=trans_a, trans_b=trans_b)


@pytest.mark.parametrize(
    "a, b, error, match",
    [
        (random((2, 3)), random((2, 3, 4)), ShapeError, "'A'.*3 dims"),
        (random((2, 3, 4)), random((3, 4, 5)), ShapeError, "'B'.*dim 0 = 2"),
        (random((2, 3, 4)), random((2, 5, 5)), ShapeError, "'B'.*inner dim 4"),
        (random((2, 3, 4)), random((2, 4, 5), dtype=np.float64), DTypeError, "'B'"),
        (np.ones((2, 3, 4), np.int32), random((2, 4, 5)), DTypeError, "'A'"),
    ],
)
def test_bad_inputs(a, b, error, match):
    with pytest.raises(error, match=match):
        run1("BatchMatMul", {"A": a, "B": b})
