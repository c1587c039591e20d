"""ModelHelper (E5) and ModelHelperBase (E3): parameters, gradients, the
optimizer's view of them, and ExtractPredictorNet (RNN-aware)."""

import logging

import numpy as np
import pytest

from caffe2rnn import brew, cnn, core, proto, recurrent, workspace
from caffe2rnn.errors import ModelError, ShapeError, UnknownOperatorError, WorkspaceError
from caffe2rnn.model_helper import (
    ExternalInitializer,
    ExtractPredictorNet,
    Initializer,
    ModelHelper,
    ModelHelperBase,
    ParameterTags,
)
from caffe2rnn.proto import caffe2_pb2


def test_defaults_and_arg_scope():
    model = ModelHelper()
    assert model.name == "model" and model.net.Name() == "model"
    assert model.param_init_net.Name() == "model_init"
    assert model.arg_scope == {"order": "NCHW", "use_cudnn": True, "cudnn_exhaustive_search": False}
    assert list(model.arg_scope) == ["order", "use_cudnn", "cudnn_exhaustive_search"]
    assert model.Proto() is model.net.Proto()
    assert model.InitProto() is model.param_init_net.Proto()
    custom = ModelHelper(name="m", arg_scope={"order": "NHWC", "extra": 1})
    assert custom.arg_scope == {
        "order": "NHWC",
        "use_cudnn": True,
        "cudnn_exhaustive_search": False,
        "extra": 1,
    }
    assert ModelHelper(name="model").net.Name() == "model_1"


def test_param_model_shares_the_very_same_objects():
    outer = ModelHelper(name="outer")
    step = ModelHelper(name="step", param_model=outer)
    assert step.param_init_net is outer.param_init_net
    assert step.params is outer.params
    assert step.param_to_grad is outer.param_to_grad
    assert step._computed_params is outer._computed_params
    assert step.weights is not outer.weights and step.net is not outer.net


def test_create_param_scopes_initializes_and_tags():
    model = ModelHelper(name="m")
    with core.NameScope("lstm"):
        w = model.create_param(
            "w", [4, 3], Initializer("ConstantFill", value=2.0), tags=ParameterTags.WEIGHT
        )
    named = model.create_param(
        core.BlobReference("raw"), [2], Initializer("XavierFill"), tags=[ParameterTags.BIAS]
    )
    frozen = model.create_param(
        "frozen", [1], Initializer("ConstantFill"), tags=[ParameterTags.COMPUTED_PARAM]
    )
    assert (w, named, frozen) == ("lstm/w", "raw", "frozen")
    assert w.Net() is model.param_init_net
    assert model.params == ["lstm/w", "raw"]
    assert model._computed_params == ["frozen"]
    assert model.weights == ["lstm/w"] and model.biases == ["raw"]
    init_op = model.param_init_net.Proto().op[0]
    assert init_op.type == "ConstantFill" and list(init_op.output) == ["lstm/w"]
    assert [a.name for a in init_op.arg] == ["shape", "value"]
    assert list(init_op.arg[0].ints) == [4, 3]


def test_create_param_returns_an_existing_parameter():
    model = ModelHelper(name="m")
    first = model.create_param("w", [2, 2], Initializer("XavierFill"))
    again = model.create_param("w", [2, 2], Initializer("XavierFill"))
    assert again is first and len(model.param_init_net.Proto().op) == 1
    assert model.params == ["w"]
    with pytest.raises(ShapeError, match="'w' already exists with shape"):
        model.create_param("w", [3, 2], Initializer("XavierFill"))
    with pytest.raises(TypeError, match="create_param takes"):
        model.create_param(3, [1], Initializer("XavierFill"))


def test_external_initializer_makes_only_a_reference():
    model = ModelHelper(name="m")
    with core.NameScope("s"):
        p = model.create_param("p", [3], ExternalInitializer())
    assert p == "s/p" and p.Net() is model.param_init_net
    assert len(model.param_init_net.Proto().op) == 0 and model.params == ["s/p"]


