"""E7's math operators (Caffe2 929c33cee): Pow with a tensor of exponents, the lengths
input of ReduceFront/Back{Sum,Mean,Max}, ReduceSum/ReduceMean, and TopK's axis.

Forward results are checked against references written with explicit loops (not the
operators' NumPy calls), gradients against finite differences, and each CAFFE_ENFORCE
refusal of the E7 C++ (pow_op.h, reduction_front_back_ops.h, reduce_ops.h, top_k.cc),
with the older eras' forms where the era policies keep them.
"""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run_fails, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import (
    ArgumentError,
    DTypeError,
    EnforceNotMet,
    GradientError,
    InvalidValueError,
    ShapeError,
)
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.runtime import Workspace


def run_in(era, op_type, inputs, outputs, **args):
    """Run one op created as ``era``'s; return the workspace."""
    ws = Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator(op_type, list(inputs), outputs, **args), era=era)
    return ws


# --- Pow([X, E]) ---------------------------------------------------------------------------
def pow_reference(x, e, start):
    """X ** E element by element, E's index taken from X's dims ``start...`` (loops)."""
    out = np.empty_like(x)
    for index in np.ndindex(*x.shape):
        j = index[start : start + e.ndim] if e.size != 1 else (0,) * e.ndim
        out[index] = float(x[index]) ** float(e[j])
    return out


@pytest.mark.parametrize(
    "x_shape, e_shape, args, start",
    [
        ((2, 3), (2, 3), {}, 0),
        ((2, 3, 4, 5), (4, 5), {"broadcast": 1}, 2),
        ((2, 3, 4, 5), (3, 4), {"broadcast": 1, "axis": 1}, 1),
        ((2, 3, 4, 5), (3,), {"broadcast": 1, "axis_str": "C"}, 1),
        ((2, 3, 4, 5), (3,), {"broadcast": 1, "axis_str": "C", "order": "NCHW"}, 1),
        ((2, 3), (1,), {"broadcast": 1}, 0),
    ],
)
def test_pow_with_a_tensor_of_exponents(x_shape, e_shape, args, start):
    x = random(x_shape, 1, low=0.5, high=2.0)
    e = random(e_shape, 2, low=-2.0, high=3.0)
    y = run_op("Pow", {"x": x, "e": e}, ["y"], **args).fetch("y")
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, pow_reference(x, e, start), rtol=1e-5)


def test_pow_exponent_blocks_drop_their_unit_end_dims_from_e6():
    x = random((2, 3, 4), 1, low=0.5, high=2.0)
    e = random((1, 3, 1), 2)
    with eras.use("E7"):  # broadcast_block reads the era in force (elementwise.py)
        y = run_op("Pow", {"x": x, "e": e}, ["y"], broadcast=1, axis=0).fetch("y")
    np.testing.assert_allclose(y, pow_reference(x, e.reshape(3), 1), rtol=1e-5)


def test_pow_with_one_input_reads_the_exponent_and_may_run_in_place():
    x = random((3,), 1, low=0.5, high=2.0)
    ws = run_op("Pow", {"x": x}, ["x"], exponent=3.0)
    np.testing.assert_allclose(ws.fetch("x"), [v**3 for v in x.astype(np.float64)], rtol=1e-6)
    # the exponents may be overwritten in place when not broadcasting
    e = random((3,), 2)
    ws = run_op("Pow", {"x": x, "e": e}, ["e"])
    np.testing.assert_allclose(ws.fetch("e"), pow_reference(x, e, 0), rtol=1e-6)


def test_pow_keeps_float64():
    x, e = random((2, 2), 1, np.float64, 0.5, 2), random((2, 2), 2, np.float64)
    y = run_op("Pow", {"x": x, "e": e}, ["y"]).fetch("y")
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, pow_reference(x, e, 0), rtol=1e-12)


