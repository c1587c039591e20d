"""``recurrent(op)`` and ``backward(op)``: inside a RecurrentNetwork operator.

Caffe2's ``net_drawer`` drew a RecurrentNetwork op as one green box: its step
nets are only *arguments*. Here they are clusters inside the op, tied to the
tensors that outlive a step:

* a **state tensor** ``<scope>/<cell_input>_states`` (cylinder) has T+1 rows:
  row 0 is a copy of the initial-state input, row t+1 is written by step t;
* a **link** (dashed blue, "link t+offset") makes a step-net blob a view of
  rows ``t+offset ..`` of a tensor: a blob the step *reads* gets an arrow
  from the tensor, a blob it *writes* an arrow into it;
* an **alias** (dashed green, "alias ±offset") is an op output that views the
  state tensor: ``_all`` from row 1, ``_last`` the last row;
* a **reference** (dotted) is an op input every step reads as it is.

``backward(op)`` draws the backward step net the way the (v3-era) C++
gradient op runs it: ``rnn_internal_accumulate_gradient_input`` ops put in
front, parameter gradients renamed ``_tmpstep`` and summed by appended Sums,
plus the ``_accum`` Sums ``recurrent_net`` inserted, and the backward links
into ``<state>_grad``.
"""

from contextlib import nullcontext

from ..errors import DrawingError
from ..recurrent_stages import find_scratches
from . import sizing
from .canvas import Canvas
from .netdraw import _draw_minimal as draw_minimal
from .rnn_op import RecurrentOp, alias_label
from .rnn_parts import (
    AUTO_EXPAND_OPS,
    PAGE_ROW,
    draw_step_net,
    expands,
    io_node,
    link_edges,
    state_node,
    tensor_row,
    workspaces_edge,
)
from .ssa import draw_versions

__all__ = ["recurrent", "backward", "AUTO_EXPAND_OPS"]

NESTED = ("auto", "expand", "collapse")


def recurrent(op, rankdir="TB", nested="auto", width=None):
    """A RecurrentNetwork op: step net and backward step net as clusters,
    state tensors, links, aliases, references, inputs and outputs.

    ``nested`` is ``"expand"`` (every op of both step nets), ``"collapse"``
    (each step net as one box listing its ops, with the blobs its links and
    references connect) or ``"auto"`` (collapse a step net of more than
    :data:`AUTO_EXPAND_OPS` ops, a backward step net of more than
    :data:`~caffe2rnn.viz.rnn_parts.AUTO_EXPAND_BACKWARD_OPS`), as Netron
    folds big subgraphs.

    ``width="page"`` (:mod:`~caffe2rnn.viz.sizing`) draws the forward and
    the backward side as two panels, one under the other
    (:func:`~caffe2rnn.viz.recurrent_page.recurrent_page`).
    """
    if nested not in NESTED:
        raise DrawingError("nested=%r: expected auto, expand or collapse" % (nested,))
    if sizing.check(width) == "page":
        from .recurrent_page import recurrent_page

        graph = recurrent_page(op, nested)
        return sizing.with_full_size(graph, lambda: recurrent(op, rankdir, nested))
    rnn = RecurrentOp(op)

    def expand(netdef, backward=False):
        return expands(netdef, nested, backward)

    canvas = Canvas(
        "recurrent_" + rnn.name,
        "%s: step nets, links and aliases" % rnn.called,
        rankdir,
    )
    drawn, params = set(), {rnn.inputs[i] for i in rnn.params}
    inputs = {
        b: io_node(canvas, b, ["external_input"] + (["param"] if b in params else []), drawn)
        for b in rnn.inputs
    }
    tensors = dict(inputs)
    grads = None
    with canvas.cluster("rnn", rnn.called, "rnn") as outer:
        # Two sides, each a borderless box: the state tensors over the step net,
        # their gradients over the backward step net. Each net's link edges then
        # stay on its own side; they leave and enter the tensors at the bottom.
        with canvas.cluster("forward_side", "", "side", outer) as side:
            with (
                canvas.cluster("states", "state tensors, (T+1) rows", "state", side) as box,
                box.subgraph() as row,
            ):
                row.attr(rank="same")
                for state in rnn.states:
                    tensors[state] = state_node(canvas, state, row)
            with canvas.cluster(
                "step", "step net '%s' (one timestep)" % rnn.step_net.name, "step", side
            ) as inner:
                forward = draw_step_net(canvas, inner, rnn, params, expand(rnn.step_net))
        if rnn.backward_step_net is not None:
            with canvas.cluster("backward_side", "", "side", outer) as side:
                with (
                    canvas.cluster("grads", "their gradients", "state", side) as box,
                    box.subgraph() as row,
                ):
                    row.attr(rank="same")
                    for state in rnn.states:
                        tensors[state + "_grad"] = state_node(
                            canvas, state + "_grad", row, gradient=True
                        )
                with canvas.cluster(
                    "backward",
                    "backward step net '%s' (argument)" % rnn.backward_step_net.name,
                    "backward",
                    side,
                ) as inner:
                    grads = draw_step_net(
                        canvas, inner, rnn, params, expand(rnn.backward_step_net, True), True
                    )
    for state in rnn.states:
        canvas.edge(inputs[rnn.initial_state(state)], tensors[state], label="copied to row 0")
    link_edges(canvas, forward, rnn.links, tensors)
    for reference in rnn.references():
        if forward.has(reference, 0):
            canvas.edge(inputs[reference], forward.first(reference), "reference")
    for alias in rnn.aliases:
        output = io_node(canvas, alias.dst, ["external_output"], drawn)
        canvas.edge(tensors[alias.src], output, "alias", alias_label(alias))
    for extra in op.output[len(rnn.aliases) :]:  # step_workspaces: made by the op itself
        workspaces_edge(canvas, tensors[rnn.states[0]] if rnn.states else None,
                        io_node(canvas, extra, ["external_output"], drawn))  # fmt: skip
    if rnn.backward_step_net is not None:
        for link in rnn.backward_links:
            if link.external not in tensors:
                tensors[link.external] = io_node(
                    canvas, link.external, ["external_output", "gradient"], drawn
                )
        link_edges(canvas, grads, rnn.backward_links, tensors, backward=True)
    return canvas.finish()


