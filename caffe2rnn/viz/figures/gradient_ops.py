"""``fig_gradient_ops()``: the backward ops ``AddGradientOperators([loss])`` appends.

What the figure says (step 4, docs/concepts/gradients.md; Caffe2 0cdd09da6,
``core.py``: ``GradientRegistry.GetBackwardPass``; caffe2rnn:
:meth:`caffe2rnn.core.Net.AddGradientOperators`): for the forward net
``Tanh(x) -> t``, ``Sigmoid(x) -> s``, ``Mul(t, s) -> y``,
``SumElements(y) -> loss``, the builder walks the forward ops in reverse
before anything runs and appends, in this order:

1. the seed, ``ConstantFill -> loss_autogen_grad`` (ones, shaped like ``loss``);
2. ``SumElements``' gradient op -> ``y_grad``;
3. ``Mul``'s two gradient ops -> ``t_grad`` and ``s_grad``;
4. ``Sigmoid``'s gradient op (the later forward op first) -> ``x_grad``,
   then ``Tanh``'s -> ``_x_grad_autosplit_0``: ``x`` feeds two ops, so its
   gradient has two contributions, and the second is renamed;
5. a ``Sum`` that adds the two into ``x_grad``.

Nothing is written by hand: :func:`build` builds that net, calls
``AddGradientOperators`` and reads every op type and blob name of the
drawing from the ops it appended and the gradient map it returned; the
figure refuses a build whose shape differs (``tests/viz/test_viz_figures.py``).
"""

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

_NAME = style.SMALL  # a blob or op name: 11 px at page width
_NOTE = style.SMALL


def build():
    """The page's net and what ``AddGradientOperators([loss])`` appends to it.

    Returns ``(forward, backward, grads)``: the forward and the appended ops
    as ``(type, inputs, outputs)``, in net order, and the gradient map
    (blob -> its gradient's name) the call returned.
    """
    from ... import core, eras

    with eras.use("E5"), parts.fresh_net_names():  # Caffe2 0cdd09da6, the page's era
        net = core.Net("forward")
        t = net.Tanh("x", "t")
        s = net.Sigmoid("x", "s")
        y = net.Mul([t, s], "y")
        loss = net.SumElements(y, "loss")
        first = len(net.Proto().op)
        grads = net.AddGradientOperators([loss])
    ops = [(op.type, list(op.input), list(op.output)) for op in net.Proto().op]
    return ops[:first], ops[first:], {str(k): str(v) for k, v in grads.items()}


def roles():
    """Each appended op by its role in the drawing, with its run-order number (1 ...).

    Returns ``(forward, roles, grads)``; ``roles`` maps ``"seed"``,
    ``"sum_elements"``, ``"mul_t"``, ``"mul_s"``, ``"tanh"``, ``"sigmoid"`` and
    ``"sum"`` to ``(number, type, inputs, outputs)``. A build of another shape
    is refused (:class:`~caffe2rnn.errors.DrawingError`).
    """
    forward, backward, grads = build()
    ((_, _, (t,)), (_, _, (s,)), (_, _, (y,)), (_, _, (loss,))) = forward
    x = forward[0][1][0]

    def writing(name, reading=None):
        found = [(i + 1, op) for i, op in enumerate(backward)
                 if name in op[2] and (reading is None or reading in op[1])]  # fmt: skip
        if len(found) != 1:
            raise DrawingError("fig_gradient_ops: expected one gradient op writing %r%s, "
                               "found %d" % (name, " from %r" % reading if reading else "",
                                             len(found)))  # fmt: skip
        number, (op_type, inputs, outputs) = found[0]
        return number, op_type, inputs, outputs

    found = {
        "seed": writing(grads[loss]),
        "sum_elements": writing(grads[y]),
        "mul_t": writing(grads[t]),
        "mul_s": writing(grads[s]),
    }
    contributions = [op for op in backward if grads[t] in op[1] or grads[s] in op[1]]
    contributions = [op for op in contributions if op[0] != "Sum"]
    if len(contributions) != 2:
        raise DrawingError("fig_gradient_ops: expected two ops reading %r and %r, found %r"
                           % (grads[t], grads[s], contributions))  # fmt: skip
    for key, g in (("tanh", grads[t]), ("sigmoid", grads[s])):
        (op,) = [op for op in contributions if g in op[1]]
        found[key] = writing(op[2][0], g)
    parts_of_x = [found["tanh"][3][0], found["sigmoid"][3][0]]
    found["sum"] = writing(grads[x], parts_of_x[0] if parts_of_x[0] != grads[x] else
                           parts_of_x[1])  # fmt: skip
    if sorted(found["sum"][2]) != sorted(parts_of_x) or found["sum"][3] != [grads[x]]:
        raise DrawingError("fig_gradient_ops: the last op does not add %s into %r: %r"
                           % (parts_of_x, grads[x], found["sum"]))  # fmt: skip
    if sorted(n for n, *_ in found.values()) != list(range(1, len(backward) + 1)):
        raise DrawingError("fig_gradient_ops: the drawing leaves out appended ops: %r" % backward)
    return forward, found, grads


