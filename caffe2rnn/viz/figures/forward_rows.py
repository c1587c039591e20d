"""``fig_forward_rows()``: the forward loop of ``RecurrentNetwork`` as rows of one tensor.

What the figure says (Caffe2 0cdd09da6, ``recurrent_network_op.h``; the
same in caffe2rnn): for each recurrent state the op owns a tensor
``<state>_states`` of ``T + 1`` rows (``T + k`` for a k-row initial state);
the initial state is copied into row 0; the one step net runs once per
timestep, step ``t`` in step workspace ``t``, where three *links* make its
blobs views of rows — ``input_t`` of row ``t`` of the input sequence,
``hidden_t_prev`` of row ``t`` (offset 0) and ``hidden_t`` of row ``t + 1``
(offset 1) — so writing ``hidden_t`` fills the row the next step reads. After
the loop two *aliases* make op outputs views of the same tensor:
``hidden_t_all`` from row 1 (offset 1), ``hidden_t_last`` the last row
(offset -1). Nothing is copied between steps.

The names and offsets drawn are those of the LSTM the learner's path builds,
``rnn_cell.LSTM(..., scope="lstm")`` (``tests/viz/test_viz_figures.py``
checks them against the op it builds): every name keeps its scope, so the
figure and the pages name each blob one way.
"""

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure

#: The row labels and notes of this figure's tensors (``style.READ_*``).
_SIZES = {"label_size": style.READ_SMALL, "note_size": style.READ_NOTE}

#: The links of the path LSTM's step net the figure draws: (blob, tensor, offset).
LINKS = (
    ("input_t", "lstm/i2h", 0),
    ("lstm/hidden_t_prev", "lstm/lstm/hidden_t_prev_states", 0),
    ("lstm/hidden_t", "lstm/lstm/hidden_t_prev_states", 1),
)
#: Its aliases: (op output, offset).
ALIASES = (("lstm/hidden_t_all", 1), ("lstm/hidden_t_last", -1))
#: The cell state's tensor and the blobs linked to it (said in the note).
CELL_STATES = ("lstm/lstm/cell_t_prev_states", "lstm/cell_t_prev", "lstm/cell_t")

#: The names :func:`fig_forward_rows` draws by default (the path's LSTM); ``names=``
#: replaces any of them, e.g. with a notebook's own (notebook 04's one-state cell:
#: ``sequence="x", states="states", prev="hidden_t_prev", written="hidden_t",
#: all="h_all", last="h_last", ops="its ops"``).
DEFAULT_NAMES = {
    "sequence": LINKS[0][1],
    "input": LINKS[0][0],
    "states": LINKS[1][1],
    "prev": LINKS[1][0],
    "written": LINKS[2][0],
    "all": ALIASES[0][0],
    "last": ALIASES[1][0],
    "initial": "h0",
    "ops": "FC, Sum, LSTMUnit",
    "cell": '`rnn_cell.LSTM(..., scope="lstm")`, the LSTM of step 1',
}

#: The Elman cell of step 9 (notebook 04): its lists ``LINKS``/``ALIASES`` (the same as
#: :mod:`caffe2rnn.exercises`', checked by ``tests/viz``) name no scope, its input sequence is
#: ``x`` and its step is the function ``step(ws)``, which the notebook writes in NumPy.
ELMAN_NAMES = {
    "sequence": "x",
    "input": "input_t",
    "states": "hidden_t_prev_states",
    "prev": "hidden_t_prev",
    "written": "hidden_t",
    "all": "hidden_t_all",
    "last": "hidden_t_last",
    "initial": "h0",
    "ops": "`step(ws)` above",
    "cell": "the Elman cell of step 9",
}

#: ``cell=`` of :func:`fig_forward_rows`: whose names the figure draws.
CELLS = {"lstm": DEFAULT_NAMES, "elman": ELMAN_NAMES}


