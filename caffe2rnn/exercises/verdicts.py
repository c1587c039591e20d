"""The verdicts every check prints: right or not, what the operator did, the answer, why.

:func:`feedback` for a prediction; :func:`run_learners_code` runs a code exercise's
function and says that there is no answer yet, or what it raised, once for every check."""

import textwrap

import numpy as np

from ..listing import WIDTH  # characters per line of a notebook's output on the site


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


def _plain(value):
    """``value`` with NumPy scalars as Python ones, so it prints as the learner writes it
    (``6``, not ``np.int64(6)``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def feedback(
    prediction,
    actual,
    observed,
    why,
    variable="your prediction",
    right=None,
    detail=None,
    wrong=None,
):
    """Print the verdict on ``prediction`` and return whether it was right.

    ``observed`` says what the operator did (printed after "Right:" or "Not quite"),
    ``why`` explains it. A wrong prediction also gets ``actual`` itself ("The answer: ..."):
    whoever answered wrong once leaves with the right answer and the reason, not a hint to
    try again. ``right`` overrides the comparison of ``prediction`` with ``actual``
    (:func:`same`) when the check judges the prediction itself. With no prediction yet
    (``None``) nothing of the answer is printed, only where to write one. ``detail`` (what
    NumPy or the op raised, say) comes last, after the why: the check's own words first.

    ``wrong`` holds the wrong answers a check expects, as ``(answer, text)`` pairs: the
    text says what that answer takes for granted and where it goes wrong, and is printed
    ("Your answer ...:") between the answer and the why when the prediction matches
    (:func:`same`). A wrong answer then gets words for its own mistake, not only the
    general reason.
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
    if not right:  # the first wrong try already ends with the answer
        print(textwrap.fill("The answer: %r." % (_plain(actual),), WIDTH))
        for answer, text in wrong or ():
            if same(prediction, answer):
                _say("Your answer %r: %s" % (_plain(prediction), text))
                break
    print(textwrap.fill("Why: " + why, WIDTH))
    if detail:
        _say(_detail(detail))
    return right


def _say(text):
    print(textwrap.fill(text, WIDTH))


def _detail(text):
    """The last line of a verdict: what the learner's code raised, cut to two lines."""
    text = "Detail: " + " ".join(str(text).split())
    return text if len(text) <= 2 * WIDTH - 10 else text[: 2 * WIDTH - 13] + "..."


def _verdict(right, observed, why=None, answer=None, detail=None):
    """Print 'Right: ...' or 'Not quite: ...', then 'The answer: ...', 'Why: ...' and
    'Detail: ...' (each when given, in that order), and return ``right``."""
    _say(("Right: " if right else "Not quite: ") + observed)
    if answer:
        _say("The answer: " + answer)
    if why:
        _say("Why: " + why)
    if detail:
        _say(_detail(detail))
    return right


def _no_answer_yet(todo):
    """What every code exercise's check says before the learner wrote anything."""
    _say("No answer yet: %s, then run this cell again." % todo)


#: What :func:`run_learners_code` returns when the learner's code did not run to the end.
NOT_RUN = object()


def run_learners_code(call, todo, doing, why, explain=None):
    """Run ``call()``, the learner's code, and return what it returned, or :data:`NOT_RUN`
    after saying why it did not run: still the exercise's ``raise NotImplementedError`` ("No
    answer yet: <todo>, then run this cell again."), or another exception ("Not quite:
    <doing> raised <the exception>." and ``why``). The one place the code exercises' checks
    say both, so they say them alike.

    ``explain(detail)``, when given, is asked first: it says in the check's own words what
    the learner's code did (a wrong row, say) and prints the exception only as the verdict's
    last line, ``detail``; it returns False when it finds nothing to say."""
    try:
        return call()
    except NotImplementedError:
        _no_answer_yet(todo)
    except Exception as error:  # the learner's code: say what it raised
        detail = "%s raised %s: %s" % (doing, type(error).__name__, error)
        if explain is None or not explain(detail):
            _verdict(False, detail, why=why)
    return NOT_RUN
