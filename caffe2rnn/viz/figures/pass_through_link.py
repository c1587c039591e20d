"""``fig_pass_through_link()``: the blob a backward link views after a pass-through ``Sum``.

What the figure says (step 15, docs/concepts/recurrent-net.md, "Which blob a
backward link views"; Caffe2 0cdd09da6, ``caffe2/python/recurrent.py``:
``recurrent_net`` links the sequence's gradient through
``backward_mapping[input_t]``, the blob the gradient registry's
``GetBackwardPass`` names as holding ``input_t``'s gradient). On the Elman
cell of step 16, ``FC(hidden_t_prev) -> elman/pre_t``, ``Sum(elman/pre_t,
input_t) -> elman/pre_t``, ``Tanh(elman/pre_t) -> elman/hidden_t``:

* ``input_t``'s only reader is the ``Sum``, whose gradient is a pass-through:
  the registry makes no gradient op for it and maps ``input_t`` to
  ``elman/pre_t_grad``;
* so no op of the backward step net writes ``input_t_grad``;
* and the backward link of the sequence (offset 0) makes ``elman/pre_t_grad``,
  which ``TanhGradient`` writes, a view of row t of ``x_grad``.

Nothing is written by hand: :func:`run` builds the cell, calls
``recurrent_net`` on it and reads the three facts off the op; a drawing that
disagreed with the op could not be drawn (:class:`~caffe2rnn.errors.DrawingError`).
"""

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

_NAME = style.LABEL  # an op or a blob name
_NOTE = style.SMALL  # every note: 11 px at page width


def run():
    """Build step 16's Elman cell, call ``recurrent_net``; returns what the figure draws:
    ``(cell_ops, backward_ops, links)``, ops as ``(type, inputs, outputs)`` and the
    backward links as ``(internal, external, offset)``."""
    from ... import brew, eras, listing
    from ...model_helper import ModelHelper
    from ...recurrent import recurrent_net

    with eras.use("E5"), parts.fresh_net_names():  # Caffe2 0cdd09da6, the page's era
        model = ModelHelper(name="elman")
        cell = ModelHelper(name="elman_cell", param_model=model)
        input_t, timestep, hidden_t_prev = cell.net.AddExternalInputs(
            "input_t", "timestep", "hidden_t_prev"
        )
        pre_t = brew.fc(cell, hidden_t_prev, "elman/pre_t", dim_in=3, dim_out=3, axis=2)
        cell.net.Sum([pre_t, input_t], pre_t)
        hidden_t = cell.net.Tanh(pre_t, "elman/hidden_t")
        cell.net.AddExternalOutputs(hidden_t)
        recurrent_net(model.net, cell.net, [(input_t, "x")], [(hidden_t_prev, "h0")],
                      {hidden_t_prev: hidden_t}, timestep=timestep, scope="elman")  # fmt: skip
    op = model.net.Proto().op[-1]
    args = {a.name: a for a in op.arg}

    def ops(netdef):
        return [(o.type, list(o.input), list(o.output)) for o in netdef.op]

    links = [
        (i.decode(), e.decode(), o)
        for i, e, o in zip(
            args["backward_link_internal"].strings,
            args["backward_link_external"].strings,
            args["backward_link_offset"].ints,
        )  # fmt: skip
    ]
    return ops(listing.step_net(op)), ops(listing.step_net(op, "backward_step_net")), links


def _chip(canvas, x, y, op_type, fill=style.COMPUTE, h=22):
    w = text_width(op_type, _NAME, True) + 16
    with canvas.group("op"):
        canvas.box(x, y - h / 2, w, h, op_type, fill, fill, _NAME, True, "#FFFFFF", 4)
    return x + w


def _pill(canvas, x, y, name, edge=style.GRADIENT_EDGE, fill=style.GRADIENT_FILL, width=1.4,
          dash=None):  # fmt: skip
    """A blob pill starting at x (parts.pill, this figure's size); returns its right x."""
    return parts.pill(canvas, None, y, name, edge, width, 22, 20, fill, dash, left=x)[1]


