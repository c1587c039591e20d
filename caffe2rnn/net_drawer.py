"""``caffe2.python.net_drawer``: Caffe2's Graphviz drawer, drawn in caffe2rnn's palette.

Caffe2's tutorials show every net they build with it::

    from caffe2.python import net_drawer
    graph = net_drawer.GetPydotGraph(train_net.Proto().op, "train", rankdir="LR")
    display.Image(graph.create_png(), width=800)

This module keeps Caffe2's functions, signatures and return values (E4-E7,
0cdd09da6's ``net_drawer.py`` is the reference): a ``pydot.Dot`` graph, so
``create_png()``, ``write_png()``, ``create_svg()`` and ``to_string()`` work
as they did, with Caffe2's node names (``"FC (op#2)"`` for an op, the blob's
name and how often it was overwritten for a blob) and its *bipartite* layout:
a read attaches to the blob's current node, every write makes a new node, so
an in-place ``Iter(ITER) -> ITER`` draws as ``ITER -> Iter -> ITER``.

What changes is how it looks, which is caffe2rnn's (:mod:`caffe2rnn.viz.style`,
the palette of every caffe2rnn diagram, and a legend of the looks used):

* operators are boxes coloured by family -- net_drawer's green (``#0F9D58``)
  for compute, orange for activations, grey for shape ops, red for the
  ``Sum`` that accumulates gradients -- and gradient operators get rounded
  boxes;
* blobs are ellipses; a blob the ops read before any of them writes it (a
  net input: data, parameters, the init net's constants) is a grey pill;
  gradients (``*_grad``) are orange and dashed; a model helper's parameters
  are blue;
* an op that runs nets stored in its arguments (``If``'s ``then_net``,
  ``While``'s ``loop_net``, ``Do``'s ``net``, ``RecurrentNetwork``'s step
  nets) says so in its label (``▸ then_net: 1 op``), which net_drawer did not.

Caffe2's option dictionaries :data:`OP_STYLE` and :data:`BLOB_STYLE` are
caffe2rnn's compute-op and blob looks; a ``node_producer`` from
:func:`GetOpNodeProducer` draws every op with the style it is given, as in
Caffe2. pydot (``pip install pydot``) is required to draw, as it was; Graphviz's
``dot`` program to render (``create_png``...). For caffe2rnn's own views of a
net (nested nets expanded, shapes, a page layout) see :func:`caffe2rnn.viz.net`.
"""

import argparse
import json
import logging
from collections import defaultdict

from .errors import PydotNotFoundError
from .proto import caffe2_pb2
from .viz.sources import nested_nets
from .viz.style import (
    BLOB_KINDS,
    EDGE_KINDS,
    FONT,
    KIND_PRIORITY,
    OP_FAMILIES,
    accumulates_gradient,
    is_gradient_name,
    is_gradient_op,
    op_family,
)

try:
    import pydot
except ImportError:  # drawing raises PydotNotFoundError (importing still works, as in Caffe2)
    pydot = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

#: caffe2rnn's look of a compute operator (Caffe2's: the same green box).
OP_STYLE = {
    "shape": "box",
    "color": OP_FAMILIES["compute"][0],
    "fillcolor": OP_FAMILIES["compute"][0],
    "style": "filled",
    "fontcolor": "#FFFFFF",
}
#: caffe2rnn's look of a blob (Caffe2's was an octagon).
BLOB_STYLE = dict(BLOB_KINDS["blob"][0])

_GRAPH_ATTRS = dict(fontname=FONT, fontsize="12", nodesep="0.25", ranksep="0.35", newrank="true")
_NODE_ATTRS = dict(fontname=FONT, fontsize="10", margin="0.06,0.03", height="0.3")
_EDGE_ATTRS = dict(
    fontname=FONT, fontsize="9", arrowsize="0.6", color=EDGE_KINDS["data"][0]["color"]
)


def _pydot():
    if pydot is None:
        raise PydotNotFoundError(
            "net_drawer draws pydot graphs and pydot is not installed: pip install pydot "
            "(rendering them also needs Graphviz's dot program, e.g. apt-get install graphviz)"
        )
    return pydot


