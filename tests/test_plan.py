"""core.Plan / ExecutionStep / execution_step and workspace.RunPlan.

Counters are ``Iter`` ops (int64, +1 per run); the stop flag comes from a
test-only op, ``PlanTestReached``: a bool scalar ``counter >= limit``.
"""

import numpy as np
import pytest

from caffe2rnn import compat, core, errors, workspace
from caffe2rnn.operators.base import Operator
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime.registry import is_registered, register

if not is_registered("PlanTestReached"):

    @register("PlanTestReached", inputs=1, outputs=1)
    class PlanTestReached(Operator):
        """Y = [X[0] >= limit] as a bool scalar (test only)."""

        def setup(self):
            self.limit = self.args.single("limit", 0)

        def run(self):
            counter = self.input(0)
            self.set_output(0, np.array(counter.reshape(-1)[0] >= self.limit))


SEEN_ERAS = []

if not is_registered("PlanTestRecordEra"):

    @register("PlanTestRecordEra", inputs=0, outputs=0)
    class PlanTestRecordEra(Operator):
        """Appends the era current while it runs to SEEN_ERAS (test only)."""

        def run(self):
            from caffe2rnn import eras

            SEEN_ERAS.append(eras.current().name)


def _era_net(name):
    net = core.Net(name)
    net.PlanTestRecordEra([], [])
    return net


def counter_net(name, counter, limit=None, flag=None):
    """``counter += 1`` (starting at 0), then optionally ``flag = counter >= limit``."""
    net = core.Net(name)
    net.Iter([], counter)
    if limit is not None:
        net.PlanTestReached([counter], flag, limit=limit)
    return net


def count(name):
    return int(workspace.FetchBlob(name)[0])


def feed_flag(name, value=False):
    workspace.FeedBlob(name, np.array(value))


# -- num_iter, should_stop_blob, only_once -------------------------------------------


def test_num_iter_runs_the_nets_that_many_times_in_order():
    a, b = counter_net("a", "ca"), counter_net("b", "cb")
    plan = core.Plan("p")
    plan.AddStep(core.ExecutionStep("loop", [a, b], num_iter=5))
    assert workspace.RunPlan(plan) is True
    assert (count("ca"), count("cb")) == (5, 5)
    assert set(workspace.Nets()) == {"a", "b"}  # created by the plan, kept
    assert workspace.FetchBlob("ca").dtype == np.int64


def test_default_is_one_iteration_and_an_empty_plan_does_nothing():
    plan = core.Plan("p")
    plan.AddStep(core.ExecutionStep("once", counter_net("a", "c")))
    workspace.RunPlan(plan)
    assert count("c") == 1
    assert workspace.RunPlan(core.Plan("empty")) is True


def test_should_stop_blob_is_read_after_every_net():
    # net a sets the flag at its 3rd run; net b must not run in that iteration
    a = counter_net("a", "ca", limit=3, flag="stop")
    b = counter_net("b", "cb")
    feed_flag("stop")
    step = core.execution_step("loop", [a, b], should_stop_blob=core.BlobReference("stop"))
    workspace.RunPlan(step)
    assert (count("ca"), count("cb")) == (3, 2)
    assert workspace.FetchBlob("stop").item() is True


def test_an_uninitialised_stop_blob_counts_as_false():
    a = counter_net("a", "ca", limit=2, flag="stop")
    workspace.CreateBlob("stop")  # exists, holds nothing yet
    workspace.RunPlan(core.execution_step("s", a, should_stop_blob=core.BlobReference("stop")))
    assert count("ca") == 2


def test_only_once_runs_one_iteration_even_if_the_flag_stays_false():
    a = counter_net("a", "ca", limit=10, flag="stop")
    feed_flag("stop")
    step = core.execution_step("s", a, should_stop_blob=core.BlobReference("stop"), only_once=True)
    workspace.RunPlan(step)
    assert count("ca") == 1


