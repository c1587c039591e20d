"""Protobuf text format: str(msg) byte-exact (spec §1.8) and parse_text (§1.9)."""

import math

import pytest

from caffe2rnn import core
from caffe2rnn.errors import ProtoParseError
from caffe2rnn.proto import caffe2_pb2, parse_text

LSTM_CELL_TEXT = (
    'name: "lstm_cell"\n'
    "op {\n"
    '  input: "a"\n'
    '  input: "b"\n'
    '  output: "a"\n'
    '  name: ""\n'
    '  type: "Sum"\n'
    "}\n"
    'type: "rnn"\n'
    'external_input: "a"\n'
    'external_input: "b"\n'
    'external_output: "a"\n'
)

STEP_NET_ARG_TEXT = (
    "arg {\n"
    '  name: "step_net"\n'
    '  s: "name: \\"lstm_cell\\"\\nop {\\n  input: \\"a\\"\\n  input: \\"b\\"\\n'
    '  output: \\"a\\"\\n  name: \\"\\"\\n  type: \\"Sum\\"\\n}\\ntype: \\"rnn\\"\\n'
    'external_input: \\"a\\"\\nexternal_input: \\"b\\"\\nexternal_output: \\"a\\"\\n"\n'
    "}\n"
)


def lstm_cell_net():
    net = core.Net("lstm_cell")
    a = net.Sum(["a", "b"], "a")
    net.AddExternalOutput(a)
    net.Proto().type = "rnn"
    return net


def test_lstm_cell_net_prints_exactly():
    assert str(lstm_cell_net().Proto()) == LSTM_CELL_TEXT


def test_step_net_argument_escapes_exactly():
    op = core.CreateOperator("RecurrentNetwork", [], [], step_net=str(lstm_cell_net().Proto()))
    assert str(op) == 'name: ""\ntype: "RecurrentNetwork"\n' + STEP_NET_ARG_TEXT


def test_empty_list_argument_prints_only_its_name():
    op = core.CreateOperator("RecurrentNetwork", [], [], param=[])
    assert str(op).endswith('arg {\n  name: "param"\n}\n')


def test_gradient_op_prints_is_gradient_op_last():
    op = core.CreateOperator(
        "FCGradient",
        ["hidden_t_prev", "lstm/gates_t_w", "lstm/gates_t_grad"],
        ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad", "_hidden_t_prev_grad_autosplit_0"],
        axis=2,
    )
    op.is_gradient_op = True
    assert str(op) == (
        'input: "hidden_t_prev"\ninput: "lstm/gates_t_w"\n'
        'input: "lstm/gates_t_grad"\noutput: "lstm/gates_t_w_grad"\n'
        'output: "lstm/gates_t_b_grad"\noutput: "_hidden_t_prev_grad_autosplit_0"\n'
        'name: ""\ntype: "FCGradient"\narg {\n  name: "axis"\n  i: 2\n}\n'
        "is_gradient_op: true\n"
    )


def test_scalars_escapes_and_empty_messages():
    argument = caffe2_pb2.Argument(
        name="v", f=1.0, floats=[0.0, 2.5, 0.1, 1e-08], ints=[-3], s="tab\t\"q'\\é".encode()
    )
    assert str(argument) == (
        'name: "v"\nf: 1.0\ns: "tab\\t\\"q\\\'\\\\\\303\\251"\n'
        "floats: 0.0\nfloats: 2.5\nfloats: 0.1\nfloats: 1e-08\nints: -3\n"
    )
    op = caffe2_pb2.OperatorDef()
    op.device_option.CopyFrom(caffe2_pb2.DeviceOption())
    assert str(op) == "device_option {\n}\n"
    assert str(caffe2_pb2.NetDef()) == ""
    assert (
        str(caffe2_pb2.TensorProto(data_type=caffe2_pb2.TensorProto.INT32)) == "data_type: INT32\n"
    )


def test_printed_text_parses_back():
    proto = lstm_cell_net().Proto()
    assert parse_text(caffe2_pb2.NetDef, str(proto)) == proto
    op = core.CreateOperator("RecurrentNetwork", [], [], step_net=str(proto))
    step_net = parse_text(caffe2_pb2.OperatorDef, str(op)).arg[0].s.decode()
    assert parse_text(caffe2_pb2.NetDef, step_net) == proto


def test_text_parsing_accepts_the_general_syntax():
    text = """
        # a comment line
        name: "ab" 'c'  "\\x41\\101"      # adjacent strings, hex and octal escapes
        op <                               # angle brackets as braces
          type: "Sum" input: "x"
          arg: { name: "f" f: 1.5f }       # colon before a brace, float suffix
          arg { name: "i" i: 0x1F }
          arg { name: "e" f: 2e-3 }
          arg { name: "inf" f: -inf floats: nan }
          is_gradient_op: t
          device_option { device_type: 1 cuda_gpu_id: 0 }
        >
        num_workers: 4
    """
    proto = parse_text(caffe2_pb2.NetDef, text)
    assert proto.name == "abcAA"
    op = proto.op[0]
    assert (op.type, list(op.input), op.is_gradient_op) == ("Sum", ["x"], True)
    assert [a.name for a in op.arg] == ["f", "i", "e", "inf"]
    assert op.arg[0].f == 1.5 and op.arg[1].i == 31
    assert op.arg[2].f == pytest.approx(2e-3)
    assert op.arg[3].f == -math.inf and math.isnan(op.arg[3].floats[0])
    assert op.device_option.device_type == 1 and proto.num_workers == 4


def test_text_parsing_enums_and_bools():
    tensor = parse_text(caffe2_pb2.TensorProto, "data_type: DOUBLE dims: 2 dims: 3")
    assert tensor.data_type == caffe2_pb2.TensorProto.DOUBLE
    assert (
        parse_text(caffe2_pb2.TensorProto, "data_type: 10").data_type
        == caffe2_pb2.TensorProto.INT64
    )
    for spelling, value in [("true", True), ("f", False), ("1", True), ("0", False)]:
        op = parse_text(caffe2_pb2.OperatorDef, "is_gradient_op: " + spelling)
        assert op.is_gradient_op is value
    assert parse_text(caffe2_pb2.NetDef, b'name: "bytes ok"').name == "bytes ok"


@pytest.mark.parametrize(
    "text, where",
    [
        ('nme: "x"', "nme"),  # unknown field names are errors
        ('name: "unterminated', "1:"),
        ('op { type: "Sum" ', "1:"),
        ("external_input: 3", "external_input"),
    ],
)
def test_text_parsing_errors_name_the_message_and_the_problem(text, where):
    with pytest.raises(ProtoParseError) as info:
        parse_text(caffe2_pb2.NetDef, text)
    assert "caffe2.NetDef" in str(info.value) and where in str(info.value)


def test_parse_text_rejects_non_text():
    with pytest.raises(ProtoParseError, match="expected text"):
        parse_text(caffe2_pb2.NetDef, 42)
    with pytest.raises(ProtoParseError, match="not UTF-8"):
        parse_text(caffe2_pb2.NetDef, b'name: "\xff"')
