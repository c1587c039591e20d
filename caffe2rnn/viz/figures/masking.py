"""``fig_masking()``: masking by sequence length — padded rows repeat the last state.

What the figure says, each point measured by :func:`measure` on a run of
``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), ..., scope="lstm")``
(the path's LSTM, ``docs/concepts/cells.md``, "Masking by sequence length")
with two batch rows of lengths 5 and 3, ``T = 5``:

* every step is computed for every batch row, but ``LSTMUnit`` keeps row
  ``n``'s state once ``t >= seq_lengths[n]``: rows 3 and 4 of
  ``lstm/hidden_t_all`` for ``n = 1`` *are* its step-2 state ``h₃``
  (equal, bit for bit), and ``lstm/hidden_t_last`` of ``n = 1`` is ``h₃``.
  The figure names states as every page does: ``h_t`` is row ``t`` of the
  state tensor, ``h₀`` the initial state, so step ``t`` writes ``h_(t+1)``;
* torch's ``pad_packed_sequence`` fills those rows with zeros (its
  ``padding_value``, 0 by default) and gives the same ``h_n`` (the last real
  state): the two outputs differ in the padded rows only;
* so a loss that reads the padded rows is not masked by the layer: their
  gradient passes straight through the padded steps onto ``h₃`` — for
  ``loss = sum(hidden_t_all)``, row 3 of ``lstm/lstm/hidden_t_prev_states_grad``
  (the gradient of ``h₃``) is 3 for ``n = 1``: ``h₃`` counted three times —
  while the padded steps' gates and inputs get none (their rows of
  ``lstm/i2h_grad`` and ``x_grad`` are 0);
* ``drop_states=True`` writes zeros into the padded rows instead, and then
  ``hidden_t_last`` of ``n = 1`` is 0 too, not ``h₃``.

A run that does not show one of these raises :class:`~caffe2rnn.errors.DrawingError`:
the figure cannot be drawn against what the library does (``tests/viz`` also checks
the gradient by finite differences, and torch's side when torch is installed).
"""

from dataclasses import dataclass

import numpy as np

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure

#: The two batch rows' lengths and the sequence length the figure draws.
LENGTHS = (5, 3)
STEPS = 5
#: The blobs read, as the path's LSTM names them.
HIDDEN_ALL, HIDDEN_LAST = "lstm/hidden_t_all", "lstm/hidden_t_last"
STATES_GRAD = "lstm/lstm/hidden_t_prev_states_grad"
GATES_GRAD = "lstm/i2h_grad"


@dataclass
class Measured:
    """What one run showed, per batch row ``n``."""

    repeats: list  # [n] {t: the step whose state row t of hidden_t_all equals}, padded t only
    last: list  # [n] the step whose state hidden_t_last equals (None: it equals none)
    zero_rows: list  # [n] steps whose rows of x_grad and of lstm/i2h_grad are all 0
    state_grad: list  # [n] d loss / d (its last real state), for loss = sum(hidden_t_all)
    zeros: list  # [n] padded rows of hidden_t_all that are all 0 (drop_states=True)
    hidden_all: np.ndarray  # the run's lstm/hidden_t_all, T x N x H
    hidden_last: np.ndarray
    x_grad: np.ndarray


