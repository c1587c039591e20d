"""``fig_recurrent_gradient_op()``: the ``RecurrentNetworkGradient`` op, its inputs and
outputs in order.

The gradient op ``AddGradientOperators`` adds for the ``RecurrentNetwork`` op
of the path's LSTM (``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"),
dim_in=3, dim_out=4, scope="lstm")``, step 1), with a loss on the outputs
``outputs_with_grads`` lists, drawn as a part with pins, as
:func:`~caffe2rnn.viz.figures.fig_recurrent_op` draws the forward op.
Caffe2 0cdd09da6, ``GetRecurrentNetworkGradient`` in
``caffe2/operators/recurrent_network_op.cc`` and ``RecurrentNetworkGradientOp``
in ``recurrent_network_op.h``:

* **inputs**, in the order of ``op.input``: the GO of each output
  ``outputs_with_grads`` lists; then every input of the forward op (the input
  sequence, the initial states, the references); then every output of the
  forward op, the last of which is ``lstm/step_workspaces`` (the C++ op reads
  it as its last input);
* **outputs**, in the order of ``op.output``: the gradient of forward input 0
  (the input sequence), of each input ``param`` lists, of each initial state
  (``initial_recurrent_state_ids``). The other references (``seq_lengths``)
  get none. Each output is drawn on the row of the forward input it is the
  gradient of, so the rows show which input gets none and the numbers show
  the order.

Nothing is written twice: :func:`build` makes the model and
``AddGradientOperators``, and :func:`read_ports` reads every name, index,
role and pairing from the two ops and the gradient map; a build that breaks
the order above is a :class:`~caffe2rnn.errors.DrawingError`.
``tests/viz/test_viz_figures.py`` checks the labels against another build
and against the order of Caffe2's gradient maker.
"""

from dataclasses import dataclass

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

#: The path's LSTM: outputs_with_grads (and so the loss) as rnn_cell.LSTM's default.
OUTPUTS_WITH_GRADS = (0,)

_SIZE = style.SMALL  # every label but the title: 11 px
_ROLE_FILL = {
    "sequence": (style.INPUT_FILL, style.INPUT_EDGE),
    "initial": (style.STATE_FILL, style.STATE_EDGE),
    "param": (style.PARAM_FILL, style.PARAM_EDGE),
    "reference": ("#FFFFFF", style.MUTED),
}
_ROLE_TEXT = {
    "sequence": "input sequence",
    "initial": "initial state",
    "param": "in `param`",
    "reference": "other reference",
}
_ROW = 24  # px from one pin to the next
_PILL_H = 20


@dataclass(frozen=True)
class Ports:
    """What the figure draws, read from one build."""

    gos: tuple  # (index in op.input, GO name, forward output index, its name)
    inputs: tuple  # (index in op.input, name, role, index in op.output or None)
    outputs: tuple  # (index in op.input, forward output name)
    grads: tuple  # op.output, in order
    param_grads: tuple  # the argument param_grads
    tmpstep: tuple  # the per-step blobs the C++ op renames them to


def build(outputs_with_grads=OUTPUTS_WITH_GRADS):
    """(forward op, gradient op, gradient map) of step 1's LSTM with a loss that
    sums the outputs ``outputs_with_grads`` lists, after ``AddGradientOperators``."""
    from ... import eras, model_helper, rnn_cell

    with eras.use("E5"), parts.fresh_net_names():
        model = model_helper.ModelHelper(name="gradient_op")
        outputs = rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4,
                                scope="lstm",
                                outputs_with_grads=list(outputs_with_grads))  # fmt: skip
        sums = [model.net.SumElements(outputs[i], str(outputs[i]) + "_sum")
                for i in outputs_with_grads]  # fmt: skip
        grad_map = model.AddGradientOperators([model.net.Sum(sums, "loss")])
    ops = list(model.net.Proto().op)
    (forward,) = [op for op in ops if op.type == "RecurrentNetwork"]
    (gradient,) = [op for op in ops if op.type == "RecurrentNetworkGradient"]
    return forward, gradient, {str(k): str(v) for k, v in grad_map.items()}


def _ints(op, name):
    return [list(a.ints) for a in op.arg if a.name == name][0]


def _strings(op, name):
    found = [list(a.strings) for a in op.arg if a.name == name]
    return [s.decode() if isinstance(s, bytes) else s for s in (found[0] if found else [])]


