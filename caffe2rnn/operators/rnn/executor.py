"""The RNN executor: a recurrent op's time loop as a plan of bound kernel calls.

Caffe2 2017-08 (``enable_rnn_executor``; ``caffe2/operators/
recurrent_network_executor.h`` at 042e8ede4) gave ``RecurrentNetwork`` and its gradient an
executor of their own: instead of running the step net as a net once per
timestep, it kept one operator instance per (timestep, op) and ran those
directly, which in C++ removed the net's per-step cost and let ops of
different timesteps run on several threads (:mod:`.schedule` does that
here). Its results were defined to be those of the plain loop.

Here the per-step cost that matters is Python's: about 1.8 µs of dispatch per
operator run (reading blobs, validating shapes, making 2-D views) around
kernels that take 1-3 µs at a step net's sizes. The executor removes it:

* **Build** (the first run, and again whenever something it relies on
  changed): run the loop op by op exactly as without the executor, and after
  each op ask it for its *bound calls* (:meth:`Operator.bind
  <caffe2rnn.operators.base.Operator.bind>`): zero-argument calls of a NumPy
  function or a compiled kernel on the very arrays that run read and wrote at
  that timestep (the link views into the state tensors included), each
  declaring what it reads, writes and costs
  (:class:`~caffe2rnn.operators.bound_call.BoundCall`). An op without a
  compiled form gives ``None`` and enters the plan as its own ``run`` (a
  *fallback*). The list of all of them is the loop's :class:`StepPlan`.
* **Run** (every later run): check the *guards* — each blob the plan reads
  from outside itself still holds the array it was built with — then call
  the plan's list in order (:func:`caffe2rnn.kernels.rnn_executor.run_step_plan`,
  compiled in ``_ext/rnn_executor.pyx``). No blob lookup, no validation, no
  view making: the kernels' own work and one C-level call each. Link views
  and timesteps the build already left in their step workspaces are not set
  again (:func:`.steady.steady_calls`).

Every bound call is the same NumPy call or kernel, on the same arrays, in the
same order as the op's ``run``, so results are bit-identical to the op-by-op
loop (``tests/rnn/test_executor.py`` checks outputs and every gradient).

A plan is rebuilt when a guard fails (a new array fed into an input or a
parameter, another sequence length or batch size, another kernel path) --
unless the plan before it fits: the executor keeps the last two plans of a
kernel path, because ``RunNet``'s rollback journal hands an input written
whole (``FC``'s output) two arrays in turn (:mod:`caffe2rnn.runtime.rollback`).
Going back to the other plan, its link views are put back into the step
workspaces (:mod:`.plan_pair`), which are then as its build left them; and
the second plan is derived from the first (the views into the old array
moved to the new one), not built op by op. A
fallback op whose output is a different array from one run to the next (so
bound calls after it would read a stale one) is detected after it runs: the
loop finishes op by op, and after two such runs the executor stays off for
that op. ``docs/concepts/rnn-executor.md`` explains it with an example.

The names say *step* plan on purpose: Caffe2's ``core.Plan`` and
:func:`caffe2rnn.runtime.plan.run_plan` are a different thing (a list of
execution steps over whole nets); a :class:`StepPlan` is one recurrent op's
time loop.
"""

import array
import concurrent.futures
import contextlib
import gc
import threading

from ... import kernels
from ...errors import op_context
from ...runtime import observers
from ...runtime.net import with_context
from ..bound_call import ASSIGN, BoundCall
from . import derive, fusion, plan_pair, schedule
from .steady import steady_calls
from .step_net import CheckedOnce, get_or_create_net
from .step_workspaces import update_timestep_blob

#: How many plans may go stale through a fallback op's changing output
#: before the executor gives up on that op (it then runs op by op).
MAX_STALE_PLANS = 2

#: The steps (in loop order) built op by op to learn how later steps' calls
#: follow from the timestep and step workspace: a template from the first two,
#: checked against the third (:mod:`.derive`). Step 0 is not among them: the
#: first step of a loop may differ (initial states).
LEARN_STEPS = (1, 2, 3)

#: A loop of fewer steps than this runs op by op on its executor's first run
#: and builds its plan on the second: with no step to derive (LEARN_STEPS),
#: building costs 2-3x the op-by-op loop, for nothing if the op runs once (a
#: gradient check's probe). Longer loops build at once (derived steps).
BUILD_ON_FIRST_RUN_FROM = LEARN_STEPS[-1] + 2

