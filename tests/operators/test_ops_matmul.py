"""BatchMatMul and MatMul: forward against NumPy (per batch entry), the four
gradient-maker cases of each (MatMul's in E5 and E6 form), every gradient against
finite differences, MatMul's axes and third input (E6), and bad input."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op

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
        (random((2, 3)), random((2, 3, 4)), ShapeError, "A = 2 and B = 3 .*broadcast=0"),
        (random((2, 3, 4)), random((3, 4, 5)), ShapeError, "'B'.*dimension 0 of size 2"),
        (random((2, 3, 4)), random((2, 5, 5)), ShapeError, "'B'.*inner dim 4"),
        (random((2, 3, 4)), random((2, 4, 5), dtype=np.float64), DTypeError, "'B'"),
        (np.ones((2, 3, 4), np.int32), random((2, 4, 5)), DTypeError, "'A'"),
    ],
)
def test_bad_inputs(a, b, error, match):
    with pytest.raises(error, match=match):
        run1("BatchMatMul", {"A": a, "B": b})


# -- MatMul ---------------------------------------------------------------------------


def matrices(trans_a, trans_b, m=3, k=4, n=5, dtype=np.float32):
    a = random((k, m) if trans_a else (m, k), 3, dtype)
    b = random((n, k) if trans_b else (k, n), 4, dtype)
    return a, b


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_forward(trans_a, trans_b, dtype):
    a, b = matrices(trans_a, trans_b, dtype=dtype)
    y = run1("MatMul", {"A": a, "B": b}, trans_a=trans_a, trans_b=trans_b)
    expected = np.dot(a.T if trans_a else a, b.T if trans_b else b)
    assert y.dtype == dtype and y.shape == (3, 5)
    np.testing.assert_allclose(y, expected, rtol=1e-5)


def _mm(inputs, output, **args):
    return ("MatMul", "", inputs, [output], list(args.items()), True)


MATMUL_E5_GRADIENTS = {
    (0, 0): [_mm(["Y_grad", "B"], "A_grad", trans_b=1), _mm(["A", "Y_grad"], "B_grad", trans_a=1)],
    (1, 0): [_mm(["B", "Y_grad"], "A_grad", trans_b=1), _mm(["A", "Y_grad"], "B_grad")],
    (0, 1): [_mm(["Y_grad", "B"], "A_grad"), _mm(["Y_grad", "A"], "B_grad", trans_a=1)],
    (1, 1): [
        _mm(["B", "Y_grad"], "A_grad", trans_a=1, trans_b=1),
        _mm(["Y_grad", "A"], "B_grad", trans_a=1, trans_b=1),
    ],
}


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
def test_matmul_gradient_maker_e5(trans_a, trans_b):
    ops, g_input = gradient_of(
        "MatMul", ["A", "B"], ["Y"], trans_a=trans_a, trans_b=trans_b, axis_a=2
    )
    assert ops == MATMUL_E5_GRADIENTS[trans_a, trans_b]  # no axes, no third input
    assert g_input == ["A_grad", "B_grad"]


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
def test_matmul_gradient_maker_e6_adds_the_input_and_a_boolean_axis(trans_a, trans_b):
    # axis 3 and -2 reach the gradient ops as 1: Caffe2 kept them in a C++ bool
    with eras.use("E6"):
        ops, _ = gradient_of(
            "MatMul", ["A", "B"], ["Y"], trans_a=trans_a, trans_b=trans_b, axis_a=3, axis_b=-2
        )
    da, db = ops
    expected_da, expected_db = MATMUL_E5_GRADIENTS[trans_a, trans_b]
    axis_of_da = "axis_a" if trans_a else "axis_b"
    axis_of_db = "axis_b" if trans_b else "axis_a"
    assert da[2] == expected_da[2] + ["A"] and db[2] == expected_db[2] + ["B"]
    assert da[4] == expected_da[4] + [(axis_of_da, 1)]
    assert db[4] == expected_db[4] + [(axis_of_db, 1)]


@pytest.mark.parametrize("trans_a, trans_b", FLAGS)
def test_matmul_gradients(trans_a, trans_b):
    a, b = matrices(trans_a, trans_b, m=2, k=3, n=2)
    check_gradients("MatMul", {"A": a, "B": b}, ["Y"], trans_a=trans_a, trans_b=trans_b)


def flattened(x, axis):
    axis %= x.ndim
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


MATMUL_AXES_CASES = [  # (A's shape, B's shape, arguments)
    ((2, 3, 4), (4, 5), dict(axis_a=2)),
    ((2, 3, 4), (3, 4, 5), dict(axis_a=1, axis_b=2)),
    ((2, 3, 4), (6, 5), dict(axis_a=-1, trans_a=1)),
    ((6, 4), (5, 2, 2), dict(axis_b=1, trans_b=1)),
    ((4, 3), (12, 2), dict(axis_a=0)),
    ((3, 2, 2), (5, 3), dict(axis_a=1, axis_b=-1, trans_a=1, trans_b=1)),
]


@pytest.mark.parametrize("a_shape, b_shape, args", MATMUL_AXES_CASES)
def test_matmul_axes_e6_flatten_the_inputs(a_shape, b_shape, args):
    a, b = random(a_shape, 6), random(b_shape, 7)
    with eras.use("E6"):
        y = run1("MatMul", {"A": a, "B": b}, **args)
    a2, b2 = flattened(a, args.get("axis_a", 1)), flattened(b, args.get("axis_b", 1))
    expected = np.dot(a2.T if args.get("trans_a") else a2, b2.T if args.get("trans_b") else b2)
    np.testing.assert_allclose(y, expected, rtol=1e-5)


def test_matmul_gradients_e6_come_back_in_the_inputs_shapes():
    a, b = random((2, 3, 2), 8), random((6, 2), 9)
    with eras.use("E6"):
        check_gradients("MatMul", {"A": a, "B": b}, ["Y"], axis_a=1)
        check_gradients("MatMul", {"A": b, "B": a}, ["Y"], trans_a=1, trans_b=1, axis_b=1)


def test_matmul_gradient_e6_of_axis_2_fails_as_in_caffe2():
    """The gradient ops get axis 1 for axis 2 (a C++ bool), so dB's product does not fit."""
    with eras.use("E6"):
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"], axis_a=2)
        ws = run_op("MatMul", {"A": random((2, 3, 4)), "B": random((4, 5))}, ["Y"], axis_a=2)
        ws.feed("Y_grad", np.ones((6, 5), np.float32))
        grad_ops, _ = get_gradient_for_op(op, ["Y_grad"])
        ws.run_operator_once(grad_ops[0])  # dA: fine
        with pytest.raises(ShapeError, match="Dimension mismatch: trans\\(A\\): 12 2, B: 6 5"):
            ws.run_operator_once(grad_ops[1])


