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
