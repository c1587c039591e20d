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

_MONO = style.READ_NOTE  # the size of a blob name
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


def _pills(canvas, x, y, names, fill, edge, right, h=20, gap=6, cls="blob", wrap_x=None):
    """Blob pills left to right from ``x``, wrapping at ``right`` back to ``wrap_x``;
    returns the y of the last row's centre and the x after the last pill."""
    for name in names:
        w = text_width("`%s`" % name, _MONO) + 14
        if x + w > right:
            x, y = wrap_x if wrap_x is not None else x, y + h + 6
        with canvas.group(cls):
            canvas.box(x, y - h / 2, w, h, "`%s`" % name, fill, edge, _MONO, rx=h / 2)
        x += w + gap
    return y, x


def _chips(canvas, x, y, types, colour, arrows=True):
    """Op chips in a row (an arrow between two), centred on ``y``; returns the x after."""
    for k, op_type in enumerate(types):
        w = text_width(op_type, style.READ_NOTE, True) + 14
        with canvas.group("op"):
            canvas.box(x, y - 10, w, 20, op_type, colour, colour, style.READ_NOTE, True, "#FFFFFF",
                       3)  # fmt: skip
        x += w
        if arrows and k < len(types) - 1:
            canvas.arrow(x + 1, y, x + 11, y, style.INK, 1.1)
        x += 13 if arrows else 6
    return x


