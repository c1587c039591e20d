"""modeling/: ParameterSharing name resolution, create_param honouring it,
ParameterInfo and the initializers."""

import numpy as np
import pytest

from caffe2rnn import brew, core, errors, model_helper, scope, workspace
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.modeling import initializers, parameter_info
from caffe2rnn.modeling.parameter_sharing import ParameterSharing, parameter_sharing_context


def name_of(param):
    return parameter_sharing_context.get_parameter_name(param)


def test_overrides_resolve_longest_prefix_first_and_recursively():
    with ParameterSharing({"scope_b": "scope_a"}):
        with scope.NameScope("scope_a"):
            assert name_of("w") == "scope_a/w"
        with scope.NameScope("scope_b"):
            assert name_of("w") == "scope_a/w"
            with ParameterSharing({"shared": ""}):
                with scope.NameScope("shared"):
                    assert name_of("w") == "scope_a/w"
                with scope.NameScope("unshared"):
                    assert name_of("w") == "scope_a/unshared/w"
        with scope.NameScope("scope_c"):
            assert name_of("w") == "scope_c/w"
    with scope.NameScope("scope_b"):
        assert name_of("w") == "scope_b/w"  # the block is over


def test_overrides_are_relative_to_the_scope_they_are_entered_in():
    with scope.NameScope("outer"):
        with ParameterSharing({"b": "a"}), scope.NameScope("b"):
            assert name_of("w") == "outer/a/w"


def test_nested_blocks_pop_back_to_the_outer_overrides():
    with ParameterSharing({"x": "y"}):
        with ParameterSharing({"p": "q"}):
            with ParameterSharing({"m": "n"}):
                pass
            with scope.NameScope("p"):
                assert name_of("w") == "q/w"
        with scope.NameScope("x"):
            assert name_of("w") == "y/w"
        with scope.NameScope("p"):
            assert name_of("w") == "p/w"


def test_illegal_overrides_are_refused():
    with pytest.raises(errors.ArgumentError, match="prefix"):
        with ParameterSharing({"a": "a/b"}):
            pass
    with pytest.raises(errors.ArgumentError, match="dict"):
        with ParameterSharing([("a", "b")]):
            pass


def test_create_param_shares_one_blob_across_scopes():
    model = ModelHelper(name="share")
    with scope.NameScope("enc"):
        a = brew.fc(model, "x", "out", dim_in=3, dim_out=2)
    with ParameterSharing({"dec": "enc"}), scope.NameScope("dec"):
        b = brew.fc(model, "x", "out", dim_in=3, dim_out=2)
    assert str(a) == "enc/out" and str(b) == "dec/out"  # ops keep their names
    assert [str(p) for p in model.params] == ["enc/out_w", "enc/out_b"]
    assert [list(op.input) for op in model.net.Proto().op] == [
        ["enc/x", "enc/out_w", "enc/out_b"],
        ["dec/x", "enc/out_w", "enc/out_b"],
    ]
    with pytest.raises(errors.ShapeError, match="enc/out_w"):
        with ParameterSharing({"dec": "enc"}), scope.NameScope("dec"):
            brew.fc(model, "x", "out", dim_in=4, dim_out=2)


def test_parameter_info_fields_and_grad_type():
    blob = core.BlobReference("w")
    info = parameter_info.ParameterInfo(param_id=0, param=blob, shape=[3, 4], length=0)
    assert (info.name, info.size, info.length, info.grad_type()) == ("w", 12, 1, None)
    info.grad = core.BlobReference("w_grad")
    assert info.grad_type() == parameter_info.ParameterType.DENSE
    info.grad = core.GradientSlice("i", "v")
    assert info.grad_type() == parameter_info.ParameterType.SPARSE
    with pytest.raises(TypeError):
        parameter_info.ParameterInfo(param_id=0, param="w")
    # model_helper keeps the old import path
    assert model_helper.ParameterInfo is parameter_info.ParameterInfo
    assert model_helper.Initializer is initializers.Initializer


def test_cloned_init_net_holds_only_that_parameter():
    model = ModelHelper(name="clone")
    brew.fc(model, "x", "fc", dim_in=3, dim_out=2)
    info = model.get_param_info("fc_w")
    net, blob = info.cloned_init_net()
    # ClonePartial prefixes the clone's blobs with the new net's name
    assert [op.type for op in net.Proto().op] == ["XavierFill"]
    assert str(blob) == "param_None_fc_w_init/fc_w"
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob(str(blob)).shape == (2, 3)


def test_initializers():
    init_net = core.Net("init")
    info = initializers.Initializer("ConstantFill", value=2.0).create_param(
        core.BlobReference("c"), init_net, [2]
    )
    workspace.RunNetOnce(init_net)
    np.testing.assert_array_equal(workspace.FetchBlob(str(info.blob)), [2.0, 2.0])
    empty = initializers.Initializer()
    empty.update("GaussianFill", {"std": 0.1})
    with pytest.raises(errors.ArgumentError, match="overwrites"):
        empty.update("XavierFill", {})
    with pytest.raises(errors.ArgumentError, match="no fill operator"):
        initializers.Initializer().create_param("p", init_net, [1])
    external = initializers.ExternalInitializer().create_param("e", init_net, [3])
    assert str(external.blob) == "e" and len(init_net.Proto().op) == 1
    made = initializers.update_initializer(None, None, ("XavierFill", {}))
    assert (type(made), made.operator_name) == (initializers.Initializer, "XavierFill")
    made = initializers.update_initializer(
        initializers.pFP16Initializer, ("ConstantFill", {"value": 1.0}), ("XavierFill", {})
    )
    assert made.operator_name == "ConstantFill" and made.operator_kwargs == {"value": 1.0}


def test_update_initializer_reads_items_0_and_1_as_caffe2_did():
    """Caffe2 indexed ``[0]`` and ``[1]``: a longer sequence is accepted and
    its other items ignored (modeling/initializers.py, 042e8ede4)."""
    model = ModelHelper(name="init_tuple")
    brew.fc(model, "x", "y", 2, 3, weight_init=("UniformFill", {"min": -1.0}, {"max": 1.0}))
    fill = model.param_init_net.Proto().op[0]
    assert fill.type == "UniformFill"
    assert {a.name: a.f for a in fill.arg if a.name in ("min", "max")} == {"min": -1.0}
    init = initializers.update_initializer(None, None, ["ConstantFill", {"value": 2.0}, "extra"])
    assert (init.operator_name, init.operator_kwargs) == ("ConstantFill", {"value": 2.0})
