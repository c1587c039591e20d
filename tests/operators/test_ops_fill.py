"""Fillers: shapes (argument, input, extra_shape, input_as_shape), ConstantFill
dtype rules, random distributions and seeding, given values, no gradients."""

import numpy as np
import pytest
from ops_testing import run1, run_op

from caffe2rnn import core, eras
from caffe2rnn.errors import ArgumentError, ArgumentTypeError, DTypeError, EnforceNotMet, ShapeError
from caffe2rnn.operators import fill
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace

DataType = core.DataType


def fill_op(op_type, inputs=None, **args):
    return run1(op_type, inputs or {}, **args)


# --- shapes ------------------------------------------------------------------
def test_shape_from_argument_and_scalar_without_shape():
    assert fill_op("ConstantFill", shape=[2, 3]).shape == (2, 3)
    assert fill_op("ConstantFill").shape == ()


def test_shape_from_input_with_extra_shape():
    y = fill_op("ConstantFill", {"x": np.ones((2, 3), np.int32)}, extra_shape=[4], value=1.5)
    assert y.shape == (2, 3, 4) and y.dtype == np.float32 and (y == 1.5).all()


def test_input_as_shape_reads_int64_values():
    y = fill_op(
        "GaussianFill", {"s": np.array([3, 2], np.int64)}, input_as_shape=1, extra_shape=[1]
    )
    assert y.shape == (3, 2, 1)


def test_in_place_fill_keeps_shape():
    ws = Workspace()
    ws.feed("x", np.ones((2, 2), np.float32))
    memory = ws.blob("x").value
    ws.run_operator_once(core.CreateOperator("ConstantFill", ["x"], ["x"], value=3.0))
    assert ws.blob("x").value is memory and (memory == 3).all()


@pytest.mark.parametrize(
    "inputs, args, error, match",
    [
        ({"x": np.ones(2)}, {"shape": [2]}, ArgumentError, "'x'.*same time"),
        ({}, {"extra_shape": [2]}, ArgumentError, "extra_shape"),
        ({}, {"input_as_shape": 1}, ArgumentError, "input_as_shape"),
        ({}, {"shape": 3}, ArgumentTypeError, "scalar, list expected"),
        ({}, {"shape": [2, -1]}, ArgumentError, "negative"),
        ({"s": np.array([2, 3], np.int32)}, {"input_as_shape": 1}, DTypeError, "'s'.*1-D int64"),
        ({"s": np.array([2, -3], np.int64)}, {"input_as_shape": 1}, ShapeError, "'s'"),
    ],
)
def test_shape_errors(inputs, args, error, match):
    with pytest.raises(error, match=match):
        fill_op("ConstantFill", inputs, **args)


# --- ConstantFill types ------------------------------------------------------------
@pytest.mark.parametrize(
    "args, dtype, value",
    [
        ({}, np.float32, 0.0),
        ({"value": 0}, np.int64, 0),  # an int value → int64
        ({"value": 2.5}, np.float32, 2.5),
        ({"value": 0, "dtype": DataType.INT32}, np.int32, 0),
        ({"value": 7, "dtype": DataType.INT64}, np.int64, 7),
        ({"value": 1.5, "dtype": DataType.DOUBLE}, np.float64, 1.5),
        ({"value": 1, "dtype": DataType.BOOL}, np.bool_, True),
        ({"value": 3, "dtype": DataType.UINT8}, np.uint8, 3),
        ({"value": -3, "dtype": DataType.INT16}, np.int16, -3),
        ({"value": "ab", "dtype": DataType.STRING}, object, "ab"),
    ],
)
def test_constant_fill_types(args, dtype, value):
    y = fill_op("ConstantFill", shape=[2], **args)
    assert y.dtype == dtype and y.tolist() == [value, value]


@pytest.mark.parametrize(
    "args, error, match",
    [
        ({"dtype": DataType.UNDEFINED}, ArgumentError, "UNDEFINED"),
        ({"dtype": DataType.FLOAT16}, ArgumentError, "FLOAT16"),
        ({"value": "x"}, ArgumentTypeError, "'value'"),
        ({"value": 1.5, "dtype": DataType.INT32}, ArgumentTypeError, "'value'"),
    ],
)
def test_constant_fill_bad_types(args, error, match):
    with pytest.raises(error, match=match):
        fill_op("ConstantFill", shape=[1], **args)


# --- random fillers -----------------------------------------------------------------
def test_uniform_fill_range_and_mean():
    y = fill_op("UniformFill", shape=[4000], min=-2.0, max=4.0)
    assert y.dtype == np.float32 and y.min() >= -2 and y.max() <= 4
    assert abs(y.mean() - 1.0) < 0.15


