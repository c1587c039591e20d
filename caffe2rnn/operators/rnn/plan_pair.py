"""Two step plans per recurrent op and kernel path, and switching between them.

``workspace.RunNet``'s rollback journal may hand a blob that a run writes
whole before reading it (``FC``'s output, an LSTM's input projection) a
spare array instead of copying its old contents
(:mod:`caffe2rnn.runtime.rollback`): from run to run the blob holds two
arrays in turn. A recurrent op reading that blob has a plan bound to one of
them (its link views, its guards), so the executor keeps the plan before the
one in use (:class:`~caffe2rnn.operators.rnn.executor.StepNetExecutor`'s
``other_plans``) and goes back to it when its guards hold again, instead of
building a plan on every run.

One thing a plan's later runs rely on is not in its calls: the build left
each step workspace holding its link views, and later runs skip those
assignments (:mod:`.steady`). The other plan's build assigned the same blobs
views of *its* arrays, so switching to a plan assigns again the views that
lie in memory only that plan binds (:func:`relink`): the step workspaces then
hold what the op-by-op loop leaves.

The second plan is not built op by op (at T = 10,000 that is seconds): it
is *derived* from the first (:func:`derive`). The journal's spare has the
shape, strides and capacity of the array it stands in for, so every view
the first plan's calls hold into the old array has a twin at the same
offset in the new one: the derived plan is the first with those views
substituted, every other argument (parameters, intermediates, step
workspaces' blobs) shared, and the first plan's choice of the calls later
runs make (:mod:`.steady`) kept. Only a blob the journal swapped (the old
array is exactly the one the plan guards, :func:`~caffe2rnn.runtime.rollback.swapped_from`)
is substituted: an array fed by a caller may differ in what an op's
``bind()`` looks at, so it still rebuilds.
"""

import copy
import itertools

import numpy as np

from ... import kernels
from ...runtime.blob import Blob
from ...runtime.rollback import swapped_from
from ..bound_call import _ARGS, ASSIGN, BoundCall

#: Each StepPlan's serial number (what a plan's relink list was made against).
serials = itertools.count()


def fits(plan, key, scratch):
    """Whether ``plan`` was built for this loop and its guards hold."""
    return (
        plan.key == key
        and plan.workspaces == scratch.step_workspaces
        and kernels.current().first_stale_guard(plan.guard_blobs, plan.guard_arrays) == -1
    )


def choose(executor, path, key, scratch):
    """The plan ``executor`` runs this loop with on kernel path ``path``:
    the one in use if it fits; else the one kept before it if that fits;
    else one derived from the one in use (:func:`derive`); else None (build
    one). The plan in use, when only its guards failed, is kept as the one
    before; a plan taken up again gets its link views back (:func:`relink`)."""
    plans, others = executor.plans, executor.other_plans
    plan = plans.get(path)
    if plan is not None and fits(plan, key, scratch):
        return plan
    other = others.pop(path, None)
    same_loop = plan is not None and plan.key == key and plan.workspaces == scratch.step_workspaces
    if other is None or not fits(other, key, scratch):
        other = executor.derive_plan(plan) if same_loop else None
        if other is None:
            plans.pop(path, None)
            if same_loop:  # only its guards failed (an input holds another array)
                others[path] = plan
            return None
    plans[path] = other
    if plan is not None:
        others[path] = plan
    relink(other, plan)
    return other


def relink(plan, other):
    """Assign again the link views of ``plan`` that ``other`` (the plan in
    use until now, or None) assigned differently. The list is made once per
    pair of plans (``plan.relink``: ``(other's serial, blobs, views)``)."""
    against = None if other is None else other.serial
    if plan.relink is None or plan.relink[0] != against:
        plan.relink = (against,) + _relinks(plan, other)
    kernels.current().assign_values(plan.relink[1], plan.relink[2])


def _root(array):
    """The array owning ``array``'s memory (a view's ``base`` points at it)."""
    while type(array.base) is np.ndarray:
        array = array.base
    return array


def _relinks(plan, other):
    """``(blobs, views)``: each blob's last link assignment in ``plan``
    whose view lies in memory that ``plan``'s guards hold and ``other``'s do
    not (what the other plan's build assigned differently)."""

    def roots(p):
        return {id(_root(a)) for a in p.guard_arrays if type(a) is np.ndarray}

    moved = roots(plan) - (roots(other) if other is not None else set())
    last = {}
    for call in plan.calls:
        if call.name == ASSIGN:
            for blob, value in zip(*call.args):
                last[id(blob)] = (blob, value)
    pairs = [(b, v) for b, v in last.values() if type(v) is np.ndarray and id(_root(v)) in moved]
    return [b for b, _ in pairs], [v for _, v in pairs]


