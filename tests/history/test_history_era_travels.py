"""The era travels with the net, never with the process.

A historical ``recurrent_net`` marks the ``core.Net`` it built; CreateNet,
RunNetOnce and Net.Clone carry the mark; a NetDef alone (serialized, loaded
elsewhere) runs today's operators unless an era is named. Bug B5 (v2: the
second run returns 2 x the gradient of timestep 0) tells the eras apart.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from caffe2rnn import core, eras, workspace
from caffe2rnn.errors import BuildError
from caffe2rnn.history import VERSIONS, cells, era
from caffe2rnn.history.bugs import BUGS, timestep0_gradient
from caffe2rnn.history.compare import compare
from caffe2rnn.proto import caffe2_pb2


@pytest.fixture
def fresh():
    workspace.ResetWorkspace()
    core.Net.reset_names()
    yield
    workspace.ResetWorkspace()


@pytest.fixture(scope="module")
def b5():
    cell = cells.pass_through_reference()
    values = cell.values(np.random.default_rng(0))
    reference = cell.reference_gradients({k: v.copy() for k, v in values.items()})
    return cell, values, reference


def build_v2(cell):
    net, outputs = cell.build(VERSIONS["v2"].recurrent_net)
    net.AddGradientOperators([outputs[0]])
    return net


def run_twice(net, values, **create):
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    workspace.CreateNet(net, overwrite=True, **create)
    grads = []
    for _ in range(2):
        workspace.RunNet(net.Name() if hasattr(net, "Name") else net.name)
        grads.append(workspace.FetchBlob("w_grad").copy())
    return grads


def close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_netdef_is_byte_identical_and_the_mark_is_on_the_net(fresh, b5):
    cell, _, _ = b5
    net = build_v2(cell)
    assert eras.of(net) is eras.get("E4")
    core.Net.reset_names()
    with era("v2"):  # the same code, era named by the caller: same bytes
        again = build_v2(cell)
    assert again.Proto().SerializeToString() == net.Proto().SerializeToString()
    assert eras.of(core.Net(net.Proto())) is None  # a NetDef carries no era


def test_the_built_net_runs_its_era_and_a_bare_netdef_runs_todays(fresh, b5):
    cell, values, reference = b5
    net = build_v2(cell)
    first, second = run_twice(net, values)
    assert close(first, reference["w"]) and not close(second, reference["w"])
    assert close(second, 2 * timestep0_gradient(values))

    workspace.ResetWorkspace()
    bare = caffe2_pb2.NetDef.FromString(net.Proto().SerializeToString())
    for run in run_twice(bare, values):  # today's operators: no B5
        assert close(run, reference["w"])
    workspace.ResetWorkspace()
    assert close(run_twice(bare, values, era="v2")[1], second)


SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from caffe2rnn import workspace
    from caffe2rnn.proto import caffe2_pb2

    netdef = caffe2_pb2.NetDef.FromString(open(sys.argv[1], "rb").read())
    feeds = np.load(sys.argv[2])
    for name in feeds.files:
        workspace.FeedBlob(name, feeds[name])
    era = sys.argv[4] if len(sys.argv) > 4 else None
    workspace.CreateNet(netdef, era=era)
    grads = []
    for _ in range(2):
        workspace.RunNet(netdef.name)
        grads.append(workspace.FetchBlob("w_grad"))
    np.save(sys.argv[3], np.stack(grads))
    """
)


def test_serialized_netdef_in_a_fresh_process_runs_the_era_it_is_told(fresh, b5, tmp_path):
    cell, values, reference = b5
    net = build_v2(cell)
    here = run_twice(net, values)
    (tmp_path / "net.pb").write_bytes(net.Proto().SerializeToString())
    np.savez(tmp_path / "feeds.npz", **values)

    def fresh_process(*era_arg):
        out = tmp_path / "out.npy"
        subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path / "net.pb"), str(tmp_path / "feeds.npz")]
            + [str(out)]
            + list(era_arg),
            check=True,
        )
        return np.load(out)

    named = fresh_process("v2")
    np.testing.assert_array_equal(named[0], here[0])
    np.testing.assert_array_equal(named[1], here[1])  # B5 again, as here
    unnamed = fresh_process()
    for run in unnamed:
        assert close(run, reference["w"])  # today's operators


def test_clone_keeps_the_era_even_with_renamed_blobs(fresh, b5):
    cell, values, _ = b5
    net = build_v2(cell)
    expected = run_twice(net, values)
    workspace.ResetWorkspace()
    op = next(o for o in net.Proto().op if o.type == "RecurrentNetwork")
    clone = net.Clone("cloned", blob_remap={op.output[-1]: "renamed_step_workspaces"})
    assert "renamed_step_workspaces" in clone.Proto().op[-1].input
    assert eras.of(clone) is eras.of(net)
    got = run_twice(clone, values)
    np.testing.assert_array_equal(got[1], expected[1])