def test_uniform_fill_bounds_from_blobs():
    one, three = np.array([1.0], np.float32), np.array([3.0], np.float32)
    y = fill_op("UniformFill", {"x": np.zeros((50, 2)), "lo": one, "hi": three})
    assert y.shape == (50, 2) and y.min() >= 1 and y.max() <= 3
    empty = fill_op("UniformFill", {"x": np.zeros((50, 2)), "lo": three, "hi": one})
    assert empty.shape == (0, 2)


def test_uniform_fill_errors():
    with pytest.raises(ArgumentError, match="min"):
        fill_op("UniformFill", shape=[2], min=1.0, max=1.0)
    with pytest.raises(EnforceNotMet, match=r"schema checking: .*0 inputs, 1 \(the shape\) or 3"):
        fill_op("UniformFill", {"x": np.zeros(2), "lo": np.zeros(1)})
    with pytest.raises(ShapeError, match="'lo'"):
        fill_op(
            "UniformFill",
            {"x": np.zeros(2), "lo": np.zeros(2, np.float32), "hi": np.ones(1, np.float32)},
        )


def test_gaussian_fill_moments():
    y = fill_op("GaussianFill", shape=[5000], mean=1.0, std=2.0)
    assert abs(y.mean() - 1.0) < 0.15 and abs(y.std() - 2.0) < 0.15
    with pytest.raises(ArgumentError, match="std"):
        fill_op("GaussianFill", shape=[2], std=-1.0)


def test_xavier_fill_scale():
    y = fill_op("XavierFill", shape=[200, 12])
    limit = np.sqrt(3.0 / 12)
    assert np.abs(y).max() <= limit and np.abs(y).max() > 0.9 * limit
    with pytest.raises(ShapeError, match="'out'"):
        fill_op("XavierFill")


def test_msra_fill_std():
    y = fill_op("MSRAFill", shape=[50, 8, 10])  # fan_out = size / dim(1) = 500
    assert abs(y.std() - np.sqrt(2.0 / 500)) < 0.1 * np.sqrt(2.0 / 500)
    with pytest.raises(ShapeError, match="'out'"):
        fill_op("MSRAFill", shape=[5])


def test_empty_random_fill():
    assert fill_op("XavierFill", shape=[0, 3]).shape == (0, 3)


@pytest.mark.parametrize("op_type", ["UniformFill", "GaussianFill", "XavierFill", "MSRAFill"])
def test_random_seed_in_device_option_is_reproducible(op_type):
    def draw(seed):
        op = core.CreateOperator(
            op_type, [], ["y"], shape=[3, 4], device_option=core.DeviceOption(0, random_seed=seed)
        )
        ws = Workspace()
        ws.run_operator_once(op)
        return ws.fetch("y")

    np.testing.assert_array_equal(draw(5), draw(5))
    assert not np.array_equal(draw(5), draw(6))


def test_module_seed_is_reproducible():
    fill.seed(11)
    first = fill_op("GaussianFill", shape=[6])
    fill.seed(11)
    np.testing.assert_array_equal(fill_op("GaussianFill", shape=[6]), first)
    assert not np.array_equal(fill_op("GaussianFill", shape=[6]), first)


# --- given values --------------------------------------------------------------------
@pytest.mark.parametrize(
    "op_type, values, dtype",
    [
        ("GivenTensorFill", [1.0, 2.5, -1.0, 0.0], np.float32),
        ("GivenTensorIntFill", [1, 2, 3, 4], np.int32),
        ("GivenTensorInt64Fill", [1, 2, 3, 2**40], np.int64),
        ("GivenTensorBoolFill", [True, False, False, True], np.bool_),
        ("GivenTensorStringFill", ["a", "b", "c", "d"], object),
    ],
)
def test_given_tensor_fills(op_type, values, dtype):
    y = fill_op(op_type, shape=[2, 2], values=values)
    assert y.dtype == dtype and y.shape == (2, 2)
    assert y.reshape(-1).tolist() == values


