"""brew helpers and the E5 argument-leakage rule (spec §6.2, §10.8)."""

import pytest

from caffe2rnn import brew, core
from caffe2rnn.model_helper import ModelHelper
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
