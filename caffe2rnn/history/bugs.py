"""The bugs each ``recurrent_net`` version fixed, reproduced in numbers.

:data:`BUGS` maps an id (B1..B10, docs/concepts/history.md) to a :class:`Bug`:
the fixing commit, what went wrong, its minimal cell (:mod:`caffe2rnn.history.cells`) and
``run()``, which builds and runs that cell with the buggy version on its era
and with the fixing version on its era, and returns both beside the NumPy
reference::

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

Bugs that need another set-up bring their own ``runner`` (:mod:`.bug_demos`):
B1, B2, B5 with a smaller batch, B6, B8, B10; and ``tail_rows``
(:mod:`.tail_rows`: Caffe2's one zeroed states-gradient row with k > 1
initial rows, never fixed in Caffe2).
"""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import workspace
from ..gradient_checker import numeric_gradient
from . import VERSIONS, bug_demos, cells, era, tail_rows
from .sandbox import sandbox


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
    cell: Optional[Callable]  # None when the runner builds an op by hand
    runs: int = 1
    #: a bug shown by something other than gradients (B9) brings its own run.
    runner: Optional[Callable] = None

    def run(self, seed=0):
        """Run the minimal cell under the buggy and the fixing version/era."""
        if self.runner is not None:
            return self.runner()
        cell = self.cell()
        values = cell.values(np.random.default_rng(seed))
        results = []
        for version in (self.buggy_version, self.fixed_version):
            with sandbox(), era(version):
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
        with sandbox(), era(version):
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
    "B1": Bug(
        "B1",
        "66ad84303 (2017-01-30), 1-D states 9e7a26027",
        "scratch / s2",
        "v1",
        "The scratch-era gradient op never computed the initial states' "
        "gradients. 3b190c4df resized outputs 1 and 5 to one element (the "
        "LSTM layout of the day); 3913181a4 resized each like the op input "
        "*before* the initial state (input 0 of the gradient op is GO(0)), "
        "i.e. like the T x N x D sequence for the Mul RNN; neither wrote them, "
        "and the era's tests expected exactly those placeholders. 66ad84303 "
        "copies the first row of <state>_grad into the output.",
        bug_demos.mul_cell,
        runner=bug_demos.b1_initial_state_gradient,
    ),
    "B2": Bug(
        "B2",
        "1c28bcc56 / 7686919a9, then f81113a1a (2017-03-18)",
        "the C++ of 839f180a2 .. 7686919a9 (v1's text)",
        "v1",
        "For four days the C++ reused step workspaces across runs and applied "
        "links (and the timestep) only when a step workspace was created; the "
        "workspaces were made anew only when T grew. A second run with the "
        "same T and a smaller batch therefore ran every step on the views of "
        "the first run: the old input tensor and the old row layout of the "
        "(kept) states buffer, so the outputs are not those of the new input. "
        "In C++ those views could point to freed memory; here the old arrays "
        "stay alive, so the wrong values are at least deterministic. No Python "
        "text belongs to that C++ state, so it is built as its own forward op "
        "(operator_eras.StaleLinksForward) on v1's OperatorDef.",
        bug_demos.mul_cell,
        runner=bug_demos.b2_stale_links,
    ),
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
    "B6": Bug(
        "B6",
        "90d756208 (2017-05-05)",
        "5cf13df48 (not a version here)",
        "v3",
        "5cf13df48 ('Forward-only rnns') put 'recompute_blobs_on_backward = "
        "set()' before the backward branch, so whatever the caller asked for, "
        "the op got an empty list and no recompute ops: the op v3 builds for "
        "None. Numbers cannot show it (the gradients are the same); the memory "
        "does: every step workspace keeps its own gates_t instead of one "
        "shared buffer recomputed on the way back.",
        cells.lstm,
        runner=bug_demos.b6_recompute_ignored,
    ),
    "B8": Bug(
        "B8",
        "f49200962 (2017-06-07)",
        "the _accum rewrite without its guard (never on master)",
        "v3",
        "The rewrite that fixes B7 renames a backward op's output <blob>_accum "
        "and sums it back into the linked <blob>. An op that writes <blob> in "
        "place (ReluGradient of an in-place Relu) already read the linked "
        "value; renaming it adds that value once more: the gradient arriving "
        "at h becomes g + mask * g, doubled where the ReLU is active. The "
        "guard landed in the same commit as the working rewrite, so the "
        "unguarded form is built here by applying the rewrite again.",
        bug_demos.relu_cell,
        runner=bug_demos.b8_unguarded_in_place,
    ),
    "B10": Bug(
        "B10",
        "359776004 (2017-08-17)",
        "v3",
        "newest",
        "Forward-only (no backward_step_net) the v3-era C++ resized the "
        "step-workspace vector to exactly 2. An evaluation op sharing the "
        "training op's step-workspaces blob therefore deleted the workspaces "
        "the gradient needs, and the gradient op stops: 2 step workspaces for "
        "T timesteps. From 359776004 the vector only grows.",
        cells.sum_mul,
        runner=bug_demos.b10_shared_step_workspaces,
    ),
    "tail_rows": Bug(
        "tail_rows",
        "none: Caffe2 042e8ede4 and PyTorch keep it",
        "newest",
        "caffe2rnn_zero_tail_rows=1",
        "With k > 1 initial rows (a window link) the op zeroes only the last "
        "row of <state>_grad; rows T .. T + k - 2 are read by the backward "
        "step net before anything writes them, so they hold the previous "
        "run's values and a second backward run adds them again. caffe2rnn "
        "follows Caffe2 and offers the argument caffe2rnn_zero_tail_rows to "
        "zero all k rows.",
        None,  # a hand-built window op: recurrent_net never sets link_window
        runner=tail_rows.tail_rows_second_run,
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

    return numeric_gradient(loss, values["w"][0].copy())[None]
