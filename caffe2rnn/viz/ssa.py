"""``ssa(net)``: every version of every blob as its own node, ``name@v``.

A NetDef may write one blob name several times. Caffe2's ``core.get_ssa``
numbers the writes: ``name@0`` is the value the net was handed (an
*undefined* blob: read before any op of this net wrote it), ``name@k`` the
value after the k-th write. An in-place op ``Sum([g, x]) -> g`` therefore
reads ``g@1`` and writes ``g@2``: two nodes, joined here by a dotted
"same buffer" line, so the overwrite is visible instead of a cycle.

``recurrent_net`` used exactly these numbers: a *scratch* is a cell blob with
version > 0 that the backward step reads at version 0. The drawing uses
``core.get_ssa`` itself, so what you see is what Caffe2 computed.
"""

from .. import core
from . import sizing, sources
from .canvas import Canvas
from .style import is_gradient_name


class VersionNodes:
    """Node keys of the blob versions drawn for one net (optionally prefixed).

    A key is a tuple ``(prefix, name, "@v")``: the canvas turns it into a node
    id (``fwd/lstm/gates_t@2``), distinct for distinct blobs whatever their names.
    """

    def __init__(self, prefix, blob_versions):
        self.prefix = prefix
        self.final = dict(blob_versions)
        self.drawn = set()
        self.reads = []  # keys of the blobs the net reads (version 0), in order

    def id(self, name, version):
        return (self.prefix, name, "@%d" % version)

    def first(self, name):
        """The node of the version a link *into* the net feeds (version 0)."""
        return self.id(name, 0)

    def last(self, name):
        return self.id(name, self.final.get(name, 0))

    def ids(self):
        """Keys of every blob version drawn."""
        return sorted(self.id(n, v) for n, v in self.drawn)

    def has(self, name, version=None):
        return (name, self.final.get(name, 0) if version is None else version) in self.drawn


def draw_versions(
    canvas,
    graph,
    netdef,
    prefix="",
    params=(),
    extra_kinds=None,
    always_version=True,
    op_class=None,
    tooltips=None,
    inplace_edges=True,
    values=None,
    fold=None,
    lead=(),
):
    """Draw ``netdef``'s ops and blob versions into ``graph``.

    ``extra_kinds(name, version)`` returns more style kinds for a blob (scratch,
    recompute...); ``op_class(index, op)`` an extra class for an op;
    ``always_version=False`` labels a blob ``name@v`` only when the net writes
    it more than once; ``inplace_edges`` joins the versions an in-place op
    reads and writes with a dotted line; ``values(name)`` (what a run left
    in the workspace) adds shape and dtype to the label of each blob's *final*
    version, the only one whose value survives the run; ``fold=k`` lays the
    blobs the net reads (version 0) out in rows of ``k`` instead of one wide
    row, the names in ``lead`` first, on a row of their own at the top (the
    blobs a link from the step before feeds, so its edges come in from
    above). Returns the :class:`VersionNodes`.
    """
    ssa, blob_versions = core.get_ssa(netdef)
    external_in, external_out = set(netdef.external_input), set(netdef.external_output)
    nodes = VersionNodes(prefix, {})
    for _, outputs in ssa:
        for name, version in outputs:
            nodes.final[name] = version

    def blob(name, version):
        if (name, version) in nodes.drawn:
            return nodes.id(name, version)
        nodes.drawn.add((name, version))
        kinds = ["blob"]
        if version == 0:
            kinds.append("external_input" if name in external_in else "undefined")
        if version == nodes.final.get(name, 0) and name in external_out:
            kinds.append("external_output")
        if name in params:
            kinds.append("param")
        if is_gradient_name(name):
            kinds.append("gradient")
        if extra_kinds is not None:
            kinds.extend(extra_kinds(name, version))
        shown = always_version or nodes.final.get(name, 0) > 1
        label = canvas.wrap(name) + ("@%d" % version if shown else "")
        tooltip = (tooltips or {}).get(name)
        value = values(name) if values and version == nodes.final.get(name, 0) else None
        if sources.shape_text(value):
            label += "\n" + sources.shape_text(value)
            tooltip = "%s = %s" % (name, sources.value_text(value))
        canvas.blob(nodes.id(name, version), label, kinds, graph=graph, tooltip=tooltip)
        return nodes.id(name, version)

    for index, (op, (inputs, outputs)) in enumerate(zip(netdef.op, ssa)):
        op_id = (prefix, "op#%d" % index)
        inplace = sorted({n for n, _ in outputs} & {n for n, _ in inputs})
        label = canvas.op_label(op, index) + ("\nin-place" if inplace else "")
        extra = op_class(index, op) if op_class else ""
        canvas.op(
            op_id,
            label,
            op,
            graph=graph,
            extra_class=" ".join(filter(None, [extra, "inplace" if inplace else ""])),
        )
        for name, version in inputs:
            canvas.edge(blob(name, version), op_id, graph=graph)
        for name, version in outputs:
            canvas.edge(op_id, blob(name, version), graph=graph)
        read = dict(inputs)
        for name in inplace if inplace_edges else ():
            canvas.edge(
                nodes.id(name, read[name]),
                nodes.id(name, dict(outputs)[name]),
                kind="inplace",
                graph=graph,
                constraint="false",
            )
    nodes.reads = list(dict.fromkeys(nodes.id(n, v) for ins, _ in ssa for n, v in ins if v == 0))
    first = [nodes.id(n, 0) for n in lead if nodes.id(n, 0) in nodes.reads]
    if first:
        rest = [k for k in nodes.reads if k not in first]
        nodes.reads = first + rest
        with graph.subgraph() as row:
            row.attr(rank="same")
            for key in first:
                canvas.mention(key, row)
        canvas.chain_all(first, rest[:fold] if fold else rest)
        if fold:
            canvas.fold(rest, fold, graph)
    elif fold:
        canvas.fold(nodes.reads, fold, graph)
    return nodes


def ssa(net_like, params=None, rankdir="TB", shapes=None, width=None):
    """SSA drawing of a net (NetDef, ``core.Net``, model helper or list of ops).

    Nodes: ``Type (op#i)`` boxes and one ``name@v`` node per blob version;
    version-0 reads are grey pills when declared external inputs and red
    dashed pills when not declared ("undefined"); final versions of external
    outputs are bold pills. ``params`` overrides which blobs are parameters;
    ``shapes`` (a workspace after a run, or a dict of arrays) labels each
    blob's final version with its shape and dtype (its values in the tooltip).
    ``width="page"`` lays it out for a text column (:mod:`~caffe2rnn.viz.sizing`).
    """
    netdef = sources.as_netdef(net_like)
    name = netdef.name or "unnamed"
    canvas = Canvas("ssa_" + name, "SSA of net '%s': name@version" % name, rankdir, width)
    draw_versions(
        canvas,
        canvas.graph,
        netdef,
        params=sources.param_names(net_like, netdef, params),
        values=sources.blob_values(shapes) if shapes is not None else None,
    )
    graph = canvas.finish()
    if canvas.page:
        full = dict(params=params, rankdir=rankdir, shapes=shapes)
        sizing.with_full_size(graph, lambda: ssa(net_like, **full))
    return graph