def test_pow_tensor_gradient_recipe_without_broadcast():
    with eras.use("E7"):
        ops, g_input = gradient_of("Pow", ["x", "e"], ["y"])
    assert g_input == ["x_grad", "e_grad"]
    pre = "e_grad_autogen_pre_red"
    assert ops == [
        ("ConstantFill", "", ["e"], ["e_grad"], [("value", 1.0)], True),
        ("Sub", "", ["e", "e_grad"], ["e_grad"], [], True),
        ("Pow", "", ["x", "e_grad"], ["x_grad"], [], True),
        ("Mul", "", ["x_grad", "y_grad"], ["x_grad"], [], True),
        ("Mul", "", ["x_grad", "e"], ["x_grad"], [], True),
        ("Log", "", ["x"], [pre], [], True),
        ("Mul", "", [pre, "y"], [pre], [], True),
        ("Mul", "", [pre, "y_grad"], ["e_grad"], [], True),
    ]


def test_pow_tensor_gradient_recipe_with_a_broadcast_argument():
    with eras.use("E7"):
        ops, _ = gradient_of("Pow", ["x", "e"], ["y"], broadcast=0)
    pre = "e_grad_autogen_pre_red"
    defaults = [("broadcast", 0), ("axis", -1), ("axis_str", ""), ("order", "NCHW")]
    assert ops[2] == ("Pow", "", ["x", "e_grad"], ["x_grad"], defaults, True)
    assert ops[4] == ("Mul", "", ["x_grad", "e"], ["x_grad"], defaults, True)
    assert ops[-2:] == [
        ("Mul", "", [pre, "y_grad"], [pre], [], True),
        ("SumReduceLike", "", [pre, "e"], ["e_grad"], defaults[1:], True),
    ]


@pytest.mark.parametrize(
    "x_shape, e_shape, args",
    [
        ((2, 3), (2, 3), {}),
        ((2, 3), (2, 3), {"broadcast": 0}),
        ((2, 3, 4), (3, 4), {"broadcast": 1}),
        ((2, 3, 4), (3,), {"broadcast": 1, "axis": 1}),
        ((2, 3), (1,), {"broadcast": 1}),
    ],
)
def test_pow_tensor_gradients_match_finite_differences(x_shape, e_shape, args):
    x = random(x_shape, 3, np.float64, 0.5, 2.0)
    e = random(e_shape, 4, np.float64, -1.5, 2.5)
    op = core.CreateOperator("Pow", ["x", "e"], ["y"], **args)
    with eras.use("E7"):
        for i in (0, 1):
            assert_gradient_close(op, [x, e], i, rtol=1e-5, atol=1e-7)


def test_pow_gradient_with_an_exponent_argument_takes_the_scalar_path_in_e7():
    # pow_op.cc's maker asks HasArgument("exponent") first, whatever the inputs
    with eras.use("E7"):
        ops, g_input = gradient_of("Pow", ["x", "e"], ["y"], exponent=2.0)
    assert [op[0] for op in ops] == ["Pow", "Mul", "Scale"]
    assert g_input == ["x_grad", None]


def test_pow_gradient_before_e7_defaults_the_exponent_to_zero():
    with eras.use("E6"):
        ops, _ = gradient_of("Pow", ["x"], ["y"])
    assert ops[0] == ("Pow", "", ["x"], ["x_grad"], [("exponent", -1.0)], True)
    assert ops[2] == ("Scale", "", ["x_grad"], ["x_grad"], [("scale", 0.0)], True)


def test_pow_tensor_gradient_refuses_an_in_place_op():
    with eras.use("E7"), pytest.raises(GradientError, match=r"in-place.*Pow\(\[x, e\] -> x\)"):
        gradient_of("Pow", ["x", "e"], ["x"])


X23, E23 = random((2, 3), 1, low=0.5, high=2), random((2, 3), 2)


