"""``unroll(op, T)``: the step net drawn once per timestep, one after the other.

RecurrentNetwork runs one step net T times; what connects the copies is the
state tensors. Unrolled, that connection becomes an ordinary edge: the blob
step t writes at offset 1 (``hidden_t``) *is* the blob step t+1 reads at
offset 0 (``hidden_t_prev``) — the same row of ``<cell_input>_states``. This
view draws those recurrent edges (thick red) between the steps; row t of the
input sequence feeds step t; the initial state feeds step 0; every step's
output is one row of ``_all``, the last step's is ``_last``.

At full size the steps stand left to right. On a page (``width="page"``) time
runs down, and for T > :data:`PAGE_STEPS` only the first two steps and the
last are drawn, with an ellipsis between them that says which steps it stands
for (``steps="all"`` draws every one).

Caffe2 itself unrolled RNNs this way in ``rnn_cell`` ``static_rnn`` tests
(2017-06), comparing the unrolled and the dynamic op's results.
"""

from ..errors import DrawingError, op_context
from . import sizing
from .canvas import Canvas
from .rnn_op import RecurrentOp, link_label
from .rnn_parts import draw_net
from .ssa import draw_versions

#: On a page, a sequence longer than this is drawn as steps 0, 1, ..., T-1.
PAGE_STEPS = 4
#: On a page, the blobs a step reads go in rows of this many.
PAGE_ROW = 3
STEPS = ("auto", "all")


def _shown_steps(T, page, steps):
    if steps not in STEPS:
        raise DrawingError("steps=%r: expected 'auto' or 'all'" % (steps,))
    if not page or steps == "all" or T <= PAGE_STEPS:
        return list(range(T))
    return [0, 1, T - 1]


def unroll(op, T=3, width=None, steps="auto", nested="auto"):
    """One cluster per timestep t = 0..T-1, recurrent edges between them.

    Time order *is* enforced, not hoped for: Graphviz orders nodes within a
    rank by crossing minimisation and happily draws side-by-side columns as
    steps 1, 2, 0, 3. So each step sits between two invisible gates: every
    node of step t points (invisibly) to the gate after it, which points to
    the gate before step t+1, which points to every node of step t+1. Step
    t+1 then lies on strictly higher ranks: to the right at full size (left
    to right), below on a page (top to bottom).

    ``width="page"`` (:mod:`~caffe2rnn.viz.sizing`): time runs down; with
    ``steps="auto"`` a sequence longer than :data:`PAGE_STEPS` shows steps
    0, 1 and T-1 around an ellipsis (the legend says what it stands for);
    ``steps="all"`` draws every step. On a page each step's net is one box
    listing its ops, with the blobs its links connect (``nested="expand"``
    draws every op, as the full-size view does).
    """
    if nested not in ("auto", "expand"):
        raise DrawingError("nested=%r: expected 'auto' or 'expand'" % (nested,))
    rnn = RecurrentOp(op)
    if not isinstance(T, int) or T < 1:
        raise DrawingError(
            "%s: unroll needs a sequence length T >= 1, got %r" % (op_context(op), T)
        )
    canvas = Canvas(
        "unroll_" + rnn.name,
        "%s unrolled over T = %d steps" % (rnn.called, T),
        "TB" if sizing.check(width) == "page" else "LR",
        width,
    )
    shown = _shown_steps(T, canvas.page, steps)
    # On a page a big step net is drawn as one box per step (its ops listed):
    # what the view shows is the recurrence between the steps.
    # On a page each step is one box (its ops listed), unless asked to expand:
    # what the view shows is the recurrence between the steps.
    collapse = canvas.page and nested != "expand"
    params = {rnn.inputs[i] for i in rnn.params}
    sequence_links = [l for l in rnn.links if l.external == rnn.sequence_input]
    if collapse:
        linked = {l.internal for l in rnn.links}
        reads = [n for n in rnn.step_net.external_input if n not in linked]
        listed = ", ".join(reads) if len(reads) <= 5 else "%d more blobs" % len(reads)
        canvas.note(
            "Each box is the step net (%d ops), with the blobs its links connect; every step "
            "also reads %s. nested='expand' (and the full-size drawing) draws every op."
            % (len(rnn.step_net.op), listed)
        )
    columns = {}
    for t in shown:
        with canvas.cluster("t%d" % t, "timestep t = %d" % t, "time") as sub:
            if collapse:
                # the input row inside the step's box: beside it, it would
                # push each step sideways (a staircase down the page)
                if sequence_links:
                    row = ("io/", rnn.sequence_input, "[%d]" % t)
                    canvas.blob(row, "%s[%d]" % (rnn.sequence_input, t), ["external_input"],
                                graph=sub)  # fmt: skip
                if t == shown[0]:  # and the initial states, in the first step's box
                    for state, _, _ in rnn.recurrent_pairs():
                        initial = rnn.initial_state(state)
                        canvas.blob(("io/", initial), canvas.wrap(initial), ["external_input"],
                                    graph=sub)  # fmt: skip
                columns[t] = draw_net(
                    canvas, sub, rnn.step_net, "t%d/" % t, params, False,
                    [l.internal for l in rnn.links], rnn.inputs, terse=True,
                )  # fmt: skip
                continue
            columns[t] = draw_versions(
                canvas,
                sub,
                rnn.step_net,
                prefix="t%d/" % t,
                params=params,
                always_version=False,
                inplace_edges=False,
                fold=PAGE_ROW if canvas.page else None,
                # on a page the blobs the step before (or the input) feeds lead:
                # the edges into them come straight down, not round the box
                lead=[l.internal for l in rnn.links] if canvas.page else (),
            )
    gaps = [t for t, after in zip(shown, shown[1:]) if after != t + 1]
    if canvas.page:
        _stack_steps(canvas, rnn, columns, shown, gaps)
    else:
        _gate_steps(canvas, columns, shown)
    if gaps:
        first, last = gaps[0] + 1, shown[-1] - 1
        canvas.text(
            "skipped",
            "\u22ee\nsteps %d..%d: the same step net\n(steps='all' draws them)\n\u22ee"
            % (first, last),
            fontsize="11",
        )
        canvas.note(
            "steps %d..%d are not drawn: each is the step net above, reading row t "
            "of the input and of each state tensor and writing row t+1; "
            "unroll(op, T, width='page', steps='all') draws every step" % (first, last)
        )
    for t, nodes in columns.items():
        for link in sequence_links:
            row = ("io/", rnn.sequence_input, "[%d]" % t)
            if not collapse:
                canvas.blob(row, "%s[%d]" % (canvas.wrap(rnn.sequence_input), t),
                            ["external_input"])  # fmt: skip
            canvas.edge(row, nodes.first(link.internal), "link", link_label(link))
    for state, read, written in rnn.recurrent_pairs():
        initial = rnn.initial_state(state)
        if not collapse:
            canvas.blob(("io/", initial), canvas.wrap(initial), ["external_input"])
        canvas.edge(("io/", initial), columns[0].first(read), label="row 0")
        for t, after in zip(shown, shown[1:]):
            if t in gaps:
                tail, head = columns[t].last(written), "skipped"
                canvas.edge(tail, head, "recurrent", "row %d" % (t + 1), constraint="false")
                tail, head = "skipped", columns[after].first(read)
                canvas.edge(tail, head, "recurrent", "row %d" % after, constraint="false")
                continue
            # on a page the recurrent edges take part in the layout: dot then
            # keeps them from crossing (each state straight down its side)
            canvas.edge(
                columns[t].last(written),
                columns[after].first(read),
                "recurrent",
                "row %d" % (t + 1),
                **({} if canvas.page else {"constraint": "false"}),
            )
        for alias in rnn.aliases:
            if alias.src != state:
                continue
            out = ("io/", alias.dst)
            last = columns[shown[-1]].last(written)
            if alias.offset == -1:
                canvas.blob(out, canvas.wrap(alias.dst), ["external_output"])
                canvas.edge(last, out, "alias", "last row")
            elif alias.offset == 1 and canvas.page:
                # One edge, from the last step: an edge from every step would
                # cross every step below it. The label says what the rest do.
                canvas.blob(
                    out, "%s\n[t] from step t" % canvas.wrap(alias.dst), ["external_output"]
                )
                canvas.edge(last, out, "alias", "[%d]" % shown[-1])
            elif alias.offset == 1:
                canvas.blob(out, canvas.wrap(alias.dst), ["external_output"])
                for t in shown:
                    canvas.edge(columns[t].last(written), out, "alias", "[%d]" % t)
    if canvas.page:  # the outputs in rows, not one wide row (four fit in one)
        outputs = [("io/", alias.dst) for alias in rnn.aliases]
        canvas.fold(outputs, len(outputs) if len(outputs) <= 4 else PAGE_ROW)
    graph = canvas.finish()
    if canvas.page:
        sizing.with_full_size(graph, lambda: unroll(op, T))
    return graph


