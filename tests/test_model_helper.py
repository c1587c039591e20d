"""ModelHelper (E5) and ModelHelperBase (E3), spec §6.1-6.2 and §4.7."""

import logging

import numpy as np
import pytest

from caffe2rnn import core, workspace
from caffe2rnn.errors import ShapeError, UnknownOperatorError, WorkspaceError
from caffe2rnn.model_helper import (
    ExternalInitializer,
    Initializer,
    ModelHelper,
    ModelHelperBase,
    ParameterTags,
)


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
