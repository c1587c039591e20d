"""``fig_backward_step_net()``: what the gradient op runs at each step, as a schematic.

``RecurrentNetworkGradient`` runs one net per timestep, t = T−1 … 0: the
``backward_step_net`` argument that ``recurrent_net`` built from the cell's
gradient ops, with ops of its own around it (Caffe2 0cdd09da6,
``recurrent_network_op.h``; caffe2rnn:
:func:`caffe2rnn.operators.rnn.gradient.prepared_backward_step_net`). For the
path's LSTM (``rnn_cell.LSTM(..., scope="lstm")``, ``outputs_with_grads=[0]``):

1. ``rnn_internal_accumulate_gradient_input`` (the op's, put first): row t of
   ``lstm/hidden_t_all_grad`` (GO) is added into row t + 1 of
   ``lstm/lstm/hidden_t_prev_states_grad``, the row ``lstm/hidden_t_grad``
   views;
2. ``LSTMUnitGradient`` reads ``lstm/hidden_t_grad``, ``lstm/cell_t_grad``
   (row t + 1 of each state gradient) and the forward blobs step workspace t
   kept; writes ``lstm/hidden_t_prev_grad`` and ``lstm/cell_t_prev_grad``
   (row t) and ``lstm/gates_t_grad``, a view of row t of ``lstm/i2h_grad``
   (the forward ``Sum`` passes the gradient on to ``input_t``);
3. ``FCGradient`` writes the weight and bias gradients (renamed
   ``..._tmpstep`` by the C++ op) and its part of the gradient of
   ``lstm/hidden_t_prev``, ``_lstm/hidden_t_prev_grad_autosplit_0``:
   ``lstm/hidden_t_prev`` feeds both ``FC`` and ``LSTMUnit``;
4. ``Sum`` adds the two parts into ``lstm/hidden_t_prev_grad`` (the
   autosplit of step 4, "Gradients without a tape");
5. one ``Sum`` per parameter (the op's, put last) adds the step's
   ``_tmpstep`` into the total ``lstm/gates_t_w_grad`` / ``lstm/gates_t_b_grad``.

caffe2rnn also puts ``rnn_internal_apply_link`` ops before these (how it
applies links, in every era; at 0cdd09da6 the C++ applied them itself): the
figure leaves them out, as ``viz.backward`` does. Every name is checked
against the op caffe2rnn builds (``tests/viz/test_viz_figures.py``).
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: The ops the figure draws, in the order they run: (number, op type, who puts it there).
OPS = (
    (0, "rnn_internal_accumulate_gradient_input", "op"),
    (1, "LSTMUnitGradient", "cell"),
    (2, "FCGradient", "cell"),
    (3, "Sum", "cell"),
    (4, "Sum", "op"),
    (5, "Sum", "op"),
)
#: The blobs it names.
BLOBS = {
    "go": "lstm/hidden_t_all_grad",
    "states_grad": "lstm/lstm/hidden_t_prev_states_grad",
    "hidden_grad": "lstm/hidden_t_grad",
    "cell_grad": "lstm/cell_t_grad",
    "hidden_prev_grad": "lstm/hidden_t_prev_grad",
    "cell_prev_grad": "lstm/cell_t_prev_grad",
    "gates_grad": "lstm/gates_t_grad",
    "input_grad": "lstm/i2h_grad",
    "autosplit": "_lstm/hidden_t_prev_grad_autosplit_0",
    "w_tmpstep": "lstm/gates_t_w_grad_tmpstep",
    "b_tmpstep": "lstm/gates_t_b_grad_tmpstep",
    "w_grad": "lstm/gates_t_w_grad",
    "b_grad": "lstm/gates_t_b_grad",
}

_MONO = style.READ_NOTE
#: Colour by ORIGIN: who put the op into the net the gradient op runs.
ORIGIN = {"op": style.RNN_OP, "cell": style.COMPUTE}
ORIGIN_TEXT = {
    "op": "added by the C++ gradient op",
    "cell": "from `backward_step_net` (the cell's gradients)",
}


def _op(canvas, x, y, w, number, text, origin, h=26, note="", kind="op"):
    """An op box with its run-order number on its left; ``note`` a second,
    smaller line. Its colour says its origin (:data:`ORIGIN`), its shape its
    kind: a rounded box for an op, a hexagon (pointed ends) for a ``Sum``."""
    colour = ORIGIN[origin]
    with canvas.group("op %s %s" % (origin, kind)):
        if kind == "sum":
            tip = min(h / 2, 12)
            canvas.polygon([(x, y), (x + tip, y - h / 2), (x + w - tip, y - h / 2), (x + w, y),
                            (x + w - tip, y + h / 2), (x + tip, y + h / 2)], colour, colour,
                           cls="sum")  # fmt: skip
        else:
            canvas.rect(x, y - h / 2, w, h, colour, colour, 1.0, 6)
        if note:
            canvas.text(x + w / 2, y - 7, text, style.READ_SMALL, "middle", True, "#FFFFFF")
            canvas.text(x + w / 2, y + 8, note, style.READ_NOTE, "middle", fill="#FFFFFF")
        else:
            canvas.text(x + w / 2, y, text, style.READ_SMALL, "middle", True, "#FFFFFF")
        canvas.circle(x - 13, y, 9, "#FFFFFF", colour, 1.4)
        canvas.text(x - 13, y, "%d" % number, style.READ_NOTE, "middle", True, colour)


def _blob(canvas, cx, y, text, h=20):
    """A gradient blob pill centred on ``cx``; returns its (left, right)."""
    w = text_width("`%s`" % text, _MONO) + 14
    with canvas.group("blob"):
        canvas.box(cx - w / 2, y - h / 2, w, h, "`%s`" % text, style.GRADIENT_FILL,
                   style.GRADIENT_EDGE, _MONO, rx=h / 2, dash="4 2")  # fmt: skip
    return cx - w / 2, cx + w / 2


def _note(canvas, x, y, text, anchor="start", fill=style.MUTED):
    canvas.text(x, y, text, style.READ_NOTE, anchor, fill=fill)


def fig_backward_step_net():
    """The backward step net of the path's LSTM as the gradient op runs it, per timestep t."""
    b = BLOBS
    canvas = Canvas(
        style.WIDTH,
        "What RecurrentNetworkGradient runs at each timestep t",
        "For t = T-1 down to 0: rnn_internal_accumulate_gradient_input adds row t of %s into "
        "row t + 1 of %s; LSTMUnitGradient reads %s and %s (rows t + 1) and writes %s, %s "
        "(rows t) and %s (row t of %s); FCGradient writes the step's weight and bias gradients "
        "(%s, %s) and %s; a Sum adds the two parts of %s; one Sum per parameter adds the "
        "step's part into %s and %s. Ops 1 to 3 come from the backward_step_net argument, "
        "ops 0, 4 and 5 are added by the C++ gradient op."
        % (
            b["go"],
            b["states_grad"],
            b["hidden_grad"],
            b["cell_grad"],
            b["hidden_prev_grad"],
            b["cell_prev_grad"],
            b["gates_grad"],
            b["input_grad"],
            b["w_tmpstep"],
            b["b_tmpstep"],
            b["autosplit"],
            b["hidden_prev_grad"],
            b["w_grad"],
            b["b_grad"],
        ),  # fmt: skip
    )
    top = parts.heading(
        canvas,
        "The backward step net: what the gradient op runs at each timestep t",
        "Run for t = T−1 … 0, timestep t in step workspace t; numbers give the order of the ops.",
    )
    a_x, a_w = 40, 262  # column A: the state gradients
    b_x, b_w = 424, 226  # column B: the parameters' gradients (its _tmpstep pills at 11.5 px)
    a_c, b_c = a_x + a_w / 2, b_x + b_w / 2
    part1_x = a_x + 60  # where part 1 of lstm/hidden_t_prev's gradient runs down

    # 0: GO row t into row t + 1
    r0 = top + 24
    _, go_r = _blob(canvas, a_c, r0, b["go"])
    _note(canvas, go_r + 6, r0, "row t: the loss's gradient (GO)", fill=style.LINK)
    r1 = r0 + 44
    canvas.arrow(a_c, r0 + 11, a_c, r1 - 14, style.ACCUMULATE, 1.5)
    _op(canvas, a_x, r1, a_w, 0, "rnn_internal_accumulate_gradient_input", "op")
    _note(canvas, a_x + a_w + 10, r1 - 6, "+= into row t + 1 of", fill=style.ACCUMULATE)
    canvas.text(a_x + a_w + 10, r1 + 8, "`%s`" % b["states_grad"], _MONO)

    # 1: LSTMUnitGradient reads rows t + 1 ...
    r2 = r1 + 46
    canvas.arrow(part1_x, r1 + 14, part1_x, r2 - 11, style.LINK, 1.4, "4 3")
    _blob(canvas, part1_x, r2, b["hidden_grad"])
    cell_c = a_x + a_w - 64  # its pill ends clear of the note on its right
    _blob(canvas, cell_c, r2, b["cell_grad"])
    _note(canvas, a_x + a_w + 10, r2, "= row t + 1 of each state gradient (links)",
          fill=style.LINK)  # fmt: skip
    r3 = r2 + 50
    canvas.arrow(part1_x, r2 + 11, part1_x + 20, r3 - 19, style.INK, 1.2)
    canvas.arrow(cell_c, r2 + 11, cell_c - 20, r3 - 19, style.INK, 1.2)
    _op(canvas, a_x, r3, a_w, 1, "LSTMUnitGradient", "cell", h=36,
        note="also reads what step workspace t kept")  # fmt: skip

    # ... and writes rows t, and the gates' gradient (= row t of lstm/i2h_grad)
    r4 = r3 + 50
    canvas.arrow(part1_x, r3 + 19, part1_x, r4 - 11, style.INK, 1.2)
    _, p1_r = _blob(canvas, part1_x + 40, r4, b["hidden_prev_grad"])
    _note(canvas, p1_r + 5, r4, "part 1")
    r4b = r4 + 34
    canvas.arrow(cell_c, r3 + 19, cell_c, r4b - 11, style.INK, 1.2)
    _, c_r = _blob(canvas, cell_c - 30, r4b, b["cell_prev_grad"])
    _note(canvas, c_r + 5, r4b, "= row t: done", fill=style.LINK)
    canvas.path([(a_x + a_w + 1, r3), (b_c, r3), (b_c, r4 - 11)], style.INK, 1.2)
    _blob(canvas, b_c, r4, b["gates_grad"])
    _note(canvas, b_c, r4 + 18, "= row t of `%s`" % b["input_grad"], "middle", style.LINK)

    # 2: FCGradient
    r5 = r4 + 56
    canvas.arrow(b_c, r4 + 26, b_c, r5 - 14, style.INK, 1.2)
    _op(canvas, b_x, r5, b_w, 2, "FCGradient", "cell")

    # its outputs: part 2 of lstm/hidden_t_prev's gradient (left), the parameters'
    # step parts (below it, each with the Sum 4 / 5 that adds it into the total)
    r6 = r5 + 48
    auto_c = a_x + a_w - 40
    canvas.arrow(b_x + 20, r5 + 14, auto_c + 60, r6 - 11, style.INK, 1.2)
    _blob(canvas, auto_c, r6, b["autosplit"])
    _note(canvas, auto_c, r6 + 18, "part 2", "middle")

    # 3: Sum of the two parts: lstm/hidden_t_prev feeds FC and LSTMUnit
    r7 = r6 + 46
    canvas.arrow(part1_x, r4 + 11, part1_x, r7 - 14, style.INK, 1.2)
    canvas.arrow(auto_c - 60, r6 + 11, auto_c - 80, r7 - 14, style.INK, 1.2)
    _op(canvas, a_x, r7, a_w, 3, "Sum: part 1 + part 2", "cell", kind="sum")
    r8 = r7 + 44
    canvas.arrow(part1_x, r7 + 14, part1_x, r8 - 11, style.INK, 1.2)
    _, h_r = _blob(canvas, part1_x + 40, r8, b["hidden_prev_grad"])
    _note(canvas, h_r + 5, r8, "= row t", fill=style.LINK)
    canvas.text(a_x, r8 + 24, "two parts: step 4's autosplit", style.READ_NOTE, fill=style.MUTED)

    # 4, 5: one Sum per parameter (the C++ op's), the step's _tmpstep into the total:
    # pill, then its Sum below it, stacked; FCGradient's edges go straight down
    pill_x = b_x + 4  # the pills' left end
    sum_w = 64
    for k, (total, tmp) in enumerate(
        ((b["w_grad"], b["w_tmpstep"]), (b["b_grad"], b["b_tmpstep"]))
    ):
        pill_y = r6 + k * 98
        pill_w = text_width("`%s`" % tmp, _MONO) + 14
        pill_c = pill_x + pill_w / 2
        _blob(canvas, pill_c, pill_y, tmp)
        if k == 0:
            canvas.arrow(pill_c, r5 + 14, pill_c, pill_y - 11, style.INK, 1.2)
        else:  # down the pills' right, inside column B, to the bias pill
            lane = pill_x + pill_w + 14
            canvas.path([(lane, r5 + 14), (lane, pill_y), (pill_x + pill_w + 1, pill_y)],
                        style.INK, 1.2)  # fmt: skip
        sum_y = pill_y + 40
        canvas.arrow(pill_c, pill_y + 11, pill_c, sum_y - 14, style.INK, 1.2)
        _op(canvas, pill_c - sum_w / 2, sum_y, sum_w, 4 + k, "Sum", "op", kind="sum")
        canvas.text(pill_c, sum_y + 24, "+= into `%s`" % total, _MONO, "middle",
                    fill=style.ACCUMULATE)  # fmt: skip
    _note(canvas, pill_x + 84, r6 + 98 + 40 + 40, "(the totals: summed over t)", "middle")

    y = max(canvas.bottom, r8 + 30) + 18
    y = parts.key(
        canvas,
        y,
        [
            ("box", (ORIGIN["cell"], ORIGIN["cell"]), ORIGIN_TEXT["cell"]),
            ("box", (ORIGIN["op"], ORIGIN["op"]), ORIGIN_TEXT["op"]),
            ("hexagon", INK_MUTED, "a `Sum` (either origin)"),
            ("dashed", style.LINK, "a view of a row"),
        ],
        size=style.READ_NOTE,
    )
    return Figure("fig_backward_step_net", canvas.svg())


INK_MUTED = style.MUTED