#: The arguments a derived call shares with its model as they are.
_SHARED = (int, float, bool, str, type(None), Blob, np.generic)
_SCALARS = frozenset(_SHARED)
_SLOTS = BoundCall.__slots__
_new = object.__new__


class _CannotSubstitute(Exception):
    """Something in the plan that substituting arrays cannot account for."""


def _offset(a, root):
    return a.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def _substitutes(plan, ws):
    """``{id(old array): new array}`` for the guards of ``plan`` that failed
    because the rollback journal of ``ws`` (or a parent) swapped their blob,
    and ``{id(old root): new root}`` -- or None when a failed guard is not
    such a swap, or when memory of a swapped array is guarded unchanged."""
    arrays, roots, addresses = {}, {}, {}
    for blob, old in zip(plan.guard_blobs, plan.guard_arrays):
        new = blob.value
        if new is old:
            continue
        if type(old) is not np.ndarray or swapped_from(ws, blob) is not old:
            return None
        old_root, new_root = _root(old), _root(new)
        if (
            (old.shape, old.strides, old.dtype) != (new.shape, new.strides, new.dtype)
            or (old_root.nbytes, old_root.dtype) != (new_root.nbytes, new_root.dtype)
            or not (old_root.flags.c_contiguous and new_root.flags.c_contiguous)
            or _offset(old, old_root) != _offset(new, new_root)
        ):
            return None
        arrays[id(old)] = new
        roots[id(old_root)] = new_root
        addresses[id(old_root)] = old_root.__array_interface__["data"][0]
    bound = {id(_root(a)) for a in plan.guard_arrays if type(a) is np.ndarray}
    for blob, a in zip(plan.guard_blobs, plan.guard_arrays):
        if type(a) is np.ndarray and blob.value is a and id(_root(a)) in roots:
            return None  # the old memory guarded under another name
    if not roots or any(id(r) in bound for r in roots.values()):
        return None
    return arrays, roots, addresses


class _Substitution:
    """Arguments and calls of a plan with the swapped arrays' views moved to
    the new arrays. Each object is substituted once (a view several calls
    share stays one view), and what holds nothing swapped is the very same
    object: a call touching no swapped memory is shared by both plans."""

    def __init__(self, arrays, roots, addresses):
        self.memo, self.roots = dict(arrays), roots  # id(old) -> new
        self.addresses = addresses  # id(old root) -> its address

    def _array(self, x):
        root = x
        while type(root.base) is np.ndarray:
            root = root.base
        new_root = self.roots.get(id(root))
        if new_root is None:
            y = x
        else:
            offset = x.__array_interface__["data"][0] - self.addresses[id(root)]
            y = np.ndarray(x.shape, x.dtype, new_root, offset, x.strides)
            if not x.flags.writeable:
                y.flags.writeable = False
        self.memo[id(x)] = y
        return y

    def value(self, x):
        """``x`` (an argument, or a tuple or list of them) substituted."""
        memo = self.memo
        y = memo.get(id(x))
        if y is not None:
            return y
        t = type(x)
        if t is np.ndarray:
            return self._array(x)
        if t is not tuple and t is not list:
            if t in _SCALARS or isinstance(x, _SHARED):
                return x
            raise _CannotSubstitute(t.__name__)
        items, changed = [], False
        for i in x:
            ti = type(i)
            if ti is np.ndarray:
                j = memo.get(id(i))
                if j is None:
                    j = self._array(i)
            elif ti in _SCALARS:
                j = i
            else:
                j = self.value(i)
            changed = changed or j is not i
            items.append(j)
        y = t(items) if changed else x
        memo[id(x)] = y
        return y

    def call(self, c):
        """``c`` with its arguments and declarations substituted (``c``
        itself when nothing in them is swapped)."""
        done = self.memo.get(id(c))
        if done is not None:
            return done
        if type(c) is not BoundCall or c._sets not in (None, _ARGS):
            raise _CannotSubstitute("a call of its own kind")
        args = self.value(c.args)
        reads = self.value(c._reads) if type(c._reads) is tuple else c._reads
        writes = self.value(c._writes) if type(c._writes) is tuple else c._writes
        if args is c.args and reads is c._reads and writes is c._writes:
            new = c
        else:
            new = _new(BoundCall)
            for attr in _SLOTS:
                setattr(new, attr, getattr(c, attr))
            new.args, new._reads, new._writes = args, reads, writes
        self.memo[id(c)] = new
        return new