def measure(lengths=LENGTHS, steps=STEPS, drop_states=False, seed=0):
    """Run the path's LSTM (D = 2, H = 3) on ``len(lengths)`` batch rows of ``lengths``,
    ``loss = sum(hidden_t_all)`` and its gradient, in a workspace of its own."""
    from ... import eras, model_helper, rnn_cell
    from ...runtime import Workspace

    rng = np.random.default_rng(seed)
    dim_in, dim_out, batch = 2, 3, len(lengths)
    with eras.use("E5"), parts.fresh_net_names():
        model = model_helper.ModelHelper(name="masking")
        hidden_all, hidden_last, _, _ = rnn_cell.LSTM(
            model, "x", "seq_lengths", ("h0", "c0"), dim_in=dim_in, dim_out=dim_out,
            scope="lstm", drop_states=drop_states,
        )  # fmt: skip
        loss = model.net.SumElements([hidden_all], "loss")
        model.AddGradientOperators([loss])
    if (str(hidden_all), str(hidden_last)) != (HIDDEN_ALL, HIDDEN_LAST):
        raise DrawingError("fig_masking: the LSTM's outputs are %s, %s" % (hidden_all, hidden_last))
    workspace = Workspace()
    workspace.run_net_once(model.param_init_net.Proto())
    for name in model.param_init_net.Proto().external_output or [
        out for op in model.param_init_net.Proto().op for out in op.output
    ]:  # the figure's weights: a fixed draw, not the process's random state
        shape = workspace.fetch(name).shape
        workspace.feed(name, rng.normal(scale=0.5, size=shape).astype(np.float32))
    workspace.feed("x", rng.normal(size=(steps, batch, dim_in)).astype(np.float32))
    workspace.feed("seq_lengths", np.asarray(lengths, np.int32))
    for name in ("h0", "c0"):
        workspace.feed(name, np.zeros((1, batch, dim_out), np.float32))
    workspace.run_net_once(model.net.Proto())
    h_all, h_last = workspace.fetch(HIDDEN_ALL), workspace.fetch(HIDDEN_LAST)
    x_grad, gates_grad = workspace.fetch("x_grad"), workspace.fetch(GATES_GRAD)
    states_grad = workspace.fetch(STATES_GRAD)
    repeats, last, zero_rows, state_grad, zeros = [], [], [], [], []
    for n, length in enumerate(lengths):

        def first_equal(value, n=n):  # the earliest step whose state is ``value``
            return next((s for s in range(steps) if np.array_equal(value, h_all[s, n])), None)

        repeats.append({t: first_equal(h_all[t, n]) for t in range(length, steps)})
        repeats[-1] = {t: s for t, s in repeats[-1].items() if s != t}
        zeros.append([t for t in range(length, steps) if not np.any(h_all[t, n])])
        last.append(first_equal(h_last[0, n]))
        silent = [not np.any(x_grad[t, n]) and not np.any(gates_grad[t, n]) for t in range(steps)]
        zero_rows.append([t for t in range(steps) if silent[t]])
        row = states_grad[min(length, steps), n]  # the gradient of step length-1's state
        state_grad.append(float(row[0]) if np.all(row == row[0]) else None)
    return Measured(repeats, last, zero_rows, state_grad, zeros, h_all, h_last, x_grad)


def _checked():
    """The two runs the figure draws, each claim checked."""
    kept, dropped = measure(), measure(drop_states=True)
    short = LENGTHS.index(min(LENGTHS))
    length = LENGTHS[short]
    padded = list(range(length, STEPS))
    problems = []
    if kept.repeats[short] != {t: length - 1 for t in padded}:
        problems.append("padded rows do not repeat the last state: %s" % kept.repeats[short])
    if kept.last != [n - 1 for n in LENGTHS]:
        problems.append("hidden_t_last is not each row's last real state: %s" % kept.last)
    if kept.zero_rows[short] != padded or kept.zero_rows[1 - short]:
        problems.append("zero gradient rows: %s" % kept.zero_rows)
    if kept.state_grad[short] != 1.0 + len(padded):
        problems.append("d loss / d h_last-real is %s" % kept.state_grad[short])
    if dropped.zeros[short] != padded or np.any(dropped.hidden_last[0, short]):
        problems.append("drop_states=True does not zero the padded rows and h_last")
    if problems:
        raise DrawingError("fig_masking: " + "; ".join(problems))
    return kept


#: Fills: a real state, a repeated one (shaded), torch's zero padding.
_REAL = (style.STATE_FILL, style.STATE_EDGE)
_REPEAT = ("#F6D68B", "#B06000")
_ZERO = ("#F1F3F4", style.MUTED)
_CELL_W, _CELL_H = 74, 24


def _table(canvas, x, y, title, cells, last):
    """A T x 2 grid (t down, batch rows across) and, under it, the ``_last`` row;
    ``cells[t][n]`` is ``(text, (fill, edge))``. Returns the cells' centres."""
    canvas.text(x + 34 + _CELL_W, y, title, style.SMALL, "middle", True)
    y += 14
    for n, length in enumerate(LENGTHS):
        canvas.text(x + 34 + (n + 0.5) * _CELL_W, y + 6, "n = %d (length %d)" % (n, length),
                    style.NOTE, "middle", fill=style.MUTED)  # fmt: skip
    y += 16
    centres = {}
    for t, row in enumerate(cells):
        canvas.text(x + 28, y + t * _CELL_H + _CELL_H / 2, "t = %d" % t, style.NOTE, "end",
                    fill=style.MUTED)  # fmt: skip
        for n, (text, (fill, edge)) in enumerate(row):
            cx, cy = x + 34 + n * _CELL_W, y + t * _CELL_H
            with canvas.group("cell"):
                canvas.box(cx, cy, _CELL_W, _CELL_H, text, fill, edge, style.LABEL,
                           dash="4 2" if fill == _ZERO[0] else None)  # fmt: skip
            centres[t, n] = (cx + _CELL_W / 2, cy + _CELL_H / 2)
    y += len(cells) * _CELL_H + 16
    label, values = last
    canvas.text(x + 34 + _CELL_W, y, label, style.NOTE, "middle", fill=style.MUTED)
    y += 10
    for n, text in enumerate(values):
        canvas.box(x + 34 + n * _CELL_W, y, _CELL_W, _CELL_H, text, *_REAL, style.LABEL)
    return centres, y + _CELL_H


