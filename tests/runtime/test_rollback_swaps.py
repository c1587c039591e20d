"""RunNet's journal hands an output written whole (FC's) a spare array instead
of copying its old contents (caffe2rnn.runtime.rollback): the results are
those of the op-by-op loop, a failed run still leaves the workspace exactly as
it was, and an array a Python caller holds, or another blob shows, is never
swapped out."""

import numpy as np
import pytest

from caffe2rnn import core, errors, recurrent, workspace
from caffe2rnn.cnn import CNNModelHelper
from caffe2rnn.runtime import rollback

# The input projection is T x N x 4H float32 = 384 KB: past the size below
# which the journal copies without looking (rollback.SHARED_BYTES, and
# rollback.SWAP_BYTES_PER_BLOB for each of the workspace's few dozen blobs).
T, N, D, H = 48, 8, 16, 64


def fc_net(name, ops=()):
    """FC(x, w, b) -> y (6 x 4096 float32, 96 KB), then ``ops``."""
    net = core.Net(name)
    net.FC(["x", "w", "b"], "y")
    for op_type, inputs, outputs, kwargs in ops:
        getattr(net, op_type)(inputs, outputs, **kwargs)
    return net


def feed_fc(rng, scale=1.0):
    workspace.FeedBlob("x", (scale * rng.standard_normal((6, 32))).astype(np.float32))
    workspace.FeedBlob("w", rng.standard_normal((4096, 32)).astype(np.float32))
    workspace.FeedBlob("b", rng.standard_normal(4096).astype(np.float32))


def blob(name):
    return workspace.C_Workspace().get_blob(name)


def test_swappable_outputs_are_those_of_the_leading_whole_writers_read_by_none_of_them():
    workspace.FeedBlob("x", np.ones((2, 3), np.float32))
    workspace.FeedBlob("w", np.ones((3, 3), np.float32))
    workspace.FeedBlob("b", np.ones(3, np.float32))
    workspace.FeedBlob("late", np.ones((2, 3), np.float32))
    net = core.Net("leading")
    net.FC(["x", "w", "b"], "y")  # written whole first: swappable
    net.FC(["y", "w", "b"], "z")  # reads y after the FC above wrote it: z too
    net.FC(["late", "w", "b"], "u")  # reads "late" before ...
    net.FC(["x", "w", "b"], "late")  # ... this writes it: not swappable
    net.Relu("x", "r")  # declares nothing: the search stops here
    net.FC(["x", "w", "b"], "after")
    workspace.CreateNet(net)
    created = workspace.C_Workspace().get_net("leading")
    assert [b.name for b in rollback.swappable(created.ops)] == ["y", "z", "u"]


def test_run_net_alternates_two_arrays_and_a_failed_run_gives_the_blob_its_own_back():
    rng = np.random.default_rng(0)
    feed_fc(rng)
    workspace.CreateNet(fc_net("fc"))
    workspace.RunNet("fc")  # y is created by this run: nothing to swap
    first = blob("y").value
    workspace.RunNet("fc")
    second = blob("y").value
    workspace.RunNet("fc")
    assert second is not first and blob("y").value is first  # two arrays, in turn
    workspace.RunNet("fc", 0)  # no run: no swap
    assert blob("y").value is first

    y, fetched = blob("y").value, workspace.FetchBlob("y")  # FetchBlob: a copy
    failing = fc_net("fc_fails", [("Add", ["y", "y"], "z", dict(broadcast=1, axis=7))])
    workspace.CreateNet(failing)
    feed_fc(rng, scale=3.0)  # this FC writes other numbers than y holds
    x = blob("x").value
    for _ in range(2):
        with pytest.raises(errors.EnforceNotMet):
            workspace.RunNet("fc_fails")
        assert blob("y").value is y  # its own array, untouched
        np.testing.assert_array_equal(y, fetched)
        np.testing.assert_array_equal(workspace.FetchBlob("y"), fetched)
        assert blob("z").value is None  # created with the net, still empty
        # the failed run wrote FC's new output into the spare it was handed
        spares = workspace.C_Workspace().get_net("fc_fails").journal_spares
        spare = spares[(rollback.SWAP, id(blob("y")))]
        assert spare is not y
        w, b = blob("w").value, blob("b").value
        np.testing.assert_array_equal(spare, np.add(np.matmul(x, w.T), b))