def fig_pass_through_link():
    """The Elman cell's three ops, their gradient ops, and the backward link of ``x``."""
    cell_ops, backward_ops, links = run()
    try:
        (fc, fc_in, (pre,)), (sum_, sum_in, _), (tanh, _, (hidden,)) = cell_ops
    except ValueError:
        raise DrawingError("fig_pass_through_link: expected the Elman cell's three ops, "
                           "got %r" % (cell_ops,)) from None  # fmt: skip
    readers = [t for t, ins, _ in cell_ops if "input_t" in ins]
    writers = [t for t, _, outs in backward_ops if "input_t_grad" in outs]
    x_links = [(i, o) for i, e, o in links if e == "x_grad"]
    grad_of = {t: outs for t, _, outs in backward_ops}
    tanh_g, fc_g = tanh + "Gradient", fc + "Gradient"
    if (readers != [sum_] or writers or x_links != [(pre + "_grad", 0)]
            or sum_ + "Gradient" in grad_of or pre + "_grad" not in grad_of.get(tanh_g, ())
            or fc_in[0] + "_grad" not in grad_of.get(fc_g, ())):  # fmt: skip
        raise DrawingError(
            "fig_pass_through_link: the op does not show input_t read by one Sum, no op "
            "writing input_t_grad and x's backward link on %s (readers %s, writers %s, "
            "links %s)" % (pre + "_grad", readers, writers, links)
        )
    state_in = fc_in[0]
    canvas = Canvas(
        style.WIDTH,
        "The backward link of x views %s_grad" % pre,
        "The Elman cell: %s(%s) -> %s, %s(%s) -> %s, %s(%s) -> %s. Its backward step net: "
        "%s writes %s_grad, %s writes %s_grad; the Sum has no gradient op, so no op writes "
        "input_t_grad, and x's backward link makes %s_grad a view of row t of x_grad."
        % (fc, state_in, pre, sum_, ", ".join(sum_in), pre, tanh, pre, hidden, tanh_g, pre,
           fc_g, state_in, pre),
    )  # fmt: skip
    top = parts.heading(
        canvas,
        "Which blob the sequence's backward link views",
        "`input_t`'s only reader is a `Sum`: its gradient passes through, to `%s_grad`." % pre,
    )
    left_x, right_x = 16, 356
    head_y = top + 14
    canvas.text(left_x, head_y, "step net (forward)", _NOTE, bold=True, fill=style.STEP_EDGE)
    canvas.text(right_x, head_y, "backward step net", _NOTE, bold=True,
                fill=style.BACKWARD_EDGE)  # fmt: skip
    rows = [head_y + 34 + 52 * k for k in range(3)]
    canvas.line(right_x - 14, head_y - 8, right_x - 14, rows[-1] + 24, style.MUTED, 0.8, "2 3")

    # the forward ops, one a row
    with canvas.group("forward"):
        end = _chip(canvas, left_x, rows[0], fc)
        canvas.text(end + 8, rows[0], "`%s` → `%s`" % (state_in, pre), _NOTE)
        end = _chip(canvas, left_x, rows[1], sum_)
        canvas.text(end + 8, rows[1], "`%s` + `input_t` → `%s`" % (pre, pre), _NOTE)
        canvas.text(end + 8, rows[1] + 16, "the only op that reads `input_t`", _NOTE,
                    fill=style.ACCUMULATE)  # fmt: skip
        end = _chip(canvas, left_x, rows[2], tanh, style.ACTIVATION)
        canvas.text(end + 8, rows[2], "`%s` → `%s`" % (pre, hidden), _NOTE)

    # their gradient ops, on the same rows
    with canvas.group("backward"):
        end = _chip(canvas, right_x, rows[0], fc_g)
        canvas.text(end + 8, rows[0], "→ `%s_grad`, …" % state_in, _NOTE)
        with canvas.group("unwritten"):
            end = _pill(canvas, right_x, rows[1], "input_t_grad", style.MUTED, "#FFFFFF", 1.2,
                        "4 3")  # fmt: skip
            canvas.line(right_x + 8, rows[1], end - 8, rows[1], style.MUTED, 1.2)
            canvas.text(end + 8, rows[1] - 7, "`%s`: no gradient op," % sum_, _NOTE,
                        fill=style.MUTED)  # fmt: skip
            canvas.text(end + 8, rows[1] + 8, "so no op writes it", _NOTE, fill=style.MUTED)
        end = _chip(canvas, right_x, rows[2], tanh_g, style.ACTIVATION)
        canvas.text(end + 6, rows[2], "→", _NAME)
        pill_x = end + 20
        pill_end = _pill(canvas, pill_x, rows[2], pre + "_grad", width=2.0)

    # x_grad, T x N x D, and the link of row t
    tensor_x, tensor_w, pitch = right_x + 40, 200, 22
    tensor_y = rows[2] + 64
    names = [("row 0", "", None), ("…", "", None),
             ("row t", "", "#FBD7A8"), ("…", "", None), ("row T−1", "", None)]  # fmt: skip
    centres = parts.tensor_rows(canvas, tensor_x, tensor_y, tensor_w, pitch, names,
                                style.GRADIENT_FILL, style.GRADIENT_EDGE, "x_grad")  # fmt: skip
    canvas.text(tensor_x + tensor_w / 2, tensor_y + pitch * len(names) + 14,
                "`x_grad`: T × N × D", _NOTE, "middle", True)  # fmt: skip
    with canvas.group("link"):
        start_x = (pill_x + pill_end) / 2
        canvas.path([(start_x, rows[2] + 12), (start_x, centres[2])] if start_x > tensor_x
                    + tensor_w + 4 else [(start_x, rows[2] + 12), (start_x, rows[2] + 36),
                                         (tensor_x - 30, rows[2] + 36),
                                         (tensor_x - 30, centres[2]), (tensor_x, centres[2])],
                    style.LINK, 1.6, "5 3")  # fmt: skip
        note_x = tensor_x - 44
        canvas.text(note_x, centres[2] - 8, "backward link, offset 0:", _NOTE, "end",
                    fill=style.LINK)  # fmt: skip
        canvas.text(note_x, centres[2] + 8, "`%s_grad` = row t of `x_grad`" % pre, _NOTE,
                    "end", fill=style.LINK)  # fmt: skip
    return Figure("fig_pass_through_link", canvas.svg())
