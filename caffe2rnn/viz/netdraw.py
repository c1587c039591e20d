"""``net(netdef)``: Caffe2's ``net_drawer`` views, with our palette.

``net_drawer.GetPydotGraph`` drew a *bipartite* graph: op boxes labelled
``"<name>/<Type> (op#<i>)"`` and blob nodes labelled with the blob name. A
read attaches to the blob's current node; every write makes a *new* node
with the same label, so an in-place op ``X -> X`` draws as a chain ``X → op
→ X`` rather than a cycle. ``GetPydotGraphMinimal`` kept only the ops: an
edge from the last producer of each input, and with ``minimal_dependency``
only the parents that are not already ancestors of another parent.

We keep both and add what a learner needs: net inputs/outputs as pills,
parameters blue, gradient blobs orange (dashed). Nets nested in arguments (a
RecurrentNetwork's ``step_net`` and ``backward_step_net``, ``If``/``While``
bodies), which net_drawer never showed, are drawn *expanded* in a box of their
own next to the op that runs them, or *collapsed* to a line in the op's label
("▸ step_net: 12 ops") when they would swamp the picture, as Netron does.
"""

from ..errors import DrawingError
from . import sizing, sources
from .canvas import Canvas
from .style import is_gradient_name

# With nested="auto", nested nets are expanded up to this many ops in all.
AUTO_EXPAND_OPS = 40
NESTED = ("auto", "expand", "collapse")


def net(
    net_like,
    minimal=False,
    minimal_dependency=False,
    params=None,
    append_output=False,
    rankdir=None,
    nested="auto",
    shapes=None,
    width=None,
):
    """Draw a NetDef, ``core.Net``, model helper or list of OperatorDefs.

    ``minimal=True`` draws ops only (edges labelled with the blobs that
    connect them); ``append_output`` lists each op's outputs under its label,
    as net_drawer's option did (always on in the minimal view, where blobs
    are otherwise invisible). ``nested`` says how nets stored in op
    arguments are drawn: ``"expand"`` (each in its own box),
    ``"collapse"`` (a line in the op label) or ``"auto"`` (expanded when
    they hold at most :data:`AUTO_EXPAND_OPS` ops in all). ``shapes`` (a
    workspace after a run, or a dict of arrays) adds each blob's shape and dtype
    to its label and its first values to its tooltip. ``width="page"`` lays it
    out for a text column (:mod:`~caffe2rnn.viz.sizing`); ``rankdir``
    defaults to ``"LR"`` (net_drawer's), top to bottom on a page.
    """
    if nested not in NESTED:
        raise DrawingError("nested=%r: expected one of %s" % (nested, ", ".join(NESTED)))
    netdef = sources.as_netdef(net_like)
    name = netdef.name or "unnamed"
    title = "net '%s'%s" % (name, " (ops only)" if minimal else "")
    direction = rankdir or ("TB" if sizing.check(width) == "page" else "LR")
    canvas = Canvas(("minimal_" if minimal else "net_") + name, title, direction, width)
    if minimal:
        _draw_minimal(canvas, netdef, minimal_dependency)
    else:
        if nested == "auto":
            nested = "expand" if _nested_op_count(netdef) <= AUTO_EXPAND_OPS else "collapse"
        _draw_bipartite(
            canvas,
            netdef,
            sources.param_names(net_like, netdef, params),
            append_output,
            expand=nested == "expand",
            values=sources.blob_values(shapes),
        )
    graph = canvas.finish()
    if canvas.page:
        options = dict(minimal=minimal, minimal_dependency=minimal_dependency, params=params)
        options.update(append_output=append_output, rankdir=rankdir, nested=nested, shapes=shapes)
        sizing.with_full_size(graph, lambda: net(net_like, **options))
    return graph


def _nested_op_count(netdef):
    return sum(
        len(inner.op) + _nested_op_count(inner)
        for op in netdef.op
        for _, inner in sources.nested_nets(op)
    )


