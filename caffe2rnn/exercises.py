"""Feedback for the *predict, then check* exercises of the notebooks (``notebooks/``).

An exercise asks the learner to write a prediction into a variable (a row index, a shape,
the blob a bug overwrites, a gradient), then a check cell runs what the operator really
does and hands both to :func:`feedback`, which says whether the prediction was right, what
the operator did, and why — wrapped to the width of a notebook's output on the docs site::

    predicted_rows = None  # the learner's cell

    def check_rows(prediction):  # the check cell (its source is collapsed on the site)
        actual = ...  # what the operator did, read from the workspace
        feedback(prediction, actual, "step 2 reads row %d, writes row %d." % actual,
                 why="a link views row t + offset ...", variable="predicted_rows")

Only the notebooks use this module; nothing in the library depends on it.
"""

import textwrap

import numpy as np

from .listing import WIDTH  # characters per line of a notebook's output on the site


def same(prediction, actual):
    """Whether ``prediction`` matches ``actual``: sequences element by element, numbers to a
    relative 1e-6 (a gradient computed in float32), anything else by ``==``."""
    if isinstance(actual, (tuple, list)):
        if not isinstance(prediction, (tuple, list)) or len(prediction) != len(actual):
            return False
        return all(same(p, a) for p, a in zip(prediction, actual))
    if isinstance(actual, (int, float, np.number)) and not isinstance(actual, bool):
        if isinstance(prediction, bool) or not isinstance(prediction, (int, float, np.number)):
            return False
        return bool(np.isclose(prediction, actual, rtol=1e-6, atol=0.0))
    return bool(prediction == actual)


def feedback(prediction, actual, observed, why, variable="your prediction", right=None):
    """Print the verdict on ``prediction`` and return whether it was right.

    ``observed`` says what the operator did (printed after "Right:" or "Not quite"),
    ``why`` explains it. ``right`` overrides the comparison of ``prediction`` with ``actual``
    (:func:`same`) when the check judges the prediction itself. With no prediction yet
    (``None``) nothing of the answer is printed, only where to write one.
    """
    if prediction is None:
        print(
            textwrap.fill(
                "No prediction yet: set %s above, then run this cell again." % variable, WIDTH
            )
        )
        return False
    if right is None:
        right = same(prediction, actual)
    head = "Right: " if right else "Not quite (you said %r): " % (prediction,)
    print(textwrap.fill(head + observed, WIDTH))
    print(textwrap.fill("Why: " + why, WIDTH))
    return right
