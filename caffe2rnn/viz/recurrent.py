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

from .. import core
from ..errors import DrawingError
from ..recurrent_stages import find_scratches
from .rnn_op import RecurrentOp, alias_label, link_label
from .ssa import VersionNodes, draw_versions
from .style import Canvas, wrap


def _state_node(canvas, state, graph, gradient=False):
    kinds = ["state", "gradient"] if gradient else ["state"]
    node_id = "state/" + state
    canvas.blob(node_id, "%s\n(T+1) rows" % wrap(state), kinds, graph=graph)
    return node_id


def _io_node(canvas, blob, kinds, drawn):
    node_id = "io/" + blob
    if node_id not in drawn:
        drawn.add(node_id)
        canvas.blob(node_id, wrap(blob), kinds)
    return node_id


def _link_edges(canvas, nodes, links, tensor_ids, backward=False, graph=None):
    """One labelled edge per link, pointing the way the data flows.

    A write into a tensor closes a cycle (tensor -> step net -> tensor); it
    does not constrain the layout, so tensors sit above the nets that read
    them and each net flows top to bottom.
    """
    for link in links:
        tensor = tensor_ids.get(link.external)
        if tensor is None:
            continue
        label = link_label(link, backward)
        # A blob the net reads before writing gets its value through the link
        # (a later in-place write, e.g. an _accum Sum, lands in the same rows).
        if nodes.has(link.internal, 0):
            canvas.edge(
                tensor, nodes.first(link.internal), "link", label, graph=graph, tail_port="s"
            )
        elif nodes.final.get(link.internal, 0) > 0:
            canvas.edge(
                nodes.last(link.internal),
                tensor,
                "link",
                label,
                graph=graph,
                head_port="s",
                constraint="false",
            )


# With nested="auto", a step net with more ops than this is drawn collapsed.
AUTO_EXPAND_OPS = 12


def _draw_net(canvas, graph, netdef, prefix, params, expand, linked=(), op_inputs=()):
    """A step net expanded (every op and blob version) or collapsed: one box
    listing its ops (``▸ 15 ops: Concat, FC, ...``) with only the blobs that
    connect it to the op around it: the ``linked`` ones, the ``op_inputs`` it
    reads (references) and its external outputs. Other blobs it reads (from
    the step workspace) are listed in the box."""
    if expand:
        return draw_versions(
            canvas,
            graph,
            netdef,
            prefix=prefix,
            params=params,
            always_version=False,
            inplace_edges=False,
        )
    ssa, versions = core.get_ssa(netdef)
    nodes = VersionNodes(prefix, versions)
    all_reads = list(dict.fromkeys(n for ins, _ in ssa for n, v in ins if v == 0))
    reads = [n for n in all_reads if n in set(linked) | set(op_inputs)]
    kept = set(linked) | set(netdef.external_output)
    written = [n for n in dict.fromkeys(n for _, outs in ssa for n, _ in outs) if n in kept]
    summary = prefix + "ops"
    types = list(dict.fromkeys(o.type for o in netdef.op))
    lines = [", ".join(types[i : i + 4]) for i in range(0, len(types), 4)]
    other = [n for n in all_reads if n not in reads]
    if other:
        lines.append("also reads: %d blobs of the step workspace" % len(other))
    label = "\u25b8 %d ops (collapsed; nested='expand' shows them)\n%s" % (
        len(netdef.op),
        "\n".join(lines),
    )
    canvas.op(summary, label, netdef.op[0], graph=graph, extra_class="collapsed")
    for name in reads:
        kinds = ["external_input", "param" if name in params else "blob"]
        canvas.blob(nodes.id(name, 0), wrap(name), kinds, graph=graph)
        nodes.drawn.add((name, 0))
        canvas.edge(nodes.id(name, 0), summary, graph=graph)
    for name in written:
        final = versions[name]
        kinds = ["gradient"] if "_grad" in name else ["blob"]
        canvas.blob(nodes.id(name, final), wrap(name), kinds, graph=graph)
        nodes.drawn.add((name, final))
        canvas.edge(summary, nodes.id(name, final), graph=graph)
    return nodes


