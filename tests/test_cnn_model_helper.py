"""CNNModelHelper: E5 thin wrapper over brew vs E3 pass-through (spec §6.1-6.3)."""

import logging

import pytest

from caffe2rnn import core, eras
from caffe2rnn.cnn import CNNModelHelper
from caffe2rnn.errors import ArgumentError
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.utils import MakeArgument


def arg_names(op):
    return [a.name for a in op.arg]


def test_defaults_and_bad_order():
    model = CNNModelHelper()
    assert isinstance(model, ModelHelper)
    assert model.name == "CNN" and model.param_init_net.Name() == "CNN_init"
    assert (model.order, model.use_cudnn) == ("NCHW", True)
    assert model.arg_scope == {"order": "NCHW", "use_cudnn": True, "cudnn_exhaustive_search": False}
    assert CNNModelHelper(ws_nbytes_limit=64).arg_scope["ws_nbytes_limit"] == 64
    with pytest.raises(ArgumentError, match="storage order CHWN"):
        CNNModelHelper(order="CHWN")


def test_e5_logs_deprecation_once_and_leaks_arguments(caplog, monkeypatch):
    monkeypatch.setattr(CNNModelHelper, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="caffe2rnn.cnn"):
        model = CNNModelHelper(name="lstm_cell", use_cudnn=False)
        CNNModelHelper(name="another")
    assert caplog.text.count("DEPRECATE WARNING") == 1
    model.FC("h", "gates_t", dim_in=2, dim_out=8, axis=2)
    model.Transpose("x", "t", axes=[1, 0])
    model.Softmax("t", "p")
    model.Concat(["a", "b"], "ab", axis=2)
    model.Sum(["a", "b"], "s")
    fc, transpose, softmax, concat, total = model.net.Proto().op
    assert list(fc.arg) == [
        MakeArgument("order", "NCHW"),
        MakeArgument("use_cudnn", 0),
        MakeArgument("cudnn_exhaustive_search", 0),
        MakeArgument("axis", 2),
    ]
    assert not transpose.HasField("engine") and not softmax.HasField("engine")
    assert arg_names(transpose) == ["order", "cudnn_exhaustive_search", "axes"]
    assert arg_names(concat) == ["order", "use_cudnn", "cudnn_exhaustive_search", "axis"]
    assert list(concat.output) == ["ab", "_ab_concat_dims"]
    assert arg_names(total) == ["order", "use_cudnn", "cudnn_exhaustive_search"]


def test_e3_passes_keywords_straight_through(caplog):
    with eras.use("E3"):
        with caplog.at_level(logging.WARNING, logger="caffe2rnn.cnn"):
            model = CNNModelHelper(name="m")
        assert caplog.text == ""
        fc = model.FC("h", "gates_t", 2, 8, axis=2)
        model.Transpose("x", "t", axes=[1, 0])
        model.Softmax("t", engine="CUDNN")
        concat = model.Concat(["a", "b"], "ab", axis=2)
        model.Sum(["a", "b"], "s")
    assert fc == "gates_t" and concat == "ab"
    fc_op, transpose, softmax, concat_op, total = model.net.Proto().op
    assert list(fc_op.arg) == [MakeArgument("axis", 2)]
    assert transpose.engine == "CUDNN" and arg_names(transpose) == ["axes"]
    assert softmax.engine == "CUDNN" and list(softmax.output) == ["m/Softmax"]
    assert list(concat_op.arg) == [MakeArgument("order", "NCHW"), MakeArgument("axis", 2)]
    assert list(total.arg) == []
    assert model.params == ["gates_t_w", "gates_t_b"]
    assert model.weights == ["gates_t_w"] and model.biases == ["gates_t_b"]
    w_op, b_op = model.param_init_net.Proto().op
    assert (w_op.type, list(w_op.arg[0].ints)) == ("XavierFill", [8, 2])
    assert (b_op.type, list(b_op.arg[0].ints)) == ("ConstantFill", [8])