def fig_masking():
    """Two batch rows of lengths 5 and 3: Caffe2's ``hidden_t_all`` repeats the short row's
    last state in its padded rows, torch's padded output holds zeros; a loss over the
    padded rows sends its gradient onto step 2's state."""
    run = _checked()
    short = LENGTHS.index(min(LENGTHS))
    length = LENGTHS[short]
    last_t = length - 1
    padded = list(range(length, STEPS))
    canvas = Canvas(
        style.WIDTH,
        "Masking by sequence length: padded rows repeat the last state",
        "rnn_cell.LSTM with seq_lengths = [5, 3], T = 5; timestep t writes h(t+1), row t + 1 of "
        "the state tensor (h0 is the initial state). Caffe2's lstm/hidden_t_all: batch row "
        "1's steps 3 and 4 repeat its step-2 state h3; torch's padded output holds zeros there. "
        "Both give h3 as the last state. A loss that reads the padded rows sends their gradient "
        "to h3 (3 times h3's share for a sum); the padded steps' gates and inputs get none.",
    )
    top = parts.heading(
        canvas,
        "Masking by sequence length: padded rows repeat the last state",
        "`seq_lengths = [5, 3]`, T = 5; timestep t writes h_{t+1} (row t + 1 of the state tensor)",
    )
    y = top + 12
    ours, theirs = [], []
    for t in range(STEPS):
        row_ours, row_theirs = [], []
        for n, n_length in enumerate(LENGTHS):
            if t < n_length:
                cell = ("h_{%d}" % (t + 1), _REAL)
                row_ours.append(cell)
                row_theirs.append(cell)
            else:
                row_ours.append(("h_{%d}" % (run.repeats[n][t] + 1), _REPEAT))
                row_theirs.append(("0", _ZERO))
        ours.append(row_ours)
        theirs.append(row_theirs)
    lasts = ["h_{%d}" % (s + 1) for s in run.last]
    left_x, right_x = 8, 352
    centres, bottom = _table(canvas, left_x, y, "Caffe2: `%s`" % HIDDEN_ALL, ours,
                             ("the last state, `%s`:" % HIDDEN_LAST, lasts))  # fmt: skip
    _table(canvas, right_x, y, "torch: `pad_packed_sequence(output)`", theirs,
           ("the last state, `h_n`:", lasts))  # fmt: skip

    # the gradient of the padded rows, onto step 2's state
    gx = left_x + 34 + 2 * _CELL_W + 8
    target = centres[last_t, short]
    for t in padded:
        cx, cy = centres[t, short]
        canvas.path([(gx - 8, cy), (gx + 10 + 8 * (t - length), cy),
                     (gx + 10 + 8 * (t - length), target[1] + 3 * (t - length)),
                     (gx - 6, target[1] + 3 * (t - length))],
                    style.GRADIENT_EDGE, 1.6)  # fmt: skip
    note_x = gx + 34
    canvas.text_block(note_x, centres[length, short][1] - 20,
                      "padded rows' gradient goes to h_{%d}" % length,
                      style.NOTE, width=right_x - note_x - 4, fill=style.GRADIENT_EDGE)  # fmt: skip
    canvas.text_block(right_x + 34 + 2 * _CELL_W + 8, centres[length, short][1] - 8,
                      "constants: no gradient", style.NOTE, width=style.WIDTH - 10
                      - (right_x + 34 + 2 * _CELL_W + 8),
                      fill=style.MUTED)  # fmt: skip

    y = bottom + 18
    y = parts.key(canvas, y, [
        ("box", _REAL, "a real state"),
        ("box", _REPEAT, "a padded row: Caffe2 repeats the last state"),
        ("box", _ZERO, "torch's padding: 0"),
    ])  # fmt: skip
    y += 10
    # the one measured number a reader checks: h_3 (row 3 of the state gradient) counted 3 times
    canvas.text_block(10, y, "`loss = sum(%s)`: d loss / d h_{%d} = %g for n = %d (row %d of `%s`)"
                      % (HIDDEN_ALL, length, run.state_grad[short], short, length, STATES_GRAD),
                      style.NOTE, width=canvas.width - 20)  # fmt: skip
    return Figure("fig_masking", canvas.svg())
