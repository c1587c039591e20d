"""The write-the-loop exercises: step 9 (notebook 04, forward) and step 13 (notebook 06,
backward), with the link lists of steps 9 and 13."""

from contextlib import contextmanager

import numpy as np

from .verdicts import NOT_RUN, _code_exercise, _verdict, run_learners_code

# --- Write-the-loop exercises: step 9 (forward) and step 13 (backward) ----------------------
#
# The learner writes the body of the step loop of the Elman cell's recurrent network (one
# state, h_{t+1} = tanh(h_t W^T + b + x_t), states numbered by their row as from step 8 on)
# with the notebooks' names; the checks below run that code on data of their own and compare
# it with a plain NumPy recurrence that uses no links and no workspaces, so they know nothing
# of how the loop is written. They also look
# at *how* it is written where that is what the notebook teaches: each step's blobs must be
# views of rows, not copies.

#: The state tensor and the lists of steps 9 and 13 (one initial row, k = 1).
STATES = "hidden_t_prev_states"
LINKS = [("hidden_t_prev", STATES, 0), ("hidden_t", STATES, 1), ("input_t", "x", 0)]
ALIASES = [(STATES, "hidden_t_all", 1), (STATES, "hidden_t_last", -1)]
GRADIENT_LINKS = [
    ("hidden_t_grad", STATES + "_grad", 1),
    ("hidden_t_prev_grad", STATES + "_grad", 0),
    ("input_t_grad", "x_grad", 0),
]


def _elman_values(T=5, N=2, D=3, k=1, seed=7):
    """Inputs of the checks, in float64 so a right loop matches the reference closely."""
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((T, N, D)),
        "h0": rng.standard_normal((k, N, D)),
        "W": 0.5 * rng.standard_normal((D, D)),
        "b": 0.1 * rng.standard_normal(D),
    }


def _elman_states(values):
    """The state tensor, row by row, as a plain recurrence: the initial rows, then h_1..h_T."""
    rows = list(values["h0"])
    for x_t in values["x"]:
        rows.append(np.tanh(rows[-1] @ values["W"].T + values["b"] + x_t))
    return np.stack(rows)


def _elman_gradients(values, all_grad, last_grad):
    """Backpropagation through time for the Elman cell, by the chain rule and nothing else:
    (dL/dh_t for every row of the state tensor, x_grad, W_grad, b_grad, W's share per step)."""
    h = _elman_states(values)
    T = values["x"].shape[0]
    dh = np.zeros_like(h)
    x_grad = np.zeros_like(values["x"])
    W_grad, b_grad = np.zeros_like(values["W"]), np.zeros_like(values["b"])
    shares = []
    dh[T] = last_grad[0]
    for t in reversed(range(T)):
        dh[t + 1] += all_grad[t]  # the output of timestep t is h_{t+1}
        dp = dh[t + 1] * (1 - h[t + 1] ** 2)
        x_grad[t] = dp
        shares.append(dp.T @ h[t])
        W_grad += shares[-1]
        b_grad += dp.sum(axis=0)
        dh[t] = dp @ values["W"]
    return dh, x_grad, W_grad, b_grad, shares[::-1]


def _viewed_rows(blob, tensor):
    """The rows of ``tensor`` that ``blob`` shares memory with."""
    return [r for r in range(tensor.shape[0]) if np.shares_memory(blob, tensor[r])]


def _wrong_link(steps, outer, links):
    """The first (step, internal, rows it views, row it should view, its shape) where a
    step's blob is not a view of row t + offset, or None. An empty view (a slice past the
    last row, or from a negative row) views no row. A step that is None (one a loop that
    raised never reached) is skipped."""
    for t, ws in enumerate(steps):
        if ws is None:
            continue
        for internal, external, offset in links:
            blob = ws.get(internal) if hasattr(ws, "get") else None
            if not isinstance(blob, np.ndarray):
                return t, internal, None, t + offset, None
            rows = _viewed_rows(blob, outer[external]) if blob.size else []
            if rows != [t + offset]:
                return t, internal, rows, t + offset, blob.shape
    return None


def _flat_link(steps, outer, links):
    """The first (step, internal, its shape, the shape it should have) where a step's blob
    views the right row but has lost the leading time axis, or None. A link's view keeps it:
    ``window × N × D`` (here window 1), as the operator's ``rnn_internal_apply_link`` makes
    it; an integer index, ``outer[external][t + offset]``, views the same row as ``N × D``."""
    for t, ws in enumerate(steps):
        if ws is None:
            continue
        for internal, external, offset in links:
            expected = outer[external][t + offset : t + offset + 1].shape
            if ws[internal].shape != expected:
                return t, internal, ws[internal].shape, expected
    return None


