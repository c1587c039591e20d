"""Spec §2.1-2.6: name scopes, BlobReference, rectification, CreateOperator,
small core helpers and MakeArgument."""

import numpy as np
import pytest

from caffe2rnn import core, eras, scope, utils
from caffe2rnn.proto import caffe2_pb2

# -- §2.1 name scope ----------------------------------------------------------


def test_name_scope_nesting_reset_and_restore():
    assert scope.CurrentNameScope() == ""
    with core.NameScope("x"):
        with core.NameScope("a"):
            assert scope.CurrentNameScope() == "x/a/"
        with core.NameScope("b/c"):
            assert scope.CurrentNameScope() == "x/b/c/"
        with core.NameScope("r", reset=True):
            assert scope.CurrentNameScope() == "r/"
        with core.NameScope(""):
            assert scope.CurrentNameScope() == "x/"
        with core.NameScope(None):
            assert scope.CurrentNameScope() == "x/"
    assert scope.CurrentNameScope() == ""


def test_name_scope_restored_after_exception():
    with pytest.raises(KeyError), core.NameScope("boom"):
        raise KeyError("x")
    assert scope.CurrentNameScope() == ""


def test_scoped_name_and_scoped_blob_reference():
    with core.NameScope("enc"):
        assert core.ScopedName("h") == "enc/h"
        assert core.ScopedName(b"h") == "enc/h"
        net = core.Net("n")
        ref = core.ScopedBlobReference("h", net)
        assert ref == "enc/h" and ref.Net() is net
        assert core.BlobReference("h") == "h"  # the constructor never scopes


def test_device_scope_is_copied_into_operators():
    option = core.DeviceOption(caffe2_pb2.CPU, 0)
    with core.DeviceScope(option):
        op = core.CreateOperator("Relu", "x", "y")
    assert op.device_option == option
    assert not core.CreateOperator("Relu", "x", "y").HasField("device_option")


# -- §2.2 BlobReference ---------------------------------------------------------


def test_blob_reference_text_equality_and_hashing():
    ref = core.BlobReference("lstm/h")
    assert str(ref) == "lstm/h" and repr(ref) == 'BlobReference("lstm/h")'
    assert ref == "lstm/h" and ref == b"lstm/h" and ref == core.BlobReference("lstm/h")
    assert ref != "h" and ref != 3 and ref == "lstm/h"
    assert {"lstm/h": 1}[ref] == 1 and ref in {"lstm/h"}
    assert {ref: 2}["lstm/h"] == 2
    assert core.BlobReference(b"b").__str__() == "b" and str(core.BlobReference(7)) == "7"
    assert ref.meta == {}
    with pytest.raises(TypeError):
        sorted([core.BlobReference("b"), core.BlobReference("a")])


def test_blob_reference_concatenation_keeps_the_net():
    net = core.Net("n")
    ref = core.BlobReference("h", net)
    assert ref + "_grad" == "h_grad" and (ref + "_grad").Net() is net
    assert "_" + ref == "_h" and ("_" + ref).Net() is net
    with pytest.raises(RuntimeError, match="Cannot add BlobReference to a non-string."):
        ref + 1
    with pytest.raises(RuntimeError, match="Cannot add a non-string to BlobReference."):
        1 + ref


def test_blob_reference_name_scope_and_net():
    assert core.BlobReference("a/b/c").GetNameScope() == "a/b/"
    assert core.BlobReference("c").GetNameScope() == ""
    assert core.BlobReference("c").Net() is None


def test_blob_reference_operator_errors():
    net = core.Net("n")
    ref = core.BlobReference("x", net)
    with pytest.raises(AttributeError):
        ref.__nothing__
    with pytest.raises(RuntimeError, match="Did you mean"):
        ref.Sigmoidd
    with pytest.raises(RuntimeError, match="net source"):
        core.BlobReference("x").Relu()


# -- §2.3 / §2.4 rectification and CreateOperator -----------------------------


def test_rectification_scopes_strings_only():
    with core.NameScope("s"):
        op = core.CreateOperator("Sum", ["a", core.BlobReference("b"), b"c"], "d")
        assert list(op.input) == ["s/a", "b", "s/c"] and list(op.output) == ["s/d"]
        single = core.CreateOperator("Relu", core.BlobReference("x"), ("y",))
        assert list(single.input) == ["x"] and list(single.output) == ["s/y"]