def fig_forward_rows(steps=3, names=None, cell="lstm"):
    """The forward loop for ``steps`` timesteps (2 to 5) as rows of the states tensor.

    ``cell`` picks whose names are drawn: ``"lstm"``, the path's LSTM (step 8's page), or
    ``"elman"``, the Elman cell step 9's notebook writes (:data:`ELMAN_NAMES`). ``names``
    (a dict, keys of :data:`DEFAULT_NAMES`) replaces any of them. With other names than the
    LSTM's, the note about the LSTM's second state, its cell state, is left out.
    """
    steps = parts.check_steps("fig_forward_rows", steps)
    if cell not in CELLS:
        raise DrawingError(
            "fig_forward_rows(cell=%r): expected one of %s" % (cell, ", ".join(sorted(CELLS)))
        )
    unknown = sorted(set(names or {}) - set(DEFAULT_NAMES))
    if unknown:
        raise DrawingError(
            "fig_forward_rows(names=...): unknown key(s) %s; expected some of %s"
            % (", ".join(unknown), ", ".join(DEFAULT_NAMES))
        )
    n = dict(CELLS[cell], **(names or {}))
    input_blob, sequence, prev, states, written = (
        n["input"], n["sequence"], n["prev"], n["states"], n["written"])  # fmt: skip
    all_rows, last_row, initial = n["all"], n["last"], n["initial"]
    canvas = Canvas(
        style.WIDTH,
        "The forward loop of RecurrentNetwork as rows of one tensor",
        "One step net runs T = %d times. Timestep t reads row t of the states tensor %s and writes "
        "row t + 1 through links (views, no copies); row 0 holds the initial state h0; after "
        "the loop %s views rows 1 to T and %s the last row." % (steps, states, all_rows, last_row),
    )
    top = parts.heading(
        canvas,
        "The forward loop: one step net, run T = %d times over the rows of one tensor" % steps,
        "Timestep t reads row t and writes row t + 1 through views (links): nothing is copied.",
    )
    # four columns, each as narrow as its labels at READ_NOTE px allow (round 12:
    # the figure is shown at 100 % in the column and its notes must read there)
    pitch, y0 = 80, top + 50
    input_x, input_w = 10, 64
    step_x, step_w = 88, 240
    state_x, state_w = 362, 118
    alias_x = state_x + state_w

    # column headings
    canvas.text(input_x, y0 - 30, "input sequence", style.READ_SMALL, bold=True)
    canvas.text(input_x, y0 - 15, "`%s`: T rows" % sequence, style.READ_NOTE)
    canvas.text(step_x + step_w / 2, y0 - 30, "the step net, run once per t", style.READ_SMALL,
                "middle", True)  # fmt: skip
    canvas.text(step_x + step_w / 2, y0 - 15, "%s, in workspace t" % n["ops"],
                style.READ_NOTE, "middle")  # fmt: skip
    canvas.text(state_x + state_w / 2 + 30, y0 - 30, "`%s`" % states, style.READ_NOTE, "middle")
    canvas.text(state_x + state_w / 2, y0 - 15, "states tensor: T + 1 rows", style.READ_NOTE,
                "middle", True)  # fmt: skip

    # the states tensor: row 0 the initial state, row t + 1 written by step t
    rows = [("row 0", ["`%s`, copied in" % initial, "read by timestep 0"], "#FFFBEB")]
    rows += [
        ("row %d" % (t + 1), ["written by timestep %d" % t] + (["read by timestep %d" % (t + 1)]
                                                            if t + 1 < steps else []), None)
        for t in range(steps)
    ]  # fmt: skip
    centres = parts.tensor_rows(canvas, state_x, y0, state_w, pitch, rows, **_SIZES)

    # the input sequence: T rows, row t level with step t
    in_rows = [("row %d" % t, "", style.INPUT_FILL) for t in range(steps)]
    in_centres = parts.tensor_rows(
        canvas, input_x, y0 + pitch / 2, input_w, pitch, in_rows, style.INPUT_FILL,
        style.INPUT_EDGE, cls="input", **_SIZES,
    )  # fmt: skip

    # h0 comes in from the right, into row 0
    h0_x = alias_x + 44
    canvas.box(h0_x, centres[0] - 11, 56, 22, "`%s`" % initial, style.INPUT_FILL,
               style.INPUT_EDGE, style.READ_SMALL, rx=11)  # fmt: skip
    canvas.arrow(h0_x, centres[0], alias_x + 2, centres[0], style.MUTED, 1.4)
    canvas.text(alias_x + 24, centres[0] - 9, "copy", style.READ_NOTE, "middle", fill=style.MUTED)

    # one box per step, between the row it reads and the row it writes
    box_h = pitch - 14
    for t in range(steps):
        middle = y0 + (t + 1) * pitch
        box_y = middle - box_h / 2
        with canvas.group("step"):
            canvas.rect(step_x, box_y, step_w, box_h, style.STEP_FILL, style.STEP_EDGE, 1.3, 6)
            canvas.text(step_x + 8, box_y + 12, "timestep t = %d" % t, style.READ_SMALL, bold=True)
            canvas.text(step_x + step_w - 8, box_y + 12, "workspace %d" % t, style.READ_NOTE, "end",
                        fill=style.MUTED)  # fmt: skip
            lines = (
                "`%s` = input row %d" % (input_blob, t),
                "`%s` = row %d  (offset 0)" % (prev, t),
                "`%s` = row %d  (offset 1)" % (written, t + 1),
            )
            for i, line in enumerate(lines):
                canvas.text(step_x + 8, box_y + 28 + i * 13.5, line, style.READ_NOTE)
        # links: the input row and row t into the step, the step into row t + 1
        canvas.arrow(input_x + input_w + 1, in_centres[t], step_x - 1, in_centres[t],
                     style.LINK, 1.5, "5 3", cls="link")  # fmt: skip
        canvas.arrow(state_x - 1, centres[t], step_x + step_w + 1, middle - 12,
                     style.LINK, 1.5, "5 3", cls="link")  # fmt: skip
        canvas.arrow(step_x + step_w + 1, middle + 12, state_x - 1, centres[t + 1],
                     style.LINK, 1.5, "5 3", cls="link")  # fmt: skip

    # aliases after the loop: _last (inner bracket, row T), _all (outer, rows 1..T)
    bottom = y0 + (steps + 1) * pitch
    with canvas.group("alias"):
        canvas.bracket(alias_x + 8, centres[-1] - pitch / 2 + 4, bottom - 4, stroke=style.ALIAS,
                       width=1.8)  # fmt: skip
        canvas.bracket(alias_x + 20, y0 + pitch + 4, bottom - 4, stroke=style.ALIAS, width=1.8)
        label_x = alias_x + 28
        upper = (y0 + pitch + centres[-1] - pitch / 2) / 2
        canvas.text(label_x, upper - 14, "`%s`" % all_rows, style.READ_NOTE, fill=style.ALIAS)
        canvas.text(label_x, upper + 1, "rows 1 … T", style.READ_NOTE)
        canvas.text(label_x, upper + 14, "alias, offset 1", style.READ_NOTE, fill=style.MUTED)
        canvas.line(alias_x + 8, centres[-1], label_x - 2, centres[-1], style.ALIAS, 1.0)
        canvas.text(label_x, centres[-1] - 7, "`%s`" % last_row, style.READ_NOTE, fill=style.ALIAS)
        canvas.text(label_x, centres[-1] + 8, "row T, offset −1", style.READ_NOTE, fill=style.MUTED)

    y = bottom + 22
    y = parts.key(
        canvas,
        y,
        [
            ("dashed", style.LINK, "link: a step-net blob is a view of a row"),
            ("bracket", style.ALIAS, "alias: an op output viewing rows, after the loop"),
        ],
        size=style.READ_NOTE,
    )
    if not names and cell == "lstm":
        canvas.text(10, y + 12, "The cell state: `%s`, linked the same way." % CELL_STATES[0],
                    style.READ_NOTE)  # fmt: skip
    return Figure("fig_forward_rows", canvas.svg())
