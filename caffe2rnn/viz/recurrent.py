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

from ..recurrent_stages import find_scratches
from .rnn_op import RecurrentOp, alias_label, link_label
from .ssa import draw_versions
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
            canvas.edge(tensor, nodes.first(link.internal), "link", label, graph=graph)
        elif nodes.final.get(link.internal, 0) > 0:
            canvas.edge(
                nodes.last(link.internal), tensor, "link", label, graph=graph, constraint="false"
            )


def recurrent(op, rankdir="TB"):
    """A RecurrentNetwork op: step net and backward step net as clusters,
    state tensors, links, aliases, references, inputs and outputs."""
    rnn = RecurrentOp(op)
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
    with (
        canvas.cluster("rnn", "%s '%s'" % (op.type, rnn.name), "rnn") as outer,
        outer.subgraph(name="tensors") as row,
    ):
        row.attr(rank="same")  # all state tensors on one row, above the nets
        for state in rnn.states:
            tensors[state] = _state_node(canvas, state, row)
            canvas.edge(inputs[rnn.initial_state(state)], tensors[state], label="copied to row 0")
            if rnn.backward_step_net is not None:
                tensors[state + "_grad"] = _state_node(canvas, state + "_grad", row, gradient=True)
        with canvas.cluster(
            "step", "step net '%s' (one timestep)" % rnn.step_net.name, "step", outer
        ) as inner:
            forward = draw_versions(
                canvas,
                inner,
                rnn.step_net,
                prefix="fwd/",
                params=params,
                always_version=False,
                inplace_edges=False,
            )
        if rnn.backward_step_net is not None:
            with canvas.cluster(
                "backward",
                "backward step net '%s' (argument)" % rnn.backward_step_net.name,
                "backward",
                outer,
            ) as inner:
                grads = draw_versions(
                    canvas,
                    inner,
                    rnn.backward_step_net,
                    prefix="bwd/",
                    params=params,
                    always_version=False,
                    inplace_edges=False,
                )
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
    for old, new in cpp.renamed.items():
        note = "renamed/" + old
        canvas.blob(note, "%s\n(name in backward_step_net)" % wrap(old), ["gradient"])
        canvas.edge(
            note,
            nodes.first(new) if nodes.has(new, 0) else nodes.last(new),
            "rename",
            "C++: rename to _tmpstep",
        )
    for gradient, states_grad in cpp.last_row_grads:
        source = _io_node(canvas, gradient, ["external_input", "gradient"], drawn)
        canvas.edge(source, tensors[states_grad], "alias", "added to the last row once (C++ loop)")
    return canvas.finish()
