"""``fig_gru_cell()``: Caffe2's GRU cell (era E6) in its blobs, beside ``torch.nn.GRU``.

What the figure says (``gru_cell.GRUCell`` and ``gru_unit_op.h`` at Caffe2
042e8ede4, 2017-12-11; the GRU is not in 0cdd09da6):

* before the loop one ``FC`` named ``i2h`` projects the whole input to
  ``3H`` columns, the blocks reset, update, output;
* in the step net ``Split`` cuts row t of it (``input_t``) into the three
  blocks; two ``FC`` on ``hidden_t_prev`` give the reset and update
  pre-activations, each ``Sum``-med with its input block; ``Sigmoid`` of the
  reset gate multiplies ``hidden_t_prev`` (``Mul``) *before* the third ``FC``,
  whose output plus the output block is the candidate's pre-activation;
  ``Concat`` joins reset, update, output into ``gates_t`` (3H);
* ``GRUUnit(hidden_t_prev, gates_t, seq_lengths, timestep)`` computes
  ``u = σ(update)``, ``o = tanh(output)``, ``hidden_t = u ⊙ hidden_t_prev +
  (1 − u) ⊙ o`` (it ignores the reset block, already applied);
* ``torch.nn.GRU`` applies the reset gate *after* its recurrent product,
  ``n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))``: the same weights give
  other numbers. Caffe2 929c33cee (era E7) has ``linear_before_reset=True``,
  torch's (and cuDNN's) form.

The blob names are the example cell ``gru``'s (``gru_cell.GRU(..., scope="gru")``
under E6); ``tests/viz/test_viz_figures.py`` checks them against the op it builds.
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: The step net's ops in order (the example cell ``gru`` under E6).
STEP_OPS = ("Split", "FC", "FC", "Sum", "Sigmoid", "Mul", "FC", "Sum", "Sum", "Concat", "GRUUnit")
#: Blob names drawn.
BLOBS = {
    "projected": "gru/i2h",
    "hidden_t_prev": "gru/hidden_t_prev",
    "input_blocks": ("gru/input_t_reset", "gru/input_t_update", "gru/input_t_output"),
    "reset": "gru/reset_gate_t",
    "update": "gru/update_gate_t",
    "reset_sigmoid": "gru/reset_gate_t_sigmoid",
    "modified": "gru/modified_hidden_t_prev",
    "output": "gru/output_gate_t",
    "gates_t": "gru/gates_t",
    "hidden_t": "gru/hidden_t",
}
#: Gate colours: reset, update, output (the candidate).
GATES = (("r", "#D2E3FC", "#1A56B8"), ("u", "#FEEFC3", "#A85400"), ("o", "#E9D5F5", "#6A1B9A"))

_MONO = style.NOTE


def _pill(canvas, cx, y, text, fill=style.INPUT_FILL, edge=style.INPUT_EDGE, h=20):
    w = text_width(text, _MONO) + 14
    canvas.box(cx - w / 2, y - h / 2, w, h, text, fill, edge, _MONO, rx=h / 2)
    return cx - w / 2, cx + w / 2


def _op(canvas, cx, y, text, colour, w=None, h=22):
    w = w or text_width(text, style.NOTE, True) + 16
    canvas.box(cx - w / 2, y - h / 2, w, h, text, colour, colour, style.NOTE, True, "#FFFFFF", 3)
    return cx - w / 2, cx + w / 2


def _band(canvas, x, y, w, h, label, fill, edge):
    canvas.rect(x, y, w, h, fill, edge, 1.0, 6, dash="5 3")
    canvas.text(x + 8, y + 10, label, style.NOTE, fill=edge, bold=True)


def fig_gru_cell():
    """Caffe2's GRU step net (E6) beside torch.nn.GRU's equations."""
    b = BLOBS
    canvas = Canvas(
        style.WIDTH,
        "The GRU cell in Caffe2's blobs (era E6) beside torch.nn.GRU",
        "Caffe2's gru_cell.GRU projects the input to 3H columns (reset, update, output) "
        "before the loop. Its step net adds FC(hidden_t_prev) to the reset and update blocks, "
        "multiplies hidden_t_prev by the sigmoid of the reset gate before the third FC, and "
        "GRUUnit computes hidden_t = u * hidden_t_prev + (1 - u) * tanh(output). torch.nn.GRU "
        "applies the reset gate after its recurrent product.",
    )
    top = parts.heading(
        canvas,
        "The GRU cell: Caffe2's step net (era E6) and torch.nn.GRU",
        '`gru_cell.GRU(..., scope="gru")`, 2017-12. The one real difference: where r acts.',
    )
    left, col = 10, 404
    right, rcol = left + col + 12, style.WIDTH - 10 - (left + col + 12)

    # -- before the loop ------------------------------------------------------------------
    y = top + 8
    _band(canvas, left, y, col, 52, "before the loop: once, for all T rows", "#F8F9FA",
          style.MUTED)  # fmt: skip
    row = y + 32
    _pill(canvas, left + 40, row, "`x`")
    canvas.arrow(left + 56, row, left + 78, row)
    _op(canvas, left + 98, row, "FC", style.COMPUTE, 40)
    canvas.arrow(left + 119, row, left + 140, row)
    canvas.box(left + 141, row - 11, 84, 22, "`%s`" % b["projected"], "#FFFFFF", style.INK, _MONO)
    for k, (gate, fill, ink) in enumerate(GATES):  # its 3H columns: r, u, o
        canvas.box(left + 236 + k * 34, row - 10, 34, 20, gate, fill, ink, style.NOTE, True,
                   ink, 0)  # fmt: skip
    canvas.text(left + 342, row, "T × N × 3H", style.NOTE, fill=style.MUTED)

    # -- the step net: one row of ops per gate ----------------------------------------------
    s_y = y + 62
    s_h = 344
    _band(canvas, left, s_y, col, s_h, "the step net, at each t (11 ops)", style.STEP_FILL,
          style.STEP_EDGE)  # fmt: skip
    r0 = s_y + 30
    _pill(canvas, left + 52, r0, "`input_t`")
    canvas.text(left + 90, r0, "(row t of `%s`) →" % b["projected"], style.NOTE,
                fill=style.LINK)  # fmt: skip
    _op(canvas, left + 230, r0, "Split", style.MUTED)
    canvas.text(left + 254, r0, "→ 3 blocks", style.NOTE, fill=style.MUTED)
    bus_x = left + col - 18  # hidden_t_prev runs down the right side
    _, h_r = _pill(canvas, bus_x - 58, r0 + 26, "`%s`" % b["hidden_t_prev"])
    canvas.path([(bus_x, r0 + 36), (bus_x, r0 + 190)], style.INK, 1.2, head=None)
    block_x, sum_x, fc_x = left + 14, left + 184, left + 260
    gate_rows = {}
    for k, ((gate, fill, ink), block, out) in enumerate(
        zip(GATES, b["input_blocks"], (b["reset"], b["update"], b["output"]))
    ):
        ry = r0 + 62 + k * 66
        gate_rows[gate] = ry
        # the input block, from the Split
        canvas.box(block_x, ry - 10, 20, 20, gate, fill, ink, style.NOTE, True, ink, 0)
        canvas.text(block_x + 24, ry, "`%s`" % block, _MONO)
        canvas.arrow(block_x + 28 + text_width("`%s`" % block, _MONO), ry, sum_x - 21, ry)
        _op(canvas, sum_x, ry, "Sum", style.COMPUTE, 40)
        canvas.arrow(fc_x - 18, ry, sum_x + 21, ry)
        _op(canvas, fc_x, ry, "FC", style.COMPUTE, 34)
        canvas.text(sum_x, ry + 20, "`%s`" % out, _MONO, "middle")
        if gate != "o":  # FC(hidden_t_prev), from the bus
            canvas.arrow(bus_x, ry, fc_x + 18, ry, style.INK, 1.2)
    # the reset gate: Sigmoid, and r ⊙ hidden_t_prev before the output row's FC
    ry, oy = gate_rows["r"], gate_rows["o"]
    sig_x = left + 332
    mul_x = sig_x
    _op(canvas, sig_x, ry + 30, "Sigmoid", style.ACTIVATION)
    canvas.path([(sum_x, ry + 26), (sum_x, ry + 30), (sig_x - 33, ry + 30)], style.INK, 1.2)
    canvas.text(sig_x + 36, ry + 30, "r", style.SMALL, bold=True, fill=GATES[0][2])
    _op(canvas, mul_x, oy, "Mul", style.COMPUTE, 40)
    canvas.arrow(mul_x, ry + 41, mul_x, oy - 12, style.INK, 1.2)
    canvas.arrow(bus_x, oy, mul_x + 21, oy, style.INK, 1.2)
    canvas.arrow(mul_x - 21, oy, fc_x + 18, oy, style.INK, 1.2)
    canvas.text(left + col - 6, oy + 20, "r ⊙ `hidden_t_prev` first", style.NOTE,
                "end", fill=style.ACCUMULATE)  # fmt: skip
    # Concat -> gates_t -> GRUUnit -> hidden_t
    r7 = oy + 50
    _op(canvas, left + 50, r7, "Concat", style.MUTED)
    canvas.text(left + 84, r7, "(the three Sums) →", style.NOTE, fill=style.MUTED)
    for k, (gate, fill, ink) in enumerate(GATES):
        canvas.box(left + 178 + k * 24, r7 - 9, 24, 18, gate, fill, ink, style.NOTE, True, ink, 0)
    canvas.text(left + 254, r7, "`%s`: N × 3H" % b["gates_t"], _MONO)
    r8 = r7 + 36
    _op(canvas, left + 54, r8, "GRUUnit", style.ACTIVATION)
    canvas.arrow(left + 54, r7 + 11, left + 54, r8 - 11)
    also = "(+ `hidden_t_prev`, `seq_lengths`, `timestep`)"
    canvas.text(left + 24, r8 + 22, also, style.NOTE, fill=style.MUTED)  # under the op
    out_w = text_width("`%s`" % b["hidden_t"], _MONO) + 14
    out_l = left + col - 4 - out_w
    canvas.arrow(left + 90, r8, out_l - 1, r8, style.INK, 1.0)
    _pill(canvas, out_l + out_w / 2, r8, "`%s`" % b["hidden_t"], "#FFFFFF", style.INK)
    canvas.text(left + col / 2, s_y + s_h + 14, "h_{t+1} = u ⊙ h_{t} + (1 − u) ⊙ tanh(o),  "
                "u = σ(update)", style.NOTE, "middle", True)  # fmt: skip

    # -- torch.nn.GRU -----------------------------------------------------------------------
    canvas.text(right + 6, y + 10, "PyTorch: `torch.nn.GRU`", style.SMALL, bold=True)
    lines = (
        ("r = σ(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})", style.INK),
        ("z = σ(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})", style.INK),
        ("n = tanh(W_{in} x + b_{in}", style.INK),
        ("      + r ⊙ (W_{hn} h + b_{hn}))", style.ACCUMULATE),
        ("h' = (1 − z) ⊙ n + z ⊙ h", style.INK),
    )
    ty = y + 34
    for text, fill in lines:
        canvas.text(right + 6, ty, text, style.NOTE, fill=fill)
        ty += 17
    notes = (
        "u is torch's z: both keep h where the gate is 1",
        "r: torch after W_{hn} h, Caffe2 before",
        "era E7's `linear_before_reset=True`: torch's form",
        "`i2h_w` stacks r, u, o (torch: r, z, n)",
        "three recurrent FCs, a weight each",
        "`GRUUnit` ignores the reset block of `gates_t`",
    )
    ty += 8
    for text in notes:
        canvas.circle(right + 9, ty, 2.2, style.INK, style.INK)
        ty += canvas.text_block(right + 16, ty, text, style.NOTE, width=rcol - 18) + 6

    y = max(canvas.bottom, s_y + s_h) + 18
    parts.key(
        canvas,
        y,
        [(("box"), (fill, ink), name) for (_, fill, ink), name in
         zip(GATES, ("reset gate r", "update gate u (torch's z)", "output: the candidate"))],
    )  # fmt: skip
    return Figure("fig_gru_cell", canvas.svg())
