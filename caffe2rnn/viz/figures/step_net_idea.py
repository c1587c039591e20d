"""``fig_step_net_idea()``: why Caffe2 ran a step net inside one operator instead of unrolling.

What the figure says:

* **unrolled**, a recurrent net is the cell's ops copied once per timestep:
  the LSTM cell of ``rnn_cell`` is 3 ops (``FC``, ``Sum``, ``LSTMUnit``), so
  T = 3 is a net of 9 ops and T = 5 another net of 15 — a net per length;
* **Caffe2's** ``RecurrentNetwork`` holds the cell once, as its ``step_net``
  argument (a NetDef), and runs it T times, T read from the input's first
  dimension at run time: one NetDef for every T. The cell is ordinary ops, so
  any cell works (attention, MILSTM) and its gradient is the ops' own (the
  memory story -- one T + 1-row tensor per state, no copies -- is the
  page's; step workspaces come at step 8);
* Caffe2 also had cuDNN's fused ``Recurrent`` op: at 0cdd09da6
  ``recurrent_op_cudnn.cc`` reads ``rnn_mode == "lstm" ? CUDNN_LSTM :
  CUDNN_GRU``, so LSTM and GRU only: fast, GPU-only, those two cells.
* The grey stacks are the input ``x``, one row per timestep: T = 3 or 5 rows.
"""

from . import parts, style
from .svg import Canvas, Figure

#: The LSTM step net's ops (``rnn_cell.LSTMCell`` at 0cdd09da6), with their family colours.
CELL_OPS = (("FC", style.COMPUTE), ("Sum", style.COMPUTE), ("LSTMUnit", style.ACTIVATION))


CELL_W = 118


def _cell(canvas, x, y, w=CELL_W, h=22, label=None):
    """One copy of the cell: its three ops as chips in a box."""
    canvas.rect(x, y, w, h, "#FFFFFF", style.STEP_EDGE, 1.2, 4)
    chip_x = x + 5
    for name, colour in CELL_OPS:
        chip_w = 24 if name == "FC" else 26 if name == "Sum" else 50
        canvas.box(chip_x, y + 4, chip_w, h - 8, name, colour, colour, 9.5, True, "#FFFFFF", 2)
        chip_x += chip_w + 4
    if label:
        canvas.text(x - 4, y + h / 2, label, style.NOTE, "end", fill=style.MUTED)


def _unrolled(canvas, cx, y, steps):
    """The cell copied ``steps`` times, top to bottom, joined by the state arrows."""
    pitch = 34
    for t in range(steps):
        _cell(canvas, cx - CELL_W / 2, y + t * pitch, label="t=%d" % t)
        if t:
            canvas.arrow(cx, y + t * pitch - 12, cx, y + t * pitch - 1, style.ACCUMULATE, 1.6)
            if t == 1:
                canvas.text(cx + 6, y + pitch - 6, "h, c", style.NOTE, fill=style.ACCUMULATE)
    return y + steps * pitch


def _sequence(canvas, x, y, steps, w=34, h=11):
    """An input sequence of ``steps`` rows."""
    for t in range(steps):
        canvas.rect(x, y + t * h, w, h, style.INPUT_FILL, style.INPUT_EDGE, 0.8)
    canvas.rect(x, y, w, steps * h, "none", style.INPUT_EDGE, 1.3)
    return y + steps * h


