"""The pieces the RecurrentNetwork views share: tensors, the op's inputs and
outputs, link edges, and a step net drawn expanded or collapsed.

Used by :func:`~caffe2rnn.viz.recurrent.recurrent` (full size and page) and
:func:`~caffe2rnn.viz.recurrent.backward`.
"""

from .. import core
from .rnn_op import link_label, row_label
from .ssa import VersionNodes, draw_versions

#: On a page, blobs a net reads and the op's inputs and outputs go in rows of this many.
PAGE_ROW = 3


def state_node(canvas, state, graph, gradient=False, note="", copy=""):
    """A (T+1)-row tensor as a cylinder; ``note`` a last line of its label;
    ``copy`` names a second drawing of the same tensor (its key gets ``#copy``)."""
    kinds = ["state", "gradient"] if gradient else ["state"]
    node_id = ("state/", state) + (("#" + copy,) if copy else ())
    label = "%s\n(T+1) rows" % canvas.wrap(state) + ("\n" + note if note else "")
    canvas.blob(node_id, label, kinds, graph=graph)
    return node_id


def io_node(canvas, blob, kinds, drawn, note=""):
    """An input or output of the op (once); ``note`` a last line of its label."""
    node_id = ("io/", blob)
    if node_id not in drawn:
        drawn.add(node_id)
        canvas.blob(node_id, canvas.wrap(blob) + ("\n" + note if note else ""), kinds)
    return node_id


def workspaces_edge(canvas, inside, output, cluster="rnn"):
    """The op's own output (``step_workspaces``) hangs off the op's box: a dotted edge
    from the box's border (``ltail``; ``inside`` is a node in it) to ``output``."""
    if inside is None:
        return
    canvas.graph.attr(compound="true")
    canvas.edge(inside, output, "workspaces", ltail=canvas.cluster_id(cluster))


def link_edges(
    canvas, nodes, links, tensor_ids, backward=False, graph=None, below=False, written_ids=None
):
    """One labelled edge per link, pointing the way the data flows.

    A write into a tensor closes a cycle (tensor -> step net -> tensor); only
    one direction may rank the layout. At full size the tensors sit above the
    nets that read them (reads rank, writes do not); with ``below`` the
    tensors sit below the net (writes rank, reads do not). Either way the
    edges meet the tensors on the side facing the net.

    With ``written_ids`` each tensor is drawn twice, as a timeline is: the
    rows a step reads above the net (``tensor_ids``), the rows it writes below
    it (``written_ids``). Then every link runs down the page and none has to
    climb back around the net.
    """
    if written_ids is not None:
        _links_down(canvas, nodes, links, tensor_ids, written_ids, backward, graph)
        return
    port = "n" if below else "s"
    for link in links:
        tensor = tensor_ids.get(link.external)
        if tensor is None:
            continue
        label = row_label(link) if canvas.page else link_label(link, backward)
        # A blob the net reads before writing gets its value through the link
        # (a later in-place write, e.g. an _accum Sum, lands in the same rows).
        if nodes.has(link.internal, 0):
            canvas.edge(
                tensor,
                nodes.first(link.internal),
                "link",
                label,
                graph=graph,
                tail_port=port,
                **({"constraint": "false", "weight": "0"} if below else {}),
            )
        elif nodes.final.get(link.internal, 0) > 0:
            canvas.edge(
                nodes.last(link.internal),
                tensor,
                "link",
                label,
                graph=graph,
                head_port=port,
                **({} if below else {"constraint": "false"}),
            )


def _links_down(canvas, nodes, links, read_ids, written_ids, backward, graph):
    """The links of a net between two drawings of its tensors: reads from above, writes below."""
    for link in links:
        label = row_label(link) if canvas.page else link_label(link, backward)
        if nodes.has(link.internal, 0) and link.external in read_ids:
            canvas.edge(read_ids[link.external], nodes.first(link.internal), "link", label,
                        graph=graph, tail_port="s")  # fmt: skip
        elif nodes.final.get(link.internal, 0) > 0 and link.external in written_ids:
            canvas.edge(nodes.last(link.internal), written_ids[link.external], "link", label,
                        graph=graph, head_port="n")  # fmt: skip


#: With nested="auto", a step net with more ops than this is drawn collapsed
#: (an attention decoder's 14 to 16 ops are drawn, op by op) ...
AUTO_EXPAND_OPS = 16
#: ... and a backward step net with more than this (attention's is 18 ops,
#: 35 as the C++ op runs it: ``viz.backward`` draws it on its own).
AUTO_EXPAND_BACKWARD_OPS = 12


def expands(netdef, nested, backward=False):
    """Whether ``nested`` ("expand", "collapse" or "auto") draws ``netdef`` op by op."""
    limit = AUTO_EXPAND_BACKWARD_OPS if backward else AUTO_EXPAND_OPS
    return nested == "expand" or (nested == "auto" and len(netdef.op) <= limit)


def _listed(names, width=34):
    """Names separated by commas, broken into lines of about ``width`` characters."""
    lines, line = [], ""
    for name in names:
        piece = name + ","
        if line and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line = (line + " " + piece).strip()
    lines.append(line)
    return "\n".join(lines).rstrip(",")