def _gate_steps(canvas, columns, shown):
    """Full size: the gates that put step t+1 to the right of step t (see unroll)."""
    for t, nodes in columns.items():
        for gate in ("in", "out"):
            canvas.point(_gate(t, gate), group="time")
        for node in nodes.ids():
            canvas.invisible(_gate(t, "in"), node)
            canvas.invisible(node, _gate(t, "out"))
        # A straight, heavy spine of gates keeps the steps on one line.
        canvas.invisible(_gate(t, "in"), _gate(t, "out"), weight="50")
        if t:
            canvas.invisible(_gate(t - 1, "out"), _gate(t, "in"), weight="50")


def _stack_steps(canvas, rnn, columns, shown, gaps):
    """On a page: step t+1 under step t. The blobs step t writes last (its
    outputs, at its bottom) point invisibly to the first row of blobs step
    t+1 reads (its top): short edges from box to box. (Gates beside the
    boxes, as at full size, would pull the steps into a staircase.)"""
    linked = {l.internal for l in rnn.links}

    def ends(t):
        nodes = columns[t]
        return [nodes.last(n) for n in nodes.final if n in linked and nodes.final[n] > 0]

    def tops(t):
        nodes = columns[t]
        leads = [nodes.first(l.internal) for l in rnn.links if nodes.has(l.internal, 0)]
        # the input row drawn in the step's box (collapsed) is its top
        row = ("io/", rnn.sequence_input, "[%d]" % t)
        if ("io/", rnn.sequence_input, "[%d]" % t) in canvas.drawn():
            leads = [row] + leads
        return leads or nodes.reads[:PAGE_ROW]

    for t, after in zip(shown, shown[1:]):
        if t in gaps:
            canvas.chain_all(ends(t), ["skipped"])
            canvas.chain_all(["skipped"], tops(after))
        else:
            canvas.chain_all(ends(t), tops(after))


def _gate(t, side):
    """The invisible node before ("in") or after ("out") step t."""
    return "t%d/__%s" % (t, side)