@pytest.mark.parametrize(
    "inputs, outputs, args, error, match",
    [
        ({"x": X23}, ["y"], {}, ArgumentError, r"two input tensors.*'x'.*'exponent'"),
        ({"x": X23, "e": E23}, ["y"], {"axis": 1}, ArgumentError, "broadcast is not enabled"),
        (
            {"x": X23, "e": E23[0]},
            ["y"],
            {"broadcast": 1, "axis": 0, "axis_str": "N"},
            ArgumentError,
            "cannot be used simultaneously",
        ),
        (
            {"x": X23, "e": E23[0]},
            ["y"],
            {"broadcast": 1, "axis_str": "NC"},
            ArgumentError,
            "Unsupported axis string",
        ),
        (
            {"x": X23, "e": E23[0]},
            ["y"],
            {"broadcast": 1, "axis_str": "Z"},
            ArgumentError,
            "Unrecognizable axis string",
        ),
        (
            {"x": X23, "e": E23[0]},
            ["e"],
            {"broadcast": 1},
            EnforceNotMet,
            "In-place is allowed only with the first tensor",
        ),
        ({"x": X23, "e": E23[0]}, ["y"], {}, ShapeError, "did you forget to set broadcast=1"),
        (
            {"x": X23, "e": E23[:, 0]},
            ["y"],
            {"broadcast": 1},
            ShapeError,
            "Broadcast dimension mismatch",
        ),
        ({"x": X23, "e": E23.astype(np.float64)}, ["y"], {}, DTypeError, "same type"),
        ({"x": X23.astype(np.int32), "e": E23}, ["y"], {}, DTypeError, "'x'.*int32"),
    ],
)
def test_pow_refusals_of_e7(inputs, outputs, args, error, match):
    run_fails("Pow", inputs, error, match, outputs=outputs, **args)


def test_pow_before_e7_has_one_input():
    run_fails("Pow", {"x": X23, "e": E23}, EnforceNotMet, "Pow takes 1 input, got 2", era="E6")
    ws = run_in("E6", "Pow", {"x": X23}, ["y"])  # exponent 0: ones
    np.testing.assert_array_equal(ws.fetch("y"), np.ones_like(X23))


# --- ReduceFront/Back{Sum,Mean,Max} with lengths --------------------------------------------
def reduce_reference(kind, front, x, lengths):
    """Loop reference: the first lengths[j] elements of each kept element's run."""
    reduced = x.shape[0] if front else x.shape[-1]
    m = x.reshape(reduced, -1) if front else x.reshape(-1, reduced)
    kept = x.shape[1:] if front else x.shape[:-1]
    out = np.empty(len(lengths), np.float64)
    for j, n in enumerate(lengths):
        values = [float(m[i, j] if front else m[j, i]) for i in range(n)]
        out[j] = {"Sum": sum, "Max": max, "Mean": lambda v: sum(v) / len(v)}[kind](values)
    return out.reshape(kept)


@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max"])
@pytest.mark.parametrize("front", [True, False])
def test_reduce_front_back_with_lengths(kind, front):
    x = random((4, 3, 5), 7)
    batch = 15 if front else 12
    reduced = 4 if front else 5
    lengths = np.random.RandomState(1).randint(1, reduced + 1, batch).astype(np.int32)
    op_type = ("ReduceFront" if front else "ReduceBack") + kind
    y = run_op(op_type, {"x": x, "lengths": lengths}, ["y"]).fetch("y")
    assert y.shape == ((3, 5) if front else (4, 3)) and y.dtype == np.float32
    np.testing.assert_allclose(y, reduce_reference(kind, front, x, lengths), rtol=1e-5)


@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max"])
@pytest.mark.parametrize("front", [True, False])
def test_reduce_front_back_lengths_gradients(kind, front):
    x = random((4, 3, 2), 8, np.float64)
    batch = 6 if front else 12
    reduced = 4 if front else 2
    lengths = np.random.RandomState(2).randint(1, reduced + 1, batch).astype(np.int32)
    op_type = ("ReduceFront" if front else "ReduceBack") + kind
    op = core.CreateOperator(op_type, ["x", "lengths"], ["y"])
    with eras.use("E7"):
        ops, g_input = gradient_of(op_type, ["x", "lengths"], ["y"])
        assert_gradient_close(op, [x, lengths], 0)
    expected = ["y_grad", "x"] + (["y"] if kind == "Max" else []) + ["lengths"]
    assert ops == [(op_type + "Gradient", "", expected, ["x_grad"], [], True)]
    assert g_input == ["x_grad", None]