def read_ports(forward, gradient, grad_map):
    """The drawn :class:`Ports`, read from the forward op, its gradient op and the
    gradient map; a gradient op whose inputs are not [GOs, forward inputs, forward
    outputs] is a :class:`DrawingError` naming what differs."""
    fwd_in, fwd_out, grad_in = list(forward.input), list(forward.output), list(gradient.input)
    n_go = len(grad_in) - len(fwd_in) - len(fwd_out)
    if n_go < 1 or grad_in[n_go:] != fwd_in + fwd_out:
        raise DrawingError(
            "fig_recurrent_gradient_op: RecurrentNetworkGradient's inputs %s are not the GOs, "
            "then the forward op's inputs %s and outputs %s" % (grad_in, fwd_in, fwd_out)
        )
    of_output = {grad_map.get(name): k for k, name in enumerate(fwd_out)}
    gos = tuple((i, grad_in[i], of_output[grad_in[i]], fwd_out[of_output[grad_in[i]]])
                for i in range(n_go))  # fmt: skip
    params, initial = _ints(forward, "param"), _ints(forward, "initial_recurrent_state_ids")
    grads = list(gradient.output)
    inputs = []
    for k, name in enumerate(fwd_in):
        role = ("sequence" if k == 0 else "param" if k in params
                else "initial" if k in initial else "reference")  # fmt: skip
        grad = grad_map.get(name)
        inputs.append((n_go + k, name, role, grads.index(grad) if grad in grads else None))
    drawn = sorted(out for *_, out in inputs if out is not None)
    if drawn != list(range(len(grads))):
        raise DrawingError(
            "fig_recurrent_gradient_op: the gradient op's outputs %s are not the gradients of its "
            "forward inputs %s" % (grads, fwd_in)
        )
    param_grads = _strings(forward, "param_grads")
    return Ports(
        gos=gos,
        inputs=tuple(inputs),
        outputs=tuple((n_go + len(fwd_in) + k, name) for k, name in enumerate(fwd_out)),
        grads=tuple(grads),
        param_grads=tuple(param_grads),
        tmpstep=tuple(name + "_tmpstep" for name in param_grads),
    )


def _pill(canvas, x, y, text, fill, edge, cls, dash=None):
    """A blob pill from ``x`` centred on ``y``; returns its right edge."""
    w = text_width(text, _SIZE) + 14
    with canvas.group(cls):
        canvas.box(x, y - _PILL_H / 2, w, _PILL_H, text, fill, edge, _SIZE, rx=_PILL_H / 2,
                   dash=dash)  # fmt: skip
    return x + w


def _description(ports):
    gos = ", ".join("%d %s (GO of output %d)" % (i, n, k) for i, n, k, _ in ports.gos)
    ins = ", ".join("%d %s" % (i, n) for i, n, _, _ in ports.inputs)
    outs = ", ".join("%d %s" % (i, n) for i, n in ports.outputs)
    grads = ", ".join(
        "%d %s (of %s)" % (out, ports.grads[out], n)
        for _, n, _, out in sorted((p for p in ports.inputs if p[3] is not None),
                                   key=lambda p: p[3])
    )  # fmt: skip
    none = ", ".join(n for _, n, _, out in ports.inputs if out is None)
    return (
        "The RecurrentNetworkGradient op AddGradientOperators adds for rnn_cell.LSTM's "
        "RecurrentNetwork op. Inputs, in order: %s; then the forward op's inputs %s; then its "
        "outputs %s, the last the step workspaces. Outputs, in order: %s. No gradient: %s. "
        "param_grads: %s, renamed %s in the backward step net."
        % (gos, ins, outs, grads, none or "none", ", ".join(ports.param_grads),
           ", ".join(ports.tmpstep))
    )  # fmt: skip