def _label(canvas, op, index, with_outputs):
    label = canvas.op_label(op, index)
    if with_outputs:
        label += "".join("\n" + canvas.wrap(o) for o in op.output)
    return label


def _draw_bipartite(
    canvas, netdef, params, append_output, expand, prefix=(), graph=None, values=None
):
    """Ops and blob nodes of ``netdef``; keys start with ``prefix`` (nested nets)."""
    external_in, external_out = set(netdef.external_input), set(netdef.external_output)
    written_last = {}
    for index, op in enumerate(netdef.op):
        for output in op.output:
            written_last[output] = index
    current, count = {}, {}

    def blob(name, kinds):
        node_id = prefix + (name, "#%d" % count.get(name, 0))
        if name in params:
            kinds.append("param")
        if is_gradient_name(name):
            kinds.append("gradient")
        label, tooltip = canvas.wrap(name), None
        value = values(name) if values and not prefix else None
        if sources.shape_text(value):
            label += "\n" + sources.shape_text(value)
            tooltip = "%s = %s" % (name, sources.value_text(value))
        canvas.blob(node_id, label, kinds, graph=graph, tooltip=tooltip)
        current[name] = node_id
        return node_id

    for index, op in enumerate(netdef.op):
        op_id = prefix + ("op#%d" % index,)
        inner = sources.nested_nets(op)
        label = _label(canvas, op, index, append_output)
        if inner and not expand:
            label += "".join("\n\u25b8 %s: %d ops" % (n, len(d.op)) for n, d in inner)
        canvas.op(
            op_id, label, op, graph=graph, extra_class="collapsed" if inner and not expand else ""
        )
        for name in op.input:
            if name not in current:
                blob(name, ["external_input" if name in external_in else "blob"])
            canvas.edge(current[name], op_id, graph=graph)
        if expand:
            _draw_nested(canvas, op_id, inner, params, append_output, graph)
        for name in op.output:
            if name in current:
                count[name] = count.get(name, 0) + 1  # an overwrite: a new node
            kinds = ["blob"]
            if name in external_out and written_last[name] == index:
                kinds.append("external_output")
            canvas.edge(op_id, blob(name, kinds), graph=graph)


def _draw_nested(canvas, op_id, inner, params, append_output, parent):
    """Each nested net in a box beside ``op_id``, a dotted edge into the box."""
    for argument, netdef in inner:
        box = "".join(op_id) + "/" + argument
        kind = "backward" if argument.startswith("backward") else "step"
        title = "%s of %s: %d ops" % (argument, op_id[-1], len(netdef.op))
        prefix = op_id + ("/%s/" % argument,)
        with canvas.cluster(box, title, kind, parent=parent) as sub:
            _draw_bipartite(canvas, netdef, params, append_output, True, prefix=prefix, graph=sub)
        canvas.graph.attr(compound="true")
        lhead = canvas.cluster_id(box)
        canvas.edge(op_id, prefix + ("op#0",), "reference", argument, lhead=lhead)


def _draw_minimal(canvas, netdef, minimal_dependency):
    producer, ancestors = {}, {}
    for index, op in enumerate(netdef.op):
        op_id = "op#%d" % index
        canvas.op(op_id, _label(canvas, op, index, True), op)
        via = {}
        for name in op.input:
            if name in producer:
                via.setdefault(producer[name], []).append(name)
        parents = set(via)
        ancestors[index] = set(parents)
        for parent in parents:
            ancestors[index] |= ancestors[parent]
        if minimal_dependency:
            parents = {
                p
                for p in parents
                if not any(p in ancestors[other] for other in parents if other != p)
            }
        for parent in sorted(parents):
            names = ", ".join(dict.fromkeys(via[parent]))
            canvas.edge("op#%d" % parent, op_id, label=canvas.wrap(names))
        for name in op.output:
            producer[name] = index
