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


# -- MatMul: two matrices (N-D inputs flattened at axis_a / axis_b, E6) ------------------


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
def test_matmul_forward_and_gradients(trans_a, trans_b):
    a = random((4, 3) if trans_a else (3, 4), 1, np.float64)
    b = random((5, 4) if trans_b else (4, 5), 2, np.float64)
    y = run1("MatMul", {"A": a, "B": b}, trans_a=trans_a, trans_b=trans_b)
    np.testing.assert_allclose(y, (a.T if trans_a else a) @ (b.T if trans_b else b))
    check_gradients("MatMul", {"A": a, "B": b}, ["Y"], trans_a=trans_a, trans_b=trans_b)
    ops, _ = gradient_of("MatMul", ["A", "B"], ["Y"], trans_a=trans_a, trans_b=trans_b)
    assert [op[0] for op in ops] == ["MatMul", "MatMul"]


@pytest.mark.parametrize(
    "a_shape, axis_a, b_shape, axis_b, a_matrix, b_matrix",
    [
        ((2, 3, 4), 1, (12, 5), 1, (2, 12), (12, 5)),
        ((2, 3, 4), 2, (4, 5), 1, (6, 4), (4, 5)),
        ((2, 3, 4), -1, (2, 2, 5), -1, (6, 4), (4, 5)),
        ((2, 3, 4), 1, (3, 4, 5), 2, (2, 12), (12, 5)),
    ],
)
def test_matmul_flattens_at_the_axes(a_shape, axis_a, b_shape, axis_b, a_matrix, b_matrix):
    a, b = random(a_shape, 1, np.float64), random(b_shape, 2, np.float64)
    y = run1("MatMul", {"A": a, "B": b}, axis_a=axis_a, axis_b=axis_b)
    np.testing.assert_allclose(y, a.reshape(a_matrix) @ b.reshape(b_matrix))


def test_matmul_bad_inputs():
    with pytest.raises(ShapeError, match=r"input 1 \('B'\)"):
        run1("MatMul", {"A": random((3, 4)), "B": random((3, 4))})
    with pytest.raises(DTypeError, match=r"1 \('B'\) have different types"):
        run1("MatMul", {"A": random((3, 4)), "B": random((4, 2), dtype=np.float64)})
    with pytest.raises(Exception, match=r"axis_a 3 is outside the 2 dims of input 0 \('A'\)"):
        run1("MatMul", {"A": random((3, 4)), "B": random((4, 2))}, axis_a=3)
