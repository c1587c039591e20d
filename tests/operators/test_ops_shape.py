"""Reshape, Concat, Split, Transpose, Squeeze, ExpandDims: forward against
NumPy, gradient makers' exact ops, gradients against finite differences."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.runtime import Workspace


# --- Reshape -----------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, expected",
    [
        ([-1, 4], (6, 4)),
        ([0, -1], (1, 24)),
        ([2, 0, 2, -1], (2, 6, 2, 1)),
        ([4, 6], (4, 6)),
    ],
)
def test_reshape_with_argument(shape, expected):
    x = random((1, 6, 4))
    ws = run_op("Reshape", {"x": x}, ["y", "old"], shape=shape)
    np.testing.assert_array_equal(ws.fetch("y"), x.reshape(expected))
    old = ws.fetch("old")
    assert old.dtype == np.int64 and old.tolist() == [1, 6, 4]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reshape_with_shape_input_keeps_its_type(dtype):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    ws = run_op("Reshape", {"x": x, "s": np.array([2, -1], dtype)}, ["y", "old"])
    np.testing.assert_array_equal(ws.fetch("y"), x.reshape(2, 6))
    assert ws.fetch("old").dtype == dtype and ws.fetch("old").tolist() == [3, 4]


def test_reshape_in_place_keeps_memory_and_does_not_touch_other_blobs():
    ws = Workspace()
    x = random((1, 6, 4))
    ws.feed("x", x)
    memory = ws.blob("x").value
    ws.run_operator_once(core.CreateOperator("Reshape", ["x"], ["x", "old"], shape=[1, -1, 2]))
    assert ws.blob("x").value.shape == (1, 12, 2)
    assert np.shares_memory(ws.blob("x").value, memory)
    np.testing.assert_array_equal(ws.fetch("x"), x.reshape(1, 12, 2))


def test_reshape_copy_is_independent_of_input():
    ws = run_op("Reshape", {"x": random((2, 3))}, ["y", "old"], shape=[3, 2])
    assert not np.shares_memory(ws.blob("x").value, ws.blob("y").value)


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"x": random((2, 3))}, {}, ArgumentError, "either the input blob"),
        ({"x": random((2, 3)), "s": np.array([6], np.int64)}, {"shape": [6]}, ArgumentError, "'s'"),
        ({"x": random((2, 3))}, {"shape": [4, -1]}, ShapeError, "'x'.*does not agree"),
        ({"x": random((2, 3))}, {"shape": [5]}, ShapeError, "'x'.*does not agree"),
        ({"x": random((2, 3))}, {"shape": [-1, -1]}, ArgumentError, "at most one -1"),
        ({"x": random((2, 3))}, {"shape": [1, 6, 0]}, ShapeError, "'x'.*at least 3 dims"),
        ({"x": random((2, 3)), "s": np.array([6.0])}, {}, DTypeError, "'s'"),
    ],
)
def test_reshape_errors(inputs, args, error, match):
    ws = Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    with pytest.raises(error, match=match):
        ws.run_operator_once(core.CreateOperator("Reshape", list(inputs), ["y", "old"], **args))
    assert not ws.has_blob("old") or ws.blob("old").value is None


def test_reshape_gradient_maker_drops_the_shape_argument():
    ops, g_input = gradient_of("Reshape", ["x"], ["y", "y_old"], shape=[-1, 4])
    assert ops == [("Reshape", "", ["y_grad", "y_old"], ["x_grad", "_x_grad_dims"], [], True)]
    assert g_input == ["x_grad"]


def test_reshape_gradient():
    check_gradients("Reshape", {"x": random((2, 6))}, ["y", "old"], shape=[3, -1])


# --- Concat / Split -----------------------------------------------------------
def test_concat_along_axis_and_split_info():
    a, b = random((1, 3, 2), 1), random((1, 3, 5), 2)
    ws = run_op("Concat", {"a": a, "b": b}, ["y", "info"], axis=2)
    np.testing.assert_array_equal(ws.fetch("y"), np.concatenate([a, b], axis=2))
    info = ws.fetch("info")
    assert info.dtype == np.int32 and info.tolist() == [2, 5]


@pytest.mark.parametrize("order, axis", [("NCHW", 1), ("NHWC", 3)])
def test_concat_order_selects_the_channel_axis(order, axis):
    a, b = random((1, 2, 2, 3), 1), random((1, 2, 2, 3), 2)
    ws = run_op("Concat", {"a": a, "b": b}, ["y", "info"], order=order)
    np.testing.assert_array_equal(ws.fetch("y"), np.concatenate([a, b], axis=axis))


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"a": random((2, 3)), "b": random((3, 3))}, {"axis": 1}, ShapeError, "'b'"),
        ({"a": random((2, 3)), "b": random((2, 3))}, {"axis": 2}, ShapeError, "'a'"),
        (
            {"a": random((2, 3)), "b": random((2, 3))},
            {"axis": 1, "order": "NCHW"},
            ArgumentError,
            "shouldn't specify both",
        ),
        (
            {"a": random((2, 3)), "b": random((2, 3), dtype=np.float64)},
            {"axis": 0},
            DTypeError,
            "'b'",
        ),
    ],
)
def test_concat_errors(inputs, args, error, match):
    with pytest.raises(error, match=match):
        run_op("Concat", inputs, ["y", "info"], **args)


def test_concat_gradient_maker_is_a_split_with_copied_args():
    ops, g_input = gradient_of("Concat", ["a", "b"], ["y", "info"], axis=2)
    assert ops == [("Split", "", ["y_grad", "info"], ["a_grad", "b_grad"], [("axis", 2)], True)]
    assert g_input == ["a_grad", "b_grad"]


def test_concat_without_output_gradient_makes_no_ops():
    ops, g_input = gradient_of("Concat", ["a", "b"], ["y", "info"], [None, None], axis=2)
    assert ops == [] and g_input == [None, None]


def test_concat_gradient():
    check_gradients(
        "Concat", {"a": random((2, 2), 1), "b": random((2, 3), 2)}, ["y", "info"], axis=1
    )


@pytest.mark.parametrize(
    "args, extra, lengths",
    [
        ({"axis": 1}, {}, [2, 2, 2]),
        ({"axis": 1, "split": [1, 2, 3]}, {}, [1, 2, 3]),
        ({"axis": 1}, {"s": np.array([3, 0, 3], np.int32)}, [3, 0, 3]),
    ],
)
def test_split_lengths(args, extra, lengths):
    x = random((2, 6, 2))
    ws = run_op("Split", dict({"x": x}, **extra), ["p", "q", "r"], **args)
    expected = np.split(x, np.cumsum(lengths)[:-1], axis=1)
    for name, part in zip("pqr", expected):
        np.testing.assert_array_equal(ws.fetch(name), part)


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"x": random((2, 5))}, {"axis": 1}, ShapeError, "'x'.*divisible"),
        ({"x": random((2, 6))}, {"axis": 1, "split": [1, 2]}, ArgumentError, "equal to the number"),
        ({"x": random((2, 6))}, {"axis": 1, "split": [1, 2, 4]}, ShapeError, "'x'.*Sum"),
        ({"x": random((2, 6)), "s": np.array([2, 2, 2], np.int64)}, {"axis": 1}, DTypeError, "'s'"),
    ],
)
def test_split_errors(inputs, args, error, match):
    with pytest.raises(error, match=match):
        run_op("Split", inputs, ["p", "q", "r"], **args)


def test_split_gradient_maker_concats_existing_output_gradients():
    ops, g_input = gradient_of("Split", ["x"], ["p", "q", "r"], ["p_grad", None, "r_grad"], axis=1)
    assert ops == [
        ("Concat", "", ["p_grad", "r_grad"], ["x_grad", "_x_grad_dims"], [("axis", 1)], True)
    ]
    assert g_input == ["x_grad"]
    assert gradient_of("Split", ["x"], ["p", "q"], [None, None], axis=1) == ([], [None])


def test_split_gradient():
    check_gradients(
        "Split", {"x": random((2, 6))}, ["p", "q"], outputs_with_grads=(0, 1), axis=1, split=[2, 4]
    )


# --- Transpose ------------------------------------------------------------------
@pytest.mark.parametrize("axes", [None, [1, 2, 0], [0, 2, 1]])
def test_transpose_forward(axes):
    x = random((2, 3, 4))
    args = {} if axes is None else {"axes": axes}
    np.testing.assert_array_equal(run1("Transpose", {"x": x}, **args), np.transpose(x, axes))


def test_transpose_rejects_bad_axes():
    with pytest.raises(ShapeError, match="'x'.*permutation"):
        run1("Transpose", {"x": random((2, 3))}, axes=[0, 0])
    with pytest.raises(ShapeError, match="'x'"):
        run1("Transpose", {"x": random((2, 3))}, axes=[2, 0, 1])


def test_transpose_gradient_maker_inverts_axes_and_keeps_arg_order():
    op = core.CreateOperator(
        "Transpose", ["x"], ["y"], order="NCHW", axes=[1, 2, 0], engine="CUDNN"
    )
    from ops_testing import describe

    from caffe2rnn.operators.gradient_maker import get_gradient_for_op

    ops, g_input = get_gradient_for_op(op, ["y_grad"])
    assert [describe(g) for g in ops] == [
        ("Transpose", "", ["y_grad"], ["x_grad"], [("order", "NCHW"), ("axes", [2, 0, 1])], True)
    ]
    assert ops[0].engine == "CUDNN" and g_input == ["x_grad"]


def test_transpose_gradient_maker_without_axes_copies_args_once():
    ops, _ = gradient_of("Transpose", ["x"], ["y"], order="NCHW")
    assert ops[0][4] == [("order", "NCHW")]


@pytest.mark.parametrize("axes", [None, [1, 2, 0]])
def test_transpose_gradient(axes):
    args = {} if axes is None else {"axes": axes}
    check_gradients("Transpose", {"x": random((2, 3, 2))}, ["y"], **args)


# --- Squeeze / ExpandDims ---------------------------------------------------------
def test_squeeze_and_expand_dims_forward():
    x = random((1, 3, 1, 2))
    np.testing.assert_array_equal(run1("Squeeze", {"x": x}, dims=[2, 0, 2]), x.reshape(3, 2))
    y = random((3, 2))
    np.testing.assert_array_equal(run1("ExpandDims", {"x": y}, dims=[3, 0]), y.reshape(1, 3, 2, 1))


def test_squeeze_in_place_keeps_memory():
    ws = Workspace()
    ws.feed("x", random((1, 3, 2)))
    memory = ws.blob("x").value
    ws.run_operator_once(core.CreateOperator("Squeeze", ["x"], ["x"], dims=[0]))
    assert ws.blob("x").value.shape == (3, 2)
    assert np.shares_memory(ws.blob("x").value, memory)


@pytest.mark.parametrize(
    "op_type, shape, dims, error, match",
    [
        ("Squeeze", (1, 3), [1], ShapeError, "'x'.*must be 1 instead of 3"),
        ("Squeeze", (1, 3), [2], ShapeError, "'x'.*at least 3 dims"),
        ("Squeeze", (1, 3), [], ArgumentError, "dims must be provided"),
        ("Squeeze", (1, 3), [-1], ArgumentError, "non-negative"),
        ("ExpandDims", (3,), [3], ShapeError, "'x'.*at least 3 dims"),
    ],
)
def test_squeeze_expand_dims_errors(op_type, shape, dims, error, match):
    with pytest.raises(error, match=match):
        run1(op_type, {"x": random(shape)}, dims=dims)


def test_squeeze_expand_dims_gradient_makers_swap_and_copy_dims():
    ops, _ = gradient_of("Squeeze", ["x"], ["x"], dims=[0])
    assert ops == [("ExpandDims", "", ["x_grad"], ["x_grad"], [("dims", [0])], True)]
    ops, _ = gradient_of("ExpandDims", ["x"], ["y"], dims=[2])
    assert ops == [("Squeeze", "", ["y_grad"], ["x_grad"], [("dims", [2])], True)]


def test_squeeze_expand_dims_gradients():
    check_gradients("Squeeze", {"x": random((1, 3, 1))}, ["y"], dims=[0, 2])
    check_gradients("ExpandDims", {"x": random((3, 2))}, ["y"], dims=[1])


def test_schema_rejects_in_place_transpose():
    with pytest.raises(EnforceNotMet, match="in place"):
        run_op("Transpose", {"x": random((2, 3))}, ["x"])


def cpp_concat(inputs, axis, add_axis, e6=True):
    """ConcatOp::RunOnDevice (concat_split_op.h at 042e8ede4; 0cdd09da6 without add_axis and a
    negative axis): dims checked below input 0's rank, then block copies of the inputs' buffers."""
    first = inputs[0]
    adj = first.ndim + (1 if add_axis else 0)
    if not (-adj <= axis < adj):
        raise ValueError()
    axis = axis + adj if axis < 0 else axis
    before = after = 1
    for i in range(first.ndim):
        if i == axis and not add_axis:
            continue
        if i < axis:
            before *= first.shape[i]
        else:
            after *= first.shape[i]
        for x in inputs[1:]:
            if i >= x.ndim or x.shape[i] != first.shape[i]:
                raise ValueError()
    sizes = [1 if add_axis else x.shape[axis] for x in inputs]
    shape = list(first.shape)
    if add_axis:
        shape.insert(axis, sum(sizes))
    else:
        shape[axis] = sum(sizes)
    out = np.zeros((before, sum(sizes) * after), first.dtype)
    offset = 0
    for x, size in zip(inputs, sizes):
        out[:, offset : offset + size * after] = x.reshape(-1)[: before * size * after].reshape(
            before, size * after
        )
        offset += size * after
    return out.reshape(shape), np.array(sizes, np.int32)


@pytest.mark.parametrize(
    "shapes, axis, add_axis",
    [
        ([(2, 3), (2, 5)], 1, 0),
        ([(2, 3), (2, 3)], 1, 1),
        ([(2, 3), (2, 3)], -1, 1),
        ([(2, 3, 4), (1, 3, 4)], 0, 0),
        ([(2, 3), (2, 3, 4)], 1, 0),  # extra trailing dims on a later input: accepted
        ([(2, 3), (2, 3, 4)], 0, 0),
        ([(2, 3, 4), (2, 3)], 0, 0),  # fewer: refused
        ([(2, 3), (2, 3)], 2, 0),
    ],
)
def test_concat_matches_the_cpp(shapes, axis, add_axis):
    inputs = [
        np.arange(np.prod(s), dtype=np.float32).reshape(s) + 100 * k for k, s in enumerate(shapes)
    ]
    blobs = {"x%d" % k: x for k, x in enumerate(inputs)}
    try:
        want = cpp_concat(inputs, axis, add_axis)
    except ValueError:
        with pytest.raises(ShapeError):
            run_op("Concat", blobs, ["y", "info"], axis=axis, add_axis=add_axis)
        return
    ws = run_op("Concat", blobs, ["y", "info"], axis=axis, add_axis=add_axis)
    np.testing.assert_array_equal(ws.fetch("y"), want[0])
    np.testing.assert_array_equal(ws.fetch("info"), want[1])
    if add_axis and len(set(shapes)) == 1:  # the gradient: Split with add_axis
        outs = ["g%d" % k for k in range(len(inputs))]
        ws2 = run_op("Split", {"y": want[0], "info": want[1]}, outs, axis=axis, add_axis=add_axis)
        for k, x in enumerate(inputs):
            np.testing.assert_array_equal(ws2.fetch(outs[k]), x)


def test_concat_axis_rules_per_era():
    """0cdd09da6: exactly one of axis/order, axis >= 0, add_axis not read; 042e8ede4: not
    both, NCHW by default, negative axes, add_axis."""
    from caffe2rnn.proto import caffe2_pb2

    a = np.ones((1, 2, 3), np.float32)

    def run(era, **args):
        ws = Workspace()
        ws.feed("a", a)
        ws.feed("b", a)
        net = caffe2_pb2.NetDef(name="n")
        net.op.extend([core.CreateOperator("Concat", ["a", "b"], ["y", "i"], **args)])
        ws.run_net_once(net, era=era)
        return ws.fetch("y").shape

    assert run("E6") == (1, 4, 3)  # no axis, no order: NCHW, axis 1
    assert run("E6", axis=-1) == (1, 2, 6)
    assert run("E6", axis=0, add_axis=1) == (2, 1, 2, 3)
    assert run("E5", axis=0, add_axis=1) == (2, 2, 3)  # add_axis is not read at E5
    with pytest.raises(ArgumentError, match="either specify"):
        run("E5")
    with pytest.raises(ArgumentError, match=">= 0"):
        run("E5", axis=-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.int8])
def test_transpose_element_types_as_the_cpp(dtype):
    """transpose_op.h (E4..E6): DispatchHelper<TensorTypes<float, double, int, long>>, any
    other type "Unsupported type of tensor"."""
    x = np.zeros((2, 3), dtype)
    if dtype in (np.float32, np.float64, np.int32, np.int64):
        assert run1("Transpose", {"x": x}).shape == (3, 2)
    else:
        with pytest.raises(DTypeError, match="float32, float64, int32 or int64"):
            run1("Transpose", {"x": x})
