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
from .style import is_gradient_name, wrap_name

# With nested="auto", nested nets are expanded up to this many ops in all.
AUTO_EXPAND_OPS = 40

#: On a page, a minimal view deeper than this many ops is folded into columns.
PAGE_RANKS = 7
#: On a page, a minimal view's op boxes wrap names at this many characters
#: (an op box is alone in its row more often than a blob is).
PAGE_OP_WRAP = 26
#: Ops whose outputs after the first only record a shape (Concat's split_info,
#: Reshape's old_shape): a page's minimal view lists just the first.
SHAPE_RECORD_OPS = ("Concat", "Reshape")
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

    On a page the minimal view is cut to what a reader follows
    (:func:`_page_minimal`): an edge is labelled only where the box it leaves
    lists more than one blob (else its blob is the one name in that box),
    ``Concat``'s and ``Reshape``'s second output (the shape they record) is
    not listed, and a net more than :data:`PAGE_RANKS` ops deep is folded
    into columns, read top to bottom and then the next column. The legend
    says so; ``graph.full_size()`` draws every label.
    """
    if nested not in NESTED:
        raise DrawingError("nested=%r: expected one of %s" % (nested, ", ".join(NESTED)))
    netdef = sources.as_netdef(net_like)
    name = netdef.name or "unnamed"
    title = "net '%s'%s" % (name, " (ops only)" if minimal else "")
    direction = rankdir or ("TB" if sizing.check(width) == "page" else "LR")
    canvas = Canvas(("minimal_" if minimal else "net_") + name, title, direction, width)
    if minimal:
        _draw_minimal(canvas, netdef, minimal_dependency, page=canvas.page)
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


def _draw_minimal(canvas, netdef, minimal_dependency, page=False):
    producer, ancestors, listed, edges = {}, {}, {}, []
    for index, op in enumerate(netdef.op):
        op_id = "op#%d" % index
        outputs = list(op.output)
        if page:
            if op.type in SHAPE_RECORD_OPS and len(outputs) > 1:
                outputs = outputs[:1]
                canvas.note(
                    "Concat's and Reshape's second output (the shape they record) is not listed."
                )
            label = canvas.op_label(op, index) + "".join(
                "\n" + wrap_name(o, PAGE_OP_WRAP, PAGE_OP_WRAP) for o in outputs
            )
        else:
            label = _label(canvas, op, index, True)
        listed[index] = outputs
        canvas.op(op_id, label, op)
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
            names = list(dict.fromkeys(via[parent]))
            edges.append((parent, index, names))
        for name in op.output:
            producer[name] = index
    if page:
        _page_minimal(canvas, len(netdef.op), edges, listed)
        return
    for parent, index, names in edges:
        canvas.edge("op#%d" % parent, "op#%d" % index, label=canvas.wrap(", ".join(names)))


def _page_minimal(canvas, count, edges, listed):
    """The minimal view's edges on a page, and its columns when it is deep.

    An edge's label is left out when the box it leaves lists just the blob it
    carries. Each op gets a rank (longest path from the net's start; an op
    that reads nothing drawn sits just above its first reader); a net more
    than :data:`PAGE_RANKS` ranks deep is cut into columns of equal depth,
    each rank of a column level with the same rank of the others, and an
    edge from one column into the next does not stretch the column."""
    rank = [0] * count
    for parent, index, _ in sorted(edges, key=lambda e: e[1]):
        rank[index] = max(rank[index], rank[parent] + 1)
    readers = {}
    for parent, index, _ in edges:
        readers.setdefault(parent, []).append(index)
    has_parent = {index for _, index, _ in edges}
    for index in range(count):
        if index not in has_parent and index in readers:
            rank[index] = max(rank[index], min(rank[r] for r in readers[index]) - 1)
    depth = max(rank, default=0) + 1
    columns = -(-depth // PAGE_RANKS)
    per_column = -(-depth // columns)
    column = [r // per_column for r in rank]
    row = [r % per_column for r in rank]
    dropped = False
    for parent, index, names in edges:
        label = None
        if len(listed[parent]) > 1 or any(n not in listed[parent] for n in names):
            label = canvas.wrap(", ".join(names))
        else:
            dropped = True
        if column[parent] == column[index]:
            canvas.edge("op#%d" % parent, "op#%d" % index, label=label)
        else:
            # up into the next column: drawn head to tail, arrow turned back, so
            # dot routes it down the gap between the columns like any long edge
            canvas.edge(
                "op#%d" % index, "op#%d" % parent, label=label, dir="back", weight="0",
                tail_port="w", head_port="e",
            )  # fmt: skip
    if dropped:
        canvas.note(
            "An unlabelled edge carries the blob named in the box it leaves; an edge is "
            "labelled where that box names more than one."
        )
    if columns == 1:
        return
    canvas.note(
        "%d ops deep: drawn in %d columns, each read top to bottom, then the next."
        % (depth, columns)
    )
    # an invisible spine per column keeps its rows in order; each row of the
    # figure holds the same row of every column, the columns left to right
    spines = []
    for c in range(columns):
        keys = [("page/spine/", "%d/%d" % (c, r)) for r in range(per_column)]
        for key in keys:
            canvas.point(key)
        canvas.chain(keys, weight="10")
        spines.append(keys)
    for r in range(per_column):
        in_row = [i for i in range(count) if row[i] == r]
        with canvas.graph.subgraph() as same:
            same.attr(rank="same")
            for c in range(columns):
                canvas.mention(spines[c][r], same)
            for index in in_row:
                canvas.mention("op#%d" % index, same)
        for left, right in zip(spines, spines[1:]):
            canvas.invisible(left[r], right[r])
        for index in in_row:
            canvas.invisible(spines[column[index]][r], "op#%d" % index)
            if column[index] + 1 < columns:
                canvas.invisible("op#%d" % index, spines[column[index] + 1][r])
