"""core.Net (spec §2.7): names, lookups, op creation, external blobs, Clone."""

import pytest

from caffe2rnn import core, eras
from caffe2rnn.errors import EnforceNotMet, UnknownOperatorError, WorkspaceError
from caffe2rnn.proto import caffe2_pb2

# -- names --------------------------------------------------------------------


def test_net_names_are_unique_in_the_process():
    names = [core.Net("RecurrentBackwardStep").Name() for _ in range(3)]
    assert names == ["RecurrentBackwardStep", "RecurrentBackwardStep_1", "RecurrentBackwardStep_2"]
    assert "RecurrentBackwardStep_2" in core.Net._net_names_used


def test_reset_names_forgets_used_names():
    core.Net("again")
    core.Net.reset_names()
    assert core.Net("again").Name() == "again"


def test_net_from_netdef_copies_and_is_renamed_when_taken():
    first = core.Net("n")
    proto = caffe2_pb2.NetDef(name="n")
    proto.external_input.append("x")
    net = core.Net(proto)
    assert first.Name() == "n"
    assert net.Name() == "n_1" and net.Proto().name == "n_1"
    proto.external_input.append("y")  # the net holds a copy
    assert list(net.Proto().external_input) == ["x"]
    assert net.BlobIsDefined("x") and not net.BlobIsDefined("y")


def test_auto_name_counter_reads_one_digit_after_blob_prefix():
    proto = caffe2_pb2.NetDef(name="m")
    op = proto.op.add(type="Sum", input=["m_blob_3", "m_blob_x"], output=["m_blob_12"])
    op.name = ""
    net = core.Net(proto)
    # digits seen: 3 (from m_blob_3) and 1 (only one character of "12")
    assert net.NextName() == "m_blob_4"
    assert core.Net("fresh").NextName() == "fresh_blob_0"


def test_name_str_and_proto_identity():
    net = core.Net("model")
    assert net.Name() == "model" and str(net) == "model"
    assert net.Proto() is net.Proto() is net._net
    assert not net.Proto().HasField("type") and net.Proto().type == ""


def test_next_name_recurrent_quirk_returns_the_same_name():
    net = core.Net("model")
    assert net.NextName("recurrent") == "model/recurrent"
    assert net.NextName("recurrent") == "model/recurrent"
    with core.NameScope("enc"):
        assert net.NextName("recurrent") == "model/recurrent"
    assert net.NextName("recurrent", output_id=1) == "model/recurrent:1"


def test_next_name_skips_defined_scoped_candidates():
    net = core.Net("model")
    net.AddExternalInput("model/Sum", "model/Sum_2")
    assert net.NextName("Sum") == "model/Sum_3"
    with core.NameScope("s"):
        net.AddExternalInput("s/model/Sum")
        assert net.NextName("Sum") == "model/Sum_2"  # returned unscoped
    assert [net.NextName(), net.NextName()] == ["model_blob_0", "model_blob_1"]


def test_next_blob_and_next_scoped_blob():
    net = core.Net("n")
    net.AddExternalInput("h")
    first = net.NextBlob("h")
    assert first == "h_auto_0" and first.Net() is None
    assert net.NextBlob("h") == "h_auto_1"
    assert net.NextBlob() == "unnamed"
    with core.NameScope("s"):
        assert net.NextScopedBlob("h") == "s/h"
        assert net.NextScopedBlob("h") == "s/h_auto_0"


# -- lookups ----------------------------------------------------------------


def test_lookups_follow_edits_made_through_proto():
    net = core.Net("n")
    y = net.Sum(["a", "b"], "y")
    assert net.BlobIsDefined(y) and net.BlobIsDefined("a")
    assert not net.BlobIsDefined("z")
    net.Proto().external_input.append("z")
    assert net.BlobIsDefined("z") and net.is_external_input("z")
    assert not net.is_external_input("y")
    assert net.UsesBlob("a") and not net.UsesBlob("y")
    ref = net.GetBlobRef("y")
    assert ref == "y" and ref.Net() is net
    with pytest.raises(KeyError, match="does not define blob nope"):
        net.GetBlobRef("nope")