#: Plans kept per kernel path: the one in use and the one before it
#: (``RunNet`` alternates a swapped input between two arrays).
PLANS_KEPT = 2


class _PlanStale(Exception):
    """A fallback op left a different array in a blob that bound calls read."""


class _Fallback(BoundCall):
    """A plan entry for an op with no compiled form: its ``run``, then a check
    that the outputs bound calls read are still the arrays they were bound to.
    It declares no reads or writes (its ``run`` reads blobs, not arrays): a
    barrier to the scheduler, and a reason to keep every call (:func:`.steady.steady_calls`)."""

    __slots__ = ("blobs", "arrays")

    def __init__(self, op):
        super().__init__(op.run, (), "run", None, None, label="run()  (no compiled form)")
        self.blobs, self.arrays = [], []

    def __call__(self):
        self.func()
        for blob, value in zip(self.blobs, self.arrays):
            if blob.value is not value:
                raise _PlanStale()


def _compile(plan, calls):
    """``calls`` (of ``plan``) compiled (the kernel path's ``compile_calls``);
    those compiled when a derived step ran are taken as they are."""
    known, plan.compiled = plan.compiled, {}
    todo = iter(kernels.current().compile_calls([c for c in calls if id(c) not in known]))
    return [known[id(c)] if id(c) in known else next(todo) for c in calls]