def backward(op, rankdir="TB", width=None, minimal=False):
    """The backward step net as the gradient op runs it (under the op's era).

    Marked: the prepended ``rnn_internal_accumulate_gradient_input`` ops,
    the ``_accum`` Sums and ``_accum`` blobs, the ``_tmpstep`` renames (with
    the name the argument used), the per-parameter Sums, the scratches read
    from the forward step, the forward links the step reads through and the
    backward links into ``<state>_grad``. ``width="page"`` lays it out for a
    text column: the blobs the step reads in rows, the legend below.

    ``minimal=True`` draws the same net ops only, as :func:`~caffe2rnn.viz.net`'s
    minimal view does (each box lists the blobs its op writes; on a page an edge is
    labelled only where that box lists several, and a deep net folds into columns):
    the ops and their order, without the tensors and links around them. The op
    colours still tell the prepended accumulate op, the cell's gradient ops and the
    appended Sums apart.
    """
    rnn = RecurrentOp(op)
    cpp = rnn.cpp_backward_step_net()
    if minimal:
        return _backward_ops(op, rnn, cpp, rankdir, width)
    net = cpp.net
    scratch = set(find_scratches(rnn.step_net, rnn.backward_step_net))
    params = {rnn.inputs[i] for i in rnn.params}
    renamed = set(cpp.renamed.values())
    first_appended = len(net.op) - cpp.appended
    canvas = Canvas(
        "backward_" + rnn.name,
        "backward step net of %s, as the C++ op runs it (timesteps t = T-1 .. 0)" % rnn.called,
        rankdir,
        width,
    )

    def op_class(index, op):
        if index < cpp.prepended:
            return "accumulate_input"
        if index >= first_appended:
            return "param_sum"
        if op.type == "Sum" and any(i.endswith("_accum") for i in op.input):
            return "accum_sum"
        return ""

    def kinds(name, version):
        if name.endswith("_accum"):
            return ["accum"]
        if name in renamed:
            return ["renamed"]
        return ["scratch"] if name in scratch and version == 0 else []

    with canvas.cluster("backward", "backward step net", "backward") as inner:
        nodes = draw_versions(
            canvas,
            inner,
            net,
            prefix="bwd/",
            params=params,
            extra_kinds=kinds,
            op_class=op_class,
            always_version=False,
            inplace_edges=False,
            fold=PAGE_ROW if canvas.page else None,
        )
        if canvas.page:  # a gate above the net's first row, for the tensors (below)
            canvas.point("tensors", inner)
            for key in nodes.reads[:PAGE_ROW]:
                canvas.invisible("tensors", key, inner)
        for old, new in cpp.renamed.items() if not canvas.page else ():
            # The note sits beside the blob it renames: same cluster, same rank.
            note = ("renamed/", old)
            target = nodes.first(new) if nodes.has(new, 0) else nodes.last(new)
            with inner.subgraph() as pair:
                pair.attr(rank="same")
                canvas.blob(
                    note,
                    "%s\n(name in backward_step_net)" % canvas.wrap(old),
                    ["gradient"],
                    graph=pair,
                )
                canvas.mention(target, pair)
            canvas.edge(note, target, "rename", "C++: rename to _tmpstep", constraint="false")
    tensors = {}
    # At full size the tensors float around the net; on a page they share one
    # row above it (forward states and their gradients).
    row = tensor_row(canvas, "tensors", "state tensors and their gradients", None)
    with row if canvas.page else nullcontext(None) as graph:
        for state in rnn.states:
            tensors[state] = state_node(canvas, state, graph)
            tensors[state + "_grad"] = state_node(canvas, state + "_grad", graph, True)
            if not canvas.page:
                _same_tensor(canvas, nodes, state, tensors)
    drawn = set()
    forward_reads = [l for l in rnn.links if l.external in rnn.states]
    if canvas.page:
        # On a page every link runs down, as in viz.recurrent_page: the rows a
        # step reads in the row above the net, the gradient tensors it writes
        # drawn again under it (with the input gradients), so no link climbs
        # back around the net (round 3 of the cold reads: "spaghetti").
        written = {}
        label = "the same gradient tensors: step t writes row t"
        with tensor_row(canvas, "written", label, None) as graph:
            for state in rnn.states:
                written[state + "_grad"] = state_node(
                    canvas, state + "_grad", graph, True, copy="written"
                )
        for state in rnn.states:
            _same_tensor(canvas, nodes, state, written)
        for link in rnn.backward_links:
            if link.external not in written:
                written[link.external] = io_node(
                    canvas, link.external, ["external_output", "gradient"], drawn
                )
        link_edges(canvas, nodes, rnn.backward_links, tensors, backward=True,
                   written_ids=written)  # fmt: skip
        link_edges(canvas, nodes, forward_reads, tensors, written_ids={})
        # the written tensors and the input gradients under the whole net
        bottom = list(dict.fromkeys(nodes.last(b) for op in net.op[-PAGE_ROW:] for b in op.output))
        canvas.below("written_gate", bottom, list(dict.fromkeys(written.values())))
    else:
        for link in rnn.backward_links:
            if link.external not in tensors:
                tensors[link.external] = io_node(
                    canvas, link.external, ["external_output", "gradient"], drawn
                )
        link_edges(canvas, nodes, rnn.backward_links, tensors, backward=True)
        link_edges(canvas, nodes, forward_reads, tensors)
    if canvas.page:  # the row of tensors above the blobs the net reads first
        for state in rnn.states:
            canvas.invisible(tensors[state], "tensors")
            canvas.invisible(tensors[state + "_grad"], "tensors")
    for gradient, states_grad in cpp.last_row_grads:
        source = io_node(canvas, gradient, ["external_input", "gradient"], drawn)
        canvas.edge(source, tensors[states_grad], "alias", "added to the last row once (C++ loop)")
    if canvas.page and cpp.renamed:  # the renames, said once instead of beside each blob
        canvas.note(
            "Renamed by the C++ op (names in backward_step_net -> as run): "
            + "; ".join("%s -> %s" % pair for pair in cpp.renamed.items())
        )
    graph = canvas.finish()
    if canvas.page:
        sizing.with_full_size(graph, lambda: backward(op, rankdir))
    return graph