def _pill(canvas, cx, y, name, gradient=True, h=20, edge=None):
    w = text_width("`%s`" % name, _NAME) + 16
    fill, stroke = (
        (style.GRADIENT_FILL, style.GRADIENT_EDGE) if gradient else ("#FFFFFF", style.INK)
    )
    with canvas.group("blob gradient" if gradient else "blob"):
        canvas.box(cx - w / 2, y - h / 2, w, h, "`%s`" % name, fill, edge or stroke, _NAME,
                   rx=h / 2, dash="4 2" if gradient else None,
                   width=2.0 if edge else 1.0)  # fmt: skip
    return cx - w / 2, cx + w / 2


def _op(canvas, cx, y, op_type, colour, number=None, h=22, sum_shape=False):
    w = text_width(op_type, _NAME, True) + 18
    left = cx - w / 2
    with canvas.group("op"):
        if sum_shape:
            tip = h / 2
            canvas.polygon([(left, y), (left + tip, y - h / 2), (left + w - tip, y - h / 2),
                            (left + w, y), (left + w - tip, y + h / 2), (left + tip, y + h / 2)],
                           colour, colour, cls="sum")  # fmt: skip
            canvas.text(cx, y, op_type, _NAME, "middle", True, "#FFFFFF")
        else:
            canvas.box(left, y - h / 2, w, h, op_type, colour, colour, _NAME, True, "#FFFFFF", 4)
        if number is not None:
            canvas.circle(left - 13, y, 9, "#FFFFFF", colour, 1.4)
            canvas.text(left - 13, y, "%d" % number, _NOTE, "middle", True, colour)
    return left, left + w


def _colour(op_type):
    return style.ACTIVATION if op_type in ("Tanh", "Sigmoid") else style.COMPUTE


