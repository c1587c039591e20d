"""``fig_step_net_idea()``: why Caffe2 ran a step net inside one operator instead of unrolling.

What the figure says:

* both draw the **input FC** ``x -> lstm/i2h``: ``rnn_cell`` (0cdd09da6,
  ``RNNCell.apply_over_sequence`` -> ``prepare_input``) projects every row
  of ``x`` with one ``FC`` before the loop, outside the step net;
* **unrolled** (``rnn_cell.LSTM(..., static_rnn_unroll_size=T)``, Caffe2
  2017-06; :mod:`caffe2rnn.cells.unrolled`), a recurrent net is the cell's
  ops copied once per timestep -- the LSTM cell of ``rnn_cell`` is 3 ops
  (``FC``, ``Sum``, ``LSTMUnit``) -- plus 6 bookkeeping ops: one ``Split``
  that cuts ``lstm/i2h`` into T rows, two ``Concat`` that stack the T hidden
  and the T cell states, and three ``ZeroGradient`` that give the outputs no
  loss reads a zero gradient. So 1 + 3T + 6 ops: 16 for T = 3, 22 for T = 5,
  157 for T = 50 -- a net per length (:func:`unrolled_op_count`, checked
  against the real build by ``tests/viz``);
* **Caffe2's** ``RecurrentNetwork`` holds the cell once, as its ``step_net``
  argument (a NetDef), and runs it T times, T read from the input's first
  dimension at run time: one NetDef of 2 ops (the input FC and the
  ``RecurrentNetwork`` op, 3 ops in its step net) for every T. The cell is
  ordinary ops, so
  any cell works (attention, MILSTM) and its gradient is the ops' own (the
  memory story -- one T + 1-row tensor per state, no copies -- is the
  page's; step workspaces come at step 8);
* Caffe2 also had cuDNN's fused ``Recurrent`` op: at 0cdd09da6
  ``recurrent_op_cudnn.cc`` enforces ``rnn_mode == "lstm" || rnn_mode ==
  "gru"`` (any other value is refused), so LSTM and GRU only: fast,
  GPU-only, those two cells.
* The grey stacks are the input ``x``, one row per timestep: T = 3 or 5 rows.
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: The LSTM step net's ops (``rnn_cell.LSTMCell`` at 0cdd09da6), with their family colours.
CELL_OPS = (("FC", style.COMPUTE), ("Sum", style.COMPUTE), ("LSTMUnit", style.ACTIVATION))

#: The unrolled build's ops around the copies of the cell (``UnrolledCell.apply_over_sequence``,
#: Caffe2's ``rnn_cell.py`` 2017-06): (type, how many, what it is for), drawn grey.
BOOKKEEPING_OPS = (
    ("Split", 1, "cuts `lstm/i2h` into T rows, one per timestep"),
    ("Concat", 2, "stack the T hidden states, and the T cell states"),
    (
        "ZeroGradient",
        3,
        "in the backward pass, a gradient of zeros for the 3 outputs "
        "other than `lstm/hidden_t_all`",
    ),
)


def unrolled_op_count(steps):
    """The ops of ``rnn_cell.LSTM(..., static_rnn_unroll_size=steps)``'s net: the input FC,
    the cell's ops once per step, and the bookkeeping ops."""
    return 1 + len(CELL_OPS) * steps + sum(n for _, n, _ in BOOKKEEPING_OPS)


CELL_W = 118


def _cell(canvas, x, y, w=CELL_W, h=22, label=None):
    """One copy of the cell: its three ops as chips in a box."""
    canvas.rect(x, y, w, h, "#FFFFFF", style.STEP_EDGE, 1.2, 4)
    chip_x = x + 5
    for name, colour in CELL_OPS:
        chip_w = 24 if name == "FC" else 26 if name == "Sum" else 50
        canvas.box(
            chip_x, y + 4, chip_w, h - 8, name, colour, colour, style.NOTE, True, "#FFFFFF", 2
        )
        chip_x += chip_w + 4
    if label:
        canvas.text(x - 4, y + h / 2, label, style.NOTE, "end", fill=style.MUTED)


#: The input projection both panels draw, outside the cell (the path LSTM's names).
INPUT_FC = ("x", "lstm/i2h")


def _input_fc(canvas, cx, y, label="FC: all T rows"):
    """The one input ``FC`` before the loop: ``x`` -> ``lstm/i2h``, every row at once.
    Returns the y below it."""
    w = 112
    canvas.box(cx - w / 2, y, w, 18, label, style.COMPUTE, style.COMPUTE, style.NOTE, True,
               "#FFFFFF", 3,
               cls="input-fc")  # fmt: skip
    return y + 18


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


def _chip(canvas, x, y, text, h=16):
    """One grey bookkeeping op; returns its width."""
    w = text_width(text, style.NOTE, True) + 10
    canvas.box(x, y, w, h, text, style.SHAPE, style.SHAPE, style.NOTE, True, "#FFFFFF", 2,
               cls="bookkeeping")  # fmt: skip
    return w


