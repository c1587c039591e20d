"""Div, comparisons and logic, Max, Min, Log, Sqr, Sqrt, Pow, SumSqrElements: forward
against NumPy, Caffe2's gradient recipes, gradients against finite
differences, refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace


# --- Div ------------------------------------------------------------------------------
def test_div_of_floats_and_broadcast():
    a, b = random((2, 3), 1), random((2, 3), 2, low=0.5, high=2)
    np.testing.assert_allclose(run1("Div", {"a": a, "b": b}), a / b, rtol=1e-6)
    c = random((3,), 3, low=0.5, high=2)
    np.testing.assert_allclose(run1("Div", {"a": a, "c": c}, broadcast=1), a / c, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_div_of_integers_truncates_toward_zero(dtype):
    a = np.array([7, -7, 7, -7, 6], dtype)
    b = np.array([2, 2, -2, -2, 3], dtype)
    np.testing.assert_array_equal(run1("Div", {"a": a, "b": b}), [3, -3, -3, 3, 2])


def test_div_float_by_zero_is_ieee():
    out = run1("Div", {"a": np.array([1.0, -1.0], np.float32), "b": np.zeros(2, np.float32)})
    assert np.isinf(out).all() and out[0] > 0 > out[1]


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        # SIGFPE in Caffe2
        (
            {"a": np.array([1, 2], np.int32), "b": np.array([1, 0], np.int32)},
            EnforceNotMet,
            "'b'.*zero",
        ),
        (
            {"a": np.array([np.iinfo(np.int32).min], np.int32), "b": np.array([-1], np.int32)},
            EnforceNotMet,
            "overflows",
        ),
        ({"a": np.zeros(2, np.float32), "b": np.zeros(3, np.float32)}, ShapeError, "'b'"),
        ({"a": np.zeros(2, np.float32), "b": np.zeros(2, np.int32)}, DTypeError, "'b'"),
    ],
)
def test_div_refusals(inputs, error, match):
    run_fails("Div", inputs, error, match)


def test_div_gradient_maker_and_gradient():
    ops, g_input = gradient_of("Div", ["a", "b"], ["c"])
    assert ops == [("DivGradient", "", ["b", "c", "c_grad"], ["a_grad", "b_grad"], [], True)]
    check_gradients("Div", {"a": random((2, 3), 1), "b": random((2, 3), 2, low=0.5, high=2)}, ["c"])


def test_div_with_broadcast_has_no_gradient():
    with pytest.raises(GradientError, match="broadcasting"):
        gradient_of("Div", ["a", "b"], ["c"], broadcast=1)


# --- comparisons and logic --------------------------------------------------------------
@pytest.mark.parametrize(
    "op_type, fn",
    [("LT", np.less), ("LE", np.less_equal), ("GT", np.greater), ("GE", np.greater_equal)],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_ordering_comparisons(op_type, fn, dtype):
    a = np.array([[1, 2, 3], [3, 2, 1]], dtype)
    b = np.array([2, 2, 2], dtype)
    out = run1(op_type, {"a": a, "b": b}, broadcast=1)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, fn(a, b))
    np.testing.assert_array_equal(run1(op_type, {"a": a, "b": a[::-1].copy()}), fn(a, a[::-1]))


def test_eq_takes_integers_only():
    a, b = np.array([1, 2, 3], np.int64), np.array([1, 0, 3], np.int64)
    np.testing.assert_array_equal(run1("EQ", {"a": a, "b": b}), [True, False, True])
    # Caffe2's EQ kernel list was IntTypes
    run_fails(
        "EQ",
        {"a": np.zeros(2, np.float32), "b": np.zeros(2, np.float32)},
        DTypeError,
        "int32 or int64",
    )


@pytest.mark.parametrize(
    "op_type, fn", [("And", np.logical_and), ("Or", np.logical_or), ("Xor", np.logical_xor)]
)
def test_logical_ops(op_type, fn):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(run1(op_type, {"a": a, "b": b}), fn(a, b))
    run_fails(
        op_type,
        {"a": np.zeros(2, np.int32), "b": np.zeros(2, np.int32)},
        DTypeError,
        "expected bool",
    )


def test_not():
    np.testing.assert_array_equal(run1("Not", {"a": np.array([True, False])}), [False, True])
    run_fails("Not", {"a": np.zeros(2, np.float32)}, DTypeError, "'a'.*bool")


@pytest.mark.parametrize("op_type", ["LT", "EQ", "And", "Not"])
def test_comparisons_should_not_be_differentiated(op_type):
    inputs = ["a"] if op_type == "Not" else ["a", "b"]
    with pytest.raises(GradientError):
        gradient_of(op_type, inputs, ["c"])


# --- Max --------------------------------------------------------------------------------
def test_max_of_several_inputs():
    xs = {"x%d" % i: random((2, 3), i) for i in range(3)}
    np.testing.assert_array_equal(
        run1("Max", xs), np.maximum(np.maximum(xs["x0"], xs["x1"]), xs["x2"])
    )
    np.testing.assert_array_equal(run1("Max", {"x0": xs["x0"]}), xs["x0"])


def test_max_in_place_and_refusals():
    ws = Workspace()
    ws.feed("a", np.array([1, 5], np.float32))
    ws.feed("b", np.array([3, 2], np.float32))
    ws.run_operator_once(core.CreateOperator("Max", ["a", "b"], ["a"]))
    np.testing.assert_array_equal(ws.fetch("a"), [3, 5])
    # CAFFE_ENFORCE_EQ(output->dims(), Input(i).dims())
    run_fails(
        "Max", {"a": np.zeros(2, np.float32), "b": np.zeros(3, np.float32)}, ShapeError, "'b'"
    )


def test_max_gradient_maker_ties_and_finite_differences():
    ops, g_input = gradient_of("Max", ["a", "b"], ["m"])
    assert ops == [("MaxGradient", "", ["m", "m_grad", "a", "b"], ["a_grad", "b_grad"], [], True)]
    # a tie gives the whole gradient to each tied input, as in Caffe2
    ws = run_op(
        "Max", {"a": np.array([1.0, 2.0], np.float32), "b": np.array([1.0, 0.0], np.float32)}, ["m"]
    )
    ws.feed("m_grad", np.array([10.0, 20.0], np.float32))
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(
        core.CreateOperator("Max", ["a", "b"], ["m"]), ["m_grad"]
    )
    for op in grad_ops:
        ws.run_operator_once(op)
    np.testing.assert_array_equal(ws.fetch("a_grad"), [10, 20])
    np.testing.assert_array_equal(ws.fetch("b_grad"), [10, 0])
    a = np.array([0.1, 0.9, -0.4], np.float64)
    b = np.array([0.5, 0.2, -0.8], np.float64)
    op = core.CreateOperator("Max", ["a", "b"], ["m"])
    for i in (0, 1):
        assert_gradient_close(op, [a, b], i)


# --- Min (929c33cee's minmax_ops) -------------------------------------------------------
def test_min_of_several_inputs_and_in_place():
    xs = {"x%d" % i: random((2, 3), i) for i in range(3)}
    np.testing.assert_array_equal(
        run1("Min", xs), np.minimum(np.minimum(xs["x0"], xs["x1"]), xs["x2"])
    )
    np.testing.assert_array_equal(run1("Min", {"x0": xs["x0"]}), xs["x0"])
    ws = Workspace()
    ws.feed("a", np.array([1, 5], np.float32))
    ws.feed("b", np.array([3, 2], np.float32))
    ws.run_operator_once(core.CreateOperator("Min", ["a", "b"], ["a"]))
    np.testing.assert_array_equal(ws.fetch("a"), [1, 2])


def test_min_refusals():
    # CAFFE_ENFORCE_EQ(output->dims(), Input(i).dims()) (minmax_ops.h at 929c33cee)
    run_fails(
        "Min", {"a": np.zeros(2, np.float32), "b": np.zeros((2, 1), np.float32)}, ShapeError, "'b'"
    )
    run_fails("Min", {"a": np.zeros(2, np.float32), "b": np.zeros(2, np.int32)}, DTypeError, "'b'")
    run_fails(
        "MinGradient",
        {n: np.zeros(2, np.float32) for n in ("y", "dy", "a")} | {"b": np.zeros(3, np.float32)},
        ShapeError,
        "'b'",
        outputs=("da", "db"),
    )


def test_min_gradient_maker_ties_and_finite_differences():
    ops, g_input = gradient_of("Min", ["a", "b"], ["m"])
    assert ops == [("MinGradient", "", ["m", "m_grad", "a", "b"], ["a_grad", "b_grad"], [], True)]
    assert g_input == ["a_grad", "b_grad"]
    ws = run_op(
        "Min", {"a": np.array([1.0, 2.0], np.float32), "b": np.array([1.0, 0.0], np.float32)}, ["m"]
    )
    ws.feed("m_grad", np.array([10.0, 20.0], np.float32))
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(
        core.CreateOperator("Min", ["a", "b"], ["m"]), ["m_grad"]
    )
    for op in grad_ops:
        ws.run_operator_once(op)
    # dX_i = dY * (X_i == min): a tie gives the whole gradient to each tied input
    np.testing.assert_array_equal(ws.fetch("a_grad"), [10, 0])
    np.testing.assert_array_equal(ws.fetch("b_grad"), [10, 20])
    check_gradients(
        "Min",
        {"a": np.array([0.1, 0.9, -0.4]), "b": np.array([0.5, 0.2, -0.8]), "c": np.ones(3) * 0.3},
        ["m"],
    )


# --- Log, Sqr, Pow ----------------------------------------------------------------------
def test_log_sqr_pow_forward():
    x = random((2, 3), 1, low=0.1, high=3)
    np.testing.assert_allclose(run1("Log", {"x": x}), np.log(x), rtol=1e-6)
    np.testing.assert_allclose(run1("Sqr", {"x": x}), x * x, rtol=1e-6)
    np.testing.assert_allclose(run1("Pow", {"x": x}, exponent=0.5), np.sqrt(x), rtol=1e-6)
    ws = Workspace()  # until E6 the exponent defaults to 0 (E7 refuses: test_ops_e7_math.py)
    ws.feed("x", x)
    ws.run_operator_once(core.CreateOperator("Pow", ["x"], ["out"]), era="E6")
    np.testing.assert_array_equal(ws.fetch("out"), np.ones_like(x))
    assert np.isnan(run1("Pow", {"x": np.array([-4.0], np.float32)}, exponent=0.5)).all()


def test_sqrt_forward_and_nan_below_zero():
    x = random((2, 3), 1, low=0.0, high=3)
    np.testing.assert_allclose(run1("Sqrt", {"x": x}), np.sqrt(x), rtol=1e-6)
    assert run1("Sqrt", {"x": x}).dtype == np.float32
    assert run1("Sqrt", {"x": x.astype(np.float64)}).dtype == np.float64
    assert np.isnan(run1("Sqrt", {"x": np.array([-4.0], np.float32)})).all()


def test_sqrt_gradient_reads_the_output_and_holds_in_place():
    ops, g_input = gradient_of("Sqrt", ["x"], ["y"])
    assert ops == [
        ("Scale", "", ["y_grad"], ["x_grad"], [("scale", 0.5)], True),
        ("Div", "", ["x_grad", "y"], ["x_grad"], [], True),
    ]
    assert g_input == ["x_grad"]
    check_gradients("Sqrt", {"x": random((3, 2), 2, low=0.5, high=2)}, ["y"])
    # in place: the maker reads O(0), which is what the blob holds after the op
    ws = run_op("Sqrt", {"x": np.array([4.0, 9.0], np.float32)}, ["x"])
    ws.feed("x_grad_in", np.array([1.0, 3.0], np.float32))
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(
        core.CreateOperator("Sqrt", ["x"], ["x"]), ["x_grad_in"]
    )
    for op in grad_ops:
        ws.run_operator_once(op)
    np.testing.assert_allclose(ws.fetch("x_grad"), [1.0 / 4, 3.0 / 6])


@pytest.mark.parametrize("op_type", ["Log", "Sqr", "Pow", "Sqrt"])
def test_unary_math_refuses_integers(op_type):
    args = {"exponent": 2.0} if op_type == "Pow" else {}  # E7's Pow requires it
    run_fails(op_type, {"x": np.ones(2, np.int32)}, DTypeError, "'x'.*float32 or float64", **args)


def test_log_gradient_is_a_div():
    ops, _ = gradient_of("Log", ["x"], ["y"])
    assert ops == [("Div", "", ["y_grad", "x"], ["x_grad"], [], True)]
    check_gradients("Log", {"x": random((3, 2), 1, low=0.5, high=2)}, ["y"])


def test_sqr_gradient_doubles_the_output_gradient_in_place():
    ops, _ = gradient_of("Sqr", ["x"], ["y"])
    assert ops == [
        ("Scale", "", ["y_grad"], ["y_grad"], [("scale", 2.0)], True),
        ("Mul", "", ["y_grad", "x"], ["x_grad"], [], True),
    ]
    check_gradients("Sqr", {"x": random((3, 2), 2)}, ["y"])


def test_pow_gradient_recipe_and_finite_differences():
    ops, _ = gradient_of("Pow", ["x"], ["y"], exponent=2.5)
    assert ops == [
        ("Pow", "", ["x"], ["x_grad"], [("exponent", 1.5)], True),
        ("Mul", "", ["x_grad", "y_grad"], ["x_grad"], [], True),
        ("Scale", "", ["x_grad"], ["x_grad"], [("scale", 2.5)], True),
    ]
    check_gradients("Pow", {"x": random((3, 2), 3, low=0.5, high=2)}, ["y"], exponent=2.5)


# --- SumSqrElements ----------------------------------------------------------------------
def test_sum_sqr_elements():
    x = random((3, 4), 1)
    np.testing.assert_allclose(run1("SumSqrElements", {"x": x}), np.sum(x * x), rtol=1e-6)
    np.testing.assert_allclose(
        run1("SumSqrElements", {"x": x}, average=1), np.mean(x * x), rtol=1e-6
    )
    assert run1("SumSqrElements", {"x": x}).shape == ()
    # Caffe2 registered no gradient for it
    with pytest.raises(GradientError, match="not implemented"):
        gradient_of("SumSqrElements", ["x"], ["s"])


# --- Clip ------------------------------------------------------------------------------
def test_clip_forward_gradient_maker_and_gradient():
    x = random((3, 4), 1)
    np.testing.assert_array_equal(
        run1("Clip", {"x": x}, min=-0.5, max=0.25), np.clip(x, -0.5, 0.25)
    )
    np.testing.assert_array_equal(run1("Clip", {"x": x}), x)  # the whole float range
    np.testing.assert_array_equal(run1("Clip", {"x": x}, max=0.0), np.minimum(x, 0))
    ops, _ = gradient_of("Clip", ["x"], ["y"], min=-0.5)
    assert ops == [("ClipGradient", "", ["y", "y_grad"], ["x_grad"], [("min", -0.5)], True)]
    # values away from the bounds: the gradient is smooth there
    x64 = np.array([[-0.9, -0.2, 0.1, 0.8]], np.float64)
    check_gradients("Clip", {"x": x64}, ["y"], min=-0.5, max=0.5)


def test_clip_gradient_is_zero_at_and_beyond_the_bounds():
    ws = run_op(
        "ClipGradient",
        {"y": np.array([-0.5, 0.0, 0.5], np.float32), "dy": np.ones(3, np.float32)},
        ["dx"],
        min=-0.5,
        max=0.5,
    )
    np.testing.assert_array_equal(ws.fetch("dx"), [0, 1, 0])
    run_fails(
        "ClipGradient",
        {"y": np.zeros(3, np.float32), "dy": np.zeros(2, np.float32)},
        ShapeError,
        "'dy'",
    )


# --- RowwiseMax / ColwiseMax -----------------------------------------------------------
@pytest.mark.parametrize("op_type, axis", [("RowwiseMax", 2), ("ColwiseMax", 1)])
def test_rowwise_and_colwise_max(op_type, axis):
    x = random((2, 3, 4), 1)
    np.testing.assert_array_equal(run1(op_type, {"x": x}), x.max(axis=axis))
    run_fails(op_type, {"x": random((3, 4))}, ShapeError, "'x'.*3-D")
    ops, _ = gradient_of(op_type, ["x"], ["y"])
    assert ops == [(op_type + "Gradient", "", ["x", "y", "y_grad"], ["x_grad"], [], True)]
    x64 = np.random.RandomState(3).permutation(24).reshape(2, 3, 4).astype(np.float64)  # no ties
    check_gradients(op_type, {"x": x64}, ["y"])


# --- Where, IsMemberOf -------------------------------------------------------------------
def test_where_elementwise_and_on_rows():
    select = np.array([[True, False], [False, True]])
    left, right = random((2, 2), 1), random((2, 2), 2)
    np.testing.assert_array_equal(
        run1("Where", {"s": select, "l": left, "r": right}), np.where(select, left, right)
    )
    rows = np.array([False, True])
    out = run1("Where", {"s": rows, "l": left, "r": right}, broadcast_on_rows=1)
    np.testing.assert_array_equal(out, np.where(rows[:, None], left, right))
    run_fails("Where", {"s": rows, "l": left, "r": right}, ShapeError, "'s'")
    run_fails("Where", {"s": select, "l": left, "r": right.astype(np.float64)}, DTypeError, "'r'")


def test_is_member_of():
    x = np.array([[1, 5], [3, 1]], np.int64)
    np.testing.assert_array_equal(
        run1("IsMemberOf", {"x": x}, value=[1, 3]), [[True, False], [True, True]]
    )
    words = np.array(["a", "b"], object)
    np.testing.assert_array_equal(
        run1("IsMemberOf", {"x": words}, value=["b"], dtype=core.DataType.STRING), [False, True]
    )
    run_fails("IsMemberOf", {"x": np.zeros(2, np.float32)}, DTypeError, "'x'", value=[0])


# --- Logit, Softsign, ReplaceNaN -----------------------------------------------------------
def test_logit_softsign_replace_nan():
    x = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 2.0], np.float32)
    clamped = np.clip(x, 0.01, 0.99)
    np.testing.assert_allclose(
        run1("Logit", {"x": x}, eps=0.01), np.log(clamped / (1 - clamped)), rtol=1e-6
    )
    run_fails("Logit", {"x": x}, ArgumentError, "eps=0.5", eps=0.5)
    np.testing.assert_allclose(run1("Softsign", {"x": x}), x / (1 + np.abs(x)), rtol=1e-6)
    check_gradients("Softsign", {"x": np.array([-1.5, -0.2, 0.3, 2.0])}, ["y"])
    with pytest.raises(GradientError, match="in-place"):
        gradient_of("Softsign", ["x"], ["x"])
    y = np.array([1.0, np.nan, -2.0], np.float64)
    np.testing.assert_array_equal(run1("ReplaceNaN", {"y": y}, value=7.0), [1.0, 7.0, -2.0])


def cpp_max_reduction_gradient(x, y, dy, rowwise):
    """MaxReductionGradientOp::RunOnDevice (reduction_ops.cc, 0cdd09da6), loop for loop."""
    batch, m_size, n_size = x.shape
    yf, dyf = y.reshape(-1), dy.reshape(-1)
    dx = np.empty_like(x)
    for i in range(batch):
        for m in range(m_size):
            for n in range(n_size):
                k = i * m_size + m if rowwise else i * n_size + n
                dx[i, m, n] = dyf[k] if x[i, m, n] == yf[k] else 0
    return dx


@pytest.mark.parametrize(
    "op_type, rowwise", [("RowwiseMaxGradient", True), ("ColwiseMaxGradient", False)]
)
def test_max_reduction_gradient_matches_the_cpp_loop(op_type, rowwise):
    x = np.array([[[1.0, 5.0, 5.0], [2.0, np.nan, 0.0]]], np.float32)  # 1 x 2 x 3, a tie, a NaN
    y = np.nanmax(x, axis=2 if rowwise else 1)
    dy = np.full(y.shape, np.inf, np.float32)
    dy.reshape(-1)[0] = 3.0
    got = run_op(op_type, {"x": x, "y": y, "dy": dy}, ["dx"]).fetch("dx")
    want = cpp_max_reduction_gradient(x, y, dy, rowwise)
    np.testing.assert_array_equal(got, want)
    assert not np.isnan(got).any()  # inf dY times "not the maximum" is 0, not NaN


class CppIsMemberOf:
    """IsMemberOfOp (elementwise_logical_ops.h, 0cdd09da6): one set per type, one filled."""

    def __init__(self, value, dtype=None):
        self.sets = {"int32": set(), "int64": set(), "bool": set(), "string": set()}
        self.has_values = False
        self.value = value
        if dtype is not None:
            self.fill(dtype)

    def fill(self, kind):
        self.has_values = True
        if kind == "int32" and any(not -(2**31) <= v < 2**31 for v in self.value):
            raise ValueError("cannot be represented")
        self.sets[kind] |= {bool(v) for v in self.value} if kind == "bool" else set(self.value)

    def run(self, x):
        kind = {"int32": "int32", "int64": "int64", "bool": "bool"}.get(str(x.dtype), "string")
        if not self.has_values:
            self.fill(kind)
        return np.array([v in self.sets[kind] for v in x.reshape(-1).tolist()]).reshape(x.shape)


DT = {"int32": core.DataType.INT32, "int64": core.DataType.INT64, "bool": core.DataType.BOOL}


@pytest.mark.parametrize("dtype", [None, "int32", "int64", "bool"])
def test_is_member_of_reads_the_set_of_its_type_as_the_cpp(dtype):
    args = {"value": [1, 3, 2**40]}
    if dtype:
        args["dtype"] = DT[dtype]
    oracle_args = dict(value=args["value"], dtype=dtype)
    inputs = [
        np.array([1, 2, 3], np.int32),
        np.array([1, 2**40], np.int64),
        np.array([True, False]),
    ]
    ws = Workspace()
    op = core.CreateOperator("IsMemberOf", ["x"], ["y"], **args)
    try:
        oracle = CppIsMemberOf(**oracle_args)
    except ValueError:
        with pytest.raises(ArgumentError, match="cannot be represented"):
            ws.feed("x", inputs[0])
            ws.run_operator_once(op)
        return
    netdef = caffe2_pb2.NetDef(name="n")
    netdef.op.extend([op])
    ws.feed("x", inputs[0])
    ws.create_net(netdef)
    for x in inputs:  # the same op, run on one type after another
        ws.feed("x", x)
        try:
            want = oracle.run(x)
        except ValueError:
            with pytest.raises(ArgumentError, match="cannot be represented"):
                ws.run_net("n")
            return
        ws.run_net("n")
        np.testing.assert_array_equal(ws.fetch("y"), want)