def test_external_inputs_and_outputs_properties():
    net = core.Net("n")
    y = net.Sum(["a", "b"], "y")
    net.AddExternalOutput(y)
    assert net.external_inputs == ["a", "b"]
    assert all(r.Net() is None for r in net.external_inputs)
    assert net.external_outputs == ["y"]
    assert isinstance(net.external_outputs[0], core.BlobReference)


# -- operator creation ----------------------------------------------------------


def test_undefined_inputs_become_external_inputs_once_in_order():
    net = core.Net("step")
    h = net.Sum(["x", "w"], "h")
    net.Sum([h, "w", "b"], "h2")
    assert list(net.Proto().external_input) == ["x", "w", "b"]
    assert list(net.Proto().op[1].input) == ["h", "w", "b"]


def test_auto_named_outputs_are_scoped_and_numbered():
    net = core.Net("step")
    first = net.Sum(["a", "b"])
    second = net.Sum(["a", "b"])
    assert (first, second) == ("step/Sum", "step/Sum_2")
    with core.NameScope("lstm"):
        third = net.Sum(["x", "y"])
    assert third == "lstm/step/Sum"
    assert list(net.Proto().op[2].input) == ["lstm/x", "lstm/y"]


def test_int_outputs_split():
    net = core.Net("n")
    parts = net.Split("x", 2)
    assert parts == ("n/Split:0", "n/Split:1") and isinstance(parts, tuple)
    assert net.Split("x", 2) == ("n/Split_2:0", "n/Split_2:1")


def test_return_conventions():
    net = core.Net("n")
    assert net.Print("x", []) is None
    single = net.Sum(["a", "b"], ["c"])
    assert type(single) is core.BlobReference and single.Net() is net
    many = net.Split("c", ["d", "e", "f"])
    assert isinstance(many, tuple) and many[:-1] == ("d", "e")
    assert all(r.Net() is net for r in many)


def test_op_fields_and_keyword_arguments():
    net = core.Net("n")
    net.Sum(["a", "b"], "c", name="s", engine="X", axis=2, scale=0.5)
    op = net.Proto().op[0]
    assert op.type == "Sum" and op.name == "s" and op.engine == "X"
    assert [a.name for a in op.arg] == ["axis", "scale"]
    assert op.arg[0].i == 2 and op.arg[1].f == 0.5


def test_blob_reference_methods_create_ops_on_their_net():
    net = core.Net("n")
    y = net.Sum(["a", "b"], "y")
    z = y.Relu([], "z")
    assert z == "z" and list(net.Proto().op[1].input) == ["y"]
    w = y.Sum("a", "w")
    assert list(net.Proto().op[2].input) == ["y", "a"] and w.Net() is net


def test_input_claiming_this_net_but_undefined_is_rejected():
    net = core.Net("n")
    ghost = core.BlobReference("ghost", net)
    with pytest.raises(WorkspaceError, match="ghost"):
        net.Sum([ghost], "y")


def test_unknown_operator_is_attribute_error_with_suggestions_e5():
    net = core.Net("n")
    with pytest.raises(UnknownOperatorError) as info:
        net.Summ(["a"], "b")
    assert isinstance(info.value, AttributeError)
    message = str(info.value)
    assert message.startswith("Method Summ is not a registered operator.")
    assert "Did you mean: [" in message and "Sum" in message
    assert not hasattr(net, "Fcc") and not hasattr(net, "__missing__")


def test_unknown_operator_is_runtime_error_before_e4():
    net = core.Net("n")
    with eras.use("E3"):
        with pytest.raises(EnforceNotMet) as info:
            net.Summ
        assert not isinstance(info.value, AttributeError)
        assert isinstance(info.value, RuntimeError)
        assert "Did you mean" in str(info.value)
    with eras.use("E0"):
        with pytest.raises(RuntimeError) as info:
            net.Summ
        assert str(info.value) == "Method Summ is not a registered operator."