def test_e3_without_cudnn_and_without_init_params():
    with eras.use("E4"):
        model = CNNModelHelper(name="m", use_cudnn=False, init_params=False)
        model.Transpose("x", "t")
        model.FC("x", "y", 2, 3, freeze_bias=True)
    transpose, fc = model.net.Proto().op
    assert not transpose.HasField("engine")
    assert len(model.param_init_net.Proto().op) == 0
    assert model.params == ["y_w"] and model.biases == ["y_b"]
    assert arg_names(fc) == ["freeze_bias"]


@pytest.mark.parametrize("era", ["E3", "E5"])
def test_step_model_parameters_become_step_net_external_inputs(era):
    """The E3 recurrent.LSTM pattern (spec §6.3) in both eras."""
    with eras.use(era):
        model = CNNModelHelper(name="outer")
        model.FC("input_blob", "lstm/i2h", 2, 8, axis=2)
        step = CNNModelHelper(name="lstm_cell", param_model=model)
        input_t, timestep, cell_t_prev, hidden_t_prev = step.net.AddScopedExternalInputs(
            "input_t", "timestep", "cell_t_prev", "hidden_t_prev"
        )
        gates_t = step.FC(hidden_t_prev, "lstm/gates_t", dim_in=2, dim_out=8, axis=2)
        step.net.Sum([gates_t, input_t], gates_t)
    assert step.param_init_net is model.param_init_net
    assert model.params == ["lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"]
    assert list(step.net.Proto().external_input) == [
        "input_t",
        "timestep",
        "cell_t_prev",
        "hidden_t_prev",
        "lstm/gates_t_w",
        "lstm/gates_t_b",
    ]
    assert step.net.Name() == "lstm_cell"


def test_other_ops_go_through_getattr():
    model = CNNModelHelper(name="m")
    model.Copy("a", "b")
    model.Squeeze("b", "c", dims=[0])
    model.Tanh("c", "c")
    assert [op.type for op in model.net.Proto().op] == ["Copy", "Squeeze", "Tanh"]
    with core.NameScope("x"):
        assert model.Sigmoid("c", "d") == "x/d"


@pytest.mark.parametrize("era", ["E3", "E5"])
def test_pooling_takes_the_model_order_and_cudnn(era):
    with eras.use(era):
        model = CNNModelHelper(order="NHWC")
        model.MaxPool("x", "m", kernel=2, stride=2)
        model.AveragePool("m", "a", kernel=2)
    max_pool, average_pool = model.net.Proto().op
    assert (max_pool.type, max_pool.engine, average_pool.engine) == ("MaxPool", "CUDNN", "CUDNN")
    leaked = ["cudnn_exhaustive_search"] if era == "E5" else []
    assert arg_names(max_pool) == ["order"] + leaked + ["kernel", "stride"]
    assert max_pool.arg[0] == MakeArgument("order", "NHWC")


def test_prelu_makes_a_slope_parameter():
    model = CNNModelHelper()
    assert model.PRelu("x", "y", num_channels=3) == "y"
    (fill,) = model.param_init_net.Proto().op
    assert (fill.type, list(fill.output)) == ("ConstantFill", ["y_slope"])
    assert [str(p) for p in model.params] == ["y_slope"]
    (prelu,) = model.net.Proto().op
    assert (prelu.type, list(prelu.input), list(prelu.arg)) == ("PRelu", ["x", "y_slope"], [])


def test_iter_counts_runs_of_the_net_in_place():
    from caffe2rnn import workspace

    model = CNNModelHelper()
    counter = model.Iter("ITER")
    (fill,) = model.param_init_net.Proto().op
    assert (fill.type, list(fill.output)) == ("ConstantFill", ["ITER"])
    (op,) = model.net.Proto().op
    assert (op.type, list(op.input), list(op.output)) == ("Iter", ["ITER"], ["ITER"])
    assert str(counter) == "ITER"
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    for _ in range(3):
        workspace.RunNet(model.net.Proto().name)
    value = workspace.FetchBlob("ITER")
    assert value.dtype.name == "int64" and value.tolist() == [3]
