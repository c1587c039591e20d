"""Binary wire format of caffe2.proto (spec §1.7), byte for byte, and parse()."""

import pytest

from caffe2rnn import workspace
from caffe2rnn.errors import ProtoParseError
from caffe2rnn.proto import caffe2_pb2, parse


def tag(field, wire_type):
    return bytes([(field << 3) | wire_type])


def length_delimited(field, payload):
    assert len(payload) < 128  # one-byte length varints in this test
    return tag(field, 2) + bytes([len(payload)]) + payload


VARINT, I64, LEN, I32 = 0, 1, 2, 5

# Argument {name "x", f 0.5, i 3, s "hi", floats [1.0, -2.0], ints [-1, 7],
#           strings ["p", "q"]}: repeated floats/ints are NOT packed.
ARGUMENT_BYTES = (
    length_delimited(1, b"x")
    + tag(2, I32)
    + bytes.fromhex("0000003f")  # 0.5f little-endian
    + tag(3, VARINT)
    + b"\x03"
    + length_delimited(4, b"hi")
    + tag(5, I32)
    + bytes.fromhex("0000803f")  # 1.0f
    + tag(5, I32)
    + bytes.fromhex("000000c0")  # -2.0f
    + tag(6, VARINT)
    + b"\xff" * 9
    + b"\x01"  # -1: 10-byte varint
    + tag(6, VARINT)
    + b"\x07"
    + length_delimited(7, b"p")
    + length_delimited(7, b"q")
)
# DeviceOption {device_type 0, cuda_gpu_id 0, random_seed 7}
DEVICE_OPTION_BYTES = tag(1, VARINT) + b"\x00" + tag(2, VARINT) + b"\x00" + tag(3, VARINT) + b"\x07"
FIRST_OP_BYTES = (
    length_delimited(1, b"a")
    + length_delimited(1, b"b")  # input
    + length_delimited(2, b"c")  # output
    + length_delimited(3, b"")  # name "" (present)
    + length_delimited(4, b"Sum")  # type
    + length_delimited(5, ARGUMENT_BYTES)  # arg
    + length_delimited(6, DEVICE_OPTION_BYTES)  # device_option
)
SECOND_OP_BYTES = (
    length_delimited(1, b"c")
    + length_delimited(2, b"d")
    + length_delimited(3, b"relu")
    + length_delimited(4, b"Relu")
    + tag(9, VARINT)
    + b"\x01"  # is_gradient_op
)
NETDEF_BYTES = (
    length_delimited(1, b"net")
    + length_delimited(2, FIRST_OP_BYTES)
    + length_delimited(2, SECOND_OP_BYTES)
    + length_delimited(3, b"rnn")
    + length_delimited(7, b"a")
    + length_delimited(7, b"b")  # external_input
    + length_delimited(8, b"d")  # external_output
)


def golden_netdef():
    net = caffe2_pb2.NetDef(
        name="net", type="rnn", external_input=["a", "b"], external_output=["d"]
    )
    first = net.op.add(input=["a", "b"], output=["c"], name="", type="Sum")
    first.arg.add(
        name="x", f=0.5, i=3, s=b"hi", floats=[1.0, -2.0], ints=[-1, 7], strings=[b"p", b"q"]
    )
    first.device_option.device_type = 0
    first.device_option.cuda_gpu_id = 0
    first.device_option.random_seed = 7
    net.op.add(input=["c"], output=["d"], name="relu", type="Relu", is_gradient_op=True)
    return net


def test_netdef_serializes_to_hand_written_bytes():
    assert golden_netdef().SerializeToString() == NETDEF_BYTES


def test_hand_written_bytes_parse_back_equal():
    parsed = parse(caffe2_pb2.NetDef, NETDEF_BYTES)
    assert parsed == golden_netdef()
    assert list(parsed.op[0].arg[0].ints) == [-1, 7]
    assert parsed.op[0].HasField("name") and parsed.op[0].name == ""
    assert not parsed.op[1].HasField("device_option")


def test_argument_bytes_literally():
    """The same Argument spelled out byte by byte (tags 0x0a 0x15 0x18 ...)."""
    literal = bytes.fromhex(
        "0a0178150000003f1803220268692d0000803f2d000000c030ffffffffffffffffff0130073a01703a0171"
    )
    assert literal == ARGUMENT_BYTES
    argument = caffe2_pb2.Argument(
        name="x", f=0.5, i=3, s=b"hi", floats=[1.0, -2.0], ints=[-1, 7], strings=[b"p", b"q"]
    )
    assert argument.SerializeToString() == literal


def test_device_option_example_bytes():
    option = caffe2_pb2.DeviceOption(device_type=0, cuda_gpu_id=0)
    assert option.SerializeToString() == bytes.fromhex("08001000")


def test_parser_accepts_packed_ints_and_any_field_order():
    packed_ints = tag(6, LEN) + bytes([2, 0x05, 0x06])
    data = (
        tag(3, VARINT)
        + b"\x01"
        + packed_ints
        + length_delimited(1, b"k")
        + tag(3, VARINT)
        + b"\x02"
    )  # last singular wins
    argument = parse(caffe2_pb2.Argument, data)
    assert argument.name == "k" and argument.i == 2
    assert list(argument.ints) == [5, 6]


def test_presence_makes_equality_differ():
    assert caffe2_pb2.OperatorDef() != caffe2_pb2.OperatorDef(name="")
    assert caffe2_pb2.OperatorDef().SerializeToString() == b""
    assert caffe2_pb2.OperatorDef(name="").SerializeToString() == b"\x1a\x00"


@pytest.mark.parametrize("data", [b"\xff\xff", b"\x0a\x05ab", b"\x0b"])
def test_malformed_bytes_raise_proto_parse_error(data):
    with pytest.raises(ProtoParseError, match="caffe2.NetDef"):
        parse(caffe2_pb2.NetDef, data)


def test_parse_rejects_text_instead_of_bytes():
    with pytest.raises(ProtoParseError, match="expected serialized bytes"):
        parse(caffe2_pb2.OperatorDef, 'type: "Relu"')


def test_run_operator_once_on_malformed_bytes():
    with pytest.raises(ProtoParseError, match="caffe2.OperatorDef"):
        workspace.RunOperatorOnce(b"\x0a\x09abc")
    assert isinstance(ProtoParseError("x"), ValueError)
