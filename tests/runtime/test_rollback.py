"""A failed RunOperatorOnce / RunNetOnce / RunNet leaves the workspace exactly
as it was: the same blob names, each holding the same object with the same
contents (see caffe2rnn.runtime.rollback)."""

import numpy as np
import pytest

from caffe2rnn import core, errors, workspace
from caffe2rnn.runtime import Workspace, settings
from caffe2rnn.runtime.net import create_operator


def state():
    """name -> (the value object, a copy of its contents)."""
    ws = workspace.C_Workspace()
    return {n: (ws.get_blob(n).value, np.copy(ws.get_blob(n).value)) for n in workspace.Blobs()}


def assert_unchanged(before):
    ws = workspace.C_Workspace()
    assert workspace.Blobs() == sorted(before)
    for name, (value, contents) in before.items():
        assert ws.get_blob(name).value is value, name
        np.testing.assert_array_equal(value, contents)


def test_failed_operator_creates_no_blob_and_keeps_the_output_it_would_replace():
    workspace.FeedBlob("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    before = state()
    for op in [
        core.CreateOperator("GivenTensorFill", [], ["w"], shape=[2, 3], values=[1.0] * 5),
        core.CreateOperator("XavierFill", [], ["w"], shape=[]),
        core.CreateOperator("MSRAFill", [], ["w"], shape=[6]),
        core.CreateOperator("Relu", ["missing"], ["new"]),
        core.CreateOperator("Add", ["w", "w"], ["new"], broadcast=1, axis=7),
    ]:
        with pytest.raises(errors.EnforceNotMet):
            workspace.RunOperatorOnce(op)
        assert_unchanged(before)


def test_failed_net_undoes_in_place_writes_of_the_ops_before_the_failing_one():
    workspace.FeedBlob("x", np.ones(3, np.float32))
    workspace.FeedBlob("y", np.zeros(2, np.float32))
    before = state()
    net = core.Net("n")
    net.Scale("x", "x", scale=10.0)  # in place: same array, new numbers
    net.ConstantFill([], "y", shape=[2], value=5.0)  # same size: written into y's memory
    net.ConstantFill([], "fresh", shape=[4], value=1.0)  # a new blob
    net.Add(["x", "fresh"], "z")  # fails: (3,) + (4,)
    with pytest.raises(errors.ShapeError):
        workspace.RunNetOnce(net)
    assert_unchanged(before)


def test_failed_run_net_restores_every_iteration_and_views_of_written_blobs():
    workspace.FeedBlob("x", np.arange(4, dtype=np.float32))
    workspace.RunOperatorOnce(core.CreateOperator("Alias", ["x"], ["view"]))
    x = workspace.C_Workspace().get_blob("x").value
    assert np.shares_memory(workspace.C_Workspace().get_blob("view").value, x)
    net = core.Net("loop")
    net.Scale("view", "view", scale=2.0)  # writes x's memory through the alias
    workspace.CreateNet(net)
    workspace.RunNet("loop", 2)
    np.testing.assert_array_equal(x, [0, 4, 8, 12])
    bad = core.Net("bad")
    bad.Scale("view", "view", scale=2.0)
    bad.Reshape("view", ["view2", "old_shape"], shape=[3, 5])  # 4 elements: fails
    workspace.CreateNet(bad)  # creating binds (makes) view2 and old_shape, empty
    before = state()
    with pytest.raises(errors.EnforceNotMet):
        workspace.RunNet("bad", 3)
    assert_unchanged(before)
    np.testing.assert_array_equal(x, [0, 4, 8, 12])  # the aliased memory too
    assert workspace.RunNet("bad", allow_fail=True) is False
    assert_unchanged(before)


def test_a_child_workspace_run_restores_the_parent_blob_it_wrote():
    parent = Workspace()
    parent.feed("p", np.ones(3, np.float32))
    child = Workspace(parent=parent)
    p = parent.get_blob("p").value
    net = core.Net("child")
    net.Scale("p", "p", scale=3.0)
    net.Sum(["p", "nothing_here"], "q")
    with pytest.raises(errors.BlobNotFoundError):
        child.run_net_once(net.Proto())
    assert parent.get_blob("p").value is p
    np.testing.assert_array_equal(p, [1, 1, 1])
    assert child.local_blob_names() == []


def test_allocation_cap_refuses_a_huge_fill_before_the_os_sees_it(monkeypatch):
    workspace.FeedBlob("big", np.ones(2, np.float32))
    before = state()
    with pytest.raises(errors.AllocationError) as info:
        workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["big"], shape=[10**12]))
    assert isinstance(info.value, MemoryError)
    assert "output 0 ('big'): a float32 tensor of shape (1000000000000,) needs 3.6 TiB" in str(
        info.value
    )
    assert "allocation cap is 4.0 GiB" in str(info.value)
    assert_unchanged(before)
    # The environment variable sets it; set_max_alloc_bytes(None) re-reads it.
    monkeypatch.setenv("CAFFE2RNN_MAX_ALLOC_BYTES", "64")
    old = settings.set_max_alloc_bytes(None)
    try:
        assert settings.max_alloc_bytes() == 64
        with pytest.raises(errors.AllocationError, match="allocation cap is 64 bytes"):
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["b"], shape=[17]))
        workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["b"], shape=[16]))
    finally:
        settings.set_max_alloc_bytes(old)
    monkeypatch.setenv("CAFFE2RNN_MAX_ALLOC_BYTES", "lots")
    with pytest.raises(errors.ArgumentError, match="'lots' is not a number of bytes"):
        settings.set_max_alloc_bytes(None)
    assert settings.max_alloc_bytes() == old