def test_given_tensor_fill_count_must_match():
    with pytest.raises(ArgumentError, match="'out'.*3 values; expected 4"):
        fill_op("GivenTensorFill", shape=[2, 2], values=[1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    "op_type",
    [
        "ConstantFill",
        "UniformFill",
        "GaussianFill",
        "XavierFill",
        "MSRAFill",
        "GivenTensorFill",
        "GivenTensorIntFill",
        "GivenTensorInt64Fill",
        "GivenTensorBoolFill",
        "GivenTensorStringFill",
    ],
)
def test_fillers_have_no_gradient(op_type):
    """NO_GRADIENT for each (filler_op.cc, given_tensor_fill_op.cc); GivenTensorStringFill's
    came with 042e8ede4 (E6): before, none was registered (era_gradients.py)."""
    op = core.CreateOperator(op_type, [], ["y"], shape=[2])
    with eras.use("E6"):
        assert get_gradient_for_op(op, ["y_grad"]) == ([], [])


def test_fill_used_by_rnn_cell_for_the_timestep():
    ws = run_op(
        "ConstantFill",
        {},
        ["timestep"],
        shape=[1],
        value=0,
        dtype=DataType.INT32,
        device_option=core.DeviceOption(0),
    )
    t = ws.fetch("timestep")
    assert t.dtype == np.int32 and t.tolist() == [0]


def test_constant_fill_follows_a_float64_shape_source_without_dtype():
    """The extension that lets AddGradientOperators' autogen fill run in float64."""
    from caffe2rnn import core, workspace

    workspace.FeedBlob("x64", np.ones((2, 3)))
    workspace.FeedBlob("x32", np.ones((2, 3), dtype=np.float32))
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["x64"], ["y64"], value=1.0))
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["x32"], ["y32"], value=1.0))
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["x64"], ["yint"], value=1))
    workspace.RunOperatorOnce(
        core.CreateOperator("ConstantFill", ["x64"], ["yf"], value=1.0, dtype=core.DataType.FLOAT)
    )
    assert workspace.FetchBlob("y64").dtype == np.float64
    assert workspace.FetchBlob("y32").dtype == np.float32
    assert workspace.FetchBlob("yint").dtype == np.int64
    assert workspace.FetchBlob("yf").dtype == np.float32


@pytest.mark.parametrize("shape", [[3, 3], [2, 4], [3, 3, 3]])
def test_diagonal_fill(shape):
    out = run1("DiagonalFill", {}, shape=shape, value=2.5)
    expected = np.zeros(shape, np.float32)
    for i in range(min(shape)):
        expected[(i,) * len(shape)] = 2.5
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32


def test_diagonal_fill_of_a_tall_matrix_wraps_as_caffe2s_stride_did():
    # Caffe2 set every (cols + 1)-th element: in a 5 × 2 matrix, [0, 0], [1, 1], [3, 0], [4, 1]
    out = run1("DiagonalFill", {}, shape=[5, 2], value=1.0)
    np.testing.assert_array_equal(np.argwhere(out), [[0, 0], [1, 1], [3, 0], [4, 1]])


def test_diagonal_fill_refusals_and_int_value():
    assert run1("DiagonalFill", {}, shape=[2, 2], value=3).dtype == np.int64
    with pytest.raises(ShapeError, match="must be >= 2D"):
        run1("DiagonalFill", {}, shape=[4], value=1.0)
    with pytest.raises(ShapeError, match="equal length"):
        run1("DiagonalFill", {}, shape=[2, 3, 2], value=1.0)


def test_an_empty_shape_list_beside_an_input_is_no_shape():
    """FillerOp's constructor (filler_op.h at 0cdd09da6 and 042e8ede4): ``if (InputSize())
    { if (shape_.size() != 0) CAFFE_THROW("Cannot set the shape argument and pass in an input
    at the same time"); }`` — an empty ``shape`` list passes."""
    ws = run_op("ConstantFill", {"x": np.zeros((2, 3), np.float32)}, ["y"], shape=[], value=1.0)
    np.testing.assert_array_equal(ws.fetch("y"), np.ones((2, 3), np.float32))
    with pytest.raises(ArgumentError, match="Cannot set the shape argument"):
        run_op("ConstantFill", {"x": np.zeros((2, 3), np.float32)}, ["y"], shape=[2], value=1.0)


@pytest.mark.parametrize(
    "dtype, values, want",
    [
        ("INT32", [1, 2], np.int32),
        ("INT64", [3, 4], np.int64),
        ("BOOL", [0, 1], np.bool_),
        ("DOUBLE", [0.5, 1.5], np.float64),
        ("FLOAT", [0.5, 1.5], np.float32),
        ("STRING", ["a", "b"], object),
    ],
)
def test_given_tensor_fill_dtype_from_e6(dtype, values, want):
    """GivenTensorFillOp<float> at 042e8ede4 (given_tensor_fill_op.h): with a "dtype"
    argument, ``switch (cast::GetCastDataType(helper, "dtype"))`` picks ExtractValues<Type>
    (GetRepeatedArgument<Type>("values"): the type's field) and FillWithType<Type>."""
    from caffe2rnn.runtime import Workspace

    code = getattr(core.DataType, dtype)
    op = core.CreateOperator("GivenTensorFill", [], ["y"], shape=[2], dtype=code, values=values)
    ws = Workspace()
    ws.run_operator_once(op, era="E6")
    y = ws.fetch("y")
    assert y.dtype == np.dtype(want)
    if want is not object:
        np.testing.assert_array_equal(y, np.array(values, want))
    # E5 (0cdd09da6): no dtype: the float values are read, an int list is in the wrong field
    if dtype in ("FLOAT", "DOUBLE"):
        ws.run_operator_once(op, era="E5")
        assert ws.fetch("y").dtype == np.float32
    else:
        with pytest.raises(ArgumentTypeError):
            ws.run_operator_once(op, era="E5")