def _rectify_operator_and_name(operators_or_net, name):
    """The operators and the graph's name: a NetDef's, a ``Proto()``'s, or "unnamed"."""
    if isinstance(operators_or_net, caffe2_pb2.NetDef):
        return operators_or_net.op, name if name is not None else operators_or_net.name
    if hasattr(operators_or_net, "Proto"):
        net = operators_or_net.Proto()
        if not isinstance(net, caffe2_pb2.NetDef):
            raise RuntimeError("Expecting NetDef, but got %s" % type(net))
        return net.op, name if name is not None else net.name
    return operators_or_net, name if name is not None else "unnamed"


def _escape_label(name):
    """A name as a quoted DOT string: JSON's escaping, as Caffe2 did, but keeping
    non-ASCII characters (Graphviz shows ``\\u25b8`` as the text "u25b8")."""
    return json.dumps(name, ensure_ascii=False)


def _node_name(op, op_id, append_output):
    """Caffe2's op node name: ``"<name>/<Type> (op#<i>)"`` (+ the outputs, one a line)."""
    if op.name:
        node_name = "%s/%s (op#%d)" % (op.name, op.type, op_id)
    else:
        node_name = "%s (op#%d)" % (op.type, op_id)
    if append_output:
        for output_name in op.output:
            node_name += "\n" + output_name
    return node_name


def GetOpNodeProducer(append_output, **kwargs):
    """A ``node_producer``: ``f(op, op_id)`` -> a ``pydot.Node`` named as in Caffe2,
    with the attributes ``kwargs`` (e.g. :data:`OP_STYLE`)."""

    def ReallyGetOpNode(op, op_id):
        return _pydot().Node(_node_name(op, op_id, append_output), **kwargs)

    return ReallyGetOpNode


def _styled_op_node(append_output=False):
    """caffe2rnn's default producer: each op in its family's colour, gradient
    ops rounded, nested nets named in the label."""

    def producer(op, op_id):
        family = op_family(op.type)
        if family == "accumulate" and not accumulates_gradient(op):
            family = "compute"  # a forward Sum is arithmetic, not backward's +=
        attrs = dict(OP_STYLE, color=OP_FAMILIES[family][0], fillcolor=OP_FAMILIES[family][0])
        if is_gradient_op(op):
            attrs["style"] = "rounded,filled"
        label = _node_name(op, op_id, append_output)
        inner = nested_nets(op)
        if inner:
            label += "".join(
                "\n\u25b8 %s: %d op%s" % (n, len(d.op), "" if len(d.op) == 1 else "s")
                for n, d in inner
            )
            attrs["label"] = _escape_label(label)
        node = _pydot().Node(_node_name(op, op_id, append_output), **attrs)
        node.caffe2rnn_look = (
            "gradient operator: %s" if is_gradient_op(op) else "operator: %s"
        ) % family
        return node

    return producer


def _blob_kinds(name, inputs, params):
    kinds = ["blob"]
    if name in inputs:
        kinds.append("external_input")
    if name in params:
        kinds.append("param")
    if is_gradient_name(name):
        kinds.append("gradient")
    return [k for k in KIND_PRIORITY if k in kinds]


def _blob_style(kinds):
    attrs = dict(BLOB_STYLE)
    for kind in kinds:
        attrs.update(BLOB_KINDS[kind][0])
    return attrs


def _net_inputs(operators):
    """The blobs the ops read before any of them writes them."""
    written, inputs = set(), set()
    for op in operators:
        inputs.update(name for name in op.input if name not in written)
        written.update(op.output)
    return inputs


