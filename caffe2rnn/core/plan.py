"""``core.ExecutionStep`` and ``core.Plan``: a training loop as a proto.

Instead of a Python ``for`` loop calling ``RunNet``, Caffe2 could describe the
loop itself and hand it to the runtime in one call::

    init = core.execution_step("init", init_net)                   # run once
    train = core.execution_step("train", train_net, num_iter=100)  # run 100 times
    plan = core.Plan("fit")
    plan.AddStep(init)
    plan.AddStep(train)
    workspace.RunPlan(plan)

An :class:`ExecutionStep` runs either nets or substeps (never both),
``num_iter`` times or until a ``should_stop_blob`` holds True. A :class:`Plan`
is a list of steps plus a copy of every net they use, in the order of first
use. How a plan runs is described in :mod:`caffe2rnn.runtime.plan`. Builder
mistakes Caffe2 caught with ``assert`` raise
:class:`~caffe2rnn.errors.BuildError` (an ``AssertionError`` too).
"""

import sys
from collections import OrderedDict

from ..errors import BuildError
from ..proto import caffe2_pb2
from .blob import BlobReference, ScopedName
from .net import Net


def get_net_name(netlike):
    """The name of a ``core.Net`` or NetDef; anything else is returned as is."""
    if isinstance(netlike, Net):
        return netlike.Proto().name
    if isinstance(netlike, caffe2_pb2.NetDef):
        return netlike.name
    return netlike


def _add_net_to_dict(net_dict, net):
    """Record ``net`` under its name; False if that name was already there."""
    name = get_net_name(net)
    if name in net_dict:
        if net_dict[name] is not None and net is not net_dict[name]:
            raise BuildError("Different nets with same name: " + name)
        return False
    net_dict[name] = net if isinstance(net, Net) else None
    return True