@pytest.mark.parametrize("op_type", ["ReduceFrontSum", "ReduceBackMean", "ReduceBackMax"])
def test_reduce_front_back_gradient_makers_by_era(op_type):
    with eras.use("E7"):
        ops, _ = gradient_of(op_type, ["x"], ["y"], num_reduce_dim=2)
    inputs = ["y_grad", "x"] + (["y"] if op_type.endswith("Max") else [])
    assert ops == [(op_type + "Gradient", "", inputs, ["x_grad"], [("num_reduce_dim", 2)], True)]
    with eras.use("E6"):
        ops, _ = gradient_of(op_type, ["x"], ["y"])
    first = ops[0][0]
    assert first == ("ReduceBackMaxGradient" if op_type.endswith("Max") else "Shape")


@pytest.mark.parametrize("op_type", ["ReduceFrontMeanGradient", "ReduceBackSumGradient"])
def test_e7_sum_mean_gradients_read_x_or_its_shape_alike(op_type):
    x = random((3, 4, 2), 3)
    dy = random((4, 2) if "Front" in op_type else (3, 4), 4)
    from_x = run1_ws(op_type, {"dy": dy, "x": x})
    from_shape = run1_ws(op_type, {"dy": dy, "shape": np.array(x.shape, np.int64)})
    np.testing.assert_array_equal(from_x, from_shape)
    assert from_x.shape == x.shape


def run1_ws(op_type, inputs, **args):
    return run_op(op_type, inputs, ["out"], **args).fetch("out")


def test_e7_sums_and_means_of_integers_truncate_as_cpp():
    x = np.array([[-3, 4], [-4, 5]], np.int32)
    np.testing.assert_array_equal(run1_ws("ReduceFrontSum", {"x": x}), [-7, 9])
    mean = run1_ws("ReduceFrontMean", {"x": x})
    assert mean.dtype == np.int32
    np.testing.assert_array_equal(mean, [-3, 4])  # C++'s T / int: toward 0
    lengths = np.array([1, 2], np.int32)
    np.testing.assert_array_equal(run1_ws("ReduceBackMean", {"x": x, "l": lengths}), [-3, 0])


@pytest.mark.parametrize(
    "op_type, x, lengths, args, error, match",
    [
        (
            "ReduceFrontSum",
            random((2, 3, 4)),
            np.ones(4, np.int32),
            {"num_reduce_dim": 2},
            ArgumentError,
            "number of reduce dimensions should be one",
        ),
        (
            "ReduceBackMean",
            random((2, 3)),
            np.ones(3, np.int32),
            {},
            ShapeError,
            r"'lengths'.*2 lengths.*doesn't match the batch size",
        ),
        ("ReduceBackMax", random((2, 3)), np.ones(2, np.int64), {}, DTypeError, "int32 lengths"),
        (
            "ReduceFrontMax",
            random((2, 3)),
            np.array([1, 3, 1], np.int32),
            {},
            ShapeError,
            r"'lengths'.*a length of 3; expected at most 2.*read past the row",
        ),
        (
            "ReduceFrontMean",
            np.ones((2, 3), np.int32),
            np.array([1, 0, 1], np.int32),
            {},
            InvalidValueError,
            r"'lengths'.*length of 0 for integer data.*division by zero",
        ),
    ],
)
def test_reduce_front_back_lengths_refusals(op_type, x, lengths, args, error, match):
    run_fails(op_type, {"x": x, "lengths": lengths}, error, match, **args)


