"""The verdicts every check prints: right or not, what the operator did, the answer, why.

:func:`feedback` for a prediction; :func:`run_learners_code` runs a code exercise's
function and says that there is no answer yet, or what it raised, once for every check.

A wrong try is told what is wrong and given a hint first, with the answer kept back; the
second wrong try of the same exercise gets the answer and the why, and so does
:func:`reveal` at any time. The tries are counted per exercise, by its name (a
notebook's ``predicted_<name>`` variable, or ``forward``, ``backward``, ... for the code
exercises), for as long as the kernel runs; :func:`reset` forgets them."""

import textwrap
from contextlib import contextmanager

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


#: Wrong tries per exercise in this kernel session, by the exercise's name.
_WRONG_TRIES = {}
#: Exercises whose answer the learner asked for with :func:`reveal`.
_REVEALED = set()
#: The full verdict (its printed lines) an exercise's last wrong try kept back.
_KEPT_BACK = {}
#: Every verdict in this kernel session, in order: (the exercise's name, right or not).
_VERDICTS = []


def verdicts():
    """Every verdict given in this kernel session (since :func:`reset`), in order, as
    ``(name, right)`` pairs: ``("predicted_rows", False)``, ``("forward", True)``.

    ``make run`` (scripts/run_notebook.py) starts a fresh kernel for each run, so the
    second try that would show a wrong prediction's answer never comes: it reads the
    first verdict of each exercise, the learner's own try (a worked answer's check
    comes after it), and ends the run with which predictions were wrong."""
    return list(_VERDICTS)


def reveal(name):
    """Show the answer of exercise ``name`` now, without a second try.

    ``name`` is the variable the exercise asks for (``reveal("predicted_rows")``), or
    for a code exercise what its check is named after (``reveal("forward")`` for
    ``check_forward``); the hint of a wrong try prints the call to make. After a wrong
    try this prints the answer and the why that the try kept back; from then on every
    check of that exercise prints them at once."""
    _REVEALED.add(name)
    kept = _KEPT_BACK.pop(name, None)
    if kept:
        print("\n".join(kept))
    else:
        _say("The answer of %s will show with the verdict: run its check cell again." % name)


def reset(name=None):
    """Forget the tries, reveals and verdicts of exercise ``name``, or of every exercise."""
    for store in (_WRONG_TRIES, _KEPT_BACK):
        if name is None:
            store.clear()
        else:
            store.pop(name, None)
    if name is None:
        _REVEALED.clear()
        _VERDICTS.clear()
    else:
        _REVEALED.discard(name)
        _VERDICTS[:] = [v for v in _VERDICTS if v[0] != name]


def _answer_now(name, reveal_now):
    """Count a wrong try of exercise ``name``; whether its verdict gives the answer now:
    at the second wrong try, after :func:`reveal`, or with ``reveal=True``."""
    _WRONG_TRIES[name] = _WRONG_TRIES.get(name, 0) + 1
    return reveal_now or name in _REVEALED or _WRONG_TRIES[name] >= 2


def _keep_back(name, full, shown, change):
    """Print ``shown`` (a first wrong try's lines), the hint's invitation to ``change``
    and run again, and keep ``full`` for :func:`reveal`."""
    _KEPT_BACK[name] = full
    print("\n".join(shown))
    _say(
        "Change %s and run this cell again. A second wrong try shows the answer; "
        'so does caffe2rnn.exercises.reveal("%s").' % (change, name)
    )


def _lines(text):
    return textwrap.wrap(text, WIDTH) or [""]


