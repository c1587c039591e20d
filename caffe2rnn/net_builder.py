"""``caffe2.python.net_builder``: nets, loops and conditions written as Python blocks.

Caffe2's ``NetBuilder`` (929c33cee, E7; the control-op builders arrived with
d72d83528, 2017-09) lets a program build what it wants to run with ``with``
blocks; ``ops.X(...)`` adds an operator ``X`` to the builder's current net::

    from caffe2.python.net_builder import NetBuilder, ops
    with NetBuilder() as nb:
        ops.Const(0.5, blob_out="x")
        ops.Const(0.0, blob_out="y")
        with ops.IfNet(ops.GT(["x", ops.Const(0.0)])):
            ops.Copy(ops.Const(1.0), "y")
        with ops.Else():
            ops.Copy(ops.Const(-1.0), "y")
    plan = core.Plan("p"); plan.AddStep(core.to_execution_step(nb))
    workspace.RunPlan(plan)                       # y == 1.0

A builder collects *children* (nets, inner builders) and becomes an
execution step (:func:`caffe2rnn.core.to_execution_step`). Two ways to
express control flow:

* **with execution steps** (the original design): ``ops.stop_if(blob)`` ends
  the current step when ``blob`` is true (the builder's *stop blob*, an
  ``Or`` of the conditions); ``ops.loop(n)`` repeats a block (until a stop,
  or ``n`` times), ``ops.If``/``Elif``/``Else`` run a block once or not at all
  (a stop blob set from the condition), ``ops.stop_guard()`` records whether
  a block stopped early;
* **with control operators** (``_use_control_ops=True``, and the blocks
  ``ops.IfNet``/``ops.Else``, ``ops.WhileNet``/``ops.Condition``): every
  block becomes ``If``/``While`` ops over ``Do`` sub-nets
  (:func:`caffe2rnn.control_ops_util.add_if_op`/``add_while_op``), and the
  whole builder one net -- which has a gradient
  (:mod:`caffe2rnn.control_ops_grad`).

**Lexical scope.** A builder knows which blob names exist at each point (used
by the nets before it, in its parents, or ``initial_scope``). In a control-op
block a blob first written inside is *local* (its ``Do`` workspace, gone
after the block), one of the enclosing scope is shared, and reading a blob in
no scope is an error when the block is built.

The task operations (``ops.task_group``, ``task_init``...) build Caffe2's
``task.Task``/``TaskGroup``, which caffe2rnn does not implement: they work
when :mod:`caffe2rnn.compat` loads ``caffe2/python/task.py`` from a Caffe2
checkout, and otherwise say so.
"""

import importlib
import threading

from . import core
from .control_ops_util import add_if_op, add_while_op
from .errors import BuildError


def _check(condition, message):
    """Caffe2 asserted these; a :class:`~caffe2rnn.errors.BuildError` (an AssertionError) here."""
    if not condition:
        raise BuildError(message)


class _Active(threading.local):
    """The builders whose ``with`` blocks are open, innermost last (per thread)."""

    def __init__(self):
        self.stack = []


_active = _Active()


def _caffe2_task():
    """Caffe2's ``task`` module (Task, TaskGroup), from a Caffe2 checkout."""
    try:
        return importlib.import_module("caffe2.python.task")
    except ImportError as exc:
        raise BuildError(
            "this NetBuilder operation builds Caffe2's task.Task / TaskGroup, which caffe2rnn "
            "does not implement; install caffe2rnn.compat with a Caffe2 checkout "
            "(compat.install(checkout=...)) so that caffe2.python.task is Caffe2's own (%s)" % exc
        ) from None


