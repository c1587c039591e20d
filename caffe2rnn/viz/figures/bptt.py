"""``fig_bptt()``: backpropagation through time, as ``RecurrentNetworkGradient`` runs it.

What the figure says (Caffe2 0cdd09da6, ``RecurrentNetworkGradientOp`` in
``recurrent_network_op.h``; caffe2rnn does the same,
:mod:`caffe2rnn.operators.rnn.gradient`):

* before the loop the op resizes the state gradient ``<state>_grad`` like
  the states tensor (``T + 1`` rows) and zeroes **only its last row**, then
  adds the gradient of the ``_last`` output into that row; rows ``0 … T-1``
  are left as they are, because the steps write them before anything reads
  them. Each parameter's total gradient is zeroed;
* the backward step net runs for ``t = T-1 … 0`` in the forward's step
  workspace ``t``. Its first op, ``rnn_internal_accumulate_gradient_input``,
  adds row ``t`` of the ``_all`` output's gradient into row ``t + 1``; the
  backward links make ``hidden_t_grad`` a view of row ``t + 1`` and
  ``hidden_t_prev_grad`` of row ``t``, which the step's gradient ops *write*;
* the step's parameter gradient goes to ``<param>_grad_tmpstep`` (the C++
  renames it in the backward step net) and an appended ``Sum`` adds it into
  the total: summed over t;
* after the loop row 0 is the initial state's gradient.

With a k-row initial state (k > 1, a window link) still only the last row
is zeroed: rows T … T + k − 2 are read before any step writes them
(:mod:`caffe2rnn.history.tail_rows`). The names are those of the path's
``rnn_cell.LSTM(..., scope="lstm")``, whose ``outputs_with_grads`` is
``[0]``: only ``lstm/hidden_t_all`` brings a gradient; a ``_last`` output's
gradient arrives only when the caller lists it too.
"""

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

#: The row labels and notes of this figure's tensors (``style.READ_*``).
_SIZES = {"label_size": style.READ_SMALL, "note_size": style.READ_NOTE}

#: The backward links the figure draws: (blob, offset in <state>_grad).
BACKWARD_LINKS = (("lstm/hidden_t_grad", 1), ("lstm/hidden_t_prev_grad", 0))
#: The state gradient tensor, the output gradients (GO of _all, of _last).
STATES_GRAD = "lstm/lstm/hidden_t_prev_states_grad"
ALL_GRAD, LAST_GRAD = "lstm/hidden_t_all_grad", "lstm/hidden_t_last_grad"
#: The weight gradient, and the blob the C++ op renames the step's part to.
WEIGHT_GRAD = "lstm/gates_t_w_grad"
TMPSTEP = "lstm/gates_t_w_grad_tmpstep"

_ORDINALS = ("1st", "2nd", "3rd", "4th", "5th")
#: The broad arrow behind the step boxes that says which way the loop runs.
_LOOP_FILL, _LOOP_EDGE = "#FCE9D2", "#F2C38F"

#: The names :func:`fig_bptt` draws by default (the path's LSTM); ``names=``
#: replaces any of them, e.g. with notebook 04's own (its one-state cell:
#: ``read="hidden_t_grad", written="hidden_t_prev_grad", states_grad="states_grad",
#: all_grad="h_all_grad", last_grad="h_last_grad", weight_grad="W_grad", ...``).
DEFAULT_NAMES = {
    "read": BACKWARD_LINKS[0][0],
    "written": BACKWARD_LINKS[1][0],
    "states_grad": STATES_GRAD,
    "all_grad": ALL_GRAD,
    "last_grad": LAST_GRAD,
    "weight_grad": WEIGHT_GRAD,
    "tmpstep": TMPSTEP,
    "initial": "h0",
    "cell": "the LSTM of step 1 (the cell state's gradient works the same way)",
}