class _Drawing:
    """A ``pydot.Dot`` in caffe2rnn's look that remembers the looks it used (the legend)."""

    def __init__(self, name, rankdir, title):
        self.graph = _pydot().Dot(name, rankdir=rankdir, **_GRAPH_ATTRS)
        if title:
            self.graph.set_label(_escape_label(title))
            self.graph.set_labelloc("t")
        self.graph.set_node_defaults(**_NODE_ATTRS)
        self.graph.set_edge_defaults(**_EDGE_ATTRS)
        self.looks = {}  # legend text -> node attributes

    def op(self, node):
        self.graph.add_node(node)
        look = getattr(node, "caffe2rnn_look", None)
        if look is not None:
            attrs = {k: v for k, v in node.get_attributes().items() if k != "label"}
            self.looks.setdefault(look, attrs)
        return node

    def blob(self, node_name, label, kinds):
        attrs = _blob_style(kinds)
        text = BLOB_KINDS[kinds[-1]][1]
        if "external_input" in kinds and kinds[-1] != "external_input":
            text += " (net input)"
        self.looks.setdefault(text, dict(attrs))
        node = _pydot().Node(node_name, label=label, **attrs)
        self.graph.add_node(node)
        return node

    def finish(self):
        """Add the legend (a box of one sample node per look used); return the graph."""
        if not self.looks:
            return self.graph
        legend = _pydot().Cluster(
            "legend", label="legend", style="rounded", color="#9AA0A6", fontsize="10"
        )
        previous = None
        for i, (text, attrs) in enumerate(self.looks.items()):
            node = _pydot().Node("legend/%d" % i, label=_escape_label(text), fontsize="9", **attrs)
            legend.add_node(node)
            if previous is not None:
                legend.add_edge(_pydot().Edge(previous, node, style="invis"))
            previous = node
        self.graph.add_subgraph(legend)
        return self.graph


def GetPydotGraph(operators_or_net, name=None, rankdir="LR", node_producer=None):
    """The net as a ``pydot.Dot``: op boxes and blob nodes (module docstring).

    ``operators_or_net``: a NetDef, anything with ``Proto()`` (``core.Net``,
    a model helper) or a list of OperatorDefs; ``name`` the graph's name
    (default: the net's, else "unnamed"); ``rankdir`` Graphviz's direction;
    ``node_producer`` ``f(op, op_id) -> pydot.Node`` for the op nodes.
    """
    operators, name = _rectify_operator_and_name(operators_or_net, name)
    operators = list(operators)
    producer = node_producer or _styled_op_node()
    params = {str(p) for p in getattr(operators_or_net, "params", ())}
    inputs = _net_inputs(operators)
    drawing = _Drawing(name, rankdir, "net '%s'" % name)
    pydot_nodes = {}
    pydot_node_counts = defaultdict(int)
    for op_id, op in enumerate(operators):
        op_node = drawing.op(producer(op, op_id))
        for input_name in op.input:
            if input_name not in pydot_nodes:
                pydot_nodes[input_name] = drawing.blob(
                    _escape_label(input_name + str(pydot_node_counts[input_name])),
                    _escape_label(input_name),
                    _blob_kinds(input_name, inputs, params),
                )
            drawing.graph.add_edge(_pydot().Edge(pydot_nodes[input_name], op_node))
        for output_name in op.output:
            if output_name in pydot_nodes:
                pydot_node_counts[output_name] += 1  # an overwrite: a new node
            pydot_nodes[output_name] = drawing.blob(
                _escape_label(output_name + str(pydot_node_counts[output_name])),
                _escape_label(output_name),
                _blob_kinds(output_name, (), params),
            )
            drawing.graph.add_edge(_pydot().Edge(op_node, pydot_nodes[output_name]))
    return drawing.finish()


def GetPydotGraphMinimal(
    operators_or_net, name=None, rankdir="LR", minimal_dependency=False, node_producer=None
):
    """Only the ops: an edge from the op that last wrote each input, labelled
    with the blobs it carries. With ``minimal_dependency`` only the edges from
    parents that are not already ancestors of another parent (if c reads a and
    b, and b reads a, only b -> c is drawn)."""
    operators, name = _rectify_operator_and_name(operators_or_net, name)
    producer = node_producer or _styled_op_node()
    drawing = _Drawing(name, rankdir, "net '%s' (ops only)" % name)
    blob_parents = {}  # blob name -> index of the op that wrote it last
    op_nodes, op_ancestry = [], defaultdict(set)
    for op_id, op in enumerate(operators):
        op_nodes.append(drawing.op(producer(op, op_id)))
        via = defaultdict(list)  # parent op -> the blobs it hands over
        for input_name in op.input:
            if input_name in blob_parents:
                via[blob_parents[input_name]].append(input_name)
        parents = set(via)
        op_ancestry[op_id].update(parents)
        for parent in parents:
            op_ancestry[op_id].update(op_ancestry[parent])
        if minimal_dependency:
            parents = {p for p in parents if all(p not in op_ancestry[other] for other in parents)}
        for parent in sorted(parents):
            label = ", ".join(dict.fromkeys(via[parent]))
            drawing.graph.add_edge(
                _pydot().Edge(op_nodes[parent], op_nodes[-1], label=_escape_label(label))
            )
        for output_name in op.output:
            blob_parents[output_name] = op_id
    return drawing.finish()


