"""``fig_recurrent_op()``: one ``RecurrentNetwork`` op, its inputs, insides and outputs.

The op ``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), ...,
scope="lstm")`` builds (Caffe2 0cdd09da6; the path's step 1), drawn as a
part with pins:

* **inputs**, in the order of ``op.input``: the input sequence
  ``lstm/i2h`` (input 0, the FC of ``x`` computed before the op), the
  initial states ``h0``, ``c0`` (inputs 1, 2: ``initial_recurrent_state_ids``)
  and the references every step reads as they are (``lstm/gates_t_w``,
  ``lstm/gates_t_b``: listed in ``param``, so they get gradients;
  ``seq_lengths``);
* **inside**: the state tensors the op owns (``recurrent_states``, T + 1 rows
  each, the initial state copied into row 0) and the step net (argument
  ``step_net``), whose blobs are views of rows through the links
  (``link_internal`` / ``link_external`` / ``link_offset``): ``input_t`` =
  row t of ``lstm/i2h``, ``lstm/hidden_t_prev`` = row t and ``lstm/hidden_t``
  = row t + 1 of ``lstm/lstm/hidden_t_prev_states``, the same for the cell;
* **outputs**, in the order of ``op.output``: four aliases of the state
  tensors (``alias_src`` / ``alias_dst`` / ``alias_offset``), ``_all`` rows
  1 … T and ``_last`` row T, and last ``lstm/step_workspaces``, the step
  workspaces the gradient op reads.

Every name and offset is checked against the op caffe2rnn builds
(``tests/viz/test_viz_figures.py``); ``viz.recurrent`` draws the same op in
full detail (every op and blob).
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: op.input, in order: (name, role).
INPUTS = (
    ("lstm/i2h", "sequence"),
    ("h0", "initial"),
    ("c0", "initial"),
    ("lstm/gates_t_w", "param"),
    ("lstm/gates_t_b", "param"),
    ("seq_lengths", "reference"),
)
#: recurrent_states with their initial state and the step-net blobs linked
#: to row t (offset 0) and row t + 1 (offset 1).
STATES = (
    ("lstm/lstm/hidden_t_prev_states", "h0", "lstm/hidden_t_prev", "lstm/hidden_t"),
    ("lstm/lstm/cell_t_prev_states", "c0", "lstm/cell_t_prev", "lstm/cell_t"),
)
#: The link of the input sequence: (step-net blob, op input, offset).
SEQUENCE_LINK = ("input_t", "lstm/i2h", 0)
#: op.output, in order: (name, aliased state tensor or None, alias offset).
OUTPUTS = (
    ("lstm/hidden_t_all", "lstm/lstm/hidden_t_prev_states", 1),
    ("lstm/hidden_t_last", "lstm/lstm/hidden_t_prev_states", -1),
    ("lstm/cell_t_all", "lstm/lstm/cell_t_prev_states", 1),
    ("lstm/cell_t_last", "lstm/lstm/cell_t_prev_states", -1),
    ("lstm/step_workspaces", None, None),
)
#: The step net's ops (argument step_net).
STEP_OPS = ("FC", "Sum", "LSTMUnit")

_ROLE_FILL = {
    "sequence": (style.INPUT_FILL, style.INPUT_EDGE),
    "initial": (style.STATE_FILL, style.STATE_EDGE),
    "param": (style.PARAM_FILL, style.PARAM_EDGE),
    "reference": ("#FFFFFF", style.MUTED),
}
_MONO = style.READ_NOTE  # the size of a blob name in a pill
_CELL = 25  # px of a row of a tensor drawn across ("0", "T")
_WIDE = 40  # px of the rows "t" and "t+1"
_GAP = 16  # px of an ellipsis


def _pill(canvas, x, y, text, fill, edge, h=20, size=_MONO, cls=None):
    """A blob pill from ``x`` centred on ``y``; returns its right edge."""
    w = text_width(text, size) + 14
    with canvas.group(cls or "pill"):
        canvas.box(x, y - h / 2, w, h, text, fill, edge, size, rx=h / 2)
    return x + w


def _band(canvas, x, y, cells, fill, edge, h=24):
    """A tensor drawn across: ``cells`` is a list of (label, width); returns the
    x centre of each cell, by label."""
    centres = {}
    with canvas.group("tensor"):
        cursor = x
        for label, width in cells:
            ellipsis = label == "…"
            canvas.rect(cursor, y, width, h, "#FFFFFF" if ellipsis else fill, edge, 0.8)
            canvas.text(cursor + width / 2, y + h / 2, label, style.READ_NOTE, "middle",
                        fill=style.MUTED if ellipsis else style.INK)  # fmt: skip
            centres[label] = cursor + width / 2
            cursor += width
        canvas.rect(x, y, cursor - x, h, "none", edge, 1.5)
    return centres


def _state_cells():
    return [("0", _CELL), ("…", _GAP), ("t", _WIDE), ("t+1", _WIDE), ("…", _GAP), ("T", _CELL)]


def _rows_icon(canvas, x, y, aliased, edge):
    """A state tensor's rows 0 … T in miniature, the rows an alias views filled green."""
    labels = ["0", "1", "…", "T"]
    for k, label in enumerate(labels):
        on = (aliased == 1 and k > 0) or (aliased == -1 and k == len(labels) - 1)
        canvas.rect(x + k * 15, y, 15, 12, "#CEEAD6" if on else "#FFFFFF", edge, 0.7)
        canvas.text(x + k * 15 + 7.5, y + 6, label, style.READ_NOTE, "middle", fill=style.MUTED)
    return x + len(labels) * 15