def test_matmul_third_input_shapes_y_e6():
    a, b = random((2, 3), 1), random((3, 4), 2)
    product = a @ b
    with eras.use("E6"):
        y = run1("MatMul", {"A": a, "B": b, "like": np.zeros((4, 2, 1), np.int32)})
        np.testing.assert_allclose(y, product.reshape(4, 2, 1), rtol=1e-6)
        shrunk = run1("MatMul", {"A": a, "B": b, "like": np.zeros(5)})
        np.testing.assert_allclose(shrunk, product.reshape(-1)[:5], rtol=1e-6)
        run_fails("MatMul", {"A": a, "B": b, "like": np.zeros((3, 3))}, ShapeError, "'like'")


@pytest.mark.parametrize(
    "era, inputs, args, error, match",
    [
        ("E5", {"A": random((2, 3, 4)), "B": random((4, 5))}, {}, ShapeError, "'A'.*2-D"),
        ("E5", {"A": random((2, 3)), "B": random((4, 5))}, {}, ShapeError, "A: 2 3, B: 4 5"),
        (
            "E5",
            {"A": random((2, 3)), "B": random((3, 5))},
            {"trans_a": 1},
            ShapeError,
            "Dimension mismatch: trans\\(A\\): 3 2, B: 3 5",
        ),
        (
            "E5",
            {"A": random((2, 3)), "B": random((3, 5)), "C": random(1)},
            {},
            EnforceNotMet,
            "MatMul takes 2 inputs",
        ),
        (
            "E6",
            {"A": random((2, 3)), "B": random((3, 5))},
            {"axis_a": 2},
            ArgumentError,
            "axis_a is 2.*'A'",
        ),
        ("E6", {"A": random(3), "B": random((3, 5))}, {}, ArgumentError, "axis_a is 1"),
        ("E5", {"A": random((2, 3)), "B": random((3, 5), dtype=np.float64)}, {}, DTypeError, "'B'"),
        ("E5", {"A": np.ones((2, 3), np.int32), "B": random((3, 5))}, {}, DTypeError, "'A'"),
    ],
)
def test_matmul_bad_inputs(era, inputs, args, error, match):
    with eras.use(era):
        run_fails("MatMul", inputs, error, match, **args)


