"""One error family: every failure is a caffe2rnn.errors class that also
subclasses the natural built-in, with the original exception chained."""

import numpy as np
import pytest
from google.protobuf.message import DecodeError

from caffe2rnn import core, errors, utils, workspace
from caffe2rnn.operators.activation import Relu
from caffe2rnn.proto import caffe2_pb2, parse, parse_text


def run_relu_raising(monkeypatch, exc):
    def run(self):
        raise exc

    monkeypatch.setattr(Relu, "run", run)
    workspace.FeedBlob("x", np.ones(2, np.float32))
    with pytest.raises(errors.Caffe2RNNError) as info:
        workspace.RunOperatorOnce(core.CreateOperator("Relu", ["x"], ["y"]))
    assert info.value.__cause__ is exc
    assert workspace.Blobs() == ["x"]
    return info.value


@pytest.mark.parametrize(
    "exc, family, builtin",
    [
        (MemoryError(), errors.AllocationError, MemoryError),
        (RecursionError("deep"), errors.NestingError, RecursionError),
        (IndexError("index 5 is out of bounds"), errors.OutOfRangeError, IndexError),
        (KeyError("k"), errors.KeyNotFoundError, KeyError),
        (
            ZeroDivisionError("division by zero"),
            errors.ArithmeticFailure,
            ZeroDivisionError.__base__,
        ),
        (ValueError("operands could not be broadcast"), errors.InvalidValueError, ValueError),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), errors.InvalidValueError, ValueError),
        (TypeError("unsupported operand"), errors.InvalidTypeError, TypeError),
        (
            AttributeError("'bytes' object has no attribute 'shape'"),
            errors.InvalidTypeError,
            TypeError,
        ),
        (PermissionError("denied"), errors.FileAccessError, OSError),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_a_builtin_error_inside_an_operator_keeps_its_type(monkeypatch, exc, family, builtin):
    error = run_relu_raising(monkeypatch, exc)
    assert type(error) is family
    assert isinstance(error, builtin) and isinstance(error, errors.EnforceNotMet)
    assert str(error).startswith("op Relu: ")
    assert "(%s)" % type(exc).__name__ in str(error)


def test_a_real_numpy_value_error_inside_a_net_is_an_invalid_value_error(monkeypatch):
    def run(self):
        np.reshape(np.zeros(3), (2, 2))

    monkeypatch.setattr(Relu, "run", run)
    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("n")
    net.Relu("x", "y")
    with pytest.raises(errors.InvalidValueError, match=r"net 'n', op #0 Relu: cannot reshape") as i:
        workspace.RunNetOnce(net)
    assert isinstance(i.value, ValueError) and isinstance(i.value.__cause__, ValueError)


def test_deep_text_proto_is_a_proto_nesting_error():
    text = "op { arg { n { " * 2000 + "} } }" * 2000
    with pytest.raises(errors.ProtoNestingError, match="nested deeper") as info:
        parse_text(caffe2_pb2.NetDef, text)
    assert isinstance(info.value, RecursionError) and isinstance(info.value, ValueError)
    assert isinstance(info.value.__cause__, RecursionError)


def test_bad_bytes_chain_the_decode_error():
    with pytest.raises(errors.ProtoParseError, match="5 bytes do not parse") as info:
        parse(caffe2_pb2.NetDef, b"\x12\x03\x0a\x02\xff")
    assert isinstance(info.value, ValueError) and isinstance(info.value.__cause__, DecodeError)


def test_non_utf8_text_and_string_fields_are_proto_parse_errors():
    with pytest.raises(errors.ProtoParseError, match="not UTF-8") as info:
        parse_text(caffe2_pb2.NetDef, b'name: "\xff"')
    assert isinstance(info.value.__cause__, UnicodeDecodeError)
    # Binary: proto2 parsers accept the bytes and hand back `bytes` for a str field.
    with pytest.raises(errors.ProtoParseError, match=r"string field op\[0\]\.input\[0\]"):
        parse(caffe2_pb2.NetDef, b"\x12\x04\x0a\x02\xff\xfe")
    with pytest.raises(errors.ProtoParseError, match="string field name is not UTF-8"):
        workspace.RunNetOnce(b"\x0a\x02\xff\xfe")


@pytest.mark.parametrize(
    "tensor, family, pattern",
    [
        (
            caffe2_pb2.TensorProto(
                dims=[2], data_type=caffe2_pb2.TensorProto.INT8, int32_data=[1, 1000]
            ),
            errors.InvalidValueError,
            "int32_data holds 1000, outside the range of int8",
        ),
        (
            caffe2_pb2.TensorProto(
                dims=[1], data_type=caffe2_pb2.TensorProto.FLOAT16, int32_data=[-1]
            ),
            errors.InvalidValueError,
            "outside the range of uint16",
        ),
        (
            caffe2_pb2.TensorProto(
                dims=[-2, -1], data_type=caffe2_pb2.TensorProto.FLOAT, float_data=[1, 2]
            ),
            errors.ShapeError,
            r"negative dims \[-2, -1\]",
        ),
        (
            caffe2_pb2.TensorProto(
                dims=[3], data_type=caffe2_pb2.TensorProto.FLOAT, float_data=[1, 2]
            ),
            errors.ShapeError,
            "has 2 values in float_data",
        ),
    ],
    ids=["int8-overflow", "float16-negative", "negative-dims", "count"],
)
def test_feed_blob_of_a_bad_tensor_proto_is_a_family_error(tensor, family, pattern):
    with pytest.raises(family, match=pattern) as info:
        workspace.FeedBlob("t", tensor)
    assert isinstance(info.value, ValueError)
    assert not workspace.HasBlob("t")


def test_tensor_protos_still_round_trip():
    for array in [np.arange(3, dtype=np.int8), np.array([1.5], np.float16), np.array([True])]:
        back = utils.Caffe2TensorToNumpyArray(utils.NumpyArrayToCaffe2Tensor(array))
        assert back.dtype == array.dtype
        np.testing.assert_array_equal(back, array)