def fig_recurrent_op():
    """The RecurrentNetwork op of the path's LSTM: inputs, step net, state tensors, outputs."""
    canvas = Canvas(
        style.WIDTH,
        "One RecurrentNetwork op: its inputs in order, what it holds, its outputs in order",
        "The RecurrentNetwork op rnn_cell.LSTM builds. Inputs: 0 lstm/i2h (the input "
        "sequence), 1 h0 and 2 c0 (initial states, copied into row 0 of the state tensors), "
        "3 lstm/gates_t_w, 4 lstm/gates_t_b and 5 seq_lengths (references every step reads). "
        "Inside: the state tensors lstm/lstm/hidden_t_prev_states and "
        "lstm/lstm/cell_t_prev_states, T + 1 rows each, and the step net (FC, Sum, LSTMUnit), "
        "whose blobs are views of rows t and t + 1 (links). Outputs: lstm/hidden_t_all, "
        "lstm/hidden_t_last, lstm/cell_t_all, lstm/cell_t_last (aliases of the state tensors) "
        "and, last, lstm/step_workspaces.",
    )
    top = parts.heading(
        canvas,
        "One RecurrentNetwork op: inputs, what it holds, outputs",
        "Numbers are positions in `op.input` and `op.output`.",
    )
    left, right = 10, style.WIDTH - 10

    # -- where things stand across the page --------------------------------------------
    seq_x = 14  # the input sequence, drawn across (outside the op: an input)
    seq_cells = [("0", _CELL), ("…", _GAP), ("t", _WIDE), ("…", _GAP), ("T−1", 30)]
    hid_x = 186  # clear of the pill of input_t, whose row t is left of it
    # the cell state's tensor right of the hidden state's name (mono, the widest label;
    # a browser's monospaced font runs a little wider than the estimate)
    cell_x = hid_x + text_width("`%s`" % STATES[0][0], _MONO) + 18

    # -- inputs, in order ----------------------------------------------------------------
    y = top + 12
    canvas.text(left, y, "inputs (`op.input`), in order", style.READ_SMALL, bold=True)
    pin_y = y + 24
    # 0: the input sequence, drawn as its T rows
    canvas.text(seq_x, pin_y - 2, "0", style.READ_SMALL, bold=True, fill=style.RNN_OP)
    canvas.text(seq_x + 12, pin_y - 2, "`lstm/i2h`", style.READ_NOTE)
    seq_y = pin_y + 8
    seq = _band(canvas, seq_x, seq_y, seq_cells, style.INPUT_FILL, style.INPUT_EDGE, h=22)
    canvas.text(seq_x, seq_y + 34, "input sequence, T × N × 4H", style.READ_NOTE, fill=style.MUTED)
    # 1, 2: the initial states, above row 0 of their tensors
    init_y = pin_y + 20
    for k, (_, initial, _, _) in enumerate(STATES):
        x0 = (hid_x, cell_x)[k]
        canvas.text(x0, pin_y - 2, "%d" % (k + 1), style.READ_SMALL, bold=True, fill=style.RNN_OP)
        _pill(canvas, x0 - 2, init_y, "`%s`" % initial, *_ROLE_FILL["initial"], cls="input")
    canvas.text(hid_x + 28, pin_y - 2, "initial state", style.READ_NOTE, fill=style.MUTED)
    canvas.text(cell_x + 28, pin_y - 2, "initial state", style.READ_NOTE, fill=style.MUTED)
    # 3, 4, 5: the references, one under the other, their right ends at the bracket
    # that gathers them into one arrow (all three are read at every step)
    ref_line = right - 14
    for k, (name, role) in enumerate(INPUTS[3:]):
        ry = pin_y - 2 + k * 23
        ref_w = text_width("`%s`" % name, _MONO) + 14
        canvas.text(ref_line - 8 - ref_w - 12, ry, "%d" % (k + 3), style.READ_SMALL, bold=True,
                    fill=style.RNN_OP)  # fmt: skip
        _pill(canvas, ref_line - 8 - ref_w, ry, "`%s`" % name, *_ROLE_FILL[role], cls="input")
    refs_bottom = pin_y - 2 + 2 * 23 + 10

    # -- the op ------------------------------------------------------------------------------
    op_y = refs_bottom + 22
    band_y = op_y + 52
    step_y = band_y + 24 + 44
    pill_y = step_y  # the blobs read, on the step net's top edge
    write_y = step_y + 30  # the blobs written, just inside it
    step_h = 96
    op_bottom = step_y + step_h + 30
    with canvas.group("op"):
        canvas.rect(left, op_y, right - left, op_bottom - op_y, style.RNN_FILL, style.RNN_OP,
                    1.8, 8)  # fmt: skip
        # the op's name at its foot: the links cross its top
        canvas.text(left + 10, op_bottom - 14, "RecurrentNetwork", style.LABEL, bold=True,
                    fill=style.RNN_OP)  # fmt: skip
        canvas.text(left + 124, op_bottom - 14, "one op of `model.net`: owns the state tensors "
                    "(`recurrent_states`), runs `step_net`", style.READ_NOTE,
                    fill=style.MUTED)  # fmt: skip

    # the step net: one box (its ops below), under the blobs its links connect
    with canvas.group("step"):
        canvas.rect(left + 10, step_y, right - left - 20, step_h, style.STEP_FILL,
                    style.STEP_EDGE, 1.3, 6)  # fmt: skip

    # the references: into the step net, every step
    with canvas.group("references"):
        canvas.bracket(ref_line, pin_y - 12, refs_bottom - 2, stroke=style.MUTED, width=1.3)
        canvas.arrow(ref_line, (pin_y + refs_bottom) / 2, ref_line, step_y - 1, style.MUTED, 1.3)
    canvas.text(ref_line - 6, op_y + 12, "references: read as they are, every step",
                style.READ_NOTE, "end", fill=style.MUTED)  # fmt: skip

    # the state tensors, owned by the op: name, rows, row 0 from the initial state
    for k, (states, _, read, written) in enumerate(STATES):
        x0 = (hid_x, cell_x)[k]
        canvas.text(x0 + _CELL + 4, band_y - 26, "`%s`" % states, _MONO)
        canvas.text(x0 + _CELL + 4, band_y - 12, "T + 1 rows", style.READ_NOTE, fill=style.MUTED)
        centres = _band(canvas, x0, band_y, _state_cells(), style.STATE_FILL, style.STATE_EDGE)
        # the initial state is copied into row 0
        canvas.arrow(x0 + _CELL / 2, init_y + 10, x0 + _CELL / 2, band_y - 1, style.MUTED, 1.3)
        # links: row t -> the blob read (on the step net's edge), the blob written -> row t+1
        with canvas.group("link"):
            read_w = text_width("`%s`" % read, _MONO) + 14
            read_x = centres["t"] + 14 - read_w
            _pill(canvas, read_x, pill_y, "`%s`" % read, style.INPUT_FILL, style.INPUT_EDGE)
            canvas.arrow(centres["t"], band_y + 25, centres["t"], pill_y - 11, style.LINK, 1.5,
                         "4 3")  # fmt: skip
            canvas.text(centres["t"] - 4, band_y + 40, "row t", style.READ_NOTE, "end",
                        fill=style.LINK)  # fmt: skip
            write_w = text_width("`%s`" % written, _MONO) + 14
            write_x = centres["t+1"] - write_w / 2 + 8
            _pill(canvas, write_x, write_y, "`%s`" % written, "#FFFFFF", style.INK)
            canvas.arrow(centres["t+1"], write_y - 11, centres["t+1"], band_y + 25, style.LINK,
                         1.5, "4 3")  # fmt: skip
            canvas.text(centres["t+1"] + 5, band_y + 40, "row t+1", style.READ_NOTE,
                        fill=style.LINK)  # fmt: skip

    # the input sequence's link: row t of lstm/i2h -> input_t
    blob, _, _ = SEQUENCE_LINK
    with canvas.group("link"):
        input_w = text_width("`%s`" % blob, _MONO) + 14
        _pill(canvas, seq["t"] - input_w / 2, pill_y, "`%s`" % blob, style.INPUT_FILL,
              style.INPUT_EDGE)  # fmt: skip
        canvas.arrow(seq["t"], seq_y + 23, seq["t"], pill_y - 11, style.LINK, 1.5, "4 3")
        canvas.text(seq["t"] + 5, pill_y - 24, "row t", style.READ_NOTE, fill=style.LINK)

    # the step net's ops, run once per t
    with canvas.group("step"):
        body_y = write_y + 26
        canvas.text(
            left + 20, body_y, "argument `step_net`: the cell's ops", style.READ_SMALL, bold=True
        )
        chip_x = left + 236
        for name in STEP_OPS:
            colour = style.ACTIVATION if name == "LSTMUnit" else style.COMPUTE
            w = text_width(name, style.READ_NOTE, True) + 16
            canvas.box(chip_x, body_y - 10, w, 20, name, colour, colour, style.READ_NOTE, True,
                       "#FFFFFF", 3)  # fmt: skip
            if name != STEP_OPS[-1]:
                canvas.arrow(chip_x + w + 1, body_y, chip_x + w + 13, body_y, style.INK, 1.1)
            chip_x += w + 14
        canvas.text(chip_x + 6, body_y, "(the LSTM cell: step 1)", style.READ_NOTE,
                    fill=style.MUTED)  # fmt: skip
        canvas.text_block(
            left + 20,
            body_y + 20,
            "run for t = 0 … T−1 (step workspace t); also reads `timestep` (= t), the references",
            style.READ_NOTE,
            width=right - left - 40,
            fill=style.MUTED,
        )

    # -- outputs, in order ------------------------------------------------------------------
    y = op_bottom + 20
    canvas.text(left, y, "outputs (`op.output`), in order", style.READ_SMALL, bold=True)
    canvas.text(left + 190, y, "aliases (`alias_src`, `alias_offset`), then the step "
                "workspaces", style.READ_NOTE, fill=style.MUTED)  # fmt: skip
    out_y = y + 24
    cursor = left
    for k, (name, source, offset) in enumerate(OUTPUTS):
        with canvas.group("output"):
            if source is None:  # the step workspaces: a line of their own
                cursor, out_y = left, out_y + 44
            canvas.text(cursor, out_y, "%d" % k, style.READ_SMALL, bold=True, fill=style.RNN_OP)
            end = _pill(canvas, cursor + 10, out_y, "`%s`" % name, "#FFFFFF", style.INK)
            if source is None:
                canvas.text(end + 8, out_y, "one workspace per step; the gradient op reads them",
                            style.READ_NOTE, fill=style.MUTED)  # fmt: skip
            else:
                icon_end = _rows_icon(canvas, cursor + 12, out_y + 13, offset, style.STATE_EDGE)
                canvas.text(icon_end + 4, out_y + 18.5, "1…T" if offset == 1 else "T",
                            style.READ_NOTE, fill=style.ALIAS)  # fmt: skip
        cursor = end + 8
    y = out_y + 30
    y = parts.key(
        canvas,
        y,
        [
            ("dashed", style.LINK, "link (`link_offset` 0 or 1): a step-net blob views a row"),
            ("box", ("#CEEAD6", style.STATE_EDGE), "the rows an output views (alias)"),
        ],
        size=style.READ_NOTE,
    )  # fmt: skip
    canvas.text(left, y + 12, "not drawn: `param`, `outputs_with_grads` (the gradient op's), "
                "the backward arguments", style.READ_NOTE, fill=style.MUTED)  # fmt: skip
    return Figure("fig_recurrent_op", canvas.svg())
