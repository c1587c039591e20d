"""``unroll(op, T)``: the step net drawn once per timestep, side by side.

RecurrentNetwork runs one step net T times; what connects the copies is the
state tensors. Unrolled, that connection becomes an ordinary edge: the blob
step t writes at offset 1 (``hidden_t``) *is* the blob step t+1 reads at
offset 0 (``hidden_t_prev``) — the same row of ``<cell_input>_states``. This
view draws those recurrent edges (thick red) between columns; row t of the
input sequence feeds step t; the initial state feeds step 0; every step's
output is one row of ``_all``, the last step's is ``_last``.

Caffe2 itself unrolled RNNs this way in ``rnn_cell`` ``static_rnn`` tests
(2017-06), comparing the unrolled and the dynamic op's results.
"""

from ..errors import DrawingError, op_context
from .rnn_op import RecurrentOp, link_label
from .ssa import draw_versions
from .style import Canvas, wrap


def unroll(op, T=3):
    """One cluster per timestep t = 0..T-1, left to right, recurrent edges between them.

    Left to right *is* time, and it is enforced, not hoped for: Graphviz
    orders nodes within a rank by crossing minimisation and happily draws
    side-by-side columns as steps 1, 2, 0, 3. So the drawing flows left to
    right and each step sits between two invisible gates: every node of step
    t points (invisibly) to the gate after it, which points to the gate
    before step t+1, which points to every node of step t+1. Step t+1 then
    lies on strictly higher ranks, i.e. to the right.
    """
    rnn = RecurrentOp(op)
    if not isinstance(T, int) or T < 1:
        raise DrawingError(
            "%s: unroll needs a sequence length T >= 1, got %r" % (op_context(op), T)
        )
    canvas = Canvas("unroll_" + rnn.name, "'%s' unrolled over T = %d steps" % (rnn.name, T), "LR")
    params = {rnn.inputs[i] for i in rnn.params}
    columns = []
    for t in range(T):
        with canvas.cluster("t%d" % t, "step t = %d" % t, "time") as sub:
            columns.append(
                draw_versions(
                    canvas,
                    sub,
                    rnn.step_net,
                    prefix="t%d/" % t,
                    params=params,
                    always_version=False,
                    inplace_edges=False,
                )
            )
    for t, nodes in enumerate(columns):
        for gate in ("in", "out"):
            canvas.graph.node(
                _gate(t, gate), "", shape="point", style="invis", width="0", group="time"
            )
        for node in nodes.ids():
            canvas.graph.edge(_gate(t, "in"), node, style="invis")
            canvas.graph.edge(node, _gate(t, "out"), style="invis")
        # A straight, heavy spine of gates keeps the steps on one line.
        canvas.graph.edge(_gate(t, "in"), _gate(t, "out"), style="invis", weight="50")
        if t:
            canvas.graph.edge(_gate(t - 1, "out"), _gate(t, "in"), style="invis", weight="50")
    sequence_links = [l for l in rnn.links if l.external == rnn.sequence_input]
    for t, nodes in enumerate(columns):
        for link in sequence_links:
            row = "io/%s[%d]" % (rnn.sequence_input, t)
            canvas.blob(row, "%s[%d]" % (wrap(rnn.sequence_input), t), ["external_input"])
            canvas.edge(row, nodes.first(link.internal), "link", link_label(link))
    for state, read, written in rnn.recurrent_pairs():
        initial = rnn.initial_state(state)
        canvas.blob("io/" + initial, wrap(initial), ["external_input"])
        canvas.edge("io/" + initial, columns[0].first(read), label="row 0")
        for t in range(T - 1):
            canvas.edge(
                columns[t].last(written),
                columns[t + 1].first(read),
                "recurrent",
                "row %d" % (t + 1),
                constraint="false",
            )
        for alias in rnn.aliases:
            if alias.src != state:
                continue
            out = "io/" + alias.dst
            canvas.blob(out, wrap(alias.dst), ["external_output"])
            if alias.offset == -1:
                canvas.edge(columns[-1].last(written), out, "alias", "last row")
            elif alias.offset == 1:
                for t in range(T):
                    canvas.edge(columns[t].last(written), out, "alias", "[%d]" % t)
    return canvas.finish()


def _gate(t, side):
    """The invisible node before ("in") or after ("out") step t."""
    return "t%d/__%s" % (t, side)