def _bookkeeping_row(canvas, cx, y, names):
    """Grey chips side by side, centred on ``cx``."""
    gap = 4
    widths = [text_width(name, style.NOTE, True) + 10 for name in names]
    x = cx - (sum(widths) + gap * (len(names) - 1)) / 2
    for name in names:
        x += _chip(canvas, x, y, name) + gap


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
        "Both start with one input FC over all T rows of x. Unrolled, the LSTM cell's three ops "
        "are then copied once per timestep, with 6 bookkeeping ops (a Split, two Concats, three "
        "ZeroGradients): 16 ops for T = 3, another net of 22 ops for T = 5. "
        "Caffe2's RecurrentNetwork holds the cell once, as its step net, and runs it T times, T "
        "read from the input at run time: the same net of 2 ops for every sequence length.",
    )
    top = parts.heading(
        canvas,
        "Why a step net: the same graph for every sequence length",
        "Unrolling copies the cell per timestep; RecurrentNetwork holds it once and runs it "
        "T times.",
    )
    left, right, col = 10, 346, 316
    y = top + 10
    panel_h = 356
    canvas.rect(left, y, col, panel_h, "#FAFAFA", style.MUTED, 1.0, 8, dash="5 3")
    canvas.rect(right, y, col, panel_h, style.RNN_FILL, style.RNN_EDGE, 1.2, 8)
    canvas.text(left + 10, y + 14, "Unrolled: one copy of the cell per step", style.LABEL,
                bold=True)  # fmt: skip
    canvas.text(right + 10, y + 14, "Caffe2: one `RecurrentNetwork` op", style.LABEL, bold=True)

    # left: two different nets, T = 3 and T = 5
    body = y + 38
    (split, _, _), (concat, n_concat, _), (zero, n_zero, _) = BOOKKEEPING_OPS
    for cx, steps in ((left + 86, 3), (left + 236, 5)):  # the chips stay in the panel
        canvas.text(cx, body, "T = %d" % steps, style.SMALL, "middle", True)
        below = _input_fc(canvas, cx, body + 12)
        canvas.arrow(cx, below + 1, cx, below + 9, style.INK, 1.2)
        _bookkeeping_row(canvas, cx, below + 10, [split + " into T rows"])
        below += 26
        canvas.arrow(cx, below + 1, cx, below + 9, style.INK, 1.2)
        end = _unrolled(canvas, cx, below + 10, steps)
        _bookkeeping_row(canvas, cx, end - 6, ["%d %s" % (n_concat, concat),
                                                "%d %s" % (n_zero, zero)])  # fmt: skip
        canvas.text(cx, end + 22, "1 + %d + 6 = %d ops" % (3 * steps, unrolled_op_count(steps)),
                    style.NOTE, "middle", True)  # fmt: skip
    canvas.text_block(left + 12, y + panel_h - 28, "A new net for every length, growing "
                      "with T: 1 + 3T + 6 ops, %d for T = 50." % unrolled_op_count(50),
                      style.NOTE, width=col - 24, fill=style.ACCUMULATE)  # fmt: skip

    # right: either input, one op, the step net inside, run T times
    seq_y = body
    canvas.text(right + col / 2, seq_y - 6, "input `x`: T rows, one per step", style.NOTE,
                "middle")  # fmt: skip
    fc_y = seq_y + 86
    for x, steps in ((right + 86, 3), (right + 196, 5)):
        canvas.text(x + 17, seq_y + 8, "T = %d" % steps, style.SMALL, "middle", True)
        end = _sequence(canvas, x, seq_y + 16, steps)
        canvas.arrow(x + 17, end + 2, right + col / 2 + (x - right - 141) * 0.3, fc_y - 1,
                     style.INK, 1.3)  # fmt: skip
    canvas.text(right + 158, seq_y + 34, "or", style.NOTE, "middle", fill=style.MUTED)
    below = _input_fc(canvas, right + col / 2, fc_y, "FC: all T rows")
    canvas.text(right + col / 2 + 62, fc_y + 9, "→ `%s`" % INPUT_FC[1], style.NOTE)
    op_y = below + 12
    canvas.arrow(right + col / 2, below + 1, right + col / 2, op_y - 1, style.INK, 1.3)
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
    canvas.text(right + col / 2, op_y + 92, "the same NetDef for T = 3, 5 or 500:", style.NOTE,
                "middle", True)  # fmt: skip
    canvas.text(right + col / 2, op_y + 106, "2 ops (the input FC, `RecurrentNetwork`);",
                style.NOTE, "middle")  # fmt: skip
    canvas.text(right + col / 2, op_y + 120, "3 ops in the step net", style.NOTE, "middle")
    canvas.text_block(right + 12, y + panel_h - 14, "T is read from the input when the op "
                      "runs.", style.NOTE, width=col - 24, fill=style.RNN_OP)  # fmt: skip

    # the grey ops, named (the page lists them: docs/start-here.md)
    y += panel_h + 18
    # a swatch, then what each of the three kinds is for
    canvas.rect(12, y - 6, 20, 12, style.SHAPE, style.SHAPE, 1.0, 2)
    canvas.text(40, y, "the unrolled net's 6 bookkeeping ops:", style.NOTE, bold=True)
    for name, n, what in BOOKKEEPING_OPS:
        y += style.NOTE * 1.6
        canvas.text(40, y, "%d `%s`: %s" % (n, name, what), style.NOTE)
    return Figure("fig_step_net_idea", canvas.svg())