# -- substeps ----------------------------------------------------------------------


def affine_nets():
    """``x *= 2`` and ``x += 1`` as two nets; their order shows in the result."""
    double, inc = core.Net("double"), core.Net("inc")
    double.Scale(["x"], ["x"], scale=2.0)
    inc.Add(["x", "one"], ["x"])
    workspace.FeedBlob("x", np.array([1.0], np.float32))
    workspace.FeedBlob("one", np.array([1.0], np.float32))
    return double, inc


def test_substeps_run_in_order_each_iteration():
    double, inc = affine_nets()
    outer = core.execution_step(
        "outer",
        [core.execution_step("d", double, num_iter=2), core.execution_step("i", inc)],
        num_iter=2,
    )
    workspace.RunPlan(outer)
    x = 1.0
    for _ in range(2):
        x = x * 2 * 2 + 1
    assert workspace.FetchBlob("x")[0] == x == 21.0  # not 12 = ((1+1)*2*2 + 1)... order matters


def test_should_stop_blob_is_read_after_every_sequential_substep():
    first = core.execution_step("first", counter_net("a", "ca", limit=2, flag="stop"))
    second = core.execution_step("second", counter_net("b", "cb"))
    feed_flag("stop")
    outer = core.execution_step(
        "outer", [first, second], should_stop_blob=core.BlobReference("stop")
    )
    workspace.RunPlan(outer)
    assert (count("ca"), count("cb")) == (2, 1)


def test_concurrent_substeps_read_the_flag_after_all_of_them():
    first = core.execution_step("first", counter_net("a", "ca", limit=2, flag="stop"))
    second = core.execution_step("second", counter_net("b", "cb"))
    feed_flag("stop")
    outer = core.execution_step(
        "outer",
        [first, second],
        should_stop_blob=core.BlobReference("stop"),
        concurrent_substeps=True,
    )
    workspace.RunPlan(outer)
    assert (count("ca"), count("cb")) == (2, 2)  # second ran in the stopping iteration too


def test_num_concurrent_instances_runs_each_substep_that_many_times():
    outer = core.execution_step(
        "outer",
        [
            core.execution_step("a", counter_net("a", "ca")),
            core.execution_step("b", counter_net("b", "cb")),
        ],
        concurrent_substeps=True,
        num_concurrent_instances=3,
        num_iter=2,
    )
    workspace.RunPlan(outer)
    assert (count("ca"), count("cb")) == (6, 6)


def _queue_plan(consumers=1, produce=5):
    """A producer step (``produce`` records, then close) and ``consumers``
    steps that dequeue until the queue is closed, counting, all concurrent."""
    init = core.Net("qinit")
    queue = init.CreateBlobsQueue([], "q", capacity=1, num_blobs=1)
    one = init.ConstantFill([], "one", shape=[1], value=1.0)
    producer = core.Net("producer")
    blob = producer.ConstantFill([], "record", shape=[1], value=1.0)
    producer.EnqueueBlobs([queue, blob], [blob])
    closer = core.Net("closer")
    closer.CloseBlobsQueue([queue], 0)
    steps = [
        core.execution_step(
            "produce",
            [
                core.execution_step("p", producer, num_iter=produce),
                core.execution_step("c", closer),
            ],
        )
    ]
    counters = []
    for i in range(consumers):
        take = core.Net("take%d" % i)
        _, status = take.SafeDequeueBlobs([queue], ["got%d" % i, "status%d" % i])
        add = core.Net("add%d" % i)
        counter = init.ConstantFill([], "n%d" % i, shape=[1], value=0.0)
        add.Add([counter, one], counter)
        counters.append(str(counter))
        steps.append(core.execution_step("consume%d" % i, [take, add], should_stop_blob=status))
    plan = core.Plan("queues")
    plan.AddStep(core.execution_step("init", init))
    plan.AddStep(core.execution_step("work", steps, concurrent_substeps=True))
    return plan, counters


