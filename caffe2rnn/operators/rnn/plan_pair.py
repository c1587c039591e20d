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
"""

import itertools

import numpy as np

from ... import kernels
from ..bound_call import ASSIGN

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