def test_add_param_infers_shape_and_add_parameter_checks_type():
    model = ModelHelper(name="m")
    v = model.param_init_net.XavierFill([], "att/v", shape=[1, 5])
    info = model.add_param(v)
    assert info.shape == [1, 5] and model.params == ["att/v"]
    assert model.get_param_info("att/v") is info
    with pytest.raises(TypeError, match="BlobReference"):
        model.AddParameter("plain string")


def test_get_params_weights_and_biases_by_scope():
    model = ModelHelper(name="m")
    for name in ["a/w", "a/b/w", "c/w"]:
        model.create_param(
            core.BlobReference(name), [1], Initializer("XavierFill"), tags=ParameterTags.WEIGHT
        )
    assert model.GetParams() == ["a/w", "a/b/w", "c/w"]
    assert model.GetParams("a") == ["a/w", "a/b/w"]
    assert model.GetParams("a/", top_scope=True) == ["a/w", "a/b/w"]
    with core.NameScope("c"):
        assert model.GetParams() == ["c/w"]
    assert model.GetWeights("a/") == ["a/w"]  # exact scope only
    assert model.GetWeights() == ["a/w", "a/b/w", "c/w"]
    assert model.GetBiases() == []


def test_add_gradient_operators_fills_param_to_grad_once():
    model = ModelHelper(name="m")
    w = model.create_param("w", [1, 2], Initializer("XavierFill"))
    b = model.create_param("b", [1], Initializer("ConstantFill"))
    model.net.FC(["x", w, b], "y")
    with pytest.raises(WorkspaceError, match="AddGradientOperators first"):
        model.get_param_to_grad(model.params)
    grad_map = model.AddGradientOperators({"y": "y_grad"})
    assert model.grad_map is grad_map
    assert model.param_to_grad == {"w": "w_grad", "b": "b_grad"}
    assert model.get_param_info("w").grad == "w_grad"
    with pytest.raises(WorkspaceError, match="You cannot run AddGradientOperators twice."):
        model.AddGradientOperators({"y": "y_grad"})


def test_duplicate_params_are_refused():
    model = ModelHelper(name="m")
    w = model.create_param("w", [1, 2], Initializer("XavierFill"))
    model.AddParameter(w)
    model.net.FC(["x", w, "b"], "y")
    with pytest.raises(WorkspaceError, match=r"Duplicate params: \['w'\]"):
        model.AddGradientOperators({"y": "y_grad"})
    assert not model.gradient_ops_added


def test_getattr_known_unknown_and_unregistered_ops(caplog):
    model = ModelHelper(name="m")
    with caplog.at_level(logging.WARNING, logger="caffe2rnn.model_helper"):
        model.Tanh("x", "y")
        model.ExpandDims("y", "z", dims=[0])
        assert caplog.records == []
        model.Relu("z", "r")
    assert "ModelHelper does not recognize: Relu." in caplog.text
    assert [op.type for op in model.net.Proto().op] == ["Tanh", "ExpandDims", "Relu"]
    strict = ModelHelper(name="s", allow_not_known_ops=False)
    with pytest.raises(WorkspaceError, match="Relu is not known to be safe"):
        strict.Relu("x", "y")
    with pytest.raises(UnknownOperatorError, match="Did you mean"):
        model.Tanhh
    with pytest.raises(AttributeError):
        model.__missing__


def test_fc_parameters_run_through_a_workspace():
    """End to end: init net fills the parameters, the FC reads them."""
    model = ModelHelper(name="m")
    w = model.create_param("w", [3, 2], Initializer("ConstantFill", value=0.5))
    b = model.create_param("b", [3], Initializer("ConstantFill", value=1.0))
    model.net.FC(["x", w, b], "y")
    x = np.array([[1.0, 2.0]], dtype=np.float32)
    workspace.FeedBlob("x", x)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(workspace.FetchBlob("y"), x @ np.full((3, 2), 0.5).T + 1.0)


def test_model_helper_base_e3_differences(caplog):
    base = ModelHelperBase(name="lstm")
    assert base.param_init_net.Name() == "lstm_init"
    assert base.computed_params is base._computed_params
    assert ModelHelperBase(name="").param_init_net.Name() == "_init"
    assert ModelHelperBase().param_init_net.Name() == "model_init"
    with caplog.at_level(logging.WARNING, logger="caffe2rnn.model_helper"):
        base.ExpandDims("x", "y", dims=[0])
    assert "ModelHelperBase does not recognize: ExpandDims." in caplog.text


