"""NHWC2NCHW / NCHW2NHWC, and ImageInput (built and checked, not run) with brew.image_input."""

import numpy as np
import pytest
from ops_testing import check_gradients, gradient_of, random, run1, run_op

from caffe2rnn import brew, core, errors, workspace
from caffe2rnn.model_helper import ModelHelper


def test_order_switches_transpose_and_undo_each_other():
    x = random((2, 3, 4, 5))  # N, H, W, C
    y = run1("NHWC2NCHW", {"x": x})
    assert y.shape == (2, 5, 3, 4)
    for n, c, h, w in [(0, 0, 0, 0), (1, 4, 2, 3), (1, 2, 1, 0)]:
        assert y[n, c, h, w] == x[n, h, w, c]
    np.testing.assert_array_equal(run1("NCHW2NHWC", {"y": y}), x)
    assert y.dtype == np.float32 and y.flags["C_CONTIGUOUS"]


def test_order_switch_gradients():
    check_gradients("NHWC2NCHW", {"x": random((2, 2, 3, 2), dtype=np.float64)}, ["y"])
    check_gradients("NCHW2NHWC", {"x": random((1, 2, 2, 3), dtype=np.float64)}, ["y"])
    ops, _ = gradient_of("NHWC2NCHW", ["x"], ["y"])
    assert [(op[0], op[2], op[3]) for op in ops] == [("NCHW2NHWC", ["y_grad"], ["x_grad"])]


def test_order_switch_needs_a_4d_input():
    """Caffe2: CAFFE_ENFORCE(X.ndim() == 4), order_switch_ops.cc (0cdd09da6)."""
    with pytest.raises(errors.ShapeError, match="input 0 \\('x'\\).*a 4-D NHWC tensor"):
        run1("NHWC2NCHW", {"x": np.zeros((2, 3, 4), np.float32)})


@pytest.mark.parametrize("op_type", ["NHWC2NCHW", "NCHW2NHWC"])
def test_order_switch_is_for_float_tensors(op_type):
    """order_switch_ops.cc registers NHWC2NCHWOp<float, CPUContext> and NCHW2NHWCOp<float,
    CPUContext>, which read X.data<float>(): another element type is refused."""
    with pytest.raises(errors.DTypeError):
        run1(op_type, {"x": np.zeros((1, 2, 2, 3), np.int32)})


def image_model(order):
    model = ModelHelper(name="images", arg_scope={"order": order})
    data, label = brew.image_input(
        model, "reader", ["data", "label"], batch_size=4, crop=8, scale=10
    )
    return model, data, label


def test_image_input_helper_builds_caffe2s_ops():
    model, data, label = image_model("NCHW")
    ops = [(op.type, list(op.input), list(op.output)) for op in model.net.Proto().op]
    assert ops == [
        ("ImageInput", ["reader"], ["data_nhwc", "label"]),
        ("NHWC2NCHW", ["data_nhwc"], ["data"]),
    ]
    assert (str(data), str(label)) == ("data", "label")
    model, _, _ = image_model("NHWC")
    assert [op.type for op in model.net.Proto().op] == ["ImageInput"]


def test_image_input_checks_its_arguments_as_caffe2s_constructor_and_does_not_run():
    def run(**args):
        op = core.CreateOperator("ImageInput", ["reader"], ["data", "label"], **args)
        workspace.FeedBlob("reader", np.zeros(1, np.float32))
        workspace.RunOperatorOnce(op)

    good = dict(batch_size=4, crop=8, scale=10)
    for change, message in (
        ({"batch_size": 0}, "Batch size should be nonnegative"),
        ({"crop": -1}, "Must provide the cropping value"),
        ({"minsize": 10}, "one and only one of scaling or minsize"),
        ({"scale": 6}, "must be no smaller than the crop value"),
        ({"mean_per_channel": [1.0, 2.0]}, "must be of the same size"),
    ):
        with pytest.raises(errors.ArgumentError, match=message):
            run(**dict(good, **change))
    with pytest.raises(errors.EnforceNotMet, match="reads no image databases"):
        run(**good)
    with pytest.raises(errors.ArgumentError, match="Must specify a db name"):
        run_op("ImageInput", {}, ["data", "label"], **good)
