"""Every error class, raised through a real net: its built-in base, and a
message that names the net, the op (index, type, name) and the blob."""

import numpy as np
import pytest

from caffe2rnn import core, errors, workspace
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime.arguments import ArgumentHelper


def netdef(name, *ops):
    net = caffe2_pb2.NetDef(name=name)
    net.op.extend(ops)
    return net


def test_unknown_operator_type_suggests_close_matches():
    with pytest.raises(AttributeError, match=r"Did you mean.*\bFC\b"):
        core.Net("n").Fcc(["x"], ["y"])
    bad = core.CreateOperator("Fcc", ["x"], ["y"], name="mine")
    workspace.FeedBlob("x", np.zeros(2, np.float32))
    with pytest.raises(errors.UnknownOperatorError) as info:
        workspace.RunNetOnce(netdef("train", bad))
    assert isinstance(info.value, AttributeError)
    assert "net 'train', op #0 Fcc 'mine'" in str(info.value)
    assert "did you mean: FC" in str(info.value)


def test_missing_input_blob_and_nothing_half_written():
    ops = [
        core.CreateOperator("Relu", ["x"], ["y"]),
        core.CreateOperator("Sigmoid", ["missing"], ["z"], name="sig"),
    ]
    workspace.FeedBlob("x", np.zeros(2, np.float32))
    with pytest.raises(errors.BlobNotFoundError) as info:
        workspace.CreateNet(netdef("train", *ops))
    assert isinstance(info.value, KeyError)
    assert str(info.value) == (
        "net 'train', op #1 Sigmoid 'sig': Encountered a non-existing input blob: missing"
    )
    # op #0's output 'y' was created while binding, then dropped again
    assert workspace.Blobs() == ["x"]
    assert "train" not in workspace.Nets()


def test_wrong_shape_names_blob_and_expected_shape():
    net = core.Net("train")
    net.Add(["a", "b"], "c", name="adder")
    workspace.FeedBlob("a", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("b", np.zeros((3, 2), np.float32))
    with pytest.raises(errors.ShapeError) as info:
        workspace.RunNetOnce(net)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith("net 'train', op #0 Add 'adder': ")
    assert "'b'" in message and "broadcast=1" in message
    # the output blob was bound when the net was created, never written, and
    # dropped again when the run failed
    assert not workspace.HasBlob("c")


def test_wrong_dtype_names_blob():
    net = core.Net("train")
    net.Tanh("x", "y")
    workspace.FeedBlob("x", np.zeros(3, np.int32))
    with pytest.raises(errors.DTypeError) as info:
        workspace.RunNetOnce(net)
    assert isinstance(info.value, TypeError)
    assert "net 'train', op #0 Tanh: input 0 ('x')" in str(info.value)


def test_bad_argument_type_names_op_and_argument():
    net = core.Net("train")
    net.FC(["x", "w", "b"], "y", axis=2.0)
    for name, shape in [("x", (2, 3)), ("w", (4, 3)), ("b", (4,))]:
        workspace.FeedBlob(name, np.zeros(shape, np.float32))
    with pytest.raises(errors.ArgumentTypeError) as info:
        workspace.RunNetOnce(net)
    assert isinstance(info.value, TypeError)
    assert "net 'train', op #0 FC" in str(info.value)
    assert "argument 'axis' must be an integer" in str(info.value)


def test_malformed_serialized_proto():
    with pytest.raises(errors.ProtoParseError) as info:
        workspace.RunOperatorOnce(b"\x0a\xff\xff")
    assert isinstance(info.value, ValueError)
    assert "OperatorDef" in str(info.value)


def test_unknown_net_and_overwrite_refusal():
    with pytest.raises(errors.WorkspaceError, match="Can't find net nope"):
        workspace.RunNet("nope")
    net = core.Net("once")
    workspace.CreateNet(net)
    with pytest.raises(errors.WorkspaceError, match="refuse to overwrite"):
        workspace.CreateNet(net)


@pytest.mark.kernels  # runs once per kernel path (tests/conftest.py)
def test_errors_inside_a_step_net_carry_both_contexts():
    """A bad step net: the message says which outer op, which timestep, which
    step-net op and which blob."""
    from caffe2rnn.recurrent import recurrent_net

    outer, cell = core.Net("outer"), core.Net("mul_cell")
    x_t, h_prev = cell.AddScopedExternalInputs("x_t", "h_prev")
    h_t = cell.Mul([x_t, h_prev], "h_t")
    cell.AddExternalOutputs(h_t)
    recurrent_net(outer, cell, [(x_t, "x")], [(h_prev, "h0")], {h_prev: h_t}, forward_only=True)
    workspace.FeedBlob("x", np.ones((3, 2, 4), np.float32))
    workspace.FeedBlob("h0", np.ones((1, 2, 5), np.float32))  # D=5, input has 4
    with pytest.raises(errors.ShapeError) as info:
        workspace.RunNetOnce(outer)
    message = str(info.value)
    assert message.startswith("net 'outer', op #0 RecurrentNetwork")
    assert "op #" in message.split("RecurrentNetwork", 1)[1]
    assert "Mul" in message and "h_prev" in message


@pytest.mark.parametrize("executor", [0, 1])
def test_a_step_net_error_numbers_the_op_as_the_step_net_was_written(executor):
    """caffe2rnn puts one rnn_internal_apply_link op per link in front of a step net's
    own ops (docs/concepts/differences.md), so the failing FC is op #5 of the net
    that runs; the message numbers it as the step net was written: op #0."""
    from caffe2rnn import model_helper, rnn_cell

    model = model_helper.ModelHelper(name="lm")
    rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm")
    for op in model.net.Proto().op:
        if op.type == "RecurrentNetwork":
            arg = op.arg.add()
            arg.name, arg.i = "enable_rnn_executor", executor
            assert ArgumentHelper(op, "test").net("step_net").op[0].type == "FC"
    workspace.RunNetOnce(model.param_init_net)
    for name, shape in (("h0", (1, 2, 4)), ("c0", (1, 2, 4)), ("x", (5, 2, 3))):
        workspace.FeedBlob(name, np.zeros(shape, np.float32))
    workspace.FeedBlob("seq_lengths", np.full(2, 5, np.int32))
    workspace.FeedBlob("lstm/gates_t_w", np.zeros((16, 5), np.float32))  # K = 5, not 4
    with pytest.raises(errors.ShapeError) as info:
        workspace.RunNetOnce(model.net)
    assert "timestep 0: net 'lstm', op #0 FC: Dimension mismatch" in str(info.value)
