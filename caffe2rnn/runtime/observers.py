"""Net observers: ``TimeObserver`` and ``RunCountObserver`` (Caffe2 042e8ede4).

Caffe2 2017-09 let Python attach an *observer* to a created net
(``net.AddObserver("TimeObserver")``, caffe2/python/pybind_state.cc;
caffe2/observers/time_observer.h, runcnt_observer.{h,cc}). When the net runs,
its observers start; each gives every operator an operator observer, which
starts and stops around that op's run; then the net's observers stop.

* ``TimeObserver``: ``average_time()`` is the mean milliseconds of a net run,
  ``average_time_children()`` the mean over the ops of each op's mean time.
* ``RunCountObserver``: ``debug_info()`` says ``"This operator runs N
  times."``, N counting operator runs — including the step-net operators run
  by a ``RecurrentNetwork`` with its RNN executor, to which Caffe2 handed a
  clone of the recurrent op's observers (recurrent_network_executor.h). So the
  count of a net with an RNN grows with the sequence length.

Other observer methods raise "Observer does not implement this function.", as
in Caffe2. Differences: Caffe2 attached a *new* operator observer at every
run of the net and never removed them, so a second run counted every op
twice and averages mixed runs; here each op has one observer per net
observer, so every run counts once. caffe2rnn's executor is on unless
``enable_rnn_executor=0`` (Caffe2's was off unless 1), and its step ops are
counted whenever it runs.

The step-net hand-over: while an observed operator runs, its operator
observers are *inherited* (:func:`inherited`); the RNN executor runs its
steps op by op through :func:`run_op` then, which runs each step op under
clones of them.
"""

import contextlib
import contextvars
import time

from ..errors import ArgumentError, EnforceNotMet

_inherited = contextvars.ContextVar("caffe2rnn_inherited_observers", default=())


def inherited():
    """The operator observers of the observed operator running now (or ``()``)."""
    return _inherited.get()


def run_op(op):
    """Run ``op`` under clones of the inherited observers (plainly if none)."""
    parents = _inherited.get()
    if not parents:
        op.run()
        return
    observed(op, [parent.clone(op) for parent in parents])


def observed(op, op_observers):
    """Run ``op`` with ``op_observers`` started and stopped around it; ops run
    inside it (step nets) inherit them."""
    for ob in op_observers:
        ob.start()
    token = _inherited.set(tuple(op_observers))
    try:
        op.run()
    finally:
        _inherited.reset(token)
    for ob in op_observers:
        ob.stop()


class Observer:
    """An observer of a net (Caffe2's ``ObserverBase<NetBase>`` in Python)."""

    caffe2_type_name = "caffe2::ObserverBase<caffe2::NetBase>"

    def __init__(self, net):
        self.net = net
        self._op_observers = {}  # id(op) -> this observer's operator observer

    def op_observer(self, op):
        found = self._op_observers.get(id(op))
        if found is None:
            found = self._op_observers[id(op)] = self.make_op_observer(op)
        return found

    def make_op_observer(self, op):
        raise NotImplementedError

    def start(self):
        pass

    def stop(self):
        pass

    def debug_info(self):
        return "Not implemented."

    def average_time(self):
        raise EnforceNotMet("Observer does not implement this function.")

    def average_time_children(self):
        raise EnforceNotMet("Observer does not implement this function.")


class _Timer:
    """Milliseconds summed over start/stop pairs (an operator's observer, and
    the clock of a net's TimeObserver)."""

    def __init__(self, op=None):
        self.op = op
        self.total_ms = 0.0
        self.iterations = 0
        self._start = 0.0

    def clone(self, op):
        return _Timer(op)

    def start(self):
        self._start = time.perf_counter()
        self.iterations += 1

    def stop(self):
        self.total_ms += (time.perf_counter() - self._start) * 1000.0

    def average_time(self):
        """Mean milliseconds per run (NaN before a run, as 0/0 in C++)."""
        return self.total_ms / self.iterations if self.iterations else float("nan")


class TimeObserver(Observer):
    """Times the net's runs and each of its operators'."""

    def __init__(self, net):
        super().__init__(net)
        self._clock = _Timer()

    def make_op_observer(self, op):
        return _Timer(op)

    def start(self):
        self._clock.start()

    def stop(self):
        self._clock.stop()

    def average_time(self):
        """Mean milliseconds per run of the net (NaN before a run, as 0/0 in C++)."""
        return self._clock.average_time()

    def average_time_children(self):
        """Mean, over the net's operators, of each one's mean milliseconds per run."""
        ops = self.net.ops
        if not ops:
            return float("nan")
        return sum(self.op_observer(op).average_time() for op in ops) / len(ops)


class _OpCounter:
    def __init__(self, net_observer):
        self.net_observer = net_observer

    def clone(self, op):
        return self

    def start(self):
        self.net_observer.count += 1

    def stop(self):
        pass


class RunCountObserver(Observer):
    """Counts operator runs, the step nets' run by the RNN executor included."""

    def __init__(self, net):
        super().__init__(net)
        self.count = 0

    def make_op_observer(self, op):
        return _OpCounter(self)

    def debug_info(self):
        return "This operator runs %d times." % self.count


#: The observers Caffe2's Python could attach, by name.
OBSERVER_TYPES = {"TimeObserver": TimeObserver, "RunCountObserver": RunCountObserver}


def add_observer(net, observer_type):
    """Attach a new observer of ``observer_type`` to the NetInstance ``net``."""
    cls = OBSERVER_TYPES.get(observer_type)
    if cls is None:  # CAFFE_ENFORCE(observer != nullptr) in Caffe2
        raise ArgumentError(
            "unknown observer type %r (known: %s)" % (observer_type, ", ".join(OBSERVER_TYPES))
        )
    observer = cls(net)
    if not isinstance(net.observers, list):
        net.observers = []
    net.observers.append(observer)
    return observer


def remove_observer(net, observer):
    """Detach ``observer`` from ``net`` (nothing happens if it is not attached)."""
    with contextlib.suppress(ValueError):
        net.observers.remove(observer)


def run_ops_observed(net):
    """Run the ops of the NetInstance ``net`` with its observers started around
    the run and each op under its operator observers; yields each op's index
    before it runs (for the net's error report)."""
    watching = list(net.observers)
    for ob in watching:
        ob.start()
    for index, op in enumerate(net.ops):
        yield index
        observed(op, [ob.op_observer(op) for ob in watching])
    for ob in watching:
        ob.stop()
