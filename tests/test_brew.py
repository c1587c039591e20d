"""brew: the helper registry, the E5 argument-leakage rule, and every registered helper."""

import numpy as np
import pytest

from caffe2rnn import brew, core, workspace
from caffe2rnn.errors import ModelError
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.utils import MakeArgument

LEAKED = [
    MakeArgument("order", "NCHW"),
    MakeArgument("use_cudnn", 1),
    MakeArgument("cudnn_exhaustive_search", 0),
]


def args_of(op):
    return list(op.arg)


def test_fc_parameters_names_shapes_and_leaked_arguments():
    model = ModelHelper(name="m")
    with core.NameScope("lstm"):
        y = brew.fc(model, "h", "gates_t", dim_in=3, dim_out=8, axis=2)
    assert y == "lstm/gates_t" and y.Net() is model.net
    assert model.params == ["lstm/gates_t_w", "lstm/gates_t_b"]
    assert model.weights == ["lstm/gates_t_w"] and model.biases == ["lstm/gates_t_b"]
    weight_init, bias_init = model.param_init_net.Proto().op
    assert (weight_init.type, bias_init.type) == ("XavierFill", "ConstantFill")
    assert list(weight_init.arg[0].ints) == [8, 3] and list(bias_init.arg[0].ints) == [8]
    fc_op = model.net.Proto().op[0]
    assert list(fc_op.input) == ["lstm/h", "lstm/gates_t_w", "lstm/gates_t_b"]
    assert args_of(fc_op) == LEAKED + [MakeArgument("axis", 2)]


def test_fc_initializers_freeze_bias_and_auto_name():
    model = ModelHelper(name="m")
    brew.fc(
        model,
        "x",
        "y",
        2,
        3,
        weight_init=("ConstantFill", {"value": 0.5}),
        bias_init=("GaussianFill", {"std": 0.1}),
        freeze_bias=True,
    )
    w_op, b_op = model.param_init_net.Proto().op
    assert [a.name for a in w_op.arg] == ["shape", "value"]
    assert b_op.type == "GaussianFill"
    assert model.params == ["y_w"] and model._computed_params == ["y_b"]
    assert model.biases == ["y_b"]
    assert [a.name for a in model.net.Proto().op[0].arg][-1] == "freeze_bias"
    auto = brew.fc(model, "x", None, 2, 3)
    assert auto == "m_blob_0"


def test_fc_without_init_params_creates_no_init_ops():
    model = ModelHelper(name="m", init_params=False)
    brew.fc(model, "x", "y", 2, 3)
    assert len(model.param_init_net.Proto().op) == 0
    assert model.params == ["y_w", "y_b"]


def test_model_arg_scope_and_call_keywords_override():
    model = ModelHelper(name="m", arg_scope={"order": "NHWC", "use_cudnn": False})
    brew.fc(model, "x", "y", 2, 3, cudnn_exhaustive_search=True)
    assert args_of(model.net.Proto().op[0]) == [
        MakeArgument("order", "NHWC"),
        MakeArgument("use_cudnn", 0),
        MakeArgument("cudnn_exhaustive_search", 1),
    ]


def test_arg_scope_context_manager():
    model = ModelHelper(name="m")
    with brew.arg_scope([brew.fc], axis=2):
        with brew.arg_scope(brew.fc, axis=3, float16=0):
            brew.fc(model, "x", "a", 2, 3)
        brew.fc(model, "x", "b", 2, 3)
        brew.fc(model, "x", "c", 2, 3, axis=1)
        brew.sum(model, ["x", "x"], "s")
    brew.fc(model, "x", "d", 2, 3)
    a, b, c, s, d = model.net.Proto().op
    assert args_of(a) == LEAKED + [MakeArgument("axis", 3), MakeArgument("float16", 0)]
    assert args_of(b) == LEAKED + [MakeArgument("axis", 2)]
    assert args_of(c) == LEAKED + [MakeArgument("axis", 1)]
    assert args_of(s) == LEAKED and args_of(d) == LEAKED
    with pytest.raises(TypeError, match="helper function"), brew.arg_scope(["fc"], axis=2):
        pass


def test_transpose_and_softmax_consume_use_cudnn():
    model = ModelHelper(name="m")
    brew.transpose(model, "x", "t", axes=[1, 0, 2])
    brew.softmax(model, "t", axis=1)
    brew.softmax(model, "t", "p", use_cudnn=False)
    transpose, softmax, plain = model.net.Proto().op
    assert transpose.engine == "CUDNN" and softmax.engine == "CUDNN"
    assert not plain.HasField("engine")
    assert args_of(transpose) == [
        MakeArgument("order", "NCHW"),
        MakeArgument("cudnn_exhaustive_search", 0),
        MakeArgument("axes", [1, 0, 2]),
    ]
    assert list(softmax.output) == ["m/Softmax"]
    assert [a.name for a in softmax.arg] == ["order", "cudnn_exhaustive_search", "axis"]


