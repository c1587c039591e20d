"""Add / Sub / Mul with Caffe2's broadcast rules, SumReduceLike, Negative,
ElementwiseLinear: forward against NumPy, gradients against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ops_testing import check_gradients, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, ArgumentTypeError, DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.runtime import Workspace

OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}


def loop_broadcast(op, a, b, start):
    """C[idx] = A[idx] op B[idx[start:start + B.ndim]], one element at a time."""
    c = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        c[idx] = op(a[idx], b[idx[start : start + b.ndim]])
    return c


@pytest.mark.parametrize("op_type", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_same_shape_keeps_type(op_type, dtype):
    a = (random((2, 3), 1) * 10).astype(dtype)
    b = (random((2, 3), 2) * 10).astype(dtype)
    c = run1(op_type, {"A": a, "B": b})
    assert c.dtype == dtype
    np.testing.assert_array_equal(c, OPS[op_type](a, b))


@pytest.mark.parametrize("op_type", sorted(OPS))
@pytest.mark.parametrize(
    "b_shape, args, start",
    [
        ((4, 5), {}, 2),
        ((5,), {}, 3),
        ((3, 4), {"axis": 1}, 1),
        ((2,), {"axis": 0}, 0),
        ((3,), {"axis_str": "C"}, 1),
        ((3,), {"axis_str": "C", "order": "NCHW"}, 1),
        ((5,), {"axis_str": "C", "order": "NHWC"}, 3),
    ],
)
def test_broadcast_block(op_type, b_shape, args, start):
    a, b = random((2, 3, 4, 5), 1), random(b_shape, 2) + 2
    c = run1(op_type, {"A": a, "B": b}, broadcast=1, **args)
    np.testing.assert_allclose(c, loop_broadcast(OPS[op_type], a, b, start), rtol=1e-6)


@pytest.mark.parametrize("b_shape", [(1,), (), (1, 1)])
def test_broadcast_scalar_b(b_shape):
    a, b = random((2, 3), 1), np.full(b_shape, 1.5, np.float32)
    np.testing.assert_allclose(run1("Mul", {"A": a, "B": b}, broadcast=1), a * 1.5)


@settings(max_examples=15, deadline=None)
@given(
    a_shape=st.lists(st.integers(1, 3), min_size=2, max_size=4),
    data=st.data(),
    op_type=st.sampled_from(sorted(OPS)),
)
def test_broadcast_matches_elementwise_loop(a_shape, data, op_type):
    nb = data.draw(st.integers(1, len(a_shape) - 1))
    start = data.draw(st.integers(0, len(a_shape) - nb))
    a = random(tuple(a_shape), 3, np.float64)
    b = random(tuple(a_shape[start : start + nb]), 4, np.float64)
    c = run1(op_type, {"A": a, "B": b}, broadcast=1, axis=start)
    np.testing.assert_allclose(c, loop_broadcast(OPS[op_type], a, b, start))


def test_in_place_on_either_input_without_broadcast():
    a, b = random((2, 3), 1), random((2, 3), 2)
    ws = run_op("Sub", {"A": a, "B": b}, ["A"])
    np.testing.assert_allclose(ws.fetch("A"), a - b)
    ws = run_op("Sub", {"A": a, "B": b}, ["B"])
    np.testing.assert_allclose(ws.fetch("B"), a - b)


def test_in_place_on_a_with_broadcast_reuses_memory():
    ws = Workspace()
    a, b = random((2, 3), 1), random((3,), 2)
    ws.feed("A", a)
    ws.feed("B", b)
    before = ws.blob("A").value
    ws.run_operator_once(core.CreateOperator("Add", ["A", "B"], ["A"], broadcast=1))
    assert ws.blob("A").value is before
    np.testing.assert_allclose(ws.fetch("A"), a + b)


def test_in_place_on_b_with_broadcast_is_refused():
    with pytest.raises(
        EnforceNotMet, match="In-place is allowed only with the first tensor when broadcasting.*'B'"
    ):
        run_op("Add", {"A": random((2, 3)), "B": random((3,))}, ["B"], broadcast=1)


def test_shape_mismatch_without_broadcast_names_blob_and_creates_no_output():
    ws = Workspace()
    with pytest.raises(
        ShapeError,
        match=r"input 1 \('B'\) has shape \(3,\); expected "
        r"\(2, 3\).*did you forget to set broadcast=1",
    ):
        run_op("Add", {"A": random((2, 3)), "B": random((3,))}, ["C"], ws=ws)
    assert not ws.has_blob("C")  # the failed run left the workspace as it was


@pytest.mark.parametrize(
    "a_shape, b_shape, args, pattern",
    [
        ((2, 3), (2, 3), {}, r"input 1 \('B'\).*fewer dimensions"),
        ((2, 3, 4), (3, 5), {}, r"input 1 \('B'\) has shape \(3, 5\); expected \(3, 4\)"),
        ((2, 3, 4), (2, 3), {"axis": 1}, r"input 1 \('B'\).*expected \(3, 4\)"),
    ],
)
def test_broadcast_mismatch(a_shape, b_shape, args, pattern):
    with pytest.raises(ShapeError, match=pattern):
        run1("Mul", {"A": random(a_shape), "B": random(b_shape)}, broadcast=1, **args)


def test_broadcast_axis_out_of_range():
    with pytest.raises(ArgumentError, match="Broadcast axis should be in the range"):
        run1("Mul", {"A": random((2, 3, 4)), "B": random((3, 4))}, broadcast=1, axis=2)


@pytest.mark.parametrize(
    "args, pattern",
    [
        ({"axis": 1}, "Do not specify axis or axis_str if broadcast is not enabled"),
        ({"axis_str": "C"}, "Do not specify axis or axis_str if broadcast is not enabled"),
        ({"broadcast": 1, "axis": 1, "axis_str": "C"}, "cannot be used simultaneously"),
        ({"broadcast": 1, "axis_str": "X"}, "Unrecognizable axis string 'X'"),
        ({"broadcast": 1, "axis_str": "CH"}, "Unsupported axis string"),
    ],
)
def test_bad_axis_arguments(args, pattern):
    with pytest.raises(ArgumentError, match=pattern):
        run1("Add", {"A": random((2, 3)), "B": random((3,))}, **args)


def test_argument_of_wrong_kind():
    with pytest.raises(ArgumentTypeError, match="'axis'"):
        run1("Add", {"A": random((2, 3)), "B": random((3,))}, broadcast=1, axis=1.5)


@pytest.mark.parametrize(
    "a, b, pattern",
    [
        (np.ones(3, np.float32), np.ones(3, np.float64), r"input 1 \('B'\) is float64"),
        (np.ones(3, np.int8), np.ones(3, np.int8), r"input 0 \('A'\) has type int8"),
    ],
)
def test_type_errors(a, b, pattern):
    with pytest.raises(DTypeError, match=pattern):
        run1("Add", {"A": a, "B": b})


@pytest.mark.parametrize("op_type", sorted(OPS))
@pytest.mark.parametrize(
    "b_shape, args",
    [
        ((2, 3, 4), {}),
        ((4,), {"broadcast": 1}),
        ((3, 4), {"broadcast": 1}),
        ((3,), {"broadcast": 1, "axis": 1}),
        ((1,), {"broadcast": 1}),
        ((2,), {"broadcast": 1, "axis_str": "N"}),
    ],
)
def test_gradients(op_type, b_shape, args):
    check_gradients(
        op_type, {"A": random((2, 3, 4), 1), "B": random(b_shape, 2) + 1}, ["C"], **args
    )


@pytest.mark.parametrize("op_type", ["Add", "Sub"])
def test_gradients_in_place(op_type):
    check_gradients(op_type, {"A": random((2, 3), 1), "B": random((2, 3), 2)}, ["A"])
    check_gradients(op_type, {"A": random((2, 3), 1), "B": random((3,), 2)}, ["A"], broadcast=1)


def test_sum_reduce_like():
    a = random((2, 3, 4, 5), 1, np.float64)
    np.testing.assert_allclose(
        run1("SumReduceLike", {"A": a, "B": random((4, 5))}), a.sum(axis=(0, 1))
    )
    np.testing.assert_allclose(
        run1("SumReduceLike", {"A": a, "B": random((3, 4))}, axis=1), a.sum(axis=(0, 3))
    )
    np.testing.assert_allclose(
        run1("SumReduceLike", {"A": a, "B": random((3,))}, axis_str="C", order="NCHW"),
        a.sum(axis=(0, 2, 3)),
    )
    scalar = run1("SumReduceLike", {"A": a, "B": random((1,))})
    assert scalar.shape == (1,)
    np.testing.assert_allclose(scalar, [a.sum()])


def test_sum_reduce_like_ignores_a_broadcast_argument_and_checks_shapes():
    a = random((2, 3))
    np.testing.assert_allclose(
        run1("SumReduceLike", {"A": a, "B": random((3,))}, broadcast=1), a.sum(axis=0), rtol=1e-6
    )
    with pytest.raises(ShapeError, match=r"input 1 \('B'\) has shape \(2,\); expected \(3,\)"):
        run1("SumReduceLike", {"A": a, "B": random((2,))})


def test_negative():
    x = random((2, 3), 1)
    np.testing.assert_array_equal(run1("Negative", {"X": x}), -x)
    ints = np.arange(4, dtype=np.int64)
    assert run1("Negative", {"X": ints}).dtype == np.int64
    ws = run_op("Negative", {"X": x}, ["X"])
    np.testing.assert_array_equal(ws.fetch("X"), -x)
    check_gradients("Negative", {"X": x}, ["Y"])
    with pytest.raises(DTypeError, match=r"input 0 \('X'\)"):
        run1("Negative", {"X": np.ones(2, bool)})


@pytest.mark.parametrize(
    "shape, axis", [((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), -1)]
)
def test_elementwise_linear(shape, axis):
    x = random(shape, 1, np.float64)
    n = int(np.prod(shape[: axis % len(shape)]))
    d = x.size // n
    w, b = random((d,), 2, np.float64), random((d,), 3, np.float64)
    y = run1("ElementwiseLinear", {"X": x, "w": w, "b": b}, axis=axis)
    np.testing.assert_allclose(y, (x.reshape(n, d) * w + b).reshape(shape))
    check_gradients("ElementwiseLinear", {"X": x, "w": w, "b": b}, ["Y"], axis=axis)


def test_elementwise_linear_errors():
    x = random((4, 3))
    with pytest.raises(ShapeError, match=r"input 1 \('w'\) has shape \(4,\); expected \(3,\)"):
        run1("ElementwiseLinear", {"X": x, "w": random((4,)), "b": random((3,))})
    with pytest.raises(DTypeError, match=r"input 2 \('b'\) has type float64"):
        run1("ElementwiseLinear", {"X": x, "w": random((3,)), "b": random((3,), dtype=np.float64)})


# --- Exp -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_forward_and_in_place(dtype):
    x = random((2, 3), 1, dtype, -3, 3)
    y = run1("Exp", {"X": x})
    assert y.dtype == dtype
    np.testing.assert_allclose(y, np.exp(x.astype(np.float64)), rtol=1e-6)
    ws = Workspace()
    ws.feed("X", x)
    memory = ws.blob("X").value
    ws.run_operator_once(core.CreateOperator("Exp", ["X"], ["X"]))
    assert ws.blob("X").value is memory
    np.testing.assert_allclose(ws.fetch("X"), y)


def test_exp_gradient_is_y_times_dy():
    from ops_testing import gradient_of

    ops, g_input = gradient_of("Exp", ["X"], ["Y"])
    assert ops == [("Mul", "", ["Y", "Y_grad"], ["X_grad"], [], True)]
    assert g_input == ["X_grad"]
    check_gradients("Exp", {"X": random((3, 2), 2)}, ["Y"])


def test_exp_needs_floats():
    with pytest.raises(DTypeError, match=r"input 0 \('X'\) has type int32"):
        run1("Exp", {"X": np.arange(3, dtype=np.int32)})


# -- E6 (0c50143fe): size-1 dims at either end of B are left out of the block -----------


@pytest.mark.parametrize(
    "b_shape, axis, numpy_b_shape",
    [((1, 4, 1), 1, (1, 1, 4, 1)), ((1, 3, 4, 1), 0, (1, 3, 4, 1)), ((3, 1), 1, (1, 3, 1, 1))],
)
def test_e6_broadcast_strips_unit_end_dims(b_shape, axis, numpy_b_shape):
    from caffe2rnn import eras

    a = random((2, 3, 4, 5), 1, np.float64)
    b = random(b_shape, 2, np.float64)
    with eras.use("E6"):
        out = run1("Add", {"A": a, "B": b}, broadcast=1, axis=axis)
        np.testing.assert_allclose(out, a + b.reshape(numpy_b_shape))
        reduced = run1("SumReduceLike", {"A": a, "B": b}, axis=axis)
        expected = np.broadcast_to(a, a.shape).sum(
            axis=tuple(i for i, d in enumerate(numpy_b_shape) if d == 1), keepdims=True
        )
        np.testing.assert_allclose(reduced, expected.reshape(b_shape))
        check_gradients("Mul", {"A": a, "B": b}, ["C"], broadcast=1, axis=axis)
    with eras.use("E5"), pytest.raises(ShapeError, match=r"input 1 \('B'\)"):
        run1("Add", {"A": a, "B": b}, broadcast=1, axis=axis)