def test_identical_ops_under_two_eras_each_run_their_own(fresh, b5):
    cell, values, reference = b5
    v2_net = build_v2(cell)
    same = core.Net(v2_net.Proto())  # identical ops, no era yet
    assert same.Proto().op == v2_net.Proto().op
    eras.mark(same, "v3")
    workspace.SwitchWorkspace("era_a", True)
    v2_runs = run_twice(v2_net, values)
    workspace.SwitchWorkspace("era_b", True)
    v3_runs = run_twice(same, values)
    workspace.SwitchWorkspace("era_a")
    v2_again = run_twice(v2_net, values)
    workspace.SwitchWorkspace("default")
    assert not close(v2_runs[1], reference["w"])
    np.testing.assert_array_equal(v2_again[1], v2_runs[1])
    for run in v3_runs:
        assert close(run, reference["w"])


def test_reset_workspace_leaves_nothing_behind(fresh, b5):
    cell, values, reference = b5
    net = build_v2(cell)
    run_twice(net, values)
    blob = net.Proto().SerializeToString()
    workspace.ResetWorkspace()
    core.Net.reset_names()
    for run in run_twice(caffe2_pb2.NetDef.FromString(blob), values):
        assert close(run, reference["w"])


def test_a_use_block_names_the_era_for_bare_netdefs(fresh, b5):
    cell, values, _ = b5
    net = build_v2(cell)
    expected = run_twice(net, values)
    workspace.ResetWorkspace()
    bare = caffe2_pb2.NetDef.FromString(net.Proto().SerializeToString())
    with eras.use("E4"):
        got = run_twice(bare, values)
    np.testing.assert_array_equal(got[1], expected[1])


def test_a_marked_net_in_a_block_of_another_era_is_refused_unless_era_is_passed(fresh, b5):
    cell, values, reference = b5
    net = build_v2(cell)
    with eras.use("E6"):
        with pytest.raises(BuildError, match="built in era E4 but is created inside"):
            workspace.CreateNet(net)
        for run in run_twice(net, values, era="E6"):  # the argument decides
            assert close(run, reference["w"])
    with eras.use("v2"):  # the same era: fine
        assert not close(run_twice(net, values)[1], reference["w"])


def test_run_operator_once_takes_an_era(fresh, b5):
    """Forward-only, E4's op keeps a step workspace per timestep; today's cycles 2."""
    cell, values, _ = b5
    net = build_v2(cell)
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    forward = caffe2_pb2.OperatorDef()
    forward.CopyFrom(next(o for o in net.Proto().op if o.type == "RecurrentNetwork"))
    kept = [a for a in forward.arg if a.name != "backward_step_net"]
    del forward.arg[:]
    forward.arg.extend(kept)
    counts = {}
    for era_name in ("v2", None):
        forward.output[-1] = "workspaces_%s" % era_name
        workspace.RunOperatorOnce(forward, era=era_name)
        counts[era_name] = len(
            workspace.C_Workspace().blob(forward.output[-1]).value.step_workspaces
        )
        np.testing.assert_allclose(
            workspace.FetchBlob(forward.output[0]), cell.forward(values), rtol=1e-12
        )
    assert counts == {"v2": cells.T, None: 2}


def test_one_net_holds_one_era(fresh):
    cell = cells.sum_mul()
    net, _ = cell.build(VERSIONS["v2"].recurrent_net)
    with pytest.raises(BuildError, match="already holds recurrent ops of era E4"):
        eras.mark(net, "E5")
    with pytest.raises(ValueError, match="unknown era 'v9'"):
        eras.get("v9")


def test_history_helpers_leave_the_callers_workspace_alone(fresh):
    workspace.FeedBlob("mine", np.arange(3.0))
    core.Net("taken")
    compare(["v1", "newest"], "sum_mul")
    BUGS["B5"].run()
    BUGS["B9"].run()
    np.testing.assert_array_equal(workspace.FetchBlob("mine"), np.arange(3.0))
    assert core.Net("taken").Name() == "taken_1"  # the name registry is the caller's


def test_versions_are_names_of_eras():
    assert [eras.get(v).name for v in ("v1", "april", "v2", "v3", "newest")] == [
        "E2",
        "E3",
        "E4",
        "E5",
        "E6",
    ]
    with era("v2") as chosen:
        assert chosen is eras.get("E4") and eras.current() is chosen


def run_plan_twice(net, values, **run):
    """The net as a plan step of two iterations; w_grad after them."""
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    plan = core.Plan("twice")
    plan.AddStep(core.ExecutionStep("step", net, num_iter=2))
    workspace.RunPlan(plan, **run)
    return workspace.FetchBlob("w_grad").copy()


def test_run_plan_runs_each_net_with_its_era(fresh, b5):
    cell, values, reference = b5
    net = build_v2(cell)
    # as the built net under RunNet: the second run shows B5
    assert close(run_plan_twice(net, values), 2 * timestep0_gradient(values))
    workspace.ResetWorkspace()
    bare = core.Net(caffe2_pb2.NetDef.FromString(net.Proto().SerializeToString()))
    assert eras.of(bare) is None
    assert close(run_plan_twice(bare, values), reference["w"])  # today's operators
    workspace.ResetWorkspace()
    named = run_plan_twice(bare, values, era="v2")
    assert close(named, 2 * timestep0_gradient(values))