def GetOperatorMapForPlan(plan_def):
    """``{"<plan>_<net>": ops}`` of every net of a PlanDef (unnamed nets:
    ``"<plan>_network_<i>"``)."""
    operator_map = {}
    for net_id, net in enumerate(plan_def.network):
        if net.HasField("name"):
            operator_map[plan_def.name + "_" + net.name] = net.op
        else:
            operator_map[plan_def.name + "_network_%d" % net_id] = net.op
    return operator_map


#: Concurrent substeps drawn before "N more steps" (Caffe2's kMaxParallelSteps).
MAX_PARALLEL_STEPS = 3


def _draw_nets(nets, graph):
    nodes = []
    for i, net in enumerate(nets):
        nodes.append(_pydot().Node(_escape_label(net), **BLOB_STYLE))
        graph.add_node(nodes[-1])
        if i > 0:
            graph.add_edge(_pydot().Edge(nodes[-2], nodes[-1]))
    return nodes


def _step_label(step):
    label = [step.name + "\n"]
    if step.report_net:
        label.append("Reporter: %s" % step.report_net)
    if step.should_stop_blob:
        label.append("Stopper: %s" % step.should_stop_blob)
    if step.concurrent_substeps:
        label.append("Concurrent")
    if step.only_once:
        label.append("Once")
    return "\n".join(label)


def _substep_edge(start, end):
    return _pydot().Edge(start, end, arrowhead="dot", style="dashed")


def _draw_steps(steps, graph, skip_step_edges=False):
    """A box per step (its name, stopper, reporter...), its nets or substeps
    beside it: nets chained in order, substeps hung on dashed edges."""
    nodes = []
    for i, step in enumerate(steps):
        parallel = step.concurrent_substeps
        nodes.append(_pydot().Node(_escape_label(_step_label(step)), **OP_STYLE))
        graph.add_node(nodes[-1])
        if i > 0 and not skip_step_edges:
            graph.add_edge(_pydot().Edge(nodes[-2], nodes[-1]))
        if step.network:
            sub_nodes = _draw_nets(step.network, graph)
        elif step.substep:
            if parallel:
                sub_nodes = _draw_steps(
                    step.substep[:MAX_PARALLEL_STEPS], graph, skip_step_edges=True
                )
            else:
                sub_nodes = _draw_steps(step.substep, graph)
        else:
            raise ValueError("invalid step %r: it has neither nets nor substeps" % step.name)
        if parallel:
            for sub_node in sub_nodes:
                graph.add_edge(_substep_edge(nodes[-1], sub_node))
            if len(step.substep) > MAX_PARALLEL_STEPS:
                more = _pydot().Node(
                    _escape_label("%d more steps" % (len(step.substep) - MAX_PARALLEL_STEPS)),
                    **OP_STYLE,
                )
                graph.add_node(more)
                graph.add_edge(_substep_edge(nodes[-1], more))
        else:
            graph.add_edge(_substep_edge(nodes[-1], sub_nodes[0]))
    return nodes


def GetPlanGraph(plan_def, name=None, rankdir="TB"):
    """A PlanDef's execution steps as a ``pydot.Dot`` (top to bottom)."""
    drawing = _Drawing(name if name is not None else plan_def.name, rankdir, None)
    _draw_steps(plan_def.execution_step, drawing.graph)
    return drawing.graph