def recurrent(op, rankdir="TB", nested="auto"):
    """A RecurrentNetwork op: step net and backward step net as clusters,
    state tensors, links, aliases, references, inputs and outputs.

    ``nested`` is ``"expand"`` (every op of both step nets), ``"collapse"``
    (each step net as one box listing its ops, with the blobs its links and
    references connect) or ``"auto"`` (collapse a net of more than
    :data:`AUTO_EXPAND_OPS` ops), as Netron folds big subgraphs.
    """
    if nested not in ("auto", "expand", "collapse"):
        raise DrawingError("nested=%r: expected auto, expand or collapse" % (nested,))
    rnn = RecurrentOp(op)

    def expand(netdef):
        return nested == "expand" or (nested == "auto" and len(netdef.op) <= AUTO_EXPAND_OPS)

    canvas = Canvas(
        "recurrent_" + rnn.name,
        "%s '%s': step nets, links and aliases" % (op.type, rnn.name),
        rankdir,
    )
    drawn, params = set(), {rnn.inputs[i] for i in rnn.params}
    inputs = {
        b: _io_node(canvas, b, ["external_input"] + (["param"] if b in params else []), drawn)
        for b in rnn.inputs
    }
    tensors = dict(inputs)
    grads = None
    with canvas.cluster("rnn", "%s '%s'" % (op.type, rnn.name), "rnn") as outer:
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
                    tensors[state] = _state_node(canvas, state, row)
            with canvas.cluster(
                "step", "step net '%s' (one timestep)" % rnn.step_net.name, "step", side
            ) as inner:
                forward = _draw_net(
                    canvas,
                    inner,
                    rnn.step_net,
                    "fwd/",
                    params,
                    expand(rnn.step_net),
                    [l.internal for l in rnn.links],
                    rnn.inputs,
                )
        if rnn.backward_step_net is not None:
            with canvas.cluster("backward_side", "", "side", outer) as side:
                with (
                    canvas.cluster("grads", "their gradients", "state", side) as box,
                    box.subgraph() as row,
                ):
                    row.attr(rank="same")
                    for state in rnn.states:
                        tensors[state + "_grad"] = _state_node(
                            canvas, state + "_grad", row, gradient=True
                        )
                with canvas.cluster(
                    "backward",
                    "backward step net '%s' (argument)" % rnn.backward_step_net.name,
                    "backward",
                    side,
                ) as inner:
                    grads = _draw_net(
                        canvas,
                        inner,
                        rnn.backward_step_net,
                        "bwd/",
                        params,
                        expand(rnn.backward_step_net),
                        [l.internal for l in rnn.backward_links],
                        rnn.inputs,
                    )
    for state in rnn.states:
        canvas.edge(inputs[rnn.initial_state(state)], tensors[state], label="copied to row 0")
    _link_edges(canvas, forward, rnn.links, tensors)
    for reference in rnn.references():
        if forward.has(reference, 0):
            canvas.edge(inputs[reference], forward.first(reference), "reference")
    for alias in rnn.aliases:
        output = _io_node(canvas, alias.dst, ["external_output"], drawn)
        canvas.edge(tensors[alias.src], output, "alias", alias_label(alias))
    for extra in op.output[len(rnn.aliases) :]:
        _io_node(canvas, extra, ["external_output"], drawn)
    if rnn.backward_step_net is not None:
        for link in rnn.backward_links:
            if link.external not in tensors:
                tensors[link.external] = _io_node(
                    canvas, link.external, ["external_output", "gradient"], drawn
                )
        _link_edges(canvas, grads, rnn.backward_links, tensors, backward=True)
    return canvas.finish()


def backward(op, rankdir="TB"):
    """The backward step net as the gradient op runs it (under the op's era).

    Marked: the prepended ``rnn_internal_accumulate_gradient_input`` ops,
    the ``_accum`` Sums and ``_accum`` blobs, the ``_tmpstep`` renames (with
    the name the argument used), the per-parameter Sums, the scratches read
    from the forward step, the forward links the step reads through and the
    backward links into ``<state>_grad``.
    """
    rnn = RecurrentOp(op)
    cpp = rnn.cpp_backward_step_net()
    net = cpp.net
    scratch = set(find_scratches(rnn.step_net, rnn.backward_step_net))
    params = {rnn.inputs[i] for i in rnn.params}
    renamed = set(cpp.renamed.values())
    first_appended = len(net.op) - cpp.appended
    canvas = Canvas(
        "backward_" + rnn.name,
        "backward step net of '%s', as the C++ op runs it (step t = T-1 .. 0)" % rnn.name,
        rankdir,
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
        )
        for old, new in cpp.renamed.items():
            # The note sits beside the blob it renames: same cluster, same rank.
            note = "renamed/" + old
            target = nodes.first(new) if nodes.has(new, 0) else nodes.last(new)
            with inner.subgraph() as pair:
                pair.attr(rank="same")
                canvas.blob(
                    note, "%s\n(name in backward_step_net)" % wrap(old), ["gradient"], graph=pair
                )
                pair.node(target)
            canvas.edge(note, target, "rename", "C++: rename to _tmpstep", constraint="false")
    tensors = {}
    for state in rnn.states:
        tensors[state] = _state_node(canvas, state, None)
        tensors[state + "_grad"] = _state_node(canvas, state + "_grad", None, True)
        if nodes.has(state + "_grad"):
            canvas.edge(
                nodes.last(state + "_grad"),
                tensors[state + "_grad"],
                "inplace",
                "same tensor",
                constraint="false",
            )
    drawn = set()
    for link in rnn.backward_links:
        if link.external not in tensors:
            tensors[link.external] = _io_node(
                canvas, link.external, ["external_output", "gradient"], drawn
            )
    _link_edges(canvas, nodes, rnn.backward_links, tensors, backward=True)
    forward_reads = [l for l in rnn.links if l.external in rnn.states]
    _link_edges(canvas, nodes, forward_reads, tensors)
    for gradient, states_grad in cpp.last_row_grads:
        source = _io_node(canvas, gradient, ["external_input", "gradient"], drawn)
        canvas.edge(source, tensors[states_grad], "alias", "added to the last row once (C++ loop)")
    return canvas.finish()