def test_computed_and_all_params_by_scope():
    model = ModelHelper(name="m")
    for name, tags in [
        ("a/w", ParameterTags.WEIGHT),
        ("a/rm", ParameterTags.COMPUTED_PARAM),
        ("a/b/riv", ParameterTags.COMPUTED_PARAM),
        ("c/w", ParameterTags.WEIGHT),
    ]:
        model.create_param(core.BlobReference(name), [1], Initializer("ConstantFill"), tags=tags)
    assert model.GetComputedParams() == ["a/rm", "a/b/riv"]
    assert model.GetComputedParams("a") == ["a/rm"]  # exact scope, unlike GetParams
    assert model.GetAllParams("a") == ["a/w", "a/rm"]
    with core.NameScope("c"):
        assert model.GetAllParams() == ["c/w"]
    assert model.GetAllParams() == ["a/w", "c/w", "a/rm", "a/b/riv"]


def test_get_optimization_param_info():
    model = ModelHelper(name="m")
    with pytest.raises(WorkspaceError, match="AddGradientOperators first"):
        model.GetOptimizationParamInfo()
    brew.fc(model, "x", "y", 2, 3)
    brew.fc(model, "y", "z", 3, 1, freeze_bias=True)
    model.AddGradientOperators([model.net.AveragedLoss("z", "loss")])
    infos = model.GetOptimizationParamInfo()
    assert [(str(i.blob), str(i.grad)) for i in infos] == [
        ("y_w", "y_w_grad"),
        ("y_b", "y_b_grad"),
        ("z_w", "z_w_grad"),
    ]
    assert [str(i.blob) for i in model.GetOptimizationParamInfo(["z_w"])] == ["z_w"]
    model.param_to_grad["y_b"] = core.GradientSlice("idx", "vals")
    model.skip_sparse_optim = True
    assert [str(i.blob) for i in model.GetOptimizationParamInfo()] == ["y_w", "z_w"]


# --- ExtractPredictorNet -------------------------------------------------------------------
def lstm_training_model():
    # caffe2rnn.recurrent.LSTM calls model.FC(...): the CNNModelHelper interface.
    model = cnn.CNNModelHelper(name="lstm_extract_test")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, 0)):
        output, _, _, _ = recurrent.LSTM(
            model=model,
            input_blob="input",
            seq_lengths="seqlengths",
            initial_states=("hidden_init", "cell_init"),
            dim_in=20,
            dim_out=40,
            scope="test",
            drop_states=True,
        )
        loss = model.net.AveragedLoss(model.net.SumElements(output, "sum"), "loss")
    model.AddGradientOperators([loss])
    return model, output


@pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)
def test_lstm_extract_predictor_net():
    """Caffe2's rnn_cell_test.test_lstm_extract_predictor_net, on caffe2rnn's LSTM."""
    model, output = lstm_training_model()
    workspace.RunNetOnce(model.param_init_net)
    shapes = {b: workspace.FetchBlob(b).shape for b in workspace.Blobs()}
    training_text = str(model.net.Proto())
    predict_net, export_blobs = ExtractPredictorNet(
        net_proto=model.net.Proto(),
        input_blobs=["input"],
        output_blobs=[output],
        device=core.DeviceOption(caffe2_pb2.CPU, 1),
    )
    assert str(model.net.Proto()) == training_text  # the training net is left alone
    proto_ = predict_net.Proto()
    assert proto_.name == "lstm_extract_test_predict"
    assert "seqlengths" in proto_.external_input
    assert not any(op.is_gradient_op for op in proto_.op)
    workspace.ResetWorkspace()
    shapes.update({"input": [10, 4, 20], "cell_init": [1, 4, 40], "hidden_init": [1, 4, 40]})
    for name in proto_.external_input:
        if name == "seqlengths":
            workspace.FeedBlob(name, np.array([10] * 4, dtype=np.int32))
        else:
            workspace.FeedBlob(name, np.zeros(shapes[name], np.float32))
            if name != "input":
                assert name in export_blobs
    assert "input" not in export_blobs
    assert workspace.CreateNet(proto_)
    assert workspace.RunNet(proto_.name)
    assert workspace.FetchBlob(str(output)).shape == (10, 4, 40)
    recurrent_ops = [op for op in proto_.op if op.type == "RecurrentNetwork"]
    assert recurrent_ops
    for op in proto_.op:
        assert (op.device_option.device_type, op.device_option.cuda_gpu_id) == (0, 1)
    for op in recurrent_ops:
        for arg in op.arg:
            if arg.name == "step_net":
                step = proto.parse_text(caffe2_pb2.NetDef, arg.s)
                for step_op in step.op:
                    assert step_op.device_option.device_type == 0
                    assert step_op.device_option.cuda_gpu_id == 1
            elif arg.name == "backward_step_net":
                assert arg.s == b""