def _flat_message(flat):
    t, internal, shape, expected = flat
    return (
        "timestep %d's %s views the right row, but its shape is %s where the link's view is "
        "%s (window × N × D): an integer index drops the leading time axis."
        % (t, internal, " × ".join(map(str, shape)), " × ".join(map(str, expected)))
    )


def _shape(shape):
    return " × ".join(map(str, shape))


def _link_message(wrong, outer, external):
    t, internal, rows, row, shape = wrong
    if rows is None:
        return "step workspace %d has no array named %s." % (t, internal)
    last = outer[external].shape[0] - 1
    if not rows and 0 in shape:
        return (
            "timestep %d's %s is an empty view of %s (%s): its slice holds none of %s's rows 0 "
            "to %d, as a slice that starts past the last row, or at a negative row, does; "
            "its link says row t + offset = %d."
            % (t, internal, external, _shape(shape), external, last, row)
        )
    if not rows:
        return (
            "timestep %d's %s shares no memory with %s: it is a copy (np.array, "
            ".copy(), arithmetic on the slice, a name bound to a new array), so a write "
            "to either never reaches the other." % (t, internal, external)
        )
    if len(rows) == 1:
        return "timestep %d's %s views row %d of %s; its link says row t + offset = %d." % (
            t,
            internal,
            rows[0],
            external,
            row,
        )
    contiguous = rows == list(range(rows[0], rows[-1] + 1))
    return "timestep %d's %s views %s of %s (%s); its link says row t + offset = %d alone." % (
        t,
        internal,
        "rows %d to %d" % (rows[0], rows[-1]) if contiguous else "rows %s" % rows,
        external,
        _shape(shape),
        row,
    )


def _link_answer(wrong, links):
    """'The answer:' of a wrong view: the slice the step's blob should be, row named."""
    t, internal = wrong[:2]
    external, offset = {l[0]: (l[1], l[2]) for l in links}[internal]
    return "timestep %d's %s = outer[%r][%d : %d], a view of row t + offset = %d + %d = %d." % (
        t,
        internal,
        external,
        t + offset,
        t + offset + 1,
        t,
        offset,
        t + offset,
    )


def _wrong_view(steps, outer, links, link_why, flat_why, detail=None):
    """The verdict on the first link whose blob is not a view of its row (a wrong row, a
    copy, an empty slice) or has lost the time axis (an integer index); None when every link
    is right. ``detail``, what the learner's loop raised, is its last line."""
    wrong = _wrong_link(steps, outer, links)
    if wrong is not None:
        external = dict((l[0], l[1]) for l in links)[wrong[1]]
        return _verdict(
            False,
            _link_message(wrong, outer, external),
            why=link_why,
            answer=_link_answer(wrong, links),
            detail=detail,
        )
    flat = _flat_link(steps, outer, links)
    if flat is not None:
        return _verdict(
            False,
            _flat_message(flat),
            why=flat_why,
            answer=_link_answer(flat, links),
            detail=detail,
        )
    return None


@contextmanager
def _recorded(function, step_name):
    """While it lasts, ``function``'s global ``step_name`` (the step its loop calls on each
    step workspace) keeps every workspace it is called with: what the learner's loop made,
    even when the loop raises before returning them. Yields that list (empty when
    ``function`` calls no global of that name)."""
    seen = []
    names = getattr(function, "__globals__", {})
    original = names.get(step_name)
    if callable(original):

        def recording(ws, *args, **kwargs):
            seen.append(ws)
            return original(ws, *args, **kwargs)

        names[step_name] = recording
    try:
        yield seen
    finally:
        if callable(original):
            names[step_name] = original