def test_an_array_a_caller_holds_or_another_blob_shows_is_not_swapped():
    rng = np.random.default_rng(1)
    feed_fc(rng)
    workspace.CreateNet(fc_net("fc"))
    workspace.RunNet("fc")
    data = workspace.C.Workspace.current.blobs["y"].tensor().data  # the blob's own array
    for scale in (2.0, 3.0):
        feed_fc(rng, scale)
        workspace.RunNet("fc")
        assert blob("y").value is data
        np.testing.assert_array_equal(data, workspace.FetchBlob("y"))

    workspace.ResetWorkspace()
    feed_fc(rng)
    workspace.CreateNet(fc_net("fc_aliased"))
    workspace.RunNet("fc_aliased")
    workspace.RunOperatorOnce(core.CreateOperator("Alias", ["y"], ["shown"]))
    y = blob("y").value
    feed_fc(rng, 2.0)
    workspace.RunNet("fc_aliased")
    assert blob("y").value is y and blob("shown").value is y


def lstm(name, executor):
    """An LSTM layer (FC input projection, then RecurrentNetwork) with its
    gradient, the recurrent ops' executor on or off."""
    model = CNNModelHelper(name=name)
    seq = model.net.AddExternalInput("seq_lengths")
    outputs = recurrent.LSTM(model, "x", seq, ("h0", "c0"), D, H, scope="lstm")
    model.net.AddExternalInput("dy")
    model.AddGradientOperators({outputs[0]: "dy"})
    workspace.RunNetOnce(model.param_init_net)
    netdef = model.net.Proto()
    for op in netdef.op:
        if op.type.startswith("RecurrentNetwork"):
            arg = next((a for a in op.arg if a.name == "enable_rnn_executor"), None)
            arg = arg or op.arg.add(name="enable_rnn_executor")
            arg.i = int(executor)
    workspace.CreateNet(netdef)
    return netdef.name, str(outputs[0])


RESULTS = ("x_grad", "h0_grad", "c0_grad", "lstm/i2h_w_grad", "lstm/gates_t_w_grad")


def test_an_lstm_run_net_with_its_input_projection_swapped_is_bit_identical(kernel_path):
    rng = np.random.default_rng(2)
    for name, shape in (("x", (T, N, D)), ("h0", (1, N, H)), ("c0", (1, N, H))):
        workspace.FeedBlob(name, rng.standard_normal(shape).astype(np.float32))
    workspace.FeedBlob("dy", rng.standard_normal((T, N, H)).astype(np.float32))
    workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
    off, hidden = lstm("op_by_op", executor=False)
    on, _ = lstm("executor", executor=True)  # the same parameter blobs
    workspace.RunNet(off)
    expected = {n: workspace.FetchBlob(n) for n in RESULTS + (hidden,)}
    i2h = blob("lstm/i2h")
    arrays = set()
    for _ in range(5):
        workspace.RunNet(on)
        arrays.add(id(i2h.value))
        for n, value in expected.items():
            np.testing.assert_array_equal(workspace.FetchBlob(n), value, err_msg=n)
        # every step workspace's link view of the input is a view of today's
        # array, as the op-by-op loop leaves them
        steps = blob("lstm/step_workspaces").value.step_workspaces
        assert all(np.shares_memory(s.get_blob("input_t").value, i2h.value) for s in steps)
    assert len(arrays) == 2  # swapped: two arrays in turn
    ops = [op for op in workspace.C_Workspace().get_net(on).ops if hasattr(op, "executor")]
    # a plan per array, kept: the second derived from the first (its views
    # into the old array moved to the spare), not built op by op again
    assert [op.executor.builds for op in ops] == [1, 1]
    assert [op.executor.derivations for op in ops] == [1, 1]
    plans = [(op.executor.plan, op.executor.other_plans[kernel_path]) for op in ops]
    for plan, other in plans:
        assert len(plan.calls) == len(other.calls) and plan.steady is other.steady
        moved = [a is not b for a, b in zip(plan.guard_arrays, other.guard_arrays)]
        assert sum(moved) == 1  # only the swapped input's guard

    # A failure after the swap (the recurrent op refuses the initial state,
    # after FC wrote the spare): the workspace as it was; then the same again.
    before = {n: (blob(n).value, workspace.FetchBlob(n)) for n in workspace.Blobs()}
    good_h0 = blob("h0").value
    workspace.FeedBlob("h0", np.zeros((1, N + 1, H), np.float32))
    h0 = blob("h0").value
    with pytest.raises(errors.ShapeError):
        workspace.RunNet(on)
    for n, (value, contents) in before.items():
        if n != "h0":
            assert blob(n).value is value, n
            np.testing.assert_array_equal(workspace.FetchBlob(n), contents, err_msg=n)
    assert blob("h0").value is h0
    workspace.FeedBlob("h0", good_h0)
    for _ in range(2):
        workspace.RunNet(on)
        for n, value in expected.items():
            np.testing.assert_array_equal(workspace.FetchBlob(n), value, err_msg=n)