def draw_step_net(canvas, graph, rnn, params, expand, backward=False):
    """The op's step net (``backward``: its backward step net) in ``graph``,
    expanded or collapsed (:func:`draw_net`), with the blobs its links connect."""
    if backward:
        links, netdef, prefix = rnn.backward_links, rnn.backward_step_net, "bwd/"
    else:
        links, netdef, prefix = rnn.links, rnn.step_net, "fwd/"
    linked = [l.internal for l in links]
    return draw_net(canvas, graph, netdef, prefix, params, expand, linked, rnn.inputs)


def draw_net(canvas, graph, netdef, prefix, params, expand, linked=(), op_inputs=(), terse=False):
    """A step net expanded (every op and blob version) or collapsed: one box
    listing its ops (``▸ 15 ops: Concat, FC, ...``) with only the blobs that
    connect it to the op around it: the ``linked`` ones, the ``op_inputs`` it
    reads (references) and its external outputs. Other blobs it reads (from
    the step workspace) are listed in the box. On a page the blobs it reads
    go in rows of :data:`PAGE_ROW`. ``terse``: the box names only the op
    types (a view drawing the net many times says the rest once, in a note)."""
    fold = PAGE_ROW if canvas.page else None
    if expand:
        return draw_versions(
            canvas,
            graph,
            netdef,
            prefix=prefix,
            params=params,
            always_version=False,
            inplace_edges=False,
            fold=fold,
            # on a page the linked blobs lead, on the net's top row: their links
            # come straight down from the tensors above
            lead=linked if canvas.page else (),
        )
    ssa, versions = core.get_ssa(netdef)
    nodes = VersionNodes(prefix, versions)
    all_reads = list(dict.fromkeys(n for ins, _ in ssa for n, v in ins if v == 0))
    reads = [n for n in all_reads if n in set(linked) | set(op_inputs)]
    kept = set(linked) | set(netdef.external_output)
    written = [n for n in dict.fromkeys(n for _, outs in ssa for n, _ in outs) if n in kept]
    summary = (prefix, "ops")
    types = list(dict.fromkeys(o.type for o in netdef.op))
    per_line = 3 if canvas.page else 4
    lines = [", ".join(types[i : i + per_line]) for i in range(0, len(types), per_line)]
    other = [n for n in all_reads if n not in reads]
    if terse:
        reads = [n for n in reads if n in set(linked)]
        lines, other = ["step net: " + lines[0]] + lines[1:], []
    elif canvas.page:  # the references in the box: one node each would fill a page
        references = [n for n in reads if n not in set(linked)]
        reads = [n for n in reads if n in set(linked)]
        if references:
            lines.append("reads the op's inputs " + _listed([p for p in references if p in params]))
            lines[-1] = lines[-1].replace("inputs ", "inputs\n", 1)
            rest = [n for n in references if n not in params]
            if rest:
                lines.append("and " + _listed(rest))
    if other:
        lines.append("also reads: %d blobs of the step workspace" % len(other))
    how = (
        "(collapsed;\nnested='expand' shows them)"
        if canvas.page
        else ("(collapsed; nested='expand' shows them)")
    )
    label = "\u25b8 %d ops %s\n%s" % (len(netdef.op), how, "\n".join(lines))
    if terse:
        label = "\n".join(lines)
    canvas.blob(summary, label, ["collapsed"], graph=graph)
    for name in reads:
        kinds = ["external_input", "param" if name in params else "blob"]
        canvas.blob(nodes.id(name, 0), canvas.wrap(name), kinds, graph=graph)
        nodes.drawn.add((name, 0))
        canvas.edge(nodes.id(name, 0), summary, graph=graph)
    nodes.reads = [nodes.id(name, 0) for name in reads]
    for name in written:
        final = versions[name]
        kinds = ["gradient"] if "_grad" in name else ["blob"]
        canvas.blob(nodes.id(name, final), canvas.wrap(name), kinds, graph=graph)
        nodes.drawn.add((name, final))
        canvas.edge(summary, nodes.id(name, final), graph=graph)
    if fold:  # on a page: the linked blobs in a row above the box and one below, in link order
        order = {name: i for i, name in enumerate(linked)}
        for keys in (
            [nodes.id(n, 0) for n in sorted(reads, key=lambda n: order.get(n, len(order)))],
            [nodes.id(n, versions[n]) for n in sorted(written, key=lambda n: order.get(n, 0))],
        ):
            if len(keys) <= PAGE_ROW + 2:
                _one_row(canvas, graph, keys)
            else:
                canvas.fold(keys, fold, graph)
    return nodes


def _one_row(canvas, graph, keys):
    """``keys`` side by side, in this order, on one rank."""
    with graph.subgraph() as row:
        row.attr(rank="same")
        for key in keys:
            canvas.mention(key, row)
    canvas.chain(keys, graph=graph)  # flat edges: left to right, in this order


class tensor_row:
    """``with tensor_row(canvas, name, label, parent) as row:`` a labelled box whose
    nodes share one rank (the tensors of one kind, side by side)."""

    def __init__(self, canvas, name, label, parent):
        self._box = canvas.cluster(name, label, "state", parent)

    def __enter__(self):
        self._sub = self._box.__enter__()
        self._row = self._sub.subgraph()
        row = self._row.__enter__()
        row.attr(rank="same")
        return row

    def __exit__(self, *exc):
        self._row.__exit__(*exc)
        return self._box.__exit__(*exc)
