"""An error inside a step net numbers the step net's ops as they were written.

A recurrent op runs its step net with ops of its own in front (one
``rnn_internal_apply_link`` per link; in the backward step net also the
gradient-accumulation ops, see docs/concepts/differences.md, "Links are
applied by ops"); messages leave those out of the count, in every era, with
link ops (today's operators and their era variants) and without them (the
scratch era's operators, which apply links in their loop). An error raised by
a link op itself names the link and says it comes before op #0.
"""

import numpy as np
import pytest

from caffe2rnn import core, eras, errors, history, workspace
from caffe2rnn.recurrent import recurrent_net
from caffe2rnn.runtime.arguments import ArgumentHelper

T, N, D = 3, 2, 4

#: eras whose RecurrentNetwork puts link ops in front of the step net
LINK_OP_ERAS = sorted(e.name for e in eras.ERAS.values() if not e.scratch_recurrent_network)


def mul_cell():
    """``h_t = input_t * h_prev``; written with one op, ``op #0 Mul``."""
    cell = core.Net("mul_step")
    x_t, h_prev = cell.AddExternalInputs("input_t", "h_prev")
    h_t = cell.Mul([x_t, h_prev], "h_t")
    cell.AddExternalOutputs(h_t)
    return cell, x_t, h_prev, h_t


def failing_op(netdef, position):
    """Insert ``Add(bad_a, bad_b)`` (shapes (2,) and (3,)) at ``position``."""
    op = core.CreateOperator("Add", ["bad_a", "bad_b"], ["bad_sum"])
    ops = list(netdef.op)
    ops.insert(position, op)
    del netdef.op[:]
    netdef.op.extend(ops)
    if netdef.external_input:
        netdef.external_input.extend(["bad_a", "bad_b"])


def edit_net_argument(op, name, edit):
    """Apply ``edit`` to the NetDef in argument ``name`` of ``op`` (text or NetDef)."""
    for arg in op.arg:
        if arg.name == name:
            netdef = ArgumentHelper(op, "test").net(name)
            edit(netdef)
            if arg.HasField("n"):
                arg.n.CopyFrom(netdef)
            else:
                arg.s = str(netdef).encode()
            return
    raise AssertionError("no argument %s" % name)


def recurrent_op(net):
    (op,) = [o for o in net.Proto().op if o.type == "RecurrentNetwork"]
    return op


def feed(x_width=D):
    workspace.ResetWorkspace()
    workspace.FeedBlob("input", np.ones((T, N, x_width), np.float32))
    workspace.FeedBlob("h0", np.ones((1, N, D), np.float32))
    workspace.FeedBlob("bad_a", np.ones(2, np.float32))
    workspace.FeedBlob("bad_b", np.ones(3, np.float32))


def build(era, function=None):
    """The Mul RNN with a gradient, built in ``era`` (``function``: a scratch
    era's ``recurrent_net``, which takes sizes)."""
    core.Net.reset_names()
    net = core.Net("outer")
    cell, x_t, h_prev, h_t = mul_cell()
    with eras.use(era):
        if function is None:
            outputs = recurrent_net(net, cell, [(x_t, "input")], [(h_prev, "h0")], {h_prev: h_t})
        else:
            outputs = function(net, cell, [(x_t, "input")], [(h_prev, "h0", D)], {h_prev: h_t}, [])
    return net, outputs[0]


def run_with_gradient(net, output, era):
    with eras.use(era):
        loss = net.SumElements([output], "loss")
        net.AddGradientOperators([loss])
    with pytest.raises(errors.Caffe2RNNError) as info:
        workspace.RunNetOnce(net)
    return str(info.value)


def assert_numbered(message, where):
    assert where in message, message
    assert "link ops" not in message and "without the" not in message


def forward_case(era, function=None):
    net, output = build(era, function)
    edit_net_argument(recurrent_op(net), "step_net", lambda n: failing_op(n, 1))
    feed()
    return run_with_gradient(net, output, era)


def backward_case(era, function=None):
    """The message, and the backward step net's name (it differs by era)."""
    net, output = build(era, function)
    op = recurrent_op(net)
    edit_net_argument(op, "backward_step_net", lambda n: failing_op(n, 1))
    name = ArgumentHelper(op, "test").net("backward_step_net").name
    feed()
    return run_with_gradient(net, output, era), name


@pytest.mark.parametrize("era", LINK_OP_ERAS)
def test_forward_step_net_ops_are_numbered_as_written(era):
    message = forward_case(era)
    assert_numbered(message, "timestep 0: net 'mul_step', op #1 Add: ")


@pytest.mark.parametrize("era", LINK_OP_ERAS)
def test_backward_step_net_ops_are_numbered_as_written(era):
    message, name = backward_case(era)
    assert "RecurrentNetworkGradient: timestep %d: " % (T - 1) in message
    assert_numbered(message, "net '%s', op #1 Add: " % name)


@pytest.mark.parametrize("version", sorted(history.SCRATCH_VERSIONS))
def test_without_link_ops_the_numbering_is_the_same(version):
    era = eras.get(version)
    assert era.scratch_recurrent_network  # these operators apply links in their loop
    function = history.SCRATCH_VERSIONS[version]
    assert_numbered(forward_case(era, function), "net 'mul_step', op #1 Add: ")
    message, name = backward_case(era, function)
    assert_numbered(message, "RecurrentNetworkGradient: net '%s', op #1 Add: " % name)


@pytest.mark.parametrize("executor", [0, 1])
def test_a_link_error_names_the_link_before_op_0(executor):
    net, _ = build(eras.DEFAULT)
    op = recurrent_op(net)
    internal = [a for a in op.arg if a.name == "link_internal"][0].strings
    (offsets,) = [a for a in op.arg if a.name == "link_offset"]
    offsets.ints[list(internal).index(b"input_t")] = 1  # input_t: row t + 1 of T rows
    arg = op.arg.add()
    arg.name, arg.i = "enable_rnn_executor", executor
    feed()
    with pytest.raises(errors.ShapeError) as info:
        workspace.RunNetOnce(net)
    assert (
        "RecurrentNetwork: timestep %d: net 'mul_step', before op #0: "
        "link 'input_t' -> 'input' (offset 1, window 1): rows [%d, %d) (timestep %d + "
        "offset 1, window 1) are outside the %d rows" % (T - 1, T, T + 1, T - 1, T)
    ) in str(info.value)