@pytest.mark.parametrize("consumers", [1, 3])
def test_concurrent_substeps_run_at_the_same_time(consumers):
    # A producer and consumers of a queue of capacity 1: run one after the
    # other, the producer would wait forever for room (Caffe2 ran them on
    # threads: hypothesis_test.py::test_safe_blobs_queue).
    plan, counters = _queue_plan(consumers)
    workspace.RunPlan(plan)
    assert sum(float(workspace.FetchBlob(c)[0]) for c in counters) == 5


def test_a_wait_no_concurrent_substep_can_end_fails_instead_of_hanging():
    init = core.Net("qinit")
    queue = init.CreateBlobsQueue([], "q", capacity=1, num_blobs=1)
    takers = []
    for i in range(2):
        take = core.Net("take%d" % i)
        take.DequeueBlobs([queue], ["got%d" % i])
        takers.append(core.execution_step("take%d" % i, take))
    plan = core.Plan("stuck")
    plan.AddStep(core.execution_step("init", init))
    plan.AddStep(core.execution_step("work", takers, concurrent_substeps=True))
    with pytest.raises(errors.WorkspaceError, match="One of the workers died.*would wait forever"):
        workspace.RunPlan(plan)


def test_a_failing_worker_stops_the_others_at_their_next_iteration():
    bad = core.Net("bad")
    bad.Gather(["table", "ind"], "out")
    workspace.FeedBlob("table", np.zeros((2, 2), np.float32))
    workspace.FeedBlob("ind", np.array([5], np.int32))  # out of range
    good = counter_net("good", "cg")
    outer = core.execution_step(
        "outer",
        [core.execution_step("bad", bad), core.execution_step("good", good, num_iter=100000)],
        concurrent_substeps=True,
    )
    with pytest.raises(errors.WorkspaceError, match="One of the workers died.*'ind'"):
        workspace.RunPlan(outer)
    assert count("cg") < 100000


def test_workers_run_in_the_era_of_the_thread_that_runs_the_plan():
    from caffe2rnn import eras

    outer = core.execution_step(
        "outer",
        [core.execution_step(n, _era_net(n)) for n in ("x", "y")],
        concurrent_substeps=True,
    )
    del SEEN_ERAS[:]
    with eras.use("E4"):
        workspace.RunPlan(outer)
    assert SEEN_ERAS == ["E4", "E4"]


def test_create_workspace_runs_in_a_child_that_is_dropped():
    workspace.FeedBlob("w", np.array([3.0], np.float32))
    net = core.Net("child_net")
    net.Scale(["w"], ["w2"], scale=2.0)
    step = core.execution_step("s", net, create_workspace=True)
    workspace.RunPlan(step)
    assert not workspace.HasBlob("w2")  # made in the child workspace
    assert "child_net" not in workspace.Nets()
    assert workspace.FetchBlob("w")[0] == 3.0


def test_report_net_and_periodic_substeps_run_once_at_the_end():
    main = counter_net("main", "cm")
    report = counter_net("report", "cr")
    step = core.execution_step("s", main, num_iter=4, report_net=report, report_interval=3600)
    workspace.RunPlan(step)
    assert (count("cm"), count("cr")) == (4, 1)

    periodic = core.execution_step("every", counter_net("tick", "ct"))
    periodic.RunEveryMillis(3_600_000)
    work = core.execution_step("work", counter_net("work", "cw"), num_iter=3)
    workspace.RunPlan(core.execution_step("outer", [work, periodic]))
    assert (count("cw"), count("ct")) == (3, 1)


def test_a_zero_interval_report_runs_after_every_iteration_and_at_the_end():
    main = counter_net("main", "cm")
    report = counter_net("report", "cr")
    step = core.execution_step("s", main, num_iter=3, report_net=report, report_interval=0)
    workspace.RunPlan(step)
    assert (count("cm"), count("cr")) == (3, 4)