def _note(canvas, x, y, text, right, fill=style.MUTED):
    """A wrapped note from ``x`` to ``right``, first line centred on ``y``; returns the y below."""
    return y + canvas.text_block(x, y, text, style.READ_NOTE, width=right - x, fill=fill)


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
        'run on the cell of `rnn_cell.LSTM(..., scope="%s")`; the numbers are the '
        "page's list, not Caffe2's" % scope,
    )
    # A picture of the flow (round 12: the stages drawn as rows beside their results read
    # as a table): the cell net goes in at the top, the six stages run left to right in
    # two rows, and the op comes out at the bottom, each of its parts tagged with the
    # number of the stage that made it.
    colours = {
        "1": (style.PARAM_FILL, style.PARAM_EDGE),
        "2": (style.BACKWARD_FILL, style.BACKWARD_EDGE),
        "3": (SCRATCH_FILL, SCRATCH_EDGE),
        "4": (style.STATE_FILL, style.STATE_EDGE),
        "5": ("#FFFFFF", style.ACCUMULATE),
        "6": (style.RNN_FILL, style.RNN_OP),
    }

    # -- in: the cell net ------------------------------------------------------------------------
    y = top + 8
    inner = 22  # the left edge of what a box holds
    line = y + 15
    with canvas.group("stage"):
        title = "in: the cell net, one timestep:"
        canvas.text(inner, line, title, style.READ_SMALL, bold=True)
        canvas.text(inner + text_width(title, style.READ_SMALL, True) + 6, line, "`cell_net`",
                    _MONO)  # fmt: skip
    after = _chips(canvas, inner, line + 24, [t for t, _, _ in stages.cell_ops], style.COMPUTE)
    canvas.text(after + 2, line + 24, "writes %s" % _code(dict.fromkeys(stages.links.values())),
                style.READ_NOTE)  # fmt: skip
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
    line += 48
    for argument, value in given:
        canvas.text(inner, line, "`%s`" % argument, _MONO, bold=True)
        line = _note(canvas, inner + 150, line, value, right - 12, style.INK)
    canvas.text(inner, line, "(a link: step t's output is step t+1's input)", style.READ_NOTE,
                fill=style.MUTED)  # fmt: skip
    cell_bottom = line + 12
    canvas.rect(10, y, style.WIDTH - 20, cell_bottom - y, "none", style.STEP_EDGE, 1.6, 6)

    # -- the six stages: two rows of three, in the order recurrent_net runs them ------------
    # Caffe2's concepts only (round 15, reader X: caffe2rnn's function names drawn in the
    # boxes outshone the caption saying they are not Caffe2's; recurrent_stages lists them)
    names = [
        ("1", "references", "blobs read from outside"),
        ("2", "backward step net", "from the gradient registry"),
        ("3", "scratches", "forward blobs kept per step"),
        ("4", "links and aliases", "state tensors and their rows"),
        ("5", "the `_accum` rewrite", "shares of a gradient add up"),
        ("6", "one `RecurrentNetwork` op", "its inputs and arguments"),
    ]
    box_w, box_h, gap, row_gap = 202, 46, 23, 30
    first = cell_bottom + 30
    canvas.arrow(10 + box_w / 2, cell_bottom, 10 + box_w / 2, first - 1, style.INK, 1.6)
    places = []
    for k, (number, concept, what) in enumerate(names):
        bx = 10 + (k % 3) * (box_w + gap)
        by = first + (k // 3) * (box_h + row_gap)
        places.append((bx, by))
        fill, edge = colours[number]
        with canvas.group("stage"):
            canvas.rect(bx, by, box_w, box_h, fill, edge, 1.5, 6)
            canvas.circle(bx + 16, by + 14, 8.5, "#FFFFFF", edge, 1.5)
            canvas.text(bx + 16, by + 14, number, style.READ_NOTE, "middle", True)
            canvas.text(bx + 30, by + 14, concept, style.READ_SMALL, bold=True)
            canvas.text(bx + 30, by + 33, what, style.READ_NOTE, fill=style.MUTED)
        if k % 3:
            canvas.arrow(bx - gap, by + box_h / 2, bx - 1, by + box_h / 2, style.INK, 1.6)
    # from stage 3 (end of the first row) back to stage 4 (start of the second)
    (x3, y3), (x4, y4) = places[2], places[3]
    turn = y3 + box_h + row_gap / 2
    canvas.path([(x3 + box_w / 2, y3 + box_h), (x3 + box_w / 2, turn), (x4 + box_w / 2, turn),
                 (x4 + box_w / 2, y4 - 1)], style.INK, 1.6)  # fmt: skip

    # -- out: the op, each part tagged with the stage that made it --------------------------
    x6, y6 = places[5]
    op_top = y6 + box_h + 30
    canvas.arrow(x6 + box_w / 2, y6 + box_h, x6 + box_w / 2, op_top - 1, style.RNN_OP, 1.6)
    left = 44  # where a part starts, right of its stage tag
    line = op_top + 16
    canvas.text(inner, line, "out: one `RecurrentNetwork` op, added to `net`",
                style.READ_SMALL, bold=True, fill=style.RNN_OP)  # fmt: skip

    def tag(yy, number):
        fill, edge = colours[number]
        canvas.circle(inner + 6, yy, 8.5, fill, edge, 1.5)
        canvas.text(inner + 6, yy, number, style.READ_NOTE, "middle", True)

    # the references (1): the op's inputs read at every step
    line += 26
    tag(line, "1")
    canvas.text(left, line, "refs:", style.READ_NOTE, bold=True)
    x = left + 48
    for name in stages.references:
        fill, edge = (style.PARAM_FILL, style.PARAM_EDGE) if name in stages.params else (
            "#FFFFFF", style.MUTED)  # fmt: skip
        line, x = _pills(canvas, x, line, [name], fill, edge, right - 12, cls="input",
                         wrap_x=left + 48)  # fmt: skip
    canvas.text(x + 2, line, "read every step; blue: a `param`", style.READ_NOTE,
                fill=style.MUTED)  # fmt: skip

    # the backward step net (2) and its scratches (3)
    line += 28
    tag(line, "2")
    canvas.text(left, line, "`backward_step_net`:", _MONO, bold=True)
    chips_x = left + text_width("`backward_step_net`:", _MONO) + 10
    _chips(canvas, chips_x, line, [t for t, _, _ in stages.backward_ops], style.BACKWARD_EDGE)
    note = "the gradient registry (step 4) on the cell's ops, given %s" % _code(
        stages.given.values()
    )
    if any(t == "Sum" for t, _, _ in stages.backward_ops):  # a blob two ops read: step 4
        note += "; the `Sum` adds the two shares of an `_autosplit_` gradient"
    line = _note(canvas, left, line + 20, note, right - 12)
    line += 8
    tag(line, "3")
    if stages.scratches:
        line, x = _pills(canvas, left, line, stages.scratches, SCRATCH_FILL, SCRATCH_EDGE,
                         right - 12, cls="scratch", wrap_x=left)  # fmt: skip
        readers = [t for t, ins, _ in stages.backward_ops if stages.scratches[0] in ins]
        canvas.text(x + 2, line, "read by `%s`: kept in every step workspace" % readers[0],
                    style.READ_NOTE)  # fmt: skip
    else:
        canvas.text(left, line, "no scratches", style.READ_NOTE)

    # the state tensors, their links and aliases (4)
    line += 28
    tag(line, "4")
    for state in plan.recurrent_states:
        read = [l.internal for l in plan.forward_links if l.external == state and l.offset == 0]
        written = [l.internal for l in plan.forward_links if l.external == state and l.offset == 1]
        line, x = _pills(canvas, left, line, [state], style.STATE_FILL, style.STATE_EDGE,
                         right - 12, cls="state", wrap_x=left)  # fmt: skip
        canvas.text(x + 2, line, "T + 1 rows", style.READ_NOTE, fill=style.MUTED)
        with canvas.group("link"):
            canvas.text(left + 12, line + 19, "%s = row t, %s = row t+1" % (
                _code(read), _code(written)), style.READ_NOTE, fill=style.LINK)  # fmt: skip
        aliases = [(a.dst, a.offset) for a in plan.aliases if a.src == state]
        with canvas.group("alias"):
            canvas.text(left + 12, line + 35, "; ".join(
                "%s = %s" % (_code([d]), "rows 1…T" if o == 1 else "row T") for d, o in aliases),
                style.READ_NOTE, fill=style.ALIAS)  # fmt: skip
        line += 58
    sequence, source = stages.inputs[0]
    back = [l for l in plan.backward_links if l.external == source + "_grad"]
    with canvas.group("link"):
        canvas.text(left, line - 6, "%s = row t of %s" % (_code([sequence]), _code([source])),
                    style.READ_NOTE, fill=style.LINK)  # fmt: skip
        canvas.text(left, line + 10, "backward: %s = row t of %s" % (
            _code([back[0].internal]), _code([back[0].external])), style.READ_NOTE,
            fill=style.LINK)  # fmt: skip
    line = _note(canvas, left, line + 26, "%d links, %d backward links, %d aliases" % (
        len(plan.forward_links), len(plan.backward_links), len(plan.aliases)),
        right - 12)  # fmt: skip

    # the _accum rewrite (5)
    line += 10
    tag(line, "5")
    if stages.accum:
        text = "renames %s" % "; ".join("%s → %s" % (t, _code([r])) for t, _, r in stages.accum)
    else:
        text = "one layer: nothing to rename"
    canvas.text(left, line, text, style.READ_NOTE, bold=True)
    example = two_layers.accum[0] if two_layers.accum else None
    if example is not None:
        op_type, blob, renamed = example
        # said of a two-layer cell in general: stacked LSTMs come later (step 17), and the
        # worked example, two Elman layers, is on docs/concepts/recurrent-net-gradient-rules.md
        line = _note(canvas, left, line + 18, "a state the step also reads (two layers): `%s` "
                     "writes its gradient as `…%s`, then a `Sum` adds it"
                     % (op_type, renamed[len(blob):]), right - 12) - 6  # fmt: skip

    # the op itself (6): its inputs in order (the references last), outputs, arguments
    line += 14
    tag(line, "6")
    canvas.text(left, line, "inputs:", style.READ_NOTE, bold=True)
    others = [name for name in stages.op_inputs if name not in stages.references]
    if stages.op_inputs != others + list(stages.references):
        raise DrawingError(
            "fig_recurrent_net_stages: the op's inputs are not its sequence "
            "and states, then its references: %s" % stages.op_inputs
        )
    line, x = _pills(canvas, left + 48, line, others, "#FFFFFF", style.RNN_OP, right - 12,
                     cls="input", wrap_x=left + 48)  # fmt: skip
    canvas.text(x + 2, line, "then the refs (1)", style.READ_NOTE, fill=style.MUTED)
    line += 26
    canvas.text(left, line, "outputs:", style.READ_NOTE, bold=True)
    line, _ = _pills(canvas, left + 58, line, stages.op_outputs, "#FFFFFF", style.RNN_OP,
                     right - 12, cls="output", wrap_x=left + 58)  # fmt: skip
    line += 24
    families = _argument_families(stages.op_arguments)
    line = _note(canvas, left, line, "%d arguments: %s" % (len(stages.op_arguments), families),
                 right - 12)  # fmt: skip
    canvas.rect(10, op_top, style.WIDTH - 20, line - 4 - op_top, "none", style.RNN_OP, 1.8, 6)
    return Figure("fig_recurrent_net_stages", canvas.svg())