class NetBuilder:
    """A block of a program to run: nets and inner blocks (module docstring).

    ``name``: the builder's name (joined to its parents' with ``/``);
    ``initial_scope``: blob names that exist before it. The underscored
    arguments are for the inner builders: ``_use_control_ops`` builds control
    operators and one net.
    """

    def __init__(
        self,
        name=None,
        initial_scope=None,
        _stop_blob_required=False,
        _stop_blob=None,
        _fullname=None,
        _use_control_ops=False,
    ):
        parent = NetBuilder.current(required=False)
        _check(not _fullname or not name, "Cannot set both _fullname and name")
        _check(
            not _use_control_ops or (not _stop_blob_required and not _stop_blob),
            "Stop blobs are not used with control operators",
        )
        self.name = _fullname or "/".join(n for n in (parent.name if parent else None, name) if n)
        self._frozen = False
        self._current_net = None
        self._children = []
        if parent:
            parent._update_lexical_scope()
        self._init_lexical_scope = set(parent._lexical_scope) if parent else set()
        if initial_scope:
            self._init_lexical_scope |= {str(b) for b in initial_scope}
        self._lexical_scope = set(self._init_lexical_scope)
        self._stop_blob = _stop_blob
        self._stop_blob_required = _stop_blob_required
        self._use_control_ops = _use_control_ops

    # -- the active builder ---------------------------------------------------------
    @classmethod
    def current(cls, value=None, required=True):
        """The innermost open builder (``value`` if given); None or a
        BuildError when there is none."""
        if value is not None:
            _check(isinstance(value, cls), "Wrong context type. Expected: %s" % cls.__name__)
            return value
        if _active.stack:
            return _active.stack[-1]
        _check(not required, "Context NetBuilder not active.")
        return None

    def __enter__(self):
        _active.stack.append(self)
        return self

    def __exit__(self, etype, *args):
        _active.stack.pop()
        if self._use_control_ops and self._children:
            children = self._children
            self._reset_children()
            merged = NetBuilder.merge_nets(children, self._lexical_scope)
            _check(merged, "Expected a non-empty merge of children")
            self._children = [merged]
        self.freeze()
        if etype is not None:
            return
        _check(
            not self._stop_blob_required or self._stop_blob is not None,
            "This NetBuilder (%s) requires a stop condition to be set with `stop` or `stop_if`"
            % self.name,
        )

    # -- stop blobs -------------------------------------------------------------------
    def stop_blob(self):
        """The bool blob that ends this builder's step when true; made (False)
        on first use, by an extra first net if the current net is not the first."""
        _check(not self._use_control_ops, "Stop blobs are not used with control operators")
        if self._stop_blob is None:
            net = self.current_net()
            self._stop_blob = core.BlobReference(net.NextName("stop_blob"), net=net)
            net.Const(False, blob_out=self._stop_blob)
            if self._current_net != self._children[0]:
                self._children.insert(0, core.Net("stop_blob_init"))
                self._children[0].Const(False, blob_out=self._stop_blob)
        return self._stop_blob

    def stop_if(self, blob):
        _check(not self._use_control_ops, "Stop blobs are not used with control operators")
        stop_blob = self.stop_blob()
        ops.Or([stop_blob, blob], [stop_blob])
        self._current_net = None

    # -- children ---------------------------------------------------------------------
    def _assert_mutable(self):
        _check(not self._frozen, "This NetBuilder (%s) has been built already." % self.name)

    def _update_lexical_scope(self):
        """The names in scope: the initial ones, every blob the child nets use,
        and the scope of child control-op builders."""
        self._lexical_scope = set(self._init_lexical_scope)
        for child in self._children:
            if isinstance(child, core.Net):
                self._lexical_scope |= child.UsedBlobNames()
            elif isinstance(child, NetBuilder) and child._use_control_ops:
                self._lexical_scope |= child._lexical_scope

    def _reset_children(self):
        self._current_net = None
        self._children = []
        self._lexical_scope = set(self._init_lexical_scope)

    def add(self, child):
        """Append a net or an inner builder (or anything ``to_execution_step`` takes)."""
        self._assert_mutable()
        if self._use_control_ops:
            _check(
                isinstance(child, core.Net)
                or (isinstance(child, NetBuilder) and child._use_control_ops),
                "Expected Net or NetBuilder with control ops",
            )
        self._current_net = None
        self._children.append(child)
        if isinstance(child, core.Net):
            self._current_net = child
        self._update_lexical_scope()
        return child

    def current_net(self, name=None):
        """The net ``ops.X`` adds to: the last child if it is a net, else a new one."""
        self._assert_mutable()
        if self._current_net is None or name is not None:
            self.add(core.Net(name))
        return self._current_net

    def freeze(self):
        for child in self._children:
            if hasattr(child, "freeze"):
                child.freeze()
        self._current_net = None
        self._frozen = True

    def get(self):  # the children, frozen: nothing can be added any more
        self.freeze()
        return self._children

    def execution_step_parts(self):
        """What :func:`caffe2rnn.core.to_execution_step` makes a step of: the
        children, and the stop blob (or None)."""
        return self.get(), self._stop_blob

    @staticmethod
    def merge_nets(nets_or_builders, outer_blob_names):
        """One net of the nets (and control-op builders' nets), appended in order;
        its external outputs only those in ``outer_blob_names`` (a blob an inner
        block writes may be local to this one)."""
        net = None
        for child in nets_or_builders:
            if isinstance(child, NetBuilder):
                _check(
                    child._use_control_ops, "Merging of NetBuilder supported only for control ops"
                )
                nets = child.get()
                _check(
                    len(nets) == 1 and isinstance(nets[0], core.Net),
                    "Invalid control op net builder",
                )
                child = nets[0]
            _check(isinstance(child, core.Net), "Expected a Net, got %s" % type(child).__name__)
            if net:
                net.AppendNet(child)
            else:
                net = child
        if net:
            outputs = [o for o in net.Proto().external_output if o in outer_blob_names]
            net.Proto().external_output[:] = outputs
        return net

    def __str__(self):
        return self.name or "Un-named NetBuilder"