def _backward_ops(op, rnn, cpp, rankdir, width):
    """:func:`backward`'s ops-only view (``minimal=True``)."""
    canvas = Canvas(
        "backward_ops_" + rnn.name,
        "backward step net of %s, ops only, as the C++ op runs it (timesteps t = T-1 .. 0)"
        % rnn.called,
        rankdir,
        width,
    )
    draw_minimal(canvas, cpp.net, False, page=canvas.page)
    # An op that writes a gradient tensor reaches the op that reads a link's view of it
    # through the link, not through a blob name: drawn as the link (else the accumulate
    # op stands alone, as if it could run last).
    ops = list(cpp.net.op)
    for link in rnn.backward_links:
        # the first op that touches the link's blob, when it reads it (a gradient the
        # step receives, not one it writes), joined to the prepended op writing the tensor
        touching = [i for i, o in enumerate(ops) if link.internal in (*o.input, *o.output)]
        if not touching or link.internal not in ops[touching[0]].input:
            continue
        j = touching[0]
        for i in [i for i in range(min(cpp.prepended, j)) if link.external in ops[i].output][:1]:
            canvas.edge(
                "op#%d" % i,
                "op#%d" % j,
                "link",
                canvas.wrap("%s views row t%+d" % (link.internal, link.offset)),
            )
    if cpp.renamed:
        canvas.note(
            "Renamed by the C++ op (names in backward_step_net -> as run): "
            + "; ".join("%s -> %s" % pair for pair in cpp.renamed.items())
        )
    graph = canvas.finish()
    if canvas.page:
        sizing.with_full_size(graph, lambda: backward(op, rankdir, minimal=True))
    return graph


def _same_tensor(canvas, nodes, state, tensors):
    """The accumulate op writes ``<state>_grad`` itself: the tensor, in place."""
    if nodes.has(state + "_grad"):
        canvas.edge(
            nodes.last(state + "_grad"),
            tensors[state + "_grad"],
            "inplace",
            "same tensor",
            # on a page the tensor is drawn again under the net: a ranked edge
            # runs down beside the net instead of looping around it
            constraint="true" if canvas.page else "false",
            weight="0",
        )