# -- external inputs and outputs -------------------------------------------------


def test_add_external_input_returns_references_without_net():
    net = core.Net("n")
    one = net.AddExternalInput("x")
    assert type(one) is core.BlobReference and one == "x" and one.Net() is None
    both = net.AddExternalInputs("y", core.BlobReference("z"))
    assert isinstance(both, list) and both == ["y", "z"]
    assert list(net.Proto().external_input) == ["x", "y", "z"]
    with pytest.raises(RuntimeError, match="does not have a net"):
        one.Relu([])


def test_add_external_input_rejects_duplicates_and_nothing():
    net = core.Net("n")
    net.AddExternalInput("x")
    with pytest.raises(WorkspaceError, match="Net already contains an input named x"):
        net.AddExternalInput("y", "x")
    assert list(net.Proto().external_input) == ["x"]  # nothing half-added
    with pytest.raises(WorkspaceError):
        net.AddExternalInput()


def test_add_scoped_external_inputs_always_a_list():
    net = core.Net("n")
    with core.NameScope("lstm"):
        refs = net.AddScopedExternalInputs("input_t")
        more = net.AddScopedExternalInputs("a", "b")
    assert refs == ["lstm/input_t"] and isinstance(refs, list)
    assert more == ["lstm/a", "lstm/b"]


def test_add_external_output_rules():
    net = core.Net("n")
    y = net.Sum(["a", "b"], "y")
    net.AddExternalOutput(y)
    net.AddExternalOutputs(y, core.BlobReference("a"))  # duplicates not checked
    assert list(net.Proto().external_output) == ["y", "y", "a"]
    with pytest.raises(TypeError, match="BlobReference"):
        net.AddExternalOutput("y")
    with pytest.raises(WorkspaceError, match="does not define blob q"):
        net.AddExternalOutput(core.BlobReference("q"))
    with core.NameScope("s"):
        net.Sum(["a"], "t")
        net.AddScopedExternalOutputs("t")
    assert net.Proto().external_output[-1] == "s/t"


# -- gradients and Clone -------------------------------------------------------


def test_add_gradient_operators_appends_backward_ops():
    net = core.Net("n")
    net.Sigmoid("x", "y")
    grad_map = net.AddGradientOperators({"y": "y_grad"})
    assert grad_map["x"] == "x_grad"
    assert [op.type for op in net.Proto().op] == ["Sigmoid", "SigmoidGradient"]
    assert net.BlobIsDefined("x_grad")
    net.Sigmoid("y", "y2")
    net.AddGradientOperators({"y2": "y2_grad"}, skip=2)
    assert [op.type for op in net.Proto().op][-1] == "SigmoidGradient"
    assert list(net.Proto().op[-1].output) == ["y_grad"]


def test_clone_masks_renames_and_uniquifies():
    net = core.Net("orig")
    y = net.Sum(["a", "b"], "y")
    net.Relu(y, "z")
    net.AddExternalOutput(core.BlobReference("z"))
    net.AddAttribute("note", 1)
    seen = []
    clone = net.Clone(
        "copy",
        blob_remap={"a": "A", "z": "Z"},
        op_id_mask=[1],
        remap_funcs={"Relu": lambda op, prefix: seen.append(prefix)},
    )
    proto = clone.Proto()
    assert proto.name == "copy" and seen == ["copy/"]
    assert [op.type for op in proto.op] == ["Relu"]
    assert list(proto.op[0].output) == ["Z"]
    assert list(proto.external_input) == ["A", "b"]
    assert list(proto.external_output) == ["Z"]
    assert clone.get_attributes("note") == [1]
    assert [op.type for op in net.Proto().op] == ["Sum", "Relu"]  # untouched
    assert net.Clone("copy").Name() == "copy_1"
    assert len(net.Clone("all").Proto().op) == 2
