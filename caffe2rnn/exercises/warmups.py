"""The first code exercises: step 3's running sum (notebook 01) and step 5's finite
differences (notebook 02)."""

import numpy as np

from .verdicts import _code_exercise, _no_answer_yet, _verdict


def _check_running_sum(hs, xs):
    """What :func:`check_running_sum` checks, with no counting of tries."""
    if hs is None:
        _no_answer_yet("set hs to your %d x %d array" % xs.shape)
        return False
    expected = np.cumsum(xs, axis=0)
    how = (
        "for each t, make a child of fresh, feed it x_t = X4[t] and h_prev (zeros at t = 0, "
        "then the h you fetched at t - 1), run the step net in it and fetch h; np.stack "
        "the four h. The step adds x_t to the h before it, so hs is the running sum "
        "np.cumsum(X4, axis=0)."
    )
    if np.shape(hs) != expected.shape:
        return _verdict(
            False,
            "hs is %s; it should be %s, one row per timestep."
            % (" × ".join(map(str, np.shape(hs))), " × ".join(map(str, expected.shape))),
            why=how,
        )
    hs = np.asarray(hs)
    if np.allclose(hs, expected):
        return _verdict(
            True,
            "the step net, run %d times, is a running sum: hs = %s." % (len(xs), hs.tolist()),
        )
    if np.allclose(hs, xs):
        observed = "hs equals X4: every step got h_prev = 0, so no step saw the one before."
    elif np.allclose(hs[1:], expected[:-1]) or np.allclose(hs[1:], xs[:-1]):
        observed = "hs is one timestep late: row t holds what row t - 1 should."
    else:
        row = int(np.argmax(~np.isclose(hs, expected).all(axis=1)))
        observed = "row %d of hs is %s; the running sum there is %s." % (
            row,
            hs[row].tolist(),
            expected[row].tolist(),
        )
    return _verdict(False, observed, why=how)


def _check_finite_differences(numeric, x0=(-1.0, 0.0, 0.5)):
    """What :func:`check_finite_differences` checks, with no counting of tries."""
    if numeric is None:
        _no_answer_yet("set numeric to your %d finite differences" % len(x0))
        return False
    x0 = np.asarray(x0)
    expected = 1 - np.tanh(x0) ** 2
    how = (
        "for each i, feed x0 + eps e_i and x0 - eps e_i (e_i a row of np.eye(3), eps = "
        "1e-6, x0 as float64), run the net, fetch the loss, and take (L+ - L-) / (2 eps). "
        "The three numbers are the derivative 1 - tanh(x)^2 = %s."
        % ", ".join("%.6f" % v for v in expected)
    )
    if np.shape(numeric) != expected.shape:
        return _verdict(
            False, "expected %d values, got shape %s." % (len(x0), np.shape(numeric)), why=how
        )
    numeric = np.asarray(numeric, dtype=np.float64)
    if np.allclose(numeric, expected, atol=1e-6):
        return _verdict(
            True,
            "%s, the derivative 1 - tanh(x)^2 to within 1e-6."
            % ", ".join("%.6f" % v for v in numeric),
        )
    off = float(np.abs(numeric - expected).max())
    if off < 1e-2:
        observed = (
            "%s is off by %.1g: close, but not to 1e-6. In float32 the loss keeps about 7 "
            "digits, and dividing a difference of two such numbers by 2 eps magnifies their "
            "rounding." % (", ".join("%.6f" % v for v in numeric), off)
        )
    else:
        observed = "%s; the derivative is %s." % (
            ", ".join("%.4f" % v for v in numeric),
            ", ".join("%.4f" % v for v in expected),
        )
    return _verdict(False, observed, why=how)


#: The hint a first wrong try of check_running_sum gets: where to look, not the answer.
RUNNING_SUM_HINT = (
    "Look at what each child workspace is fed as h_prev: zeros only at t = 0, after that "
    "the h fetched at the timestep before. And keep one h per timestep, in the order of "
    "the rows of X4."
)


def check_running_sum(hs, xs, reveal=False):
    """Self-check of step 3's exercise (notebook 01): ``hs``, the ``h`` of the step net
    ``Add([h_prev, x_t]) -> h`` run once per row of ``xs`` in a child workspace each, with
    ``h_prev`` zeros at t = 0, then the ``h`` of the timestep before. Returns whether it was
    right.

    A first wrong try is told what is wrong and given :data:`RUNNING_SUM_HINT`; the second
    wrong try, ``reveal=True`` or ``caffe2rnn.exercises.reveal("running_sum")`` gives the
    answer and the why as well."""
    with _code_exercise("running_sum", RUNNING_SUM_HINT, "hs", reveal):
        return _check_running_sum(hs, xs)


#: The hint a first wrong try of check_finite_differences gets: where to look, not the answer.
FINITE_DIFFERENCES_HINT = (
    "Look at the two losses taken for each i: x0 moved by +eps and by -eps along axis i "
    "alone, x0 in float64 (float32 keeps about 7 digits), and their difference divided by "
    "the distance between the two points."
)


def check_finite_differences(numeric, x0=(-1.0, 0.0, 0.5), reveal=False):
    """Self-check of step 5's exercise (notebook 02): ``numeric``, the central differences of
    ``L = SumElements(Tanh(x))`` at ``x0``, against the derivative 1 − tanh(x)². Returns
    whether it was right.

    A first wrong try is told what is wrong and given :data:`FINITE_DIFFERENCES_HINT`; the
    second wrong try, ``reveal=True`` or
    ``caffe2rnn.exercises.reveal("finite_differences")`` gives the answer and the why as
    well."""
    with _code_exercise("finite_differences", FINITE_DIFFERENCES_HINT, "numeric", reveal):
        return _check_finite_differences(numeric, x0)