class Operations:
    """``ops``: operations in the active NetBuilder; ``ops.X(...)`` adds op X to its current net."""

    def net(self, net=None, name=None):
        """The current net; ``net``: add it to the builder; ``name``: start a new net."""
        _check(name is None or net is None, "Cannot provide both `net` and `name`.")
        if net is not None:
            NetBuilder.current().add(net)
            return net
        return NetBuilder.current().current_net(name=name)

    def __getattr__(self, op_type):
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        if NetBuilder.current(required=False) is None:  # hasattr(ops, X) works outside
            raise AttributeError("No active NetBuilder.")
        return getattr(self.net(), op_type)

    def stop(self):  # end the current step here
        return self.stop_if(ops.Const(True))

    def stop_if(self, blob):  # ... if the scalar bool ``blob`` is true
        return NetBuilder.current().stop_if(blob)

    def loop(self, iters=None, name=None):
        """A block run repeatedly: ``iters`` times (a number or a blob), else until a stop."""
        return NetBuilder.current().add(_Loop(iters, name=name))

    def stop_guard(self, has_stopped_blob=None, name=None):
        """A block run once; its ``has_stopped()`` blob says whether it stopped early."""
        return NetBuilder.current().add(_StopGuard(has_stopped_blob=has_stopped_blob, name=name))

    def If(self, cond, name=None):
        """A block run once if ``cond`` is true (execution steps); ``.Elif``, ``.Else``."""
        return NetBuilder.current().add(_RunIf(cond, name=name))

    def IfNet(self, cond, name=None):  # a block run if ``cond`` is true, as an If op
        return NetBuilder.current().add(_RunIfNet(cond, name=name))

    def Else(self, name=None):  # the else block of the IfNet just before it
        return _RunElseNet(name=name)

    def WhileNet(self, name=None):
        """A loop as a ``While`` operator; its first block is ``ops.Condition()``."""
        return NetBuilder.current().add(_RunWhileNet(name=name))

    def Condition(self, name=None):
        """The loop's condition (in a WhileNet, before the body): run before each
        iteration; its last op's single output is the condition."""
        _check(
            isinstance(NetBuilder.current(), _RunWhileNet), "Use of Condition outside of WhileNet"
        )
        return _RunWhileCondition(name=name)

    # -- Caffe2's tasks (caffe2/python/task.py, from a checkout) -----------------------
    def task_group(self):
        """A local task group run as the next step of the current builder."""
        task = _caffe2_task()
        group = NetBuilder.current()
        with task.Cluster(), task.Node("local"):
            tg = task.TaskGroup()
            group.add(tg)
            return tg

    def _setup(self, kind, attribute, name=None):
        setup = _SetupBuilder(kind, name)
        self.net().add_attribute(attribute, setup)
        return setup

    def task_init(self):  # ops run once when the task starts
        return self._setup(_SetupBuilder.INIT, _caffe2_task().Task.TASK_SETUP)

    def task_exit(self):  # ... once when it ends
        return self._setup(_SetupBuilder.EXIT, _caffe2_task().Task.TASK_SETUP)

    def task_instance_init(self):  # ... when each instance of the task starts
        return self._setup(_SetupBuilder.INIT, _caffe2_task().Task.TASK_INSTANCE_SETUP)

    def task_instance_exit(self):  # ... when each instance ends
        return self._setup(_SetupBuilder.EXIT, _caffe2_task().Task.TASK_INSTANCE_SETUP)

    def local_init(self):  # ... once per node when the task group starts
        return self._setup(_SetupBuilder.INIT, _caffe2_task().TaskGroup.LOCAL_SETUP)

    def local_exit(self, name=None):  # ... once per node when the group ends
        return self._setup(_SetupBuilder.EXIT, _caffe2_task().TaskGroup.LOCAL_SETUP, name)

    def task_reporter(self, interval_ms=1000, name=None):  # every interval_ms in a task
        return _ReporterBuilder(interval_ms, net=self.net(), name=name)

    def local_reporter(self, interval_ms=1000, name=None):  # ... while any task of the group runs
        return _ReporterBuilder(interval_ms, name=name)


