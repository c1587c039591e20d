"""``fig_recurrent_net_stages()``: ``recurrent_net``'s stages, from a cell net to one op.

docs/concepts/recurrent-net.md (step 15) names six stages, in this order
(:mod:`caffe2rnn.recurrent_stages` has one function per stage): the
**references**, the **backward step net** (from the gradient registry), the
**scratches**, the **links and aliases**, the **``_accum`` rewrite**, and the
packing into one ``RecurrentNetwork`` op. The figure runs them on the cell of
the path's LSTM, ``rnn_cell.LSTM(model, "x", "seq_lengths", ("h0", "c0"),
dim_in=3, dim_out=4, scope="lstm")`` (step 1; era E5, Caffe2 0cdd09da6), and
draws what each returns.

Nothing is written here by hand. :func:`run_stages` takes the op that
``rnn_cell.LSTM`` built, reads back the cell (its ``step_net``) and the call
(the input, initial states and links, from the op's links), runs the stages
of :mod:`caffe2rnn.recurrent_stages` on them as ``recurrent_net`` does, and
checks that they give back the op: its inputs, links, backward links,
aliases, ``param_grads`` and ``backward_step_net``. A drawing that disagreed
with the op could not be drawn (:class:`~caffe2rnn.errors.DrawingError`).
"""

from dataclasses import dataclass

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

_MONO = style.NOTE  # the size of a blob name
_LEFT_W = 190  # px of a stage's box on the left
_RIGHT_X = _LEFT_W + 26  # where what it made starts
SCRATCH_FILL, SCRATCH_EDGE = "#FCE8E6", "#C5221F"
#: The era whose recurrent_net the figure runs (Caffe2 0cdd09da6, the path's default).
ERA = "E5"


@dataclass
class Stages:
    """What each stage of ``recurrent_net`` made for one cell (names as strings)."""

    scope: str
    cell_ops: list  # (type, inputs, outputs) of the cell net
    cell_inputs: list  # the cell net's external inputs
    inputs: list  # [(cell blob, op input)]: the sequence
    initial: list  # [(cell blob, initial state)]
    links: dict  # cell input -> the cell output that becomes it at t + 1
    references: list  # stage 1
    params: list  # the references that get a gradient
    given: dict  # cell output -> its gradient, given to the registry (stage 2)
    backward_ops: list  # stage 2: (type, inputs, outputs), before the rewrite
    scratches: list  # stage 3
    plan: object  # stage 4: recurrent_stages.LinkPlan
    accum: list  # stage 5: (op type, blob, renamed output)
    op_inputs: list  # stage 6
    op_outputs: list
    op_arguments: list  # argument names, in the op's order