def test_concat_sum_and_elementwise_linear():
    model = ModelHelper(name="m")
    out = brew.concat(model, ["a", "b"], "ab", axis=2)
    assert out == "ab" and out.Net() is model.net
    concat = model.net.Proto().op[0]
    assert list(concat.output) == ["ab", "_ab_concat_dims"]
    assert args_of(concat) == LEAKED + [MakeArgument("axis", 2)]
    brew.sum(model, ["a", "b"], "s")
    assert args_of(model.net.Proto().op[1]) == LEAKED
    brew.elementwise_linear(model, "s", "e", 4)
    assert model.params == ["e_w", "e_b"]
    w_op, b_op = model.param_init_net.Proto().op
    assert w_op.arg[1].f == 1.0 and b_op.arg[1].f == 0.0
    assert list(w_op.arg[0].ints) == [4]
    assert list(model.net.Proto().op[2].input) == ["s", "e_w", "e_b"]


def test_helpers_without_var_kwargs_only_get_their_named_keys():
    seen = {}

    def probe(model, blob, order="?", axis=0):
        seen.update(order=order, axis=axis)

    brew._helper(probe)(ModelHelper(name="m"), "x", axis=1)
    assert seen == {"order": "NCHW", "axis": 1}


def test_model_must_come_first():
    model = ModelHelper(name="m")
    brew.sum(model=model, blob_in=["a", "b"], blob_out="s")
    assert model.net.Proto().op[0].type == "Sum"
    with pytest.raises(TypeError, match="first input of helper function fc"):
        brew.fc("x", "y", 2, 3)


def arg_dict(op):
    return {a.name: a for a in op.arg}


# --- the registry ------------------------------------------------------------------
def test_registry_lookups_and_unknown_helpers():
    assert brew.has_helper("fc") and brew.has_helper(brew.conv) and brew.has_helper("arg_scope")
    assert not brew.has_helper("batch_norm")
    assert brew.get_helper("fc") is brew.fc and brew.fc.__name__ == "fc"
    with pytest.raises(AttributeError, match="Helper function batch_norm not registered"):
        brew.batch_norm  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError, match="Did you mean: conv"):
        brew.get_helper("convv")


def test_register_a_helper_gets_the_keyword_rules():
    def brew_test_scaled_copy(model, blob_in, blob_out, order="?", factor=1.0):
        return model.net.Scale(blob_in, blob_out, scale=factor, order=order)

    brew.Register(brew_test_scaled_copy)
    try:
        assert brew.has_helper("brew_test_scaled_copy")
        model = ModelHelper(name="m")
        with brew.arg_scope([brew_test_scaled_copy], factor=3.0):
            brew.brew_test_scaled_copy(model, "x", "y")
        op = model.net.Proto().op[0]
        assert (op.type, arg_dict(op)["scale"].f, arg_dict(op)["order"].s) == (
            "Scale",
            3.0,
            b"NCHW",
        )
        with pytest.raises(AttributeError, match="already exists"):
            brew.Register(brew_test_scaled_copy)
    finally:
        brew._REGISTRY.pop("brew_test_scaled_copy")
        delattr(brew, "brew_test_scaled_copy")

    # As in Caffe2, a helper named like brew's own function is registered, and
    # brew.<name> stays brew's function; a helper named like a module brew
    # uses internally ("copy") is an ordinary helper.
    def get_helper(model):
        return "the helper"

    def copy(model, blob_in, blob_out):
        return model.net.Copy(blob_in, blob_out)

    try:
        brew.Register(get_helper)
        assert brew.has_helper("get_helper")
        assert brew.get_helper("fc") is brew.fc  # still brew's function
        brew.Register(copy)
        model = ModelHelper(name="m")
        brew.copy(model, "x", "y")
        brew.fc(model, "y", "z", 2, 3)  # brew's own copying still works
        assert [op.type for op in model.net.Proto().op] == ["Copy", "FC"]
    finally:
        brew._REGISTRY.pop("get_helper", None)
        brew._REGISTRY.pop("copy", None)
        vars(brew).pop("copy", None)


def test_arg_scope_is_restored_after_an_exception():
    model = ModelHelper(name="m")
    with pytest.raises(RuntimeError), brew.arg_scope([brew.fc], axis=5):
        raise RuntimeError("inside the block")
    brew.fc(model, "x", "y", 2, 3)
    assert "axis" not in arg_dict(model.net.Proto().op[0])