@pytest.mark.parametrize("front", [True, False])
def test_reduce_front_back_lengths_of_zero_or_less_run_as_caffe2_ran_them(front):
    """reduction_front_back_ops.cc at 929c33cee starts each loop from the row's
    first element: a length <= 0 makes it the sum and the max, the mean divides
    it by the length (float: inf at 0), and every gradient element is 0."""
    x = np.array([[2.0, -1.0, 3.0], [5.0, 7.0, -4.0]], np.float32)
    if not front:
        x = np.ascontiguousarray(x.T)  # each row of x.T holds one run
    lengths = np.array([0, -2, 2], np.int32)
    side = "ReduceFront" if front else "ReduceBack"
    first = np.array([2.0, -1.0, 3.0], np.float32)
    full = np.array([7.0, 6.0, -1.0], np.float32)
    np.testing.assert_array_equal(run1_ws(side + "Sum", {"x": x, "l": lengths}), [2, -1, -1])
    np.testing.assert_array_equal(run1_ws(side + "Max", {"x": x, "l": lengths}), [2, -1, 3])
    with np.errstate(divide="ignore"):
        mean = run1_ws(side + "Mean", {"x": x, "l": lengths})
        np.testing.assert_array_equal(mean, [np.inf, first[1] / -2, full[2] / 2])
    dy = np.ones(3, np.float32)
    for kind in ("Sum", "Mean"):
        dx = run1_ws(side + kind + "Gradient", {"dy": dy, "x": x, "l": lengths})
        assert not (dx[:, :2] if front else dx[:2]).any(), dx
        assert (dx[:, 2] if front else dx[2]).all(), dx  # length 2: both elements


def test_reduce_front_back_lengths_before_e7():
    x, lengths = random((2, 3)), np.ones(3, np.int32)
    for op_type in ("ReduceFrontSum", "ReduceFrontMax"):
        run_fails(op_type, {"x": x, "l": lengths}, EnforceNotMet, "takes 1 inputs", era="E6")
    # the gradient op's input 1 is X's shape only
    run_fails(
        "ReduceFrontSumGradient",
        {"dy": random((3,)), "x": x},
        DTypeError,
        "1-D integer",
        era="E6",
    )


# --- ReduceSum / ReduceMean ------------------------------------------------------------------
def axes_reference(x, axes, keepdims, mean):
    axes = axes or list(range(x.ndim))
    kept = [i for i in range(x.ndim) if i not in axes]
    sums, counts = {}, {}
    for index in np.ndindex(*x.shape):
        key = tuple(index[i] for i in kept)
        sums[key] = sums.get(key, 0.0) + float(x[index])
        counts[key] = counts.get(key, 0) + 1
    shape = [x.shape[i] for i in kept]
    out = np.empty(shape, np.float64)
    for key in np.ndindex(*shape):
        out[key] = sums[key] / counts[key] if mean else sums[key]
    if keepdims:
        out = out.reshape([1 if i in axes else x.shape[i] for i in range(x.ndim)])
    return out


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean"])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", [[], [0], [2, 0], [1, 3], [0, 1, 2, 3]])
def test_reduce_sum_and_mean_over_axes(op_type, keepdims, axes):
    x = random((2, 3, 1, 4), 5)
    args = {"keepdims": keepdims}
    if axes:
        args["axes"] = axes
    y = run1_ws(op_type, {"x": x}, **args)
    expected = axes_reference(x, sorted(axes), keepdims, op_type == "ReduceMean")
    assert y.shape == expected.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "axes, match",
    [
        ([-1], "Axes ids must be non-negative"),
        ([0, 2], r"smaller than the dimensions of input.*'x' has 2"),
        ([1, 1], "names an axis twice"),
    ],
)
def test_reduce_sum_axes_refusals(axes, match):
    run_fails("ReduceSum", {"x": random((2, 3))}, ArgumentError, match, axes=axes)


def test_reduce_sum_and_mean_have_no_gradient():
    for op_type in ("ReduceSum", "ReduceMean"):
        with pytest.raises(GradientError, match="not implemented yet"):
            gradient_of(op_type, ["x"], ["y"], axes=[0])