def build_op(scope="lstm", dim_out=4):
    """The ``RecurrentNetwork`` op of ``rnn_cell.LSTM(model, "x", "seq_lengths",
    initial states, dim_in=3, dim_out=dim_out, scope=scope)`` on a ``ModelHelper``."""
    from ... import eras, model_helper, rnn_cell

    layers = dim_out if isinstance(dim_out, (list, tuple)) else [dim_out]
    states = ("h0", "c0") if len(layers) == 1 else tuple(
        "%s%d" % (s, k) for k in range(len(layers)) for s in ("h", "c"))  # fmt: skip
    with eras.use(ERA), parts.fresh_net_names():  # the era the figure names
        model = model_helper.ModelHelper(name="stages")
        rnn_cell.LSTM(model, "x", "seq_lengths", states, dim_in=3, dim_out=dim_out, scope=scope)
    (op,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    return op


def _ops(netdef):
    return [(op.type, list(op.input), list(op.output)) for op in netdef.op]


def run_stages(op):
    """Run ``recurrent_net``'s stages again on the cell and call an op was built from.

    The cell is the op's ``step_net``; the call's ``inputs``,
    ``initial_cell_inputs`` and ``links`` are read from its links; the scope
    from its last output (``<scope>/step_workspaces``). Returns
    :class:`Stages`, after checking that the stages give back the op.
    """
    with parts.fresh_net_names():  # the nets made here rename none of the reader's
        return _run_stages(op)


def _run_stages(op):
    from ... import core
    from ... import recurrent_stages as st
    from ..rnn_op import RecurrentOp

    rnn = RecurrentOp(op)
    cell = core.Net(rnn.step_net)
    inputs = [(l.internal, l.external) for l in rnn.links if l.external == rnn.sequence_input]
    initial, links = [], {}
    for state, read, written in rnn.recurrent_pairs():
        initial.append((read, rnn.initial_state(state)))
        links[read] = written
    scope = op.output[-1].rsplit("/", 1)[0]
    timestep = rnn.timestep

    references = [str(r) for r in st.find_references(cell.Proto(), inputs, initial, timestep)]
    backward = st.build_backward_cell(cell)
    given = {o: o + "_grad" for o in cell.Proto().external_output}
    registry_ops = _ops(backward.net.Proto())
    plan = st.plan_links(inputs, initial, links, st.scoper(None, scope), backward)
    backward.net.Proto().external_input.extend(cell.Proto().external_input)
    backward.net.Proto().external_input.extend(cell.Proto().external_output)
    st.accumulate_linked_gradients(backward.net)
    accum = [
        (o.type, name[: -len("_accum")], name)
        for o in backward.net.Proto().op
        for name in o.output
        if name.endswith("_accum")
    ]
    all_inputs = [b for _, b in inputs] + [b for _, b in initial] + references
    params, param_grads = st.parameters(references, backward)

    def triples(items):
        return list(zip(*st.unpack_triples(items)))

    def without_name(netdef):
        return str(netdef).split("\n", 1)[1]

    checks = {
        "inputs": (all_inputs, list(op.input)),
        "outputs": (plan.outputs + [scope + "/step_workspaces"], list(op.output)),
        "links": (triples(plan.forward_links), triples(rnn.links)),
        "backward links": (triples(plan.backward_links), triples(rnn.backward_links)),
        "aliases": (triples(plan.aliases), triples(rnn.aliases)),
        "param_grads": (param_grads, list(rnn.param_grads)),
        "backward_step_net": (
            without_name(backward.net.Proto()),
            without_name(rnn.backward_step_net),
        ),
    }
    for what, (again, built) in checks.items():
        if again != built:
            raise DrawingError(
                "recurrent_net's stages, run again on the op's cell, do not give back its "
                "%s: %r, the op has %r" % (what, again, built)
            )
    return Stages(
        scope=scope,
        cell_ops=_ops(rnn.step_net),
        cell_inputs=list(cell.Proto().external_input),
        inputs=inputs,
        initial=initial,
        links=links,
        references=references,
        params=[str(p) for p in params],
        given=given,
        backward_ops=registry_ops,
        scratches=list(backward.scratches),
        plan=plan,
        accum=accum,
        op_inputs=list(op.input),
        op_outputs=list(op.output),
        op_arguments=[a.name for a in op.arg],
    )


def _pills(canvas, x, y, names, fill, edge, right, h=19, gap=6, cls="blob"):
    """Blob pills left to right from ``x``, wrapping at ``right``; returns the y of the
    last row's centre and the x after the last pill."""
    for name in names:
        w = text_width("`%s`" % name, _MONO) + 14
        if x + w > right:
            x, y = _RIGHT_X, y + h + 5
        with canvas.group(cls):
            canvas.box(x, y - h / 2, w, h, "`%s`" % name, fill, edge, _MONO, rx=h / 2)
        x += w + gap
    return y, x


def _chips(canvas, x, y, types, colour, arrows=True):
    """Op chips in a row (an arrow between two), centred on ``y``; returns the x after."""
    for k, op_type in enumerate(types):
        w = text_width(op_type, style.NOTE, True) + 14
        with canvas.group("op"):
            canvas.box(x, y - 10, w, 20, op_type, colour, colour, style.NOTE, True, "#FFFFFF", 3)
        x += w
        if arrows and k < len(types) - 1:
            canvas.arrow(x + 1, y, x + 11, y, style.INK, 1.1)
        x += 13 if arrows else 6
    return x


def _note(canvas, x, y, text, right, fill=style.MUTED):
    """A wrapped note from ``x`` to ``right``, first line centred on ``y``; returns the y below."""
    return y + canvas.text_block(x, y, text, style.NOTE, width=right - x, fill=fill)


def _argument_families(names):
    """``link_internal, link_external, link_offset`` → ```link_*` (3)``: the parallel lists
    named once, the other arguments as they are, in the op's order."""
    shown, counts = [], {}
    for name in names:
        family = next((p for p in ("backward_link_", "link_", "alias_") if name.startswith(p)),
                      None)  # fmt: skip
        key = family + "*" if family else name
        if key not in counts:
            shown.append(key)
        counts[key] = counts.get(key, 0) + 1
    return ", ".join("`%s` (%d)" % (k, counts[k]) if k.endswith("*") else "`%s`" % k
                     for k in shown)  # fmt: skip


def _code(names):
    return ", ".join("`%s`" % n for n in names)


def fig_recurrent_net_stages(scope="lstm", dim_out=4):
    """recurrent_net's six stages, run on the cell of the path's LSTM, each with what it made."""
    stages = run_stages(build_op(scope, dim_out))
    two_layers = run_stages(build_op(scope, [dim_out, dim_out]))
    plan = stages.plan
    right = style.WIDTH - 10
    canvas = Canvas(
        style.WIDTH,
        "recurrent_net, stage by stage: from a cell net to one RecurrentNetwork op",
        "The stages of recurrent_net run on the cell of rnn_cell.LSTM(..., scope=%r). "
        "1 references: %s. 2 backward step net from the gradient registry: %s. "
        "3 scratches: %s. 4 links and aliases: state tensors %s, aliases %s. "
        "5 the _accum rewrite: %s. 6 one RecurrentNetwork op with inputs %s and outputs %s."
        % (
            scope,
            ", ".join(stages.references),
            ", ".join(t for t, _, _ in stages.backward_ops),
            ", ".join(stages.scratches) or "none",
            ", ".join(plan.recurrent_states),
            ", ".join(a.dst for a in plan.aliases),
            ", ".join(r for _, _, r in stages.accum) or "nothing renamed",
            ", ".join(stages.op_inputs),
            ", ".join(stages.op_outputs),
        ),
    )
    top = parts.heading(
        canvas,
        "`recurrent_net`, stage by stage: a cell net in, one `RecurrentNetwork` op out",
        '`caffe2rnn.recurrent_stages` on `rnn_cell.LSTM(..., scope="%s")`\'s cell: '
        "names as returned." % scope,
    )
    rows = []  # (top, bottom, number, function, concept, fill, edge) of each stage's box

    def stage(y_top, number, function, concept, fill, edge):
        rows.append([y_top, None, number, function, concept, fill, edge])

    def end(y_bottom):
        rows[-1][1] = max(y_bottom, rows[-1][0] + 44)
        return rows[-1][1] + 16

    # -- what recurrent_net is given -----------------------------------------------------------
    y = top + 10
    stage(y, "", "cell_net", "the cell: one timestep", style.STEP_FILL, style.STEP_EDGE)
    line = y + 14
    after = _chips(canvas, _RIGHT_X, line, [t for t, _, _ in stages.cell_ops], style.COMPUTE)
    canvas.text(after + 2, line, "writes %s" % _code(dict.fromkeys(stages.links.values())),
                style.NOTE)  # fmt: skip
    ((sequence_blob, sequence),) = stages.inputs
    # "a ← b" is one word to the wrapper (no-break spaces) and each link is a line of its
    # own: a pair is never split at the right edge
    given = [
        ("inputs", "%s ← row t of %s" % (_code([sequence_blob]), _code([sequence]))),
        ("initial_cell_inputs", ", ".join("%s\u00a0←\u00a0%s" % (_code([c]), _code([b]))
                                          for c, b in stages.initial)),
        ("links", ",\n".join("%s\u00a0←\u00a0%s" % (_code([i]), _code([o]))
                              for i, o in stages.links.items())),
        ("scope", '`"%s"`' % stages.scope),
    ]  # fmt: skip
    line += 22
    for argument, value in given:
        canvas.text(_RIGHT_X, line, "`%s`" % argument, _MONO, bold=True)
        line = _note(canvas, _RIGHT_X + 134, line, value, right, style.INK)
    canvas.text(_RIGHT_X, line, "(a link: step t's output is step t+1's input)", style.NOTE,
                fill=style.MUTED)  # fmt: skip
    y = end(line + 8)

    # -- 1 references ------------------------------------------------------------------------------
    stage(y, "1", "find_references", "references", style.PARAM_FILL, style.PARAM_EDGE)
    line = y + 12
    x = _RIGHT_X
    for name in stages.references:
        fill, edge = (style.PARAM_FILL, style.PARAM_EDGE) if name in stages.params else (
            "#FFFFFF", style.MUTED)  # fmt: skip
        line, x = _pills(canvas, x, line, [name], fill, edge, right)
    line = _note(canvas, _RIGHT_X, line + 20, "read as they are, every step; blue: gets a gradient "
                 "(`param`)", right)  # fmt: skip
    y = end(line)

    # -- 2 the backward step net --------------------------------------------------------------
    stage(y, "2", "build_backward_cell", "backward step net", style.BACKWARD_FILL,
          style.BACKWARD_EDGE)  # fmt: skip
    line = y + 12
    after = _chips(canvas, _RIGHT_X, line, [t for t, _, _ in stages.backward_ops],
                   style.BACKWARD_EDGE)  # fmt: skip
    canvas.text(after + 2, line, "in this order", style.NOTE, fill=style.MUTED)
    line = _note(canvas, _RIGHT_X, line + 22, "the gradient registry (step 4) on the cell's ops; "
                 "given %s" % _code(stages.given.values()), right)  # fmt: skip
    y = end(line)

    # -- 3 scratches ----------------------------------------------------------------------------
    stage(y, "3", "find_scratches", "scratches", SCRATCH_FILL, SCRATCH_EDGE)
    line = y + 12
    if stages.scratches:
        line, x = _pills(canvas, _RIGHT_X, line, stages.scratches, SCRATCH_FILL, SCRATCH_EDGE,
                         right, cls="scratch")  # fmt: skip
        readers = [t for t, ins, _ in stages.backward_ops if stages.scratches[0] in ins]
        canvas.text(x + 2, line, "read by `%s`: kept in every step workspace" % readers[0],
                    style.NOTE)  # fmt: skip
    else:
        canvas.text(_RIGHT_X, line, "none", style.NOTE)
    line = _note(canvas, _RIGHT_X, line + 20, "autograd's saved tensors", right)  # fmt: skip
    y = end(line)

    # -- 4 links and aliases ----------------------------------------------------------------
    stage(y, "4", "plan_links", "links and aliases", style.STATE_FILL, style.STATE_EDGE)
    line = y + 12
    for state in plan.recurrent_states:
        read = [l.internal for l in plan.forward_links if l.external == state and l.offset == 0]
        written = [l.internal for l in plan.forward_links if l.external == state and l.offset == 1]
        line, x = _pills(canvas, _RIGHT_X, line, [state], style.STATE_FILL, style.STATE_EDGE,
                         right, cls="state")  # fmt: skip
        canvas.text(x + 2, line, "T + 1 rows", style.NOTE, fill=style.MUTED)
        with canvas.group("link"):
            canvas.text(_RIGHT_X + 12, line + 17, "%s = row t, %s = row t+1" % (
                _code(read), _code(written)), style.NOTE, fill=style.LINK)  # fmt: skip
        aliases = [(a.dst, a.offset) for a in plan.aliases if a.src == state]
        with canvas.group("alias"):
            canvas.text(_RIGHT_X + 12, line + 32, "; ".join(
                "%s = %s" % (_code([d]), "rows 1…T" if o == 1 else "row T") for d, o in aliases),
                style.NOTE, fill=style.ALIAS)  # fmt: skip
        line += 52
    sequence, source = stages.inputs[0]
    back = [l for l in plan.backward_links if l.external == source + "_grad"]
    with canvas.group("link"):
        canvas.text(_RIGHT_X, line - 4, "%s = row t of %s; backward: %s = row t of %s" % (
            _code([sequence]), _code([source]), _code([back[0].internal]),
            _code([back[0].external])), style.NOTE, fill=style.LINK)  # fmt: skip
    line = _note(canvas, _RIGHT_X, line + 12, "%d links, %d backward links (into `<state>_grad` "
                 "and `%s_grad`), %d aliases" % (len(plan.forward_links),
                 len(plan.backward_links), source, len(plan.aliases)), right)  # fmt: skip
    y = end(line)

    # -- 5 the _accum rewrite ---------------------------------------------------------------
    stage(y, "5", "accumulate_linked_gradients", "the `_accum` rewrite", "#FFFFFF",
          style.ACCUMULATE)  # fmt: skip
    line = y + 12
    if stages.accum:
        text = "renames %s" % "; ".join("%s → %s" % (t, _code([r])) for t, _, r in stages.accum)
    else:
        text = "one layer: nothing to rename"
    canvas.text(_RIGHT_X, line, text, style.NOTE, bold=True)
    example = two_layers.accum[0] if two_layers.accum else None
    if example is not None:
        op_type, blob, renamed = example
        line = _note(canvas, _RIGHT_X, line + 17, "two layers (`dim_out=[%d, %d]`): `%s` writes "
                     "%s, then a `Sum`" % (dim_out, dim_out, op_type, _code([renamed])),
                     right)  # fmt: skip
    y = end(line)

    # -- 6 the op --------------------------------------------------------------------------------
    stage(y, "6", "op_arguments", "one `RecurrentNetwork` op", style.RNN_FILL, style.RNN_OP)
    line = y + 12
    canvas.text(_RIGHT_X, line, "`RecurrentNetwork` in `net`, inputs in this order:",
                style.NOTE, bold=True)  # fmt: skip
    line, _ = _pills(canvas, _RIGHT_X, line + 20, stages.op_inputs, "#FFFFFF", style.RNN_OP,
                     right, cls="input")  # fmt: skip
    canvas.text(_RIGHT_X, line + 20, "outputs:", style.NOTE, bold=True)
    line, _ = _pills(canvas, _RIGHT_X + 50, line + 20, stages.op_outputs, "#FFFFFF",
                     style.RNN_OP, right, cls="output")  # fmt: skip
    families = _argument_families(stages.op_arguments)
    line = _note(canvas, _RIGHT_X, line + 20, "%d arguments: %s"
                 % (len(stages.op_arguments), families), right)  # fmt: skip
    end(line)

    # -- the stages' boxes on the left, joined top to bottom -----------------------------------
    for k, (y_top, y_bottom, number, function, concept, fill, edge) in enumerate(rows):
        with canvas.group("stage"):
            canvas.rect(10, y_top, _LEFT_W, y_bottom - y_top, fill, edge, 1.4, 5)
            x = 18
            if number:
                canvas.circle(26, y_top + 14, 8, "#FFFFFF", edge, 1.4)
                canvas.text(26, y_top + 14, number, style.NOTE, "middle", True)
                x = 40
            canvas.text(x, y_top + 14, concept, style.SMALL, bold=True)
            canvas.text(18, y_top + 31, "`%s`" % function, _MONO)
        if k < len(rows) - 1:
            canvas.arrow(10 + _LEFT_W / 2, y_bottom, 10 + _LEFT_W / 2, rows[k + 1][0], style.INK,
                         1.3)  # fmt: skip
    return Figure("fig_recurrent_net_stages", canvas.svg())