class ExecutionStep:
    """One step: nets to run (or substeps), how often, and when to stop.

    ``ExecutionStep(name, nets=None, num_iter=None)``; an empty name gets a
    unique ``step``, ``step_1``... A step added to a plan or another step is
    copied into it, so it can no longer be changed (:class:`BuildError`).
    """

    _step_names_used = set()

    @staticmethod
    def _get_next_step_name(basename):
        name, index = basename, 1
        while name in ExecutionStep._step_names_used:
            name = "%s_%d" % (basename, index)
            index += 1
        ExecutionStep._step_names_used.add(name)
        return name

    def __init__(self, name, nets=None, num_iter=None):
        self._step = caffe2_pb2.ExecutionStep()
        self._step.name = name or ExecutionStep._get_next_step_name("step")
        self._net_dict = OrderedDict()
        self._is_used = False
        self._substeps = []
        if nets is not None:
            for net in [nets] if isinstance(nets, Net) else nets:
                if _add_net_to_dict(self._net_dict, net):
                    self._step.network.append(get_net_name(net))
        if num_iter is not None:
            self._step.num_iter = num_iter

    def get_net(self, name):
        return self._net_dict[name]

    def _as_plan(self):
        """A :class:`Plan` of this one step (``workspace.RunPlan`` of a step)."""
        return Plan(self)

    def Name(self):
        return self._step.name

    def __str__(self):
        return self._step.name

    def _assert_can_mutate(self):
        if self._is_used:
            raise BuildError(
                "Cannot mutate step '%s': it has already been added to a plan/step."
                % self._step.name
            )

    def _notify_is_used(self):
        self._is_used = True

    def Proto(self):
        return self._step

    def HasNets(self):
        return len(self._step.network) > 0

    def HasSubsteps(self):
        return len(self._step.substep) > 0

    def Nets(self):
        return list(self._net_dict.values())

    def Substeps(self):
        return self._substeps

    def SetIter(self, num_iter):
        self._assert_can_mutate()
        self._step.num_iter = num_iter

    def SetCreateWorkspace(self, create_workspace):
        self._assert_can_mutate()
        self._step.create_workspace = create_workspace

    def SetNumConcurrentInstances(self, num_concurrent_instances):
        self._assert_can_mutate()
        self._step.num_concurrent_instances = num_concurrent_instances

    def SetOnlyOnce(self, only_once):
        self._assert_can_mutate()
        self._step.only_once = only_once

    def SetShouldStopBlob(self, should_stop_blob):
        """Stop when this blob (a BlobReference to a scalar bool) holds True."""
        if not isinstance(should_stop_blob, BlobReference):
            raise BuildError(f"expects BlobReference here, got {type(should_stop_blob).__name__}")
        self._assert_can_mutate()
        self._step.should_stop_blob = str(should_stop_blob)

    def RunEveryMillis(self, interval):
        """As a substep: run every ``interval`` ms while its siblings run, and
        once after they finish. Ignored for top-level steps."""
        self._step.run_every_ms = interval

    def SetReportNet(self, report_net, report_interval):
        """Deprecated in Caffe2 for :meth:`RunEveryMillis`: run ``report_net``
        every ``report_interval`` seconds while the step runs."""
        self._assert_can_mutate()
        _add_net_to_dict(self._net_dict, report_net)
        self._step.report_net = get_net_name(report_net)
        self._step.report_interval = report_interval

    def AddSubstep(self, substep):
        """Add a step (or an ``ExecutionStep`` proto) to run inside this one.

        A step with neither nets nor substeps is silently skipped, as in Caffe2.
        """
        self._assert_can_mutate()
        if self.HasNets():
            raise BuildError("Cannot have both network and substeps (step '%s')." % self.Name())
        if isinstance(substep, ExecutionStep):
            substep._notify_is_used()
            if not substep.HasNets() and not substep.HasSubsteps():
                return self
            for net in substep.Nets():
                _add_net_to_dict(self._net_dict, net)
            self._substeps.append(substep)
            proto = substep.Proto()
        else:
            proto = substep
        self._step.substep.add().CopyFrom(proto)
        return self

    def SetConcurrentSubsteps(self, concurrent_substeps):
        self._assert_can_mutate()
        if self.HasNets():
            raise BuildError("Cannot have both network and substeps (step '%s')." % self.Name())
        self._step.concurrent_substeps = concurrent_substeps

    def AddNet(self, net):
        self._assert_can_mutate()
        if self.HasSubsteps():
            raise BuildError("Cannot have both network and substeps (step '%s')." % self.Name())
        if not isinstance(net, Net):
            raise BuildError("AddNet takes a core.Net, got %s" % type(net).__name__)
        _add_net_to_dict(self._net_dict, net)
        self._step.network.append(get_net_name(net))
        return self

    @classmethod
    def create_from_proto(cls, step_proto, net_obj_dict, net_proto_dict):
        """E6: the ExecutionStep a proto describes, substeps recursively; its
        nets are made from ``net_proto_dict`` once (``net_obj_dict`` keeps
        them by name). A step has nets or substeps, not both."""
        if not isinstance(step_proto, caffe2_pb2.ExecutionStep):
            raise BuildError("create_from_proto takes an ExecutionStep proto")
        if bool(step_proto.network) == bool(step_proto.substep):
            raise BuildError(
                "step '%s' must have nets or substeps, not both nor neither" % step_proto.name
            )
        steps_or_nets = []
        for substep in step_proto.substep:
            steps_or_nets.append(cls.create_from_proto(substep, net_obj_dict, net_proto_dict))
        for net_name in step_proto.network:
            if net_name not in net_obj_dict:
                if net_name not in net_proto_dict:
                    raise BuildError(
                        "step '%s' runs an unknown net '%s'" % (step_proto.name, net_name)
                    )
                net_obj_dict[net_name] = Net(net_proto_dict[net_name])
            steps_or_nets.append(net_obj_dict[net_name])

        def field(name):
            return getattr(step_proto, name) if step_proto.HasField(name) else None

        should_stop = field("should_stop_blob")
        return execution_step(
            step_proto.name,
            steps_or_nets,
            num_iter=field("num_iter"),
            concurrent_substeps=field("concurrent_substeps"),
            should_stop_blob=BlobReference(should_stop) if should_stop is not None else None,
            only_once=field("only_once"),
            num_concurrent_instances=field("num_concurrent_instances"),
            create_workspace=field("create_workspace"),
            run_every_ms=field("run_every_ms"),
        )

    def get_all_attributes(self, name):
        """Attributes ``name`` of every net of this step and its substeps."""
        return [attr for net in self._net_dict.values() for attr in net.get_attributes(name)]


