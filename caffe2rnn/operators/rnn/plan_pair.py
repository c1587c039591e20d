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


class _CannotSubstitute(Exception):
    """Something in the plan that substituting arrays cannot account for."""


def _offset(a, root):
    return a.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def _substitutes(plan, ws):
    """``{id(old array): new array}`` for the guards of ``plan`` that failed
    because the rollback journal of ``ws`` (or a parent) swapped their blob,
    and ``{id(old root): new root}`` -- or None when a failed guard is not
    such a swap, or when memory of a swapped array is guarded unchanged."""
    arrays, roots = {}, {}
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
    bound = {id(_root(a)) for a in plan.guard_arrays if type(a) is np.ndarray}
    for blob, a in zip(plan.guard_blobs, plan.guard_arrays):
        if type(a) is np.ndarray and blob.value is a and id(_root(a)) in roots:
            return None  # the old memory guarded under another name
    if not roots or any(id(r) in bound for r in roots.values()):
        return None
    return arrays, roots


class _Substitution:
    """Arguments and calls of a plan with the swapped arrays' views moved to
    the new arrays; each object substituted once (a view several calls
    share stays one view)."""

    def __init__(self, arrays, roots):
        self.arrays, self.roots, self.calls = arrays, roots, {}

    def value(self, x):
        t = type(x)
        if t is np.ndarray:
            y = self.arrays.get(id(x))
            if y is None:
                root = _root(x)
                new_root = self.roots.get(id(root))
                if new_root is None:
                    y = x
                else:
                    y = np.ndarray(x.shape, x.dtype, new_root, _offset(x, root), x.strides)
                    if not x.flags.writeable:
                        y.flags.writeable = False
                self.arrays[id(x)] = y
            return y
        if t is tuple:
            return tuple(map(self.value, x))
        if t is list:
            return list(map(self.value, x))
        if isinstance(x, _SHARED):
            return x
        raise _CannotSubstitute(t.__name__)

    def call(self, c):
        done = self.calls.get(id(c))
        if done is not None:
            return done
        if type(c) is not BoundCall or c._sets not in (None, _ARGS):
            raise _CannotSubstitute("a call of its own kind")
        new = copy.copy(c)
        new.args = self.value(c.args)
        for attr in ("_reads", "_writes"):
            declared = getattr(c, attr)
            if type(declared) is tuple:
                setattr(new, attr, self.value(declared))
        self.calls[id(c)] = new
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
        calls = [sub.call(c) for c in plan.calls]
        steady_bound = [sub.call(c) for c in plan.steady_bound]
    except _CannotSubstitute:
        return None
    new = copy.copy(plan)
    new.serial = next(serials)
    new.calls = calls
    new.guard_blobs = list(plan.guard_blobs)
    new.guard_arrays = [sub.value(a) if type(a) is np.ndarray else a for a in plan.guard_arrays]
    new.steady_bound = steady_bound
    new.steady_calls = kernels.current().compile_calls(steady_bound)
    new.compiled = {}
    new.schedule = new.lane_calls = new.relink = None
    return new
