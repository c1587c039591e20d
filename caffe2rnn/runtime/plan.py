"""Running a ``PlanDef``: execution steps that run nets, repeat, and stop.

A plan is Caffe2's training loop written as data (``caffe2/core/plan_executor.cc``
of 0cdd09da6)::

    PlanDef
      network:        NetDefs, created in the workspace when a step first needs them
      execution_step: run one after the other
        ExecutionStep
          network: [names]        run these nets in order, num_iter times  ─┐ one or
          substep: [steps]        run these steps in order, num_iter times ─┘ the other
          num_iter                how many iterations (default 1)
          should_stop_blob        or: iterate until this scalar bool blob is True
          only_once               with should_stop_blob: at most one iteration
          create_workspace        run in a fresh child workspace each time
          concurrent_substeps, num_concurrent_instances
          report_net + report_interval (s), substeps with run_every_ms

How it runs, as in Caffe2:

* The whole plan is **checked** first (a step has nets or substeps, not both;
  ``num_iter`` and ``should_stop_blob`` exclude each other; every net named
  exists...), so a malformed plan changes nothing. Then each top-level step is
  **compiled** before it runs: its nets (and those of its substeps) are
  created, and the stop blob must exist by then. A net the workspace already
  had under that name is replaced once, by the plan's version.
* **should_stop_blob** is read after every net of a net step and after every
  substep; when it holds True the step returns at once (the plan goes on with
  its next step). It must be a bool tensor with one element; a blob that holds
  nothing yet counts as False.
* **create_workspace**: the step runs in a child workspace (it sees the
  parent's blobs, its own new blobs are dropped afterwards); it is compiled
  anew each time it runs.

* **concurrent_substeps** (with more than one substep) and
  ``num_concurrent_instances = k`` run each iteration's substeps on threads
  of their own, ``k`` per substep, and wait for all of them; the stop blob
  is checked after they have all finished. When one fails, the others stop
  at their next iteration and the step fails with the first error (Caffe2
  aborted the process unless ``caffe2_handle_executor_threads_exceptions``
  was set; then it threw the same "One of the workers died" error). A
  worker sees the era and scopes of the thread that ran the plan.

What differs, and why:

* **report nets** and ``run_every_ms`` substeps run between iterations once
  their interval has passed, and once more when the step finishes (Caffe2 ran
  them on a timer thread, and once at the end). A failing step skips that last
  report.
"""

import contextvars
import itertools
import threading
import time

import numpy as np

from ..errors import WorkspaceError
from . import blocking
from .net import with_context


def run_plan(ws, plan, era=None, net_eras=None):
    """Run every execution step of ``plan`` (a PlanDef) in workspace ``ws``.

    Returns True. A plan without steps does nothing (and is still legal).
    Errors name the plan and the steps: ``plan 'fit': step 'loop': iteration 3:
    net 'train', op #2 FC: ...``.
    """
    netdefs = {}
    for netdef in plan.network:
        if netdef.name in netdefs:
            raise WorkspaceError(
                "plan '%s': Your plan contains networks of the same name \"%s\", which "
                "should not happen." % (plan.name, netdef.name)
            )
        # A net the workspace already holds is replaced by the plan's, once.
        netdefs[netdef.name] = _PlanNet(
            netdef, ws.get_net(netdef.name) is not None, (net_eras or {}).get(netdef.name, era)
        )
    for step in plan.execution_step:
        try:
            _check_step(step, netdefs)
        except Exception as exc:
            raise with_context(exc, "plan '%s'" % plan.name) from exc
    for step in plan.execution_step:
        try:
            _Step(step, ws, netdefs).execute()
        except Exception as exc:
            raise with_context(exc, "plan '%s'" % plan.name) from exc
    return True


def _check_step(step, netdefs):
    """The checks that need no workspace, for ``step`` and its substeps.

    Done for the whole plan before anything is created or run, so a malformed
    plan changes nothing.
    """
    try:
        if step.substep and step.network:
            raise WorkspaceError(
                "An ExecutionStep should either have substep or networks but not both."
            )
        if step.HasField("should_stop_blob") and step.HasField("num_iter"):
            raise WorkspaceError("Must not specify num_iter if should_stop_blob is set")
        if step.HasField("only_once") and not step.HasField("should_stop_blob"):
            raise WorkspaceError("only_once needs should_stop_blob (Caffe2: 'not supported')")
        recurring = [s for s in step.substep if not s.HasField("run_every_ms")]
        if step.HasField("should_stop_blob") and not (step.network or recurring or step.only_once):
            # Caffe2 looped forever here: nothing would ever read the blob.
            raise WorkspaceError(
                "should_stop_blob '%s' is set but the step has no nets or substeps "
                "to run, so it would never stop" % step.should_stop_blob
            )
        if step.HasField("report_net") and not step.HasField("report_interval"):
            raise WorkspaceError("A report_interval must be provided if report_net is set.")
        names = list(step.network) + ([step.report_net] if step.HasField("report_net") else [])
        for name in names:
            if name not in netdefs:
                raise WorkspaceError(
                    "ExecutionStep %s uses undefined net %s (the plan defines: %s)"
                    % (step.name, name, ", ".join(sorted(netdefs)) or "no nets")
                )
        for substep in step.substep:
            _check_step(substep, netdefs)
    except Exception as exc:
        raise with_context(exc, "step '%s'" % step.name) from exc


class _PlanNet:
    """A net of the plan: its NetDef, whether it replaces one the workspace
    holds, and the era it is created with (None: today's operators)."""

    __slots__ = ("netdef", "needs_override", "era")

    def __init__(self, netdef, needs_override, era=None):
        self.netdef = netdef
        self.needs_override = needs_override
        self.era = era