def fig_gradient_ops():
    """The forward net of step 4 and, below it, the gradient ops appended for it."""
    forward, r, grads = roles()
    (tanh, (x,), (t,)), (sigmoid, _, (s,)), (mul, _, (y,)), (sum_el, _, (loss,)) = forward
    seed, sel, mul_t, mul_s, tanh_g, sig_g, total = (
        r[k] for k in ("seed", "sum_elements", "mul_t", "mul_s", "tanh", "sigmoid", "sum")
    )
    order = sorted(r.values())
    canvas = Canvas(
        style.WIDTH,
        "What AddGradientOperators([%s]) appends to a net" % loss,
        "Forward, the ops you wrote: %s. Backward, appended by AddGradientOperators([%s]) "
        "before anything runs, the forward ops reversed: %s. %s feeds two ops, so its gradient "
        "has two contributions, %s and %s, and a %s adds them into %s."
        % ("; ".join("%s(%s) -> %s" % (o, ", ".join(i), ", ".join(w)) for o, i, w in forward),
           loss,
           "; ".join("%d. %s(%s) -> %s" % (n, o, ", ".join(i), ", ".join(w))
                     for n, o, i, w in order),
           x, sig_g[3][0], tanh_g[3][0], total[1], total[3][0]),
    )  # fmt: skip
    top = parts.heading(
        canvas,
        "What `AddGradientOperators([%s])` appends to the net" % loss,
        "Built before anything runs; the numbers give the order the appended ops run in.",
    )

    # forward: x -> Tanh -> t, x -> Sigmoid -> s, Mul -> y -> SumElements -> loss
    f_top = top + 6
    canvas.rect(10, f_top, style.WIDTH - 20, 104, "#FAFAFA", style.MUTED, 1.0, 8)
    canvas.text(22, f_top + 15, "forward: the ops you wrote", style.LABEL, bold=True)
    mid = f_top + 64
    up, down = mid - 20, mid + 20
    with canvas.group("forward"):
        _, x_r = _pill(canvas, 50, mid, x, False)
        t_l, t_r = _op(canvas, 150, up, tanh, _colour(tanh))
        s_l, s_r = _op(canvas, 150, down, sigmoid, _colour(sigmoid))
        tp_l, tp_r = _pill(canvas, 250, up, t, False)
        sp_l, sp_r = _pill(canvas, 250, down, s, False)
        m_l, m_r = _op(canvas, 336, mid, mul, _colour(mul))
        y_l, y_r = _pill(canvas, 410, mid, y, False)
        e_l, e_r = _op(canvas, 510, mid, sum_el, _colour(sum_el))
        l_l, _ = _pill(canvas, 612, mid, loss, False)
    for a, b in (((x_r + 1, mid - 4), (t_l - 1, up)), ((x_r + 1, mid + 4), (s_l - 1, down)),
                 ((t_r + 1, up), (tp_l - 1, up)), ((s_r + 1, down), (sp_l - 1, down)),
                 ((tp_r + 1, up), (m_l - 1, mid - 5)), ((sp_r + 1, down), (m_l - 1, mid + 5)),
                 ((m_r + 1, mid), (y_l - 1, mid)), ((y_r + 1, mid), (e_l - 1, mid)),
                 ((e_r + 1, mid), (l_l - 1, mid))):  # fmt: skip
        canvas.arrow(*a, *b, style.INK, 1.2)

    # backward: a spine down the middle, two lanes from Mul's gradients to the Sum
    b_top = f_top + 104 + 14
    pitch = 36
    cx, left, right = 336, 200, 462
    levels = [b_top + 52 + k * pitch for k in range(10)]
    canvas.rect(10, b_top, style.WIDTH - 20, levels[-1] + 24 - b_top, style.BACKWARD_FILL,
                style.BACKWARD_EDGE, 1.2, 8)  # fmt: skip
    canvas.text(22, b_top + 15, "backward: what `AddGradientOperators([%s])` appends, "
                "forward ops reversed" % loss, style.LABEL, bold=True)  # fmt: skip

    def note(xx, yy, text, anchor="start", fill=style.MUTED):
        canvas.text(xx, yy, text, _NOTE, anchor, fill=fill)

    def reads(op_inputs):
        """The forward blobs a gradient op also reads."""
        return [n for n in op_inputs if n not in grads.values()]

    with canvas.group("backward"):
        n, op_type, ins, (seed_out,) = seed
        _, sr = _op(canvas, cx, levels[0], op_type, style.COMPUTE, n)
        note(sr + 10, levels[0], "the seed: ones shaped like `%s`" % ins[0])
        _pill(canvas, cx, levels[1], seed_out)
        note(cx + 80, levels[1], "(∂%s/∂%s = 1)" % (loss, loss))
        n, op_type, ins, (y_grad,) = sel
        _, sr = _op(canvas, cx, levels[2], op_type, style.COMPUTE, n)
        note(sr + 10, levels[2], "of `%s`, reads `%s`" % (sum_el, ", ".join(reads(ins))))
        _pill(canvas, cx, levels[3], y_grad)
        lanes = ((left, mul_t, tanh_g, tanh, "end"), (right, mul_s, sig_g, sigmoid, "start"))
        for lx, (n, op_type, ins, (g,)), (n2, op2, ins2, (part,)), fwd, side in lanes:
            ml, mr = _op(canvas, lx, levels[4], op_type, style.COMPUTE, n)
            nx = ml - 26 if side == "end" else mr + 10
            note(nx, levels[4], "of `%s`, reads `%s`" % (mul, ", ".join(reads(ins))), side)
            _pill(canvas, lx, levels[5], g)
            gl, gr = _op(canvas, lx, levels[6], op2, style.ACTIVATION, n2)
            nx = gl - 26 if side == "end" else gr + 10
            note(nx, levels[6], "of `%s`, reads `%s`" % (fwd, ", ".join(reads(ins2))), side)
            _pill(canvas, lx, levels[7], part, edge=style.ACCUMULATE)
            canvas.arrow(lx, levels[4] + 12, lx, levels[5] - 11, style.INK, 1.2)
            canvas.arrow(lx, levels[5] + 11, lx, levels[6] - 12, style.INK, 1.2)
            canvas.arrow(lx, levels[6] + 12, lx, levels[7] - 11, style.INK, 1.2)
        n, op_type, ins, (x_grad,) = total
        sl, sr = _op(canvas, cx, levels[8], op_type, style.ACCUMULATE, n, sum_shape=True)
        note(sr + 10, levels[8], "`%s` feeds two ops: two contributions, added" % x,
             fill=style.ACCUMULATE)  # fmt: skip
        _pill(canvas, cx, levels[9], x_grad)
        note(cx + 60, levels[9], "the gradient of `%s`" % x)
    canvas.arrow(cx, levels[0] + 12, cx, levels[1] - 11, style.INK, 1.2)
    canvas.arrow(cx, levels[1] + 11, cx, levels[2] - 12, style.INK, 1.2)
    canvas.arrow(cx, levels[2] + 12, cx, levels[3] - 11, style.INK, 1.2)
    canvas.arrow(cx - 8, levels[3] + 11, left + 10, levels[4] - 12, style.INK, 1.2)
    canvas.arrow(cx + 8, levels[3] + 11, right - 10, levels[4] - 12, style.INK, 1.2)
    for lx in (left, right):
        canvas.arrow(lx, levels[7] + 11, cx + (lx - cx) * 0.25, levels[8] - 12,
                     style.ACCUMULATE, 1.8)  # fmt: skip
    canvas.arrow(cx, levels[8] + 12, cx, levels[9] - 11, style.INK, 1.2)
    _legend(canvas, levels[-1] + 24 + 20)
    return Figure("fig_gradient_ops", canvas.svg())