def derive(plan, ws):
    """A plan for the arrays the rollback journal swapped into the blobs
    ``plan`` guards (``ws``: a step workspace of it), derived from ``plan``
    (its steady calls already chosen), or None: then build one.

    The derived plan's calls are ``plan``'s with each view into a swapped
    array replaced by the same view into its spare; its steady calls are
    the same positions, compiled for it. Its step workspaces still hold
    ``plan``'s link views: the caller puts its own there (:func:`relink`)."""
    if plan.fallbacks or plan.steady is None:
        return None
    found = _substitutes(plan, ws)
    if found is None:
        return None
    sub = _Substitution(*found)
    try:
        for c in plan.prologue:  # reads parameters; must not touch swapped memory
            reads = c._reads if type(c._reads) is tuple else ()
            if any(sub.value(a) is not a for a in reads):
                return None
        calls = _calls(plan, sub)
    except _CannotSubstitute:
        return None
    # the steady calls are plan.calls' by position, or (a link assignment cut
    # down by steady.py) a call of their own
    steady_bound = [
        calls[i] if c is plan.calls[i] else sub.call(c)
        for i, c in zip(plan.steady, plan.steady_bound)
    ]
    new = copy.copy(plan)
    new.serial = next(serials)
    new.calls = calls
    new.guard_blobs = list(plan.guard_blobs)
    new.guard_arrays = [sub.value(a) if type(a) is np.ndarray else a for a in plan.guard_arrays]
    new.steady_bound = steady_bound
    new.steady_calls = kernels.current().compile_calls(steady_bound)
    new.compiled = {}
    new.schedule = new.lane_calls = new.relink = None
    _pair_relinks(plan, new, sub)
    return new


def _calls(plan, sub):
    """``plan.calls`` substituted. The steps whose calls the build derived
    from a template (:mod:`.derive`; ``plan.derived``: the first call index
    of the first such step, the index after the last, and the calls per
    step) repeat the same argument kinds at the same positions: a position
    holding a view into a swapped array at the first of them does at every
    one (a view moving through the same buffer), and no other position
    does. So those steps are walked once, and at the others only the
    positions that moved are replaced -- linear in T with a small factor,
    instead of a walk over every argument of every call."""
    calls = plan.calls
    if plan.derived is None:
        return [sub.call(c) for c in calls]
    first, end, period = plan.derived
    out = [sub.call(c) for c in calls[: first + period]]
    moves = []  # (position in the step, [paths into (args, _reads, _writes)])
    for k in range(period):
        old, new = calls[first + k], out[first + k]
        if new is not old:
            parts = (old.args, old._reads, old._writes), (new.args, new._reads, new._writes)
            moves.append((k, list(_paths(*parts))))
    for start in range(first + period, end, period):
        step = calls[start : start + period]
        for k, paths in moves:
            step[k] = _moved(sub, step[k], paths)
        out.extend(step)
    out.extend(sub.call(c) for c in calls[end:])
    return out


def _paths(old, new, path=()):
    """The index paths at which ``new`` holds another object than ``old``."""
    if new is old:
        return
    if type(old) in (tuple, list):
        for i, (x, y) in enumerate(zip(old, new)):
            yield from _paths(x, y, path + (i,))
    else:
        yield path


def _replaced(sub, value, path, i):
    """``value`` with the array at ``path[i:]`` substituted (a view into a
    swapped array, or this is not the template's step: raise)."""
    if i == len(path):
        if type(value) is not np.ndarray:
            raise _CannotSubstitute("a derived step unlike the first")
        moved = sub.memo.get(id(value))
        if moved is None:
            moved = sub._array(value)
        if moved is value:
            raise _CannotSubstitute("a derived step unlike the first")
        return moved
    items = list(value)
    items[path[i]] = _replaced(sub, items[path[i]], path, i + 1)
    return type(value)(items)


def _moved(sub, c, paths):
    """Call ``c`` of a derived step with the arrays at ``paths`` (into
    ``(args, _reads, _writes)``) substituted."""
    parts = [c.args, c._reads, c._writes]
    for path in paths:
        parts[path[0]] = _replaced(sub, parts[path[0]], path, 1)
    new = _new(BoundCall)
    new.func, new.name, new.releases_gil, new.cost = c.func, c.name, c.releases_gil, c.cost
    new._sets, new._label, new.part_ops = c._sets, c._label, c.part_ops
    new.args, new._reads, new._writes = parts
    sub.memo[id(c)] = new
    return new


def _pair_relinks(plan, new, sub):
    """Both plans' :func:`relink` lists against each other, read off the
    substitution instead of a search through every view's memory: each
    blob's last link assignment in ``plan``, where its view moved (the
    derived plan's calls are ``plan``'s, position by position)."""
    last = {}
    for call in plan.calls:
        if call.name == ASSIGN:
            for blob, value in zip(*call.args):
                last[id(blob)] = (blob, value)
    memo = sub.memo
    pairs = [(b, v, memo.get(id(v), v)) for b, v in last.values()]
    pairs = [(b, v, w) for b, v, w in pairs if w is not v]
    blobs = [b for b, _, _ in pairs]
    plan.relink = (new.serial, blobs, [v for _, v, _ in pairs])
    new.relink = (plan.serial, blobs, [w for _, _, w in pairs])
