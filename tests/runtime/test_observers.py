"""Net observers (Caffe2 042e8ede4): TimeObserver and RunCountObserver through
``Net.AddObserver``, and the step-net operators a RecurrentNetwork runs with its
executor counted by the recurrent op's observers."""

import numpy as np
import pytest

from caffe2rnn import core, model_helper, rnn_cell, workspace
from caffe2rnn.errors import ArgumentError, EnforceNotMet, WorkspaceError


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def three_op_net():
    net = core.Net("obs")
    net.ConstantFill([], "x", shape=[2], value=1.0)
    net.Relu("x", "y")
    net.Scale("y", "z", scale=2.0)
    workspace.CreateNet(net)
    return net


def run_count(observer):
    return int("".join(c for c in observer.debug_info() if c.isdigit()))


def test_run_count_counts_every_op_of_every_run():
    net = three_op_net()
    ob = net.AddObserver("RunCountObserver")
    assert ob.debug_info() == "This operator runs 0 times."
    for _ in range(3):
        workspace.RunNet(net)
    assert run_count(ob) == 9
    with pytest.raises(EnforceNotMet, match="Observer does not implement this function"):
        ob.average_time()


def test_time_observer_times_runs_and_ops():
    net = three_op_net()
    ob = net.AddObserver("TimeObserver")
    assert np.isnan(ob.average_time())  # 0 / 0 before a run
    workspace.RunNet(net)
    workspace.RunNet(net)
    assert ob.average_time() > 0
    assert 0 < ob.average_time_children() <= ob.average_time()


def test_add_remove_and_count():
    net = three_op_net()
    a = net.AddObserver("TimeObserver")
    b = net.AddObserver("RunCountObserver")
    assert net.NumObservers() == 2
    net.RemoveObserver(a)
    assert net.NumObservers() == 1
    workspace.RunNet(net)
    assert run_count(b) == 3
    with pytest.raises(ArgumentError, match="unknown observer type 'Nope'"):
        net.AddObserver("Nope")
    with pytest.raises(WorkspaceError, match="Can't find net never_created"):
        core.Net("never_created").AddObserver("TimeObserver")


def lstm_net(seq_len, executor):
    """Caffe2's observer_test model: one LSTM layer, forward only, T steps."""
    batch, dim = 2, 3
    model = model_helper.ModelHelper(name="lstm_%d_%d" % (seq_len, executor))
    model.net.AddExternalInputs(["input"])
    hidden_init, cell_init = model.net.AddExternalInputs("hidden_init", "cell_init")
    rnn_cell.LSTM(
        model=model,
        input_blob="input",
        seq_lengths="seq_lengths",
        initial_states=[hidden_init, cell_init],
        dim_in=dim,
        dim_out=[dim],
        scope="",
        forward_only=True,
        return_last_layer_only=True,
    )
    for op in model.net.Proto().op:
        if op.type == "RecurrentNetwork":
            op.arg.add(name="enable_rnn_executor", i=executor)
    workspace.FeedBlob("seq_lengths", np.full(batch, seq_len, np.int32))
    workspace.FeedBlob("hidden_init", np.zeros((1, batch, dim), np.float32))
    workspace.FeedBlob("cell_init", np.zeros((1, batch, dim), np.float32))
    workspace.FeedBlob("input", np.random.rand(seq_len, batch, dim).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net, overwrite=True)
    return model.net


@pytest.mark.parametrize("executor", [1, 0])
def test_step_ops_count_with_the_executor_only(executor):
    counts = []
    for seq_len in (2, 3, 4):
        net = lstm_net(seq_len, executor)
        ob = net.AddObserver("RunCountObserver")
        workspace.RunNet(net)
        counts.append(run_count(ob))
    step = counts[1] - counts[0]
    assert counts[2] - counts[1] == step
    if executor:
        assert step > 0  # each timestep runs the step net's ops
    else:
        assert step == 0  # Caffe2 handed observers to step ops only in its executor
    # every op of the net once, and the (link-edited) step net's ops once per timestep
    assert counts[0] == len(net.Proto().op) + 2 * step
