"""The bugs each ``recurrent_net`` version fixed, reproduced in numbers.

:data:`BUGS` maps an id (history.md §4) to a :class:`Bug`: the fixing
commit, what went wrong, its minimal cell (:mod:`caffe2rnn.history.cells`) and ``run()``, which
builds and runs that cell with the buggy version on its era and with the
fixing version on its era, and returns both beside the NumPy reference::

    >>> result = BUGS["B5"].run()
    >>> result.buggy["w"], result.fixed["w"], result.reference["w"]

Gradients are of ``loss = sum(<output>_all)``; the reference is central
differences of the NumPy recurrence in float64. What the runs show (tests in
``tests/history/test_history_bugs.py``):

* B3 — as predicted: the input gradient is right for the last step only.
* B4 — garbage, as predicted; more precisely (from the C++ of 73f75a980) the
  first run returns T × the uninitialised content of ``w_grad`` and every
  later run T × the previous result.
* B5 — as predicted (spec: *inference*): run 1 right, run 2 = 2 × the
  gradient of timestep 0 alone.
* B7 — as predicted (spec: *inference*): every gradient is zero.
* B9 — ``UnboundLocalError`` while building, as predicted.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import core, workspace
from . import VERSIONS, cells
from .era import era


@dataclass
class BugResult:
    """Gradients per blob: ``buggy`` and ``fixed`` are lists, one dict per run."""

    buggy: list
    fixed: list
    reference: dict[str, np.ndarray]


@dataclass
class Bug:
    id: str
    commit: str
    buggy_version: str
    fixed_version: str
    explanation: str
    cell: Callable
    runs: int = 1
    #: a bug shown by something other than gradients (B9) brings its own run.
    runner: Callable = None

    def run(self, seed=0):
        """Run the minimal cell under the buggy and the fixing version/era."""
        if self.runner is not None:
            return self.runner()
        cell = self.cell()
        values = cell.values(np.random.default_rng(seed))
        results = []
        for version in (self.buggy_version, self.fixed_version):
            workspace.ResetWorkspace()
            core.Net.reset_names()
            with era(version):
                results.append(
                    cell.run(
                        VERSIONS[version].recurrent_net,
                        {k: v.copy() for k, v in values.items()},
                        runs=self.runs,
                    )
                )
        return BugResult(
            results[0],
            results[1],
            cell.reference_gradients({k: v.copy() for k, v in values.items()}),
        )


def b9_run():
    """B9 has no gradient: v3 fails to build forward-only; newest builds and
    runs it. Returns ``{"v3": the exception, "newest": (output, reference)}``."""
    cell = cells.sum_mul()
    outcome = {}
    for version in ("v3", "newest"):
        workspace.ResetWorkspace()
        core.Net.reset_names()
        with era(version):
            try:
                net, outputs = cell.build(VERSIONS[version].recurrent_net, forward_only=True)
            except UnboundLocalError as exc:
                outcome[version] = exc
                continue
            values = cell.values(np.random.default_rng(0))
            for name, value in values.items():
                workspace.FeedBlob(name, value)
            workspace.RunNetOnce(net)
            outcome[version] = (workspace.FetchBlob(str(outputs[0])), cell.forward(values))
    return outcome


BUGS = {
    "B3": Bug(
        "B3",
        "96bafa3b2 (2017-03-21), refined by 0d616f25c",
        "v1",
        "april",
        "The cell's first op on the recurrent input is a Sum, whose gradient is "
        "a pass-through: no backward op writes h_prev_grad. v1 links that "
        "literal name into rows 0..T-1 of the states gradient, so those rows "
        "are never written (only the last row is zeroed) and the recurrent "
        "gradient is lost: the input gradient is right for the last step only, "
        "earlier steps see uninitialised memory. The fix links the blob that "
        "really holds the gradient (backward_mapping[h_prev]).",
        cells.sum_mul,
    ),
    "B4": Bug(
        "B4",
        "21e9049f6 (2017-03-23), Alias since 9ab756ee9",
        "v1",
        "april",
        "A reference w consumed first by a pass-through op (Sum/Add) has its "
        "per-step gradient under the output's gradient name, yet the C++ op "
        "accumulates w_grad after each step — a blob no step writes. Each step "
        "adds its stale content into the _acc blob and the final swap returns "
        "T times it: garbage on the first run, T x the previous result later. "
        "The fix appends Alias(<real gradient>) -> w_grad to the backward net.",
        cells.pass_through_reference,
        runs=2,
    ),
    "B5": Bug(
        "B5",
        "8e01e4c8b (2017-04-25)",
        "v2",
        "v3",
        "B4's Alias meets the _acc swap. After run 1 the swap leaves the _acc "
        "blob holding the tensor that shares the pass-through gradient's buffer; "
        "in run 2 zeroing _acc zeroes that buffer, the Alias makes w_grad share "
        "it too, and 'acc += w_grad' doubles it; each step overwrites it, so "
        "the result is 2 x the gradient of timestep 0 instead of the sum over "
        "timesteps. The tests took the analytic gradient from a first run, so "
        "they never saw it. The fix passes param_grads and drops the Alias.",
        cells.pass_through_reference,
        runs=2,
    ),
    "B7": Bug(
        "B7",
        "417f74509 (2017-05-24), effective with f49200962 (2017-06-07)",
        "v2",
        "v3",
        "a_t's gradient arrives through a link (external GO plus the recurrent "
        "part from step t+1), but a_t is also consumed inside the cell by "
        "b_t = a_t * b_prev. The Mul gradient writes a_t_grad (= b_t_grad * "
        "b_prev, zero because b has no external gradient) over the linked "
        "value instead of adding to it, so every gradient vanishes. The fix "
        "renames such outputs <blob>_accum and inserts Sum([blob, blob_accum]).",
        cells.two_states,
    ),
    "B9": Bug(
        "B9",
        "96e718751 (2017-08-17)",
        "v3",
        "newest",
        "The Python 3 codemod 0cdd09da6 hoisted backward_mapping_keys = "
        "set(viewkeys(backward_mapping)) above the 'if backward_cell_net is "
        "not None' guard, so forward_only=True reads an unassigned local and "
        "raises UnboundLocalError while the net is built. rnn_cell did not "
        "pass forward_only on, so the library's tests never reached it.",
        cells.sum_mul,
        runner=b9_run,
    ),
}


def timestep0_gradient(values):
    """B5's prediction: d loss / d w counting only timestep 0's use of ``w``."""

    def loss(w0):
        h, total = values["h0"][0], 0.0
        for t, x in enumerate(values["input"]):
            h = np.tanh(x * h + (w0 if t == 0 else values["w"][0]))
            total += h.sum()
        return total

    w0 = values["w"][0].copy()
    grad = np.zeros_like(w0)
    for i in np.ndindex(*w0.shape):
        old = w0[i]
        w0[i] = old + 1e-6
        plus = loss(w0)
        w0[i] = old - 1e-6
        minus = loss(w0)
        w0[i] = old
        grad[i] = (plus - minus) / 2e-6
    return grad[None]