def test_rectification_type_errors():
    with pytest.raises(TypeError, match="I/O blob #1 of unsupported type"):
        core.CreateOperator("Sum", ["a", 3], "b")
    with pytest.raises(TypeError, match="Unknown input/output type"):
        core.CreateOperator("Sum", {"a"}, "b")


def test_create_operator_fields():
    option = core.DeviceOption(caffe2_pb2.CPU)
    extra = utils.MakeArgument("first", 1)
    op = core.CreateOperator(
        "FC",
        ["x", "w", "b"],
        "y",
        name="fc",
        control_input=["c"],
        device_option=option,
        arg=[extra],
        engine="CUDNN",
        random_seed=5,
        axis=2,
        order="NCHW",
    )
    assert (op.type, op.name, op.engine) == ("FC", "fc", "CUDNN")
    assert list(op.control_input) == ["c"]
    assert op.device_option.random_seed == 5 and option.random_seed == 0
    assert [a.name for a in op.arg] == ["first", "axis", "order"]
    plain = core.CreateOperator("Relu", "x", "y")
    assert plain.HasField("name") and plain.name == ""
    assert not plain.HasField("engine") and not plain.control_input
    seeded = core.CreateOperator("Relu", "x", "y", random_seed=3)
    assert seeded.device_option.random_seed == 3
    assert not seeded.device_option.HasField("device_type")


# -- §2.5 helpers --------------------------------------------------------------


def test_data_type_and_device_option_helpers():
    assert core.DataType.INT32 == 2 and core.DataType.FLOAT == 1
    assert core.DataType.DOUBLE == 13 and core.DataType.INT64 == 10
    option = core.DeviceOption(caffe2_pb2.CPU)
    assert option.HasField("device_type") and option.HasField("cuda_gpu_id")
    assert not option.HasField("random_seed")
    assert core.DeviceOption(1, 2, random_seed=9).random_seed == 9
    assert core.IsOperator("Sum") and not core.IsOperator("Summ")
    assert not core.IsOperatorWithEngine("Sum", "CUDNN")


# -- §2.6 MakeArgument ------------------------------------------------------------


@pytest.mark.parametrize(
    "value, field, expected",
    [
        (0.5, "f", 0.5),
        (np.float64(0.25), "f", 0.25),
        (3, "i", 3),
        (True, "i", 1),
        (False, "i", 0),
        (np.int64(-4), "i", -4),
        ("txt", "s", b"txt"),
        (b"raw", "s", b"raw"),
        ([1.0, 2.0], "floats", [1.0, 2.0]),
        (np.array([[1.0, 2.0]], dtype=np.float32), "floats", [1.0, 2.0]),
        ((1, True, np.int64(2)), "ints", [1, 1, 2]),
        (np.array([3, 4]), "ints", [3, 4]),
        (["a", b"b"], "strings", [b"a", b"b"]),
    ],
)
def test_make_argument_field_selection(value, field, expected):
    argument = utils.MakeArgument("k", value)
    assert argument.name == "k"
    fields = [f.name for f, _ in argument.ListFields()]
    assert fields == ["name", field]
    got = getattr(argument, field)
    assert (list(got) if field in ("floats", "ints", "strings") else got) == expected


def test_make_argument_empty_list_sets_only_the_name():
    argument = utils.MakeArgument("param", [])
    assert [f.name for f, _ in argument.ListFields()] == ["name"]


def test_make_argument_messages():
    netdef = caffe2_pb2.NetDef(name="step")
    assert utils.MakeArgument("n", netdef).s == netdef.SerializeToString()
    with eras.use("E6"):
        assert utils.MakeArgument("n", netdef).n == netdef
        assert list(utils.MakeArgument("ns", [netdef]).nets) == [netdef]
    option = caffe2_pb2.DeviceOption(device_type=1)
    assert list(utils.MakeArgument("d", [option]).strings) == [option.SerializeToString()]


def test_make_argument_map_object_is_read_once():
    assert list(utils.MakeArgument("m", map(int, ["1", "2"])).ints) == [1, 2]


@pytest.mark.parametrize(
    "value, message",
    [
        ([core.BlobReference("a")], "Unknown iterable argument type"),
        ([np.float32(1.0)], "Unknown iterable argument type"),
        ([1, "a"], "Unknown iterable argument type"),
        (None, "Unknown argument type"),
    ],
)
def test_make_argument_rejects(value, message):
    with pytest.raises(ValueError, match=message):
        utils.MakeArgument("bad", value)
