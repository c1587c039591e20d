"""Feedback for the *predict, then check* exercises of the notebooks (``notebooks/``).

An exercise asks the learner to write a prediction into a variable (a row index, a shape,
the blob a bug overwrites, a gradient), then a check cell runs what the operator really
does and hands both to :func:`feedback`, which says whether the prediction was right, what
the operator did, and why — wrapped to the width of a notebook's output on the docs site::

    predicted_rows = None  # the learner's cell

    def check_rows(prediction):  # the check cell (its source is collapsed on the site)
        actual = ...  # what the operator did, read from the workspace
        feedback(prediction, actual, "timestep 2 reads row %d, writes row %d." % actual,
                 why="a link views row t + offset ...", variable="predicted_rows",
                 hint="where does a link's view start?")

Only the notebooks use this module; nothing in the library depends on it. The first code
exercises, step 3's running sum (notebook 01) and step 5's finite differences (notebook 02),
have their checks here (:func:`check_running_sum`, :func:`check_finite_differences`). The
write-code exercises of step 9 (notebook 04, the forward loop) and step 13 (notebook 06, the
backward loop) have their checks here too, :func:`check_forward` and :func:`check_backward`, so that
tests can try them with right and wrong loops.

A wrong try is told what is wrong and given a hint, where to look, with the answer kept
back, and the invitation to change the prediction (or the code) and run the cell again. The
second wrong try of the same exercise gets the answer and the why; so does
``reveal("predicted_rows")`` (an exercise is named by its ``predicted_<name>`` variable, a
code exercise by its check: ``reveal("forward")`` for :func:`check_forward`), or a check
called with ``reveal=True``. Tries are counted per exercise while the kernel runs;
:func:`reset` forgets them::

    from caffe2rnn.exercises import reveal
    reveal("predicted_rows")  # the answer and the why of the last wrong try

The checks live by exercise: :mod:`.verdicts` (what every check prints), :mod:`.warmups`
(steps 3 and 5), :mod:`.loops` (steps 9 and 13), :mod:`.cell` (step 19); the notebooks
import them from here.
"""

from ..listing import WIDTH
from .cell import CELL_HINT, CELL_PARAMS, check_cell
from .loops import (
    ALIASES,
    BACKWARD_HINT,
    FORWARD_HINT,
    GRADIENT_LINKS,
    LINKS,
    STATES,
    check_backward,
    check_forward,
)
from .verdicts import NOT_RUN, feedback, reset, reveal, run_learners_code, same
from .warmups import (
    FINITE_DIFFERENCES_HINT,
    RUNNING_SUM_HINT,
    check_finite_differences,
    check_running_sum,
)

__all__ = [
    "ALIASES",
    "BACKWARD_HINT",
    "CELL_HINT",
    "CELL_PARAMS",
    "FINITE_DIFFERENCES_HINT",
    "FORWARD_HINT",
    "GRADIENT_LINKS",
    "LINKS",
    "NOT_RUN",
    "RUNNING_SUM_HINT",
    "STATES",
    "WIDTH",
    "check_backward",
    "check_cell",
    "check_finite_differences",
    "check_forward",
    "check_running_sum",
    "feedback",
    "reset",
    "reveal",
    "run_learners_code",
    "same",
]