def feedback(
    prediction,
    actual,
    observed,
    why,
    variable="your prediction",
    right=None,
    detail=None,
    wrong=None,
    hint=None,
    reveal=False,
):
    """Print the verdict on ``prediction`` and return whether it was right.

    ``observed`` says what the operator did (printed after "Right:" or "Not quite"),
    ``why`` explains it. ``right`` overrides the comparison of ``prediction`` with
    ``actual`` (:func:`same`) when the check judges the prediction itself; ``observed``
    then says what is wrong with the prediction. With no prediction yet (``None``)
    nothing of the answer is printed, only where to write one. ``detail`` (what NumPy
    or the op raised, say) comes last, after the why: the check's own words first.

    A wrong prediction is first told what is wrong, not the answer: "Not quite (you
    said ...)", ``observed`` only when ``right`` is given (otherwise it is the
    operator's result, the answer itself), the words for an expected wrong answer (see
    ``wrong``), then "Hint: " + ``hint`` (where to look, never the answer) and an
    invitation to change ``variable`` and run the cell again. The second wrong try of
    the exercise ``variable`` names, ``reveal=True``, or :func:`reveal` gives the whole
    verdict: ``observed``, "The answer: ...", the words for that wrong answer, the why.
    A check without a ``hint`` gives it at the first wrong try.

    ``wrong`` holds the wrong answers a check expects, as ``(answer, text)`` pairs: the
    text says what that answer takes for granted and where it goes wrong, and is printed
    ("Your answer ...:") when the prediction matches (:func:`same`). A wrong answer then
    gets words for its own mistake, not only the general reason.
    """
    if prediction is None:
        _say("No prediction yet: set %s above, then run this cell again." % variable)
        return False
    judged = right is not None  # observed then speaks of the prediction
    if not judged:
        right = same(prediction, actual)
    _VERDICTS.append((variable, bool(right)))
    if right:
        _say("Right: " + observed)
        _say("Why: " + why)
        if detail:
            _say(_detail(detail))
        return True
    mistake = []
    for answer, text in wrong or ():
        if same(prediction, answer):
            mistake = _lines("Your answer %r: %s" % (_plain(prediction), text))
            break
    full = _lines("Not quite (you said %r): %s" % (prediction, observed))
    full += _lines("The answer: %r." % (_plain(actual),)) + mistake + _lines("Why: " + why)
    if detail:
        full += _lines(_detail(detail))
    if hint is None or _answer_now(variable, reveal):
        _KEPT_BACK.pop(variable, None)
        print("\n".join(full))
        return False
    if observed and judged:  # the check's words on the prediction itself
        shown = _lines("Not quite (you said %r): %s" % (prediction, observed))
    else:
        shown = _lines("Not quite (you said %r)." % (prediction,))
    shown += mistake + _lines("Hint: " + hint)
    if detail and judged:
        shown += _lines(_detail(detail))
    _keep_back(variable, full, shown, variable)
    return False


def _say(text):
    print(textwrap.fill(text, WIDTH))


def _detail(text):
    """The last line of a verdict: what the learner's code raised, cut to two lines."""
    text = "Detail: " + " ".join(str(text).split())
    return text if len(text) <= 2 * WIDTH - 10 else text[: 2 * WIDTH - 13] + "..."


#: The code exercise whose check is running: (name, hint, what to change, reveal), set
#: by :func:`_code_exercise` for :func:`_verdict`.
_CODE_EXERCISE = None


@contextmanager
def _code_exercise(name, hint, change, reveal=False):
    """While a code exercise's check runs: its ``name`` (for :func:`reveal`), its
    ``hint``, what the learner changes (``"your loop"``), and whether to reveal now."""
    global _CODE_EXERCISE
    outer, _CODE_EXERCISE = _CODE_EXERCISE, (name, hint, change, reveal)
    try:
        yield
    finally:
        _CODE_EXERCISE = outer


def _verdict(right, observed, why=None, answer=None, detail=None):
    """Print 'Right: ...' or 'Not quite: ...', then 'The answer: ...', 'Why: ...' and
    'Detail: ...' (each when given, in that order), and return ``right``.

    Inside a code exercise's check (:func:`_code_exercise`) a first wrong try prints
    'Not quite: ...', 'Hint: ...' and 'Detail: ...' and keeps the answer and the why
    back, as :func:`feedback` does."""
    full = _lines(("Right: " if right else "Not quite: ") + observed)
    if answer:
        full += _lines("The answer: " + answer)
    if why:
        full += _lines("Why: " + why)
    if detail:
        full += _lines(_detail(detail))
    if _CODE_EXERCISE is not None:
        _VERDICTS.append((_CODE_EXERCISE[0], bool(right)))
    if right or _CODE_EXERCISE is None:
        print("\n".join(full))
        return right
    name, hint, change, reveal_now = _CODE_EXERCISE
    if _answer_now(name, reveal_now):
        _KEPT_BACK.pop(name, None)
        print("\n".join(full))
        return right
    shown = _lines("Not quite: " + observed) + _lines("Hint: " + hint)
    if detail:
        shown += _lines(_detail(detail))
    _keep_back(name, full, shown, change)
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