@pytest.mark.parametrize(
    "op",
    [
        core.CreateOperator("GivenTensorFill", [], ["w"], shape=[2, 3], values=[1.0] * 5),
        core.CreateOperator("GivenTensorIntFill", [], ["w"], shape=[1], values=[2**40]),
        core.CreateOperator("XavierFill", [], ["w"], shape=[]),
        core.CreateOperator("MSRAFill", [], ["w"], shape=[6]),
        core.CreateOperator("ConstantFill", [], ["w"], shape=[6], value=2**40, dtype=2),
    ],
    ids=lambda op: op.type,
)
def test_fillers_validate_before_touching_their_output(op):
    """Run directly (no rollback, as ops run inside nets): the output stays."""
    ws = Workspace()
    ws.feed("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    w = ws.get_blob("w").value
    with pytest.raises((errors.ArgumentError, errors.ShapeError)):
        create_operator(op, ws).run()
    assert ws.get_blob("w").value is w
    np.testing.assert_array_equal(w, np.arange(6).reshape(2, 3))


def test_a_created_net_run_through_the_bindings_is_all_or_nothing_too():
    """``ws.nets[name].run()`` and the Net ``create_net`` returns: as RunNet."""
    ws = workspace.C.Workspace()
    ws.create_blob("x").feed(np.ones(3, np.float32))
    net = core.Net("fails_late")
    net.Scale("x", "x", scale=10.0)
    net.ConstantFill([], "fresh", shape=[4], value=1.0)
    net.Add(["x", "fresh"], "z")  # (3,) + (4,)
    created = ws.create_net(net)
    for run in (created.run, ws.nets["fails_late"].run):
        with pytest.raises(errors.ShapeError):
            run()
        np.testing.assert_array_equal(ws.blobs["x"].fetch(), np.ones(3, np.float32))
        # created with the net (as in Caffe2), still empty after the failed run
        assert ws.blobs["fresh"]._blob.value is None


def _recurrent_op(step_ops, timestep="timestep"):
    """RecurrentNetwork over ``input`` (T x N x D) with state ``hidden`` (from
    ``h0``), whose step net is ``step_ops`` after the links' ops."""
    from caffe2rnn.proto import caffe2_pb2
    from caffe2rnn.utils import MakeArgument

    def o(op_type, inputs, outputs):
        d = caffe2_pb2.OperatorDef(type=op_type)
        d.input.extend(inputs)
        d.output.extend(outputs)
        return d

    step = caffe2_pb2.NetDef(name="step")
    step.op.extend([o(*spec) for spec in step_ops])
    step.external_input.extend(["input_t", "hidden_t_prev", "w"])
    op_def = o("RecurrentNetwork", ["input", "h0", "w"], ["hidden_all", "step_workspaces"])
    for key, value in dict(
        step_net=str(step),
        recurrent_states=["hidden"],
        initial_recurrent_state_ids=[1],
        link_internal=["hidden_t_prev", "hidden_t", "input_t"],
        link_external=["hidden", "hidden", "input"],
        link_offset=[0, 1, 0],
        link_window=[1, 1, 1],
        alias_src=["hidden"],
        alias_dst=["hidden_all"],
        alias_offset=[1],
        timestep=timestep,
    ).items():
        op_def.arg.add().CopyFrom(MakeArgument(key, value))
    return op_def


def _recurrent_workspace():
    ws = Workspace(name="write_through")
    ws.feed("input", np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    ws.feed("h0", np.ones((1, 2, 2), np.float32))
    ws.feed("w", np.full((2, 2), 0.5, np.float32))
    ws.feed("outer", np.full((2, 2), 7.0, np.float32))
    return ws


def _assert_kept(ws, before):
    assert sorted(ws.local_blobs()) == sorted(before)
    for name, (value, contents) in before.items():
        assert ws.blob(name).value is value, name
        np.testing.assert_array_equal(value, contents)


def _contents(ws):
    return {n: (ws.blob(n).value, np.copy(ws.blob(n).value)) for n in ws.local_blobs()}


def test_a_recurrent_op_writes_through_to_outer_blobs_as_caffe2_did():
    # Caffe2's CreateBlob in a step workspace returns a visible outer blob of
    # that name: a step-net output "outer" is the outer workspace's blob.
    ws = _recurrent_workspace()
    step = [("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"]), ("Copy", ["input_t"], ["outer"])]
    ws.run_operator_once(_recurrent_op(step))
    np.testing.assert_array_equal(ws.blob("outer").value, ws.blob("input").value[2:3])


def test_a_failed_recurrent_op_undoes_its_step_nets_writes_to_outer_blobs():
    # Step 0 copies input_t into the outer blob "outer", then Mul fails on w's
    # shape: "outer" is put back with the op's outputs and state tensors.
    ws = _recurrent_workspace()
    ws.feed("w", np.ones((3,), np.float32))
    before = _contents(ws)
    step = [
        ("Copy", ["input_t"], ["outer"]),
        ("Mul", ["input_t", "w"], ["hidden_t"]),
    ]
    with pytest.raises(errors.ShapeError):
        ws.run_operator_once(_recurrent_op(step))
    _assert_kept(ws, before)


def test_a_failed_recurrent_op_undoes_a_timestep_written_into_its_input():
    # The fuzz suite's case: a timestep named like the op's input "input" is
    # written into that blob (as in Caffe2), then the links' op is refused by
    # its schema (input 0, the timestep, is also output 1): "input" is restored.
    ws = _recurrent_workspace()
    before = _contents(ws)
    step = [("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"])]
    with pytest.raises(errors.EnforceNotMet, match="written in place"):
        ws.run_operator_once(_recurrent_op(step, timestep="input"))
    _assert_kept(ws, before)