def _legend(canvas, y):
    """The figure's key, two lines of three: what each shape and colour means."""
    pitch, columns = 22, (14, 236, 452)
    with canvas.group("key"):
        items = [
            ("ops", "op; orange: an activation"),
            ("numbered", "appended op, in run order"),
            ("sum", "`Sum`: adds the parts"),
            ("blob", "blob"),
            ("gradient", "gradient blob"),
            ("part", "one part (autosplit)"),
        ]
        for i, (kind, text) in enumerate(items):
            x, yy = columns[i % 3], y + (i // 3) * pitch
            if kind == "ops":
                canvas.rect(x, yy - 7, 18, 14, style.COMPUTE, style.COMPUTE, 1.0, 3)
                canvas.rect(x + 22, yy - 7, 18, 14, style.ACTIVATION, style.ACTIVATION, 1.0, 3)
            elif kind == "numbered":
                canvas.circle(x + 9, yy, 8, "#FFFFFF", style.COMPUTE, 1.4)
                canvas.text(x + 9, yy, "1", _NOTE, "middle", True, style.COMPUTE)
                canvas.rect(x + 20, yy - 7, 20, 14, style.COMPUTE, style.COMPUTE, 1.0, 3)
            elif kind == "sum":
                corners = [(0, 0), (7, -7), (33, -7), (40, 0), (33, 7), (7, 7)]
                canvas.polygon([(x + dx, yy + dy) for dx, dy in corners], style.ACCUMULATE,
                               style.ACCUMULATE)  # fmt: skip
            else:
                fill, edge, dash, width = {
                    "blob": ("#FFFFFF", style.INK, None, 1.0),
                    "gradient": (style.GRADIENT_FILL, style.GRADIENT_EDGE, "4 2", 1.0),
                    "part": (style.GRADIENT_FILL, style.ACCUMULATE, "4 2", 2.0),
                }[kind]
                canvas.rect(x, yy - 7, 40, 14, fill, edge, width, 7, dash)
            canvas.text(x + 48, yy, text, _NOTE)