def fig_recurrent_gradient_op(outputs_with_grads=OUTPUTS_WITH_GRADS):
    """The gradient op of the path's LSTM: its inputs and outputs, in order, read from a build."""
    ports = read_ports(*build(outputs_with_grads))
    canvas = Canvas(
        style.WIDTH,
        "One RecurrentNetworkGradient op: its inputs in order, its outputs in order",
        _description(ports),
    )
    top = parts.heading(
        canvas,
        "One RecurrentNetworkGradient op: inputs and outputs",
        "Numbers are positions in `op.input` (left) and `op.output` (right).",
    )
    left, right = 10, style.WIDTH - 10
    num_x, pill_x = left + 2, left + 22  # an input's number, its pill
    op_l, op_r = 208, 396  # the op
    out_num, out_pill = op_r + 16, op_r + 32  # an output's number, its pill
    column = op_l - 14 - left  # the width of a group's heading

    y = top + 12
    canvas.text(left, y, "inputs (`op.input`), in order", _SIZE, bold=True)
    canvas.text(out_num, y, "outputs (`op.output`), in order", _SIZE, bold=True)
    canvas.text_block(out_num, y + 24, "each the gradient of the forward input on its row",
                      _SIZE, width=right - out_num, fill=style.MUTED)  # fmt: skip
    y += 18
    op_top = y
    rows = {}  # forward input name -> y of its pin

    def heading(text):
        nonlocal y
        height = canvas.text_block(left, y + 6, text, _SIZE, width=column, fill=style.MUTED)
        y += height + 10

    def pin(index, name, fill, edge, cls):
        nonlocal y
        y += _ROW / 2
        with canvas.group("pin %s" % cls):
            canvas.text(num_x, y, "%d" % index, _SIZE, bold=True, fill=style.RNN_OP)
            end = _pill(canvas, pill_x, y, "`%s`" % name, fill, edge, "pill")
        canvas.arrow(end + 2, y, op_l - 1, y, style.MUTED, 1.1)
        pin_y = y
        y += _ROW / 2
        return pin_y

    # -- the GOs ---------------------------------------------------------------------------
    heading("GO of each output `outputs_with_grads` lists")
    for index, name, k, _ in ports.gos:
        pin(index, name, style.GRADIENT_FILL, style.GRADIENT_EDGE, "go")
        canvas.text(pill_x + 4, y + 2, "of forward output %d" % k, _SIZE, fill=style.MUTED)
        y += 16
    y += 6
    # -- the forward op's inputs -----------------------------------------------------------
    heading("the forward op's inputs, in order")
    for index, name, role, _ in ports.inputs:
        rows[name] = pin(index, name, *_ROLE_FILL[role], cls="forward-input")
    fwd_bottom = y
    y += 6
    # -- the forward op's outputs ----------------------------------------------------------
    heading("the forward op's outputs, in order; the last, the step workspaces")
    for index, name in ports.outputs:
        pin(index, name, "#FFFFFF", style.INK, "forward-output")
    op_bottom = y + 4

    # -- the op: a part whose pins are the rows --------------------------------------------
    with canvas.group("op"):
        canvas.rect(op_l, op_top - 6, op_r - op_l, op_bottom - op_top + 6, style.RNN_FILL,
                    style.RNN_OP, 1.8, 8)  # fmt: skip
        mid = (op_l + op_r) / 2
        canvas.text(mid, op_top + 12, "RecurrentNetworkGradient", style.LABEL, "middle", True,
                    style.RNN_OP)  # fmt: skip
        canvas.text_block(op_l + 12, op_top + 32, "`AddGradientOperators` adds it; runs "
                          "`backward_step_net` for t = T−1 … 0", _SIZE,
                          width=op_r - op_l - 20, fill=style.MUTED)  # fmt: skip
        canvas.text_block(op_l + 12, op_bottom - 44, "timestep t runs in step workspace t, "
                          "from the last input", _SIZE, width=op_r - op_l - 20,
                          fill=style.MUTED)  # fmt: skip
    # a forward input and its gradient share a row: a dotted line across the op
    for _, name, _, out in ports.inputs:
        row = rows[name]
        with canvas.group("pair"):
            if out is None:
                canvas.line(op_l + 4, row, op_r - 40, row, style.MUTED, 1.0, "2 3")
                canvas.text(op_r - 36, row, "none", _SIZE, fill=style.MUTED)
                continue
            canvas.line(op_l + 4, row, op_r - 4, row, style.MUTED, 1.0, "2 3")

    # -- outputs, each on its forward input's row --------------------------------------------
    param_rows = []
    for _, name, role, out in ports.inputs:
        row = rows[name]
        if out is None:
            _pill(canvas, out_pill, row, "no gradient", "#FFFFFF", style.MUTED, "absent",
                  dash="3 3")  # fmt: skip
            continue
        canvas.arrow(op_r + 1, row, op_r + 14, row, style.MUTED, 1.1)
        with canvas.group("pin output"):
            canvas.text(out_num, row, "%d" % out, _SIZE, bold=True, fill=style.RNN_OP)
            _pill(canvas, out_pill, row, "`%s`" % ports.grads[out], style.GRADIENT_FILL,
                  style.GRADIENT_EDGE, "pill")  # fmt: skip
        if role == "param":
            param_rows.append(row)
    if param_rows:
        widest = max(text_width("`%s`" % ports.grads[o], _SIZE) for *_, o in ports.inputs
                     if o is not None)  # fmt: skip
        x = out_pill + widest + 14 + 10
        with canvas.group("param-grads"):
            canvas.bracket(x, min(param_rows) - 10, max(param_rows) + 10, stroke=style.PARAM_EDGE,
                           width=1.4)  # fmt: skip
            canvas.text(x + 5, (min(param_rows) + max(param_rows)) / 2, "`param`", _SIZE,
                        fill=style.PARAM_EDGE)  # fmt: skip

    # under the outputs, beside the forward outputs (no gradient there): the param outputs
    note_y = fwd_bottom + 14
    with canvas.group("param-grads"):
        more = ", …" if len(ports.tmpstep) > 1 else ""
        height = canvas.text_block(out_num, note_y, "`param`'s: the sums over timesteps of the "
                                   "blobs `param_grads` names, renamed:", _SIZE,
                                   width=right - out_num, fill=style.MUTED)  # fmt: skip
        canvas.text(out_num, note_y + height + 4, "`%s`%s" % (ports.tmpstep[0], more), _SIZE,
                    fill=style.MUTED)  # fmt: skip

    y = max(y, canvas.bottom) + 18
    items = [("box", _ROLE_FILL[role], _ROLE_TEXT[role]) for role in _ROLE_FILL]
    items.append(("box", (style.GRADIENT_FILL, style.GRADIENT_EDGE), "a gradient"))
    parts.key(canvas, y, items, size=_SIZE)
    return Figure("fig_recurrent_gradient_op", canvas.svg())