def add_nets_in_order(step, net_list):
    """Append to ``net_list`` the nets ``step`` uses, substeps first, each once."""
    proto = step.Proto()
    for substep in step.Substeps():
        add_nets_in_order(substep, net_list)
    for net in proto.network:
        if net not in net_list:
            net_list.append(net)
    # Caffe2 noted that report nets should come first (they may run before any
    # substep) but kept them last, which its reporters relied on.
    if proto.report_net and proto.report_net not in net_list:
        net_list.append(proto.report_net)


class Plan:
    """A ``PlanDef``: steps to run in order and the nets they use.

    ``Plan(name)`` or ``Plan(step)`` (named after the step, with it added).
    """

    def __init__(self, name_or_step):
        self._plan = caffe2_pb2.PlanDef()
        self._net_dict = OrderedDict()
        self._steps = []  # the ExecutionStep objects added (E6's Steps())
        if isinstance(name_or_step, ExecutionStep):
            self._plan.name = name_or_step.Name()
            self.AddStep(name_or_step)
        elif isinstance(name_or_step, str):
            self._plan.name = name_or_step
        else:
            raise BuildError("name_or_step must be a string or ExecutionStep")

    def __str__(self):
        return self._plan.name

    def Proto(self):
        return self._plan

    def AddNets(self, nets):
        """Copy each net's NetDef into the plan (once per name)."""
        for net in nets:
            if _add_net_to_dict(self._net_dict, net):
                if not isinstance(net, Net):
                    raise BuildError(
                        "Plan '%s' can only hold core.Net objects, got %s"
                        % (self._plan.name, type(net).__name__)
                    )
                self._plan.network.add().CopyFrom(net.Proto())

    def Nets(self):
        return list(self._net_dict.values())

    def Steps(self):
        """The steps added, in order (E6)."""
        return self._steps

    @classmethod
    def create_from_proto(cls, plan_proto):
        """E6's ``Plan.create_from_proto``: a Plan object for a ``PlanDef``, its
        steps and nets rebuilt as objects (a net gets a new unique name, as a
        new ``core.Net`` does). As in Caffe2, the new plan starts as a copy of
        the proto and the rebuilt steps are then added to it, so its PlanDef
        holds each step and net twice (running it runs the steps twice);
        :meth:`Steps` and :meth:`Nets` hold them once."""
        if not isinstance(plan_proto, caffe2_pb2.PlanDef):
            raise BuildError("create_from_proto takes a PlanDef")
        plan = cls(plan_proto.name)
        plan._plan.CopyFrom(plan_proto)
        net_obj_dict, net_proto_dict = {}, {}
        for net_proto in plan_proto.network:
            if net_proto.name in net_proto_dict:
                raise BuildError(
                    "plan '%s' has two nets named '%s'" % (plan_proto.name, net_proto.name)
                )
            net_proto_dict[net_proto.name] = net_proto
        for step_proto in plan_proto.execution_step:
            plan.AddStep(ExecutionStep.create_from_proto(step_proto, net_obj_dict, net_proto_dict))
        return plan

    def AddStep(self, step):
        """Add ``step`` (copied; a step without nets or substeps is skipped)
        and the nets it uses, in the order it first uses them."""
        if not isinstance(step, ExecutionStep):
            raise BuildError("AddStep takes an ExecutionStep, got %s" % type(step).__name__)
        step._notify_is_used()
        if not step.HasNets() and not step.HasSubsteps():
            return
        self._plan.execution_step.add().CopyFrom(step.Proto())
        self._steps.append(step)
        net_list = []
        add_nets_in_order(step, net_list)
        self.AddNets([step.get_net(n) for n in net_list])

    def get_all_attributes(self, name):
        return [attr for net in self._net_dict.values() for attr in net.get_attributes(name)]


