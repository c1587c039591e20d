"""``recurrent(op, width="page")``: a RecurrentNetwork op in two panels, for a text column.

At full size :func:`~caffe2rnn.viz.recurrent.recurrent` draws one box with
two sides next to each other: the forward side (state tensors over the step
net) and the backward side (their gradients over the backward step net). On a
page that is twice too wide, and it says two things at once. So the page
layout draws two panels, one under the other, each read top to bottom:

1. **forward** — the op's inputs (the sequence and the initial states; the
   references, which every step reads as they are, are drawn only where the
   step nets read them: the legend says so), then the op: the state tensors
   whose row t the step reads, the step net, and under it the same tensors
   again, whose row t+1 it writes; under the op its outputs, each an alias
   of a state tensor;
2. **backward** — the gradient tensors whose row t+1 the backward step net
   reads, the net the gradient op runs for t = T-1..0, the same tensors again
   (row t written) and under them the input gradients it fills.

Each tensor is drawn twice, above the net (what a step reads) and below it
(what it writes), the way a timeline draws time: so every link runs down the
page, none loops back around the net. No edge crosses from one panel to the
other: the backward step net reads the forward blobs of step t in step
workspace t (drawn as its inputs), not through edges.
"""

from . import rnn_parts as parts
from .canvas import Canvas
from .rnn_op import RecurrentOp, alias_label


def recurrent_page(op, nested="auto"):
    """The page layout of :func:`~caffe2rnn.viz.recurrent.recurrent` (its
    arguments checked there)."""
    rnn = RecurrentOp(op)
    canvas = Canvas(
        "recurrent_" + rnn.name,
        "%s: step nets, links and aliases" % rnn.called,
        "TB",
        "page",
    )
    params = {rnn.inputs[i] for i in rnn.params}

    # newrank: rank across the clusters, so a row of tensors drawn above a net
    # really sits above it (dot's older ranking puts it beside the net)
    with canvas.part("forward") as part:
        part.attr(newrank="true")
        _forward_panel(canvas, rnn, params, parts.expands(rnn.step_net, nested))
    if rnn.backward_step_net is not None:
        with canvas.part("backward") as part:
            part.attr(newrank="true")
            _backward_panel(canvas, rnn, params, parts.expands(rnn.backward_step_net, nested, True))
    return canvas.finish()


def _forward_panel(canvas, rnn, params, expand):
    """The op's inputs, its step net, the state tensors under it, its outputs."""
    drawn, references = set(), set(rnn.references())
    inputs = {
        b: parts.io_node(canvas, b, ["external_input"] + (["param"] if b in params else []), drawn)
        for b in rnn.inputs
        if b not in references
    }
    tensors, written = dict(inputs), {}
    title = "%s: the forward pass (argument step_net)" % rnn.called
    with canvas.cluster("rnn", title, "rnn") as outer:
        label = "state tensors, (T+1) rows: step t reads row t"
        with parts.tensor_row(canvas, "states_read", label, outer) as row:
            for state in rnn.states:
                initial = "row 0 = %s" % rnn.initial_state(state)
                tensors[state] = parts.state_node(canvas, state, row, note=initial)
        with canvas.cluster(
            "step", "step net '%s' (one timestep)" % rnn.step_net.name, "step", outer
        ) as inner:
            forward = parts.draw_step_net(canvas, inner, rnn, params, expand)
        label = "the same tensors: step t writes row t+1"
        with parts.tensor_row(canvas, "states", label, outer) as row:
            for state in rnn.states:
                written[state] = parts.state_node(canvas, state, row, copy="written")
    # On a page the labels of long edges would widen the figure: what such an
    # edge says goes into the node it ends on ("row 0 = h0", "= alias +1 ...").
    for state in rnn.states:
        canvas.edge(inputs[rnn.initial_state(state)], tensors[state], tooltip="copied to row 0")
    parts.link_edges(canvas, forward, rnn.links, tensors, written_ids=written)
    if references:
        canvas.note(
            "The op's other inputs, which every step reads as they are (parameters, "
            "seq_lengths...: the references), are drawn once, in the step nets that read them."
        )
    outputs = []
    for alias in rnn.aliases:
        label = alias_label(alias)
        outputs.append(parts.io_node(canvas, alias.dst, ["external_output"], drawn, "= " + label))
        canvas.edge(written[alias.src], outputs[-1], "alias", tooltip=label)
    for extra in rnn.op.output[len(rnn.aliases) :]:  # step_workspaces: made by the op itself
        outputs.append(parts.io_node(canvas, extra, ["external_output"], drawn))
        parts.workspaces_edge(canvas, written[rnn.states[0]] if rnn.states else None,
                              outputs[-1])  # fmt: skip
    inputs = list(dict.fromkeys(inputs.values()))
    _block(canvas, "inputs", inputs)
    _block(canvas, "outputs", list(dict.fromkeys(outputs)))
    states = [tensors[state] for state in rnn.states]
    canvas.below("inputs", inputs, states)  # the inputs above the op
    canvas.below("states_read_gate", states, forward.reads[: parts.PAGE_ROW])


def _backward_panel(canvas, rnn, params, expand):
    """The backward step net, the gradient tensors under it, the input gradients."""
    tensors, written, drawn = {}, {}, set()
    title = "its backward pass (argument backward_step_net, run for t = T-1 .. 0)"
    with canvas.cluster("rnn_backward", title, "rnn") as outer:
        label = "their gradients: step t reads row t+1"
        with parts.tensor_row(canvas, "grads_read", label, outer) as row:
            for state in rnn.states:
                tensors[state + "_grad"] = parts.state_node(canvas, state + "_grad", row, True)
        with canvas.cluster(
            "backward",
            "backward step net '%s'" % rnn.backward_step_net.name,
            "backward",
            outer,
        ) as inner:
            grads = parts.draw_step_net(canvas, inner, rnn, params, expand, backward=True)
        with parts.tensor_row(
            canvas, "grads", "the same tensors: step t writes row t", outer
        ) as row:
            for state in rnn.states:
                written[state + "_grad"] = parts.state_node(
                    canvas, state + "_grad", row, True, copy="written"
                )
    gradients = []
    for link in rnn.backward_links:
        if link.external not in written:
            written[link.external] = parts.io_node(
                canvas, link.external, ["external_output", "gradient"], drawn
            )
            gradients.append(written[link.external])
    parts.link_edges(canvas, grads, rnn.backward_links, tensors, backward=True,
                     written_ids=written)  # fmt: skip
    # the tensors read above the whole net, not beside the blobs their links reach
    canvas.below("grads_read_gate", list(tensors.values()), grads.reads[: parts.PAGE_ROW])
    if gradients:  # the input gradients under the gradient tensors
        _block(canvas, "input gradients", gradients)
        states = [written[state + "_grad"] for state in rnn.states]
        canvas.below("gradients", states, gradients[: parts.PAGE_ROW])


def _block(canvas, name, keys):
    """``keys`` (the op's inputs, its outputs) in rows, in a borderless box."""
    if not keys:
        return
    canvas.fold(keys, parts.PAGE_ROW)
    with canvas.cluster(name, "", "side") as box:
        for key in keys:
            canvas.mention(key, box)