# --- TopK's axis ------------------------------------------------------------------------------
def top_k_reference(x, k, axis):
    """Values, indices and flat indices by sorting each slice in Python (ties: lower index)."""
    moved = np.moveaxis(x, axis, -1)
    values = np.empty(moved.shape[:-1] + (k,), x.dtype)
    indices = np.empty(values.shape, np.int64)
    flat = np.empty(values.shape, np.int64)
    for index in np.ndindex(*moved.shape[:-1]):
        row = list(moved[index])
        best = sorted(range(len(row)), key=lambda i: (-row[i], i))[:k]
        for slot, i in enumerate(best):
            values[index + (slot,)] = row[i]
            indices[index + (slot,)] = i
            full = index[:axis] + (i,) + index[axis:]
            flat[index + (slot,)] = np.ravel_multi_index(full, x.shape)
    back = [np.moveaxis(a, -1, axis) for a in (values, indices, flat)]
    return back[0], back[1], back[2].reshape(-1)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_along_an_axis(axis, k):
    x = np.round(random((3, 4, 5), 6) * 3) / 3  # ties
    ws = run_op("TopK", {"x": x}, ["v", "i", "f"], k=k, axis=axis)
    values, indices, flat = top_k_reference(x, k, axis % 3)
    np.testing.assert_array_equal(ws.fetch("v"), values)
    np.testing.assert_array_equal(ws.fetch("i"), indices)
    np.testing.assert_array_equal(ws.fetch("f"), flat)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_top_k_axis_gradient(axis):
    x = random((3, 4, 2), 9, np.float64)
    op = core.CreateOperator("TopK", ["x"], ["v", "i"], k=2, axis=axis)
    ops, _ = gradient_of("TopK", ["x"], ["v", "i"], k=2, axis=axis)
    assert ops == [
        ("TopKGradient", "", ["v_grad", "i", "x"], ["x_grad"], [("k", 2), ("axis", axis)], True)
    ]
    assert_gradient_close(op, [x], 0)


def test_top_k_gradient_scatters_along_the_axis():
    dv = np.array([[[1.0, 2.0]], [[3.0, 4.0]]], np.float32)  # (2, 1, 2): k=1 along axis 1
    indices = np.array([[[2, 0]], [[1, 1]]], np.int64)
    x = np.zeros((2, 3, 2), np.float32)
    dx = run1_ws("TopKGradient", {"dv": dv, "i": indices, "x": x}, axis=1)
    expected = np.zeros((2, 3, 2), np.float32)
    expected[0, 2, 0], expected[0, 0, 1], expected[1, 1, 0], expected[1, 1, 1] = 1, 2, 3, 4
    np.testing.assert_array_equal(dx, expected)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ({"k": 0}, ArgumentError, "k argument must be >= 1"),
        ({"k": 5, "axis": 0}, ArgumentError, r"greater than the axis dim \(3, axis 0"),
        ({"k": 1, "axis": -2}, ArgumentError, r"axis=-2; expected 0 <= axis < 3"),
        ({"k": 1, "axis": 3}, ArgumentError, r"axis=3; expected 0 <= axis < 3"),
    ],
)
def test_top_k_axis_refusals(args, error, match):
    run_fails("TopK", {"x": random((3, 4, 5))}, error, match, outputs=["v", "i"], **args)


def test_top_k_gradient_refuses_another_rank():
    run_fails(
        "TopKGradient",
        {"dv": random((3, 2)), "i": np.zeros((3, 2), np.int64), "x": random((3, 4, 1))},
        ShapeError,
        r"input 0 \('dv'\).*3 dimensions like input 2",
    )


def test_top_k_before_e7_works_on_the_last_dimension_only():
    x = random((3, 4), 2)
    ws = run_in("E6", "TopK", {"x": x}, ["v", "i"], k=2, axis=0)  # axis not read
    values, indices, _ = top_k_reference(x, 2, 1)
    np.testing.assert_array_equal(ws.fetch("v"), values)
    np.testing.assert_array_equal(ws.fetch("i"), indices)
