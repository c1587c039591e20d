"""Which calls of a built step plan later runs make (:mod:`.executor`).

The run that builds a plan leaves every step workspace holding its link views
and its timestep; later runs need to repeat only what something reads or what
several calls set (:func:`steady_calls`).
"""

import array
import bisect
from collections import Counter
from itertools import chain

from ..bound_call import ASSIGN, TIMESTEP, BoundCall
from . import schedule


def steady_calls(plan):
    """``(indices, calls)``: the calls a run makes once the plan is built.

    The build ran every op, so each step workspace already holds its link
    views and its timestep. Bound calls hold their arrays, not their blobs,
    so on later runs a link assignment or a timestep write matters only for
    what it leaves behind, unless a call reads that memory (or an op without
    a compiled form reads blobs: then every call stays). Something set by one
    call only (a step workspace per timestep) is already in place: skipped.
    Something set by several (a blob shared by all steps, forward-only
    workspaces cycled over) is set by its last setter, so the loop leaves
    what the op-by-op loop leaves.
    """
    everything = array.array("l", range(len(plan.calls))), list(plan.calls)
    if plan.fallbacks:
        return everything
    # What each call sets (None: it computes), read off the setters only; an
    # assignment's blobs stand for themselves (its ``sets``, the blobs' tokens,
    # would make a tuple per blob).
    targets = [
        None if call._sets is None else call.args[0] if call.name == ASSIGN else call.sets
        for call in plan.calls
    ]
    things_set = list(chain.from_iterable(filter(None, targets)))
    setters = Counter(things_set)
    if _reads_a_timestep(plan.calls, targets):
        return everything
    computing = [i for i, t in enumerate(targets) if t is None]
    if len(setters) == len(things_set):  # each thing set by one call only: all in place
        indices = array.array("l", computing)
        return indices, list(map(plan.calls.__getitem__, indices))
    last_setter = {x: i for i, t in enumerate(targets) if t is not None for x in t}
    last_of_shared = {last_setter[x] for x, n in setters.items() if n > 1}
    indices, calls = array.array("l"), []  # compact: a plan has T x ops of them
    for i in sorted(last_of_shared.union(computing)):
        call, t = plan.calls[i], targets[i]
        if t is None:
            indices.append(i)
            calls.append(call)
            continue
        keep = [setters[x] > 1 and last_setter[x] == i for x in t]
        if not all(keep):  # a link assignment of which only some blobs are shared
            blobs, values = call.args
            kept = [(b, v) for b, v, k in zip(blobs, values, keep) if k]
            call = BoundCall.assignment(call.func, [b for b, _ in kept], [v for _, v in kept])
        indices.append(i)
        calls.append(call)
    return indices, calls


def _reads_a_timestep(calls, targets):
    """Whether a computing call reads the memory of a timestep blob.

    Each timestep blob's array is a view of a buffer of its own (the blob's
    storage), so an array reading it is that buffer or a view of it, whose
    ``.base`` NumPy keeps pointing at the buffer: a set lookup per array read.
    When a timestep's buffer is itself a view (something fed into the blob),
    the timesteps' byte ranges, sorted, and a binary search per array read.
    There are T timesteps and T x ops calls: nothing here may be quadratic.
    """
    stamps = [c.args[2] for c in calls if c.name == TIMESTEP]
    if not stamps:
        return False
    computing = [c for c, t in zip(calls, targets) if t is None]
    declared = [c.reads for c in computing]
    if None in declared:
        return True  # a call we cannot see into might read the timestep
    buffers = [a if a.base is None else a.base for a in stamps]
    if all(getattr(b, "base", None) is None for b in buffers):
        owners = set(map(id, buffers))
        read = list(chain.from_iterable(declared))
        if not owners.isdisjoint(map(id, read)):
            return True
        return not owners.isdisjoint(map(id, map(_base, read)))
    memory = sorted(schedule.byte_range(a)[0] for a in stamps)
    for call in computing:
        arrays = [r for r in call.reads if not isinstance(r, tuple)]  # not blob tokens
        for low, high in filter(None, map(schedule.byte_range, arrays)):
            first = bisect.bisect_left(memory, low)
            if first < len(memory) and memory[first] < high:
                return True
    return False


def _base(x):
    """``x.base`` (None for what has none: a blob token)."""
    return getattr(x, "base", None)