def test_a_net_already_in_the_workspace_is_replaced_by_the_plans_version():
    old = caffe2_pb2.NetDef(name="shared")
    old.op.add().CopyFrom(core.CreateOperator("ConstantFill", [], ["y"], shape=[1], value=1.0))
    workspace.CreateNet(old)
    new = caffe2_pb2.NetDef(name="shared")
    new.op.add().CopyFrom(core.CreateOperator("ConstantFill", [], ["y"], shape=[1], value=2.0))
    plan = caffe2_pb2.PlanDef(name="p")
    plan.network.add().CopyFrom(new)
    plan.execution_step.add(name="s", network=["shared"])
    workspace.RunPlan(plan.SerializeToString())
    assert workspace.FetchBlob("y")[0] == 2.0
    workspace.RunNet("shared")  # the created net is now the plan's
    assert workspace.FetchBlob("y")[0] == 2.0


def test_plan_lists_nets_in_order_of_first_use_and_is_named_after_a_step():
    a, b, c = counter_net("a", "ca"), counter_net("b", "cb"), counter_net("c", "cc")
    inner = core.execution_step("inner", [b, a])
    outer = core.execution_step("outer", [inner, core.execution_step("last", c)])
    plan = core.Plan(outer)
    assert plan.Proto().name == "outer"
    assert [n.name for n in plan.Proto().network] == ["b", "a", "c"]
    assert plan.Nets() == [b, a, c]
    assert core.scoped_execution_step("s", a).Name() == "s"
    with core.NameScope("enc"):
        assert core.scoped_execution_step("s", a).Name() == "enc/s"


def test_c_workspace_runs_a_plan():
    ws = workspace.C.Workspace()
    plan = core.Plan("p")
    plan.AddStep(core.ExecutionStep("s", nets=[counter_net("a", "ca")], num_iter=3))
    ws.run(plan)
    assert ws.blobs["ca"].fetch()[0] == 3
    assert "a" in ws.nets and not workspace.HasBlob("ca")


# -- errors -------------------------------------------------------------------------


def plan_with(*steps, nets=()):
    plan = caffe2_pb2.PlanDef(name="p")
    for net in nets:
        plan.network.add().CopyFrom(net.Proto())
    for step in steps:
        plan.execution_step.add().CopyFrom(step)
    return plan


def test_unknown_net_fails_before_anything_runs():
    good = counter_net("good", "cg")
    step = caffe2_pb2.ExecutionStep(name="s", network=["good", "missing"])
    with pytest.raises(errors.WorkspaceError) as info:
        workspace.RunPlan(plan_with(step, nets=[good]))
    message = str(info.value)
    assert "plan 'p'" in message and "step 's'" in message
    assert "ExecutionStep s uses undefined net missing" in message
    assert not workspace.HasBlob("cg")


@pytest.mark.parametrize(
    "step, needle",
    [
        (
            caffe2_pb2.ExecutionStep(name="s", network=["n"], substep=[{"name": "t"}]),
            "either have substep or networks",
        ),
        (
            caffe2_pb2.ExecutionStep(name="s", network=["n"], num_iter=2, should_stop_blob="f"),
            "num_iter",
        ),
        (caffe2_pb2.ExecutionStep(name="s", network=["n"], only_once=True), "only_once"),
        (caffe2_pb2.ExecutionStep(name="s", should_stop_blob="f"), "never stop"),
        (caffe2_pb2.ExecutionStep(name="s", network=["n"], report_net="n"), "report_interval"),
    ],
)
def test_malformed_steps_are_refused_by_name(step, needle):
    feed_flag("f")
    with pytest.raises(errors.WorkspaceError, match=needle):
        workspace.RunPlan(plan_with(step, nets=[counter_net("n", "c")]))
    assert not workspace.HasBlob("c")