@contextlib.contextmanager
def _no_collections():
    """Building and compiling a plan make T x ops small objects at once:
    without the garbage collector's passes over them (nothing here is
    cyclic) that costs a third less at T >= 1000, and a collection of the
    oldest generation no longer lands in the middle of it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _coalesce(step, calls):
    """Fold a link's assignment into the call before it when that assigns the
    same step's links too: one call and two lists per step instead of a call
    per link (faster, and smaller — a plan holds T of them). True if folded."""
    if len(calls) != 1 or calls[0].name != ASSIGN or not step or step[-1][0].name != ASSIGN:
        return False
    last, (blobs, values) = step[-1][0], calls[0].args
    last.args[0].extend(blobs)
    last.args[1].extend(values)
    return True


def _failure(plan, i, exc):
    """The error the op-by-op loop raises when call ``i`` of ``plan`` raised
    ``exc``. A fused call checks everything before it writes anything, so
    when it raised, its parts (the calls it stands for) run one by one now:
    the first that fails names its op, and the parts before it have done
    what their ops would have done (fusion.py). A fused call that was
    already running as its parts resumes at the part that failed."""
    call, s, j = plan.calls[i], plan.where_step[i], plan.where_op[i]
    t, ws = plan.steps[s]
    done = getattr(exc, "fused_parts_done", 0)  # a fused call run as its parts
    for part, k in (call.parts or [])[done:]:
        try:
            part()
        except Exception as inner:
            inner.__cause__ = exc
            return _fail(inner, t, plan.netdef, k, ws)
    return _fail(exc, t, plan.netdef, None if j < 0 else j, ws)


def _fail(exc, t, netdef, j, ws):
    """The error the op-by-op loop raises for op ``j`` of the step net
    ``netdef`` at timestep ``t``."""
    if j is None:  # creating the step net failed
        return with_context(exc, "timestep %d" % t)
    ws.last_failed_op_net_position = j
    inner = with_context(exc, op_context(netdef.op[j], j, netdef.name, netdef.op))
    inner.__cause__ = exc
    return with_context(inner, "timestep %d" % t)


class StepPlan:
    """The bound calls of one recurrent op's whole time loop and what they
    rely on (not Caffe2's ``core.Plan``, a list of execution steps)."""

    def __init__(self, key, workspaces):
        self.key = key
        self.workspaces = workspaces  # the step-workspace list it was built on
        self.calls = []
        # Per call: its step's index and its op's index (-1: the timestep blob),
        # as two compact arrays (a plan has T x ops of them).
        self.where_step, self.where_op = array.array("l"), array.array("l")
        self.guard_blobs, self.guard_arrays = [], []
        self.prologue = []  # calls made once before each run (op.loop_prologue)
        self.steps = []  # (t, ws) per step
        self.netdef = None  # the step net (its ops name the calls in messages)
        self.fallbacks = 0  # entries that run an op's run() (no compiled form)
        self.steady = None  # indices of the calls made on runs after the build
        self.steady_calls = None  # those calls, compiled (kernels' compile_calls)
        self.compiled = {}  # id(call) -> compiled, for the calls derived steps ran
        self.steady_bound = None  # the same calls as BoundCalls (the scheduler reads them)
        self.schedule = None  # lanes over steady_calls, once run with threads (schedule.py)
        self.lane_calls = None  # per lane, the calls it runs
        self.relink = None  # (other plan's serial, blobs, views): plan_pair.relink
        # (first call, end, calls per step) of the steps derived from a template
        self.derived = None
        self.serial = next(plan_pair.serials)

    def __len__(self):
        return len(self.calls)

    def describe(self, steps=1):
        """The plan's first ``steps`` steps, one line per call: timestep, the op
        it stands for, and the function with the shapes it is bound to. Once
        the plan has run on threads, each line starts with its lane and says
        which call of another lane it waits for (:mod:`.schedule`)."""
        lines = ["once  %-34s %s" % ("(prologue)", c.describe()) for c in self.prologue]
        threaded = self.schedule is not None and not self.schedule.sequential
        steady = set(range(len(self.calls)) if self.steady is None else self.steady)
        where = {}
        if threaded:
            for lane, indices in enumerate(self.schedule.lanes):
                for p, i in enumerate(indices):
                    where[self.steady[i]] = (lane, self.schedule.waits[lane][p])

        def line(i, t, op, text, first=True, count=1):
            if i not in steady and first:  # the build set it; later runs skip it
                text += "  (first run only%s)" % (", all %d" % count if count > 1 else "")
            if not threaded:
                return "t=%-3d %-34s %s" % (t, op, text)
            if i not in steady:
                return "lane -  t=%-3d %-34s %s" % (t, op, text)
            lane, waits = where[i]
            after = ""
            if first and waits:
                after = (
                    "  [after "
                    + ", ".join("lane %d's #%d" % (other, count - 1) for other, count in waits)
                    + "]"
                )
            return "lane %d  t=%-3d %-34s %s%s" % (lane, t, op, text, after)

        for i, (call, s, j) in enumerate(zip(self.calls, self.where_step, self.where_op)):
            if s >= steps:
                break
            t, _ = self.steps[s]
            op = "(timestep blob)" if j < 0 else "#%d %s" % (j, self.netdef.op[j].type)
            texts = call.lines()  # a line per link assigned, per part of a fused call
            n = len(texts)
            if call.part_ops:  # a fused call: the ops it stands for
                types = dict.fromkeys(self.netdef.op[k].type for k in call.part_ops)
                op = "#%d-#%d %s" % (j, call.part_ops[-1], "+".join(types))
            elif n > 1:
                op = "#%d-#%d %s" % (j, j + n - 1, self.netdef.op[j].type)
            for k, text in enumerate(texts):
                lines.append(line(i, t, op if k == 0 else "", text, k == 0, n))
        return "\n".join(lines)


class StepNetExecutor:
    """Runs the time loop of one recurrent op (forward or backward) from a plan.

    ``netdef`` is the (edited) step net, ``era`` the era its instances are
    created with, ``timestep`` the name of the blob to set to t before each
    step (the forward op) or None (the gradient op reads what the forward set).
    """

    def __init__(self, netdef, era=None, timestep=None, num_threads=1):
        self.netdef = netdef
        self.era = era
        self.timestep = timestep
        self.num_threads = max(1, int(num_threads))
        self._pool = None  # this executor's worker threads (lanes 1 ..)
        self.plans = {}  # kernel path -> its plan (bound calls are path-specific)
        self.other_plans = {}  # kernel path -> the plan before it, kept (plan_pair.choose)
        self.stale_plans = 0
        self.builds = 0  # plans built so far (tests and the benchmark read it)
        self.runs = 0  # runs with the executor on (not observed, not disabled)
        self.derivations = 0  # plans derived from another (plan_pair.derive)
        self.disabled_reason = None
        self.checked = CheckedOnce()  # the step net's instances after the first skip its checks

    @property
    def plan(self):
        """The plan of the kernel path in use (None before the first run)."""
        return self.plans.get(kernels.active())

    def run(self, scratch, order, index):
        """Run the step net for each t of ``order`` in step workspace
        ``scratch.step(index(t))``; ``index`` is ``(callable, key)``, the key
        standing for the mapping in the plan's identity."""
        index_of, index_key = index
        if self.disabled_reason is not None or observers.inherited():
            # an observed recurrent op: its observers watch each step op run
            return self._run_op_by_op(scratch, order, index_of, 0)
        self.runs += 1
        if self.runs == 1 and len(order) < BUILD_ON_FIRST_RUN_FROM:
            return self._run_op_by_op(scratch, order, index_of, 0)
        path = kernels.active()
        key = (order, index_key)
        plan = plan_pair.choose(self, path, key, scratch)
        if plan is None:
            plan = self.plans[path] = self._build(scratch, order, index_of, key)
            if not plan.fallbacks and self.builds <= PLANS_KEPT:
                self._release_step_nets(plan)
            return
        for call in plan.prologue:
            call()
        self._choose_steady(plan)
        if self.num_threads > 1 and not plan.fallbacks:
            if plan.schedule is None:
                plan.schedule = schedule.build(plan.steady_bound, self.num_threads)
            if not plan.schedule.sequential:
                return self._run_threaded(plan)
        failed = []
        try:
            kernels.current().run_step_plan(plan.steady_calls, 0, failed)
        except _PlanStale:
            self._finish_stale(scratch, order, index_of, plan, plan.steady[failed[0]])
        except Exception as exc:
            raise _failure(plan, plan.steady[failed[0]], exc) from exc

    @staticmethod
    def _choose_steady(plan):
        """Choose (once) the calls later runs of ``plan`` make, compiled."""
        if plan.steady is None:
            with _no_collections():
                steady, calls = steady_calls(plan)
                plan.steady, plan.steady_bound = steady, calls
                plan.steady_calls = _compile(plan, calls)

    def derive_plan(self, plan):
        """A plan for the arrays ``RunNet``'s journal swapped into blobs
        ``plan`` guards, derived from it (:func:`.plan_pair.derive`), or None."""
        if plan.fallbacks or not plan.steps:
            return None
        self._choose_steady(plan)
        with _no_collections():
            derived = plan_pair.derive(plan, plan.steps[0][1])
        self.derivations += derived is not None
        return derived

    def _run_threaded(self, plan):
        """Run the plan's lanes (:mod:`.schedule`) at once: lane 0 here, the
        others on this executor's threads. Bit-identical to ``run_step_plan``:
        every call waits for the calls whose memory it shares."""
        if plan.lane_calls is None:
            plan.lane_calls = [[plan.steady_calls[i] for i in lane] for lane in plan.schedule.lanes]
        sched, impl = plan.schedule, kernels.current()
        n = len(sched.lanes)
        progress, cond, failed = [0] * n, threading.Condition(), []
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                n - 1, thread_name_prefix="rnn-executor"
            )
        others = [
            self._pool.submit(
                impl.run_lane,
                plan.lane_calls[lane],
                sched.waits[lane],
                sched.signals[lane],
                lane,
                progress,
                cond,
                failed,
            )
            for lane in range(1, n)
            if sched.lanes[lane]
        ]
        impl.run_lane(
            plan.lane_calls[0], sched.waits[0], sched.signals[0], 0, progress, cond, failed
        )
        for future in others:
            future.result()
        if failed:  # the error of the first failing call in plan order
            lane, p, exc = min(failed, key=lambda f: sched.lanes[f[0]][f[1]])
            raise _failure(plan, plan.steady[sched.lanes[lane][p]], exc) from exc

    # --- building -------------------------------------------------------------
    def _build(self, scratch, order, index_of, key):
        """Run the loop op by op, binding each op's calls as it goes — the
        first :data:`LEARN_STEPS` steps; the later ones from calls derived
        from theirs (:mod:`.derive`) when a template fits."""
        self.builds += 1
        plan_steps = [(t, scratch.step(index_of(t))) for t in order]
        plan = StepPlan(key, list(scratch.step_workspaces))
        plan.netdef = self.netdef
        expected = {}  # id(blob) -> the array bound calls expect it to hold
        read_by_calls = set()  # ids of blobs some bound call reads or writes
        fallbacks = []
        prologue = {}
        built = {}  # step -> its calls, for the steps a template is learned from
        template = None
        with _no_collections():
            for s, (t, ws) in enumerate(plan_steps):
                start = len(plan.calls)
                if self.timestep is not None:
                    blob = update_timestep_blob(ws, self.timestep, t)
                    self._expect(plan, expected, blob, blob.value)
                    read_by_calls.add(id(blob))
                    plan.calls.append(BoundCall.timestep(blob.value, t))
                    plan.where_step.append(s)
                    plan.where_op.append(-1)
                if template is not None:
                    if self._run_derived(plan, s, t, ws, template, expected):
                        period = len(plan.calls) - start
                        if plan.derived is None:
                            plan.derived = [start, start, period]
                        if plan.derived[1] == start and plan.derived[2] == period:
                            plan.derived[1] = len(plan.calls)
                        continue
                    template = None  # this step does not fit: op by op from here
                guards = len(plan.guard_blobs)
                try:
                    net = get_or_create_net(ws, self.netdef, self.era, self.checked)
                except Exception as exc:
                    raise _fail(exc, t, None, None, ws) from exc
                plan.steps.append((t, ws))
                step = []  # (call, op index) of this step
                for j, op in enumerate(net.ops):
                    before = [blob.value for blob in op.inputs]
                    try:
                        op.run()
                    except Exception as exc:
                        raise _fail(exc, t, net.proto, j, ws) from exc
                    calls = self._bind(op, before, expected, plan)
                    if calls is None:
                        entry = _Fallback(op)
                        fallbacks.append(entry)
                        for blob in op.outputs:
                            expected[id(blob)] = blob.value
                            entry.blobs.append(blob)
                            entry.arrays.append(blob.value)
                        calls = [entry]
                    else:
                        prologue.update(getattr(op, "loop_prologue", ()))
                        read_by_calls.update(id(b) for b in op.inputs)
                        read_by_calls.update(id(b) for b in op.outputs)
                    if not _coalesce(step, calls):
                        step.extend((call, j) for call in calls)
                step = fusion.fuse(step, backward=self.num_threads == 1)
                for call, j in step:
                    plan.calls.append(call)
                    plan.where_step.append(s)
                    plan.where_op.append(j)
                if s in LEARN_STEPS and not fallbacks and len(plan_steps) > LEARN_STEPS[-1] + 1:
                    # the step workspace's own blobs this step's calls rely on
                    local = [b.name for b in plan.guard_blobs[guards:] if ws.get_blob(b.name) is b]
                    built[s] = (t, ws, step, [n for n in local if ws.has_local_blob(n)])
                    if s == LEARN_STEPS[-1]:
                        template = self._template(built)
        for entry in fallbacks:  # check only what bound calls depend on
            kept = [(b, a) for b, a in zip(entry.blobs, entry.arrays) if id(b) in read_by_calls]
            entry.blobs = [b for b, _ in kept]
            entry.arrays = [a for _, a in kept]
        plan.workspaces = list(scratch.step_workspaces)
        plan.prologue = list(prologue.values())
        plan.fallbacks = len(fallbacks)
        return plan

    def _template(self, built):
        """The template of this loop's steps (:mod:`.derive`), learned from
        the first two of :data:`LEARN_STEPS` and checked against the third,
        or None."""
        first, second, third = (built[s] for s in LEARN_STEPS)
        outputs = {name for op in self.netdef.op for name in op.output}
        template = derive.Template.learn(first[:3], second[:3], outputs)
        if template is None or not template.matches(*third[:3]) or second[3] != third[3]:
            return None
        template.guarded = second[3]  # the blobs each step adds a guard on
        return template

    def _run_derived(self, plan, s, t, ws, template, expected):
        """Step ``s`` from derived calls: its workspace prepared as its ops
        would have left it before they ran, the calls appended to the plan
        and run (the first run's numbers, as later runs will compute them).
        False (nothing run) when the step does not fit the template."""
        try:
            template.prepare(ws)
            calls, guarded = template.calls(t, ws)
        except derive.CannotDerive:
            return False
        plan.steps.append((t, ws))
        for blob in guarded:
            self._expect(plan, expected, blob, blob.value)
        first = len(plan.calls)
        plan.calls.extend(calls)
        plan.where_step.extend([s] * len(calls))
        plan.where_op.extend(template.ops)
        # Compiled now (later runs need them compiled too: plan.compiled keeps them).
        impl = kernels.current()
        compiled = impl.compile_calls(calls)
        plan.compiled.update(zip(map(id, calls), compiled))
        failed = []
        try:
            impl.run_step_plan(compiled, 0, failed)
        except Exception as exc:
            raise _failure(plan, first + failed[0], exc) from exc
        return True

    def _release_step_nets(self, plan):
        """Forget the step workspaces' instances of the step net: a plan with
        no fallback holds the arrays its calls need, not the operators (about
        a third of what a step keeps). A rebuild creates them again, and keeps
        them from then on (a loop that rebuilds often should not pay for
        creating T nets each time)."""
        for _, ws in plan.steps:
            ws.delete_net(self.netdef.name)

    def _bind(self, op, before, expected, plan):
        """``op``'s bound calls after its run, or None (run it as a fallback).

        Records a guard for each blob read from outside the plan; gives up on
        binding when a blob does not hold what the plan expects at this point
        (the op replaced an array the plan had bound earlier).
        """
        if any(b.value is not v for b, v in zip(op.inputs, before)):
            return None  # the op replaced one of its inputs: not bindable
        calls = op.bind()
        if calls is None:
            return None
        if hasattr(op, "assigns"):  # link ops: their outputs are set, not read
            for blob in op.assigns():
                expected[id(blob)] = blob.value
        for blob in list(op.inputs) + list(op.outputs):
            if id(blob) not in expected:
                self._expect(plan, expected, blob, blob.value)
            elif expected[id(blob)] is not blob.value:
                # Changed under the plan by the op's own run (a new array):
                # this op must run live.
                expected[id(blob)] = blob.value
                return None
        return calls

    @staticmethod
    def _expect(plan, expected, blob, value):
        if id(blob) not in expected:
            expected[id(blob)] = value
            plan.guard_blobs.append(blob)
            plan.guard_arrays.append(value)

    # --- the slow paths ---------------------------------------------------------
    def _run_op_by_op(self, scratch, order, index_of, first):
        """The plain loop (no plan) from position ``first`` of ``order``."""
        for t in order[first:]:
            ws = scratch.step(index_of(t))
            if self.timestep is not None:
                update_timestep_blob(ws, self.timestep, t)
            try:
                net = get_or_create_net(ws, self.netdef, self.era, self.checked)
            except Exception as exc:
                raise _fail(exc, t, None, None, ws) from exc
            self._run_ops(net, t, ws, 0)

    @staticmethod
    def _run_ops(net, t, ws, first):
        for j in range(first, len(net.ops)):
            try:
                observers.run_op(net.ops[j])  # op.run(), under any inherited observers
            except Exception as exc:
                raise _fail(exc, t, net.proto, j, ws) from exc

    def _finish_stale(self, scratch, order, index_of, plan, position):
        """A fallback at ``position`` changed an output under the plan: the op
        ran; finish its step and the rest of the loop op by op."""
        s, j = plan.where_step[position], plan.where_op[position]
        t, ws = plan.steps[s]
        net = get_or_create_net(ws, self.netdef, self.era, self.checked)
        self.plans.clear()
        self.other_plans.clear()
        self.stale_plans += 1
        if self.stale_plans >= MAX_STALE_PLANS:
            self.disabled_reason = "%s (%s) writes a new array on every run" % (
                op_context(net.proto.op[j], j, net.name, net.proto.op),
                ", ".join(net.proto.op[j].output),
            )
        self._run_ops(net, t, ws, j + 1)
        self._run_op_by_op(scratch, order, index_of, s + 1)


def create(arguments, netdef, era, timestep):
    """The executor of a recurrent op (``arguments``: its parsed
    :class:`~caffe2rnn.operators.rnn.arguments.RecurrentArguments`), or None
    when it runs op by op (:func:`enabled`)."""
    if not enabled(arguments):
        return None
    return StepNetExecutor(netdef, era, timestep, num_threads=arguments.executor_threads or 1)


def enabled(arguments):
    """Whether a recurrent op runs its loop with the executor (``arguments``:
    the op's :class:`~caffe2rnn.operators.rnn.arguments.RecurrentArguments`).

    ``enable_rnn_executor=1`` turns it on and ``=0`` off, as in Caffe2. Absent,
    it is on: Caffe2's default was off, but there it was a different,
    threaded, code path; here it is the same kernels on the same arrays, so the
    only difference it makes is speed (docs/concepts/rnn-executor.md).
    """
    return arguments.enable_rnn_executor is not False