class _Step:
    """One ExecutionStep: compiled on demand (every time if create_workspace)."""

    def __init__(self, step, ws, netdefs, should_continue=None):
        self.step = step
        self.outer_ws = ws
        self.netdefs = netdefs
        self.should_continue = should_continue
        self._compiled = None
        if not step.create_workspace:
            self._compiled = self._compile()

    def _compile(self):
        try:
            return _CompiledStep(self.step, self.outer_ws, self.netdefs, self.should_continue)
        except Exception as exc:
            raise with_context(exc, "step '%s'" % self.step.name) from exc

    def execute(self):
        compiled = self._compiled or self._compile()  # create_workspace: anew each time
        try:
            compiled.execute()
        except Exception as exc:
            raise with_context(exc, "step '%s'" % self.step.name) from exc


class _CompiledStep:
    """A step bound to its workspace: nets created, substeps compiled.

    ``should_continue`` (Caffe2's ``externalShouldContinue``): asked before
    each iteration; a concurrent parent says no once one of its workers
    failed.
    """

    def __init__(self, step, outer_ws, netdefs, should_continue=None):
        self.step = step
        self.netdefs = netdefs
        self.external = should_continue
        self.failed = threading.Event()
        self.ws = type(outer_ws)(parent=outer_ws) if step.create_workspace else outer_ws
        self.nets = [self._net(name) for name in step.network]
        self.substeps, self.reports = [], []
        inherited = self._no_failure if self._concurrent() else should_continue
        for substep in step.substep:
            periodic = substep.HasField("run_every_ms")
            (self.reports if periodic else self.substeps).append(
                _Step(substep, self.ws, netdefs, inherited)
            )
        self.stop_blob = None
        if step.HasField("should_stop_blob"):
            self.stop_blob = self.ws.get_blob(step.should_stop_blob)
            if self.stop_blob is None:
                raise WorkspaceError(
                    "should_stop_blob %s does not exist (nor does any net of the step "
                    "create it)" % step.should_stop_blob
                )
        self.report_net = self._net(step.report_net) if step.HasField("report_net") else None

    def _net(self, name):
        entry = self.netdefs[name]  # known: _check_step ran
        if entry.needs_override or self.ws.get_net(name) is None:
            self.ws.create_net(entry.netdef, overwrite=True, era=entry.era)
            entry.needs_override = False
        return self.ws.get_net(name)

    def _concurrent(self):
        step = self.step
        recurring = [s for s in step.substep if not s.HasField("run_every_ms")]
        return (step.concurrent_substeps and len(recurring) > 1) or (
            step.num_concurrent_instances > 1
        )

    def _no_failure(self):
        return not self.failed.is_set() and (self.external is None or self.external())

    def keep_going(self, iteration):
        step = self.step
        if self.external is not None and not self.external():
            return False
        if self.stop_blob is None:
            return iteration < (step.num_iter if step.HasField("num_iter") else 1)
        return iteration == 0 if step.only_once else True

    def should_stop(self):
        blob = self.stop_blob
        if blob is None or blob.value is None:
            return False
        value = blob.value
        if not (isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.size == 1):
            raise WorkspaceError(
                "should_stop_blob '%s' expects a scalar boolean, got %s"
                % (blob.name, _describe(value))
            )
        return bool(value.reshape(-1)[0])

    def execute(self):
        concurrent = self.substeps and self._concurrent()
        reporters = self._reporters()
        iteration = 0
        while self.keep_going(iteration):
            if concurrent:
                self._run_concurrently()
                if self.should_stop():
                    break
            elif self._run_sequentially(iteration):
                break
            iteration += 1
            for reporter in reporters:
                reporter.run_if_due()
        for reporter in reporters:  # and once at the end, as Caffe2's did
            reporter.run()
        return True

    def _run_concurrently(self):
        """One iteration: every substep on its own thread(s), all joined."""
        workers = len(self.substeps) * max(self.step.num_concurrent_instances, 1)
        counter = itertools.count()
        errors = []

        def work():
            substep = self.substeps[next(counter) % len(self.substeps)]
            if self.failed.is_set():
                return
            try:
                substep.execute()
            except BaseException as exc:  # noqa: BLE001 - reported by the joining thread
                errors.append(exc)
                self.failed.set()

        threads = [
            # each worker runs in a copy of this thread's context (era, scopes)
            threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True)
            for _ in range(workers)
        ]
        for thread in threads:
            thread.start()
        with blocking.parked():
            for thread in threads:
                thread.join()
        if errors:
            raise WorkspaceError(
                "One of the workers died with an unhandled exception %s" % errors[0]
            ) from errors[0]

    def _run_sequentially(self, iteration):
        """One iteration of the nets or substeps; True if the stop blob said so."""
        units = self.substeps or self.nets
        for unit in units:
            if self.substeps:
                unit.execute()
            else:
                try:
                    unit.run()
                except Exception as exc:
                    raise with_context(exc, "iteration %d" % iteration) from exc
            if self.should_stop():
                return True
        return False

    def _reporters(self):
        reporters = [_Reporter(r.step.run_every_ms / 1000.0, r.execute) for r in self.reports]
        if self.report_net is not None:
            reporters.append(_Reporter(float(self.step.report_interval), self.report_net.run))
        return reporters


class _Reporter:
    """Something to run every ``interval`` seconds, checked between iterations."""

    def __init__(self, interval, run):
        self.interval = interval
        self.run = run
        self.last = time.monotonic()

    def run_if_due(self):
        if time.monotonic() - self.last >= self.interval:
            self.run()
            self.last = time.monotonic()


def _describe(value):
    if hasattr(value, "dtype"):
        return "a %s tensor of shape %s" % (value.dtype, tuple(value.shape))
    return "a %s" % type(value).__name__