# --- conv ---------------------------------------------------------------------------
def test_conv_parameters_and_op_in_a_default_model():
    model = ModelHelper(name="m")
    y = brew.conv(model, "data", "c1", dim_in=3, dim_out=8, kernel=5, stride=2)
    assert y == "c1" and model.params == ["c1_w", "c1_b"]
    assert model.weights == ["c1_w"] and model.biases == ["c1_b"]
    w_init, b_init = model.param_init_net.Proto().op
    assert list(w_init.arg[0].ints) == [8, 3, 5, 5] and w_init.type == "XavierFill"
    assert list(b_init.arg[0].ints) == [8] and b_init.type == "ConstantFill"
    op = model.net.Proto().op[0]
    assert list(op.input) == ["data", "c1_w", "c1_b"] and op.engine == "CUDNN"
    assert [a.name for a in op.arg] == ["kernel", "order", "stride", "exhaustive_search"]
    assert arg_dict(op)["kernel"].i == 5 and arg_dict(op)["exhaustive_search"].i == 0


def test_conv_variants():
    model = ModelHelper(name="m", arg_scope={"order": "NHWC", "use_cudnn": False})
    brew.conv(model, "x", "a", 4, 6, 3, no_bias=True)
    brew.group_conv(model, "x", "b", 4, 6, 3, group=2, order="NCHW")
    brew.conv_nd(model, "x", "c", 4, 6, [3, 2], order="NCHW")
    shapes = [list(op.arg[0].ints) for op in model.param_init_net.Proto().op]
    assert shapes == [[6, 3, 3, 4], [6, 2, 3, 3], [6], [6, 4, 3, 2], [6]]
    a, b, c = model.net.Proto().op
    assert list(a.input) == ["x", "a_w"] and "no_bias" not in arg_dict(a)
    assert not a.HasField("engine") and arg_dict(a)["order"].s == b"NHWC"
    assert arg_dict(b)["group"].i == 2
    assert list(arg_dict(c)["kernels"].ints) == [3, 2]
    with pytest.raises(ModelError, match="only engine you can specify is"):
        brew.conv(model, "x", "d", 4, 6, 3, engine="CUDNN")
    with pytest.raises(ModelError, match="NCHW"):
        brew.conv_nd(model, "x", "e", 4, 6, [3, 3])