def test_a_missing_stop_blob_fails_before_any_net_runs():
    step = caffe2_pb2.ExecutionStep(name="s", network=["n"], should_stop_blob="nope")
    with pytest.raises(errors.WorkspaceError, match="should_stop_blob nope does not exist"):
        workspace.RunPlan(plan_with(step, nets=[counter_net("n", "c")]))
    assert count("c") == 0  # the net was created (Iter starts its counter), never run


def test_a_stop_blob_that_is_not_a_bool_scalar_is_named():
    workspace.FeedBlob("f", np.zeros(2, np.float32))
    step = caffe2_pb2.ExecutionStep(name="s", network=["n"], should_stop_blob="f")
    with pytest.raises(errors.WorkspaceError, match=r"should_stop_blob 'f' expects a scalar"):
        workspace.RunPlan(plan_with(step, nets=[counter_net("n", "c")]))


def test_duplicate_net_names_and_bad_bytes():
    plan = plan_with(caffe2_pb2.ExecutionStep(name="s", network=["n"]))
    plan.network.add(name="n")
    plan.network.add(name="n")
    with pytest.raises(errors.WorkspaceError, match='same name "n"'):
        workspace.RunPlan(plan)
    with pytest.raises(errors.ProtoParseError, match="PlanDef") as info:
        workspace.RunPlan(b"\xff\xff\xff")
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(errors.WrongTypeError):
        workspace.RunPlan(42)


def test_a_failing_net_names_plan_step_iteration_and_op_and_leaves_no_empty_blobs():
    net = core.Net("train")
    net.Iter([], "c")
    net.Add(["a", "b"], "sum")
    workspace.FeedBlob("a", np.zeros(2, np.float32))
    workspace.FeedBlob("b", np.zeros(3, np.float32))
    with pytest.raises(errors.ShapeError) as info:
        workspace.RunPlan(core.execution_step("loop", net, num_iter=3))
    assert str(info.value).startswith(
        "plan 'loop': step 'loop': iteration 0: net 'train', op #1 Add: "
    )
    assert not workspace.HasBlob("sum")
    assert count("c") == 1  # written before the failure: kept


def test_builder_mistakes_are_build_errors_and_assertion_errors():
    net = counter_net("n", "c")
    step = core.ExecutionStep("s", net)
    with pytest.raises(errors.BuildError) as info:
        step.AddSubstep(core.ExecutionStep("t", counter_net("m", "d")))
    assert isinstance(info.value, AssertionError)
    core.Plan("p").AddStep(step)
    with pytest.raises(AssertionError, match="already been added"):
        step.SetIter(3)
    with pytest.raises(errors.BuildError, match="both should_stop_blob and num_iter"):
        core.execution_step("x", net, num_iter=2, should_stop_blob=core.BlobReference("f"))
    with pytest.raises(errors.BuildError, match="BlobReference"):
        core.ExecutionStep("y").SetShouldStopBlob("f")
    with pytest.raises(errors.BuildError):
        core.Plan(3)
    impostor = counter_net("m", "d")
    impostor.Proto().name = "n"
    with pytest.raises(errors.BuildError, match="Different nets with same name: n"):
        core.ExecutionStep("z", [net, impostor])


def test_plan_program_written_for_caffe2_runs_unchanged():
    program = """
from caffe2.python import core, workspace
import numpy as np

init = core.Net("init")
init.ConstantFill([], "total", shape=[1], value=0.0)
init.ConstantFill([], "step", shape=[1], value=0.5)
train = core.Net("train")
train.Add(["total", "step"], "total")
plan = core.Plan("fit")
plan.AddStep(core.execution_step("init", init))
plan.AddStep(core.execution_step("train", train, num_iter=10))
assert workspace.RunPlan(plan.Proto().SerializeToString())
result = workspace.FetchBlob("total")
"""
    compat.install()
    try:
        namespace = compat.py2_namespace()
        exec(compile(program, "<caffe2 plan program>", "exec"), namespace)
    finally:
        compat.uninstall()
    assert namespace["result"].tolist() == [5.0]
