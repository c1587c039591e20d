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


def unroll(op, T=3, rankdir="TB"):
    """One cluster per timestep t = 0..T-1 with recurrent edges between them.

    Each column flows top to bottom; recurrent edges do not constrain the
    layout, so the columns stand side by side instead of as a staircase.
    """
    rnn = RecurrentOp(op)
    if not isinstance(T, int) or T < 1:
        raise DrawingError(
            "%s: unroll needs a sequence length T >= 1, got %r" % (op_context(op), T)
        )
    canvas = Canvas(
        "unroll_" + rnn.name, "'%s' unrolled over T = %d steps" % (rnn.name, T), rankdir
    )
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