def fig_step_net_idea():
    """Unrolling (a net per sequence length) beside one operator holding a step net."""
    canvas = Canvas(
        style.WIDTH,
        "Why one RecurrentNetwork operator with a step net, not an unrolled net",
        "Unrolled, the LSTM cell's three ops are copied once per timestep: 9 ops for T = 3, "
        "another net of 15 ops for T = 5. Caffe2's RecurrentNetwork holds the cell once, as "
        "its step net, and runs it T times, T read from the input at run time: the same net "
        "for every sequence length.",
    )
    top = parts.heading(
        canvas,
        "Why a step net: the same graph for every sequence length",
        "Unrolling copies the cell once per timestep. Caffe2's RecurrentNetwork holds it once, "
        "as a step net, and runs it T times, T read from the input when the op runs.",
    )
    left, right, col = 10, 346, 316
    y = top + 10
    panel_h = 290
    canvas.rect(left, y, col, panel_h, "#FAFAFA", style.MUTED, 1.0, 8, dash="5 3")
    canvas.rect(right, y, col, panel_h, style.RNN_FILL, style.RNN_EDGE, 1.2, 8)
    canvas.text(left + 10, y + 14, "Unrolled: one copy of the cell per step", style.LABEL,
                bold=True)  # fmt: skip
    canvas.text(right + 10, y + 14, "Caffe2: one `RecurrentNetwork` op", style.LABEL, bold=True)

    # left: two different nets, T = 3 and T = 5
    body = y + 38
    for cx, steps in ((left + 88, 3), (left + 244, 5)):
        canvas.text(cx, body, "T = %d" % steps, style.SMALL, "middle", True)
        end = _unrolled(canvas, cx, body + 14, steps)
        canvas.text(cx, end + 6, "a net of %d ops" % (3 * steps), style.NOTE, "middle")
    canvas.text_block(left + 12, y + panel_h - 14, "A new net for every length, growing "
                      "with T.", style.NOTE, width=col - 24, fill=style.ACCUMULATE)  # fmt: skip

    # right: either input, one op, the step net inside, run T times
    seq_y = body
    canvas.text(right + col / 2, seq_y - 6, "input `x`: T rows, one per step", style.NOTE,
                "middle")  # fmt: skip
    for x, steps in ((right + 86, 3), (right + 196, 5)):
        canvas.text(x + 17, seq_y + 8, "T = %d" % steps, style.SMALL, "middle", True)
        end = _sequence(canvas, x, seq_y + 20, steps)
        canvas.arrow(x + 17, end + 2, right + col / 2 + (x - right - 141) * 0.25, seq_y + 98,
                     style.INK, 1.3)  # fmt: skip
    canvas.text(right + 158, seq_y + 34, "or", style.NOTE, "middle", fill=style.MUTED)
    op_y = seq_y + 100
    op_x, op_w = right + 30, col - 60
    canvas.rect(op_x, op_y, op_w, 78, "#FFFFFF", style.RNN_OP, 1.8, 6)
    canvas.text(op_x + 8, op_y + 11, "RecurrentNetwork", style.SMALL, bold=True, fill=style.RNN_OP)
    canvas.text(op_x + op_w - 8, op_y + 11, "argument `step_net`:", style.NOTE, "end",
                fill=style.MUTED)  # fmt: skip
    cell_l, cell_r = op_x + (op_w - CELL_W) / 2, op_x + (op_w + CELL_W) / 2
    _cell(canvas, cell_l, op_y + 24)
    loop_y = op_y + 58
    canvas.path([(cell_r + 4, op_y + 35), (cell_r + 18, op_y + 35), (cell_r + 18, loop_y),
                 (cell_l - 18, loop_y), (cell_l - 18, op_y + 35), (cell_l - 3, op_y + 35)],
                style.ACCUMULATE, 1.6)  # fmt: skip
    canvas.text(op_x + op_w / 2, loop_y + 9, "run T times: t = 0 … T−1", style.NOTE, "middle",
                fill=style.ACCUMULATE)  # fmt: skip
    canvas.text(right + col / 2, op_y + 98, "the same NetDef for T = 3, 5 or 500:", style.NOTE,
                "middle", True)  # fmt: skip
    canvas.text(right + col / 2, op_y + 112, "1 op, and 3 ops in its step net", style.NOTE,
                "middle")  # fmt: skip
    canvas.text_block(right + 12, y + panel_h - 14, "T is read from the input when the op "
                      "runs.", style.NOTE, width=col - 24, fill=style.RNN_OP)  # fmt: skip

    # what else the step net gives
    y += panel_h + 18
    points = (
        "Any cell made of ordinary ops works (attention, MILSTM, your own): the step net is a "
        "NetDef, and its gradient is built from the ops' own gradients.",
        "Caffe2 also had cuDNN's fused `Recurrent` op: fast, GPU-only, and LSTM or GRU only "
        '(`recurrent_op_cudnn.cc` at Caffe2 0cdd09da6 reads `rnn_mode` "lstm", else GRU).',
    )
    for text in points:
        canvas.circle(16, y, 2.5, style.INK, style.INK)
        y += canvas.text_block(26, y, text, style.NOTE, width=canvas.width - 36) + 4
    return Figure("fig_step_net_idea", canvas.svg())