def test_run_net_copies_into_the_spares_of_its_last_run_and_still_undoes():
    # RunNet keeps its journal's copies between runs of a created net: the
    # second run copies into the first run's arrays, and a failed run after
    # them restores what the successful ones left.
    ws = Workspace(name="spares")
    ws.feed("x", np.arange(4, dtype=np.float32))
    from caffe2rnn.proto import caffe2_pb2

    netdef = caffe2_pb2.NetDef(name="scale")
    o = netdef.op.add(type="Scale", input=["x"], output=["x"])
    o.arg.add(name="scale", f=2.0)
    net = ws.create_net(netdef)
    ws.run_net("scale")
    spares = net.journal_spares
    ((array, copy),) = spares.values()
    assert array is ws.blob("x").value
    np.testing.assert_array_equal(copy, np.arange(4))  # the contents before run 1
    ws.run_net("scale")
    assert net.journal_spares is spares and spares[id(ws.blob("x"))][1] is copy  # reused
    np.testing.assert_array_equal(copy, 2 * np.arange(4))  # the contents before run 2

    x = ws.blob("x").value
    failing = caffe2_pb2.NetDef(name="scale_then_fail")
    failing.op.extend(
        [netdef.op[0], caffe2_pb2.OperatorDef(type="Relu", input=["x"], output=["y"])]
    )
    failing.op[1].input[0] = "missing"
    with pytest.raises(errors.EnforceNotMet):
        ws.create_net(failing)  # the missing input is found at creation
    failing.op[1].type, failing.op[1].input[0] = "Add", "x"
    failing.op[1].input.append("x")
    failing.op[1].arg.add(name="broadcast", i=1)
    failing.op[1].arg.add(name="axis", i=7)  # refused when it runs
    ws.create_net(failing)
    for _ in range(2):
        with pytest.raises(errors.EnforceNotMet):
            ws.run_net("scale_then_fail")
        assert ws.blob("x").value is x
        np.testing.assert_array_equal(x, 4 * np.arange(4))


@pytest.mark.parametrize("order", ["view first", "buffer first"])
def test_memory_shown_by_several_blobs_is_copied_once_and_restored(order):
    """A view covering most of a big buffer (hidden_all in the state tensor)
    and the buffer itself (the state tensor): one copy, both restored."""
    from caffe2rnn.runtime.rollback import Rollback

    ws = Workspace(name="shared")
    buffer = np.arange(1 << 16, dtype=np.float32)  # 256 KB
    ws.feed("states", buffer)
    states = ws.blob("states")
    ws.create_blob("all").value = states.value[1:]  # a view of all but the first row
    blobs = [ws.blob("all"), states] if order == "view first" else [states, ws.blob("all")]
    journal = Rollback(ws)
    journal.note(blobs)
    copies = [entry[3] for entry in journal.saved.values() if entry[3] is not None]
    assert len(copies) == 1 and copies[0].nbytes == states.value.nbytes
    before = states.value.copy()
    states.value[:] = -1
    ws.blob("all").value = np.zeros(3, np.float32)  # replaced, not written into
    journal.undo()
    np.testing.assert_array_equal(states.value, before)
    assert ws.blob("all").value.base is not None and ws.blob("all").value[0] == before[1]
