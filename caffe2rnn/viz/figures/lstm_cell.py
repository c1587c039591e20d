"""``fig_lstm_cell()``: the LSTM cell in Caffe2's blobs, beside ``torch.nn.LSTM``'s.

What the figure says:

* **Caffe2** (``rnn_cell.LSTMCell`` at 0cdd09da6): ``prepare_input`` applies
  one ``FC`` named ``i2h`` (``i2h_w``, ``i2h_b``) to the whole input sequence
  *before* the loop (``T × N × 4H``); inside the step net ``gates_t =
  FC(hidden_t_prev)`` (``gates_t_w``, ``gates_t_b``), then ``Sum(gates_t,
  input_t)`` with ``input_t`` = row t of ``i2h``; then ``LSTMUnit(hidden_t_prev,
  cell_t_prev, gates_t, seq_lengths, timestep)`` -> ``hidden_t``, ``cell_t``.
  ``LSTMUnit`` reads the 4H gate columns in the order **i, f, o, g**
  (``lstm_unit_op.h``: ``X[0..D)`` input, ``X[D..2D)`` forget (+ ``forget_bias``),
  ``X[2D..3D)`` output, ``X[3D..4D)`` the tanh candidate);
* **PyTorch** (``torch.nn.LSTM``'s documented formula): ``W_ih x_t + b_ih +
  W_hh h + b_hh`` with the gate blocks in the order **i, f, g, o**;
* the rest is the same: ``c' = f ⊙ c + i ⊙ g``, ``h' = o ⊙ tanh(c')``.

Both sides number states as the path does from step 8 on
(``docs/concepts/links-and-aliases.md``, label ``row-convention``): timestep t
reads ``h_t``, ``c_t`` (row t of the state tensors) and writes ``h_{t+1}``,
``c_{t+1}`` (row t + 1), so Caffe2's ``hidden_t_prev`` is ``h_t`` and its
``hidden_t`` is ``h_{t+1}``. One line under the formula says that torch's
documentation numbers the same step ``h_{t-1} -> h_t``.

The blob names are those of the learner's path, ``rnn_cell.LSTM(model, "x",
"seq_lengths", ("h0", "c0"), ..., scope="lstm")``, scope included.
``tests/viz/test_viz_figures.py`` checks them against the op it builds, and
the Caffe2 gate order drawn here against what caffe2rnn's ``LSTMUnit``
computes.
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: Gate order of Caffe2's LSTMUnit and of torch.nn.LSTM's weight blocks.
CAFFE2_GATES = ("i", "f", "o", "g")
TORCH_GATES = ("i", "f", "g", "o")

#: The blobs the Caffe2 side names: input, FC output, step-net blobs, parameters.
BLOBS = {
    "input": "x",
    "projected": "lstm/i2h",
    "input_t": "input_t",
    "hidden_t_prev": "lstm/hidden_t_prev",
    "cell_t_prev": "lstm/cell_t_prev",
    "gates_t": "lstm/gates_t",
    "hidden_t": "lstm/hidden_t",
    "cell_t": "lstm/cell_t",
    "params": ("lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"),
}

#: (Caffe2, torch.nn.LSTM, note) rows of the table under the cells.
MAPPING = (
    ("`lstm/i2h_w` (4H × D)", "`weight_ih_l0` (4H × D)", "blocks i f o g ↔ i f g o"),
    ("`lstm/gates_t_w` (4H × H)", "`weight_hh_l0` (4H × H)", "the same reordering"),
    ("`lstm/i2h_b` + `lstm/gates_t_b`", "`bias_ih_l0` + `bias_hh_l0`", "only the sum matters"),
    ("`lstm/hidden_t_all` (T × N × H)", "`output` (T × N × H)", "time-major in both"),
    ("`lstm/hidden_t_last`, `lstm/cell_t_last`", "`h_n`, `c_n`", "1 × N × H"),
    (
        "`seq_lengths` (LSTMUnit input)",
        "`PackedSequence`",
        "Caffe2: past its length a row keeps its state",
    ),
)


#: The size of the map's text: the table a reader reads row by row, so a little larger
#: than the drawing's notes (docs/start-here.md shows it at the column's width).
TABLE = 11


def _pill(canvas, x, y, w, text, h=22):
    canvas.box(x, y - h / 2, w, h, text, style.INPUT_FILL, style.INPUT_EDGE, style.NOTE, rx=h / 2)


def _op(canvas, x, y, w, text, colour, h=24):
    canvas.box(x, y - h / 2, w, h, text, colour, colour, style.SMALL, bold=True,
               fill_text="#FFFFFF", rx=3)  # fmt: skip


def _param(canvas, x, y, w, text):
    canvas.box(x, y - 10, w, 20, text, style.PARAM_FILL, style.PARAM_EDGE, style.NOTE, rx=3)


def _gates(canvas, x, y, order, block=54, h=24):
    """The 4H gate vector as four coloured blocks, in ``order``."""
    with canvas.group("gates " + "".join(order)):
        for k, gate in enumerate(order):
            fill, ink = style.GATES[gate]
            canvas.box(x + k * block, y - h / 2, block, h, gate, fill, ink, style.LABEL + 1,
                       bold=True, fill_text=ink, rx=0, width=1.2)  # fmt: skip
    return x + 4 * block


def _band(canvas, x, y, w, h, label, fill, edge):
    canvas.rect(x, y, w, h, fill, edge, 1.0, 6, dash="5 3")
    canvas.text(x + 8, y + 10, label, style.NOTE, fill=edge, bold=True)


def fig_lstm_cell():
    """The LSTM cell in Caffe2's blobs (left) beside torch.nn.LSTM's (right)."""
    canvas = Canvas(
        style.WIDTH,
        "The LSTM cell in Caffe2's blobs beside torch.nn.LSTM",
        "Caffe2's rnn_cell.LSTM applies the input FC i2h to the whole sequence before the "
        "loop; its step net adds FC(hidden_t_prev) to row t of i2h and LSTMUnit reads the "
        "gates in the order i, f, o, g. torch.nn.LSTM computes W_ih x_t + b_ih + W_hh h + b_hh "
        "with the gates in the order i, f, g, o. The cell update is the same.",
    )
    top = parts.heading(
        canvas,
        "One LSTM step, in Caffe2's blobs and in torch.nn.LSTM",
        "Same arithmetic, different plumbing: where the input product is taken, gate order, "
        "biases.",
    )
    left, right, col = 10, 346, 316
    y = top + 18
    canvas.text(left + col / 2, y, "Caffe2: blobs of `rnn_cell.LSTM`", style.LABEL, "middle",
                True)  # fmt: skip
    canvas.text(right + col / 2, y, "PyTorch: `torch.nn.LSTM`", style.LABEL, "middle", True)

    # -- before the loop -------------------------------------------------------------
    b1 = y + 14
    _band(canvas, left, b1, col, 74, "before the loop: once, for all T rows", "#F8F9FA",
          style.MUTED)  # fmt: skip
    _band(canvas, right, b1, col, 74, "before the loop", "#F8F9FA", style.MUTED)
    row = b1 + 34
    b = BLOBS
    _pill(canvas, left + 10, row, 62, "`%s`  T×N×D" % b["input"])
    canvas.arrow(left + 73, row, left + 94, row, style.INK)
    _op(canvas, left + 95, row, 44, "FC", style.COMPUTE)
    canvas.box(left + 78, row + 15, 78, 30, "`%s`\n`%s`" % b["params"][:2], style.PARAM_FILL,
               style.PARAM_EDGE, style.NOTE, rx=3)  # fmt: skip
    canvas.arrow(left + 140, row, left + 182, row, style.INK)
    canvas.box(left + 183, row - 16, 122, 32, "`%s`\nT × N × 4H" % b["projected"], "#FFFFFF",
               style.INK, style.NOTE)  # fmt: skip
    canvas.text_block(right + 12, row - 4, "nothing: `x_t` goes into every step, "
                      "multiplied there by `W_ih`", style.NOTE, width=col - 24,
                      fill=style.MUTED)  # fmt: skip

    # -- one step ----------------------------------------------------------------------
    b2 = b1 + 86
    step_h = 262
    _band(canvas, left, b2, col, step_h, "the step net, at timestep t", style.STEP_FILL,
          style.STEP_EDGE)  # fmt: skip
    _band(canvas, right, b2, col, step_h, "timestep t", style.STEP_FILL, style.STEP_EDGE)

    # Caffe2: hidden_t_prev -> FC -> (+ input_t) Sum -> gates_t -> LSTMUnit
    r1 = b2 + 34
    _pill(canvas, left + 6, r1, 122, "`%s`" % b["hidden_t_prev"])
    canvas.text(left + 67, r1 + 22, "h_{t}: row t", style.NOTE, "middle", fill=style.LINK)
    canvas.arrow(left + 129, r1, left + 143, r1)
    _op(canvas, left + 144, r1, 40, "FC", style.COMPUTE)
    canvas.box(left + 114, r1 + 15, 100, 30, "`%s`\n`%s`" % b["params"][2:], style.PARAM_FILL,
               style.PARAM_EDGE, style.NOTE, rx=3)  # fmt: skip
    _pill(canvas, left + 234, r1, 72, "`%s`" % b["input_t"])
    canvas.arrow(left + 270, b1 + 50, left + 270, r1 - 12, style.LINK, 1.5, "4 3")
    canvas.text(left + 276, b1 + 79, "row t", style.NOTE, fill=style.LINK)
    r2 = r1 + 56
    _op(canvas, left + 206, r2, 50, "Sum", style.COMPUTE)
    canvas.path([(left + 185, r1), (left + 222, r1), (left + 222, r2 - 12)], style.INK)
    canvas.arrow(left + 270, r1 + 11, left + 244, r2 - 12)
    gates_y = r2 + 42
    gx = left + (col - 4 * 54) / 2
    canvas.path([(left + 231, r2 + 12), (left + 231, gates_y - 13)], style.INK)
    _gates(canvas, gx, gates_y, CAFFE2_GATES)
    canvas.text(left + col / 2, gates_y + 20, "`%s`: N × 4H, order i f o g" % b["gates_t"],
                style.NOTE, "middle")  # fmt: skip
    r3 = gates_y + 52
    unit_x = left + 176
    canvas.arrow(left + col / 2 + 30, gates_y + 27, unit_x + 50, r3 - 13)
    _op(canvas, unit_x, r3, 100, "LSTMUnit", style.ACTIVATION)
    for k, line in enumerate(("+ `%s`" % b["hidden_t_prev"], "+ `%s` (c_{t})" % b["cell_t_prev"],
                              "+ `seq_lengths`, `timestep`")):  # fmt: skip
        canvas.text(left + 12, r3 - 13 + k * 12.5, line, style.NOTE, fill=style.MUTED)
    r4 = r3 + 40
    canvas.arrow(unit_x + 30, r3 + 12, left + 150, r4 - 11)
    canvas.arrow(unit_x + 70, r3 + 12, left + 262, r4 - 11)
    _pill(canvas, left + 104, r4, 96, "`%s`" % b["hidden_t"])
    _pill(canvas, left + 218, r4, 88, "`%s`" % b["cell_t"])
    canvas.text(left + 152, r4 + 22, "h_{t+1}: row t + 1", style.NOTE, "middle",
                fill=style.LINK)  # fmt: skip
    canvas.text(left + 262, r4 + 22, "c_{t+1}", style.NOTE, "middle", fill=style.LINK)

    # torch, numbered as the path numbers rows: x_t, h_t -> W_ih x_t + W_hh h_t (+ biases)
    _pill(canvas, right + 10, r1, 62, "h_{t}")
    canvas.arrow(right + 73, r1, right + 86, r1)
    canvas.box(right + 87, r1 - 12, 120, 24, "W_{hh} h_{t} + b_{hh}", "#FFFFFF", style.COMPUTE,
               style.NOTE, width=1.4)  # fmt: skip
    _pill(canvas, right + 244, r1, 62, "x_{t}")
    canvas.box(right + 196, r1 + 22, 110, 24, "W_{ih} x_{t} + b_{ih}", "#FFFFFF", style.COMPUTE,
               style.NOTE, width=1.4)  # fmt: skip
    canvas.arrow(right + 275, r1 + 11, right + 275, r1 + 21)
    _op(canvas, right + 150, r2, 40, "+", style.COMPUTE)
    canvas.arrow(right + 147, r1 + 12, right + 163, r2 - 12)
    canvas.arrow(right + 236, r1 + 46, right + 186, r2 - 12)
    canvas.path([(right + 170, r2 + 12), (right + 170, gates_y - 13)], style.INK)
    gx_t = right + (col - 4 * 54) / 2
    _gates(canvas, gx_t, gates_y, TORCH_GATES)
    canvas.text(right + col / 2, gates_y + 20, "gates: N × 4H, order i f g o (g and o swap)",
                style.NOTE, "middle", fill=style.ACCUMULATE)  # fmt: skip
    canvas.arrow(right + col / 2, gates_y + 27, right + col / 2, r3 - 13)
    canvas.box(right + col / 2 - 86, r3 - 12, 172, 24, "σ(i), σ(f), tanh(g), σ(o)",
               style.ACTIVATION, style.ACTIVATION, style.NOTE, True, "#FFFFFF", 3)  # fmt: skip
    canvas.text(right + 10, r3, "+ c_{t}", style.NOTE, fill=style.MUTED)
    canvas.arrow(right + col / 2 - 20, r3 + 12, right + col / 2 - 50, r4 - 11)
    canvas.arrow(right + col / 2 + 20, r3 + 12, right + col / 2 + 50, r4 - 11)
    _pill(canvas, right + col / 2 - 100, r4, 84, "h_{t+1}")
    _pill(canvas, right + col / 2 + 16, r4, 84, "c_{t+1}")

    # -- the same arithmetic ---------------------------------------------------------------
    y = b2 + step_h + 20
    canvas.text(
        style.WIDTH / 2,
        y,
        "in both:  i, f, o = σ(·),  g = tanh(·),  "
        "c_{t+1} = f ⊙ c_{t} + i ⊙ g,  h_{t+1} = o ⊙ tanh(c_{t+1})",
        style.SMALL,
        "middle",
        True,
    )
    canvas.text(
        style.WIDTH / 2,
        y + 16,
        "torch's docs number from h_{t−1}: they write this step h_{t−1}, c_{t−1} → h_{t}, "
        "c_{t}; the rows are the same",
        style.NOTE,
        "middle",
        fill=style.ACCUMULATE,
    )
    canvas.text(
        style.WIDTH / 2,
        y + 31,
        "(LSTMUnit adds its argument `forget_bias`, default 0, to f before the σ)",
        style.NOTE,
        "middle",
        fill=style.MUTED,
    )

    # -- the map: a table read at the page's column width, its text at TABLE px ----------------
    y += 52
    heads = ("Caffe2 blob", "torch.nn.LSTM", "")
    widths = [max(text_width(row[k], TABLE) for row in MAPPING + (heads,)) for k in range(2)]
    columns = (left, left + widths[0] + 18, left + widths[0] + widths[1] + 36)
    last_w = style.WIDTH - 10 - columns[2] - 4
    for x, text in zip(columns, heads):
        canvas.text(x + 4, y, text, TABLE, bold=True)
    canvas.line(left, y + 9, style.WIDTH - 10, y + 9, style.MUTED, 0.8)
    ry = y + 25
    with canvas.group("mapping"):
        for row_texts in MAPPING:
            height = TABLE * 1.6
            for x, text in zip(columns, row_texts):
                if x == columns[-1]:
                    taken = canvas.text_block(x + 4, ry, text, TABLE, width=last_w,
                                              fill=style.MUTED, leading=1.25)  # fmt: skip
                    height = max(height, taken + TABLE * 0.35)
                else:
                    canvas.text(x + 4, ry, text, TABLE)
            ry += height
    return Figure("fig_lstm_cell", canvas.svg())
