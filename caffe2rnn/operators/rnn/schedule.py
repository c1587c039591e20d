"""Which calls of an RNN-executor plan may run at once, and on which thread.

Caffe2's threaded RNN executor (2017-08, ``recurrent_network_executor.h``)
ran the ops of different timesteps concurrently: layer 2 at t while layer 1
runs t + 1, the parameter gradients of step t while step t - 1's backward
goes on. Its rule was the data flow of the step net. Here the rule is the
data flow of the *plan* itself (:mod:`.executor`), which is finer and needs
no knowledge of the cell: every bound call declares which memory it reads
and which it writes (:class:`~caffe2rnn.operators.bound_call.BoundCall`),
and a call must wait for

* the last earlier call that wrote memory it reads (read after write),
* the last earlier call that wrote, and every call since that read, memory
  it writes (write after write, write after read).

Every other pair of calls touches disjoint memory, so running them in either
order — or at the same time — computes the same bits: a threaded run is
bit-identical to the sequential plan by construction, not by luck.

The calls are then dealt to ``num_threads`` *lanes* ahead of time (a list
schedule): each call goes to the lane where it would finish first by a rough
cost model (each call's declared ``cost``: BLAS products by their
multiply-adds, element-wise work by size), paying a fixed :data:`HANDOFF_US`
when it waits for a call on another lane. So small steps, where a handoff
between threads costs more than the work it would overlap, stay on one lane
and the threaded run is the sequential one; big products of independent
steps spread out. The cost model only decides *where* a call runs, never
what it computes.

A lane runs its calls in plan order; where a call depends on another lane it
first waits until that lane has finished the call it needs
(:func:`caffe2rnn.kernels.rnn_executor.run_lane`). Python holds one lock (the
GIL) while it runs Python code; the BLAS products and the compiled kernels
release it, and that is where two lanes really run at once.
"""

import numpy as np

try:  # NumPy >= 2.0
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # pragma: no cover (NumPy 1.x)
    byte_bounds = np.byte_bounds  # type: ignore[attr-defined]

#: Cost, in µs, charged for waiting on a call of another lane (a thread
#: waking up): a call moves to another lane only when that saves more.
HANDOFF_US = 25.0

#: Threads are used only when the cost model predicts at least this share
#: of the sequential time saved (and at least one handoff's worth).
MIN_SAVING = 0.05


def byte_range(array):
    """``(low, high)``: the bytes ``array`` spans, or None when it is empty."""
    low, high = byte_bounds(array)
    return (low, high) if high > low else None


def effects(call):
    """``(reads, writes)`` a bound call declares
    (:class:`~caffe2rnn.operators.bound_call.BoundCall`), each a tuple of
    arrays or blob tokens ``("blob", id)``; None when it declares none (an op
    run as itself): then it is a *barrier* that waits for everything before
    it and holds up everything after it."""
    if call.reads is None:
        return None
    return call.reads, call.writes


class _Memory:
    """Who last wrote, and who read since, each piece of memory seen so far.

    Pieces are byte ranges; most ranges recur exactly (the same view at each
    step of the same workspace), the rest are found through 4 KiB pages.
    """

    PAGE = 12  # log2 of the page size

    def __init__(self):
        self.records = {}  # (low, high) -> [low, high, writer, readers]
        self.pages = {}  # page -> list of records touching it

    def overlapping(self, low, high):
        found = {}
        for page in range(low >> self.PAGE, ((high - 1) >> self.PAGE) + 1):
            for rec in self.pages.get(page, ()):
                if rec[0] < high and low < rec[1]:
                    found[id(rec)] = rec
        return found.values()

    def record(self, low, high):
        rec = self.records.get((low, high))
        if rec is None:
            rec = self.records[(low, high)] = [low, high, -1, []]
            for page in range(low >> self.PAGE, ((high - 1) >> self.PAGE) + 1):
                self.pages.setdefault(page, []).append(rec)
        return rec


def _ranges(items):
    out = []
    for item in items:
        if isinstance(item, tuple):  # a blob token: a range of its own
            out.append((item[1], item[1] + 1, "token"))
        else:
            bounds = byte_range(item)
            if bounds is not None:
                out.append(bounds + ("array",))
    return out