def test_conv_relu_lrn_dropout_run_forward_and_backward():
    model = ModelHelper(name="m")
    conv = brew.conv(model, "data", "conv", 2, 3, 3, pad=1)
    relu = brew.relu(model, conv, "relu")
    norm = brew.lrn(model, relu, "norm", size=3, alpha=1e-2, beta=0.75)
    drop = brew.dropout(model, norm, "drop", ratio=0.5)
    loss = model.net.AveragedLoss(model.net.SumElements(drop, "s"), "loss")
    lrn_op = model.net.Proto().op[2]
    assert list(lrn_op.output) == ["norm", "_norm_scale"] and arg_dict(lrn_op)["order"].s == b"NCHW"
    assert list(model.net.Proto().op[3].output) == ["drop", "_drop_mask"]
    model.AddGradientOperators([loss])
    workspace.FeedBlob("data", np.random.RandomState(0).rand(2, 2, 4, 4).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("conv").shape == (2, 3, 4, 4)
    assert workspace.FetchBlob("conv_w_grad").shape == (3, 2, 3, 3)


def test_lrn_on_a_gpu_device_with_cudnn_has_one_output():
    model = ModelHelper(name="m")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        brew.lrn(model, "x", "n", size=3, alpha=1.0, beta=0.5)
    op = model.net.Proto().op[0]
    assert list(op.output) == ["n"] and op.engine == "CUDNN"


# --- training helpers ---------------------------------------------------------------
def test_iter_and_add_weight_decay():
    model = ModelHelper(name="m")
    brew.iter(model, "iter", device_option=core.DeviceOption(caffe2_pb2.CUDA, 0))
    init = model.param_init_net.Proto().op[0]
    assert (init.type, init.device_option.device_type) == ("ConstantFill", 0)
    assert arg_dict(init)["dtype"].i == core.DataType.INT64
    iter_op = model.net.Proto().op[0]
    assert (iter_op.type, list(iter_op.input), list(iter_op.output)) == ("Iter", ["iter"], ["iter"])
    assert not iter_op.HasField("device_option")

    fc = brew.fc(model, "x", "y", 2, 1)
    loss = model.net.AveragedLoss(fc, "loss")
    with pytest.raises(ModelError, match="y_w has no gradient"):
        brew.add_weight_decay(model, 0.1)
    model.AddGradientOperators([loss])
    brew.add_weight_decay(model, 0.0)  # nothing
    n_ops = len(model.net.Proto().op)
    brew.add_weight_decay(model, 0.1)
    decay = model.net.Proto().op[n_ops]
    assert (decay.type, list(decay.input), list(decay.output)) == (
        "WeightedSum",
        ["y_w_grad", "ONE", "y_w", "wd"],
        ["y_w_grad"],
    )
    assert len(model.net.Proto().op) == n_ops + 1  # weights only, not the bias


def test_depth_concat_is_concat():
    model = ModelHelper(name="m")
    out = brew.depth_concat(model, ["a", "b"], "ab", axis=1)
    assert out == "ab" and model.net.Proto().op[0].type == "Concat"


def test_instance_norm_helper_makes_scale_bias_and_saved_statistics():
    model = ModelHelper(name="inorm")
    out = brew.instance_norm(model, "x", "y", 3, epsilon=1e-3)
    assert str(out) == "y"
    assert [str(p) for p in model.params] == ["y_s", "y_b"]
    op = model.net.Proto().op[-1]
    assert op.type == "InstanceNorm" and list(op.output) == ["y", "y_sm", "y_siv"]
    test_model = ModelHelper(name="inorm_test")
    brew.instance_norm(test_model, "x", "y", 3, is_test=True)
    assert list(test_model.net.Proto().op[-1].output) == ["y"]
    x = np.random.RandomState(0).rand(2, 3, 4, 4).astype(np.float32)
    workspace.FeedBlob("x", x)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    y = workspace.FetchBlob("y")
    mean = x.mean(axis=(2, 3), keepdims=True)
    expected = (x - mean) / np.sqrt(x.var(axis=(2, 3), keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_prelu_and_pooling_train_a_small_image_model():
    """brew.prelu, max_pool and average_pool build ops that run forward and backward.
    brew.prelu gives PRelu no order (as Caffe2's did), so an NHWC model shares one slope."""
    model = ModelHelper(name="pool_model", arg_scope={"order": "NHWC"})
    brew.prelu(model, "x", "p", slope_init=("ConstantFill", {"value": 0.5}))
    brew.max_pool(model, "p", "m", kernel=2, stride=2)
    brew.average_pool(model, "m", "a", global_pooling=1)
    model.net.SumElements("a", "loss")
    model.AddGradientOperators(["loss"])
    assert [op.type for op in model.net.Proto().op][:3] == ["PRelu", "MaxPool", "AveragePool"]
    assert model.net.Proto().op[1].arg[0] == MakeArgument("order", "NHWC")
    x = np.random.RandomState(0).uniform(-1, 1, (1, 4, 4, 2)).astype(np.float32)
    workspace.FeedBlob("x", x)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    p = np.where(x > 0, x, 0.5 * x)
    windows = p.reshape(2, 2, 2, 2, 2).transpose(0, 2, 4, 1, 3).reshape(2, 2, 2, 4)
    np.testing.assert_allclose(workspace.FetchBlob("a").reshape(2), windows.max(-1).mean((0, 1)))
    # dLoss/dp is 1/4 at each window's maximum; the slope collects x there where x <= 0
    x_windows = x.reshape(2, 2, 2, 2, 2).transpose(0, 2, 4, 1, 3).reshape(2, 2, 2, 4)
    at_max = np.take_along_axis(x_windows, windows.argmax(-1)[..., None], -1)
    expected = np.sum(np.minimum(at_max, 0)) / 4
    np.testing.assert_allclose(workspace.FetchBlob("p_slope_grad"), [expected], rtol=1e-5)


def test_every_helper_of_caffe2s_brew_exists():
    """Caffe2's E5 and E6 helpers (caffe2/python/helpers/*.py, read from the checkouts when
    present); those whose operator caffe2rnn lacks name it and leave the model unchanged."""
    import glob
    import os
    import re

    from caffe2rnn import errors

    names = set()
    for variable in ("CAFFE2_SOURCE", "CAFFE2_SOURCE_E6"):
        root = os.environ.get(variable)
        for path in glob.glob(os.path.join(root or "/nonexistent", "caffe2/python/helpers/*.py")):
            with open(path) as f:
                names |= set(re.findall(r"^def ([a-z]\w*)\(", f.read(), re.M))
    if not names:
        pytest.skip("set CAFFE2_SOURCE / CAFFE2_SOURCE_E6 to Caffe2 checkouts")
    names.discard("get_current_scope")
    assert sorted(n for n in names if not brew.has_helper(n)) == []
    model = ModelHelper(name="m")
    with pytest.raises(errors.UnknownOperatorError, match="SpatialBN, which caffe2rnn does not"):
        brew.spatial_bn(model, "x", "y", 3)
    assert not model.net.Proto().op and not model.param_init_net.Proto().op and not model.params