def _check_forward(forward):
    """What :func:`check_forward` checks, with no counting of tries."""
    values = _elman_values()
    outer = dict(values)
    link_why = (
        "before timestep t, each link (internal, external, offset) makes ws[internal] "
        "the slice outer[external][t + offset : t + offset + 1]: a view of one row."
    )
    flat_why = (
        "NumPy's tanh does not mind, but the real operator's step net does: its "
        "FC(axis=2) reads a 1 × N × D blob as N rows of D values (the FC of the "
        "operator below). A link's blob is the slice of its window of rows, which "
        "keeps the time axis; the step net's ops are written for that shape."
    )
    with _recorded(forward, "step") as seen:
        steps = run_learners_code(
            lambda: forward(outer, LINKS, ALIASES),
            "write the body of the step loop in forward (in place of the raise)",
            "forward",
            why="the body: for each (internal, external, offset) in links, "
            "ws[internal] = outer[external][t + offset : t + offset + 1]; then step(ws). "
            "ws is a ChainMap: ws[name] = value puts a blob in step workspace t, ws[name] "
            "reads it there or in outer.",
            # a wrong row often raises in the step (NumPy's broadcasting): say the row first
            explain=lambda detail: (
                _wrong_view(seen, outer, LINKS, link_why, flat_why, detail) is not None
            ),
        )
    if steps is NOT_RUN:
        return False
    T = values["x"].shape[0]
    if not isinstance(steps, list) or len(steps) != T:
        return _verdict(
            False,
            "forward returned %s; it should return the %d step workspaces."
            % ("%d of them" % len(steps) if isinstance(steps, list) else repr(steps), T),
            why="the backward pass runs in the step workspaces the forward kept: append "
            "ws to step_workspaces at the end of each step.",
        )
    wrong = _wrong_view(steps, outer, LINKS, link_why, flat_why)
    if wrong is not None:
        return wrong
    states, expected = outer[STATES], _elman_states(values)
    unwritten = [r for r in range(states.shape[0]) if np.isnan(states[r]).any()]
    if unwritten:
        return _verdict(
            False,
            "rows %s of the state tensor still hold NaN: no step wrote them." % unwritten,
            why="timestep t must run step(ws) after its links are made, so that the cell "
            "writes hidden_t into row t + 1.",
        )
    difference = np.abs(states - expected).max(axis=(1, 2))
    if difference.max() > 1e-12:
        return _verdict(
            False,
            "row %d of the state tensor differs from tanh(h W^T + b + x) by %.2g."
            % (int(np.argmax(difference > 1e-12)), difference.max()),
            why="each step must run once, in order t = 0 ... T-1, on the rows its links view.",
        )
    two = dict(values, h0=np.concatenate([values["h0"], values["h0"]]))
    shifted = [(i, e, o + 1 if e == STATES else o) for i, e, o in LINKS]
    try:
        shifted_steps = forward(two, shifted, [(STATES, "hidden_t_all", 2)] + ALIASES[1:])
    except Exception as failure:  # the learner's code
        shifted_steps = failure
    if not isinstance(shifted_steps, list) or _wrong_link(shifted_steps, two, shifted):
        return _verdict(
            False,
            "right for the notebook's lists, but not for other offsets (two initial rows, "
            "the state's links at offsets 1 and 2).",
            why="the loop must not know the cell: read each link's row from its offset, "
            "t + offset, instead of writing t or t + 1.",
        )
    return _verdict(
        True,
        "every step's blobs are views of rows t + offset, and the %d rows of the state "
        "tensor match h_(t+1) = tanh(h_t W^T + b + x_t) computed row by row (largest "
        "difference %.1g)." % (states.shape[0], difference.max()),
    )