ops = Operations()


class _ReporterBuilder(NetBuilder):
    def __init__(self, interval_ms, net=None, name=None):
        NetBuilder.__init__(self, name)
        self._net = net
        self.interval_ms = interval_ms

    def __exit__(self, etype, *args):
        if etype is None:
            task = _caffe2_task()
            step = core.to_execution_step(self)
            step.RunEveryMillis(self.interval_ms)
            if self._net:
                self._net.add_attribute(task.Task.REPORT_STEP, step)
            else:
                task.TaskGroup.current().report_step(step, interval_ms=self.interval_ms)
        NetBuilder.__exit__(self, etype, *args)


class _SetupBuilder(NetBuilder):
    INIT = "init"
    EXIT = "exit"

    def __init__(self, type, name=None):  # noqa: A002 - Caffe2's argument name
        NetBuilder.__init__(self, name)
        self.type = type

    def setup(self, net):
        if self.type == _SetupBuilder.INIT:
            return core.to_execution_step(self)
        return None

    def exit(self, net):
        if self.type == _SetupBuilder.EXIT:
            return core.to_execution_step(self)
        return None


class _RunOnce(NetBuilder):
    """A block that runs once: a stop inside it ends only this block."""

    def __exit__(self, etype, *args):
        if etype is None and self._stop_blob is not None:
            ops.stop()
        NetBuilder.__exit__(self, etype, *args)


class _StopGuard(_RunOnce):
    def __init__(self, has_stopped_blob=None, name=None):
        _RunOnce.__init__(self, name)
        self._stopped = has_stopped_blob
        self._ran = False

    def __enter__(self):
        entered = _RunOnce.__enter__(self)
        self._stopped = ops.Const(True, blob_out=self._stopped)
        return entered

    def __exit__(self, etype, *args):
        if etype is None:
            self._ran = True
            ops.Const(False, blob_out=self._stopped)
        _RunOnce.__exit__(self, etype, *args)

    def has_stopped(self):
        """A bool blob: True after the block ran iff it stopped early."""
        _check(self._ran, "Context not used yet.")
        return self._stopped


class _Loop(NetBuilder):
    def __init__(self, iters=None, name=None):
        NetBuilder.__init__(self, name, _stop_blob_required=True)
        if iters is not None:
            self._inc = ops.Const(1)
            self._iter = ops.Const(0)
            self._num_iters = iters if isinstance(iters, core.BlobReference) else ops.Const(iters)
        else:
            self._num_iters = None

    def iter(self):
        """The blob counting this loop's iterations (0, 1, ...)."""
        _check(self._num_iters is not None, "This loop does not have a number of iterations.")
        return self._iter

    def __enter__(self):
        builder = NetBuilder.__enter__(self)
        if self._num_iters is not None:
            ops.stop_if(ops.GE([self._iter, self._num_iters]))
        return builder

    def __exit__(self, etype, *args):
        if etype is None and self._num_iters is not None:
            self.current_net().Add([self._iter, self._inc], [self._iter])
        NetBuilder.__exit__(self, etype, *args)