def GetGraphInJson(operators_or_net, output_filepath):
    """Write the bipartite graph as JSON, Caffe2's format: ``{"nodes": [{"id",
    "label", "type": "op"|"blob", "op_id" (ops)}], "edges": [{"source", "target"}]}``."""
    operators, _ = _rectify_operator_and_name(operators_or_net, None)
    blob_strid_to_node_id = {}
    node_name_counts = defaultdict(int)
    nodes, edges = [], []
    for op_id, op in enumerate(operators):
        op_node_id = len(nodes)
        nodes.append(
            {
                "id": op_node_id,
                "label": op.name + "/" + op.type if op.name else op.type,
                "op_id": op_id,
                "type": "op",
            }
        )
        for input_name in op.input:
            strid = _escape_label(input_name + str(node_name_counts[input_name]))
            if strid not in blob_strid_to_node_id:
                blob_strid_to_node_id[strid] = len(nodes)
                nodes.append({"id": len(nodes), "label": input_name, "type": "blob"})
            edges.append({"source": blob_strid_to_node_id[strid], "target": op_node_id})
        for output_name in op.output:
            strid = _escape_label(output_name + str(node_name_counts[output_name]))
            if strid in blob_strid_to_node_id:  # an overwrite: a new node
                node_name_counts[output_name] += 1
                strid = _escape_label(output_name + str(node_name_counts[output_name]))
            if strid not in blob_strid_to_node_id:
                blob_strid_to_node_id[strid] = len(nodes)
                nodes.append({"id": len(nodes), "label": output_name, "type": "blob"})
            edges.append({"source": op_node_id, "target": blob_strid_to_node_id[strid]})
    with open(output_filepath, "w") as handle:
        json.dump({"nodes": nodes, "edges": edges}, handle)


def _dummy_png():
    import struct
    import zlib

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 1, 0, 0, 0, 0)  # 1×1, 1-bit greyscale
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x00"))
        + chunk(b"IEND", b"")
    )


#: The 1×1 PNG GetGraphPngSafe returns when drawing fails (made here, not Caffe2's bytes).
_DummyPngImage = _dummy_png()


def GetGraphPngSafe(func, *args, **kwargs):
    """``func(*args, **kwargs).create_png()`` (func: e.g. GetPydotGraph); if
    anything fails, the error is logged and a 1×1 PNG returned instead."""
    try:
        graph = func(*args, **kwargs)
        if not isinstance(graph, _pydot().Dot):
            raise ValueError("func is expected to return pydot.Dot")
        return graph.create_png()
    except Exception as exc:  # noqa: BLE001 - Caffe2's contract: never raise
        logger.error("Failed to draw graph: %s", exc)
        return _DummyPngImage


def main(argv=None):
    """``python -m caffe2rnn.net_drawer --input net.pbtxt``: a .dot and a .pdf per
    net of a NetDef or PlanDef file (Caffe2's command line)."""
    from . import utils

    parser = argparse.ArgumentParser(description="Caffe2 net drawer.")
    parser.add_argument("--input", type=str, required=True, help="The input protobuf file.")
    parser.add_argument(
        "--output_prefix",
        type=str,
        default="",
        help="The prefix to be added to the output filename.",
    )
    parser.add_argument(
        "--minimal", action="store_true", help="If set, produce a minimal visualization."
    )
    parser.add_argument(
        "--minimal_dependency", action="store_true", help="If set, only draw minimal dependency."
    )
    parser.add_argument(
        "--append_output",
        action="store_true",
        help="If set, append the output blobs to the operator names.",
    )
    parser.add_argument(
        "--rankdir", type=str, default="LR", help="The rank direction of the pydot graph."
    )
    args = parser.parse_args(argv)
    with open(args.input, "rb") as handle:
        content = handle.read()
    graphs = utils.GetContentFromProtoString(
        content,
        {
            caffe2_pb2.PlanDef: GetOperatorMapForPlan,
            caffe2_pb2.NetDef: lambda x: {x.name: x.op},
        },
    )
    for key, operators in graphs.items():
        producer = _styled_op_node(args.append_output)
        if args.minimal:
            graph = GetPydotGraphMinimal(
                operators,
                name=key,
                rankdir=args.rankdir,
                node_producer=producer,
                minimal_dependency=args.minimal_dependency,
            )
        else:
            graph = GetPydotGraph(operators, name=key, rankdir=args.rankdir, node_producer=producer)
        filename = args.output_prefix + graph.get_name() + ".dot"
        graph.write(filename, format="raw")
        try:
            graph.write_pdf(filename[:-3] + "pdf")
        except Exception:  # noqa: BLE001 - the .dot is written; say why the pdf is not
            print(
                "Error when writing out the pdf file. Pydot requires graphviz to convert "
                "dot files to pdf (apt-get install graphviz). The .dot file is written."
            )


if __name__ == "__main__":
    main()