def test_extract_predictor_net_cuts_renames_and_disables():
    model = ModelHelper(name="m")
    hidden = brew.fc(model, "data", "hidden", 3, 4)
    relu = model.net.Relu(hidden, "relu")
    side = model.net.Tanh("other_input", "side")
    out = model.net.Sum([relu, side], "out")
    model.net.AddExternalOutput(out)
    model.AddGradientOperators([model.net.AveragedLoss(out, "loss")])
    net, export = ExtractPredictorNet(
        model.net.Proto(), ["data"], [relu], renames={"hidden_w": "W", "data": "x"}
    )
    assert [op.type for op in net.Proto().op] == ["FC", "Relu"]
    assert list(net.Proto().op[0].input) == ["x", "W", "hidden_b"]
    assert list(net.Proto().external_input) == ["x", "W", "hidden_b"]
    assert list(net.Proto().external_output) == ["relu"]
    assert export == ["W", "hidden_b"]
    net, _ = ExtractPredictorNet(
        model.net.Proto(), ["data"], [out], disabled_inputs=["other_input"]
    )
    assert [op.type for op in net.Proto().op] == ["FC", "Relu"]  # Tanh and Sum cut off
    with pytest.raises(ModelError, match=r"No ops with input=\['nothing'\]"):
        ExtractPredictorNet(model.net.Proto(), ["nothing"], [out])
    with pytest.raises(ModelError, match=r"No ops with output=\['nowhere'\]"):
        ExtractPredictorNet(model.net.Proto(), ["data"], ["nowhere"])
    train = ModelHelper(name="t")
    brew.dropout(train, "data", "d", is_test=0)
    with pytest.raises(ModelError, match="is_test=0"):
        ExtractPredictorNet(train.net.Proto(), ["data"], ["d"])


def test_extract_predictor_net_of_a_net_carries_its_era():
    from caffe2rnn import eras

    with eras.use("E6"):
        model, output = lstm_training_model()
    predict_net, _ = ExtractPredictorNet(model.net, ["input"], [output])
    assert eras.of(predict_net) is eras.get("E6") is eras.of(model.net)
    from_proto, _ = ExtractPredictorNet(model.net.Proto(), ["input"], [output])
    assert eras.of(from_proto) is None  # a bare NetDef says nothing of its era
    assert from_proto.Proto().op == predict_net.Proto().op


def test_validate_lists_duplicates_and_guards_gradients_from_e5_on():
    """``_Validate`` (Caffe2 41ae85f4e, 2017-06-01) returns the duplicated names;
    ``AddGradientOperators`` calls ``Validate`` from then on, not at E4."""
    from caffe2rnn import eras

    def model_with_duplicates():
        model = ModelHelper(name="dupes")
        for name in ("bbb", "aaa", "bbb", "bbb"):
            model.params.append(core.BlobReference(name))
        model.net.Copy("x", "y")
        return model

    assert model_with_duplicates()._Validate() == ["bbb"]
    assert ModelHelper(name="fine")._Validate() == []
    with pytest.raises(WorkspaceError, match=r"Duplicate params: \['bbb'\]"):
        model_with_duplicates().AddGradientOperators(["y"])
    with eras.use("E4"):
        model_with_duplicates().AddGradientOperators(["y"])
