"""Cast, Tile, TopK: forward against NumPy, gradient makers as Caffe2 wrote
them, gradients against finite differences, refusals naming the blob or
argument."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import ArgumentError, ArgumentTypeError, DTypeError, GradientError, ShapeError
from caffe2rnn.gradient_checker import assert_gradient_close


# --- Cast ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "to, dtype",
    [
        ("float", np.float32),
        ("INT32", np.int32),
        ("bool", np.bool_),
        ("uint8", np.uint8),
        ("int8", np.int8),
        ("uint16", np.uint16),
        ("int16", np.int16),
        ("int64", np.int64),
        ("double", np.float64),
        (core.DataType.INT32, np.int32),
        (core.DataType.DOUBLE, np.float64),
    ],
)
def test_cast_is_a_static_cast(to, dtype):
    x = np.array([-2.7, -0.5, 0.0, 0.5, 3.9, 300.0], np.float64)
    out = run1("Cast", {"x": x}, to=to)
    assert out.dtype == dtype
    if dtype is np.bool_:
        expected = x != 0  # any non-zero value is true
    elif np.dtype(dtype).kind in "iu":
        # truncation toward zero, then the two's-complement wrap of the target
        expected = np.trunc(x).astype(np.int64).astype(dtype)
    else:
        expected = x.astype(dtype)
    np.testing.assert_array_equal(out, expected)


def test_cast_without_to_is_float():
    assert run1("Cast", {"x": np.array([1, 2], np.int32)}).dtype == np.float32


@pytest.mark.parametrize(
    "to, error, match",
    [
        ("complex", ArgumentError, "Unknown 'to' argument: complex"),
        (core.DataType.STRING, ArgumentError, "strings"),
        (core.DataType.FLOAT16, ArgumentError, "float16"),
        (core.DataType.BYTE, ArgumentError, "BYTE is deprecated"),
        (core.DataType.UNDEFINED, ArgumentError, "must have 'to'"),
        (99, ArgumentError, "Unexpected 'to' argument value: 99"),
        (1.5, ArgumentTypeError, "'to'"),
    ],
)
def test_cast_refuses_the_targets_caffe2_refused(to, error, match):
    run_fails("Cast", {"x": np.zeros(2, np.float32)}, error, match, outputs=["y"], to=to)


def test_cast_refuses_a_string_tensor():
    run_fails("Cast", {"x": np.array(["a"], object)}, DTypeError, "'x'", outputs=["y"], to="int32")


def test_cast_gradient_e5_swaps_the_type_names():
    with eras.use("E5"):
        ops, g_input = gradient_of("Cast", ["x"], ["y"], to="float", from_type="int32")
        assert ops == [
            ("Cast", "", ["y_grad"], ["x_grad"], [("to", "int32"), ("from_type", "float")], True)
        ]
        # E5 read both as strings: an int 'to' could not be differentiated.
        with pytest.raises(GradientError, match="'to' and 'from_type'"):
            gradient_of("Cast", ["x"], ["y"], to=core.DataType.FLOAT)


def test_cast_gradient_e6_uses_data_type_values_and_needs_from_type():
    with eras.use("E6"):
        ops, _ = gradient_of("Cast", ["x"], ["y"], to="float", from_type="double")
        assert ops[0][4] == [("to", core.DataType.DOUBLE), ("from_type", core.DataType.FLOAT)]
        with pytest.raises(GradientError, match="from_type"):
            gradient_of("Cast", ["x"], ["y"], to="float")


def test_cast_gradient_matches_finite_differences():
    with eras.use("E6"):
        op = core.CreateOperator("Cast", ["x"], ["y"], to="double", from_type="double")
        assert_gradient_close(op, [random((2, 3), 1, np.float64)], 0)


# --- Tile ---------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("tiles", [0, 1, 3])
def test_tile_repeats_each_block_along_the_axis(axis, tiles):
    x = random((2, 3, 2))
    out = run1("Tile", {"x": x}, tiles=tiles, axis=axis)
    reps = [1, 1, 1]
    reps[axis] = tiles
    # np.tile concatenates copies along the axis: Caffe2's copy loop's layout
    np.testing.assert_array_equal(out, np.tile(x, reps))


def test_tile_takes_tiles_and_axis_from_inputs():
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    out = run1("Tile", {"x": x, "t": np.array([2], np.int32), "a": np.array([1], np.int32)})
    np.testing.assert_array_equal(out, np.concatenate([x, x], axis=1))


def test_tile_reads_an_int64_tiles_input_as_caffe2_copied_it():
    # Caffe2 copied the 8 bytes into (tiles, axis): low word 3, high word 0.
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    out = run1("Tile", {"x": x, "t": np.array([3], np.int64)}, axis=1)
    np.testing.assert_array_equal(out, np.concatenate([x] * 3, axis=0))


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"x": random((2, 2))}, {"tiles": 2}, ArgumentError, "`axis` is missing"),
        ({"x": random((2, 2))}, {"axis": 0}, ArgumentError, "`tiles` is missing"),
        (
            {"x": random((2, 2)), "t": np.array([2], np.int32)},
            {},
            ArgumentError,
            "`axis` is missing",
        ),
        ({"x": random((2, 2)), "t": np.array([[2]], np.int32)}, {"axis": 0}, ShapeError, "'t'"),
        ({"x": random((2, 2))}, {"tiles": 2, "axis": 2}, ArgumentError, "'x'"),
        ({"x": random((2, 2))}, {"tiles": 2, "axis": -1}, ArgumentError, "negative index"),
        ({"x": random((2, 2))}, {"tiles": -1, "axis": 0}, ArgumentError, "tiles=-1"),
        (
            {"x": random((2, 2)), "t": np.array([2], np.int32), "a": np.array([1], np.int64)},
            {},
            DTypeError,
            "'a'.*past it",
        ),
    ],
)
def test_tile_refusals(inputs, args, error, match):
    run_fails("Tile", inputs, error, match, outputs=["y"], **args)


def test_tile_gradient_maker_and_gradient():
    ops, g_input = gradient_of("Tile", ["x", "t"], ["y"], axis=1)
    assert ops == [("TileGradient", "", ["y_grad", "t"], ["x_grad"], [("axis", 1)], True)]
    assert g_input == ["x_grad", None]
    op = core.CreateOperator("Tile", ["x"], ["y"], tiles=3, axis=1)
    assert_gradient_close(op, [random((2, 2, 3), 2, np.float64)], 0)


def test_tile_gradient_reads_consecutive_blocks_when_tiles_does_not_divide():
    # dX is (2, 2); Caffe2 read dY's first 8 values as 2 rows x 2 tiles x 2
    # and did not skip the 5th column of each row.
    dy = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = run1("TileGradient", {"dy": dy}, tiles=2, axis=1)
    np.testing.assert_array_equal(out, [[0 + 2, 1 + 3], [4 + 6, 5 + 7]])


# --- TopK ---------------------------------------------------------------------------
def test_top_k_values_indices_and_flat_indices():
    x = np.array([[1, 5, 3, 5], [0, -1, 2, 2]], np.float32)
    ws = run_op("TopK", {"x": x}, ["v", "i", "f"], k=3)
    np.testing.assert_array_equal(ws.fetch("v"), [[5, 5, 3], [2, 2, 0]])
    # ties keep the lower index first
    np.testing.assert_array_equal(ws.fetch("i"), [[1, 3, 2], [2, 3, 0]])
    assert ws.fetch("i").dtype == np.int64
    np.testing.assert_array_equal(ws.fetch("f"), [1, 3, 2, 6, 7, 4])


def test_top_k_of_a_3d_tensor_against_a_sort():
    x = random((2, 3, 6), 4)
    ws = run_op("TopK", {"x": x}, ["v", "i"], k=2)
    order = np.argsort(-x, axis=-1, kind="stable")[..., :2]
    np.testing.assert_array_equal(ws.fetch("i"), order)
    np.testing.assert_array_equal(ws.fetch("v"), np.take_along_axis(x, order, -1))


@pytest.mark.parametrize(
    "x, k, error, match",
    [
        (random((2, 3)), 4, ArgumentError, "k argment should not be greater than last dim"),
        (random((2, 3)), -1, ArgumentError, "k=-1"),
        (np.array(1.0, np.float32), 1, ShapeError, "'x'"),
        (np.arange(3, dtype=np.int32), 1, DTypeError, "'x'"),
    ],
)
def test_top_k_refusals(x, k, error, match):
    # E6's messages (E7's TopK, with its axis: test_ops_e7_math.py)
    run_fails("TopK", {"x": x}, error, match, outputs=["v", "i"], era="E6", k=k)


def test_top_k_gradient_maker_and_gradient():
    ops, g_input = gradient_of("TopK", ["x"], ["v", "i"], k=2)
    assert ops == [("TopKGradient", "", ["v_grad", "i", "x"], ["x_grad"], [("k", 2)], True)]
    op = core.CreateOperator("TopK", ["x"], ["v", "i"], k=2)
    x = np.array([[0.1, 0.9, 0.5], [0.7, 0.2, 0.3]], np.float64)
    assert_gradient_close(op, [x], 0)


def test_top_k_gradient_refuses_indices_outside_the_row():
    run_fails(
        "TopKGradient",
        {"dv": random((1, 2)), "i": np.array([[0, 3]], np.int64), "x": random((1, 3))},
        ShapeError,
        "'i'",
        outputs=["dx"],
    )