def dependencies(calls):
    """For each call, the sorted indices of the earlier calls it must follow."""
    memory, tokens = _Memory(), _Memory()
    deps = []
    barrier = -1  # the last barrier: everything after follows it
    since_barrier = []  # calls since it (a new barrier follows them all)
    for i, call in enumerate(calls):
        eff = effects(call)
        if eff is None:
            deps.append(sorted(set(since_barrier) | ({barrier} - {-1})))
            barrier, since_barrier = i, []
            continue
        reads, writes = eff
        mine = set() if barrier < 0 else {barrier}
        touched = []
        for kind, items in (("r", reads), ("w", writes)):
            for low, high, space in _ranges(items):
                store = tokens if space == "token" else memory
                for rec in store.overlapping(low, high):
                    if rec[2] >= 0:
                        mine.add(rec[2])
                    if kind == "w":
                        mine.update(rec[3])
                touched.append((kind, store.record(low, high)))
        for kind, rec in touched:
            if kind == "w":
                rec[2], rec[3] = i, []
        for kind, rec in touched:
            if kind == "r" and rec[2] != i:
                rec[3].append(i)
        mine.discard(i)
        deps.append(sorted(mine))
        since_barrier.append(i)
    return deps


class Schedule:
    """A plan's calls dealt to lanes: ``lanes[l]`` the plan indices lane l
    runs, in order; ``waits[l][p]`` None or ``((lane, count), ...)``: before
    its p-th call lane l waits until each such lane has finished ``count``
    calls; ``signals[l][p]`` whether another lane waits for that call."""

    def __init__(self, n_lanes):
        self.lanes = [[] for _ in range(n_lanes)]
        self.waits = [[] for _ in range(n_lanes)]
        self.signals = [[] for _ in range(n_lanes)]

    @property
    def sequential(self):
        """True when every call is on lane 0 (nothing worth a thread)."""
        return not any(self.lanes[1:])

    @property
    def handoffs(self):
        """How many times a lane waits for another in one run."""
        return sum(w is not None for waits in self.waits for w in waits)


def build(calls, num_threads, deps=None):
    """Deal ``calls`` (a plan's, in order) to ``num_threads`` lanes."""
    deps = dependencies(calls) if deps is None else deps
    n = max(1, int(num_threads))
    schedule = Schedule(n)
    lane_of, position, finish = [0] * len(calls), [0] * len(calls), [0.0] * len(calls)
    total = 0.0
    free = [0.0] * n
    # known[l][m]: how many calls of lane m lane l already waited for.
    known = [[0] * n for _ in range(n)]
    for i, call in enumerate(calls):
        work = call.cost
        total += work
        # Stay on the lane of the dependency that finishes last (lane 0 when
        # there is none) unless another lane finishes sooner by a handoff.
        home = lane_of[max(deps[i], key=finish.__getitem__)] if deps[i] else 0
        best = None
        # Only a call that runs without Python's lock can really run beside
        # another lane; the rest stay on the lane their data comes from.
        for lane in range(n) if call.releases_gil else (home,):
            start = free[lane]
            for d in deps[i]:
                ready = finish[d] + (HANDOFF_US if lane_of[d] != lane else 0.0)
                start = max(start, ready)
            score = start + work + (HANDOFF_US if lane != home else 0.0)
            if best is None or score < best[0]:
                best = (score, lane, start + work)
        _, lane, end = best
        need = {}
        for d in deps[i]:
            other = lane_of[d]
            if other != lane and position[d] + 1 > known[lane][other]:
                need[other] = max(need.get(other, 0), position[d] + 1)
        for other, count in need.items():
            known[lane][other] = count
            schedule.signals[other][count - 1] = True
        lane_of[i], position[i], finish[i] = lane, len(schedule.lanes[lane]), end
        free[lane] = end
        schedule.lanes[lane].append(i)
        schedule.waits[lane].append(tuple(sorted(need.items())) or None)
        schedule.signals[lane].append(False)
    makespan = max(finish, default=0.0)
    if total - makespan < max(MIN_SAVING * total, HANDOFF_US):
        return sequential(len(calls), n)  # threads would not pay for themselves
    return schedule


def sequential(n_calls, n_lanes=1):
    """Every call on lane 0, in order."""
    schedule = Schedule(n_lanes)
    schedule.lanes[0] = list(range(n_calls))
    schedule.waits[0] = [None] * n_calls
    schedule.signals[0] = [False] * n_calls
    return schedule