def fig_bptt(steps=3, names=None):
    """Backpropagation through time for ``steps`` timesteps (2 to 5), row by row.

    ``names`` (a dict, keys of :data:`DEFAULT_NAMES`) draws it with other blob
    names: the page draws the path's LSTM, a notebook its own cell."""
    steps = parts.check_steps("fig_bptt", steps)
    unknown = sorted(set(names or {}) - set(DEFAULT_NAMES))
    if unknown:
        raise DrawingError(
            "fig_bptt(names=...): unknown key(s) %s; expected some of %s"
            % (", ".join(unknown), ", ".join(DEFAULT_NAMES))
        )
    n = dict(DEFAULT_NAMES, **(names or {}))
    read_blob, written_blob = n["read"], n["written"]
    canvas = Canvas(
        style.WIDTH,
        "Backpropagation through time in RecurrentNetworkGradient, row by row",
        "The state gradient tensor %s has T + 1 rows; only its last row is zeroed before the "
        "loop (and the gradient of hidden_t_last added there when the loss uses it). The "
        "backward step net runs for t = T-1 down to 0: the gradient of hidden_t_all row t is "
        "added into row t + 1, the step reads row t + 1 and writes row t. Each step's parameter "
        "gradient (%s) is summed into %s." % (n["states_grad"], n["tmpstep"], n["weight_grad"]),
    )
    top = parts.heading(
        canvas,
        "Backpropagation through time: read it from the bottom up",
        "RecurrentNetworkGradient runs the backward step net for t = %s, bottom to top, "
        "in step workspace t." % ", ".join(str(t) for t in range(steps - 1, -1, -1)),
    )
    # five columns, each as narrow as its labels at READ_NOTE px allow (round 12)
    # rows as step 8's figure draws them (row 0 at the top); the loop runs upward, so
    # the steps stand apart, joined by "then" arrows (round 13: T read it top-down)
    pitch, y0 = 92, top + 50
    lane_x, lane_w = 10, 88
    step_x, step_w = 106, 250
    grad_x, grad_w = 384, 128
    go_x, go_w = 584, 78
    bottom = y0 + (steps + 1) * pitch

    # headings (the output gradient's sits lower: its rows start half a row down)
    canvas.text(lane_x, y0 - 30, "weight gradient", style.READ_SMALL, bold=True)
    canvas.text(lane_x, y0 - 15, "`%s`" % n["weight_grad"], style.READ_NOTE)
    canvas.text(step_x + step_w / 2 + 20, y0 - 30, "backward step net, runs upward ↑",
                style.READ_SMALL, "middle", True)  # fmt: skip
    canvas.text(step_x + step_w / 2 + 20, y0 - 15, "the cell's gradient ops + the op's own",
                style.READ_NOTE, "middle")  # fmt: skip
    canvas.text(grad_x + grad_w / 2, y0 - 30, "state gradient: T + 1 rows", style.READ_NOTE,
                "middle", True)  # fmt: skip
    canvas.text(grad_x - 8, y0 - 15, "`%s`" % n["states_grad"], style.READ_NOTE)
    canvas.text(go_x + go_w, y0 + 6, "GO: T rows", style.READ_NOTE, "end", True)
    canvas.text(style.WIDTH - 4, y0 + 20, "`%s`" % n["all_grad"], style.READ_NOTE, "end")

    # the state gradient, row by row
    rows = [("row 0", ["written by timestep 0", "= gradient of `%s`" % n["initial"]], "#FFF8E1")]
    for r in range(1, steps):
        rows.append(("row %d" % r, ["written by timestep %d" % r, "+ GO row %d" % (r - 1),
                                    "read by timestep %d" % (r - 1)], None))  # fmt: skip
    rows.append(("row %d" % steps, ["zeroed, + `_last` grad", "+ GO row %d" % (steps - 1),
                                    "read by timestep %d" % (steps - 1)], "#FCE8E6"))  # fmt: skip
    centres = parts.tensor_rows(
        canvas, grad_x, y0, grad_w, pitch, rows, style.GRADIENT_FILL, style.GRADIENT_EDGE,
        cls="gradient", **_SIZES,
    )  # fmt: skip

    # the gradient of hidden_t_all: row t level with step t, added into row t + 1
    go_rows = [("row %d" % t, "", "#FFFFFF") for t in range(steps)]
    go_centres = parts.tensor_rows(
        canvas, go_x, y0 + pitch / 2, go_w, pitch, go_rows, "#FFFFFF", style.GRADIENT_EDGE,
        cls="output_gradient", **_SIZES,
    )  # fmt: skip
    for t in range(steps):
        with canvas.group("accumulate_input"):
            canvas.arrow(go_x - 1, go_centres[t] + 6, grad_x + grad_w + 1, centres[t + 1] + 4,
                         style.ACCUMULATE, 1.6)  # fmt: skip
            mid_x = (go_x + grad_x + grad_w) / 2
            mid_y = (go_centres[t] + centres[t + 1]) / 2 + 5
            canvas.circle(mid_x, mid_y, 7, "#FFFFFF", style.ACCUMULATE, 1.4)
            canvas.text(mid_x, mid_y, "+", style.LABEL, "middle", True, style.ACCUMULATE)

    # the _last output's gradient: into the last row, once, before the loop
    last_y = bottom + 20
    with canvas.group("last_gradient"):
        pill_w = text_width("`%s`" % n["last_grad"], style.READ_NOTE) + 20
        pill_x = style.WIDTH - 10 - pill_w
        canvas.box(pill_x, last_y - 11, pill_w, 22, "`%s`" % n["last_grad"], "#FFFFFF",
                   style.GRADIENT_EDGE, style.READ_NOTE, rx=11, dash="4 2")  # fmt: skip
        into_x = grad_x + grad_w + 14  # the arrow up from the pill, right of the tensor
        canvas.path([(into_x, last_y - 11), (into_x, centres[-1] + 22),
                     (grad_x + grad_w + 1, centres[-1] + 22)], style.ACCUMULATE, 1.6)  # fmt: skip
        canvas.text(into_x + 6, centres[-1] + 32, "+ once, before the loop", style.READ_NOTE,
                    fill=style.ACCUMULATE)  # fmt: skip
        canvas.text(style.WIDTH - 10, last_y + 20, "only if the loss uses `_last` too",
                    style.READ_NOTE, "end", fill=style.MUTED)  # fmt: skip

    # the weight gradient: zeroed, then + each step's _tmpstep, bottom to top
    lane_c = lane_x + lane_w / 2
    middles = [y0 + (t + 1) * pitch for t in range(steps)]
    with canvas.group("param_gradient"):
        canvas.box(lane_x + 2, bottom - 4, lane_w - 4, 36, "= 0\nbefore the loop", "#FFFFFF",
                   style.GRADIENT_EDGE, style.READ_NOTE, dash="4 2")  # fmt: skip
        canvas.box(lane_x, y0 - 4, lane_w, 40, "op output:\nthe sum over t", style.GRADIENT_FILL,
                   style.GRADIENT_EDGE, style.READ_NOTE, width=1.6)  # fmt: skip
        below = bottom - 4
        for t in range(steps - 1, -1, -1):
            canvas.arrow(lane_c, below, lane_c, middles[t] + 9, style.ACCUMULATE, 1.6)
            canvas.circle(lane_c, middles[t], 8, "#FFFFFF", style.ACCUMULATE, 1.5)
            canvas.text(lane_c, middles[t], "+", style.LABEL + 1, "middle", True, style.ACCUMULATE)
            canvas.arrow(step_x - 1, middles[t] + 16, lane_c + 9, middles[t] + 3,
                         style.ACCUMULATE, 1.3)  # fmt: skip
            below = middles[t] - 8
        canvas.arrow(lane_c, below, lane_c, y0 + 37, style.ACCUMULATE, 1.6)

    # one box per step: it reads row t + 1 and writes row t
    box_h = 68  # three lines and the heading; the gap above holds the "then" arrow
    # the loop's direction, readable without the title (round 15, reader Q): one broad
    # arrow behind the boxes, from below the first box that runs to above the last
    with canvas.group("loop_direction"):
        shaft_l, shaft_r = step_x - 4, step_x + step_w + 4
        head_l, head_r = step_x - 14, step_x + step_w + 14
        tip_y, base_y = y0 + 2, middles[0] - box_h / 2 - 6
        tail_y = middles[-1] + box_h / 2 + 46
        canvas.polygon(
            [(shaft_l, tail_y), (shaft_l, base_y), (head_l, base_y),
             ((head_l + head_r) / 2, tip_y), (head_r, base_y), (shaft_r, base_y),
             (shaft_r, tail_y)],
            _LOOP_FILL, _LOOP_EDGE, 1.0,
        )  # fmt: skip
        canvas.text((head_l + head_r) / 2, base_y - 12, "the loop runs upward",
                    style.READ_SMALL, "middle", True, style.BACKWARD_EDGE)  # fmt: skip
    for t in range(steps):
        middle = middles[t]
        box_y = middle - box_h / 2
        with canvas.group("step"):
            canvas.rect(step_x, box_y, step_w, box_h, style.BACKWARD_FILL, style.BACKWARD_EDGE,
                        1.3, 6)  # fmt: skip
            canvas.text(step_x + 8, box_y + 12, "timestep t = %d" % t, style.READ_SMALL, bold=True)
            canvas.text(step_x + step_w - 8, box_y + 12, "runs %s" % _ORDINALS[steps - 1 - t],
                        style.READ_SMALL, "end", True, style.BACKWARD_EDGE)  # fmt: skip
            lines = (
                "reads `%s` = row %d" % (read_blob, t + 1),
                "writes `%s` = row %d" % (written_blob, t),
                "writes `%s`" % n["tmpstep"],
            )
            for i, line in enumerate(lines):
                canvas.text(step_x + 8, box_y + 28 + i * 13.5, line, style.READ_NOTE)
        order_x = step_x + step_w / 2
        if t > 0:  # the loop's order: timestep t runs, then t - 1, drawn above it
            with canvas.group("loop_order"):
                canvas.arrow(order_x, box_y - 1, order_x, box_y - (pitch - box_h) + 3,
                             style.BACKWARD_EDGE, 2.4)  # fmt: skip
                canvas.text(order_x + 8, box_y - (pitch - box_h) / 2 + 1,
                            "then t = %d" % (t - 1), style.READ_NOTE,
                            fill=style.BACKWARD_EDGE)  # fmt: skip
        else:
            first = box_y + (steps - 1) * pitch + box_h  # the bottom box: where it starts
            with canvas.group("loop_order"):
                canvas.arrow(order_x, first + 24, order_x, first + 2, style.BACKWARD_EDGE, 2.4)
                canvas.text(order_x, first + 38, "start: t = T−1 = %d" % (steps - 1),
                            style.READ_SMALL, "middle", True, style.BACKWARD_EDGE)  # fmt: skip
        canvas.arrow(grad_x - 1, centres[t + 1], step_x + step_w + 1, middle + 12,
                     style.LINK, 1.5, "5 3", cls="link")  # fmt: skip
        canvas.arrow(step_x + step_w + 1, middle - 12, grad_x - 1, centres[t],
                     style.LINK, 1.5, "5 3", cls="link")  # fmt: skip

    y = max(canvas.bottom, bottom) + 20
    y = parts.key(
        canvas,
        y,
        [
            ("dashed", style.LINK, "backward link: a view of a row"),
            ("plus", style.ACCUMULATE, "added into (+=)"),
            ("box", (style.GRADIENT_FILL, style.GRADIENT_EDGE), "gradient"),
        ],
        size=style.READ_NOTE,
    )
    return Figure("fig_bptt", canvas.svg())