def test_matmul_gradient_of_three_inputs_is_refused():
    with eras.use("E6"), pytest.raises(EnforceNotMet, match="2 inputs"):
        gradient_of("MatMul", ["A", "B", "C"], ["Y"])


def cpp_batch_matmul(a, b, trans_a, trans_b, broadcast):
    """BatchMatMulOp::DoRunWithType (batch_matmul_op.h at 042e8ede4) in float64 loops: the
    checks, the output shape, then one GEMM per (outer batch, sub-batch) as GemmBatched did."""
    if not broadcast and (a.ndim != b.ndim or a.ndim < 2):
        raise ValueError()
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise ValueError()
        return np.array([float(np.dot(a.astype(float), b.astype(float)))])
    dims_a, dims_b = list(a.shape), list(b.shape)
    a_b = b_b = False
    if len(dims_a) == 1:
        dims_a, a_b = [1] + dims_a, True
    if len(dims_b) == 1:
        dims_b, b_b = dims_b + [1], True
    inner = min(len(dims_a), len(dims_b))
    for i in range(2, inner):
        if dims_a[-1 - i] != dims_b[-1 - i]:
            raise ValueError()
    m, k = (dims_a[-1], dims_a[-2]) if trans_a else (dims_a[-2], dims_a[-1])
    n, kb = (dims_b[-2], dims_b[-1]) if trans_b else (dims_b[-1], dims_b[-2])
    if k != kb:
        raise ValueError()
    new = list((dims_a if len(dims_a) >= len(dims_b) else dims_b)[:-2])
    batch = new[:]
    new += ([] if a_b else [m]) + ([] if b_b else [n])
    A = a.astype(float).reshape(dims_a)
    B = b.astype(float).reshape(dims_b)
    Y = np.zeros(batch + [m, n])
    for idx in np.ndindex(*batch) if batch else [()]:
        ia = idx[len(idx) - (len(dims_a) - 2) :] if len(dims_a) > 2 else ()
        ib = idx[len(idx) - (len(dims_b) - 2) :] if len(dims_b) > 2 else ()
        ma, mb = A[ia], B[ib]
        ma = ma.T if trans_a else ma
        mb = mb.T if trans_b else mb
        for r in range(m):
            for c in range(n):
                Y[idx + (r, c)] = sum(ma[r, j] * mb[j, c] for j in range(k))
    return Y.reshape(new)


@pytest.mark.parametrize(
    "shape_a, shape_b, trans_a, trans_b, broadcast",
    [
        ((2, 3, 4, 5), (2, 3, 5, 2), 0, 0, 0),
        ((2, 3, 5, 4), (2, 3, 2, 5), 1, 1, 0),
        ((4, 3), (3, 2), 0, 0, 0),
        ((2, 3, 4, 5), (3, 5, 2), 0, 0, 1),  # B's batch dims are A's last ones
        ((3, 4, 5), (2, 3, 5, 2), 0, 0, 1),
        ((2, 3, 4, 5), (2, 5, 2), 0, 0, 1),  # (2,) is not a suffix of (2, 3): refused
        ((5,), (2, 5, 3), 0, 0, 1),  # a vector A: M left out
        ((2, 4, 5), (5,), 0, 0, 1),  # a vector B: N left out
        ((5,), (5,), 0, 0, 1),  # two vectors: (1,)
        ((2, 4, 5), (2, 5, 3), 0, 0, 0),
        ((2, 4, 5), (5, 3), 0, 0, 0),  # ranks differ without broadcast: refused
    ],
)
def test_batch_matmul_nd_matches_the_cpp(shape_a, shape_b, trans_a, trans_b, broadcast):
    a, b = random(shape_a, 1), random(shape_b, 2)
    args = dict(trans_a=trans_a, trans_b=trans_b, broadcast=broadcast)
    try:
        want = cpp_batch_matmul(a, b, trans_a, trans_b, broadcast)
    except ValueError:
        with pytest.raises(ShapeError):
            run1("BatchMatMul", {"A": a, "B": b}, **args)
        return
    got = run1("BatchMatMul", {"A": a, "B": b}, **args)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_batch_matmul_has_no_broadcast_gradient():
    with pytest.raises(GradientError, match="broadcast=1"):
        gradient_of("BatchMatMul", ["a", "b"], ["y"], broadcast=1)
