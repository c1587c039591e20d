"""Feedback for the *predict, then check* exercises of the notebooks (``notebooks/``).

An exercise asks the learner to write a prediction into a variable (a row index, a shape,
the blob a bug overwrites, a gradient), then a check cell runs what the operator really
does and hands both to :func:`feedback`, which says whether the prediction was right, what
the operator did, and why — wrapped to the width of a notebook's output on the docs site::

    predicted_rows = None  # the learner's cell

    def check_rows(prediction):  # the check cell (its source is collapsed on the site)
        actual = ...  # what the operator did, read from the workspace
        feedback(prediction, actual, "timestep 2 reads row %d, writes row %d." % actual,
                 why="a link views row t + offset ...", variable="predicted_rows")

Only the notebooks use this module; nothing in the library depends on it. The first code
exercises, step 3's running sum (notebook 01) and step 5's finite differences (notebook 02),
have their checks here (:func:`check_running_sum`, :func:`check_finite_differences`); a
wrong prediction or a wrong answer is told the answer and why at once. The write-code
exercises of step 9 (notebook 04, the forward loop) and step 13 (notebook 06, the backward
loop) have their checks here too, :func:`check_forward` and :func:`check_backward`, so that
tests can try them with right and wrong loops.

The checks live by exercise: :mod:`.verdicts` (what every check prints), :mod:`.warmups`
(steps 3 and 5), :mod:`.loops` (steps 9 and 13), :mod:`.cell` (step 19); the notebooks
import them from here.
"""

from ..listing import WIDTH
from .cell import CELL_PARAMS, check_cell
from .loops import (
    ALIASES,
    GRADIENT_LINKS,
    LINKS,
    STATES,
    check_backward,
    check_forward,
    describe_lists,
    explain_lists_for_initial_rows,
    lists_for_initial_rows,
)
from .verdicts import NOT_RUN, feedback, run_learners_code, same
from .warmups import check_finite_differences, check_running_sum

__all__ = [
    "ALIASES",
    "CELL_PARAMS",
    "GRADIENT_LINKS",
    "LINKS",
    "NOT_RUN",
    "STATES",
    "WIDTH",
    "check_backward",
    "check_cell",
    "check_finite_differences",
    "check_forward",
    "check_running_sum",
    "describe_lists",
    "explain_lists_for_initial_rows",
    "feedback",
    "lists_for_initial_rows",
    "run_learners_code",
    "same",
]