def to_execution_step(step_or_nets, default_name=None):
    """``step_or_nets`` as an ExecutionStep (a step is returned unchanged).

    A builder of steps becomes a step of its children that ends when its stop
    blob is true, as E6's ``core.to_execution_step``: caffe2rnn's
    ``net_builder.NetBuilder`` (anything with ``execution_step_parts()``
    returning its children and its stop blob), or Caffe2's own ``net_builder``
    module loaded from a checkout.
    """
    if isinstance(step_or_nets, ExecutionStep):
        return step_or_nets
    if not default_name and hasattr(step_or_nets, "name"):
        default_name = step_or_nets.name
    stop_blob = None
    parts = getattr(step_or_nets, "execution_step_parts", None)
    net_builder = sys.modules.get("caffe2.python.net_builder")
    if callable(parts):
        step_or_nets, stop_blob = parts()
    elif net_builder is not None and isinstance(step_or_nets, net_builder.NetBuilder):
        stop_blob = step_or_nets._stop_blob
        step_or_nets = step_or_nets.get()
    return execution_step(default_name, step_or_nets, should_stop_blob=stop_blob)


def execution_step(
    default_name,
    steps_or_nets,
    num_iter=None,
    report_net=None,
    report_interval=None,
    concurrent_substeps=None,
    should_stop_blob=None,
    only_once=None,
    num_concurrent_instances=None,
    create_workspace=False,
    run_every_ms=None,
):
    """Make an ExecutionStep in one call.

    ``steps_or_nets``: None, a Net, an ExecutionStep, a list of Nets, or a
    list of steps (or of things :func:`to_execution_step` turns into steps).
    ``should_stop_blob`` (a scalar bool blob) is read after every net or
    substep, and ``num_iter`` cannot be given with it; with neither, the step
    runs once.
    """
    if should_stop_blob is not None and num_iter is not None:
        raise BuildError("Cannot set both should_stop_blob and num_iter.")
    if should_stop_blob is None and num_iter is None:
        num_iter = 1
    step = ExecutionStep(default_name)
    if should_stop_blob is not None:
        step.SetShouldStopBlob(should_stop_blob)
    if num_iter is not None:
        step.SetIter(num_iter)
    if only_once is not None:
        step.SetOnlyOnce(only_once)
    if concurrent_substeps is not None:
        step.SetConcurrentSubsteps(concurrent_substeps)
    if report_net is not None:
        if report_interval is None:
            raise BuildError("report_net needs a report_interval")
        step.SetReportNet(report_net, report_interval)
    if num_concurrent_instances is not None:
        step.SetNumConcurrentInstances(num_concurrent_instances)
    if create_workspace:
        step.SetCreateWorkspace(True)
    if run_every_ms:
        step.RunEveryMillis(run_every_ms)

    if isinstance(steps_or_nets, ExecutionStep):
        step.AddSubstep(steps_or_nets)
    elif isinstance(steps_or_nets, Net):
        step.AddNet(steps_or_nets)
    elif isinstance(steps_or_nets, list):
        if all(isinstance(x, Net) for x in steps_or_nets):
            for net in steps_or_nets:
                step.AddNet(net)
        else:
            for x in steps_or_nets:
                step.AddSubstep(to_execution_step(x))
    elif steps_or_nets:
        raise BuildError("steps_or_nets must be a step, a net, or a list of nets or steps.")
    return step


def scoped_execution_step(name, *args, **kwargs):
    """:func:`execution_step` with ``name`` in the current name scope."""
    return execution_step(ScopedName(name) if name else name, *args, **kwargs)