class _RunIf(_RunOnce):
    def __init__(self, cond_blob=None, name=None, _already_ran=None):
        _RunOnce.__init__(self, name)
        _check(cond_blob or _already_ran, "an If block needs a condition")
        self._is_else = cond_blob is None
        if _already_ran is None:
            self._else_blob = ops.Not(cond_blob)
            self._already_ran = ops.Const(False)
        else:
            self._already_ran = _already_ran
            self._else_blob = (
                _already_ran if cond_blob is None else ops.Or([_already_ran, ops.Not(cond_blob)])
            )

    def __enter__(self):
        entered = _RunOnce.__enter__(self)
        ops.stop_if(self._else_blob)
        ops.Const(True, blob_out=self._already_ran)
        return entered

    def Elif(self, cond, name=None):
        _check(not self._is_else, "Else not allowed for an Else.")
        return NetBuilder.current().add(
            _RunIf(cond, name=name or self.name, _already_ran=self._already_ran)
        )

    def Else(self, name=None):
        _check(not self._is_else, "Elif not allowed for an Else.")
        return NetBuilder.current().add(
            _RunIf(name=name or self.name, _already_ran=self._already_ran)
        )


class _RunIfNet(NetBuilder):
    """The then-block of an ``If`` operator; the If net itself once it is closed."""

    def __init__(self, cond_blob, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        _check(cond_blob, "Conditional blob is not specified for an If net")
        self._cond_blob = cond_blob
        self._then_net = None
        self._else_net = None

    def __exit__(self, etype, *args):
        if etype is None:
            then_nets = self._children
            self._reset_children()
            self._then_net = NetBuilder.merge_nets(then_nets, self._lexical_scope)
            if not self._then_net:
                self._then_net = core.Net("empty_then_net")
            if_net = core.Net(self.name + "/if_net")
            add_if_op(if_net, self._cond_blob, self._lexical_scope, self._then_net, self._else_net)
            self._current_net = if_net
            self._children = [if_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunElseNet(NetBuilder):
    """The else-block of the IfNet just closed: on closing, the If net is rebuilt with it."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        parent = NetBuilder.current(required=False)
        _check(
            parent and parent._children and isinstance(parent._children[-1], _RunIfNet),
            "Invalid use of Else builder",
        )
        self._if_builder = parent._children[-1]

    def __exit__(self, etype, *args):
        if etype is None:
            else_nets = self._children
            self._reset_children()
            if_builder = self._if_builder
            if_builder._else_net = NetBuilder.merge_nets(else_nets, self._lexical_scope)
            if if_builder._else_net:
                if_else_net = core.Net(self.name + "/if_else_net")
                add_if_op(
                    if_else_net,
                    if_builder._cond_blob,
                    self._lexical_scope,
                    if_builder._then_net,
                    if_builder._else_net,
                )
                if_builder._current_net = if_else_net
                if_builder._children = [if_else_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunWhileNet(NetBuilder):
    """The body of a ``While`` operator (after its ``Condition`` block)."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        self._cond_builder = None

    def __exit__(self, etype, *args):
        if etype is None:
            _check(self._cond_builder, "Condition builder must be specified in While op")
            cond_blob = self._cond_builder._cond_blob
            cond_net = self._cond_builder._cond_net
            body = self._children
            self._reset_children()
            body_net = NetBuilder.merge_nets(body, self._lexical_scope)
            if not body_net:
                body_net = core.Net("empty_loop_body_net")
            while_net = core.Net(self.name + "/while_net")
            add_while_op(while_net, cond_blob, self._lexical_scope, body_net, cond_net)
            self._current_net = while_net
            self._children = [while_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunWhileCondition(NetBuilder):
    """A While's condition: its last op has one output, the condition blob;
    nothing else it makes is visible outside it."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        parent = NetBuilder.current(required=False)
        _check(parent and isinstance(parent, _RunWhileNet), "Invalid use of loop condition builder")
        _check(not parent._cond_builder, "Multiple loop condition builders specified")
        _check(
            len(parent._children) == 0,
            "Condition definition must be specified before the loop's body",
        )
        parent._cond_builder = self
        self._cond_blob = None
        self._cond_net = None

    def __exit__(self, etype, *args):
        if etype is None:
            body = self._children
            self._reset_children()
            self._cond_net = NetBuilder.merge_nets(body, self._lexical_scope)
            _check(self._cond_net, "Invalid loop condition specified")
            _check(len(self._cond_net.Proto().op) > 0, "Invalid condition net")
            last_op = self._cond_net.Proto().op[-1]
            _check(len(last_op.output) == 1, "Invalid condition net")
            self._cond_blob = core.BlobReference(name=last_op.output[0], net=None)
            self._current_net = self._cond_net
            self._children = [self._cond_net]
        NetBuilder.__exit__(self, etype, *args)
