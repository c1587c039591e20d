"""caffe2rnn.utils beyond MakeArgument: debug/DebugMode, tensor protos, proto reading."""

import numpy as np
import pytest

from caffe2rnn import compat, core, errors, utils, workspace
from caffe2rnn.proto import caffe2_pb2

# -- debug / DebugMode -------------------------------------------------------------------


def test_debug_returns_the_result_and_passes_arguments():
    @utils.debug
    def add(a, b=1):
        """Adds."""
        return a + b

    assert add(2, b=3) == 5 and add.__name__ == "add" and add.__doc__ == "Adds."


def test_without_a_terminal_the_exception_is_re_raised_after_the_hint(capsys):
    @utils.debug
    def fails():
        raise errors.ShapeError("blob 'x' has shape (2,)")

    with pytest.raises(errors.ShapeError, match="blob 'x'"):
        fails()  # pytest's stdin is not a terminal
    out = capsys.readouterr().out
    assert "Entering interactive debugger" in out and "blob 'x' has shape (2,)" in out
    assert "not a terminal" in out


def test_with_a_terminal_it_opens_pdb_post_mortem_then_exits(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(utils, "_interactive", lambda: True)
    monkeypatch.setattr("pdb.post_mortem", lambda tb: seen.append(tb))

    def fails():
        raise ValueError("boom")

    with pytest.raises(SystemExit) as info:
        utils.DebugMode.run(fails)
    assert info.value.code == 1
    assert len(seen) == 1 and seen[0].tb_next.tb_frame.f_code.co_name == "fails"
    assert "boom" in capsys.readouterr().out


def test_keyboard_interrupt_is_not_debugged(capsys):
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        utils.DebugMode.run(interrupted)
    assert capsys.readouterr().out == ""


def test_debug_decorated_main_written_for_caffe2_runs_unchanged():
    program = """
import numpy as np
from caffe2.python import core, utils, workspace

@utils.debug
def Benchmark(scale):
    net = core.Net("bench")
    net.ConstantFill([], "x", shape=[2], value=1.0)
    net.Scale("x", "y", scale=scale)
    workspace.RunNetOnce(net)
    return workspace.FetchBlob("y")

result = Benchmark(4.0)
"""
    compat.install()
    try:
        ns = compat.py2_namespace()
        exec(compile(program, "<caffe2 program>", "exec"), ns)
    finally:
        compat.uninstall()
    np.testing.assert_array_equal(ns["result"], [4.0, 4.0])


# -- tensors as TensorProtos ---------------------------------------------------------------------

FIELDS = {
    np.float32: "float_data",
    np.float64: "double_data",
    np.int32: "int32_data",
    np.int64: "int64_data",
    np.bool_: "int32_data",
    np.uint8: "int32_data",
    np.int16: "int32_data",
}


@pytest.mark.parametrize("dtype", list(FIELDS))
def test_tensor_proto_round_trip_in_the_field_caffe2_used(dtype):
    arr = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    tensor = utils.NumpyArrayToCaffe2Tensor(arr, "t")
    assert tensor.name == "t" and list(tensor.dims) == [2, 3]
    assert list(getattr(tensor, FIELDS[dtype])) == arr.reshape(-1).tolist()
    back = utils.Caffe2TensorToNumpyArray(tensor)
    assert back.dtype == arr.dtype
    np.testing.assert_array_equal(back, arr)


def test_strings_float16_and_byte_tensors():
    strings = np.array(["ab", "c"])
    tensor = utils.NumpyArrayToCaffe2Tensor(strings)
    assert tensor.data_type == caffe2_pb2.TensorProto.STRING
    assert list(utils.Caffe2TensorToNumpyArray(tensor)) == [b"ab", b"c"]
    half = np.array([0.5, -2.0], np.float16)
    tensor = utils.NumpyArrayToCaffe2Tensor(half)
    assert list(tensor.int32_data) == half.view(np.uint16).tolist()
    np.testing.assert_array_equal(utils.Caffe2TensorToNumpyArray(tensor), half)
    raw = caffe2_pb2.TensorProto(data_type=caffe2_pb2.TensorProto.BYTE, dims=[3], byte_data=b"abc")
    np.testing.assert_array_equal(utils.Caffe2TensorToNumpyArray(raw), [97, 98, 99])


def test_bad_tensors_name_what_is_wrong():
    with pytest.raises(errors.DTypeError, match="complex128"):
        utils.NumpyArrayToCaffe2Tensor(np.zeros(2, np.complex128), "z")
    with pytest.raises(errors.DTypeError, match="only bytes or str"):
        utils.NumpyArrayToCaffe2Tensor(np.array([1, "a"], dtype=object))
    short = caffe2_pb2.TensorProto(name="s", dims=[2, 2], float_data=[1.0])
    with pytest.raises(errors.ShapeError, match="tensor 's' has 1 values.*need 4"):
        utils.Caffe2TensorToNumpyArray(short)
    with pytest.raises(errors.DTypeError, match="UNDEFINED"):
        utils.Caffe2TensorToNumpyArray(caffe2_pb2.TensorProto(name="u", data_type=0))


# -- reading protos ---------------------------------------------------------------------------


def test_try_read_proto_with_class_text_then_binary(tmp_path):
    net = caffe2_pb2.NetDef(name="n", external_input=["x"])
    assert utils.TryReadProtoWithClass(caffe2_pb2.NetDef, str(net)) == net
    assert utils.TryReadProtoWithClass(caffe2_pb2.NetDef, net.SerializeToString()) == net
    with pytest.raises(errors.ProtoParseError):
        utils.TryReadProtoWithClass(caffe2_pb2.NetDef, b"\xff\xfe")
    text, binary = tmp_path / "n.pbtxt", tmp_path / "n.pb"
    text.write_text(str(net))
    utils.ConvertProtoToBinary(caffe2_pb2.NetDef, str(text), str(binary))
    assert binary.read_bytes() == net.SerializeToString()


def test_get_content_from_proto_and_proto_string():
    functions = {caffe2_pb2.NetDef: lambda n: ("net", n.name), caffe2_pb2.PlanDef: lambda p: "plan"}
    assert utils.GetContentFromProto(caffe2_pb2.NetDef(name="a"), functions) == ("net", "a")
    assert utils.GetContentFromProto(caffe2_pb2.OperatorDef(), functions) is None
    text = 'name: "b"'
    assert utils.GetContentFromProtoString(text, functions) == ("net", "b")
    with pytest.raises(errors.ProtoParseError, match="Cannot find a fit"):
        utils.GetContentFromProtoString(b"\xff\xfe", functions)


def test_gpu_memory_stats_are_a_clear_error():
    with pytest.raises(errors.EnforceNotMet, match="no GPU support"):
        utils.GetGPUMemoryUsageStats()


@pytest.mark.skipif(not core.IsOperator("Free"), reason="the Free operator is not registered")
def test_reset_blobs_frees_their_content():
    workspace.FeedBlob("x", np.ones(3, np.float32))
    utils.ResetBlobs(["x"])
    assert workspace.HasBlob("x")
    fetched = workspace.FetchBlob("x")
    assert not (isinstance(fetched, np.ndarray) and fetched.size == 3)