def _check_backward(backward, forward):
    """What :func:`check_backward` checks, with no counting of tries."""
    values = _elman_values()
    rng = np.random.default_rng(8)
    T, N, D = values["x"].shape
    grads = {
        "hidden_t_all_grad": rng.standard_normal((T, N, D)),
        "hidden_t_last_grad": rng.standard_normal((1, N, D)),
    }
    outer = dict(values, **grads)
    steps = forward(outer)
    link_why = (
        "before the backward pass's timestep t, each backward link (internal, external, "
        "offset) makes ws[internal] a view of row t + offset, as the forward links did."
    )
    flat_why = (
        "the backward step net's ops are written for the forward blobs' shape: "
        "FCGradient(axis=2) reads hidden_t_grad as 1 × N × D, N rows of D values. A "
        "backward link, like a forward one, is the slice of its window of rows, which "
        "keeps the time axis."
    )

    def explain(detail):  # the steps the loop reached: those holding their gradient links
        reached = [ws if all(l[0] in ws.maps[0] for l in GRADIENT_LINKS) else None for ws in steps]
        return _wrong_view(reached, outer, GRADIENT_LINKS, link_why, flat_why, detail) is not None

    ran = run_learners_code(
        lambda: backward(outer, steps),
        "write the body of the loop over t in backward (in place of the raise)",
        "backward",
        why="the body, in step workspace t: for each backward link (internal, external, "
        "offset), ws[internal] = outer[external][t + offset : t + offset + 1]; then "
        'ws["hidden_t_grad"] += outer["hidden_t_all_grad"][t]; then backward_step(ws); '
        'then outer[p + "_grad"] += ws[p + "_grad_tmpstep"] for p in W, b.',
        explain=explain,
    )
    if ran is NOT_RUN:
        return False
    wrong = _wrong_view(steps, outer, GRADIENT_LINKS, link_why, flat_why)
    if wrong is not None:
        return wrong
    dh, x_grad, W_grad, b_grad, shares = _elman_gradients(
        values, grads["hidden_t_all_grad"], grads["hidden_t_last_grad"]
    )
    got = {n: outer.get(n) for n in ("x_grad", "W_grad", "b_grad", "h0_grad")}
    if any(not isinstance(v, np.ndarray) for v in got.values()):
        missing = [n for n, v in got.items() if not isinstance(v, np.ndarray)]
        return _verdict(
            False,
            "outer has no %s after backward." % ", ".join(missing),
            why="backward must leave the gradients in outer: x_grad and W_grad, b_grad "
            "are set up before the loop, the step's shares are added into W_grad and "
            'b_grad, and outer["h0_grad"] = g[:1] after it.',
        )
    if any(np.isnan(v).any() for v in got.values()):
        return _verdict(
            False,
            "%s hold NaN." % ", ".join(n for n, v in got.items() if np.isnan(v).any()),
            why="a row is NaN here when a step reads it before any step wrote it, or when "
            "no timestep writes it: the timesteps run t = T-1 down to 0 (timestep t reads "
            "row t + 1, "
            "which timestep t + 1 wrote), and each runs backward_step(ws), which writes row t "
            "of the state gradient and of x_grad.",
        )
    expected = {"x_grad": x_grad, "W_grad": W_grad, "b_grad": b_grad, "h0_grad": dh[:1]}

    def close(a, b):
        return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-9, atol=1e-12)

    if all(close(got[n], expected[n]) for n in expected):
        return _verdict(
            True,
            "x_grad, W_grad, b_grad, h0_grad and all %d rows of the state gradient match "
            "backpropagation through time written with the chain rule alone (no links, no "
            "workspaces)." % (T + 1),
        )
    only_last = _elman_gradients(
        values, 0 * grads["hidden_t_all_grad"], grads["hidden_t_last_grad"]
    )
    if close(got["x_grad"], only_last[1]):
        return _verdict(
            False,
            "your gradients are those of a loss on hidden_t_last alone: hidden_t_all_grad "
            "never reached them.",
            why="timestep t adds row t of hidden_t_all_grad into its hidden_t_grad (row t + 1 "
            "of the state gradient) before backward_step reads it.",
        )
    if close(got["x_grad"], x_grad) and close(got["W_grad"], shares[0]):
        return _verdict(
            False,
            "x_grad is right, W_grad is timestep 0's share alone.",
            why="each step leaves its share in W_grad_tmpstep and the next step overwrites "
            "it: add it into W_grad (and b_grad_tmpstep into b_grad) inside the loop.",
        )
    name = next(n for n in expected if not close(got[n], expected[n]))
    return _verdict(
        False,
        "%s differs from the chain rule's (largest difference %.2g)."
        % (name, np.abs(np.asarray(got[name]) - expected[name]).max()),
        why="for t = T-1 down to 0, in step workspace t: the backward links, then row t "
        "of hidden_t_all_grad into hidden_t_grad, then backward_step(ws), then the "
        "_tmpstep shares into W_grad and b_grad.",
    )


#: The hint a first wrong try of check_forward gets: where to look, not the answer.
FORWARD_HINT = (
    "Look at how step 8 turns one link (internal, external, offset) into timestep t's "
    "blob: which row of the external tensor it views, as a slice that keeps the time axis and "
    "shares the tensor's memory; then what runs on the step workspace, and what the loop "
    "keeps and returns."
)


def check_forward(forward, reveal=False):
    """Self-check of step 9's exercise (notebook 04), ``forward(outer, links, aliases)``.

    Runs the learner's loop on data of its own with the notebook's lists, then with two
    initial rows and links moved up by one, and says whether every step's blobs are views of
    the right rows and the state tensor holds the recurrence. Returns whether it was right.

    A first wrong try is told what is wrong and given :data:`FORWARD_HINT`; the second wrong
    try, ``reveal=True`` or ``caffe2rnn.exercises.reveal("forward")`` gives the answer and
    the why as well."""
    with _code_exercise("forward", FORWARD_HINT, "your loop", reveal):
        return _check_forward(forward)


#: The hint a first wrong try of check_backward gets: where to look, not the answer.
BACKWARD_HINT = (
    "Look at the order the timesteps run in, at the rows the backward links view (made as "
    "the forward links were), and at what each timestep adds before and after "
    "backward_step: its output's gradient, and its shares of W's and b's gradients."
)


def check_backward(backward, forward, reveal=False):
    """Self-check of step 13's exercise (notebook 06), ``backward(outer, step_workspaces)``.

    Runs ``forward`` (the notebook's, from step 9) and the learner's backward loop on
    data of its own, and compares every gradient with :func:`_elman_gradients`, which uses
    no links and no workspaces. Returns whether it was right.

    A first wrong try is told what is wrong and given :data:`BACKWARD_HINT`; the second
    wrong try, ``reveal=True`` or ``caffe2rnn.exercises.reveal("backward")`` gives the
    answer and the why as well."""
    with _code_exercise("backward", BACKWARD_HINT, "your loop", reveal):
        return _check_backward(backward, forward)
