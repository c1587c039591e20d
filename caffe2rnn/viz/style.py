"""One palette and one legend for every caffe2rnn drawing.

Caffe2's ``net_drawer`` had two styles: every operator a green filled box
(``#0F9D58``, white text) and every blob an octagon. That is enough to read a
small net but not to *teach* one: a learner also needs to see which blobs are
parameters, which are gradients, which a recurrent step keeps for the backward
pass and how step nets are tied to the big (T+1)-row state tensors. The
choices below follow Caffe2's own ``net_drawer.py`` where it had one and
common diagram practice (TensorBoard, Netron) elsewhere:

* operators are boxes coloured by family (net_drawer's green for plain
  compute ops, other hues for activations, shape ops, accumulation, RNN
  plumbing); gradient operators get a rounded, lighter box;
* blobs are ellipses; graph inputs/outputs are grey *pills*; parameters are
  blue; gradient blobs orange with a dashed border; scratch blobs (kept per
  timestep for the backward pass) grey dotted; recompute blobs purple dotted;
  state tensors are cylinders (storage that outlives one step);
* links and aliases are dashed edges labelled with their offset and window.

Every drawing is built on a :class:`Canvas`, which remembers which styles it
used and appends a legend naming exactly those, so the key in each figure
matches the figure. Every node carries a ``class`` attribute naming its kinds
(Graphviz copies it into the SVG), which is also what the tests read.
"""

import html

import graphviz

FONT = "Helvetica"

# Operator families: fill colour, and the op types in each. Anything not
# listed is "compute" and keeps net_drawer's green.
OP_FAMILIES = {
    "compute": ("#0F9D58", ()),
    "activation": (
        "#E67C00",
        ("Sigmoid", "Tanh", "Relu", "Softmax", "LSTMUnit", "SoftmaxWithLoss"),
    ),
    "shape": (
        "#5F6368",
        (
            "Reshape",
            "Concat",
            "Split",
            "Transpose",
            "Squeeze",
            "ExpandDims",
            "Copy",
            "Alias",
            "CopyOnDeviceLike",
        ),
    ),
    "accumulate": ("#C5221F", ("Sum",)),
    "rnn": (
        "#7B1FA2",
        (
            "RecurrentNetwork",
            "RecurrentNetworkGradient",
            "rnn_internal_accumulate_gradient_input",
            "rnn_internal_apply_link",
        ),
    ),
}

# Blob kinds, in legend order: (node attributes, legend text).
BLOB_KINDS = {
    "blob": (
        {"shape": "ellipse", "style": "filled", "fillcolor": "#FFFFFF", "color": "#202124"},
        "blob",
    ),
    "external_input": (
        {"shape": "box", "style": "rounded,filled", "fillcolor": "#E8EAED", "color": "#5F6368"},
        "net input (external)",
    ),
    "external_output": (
        {
            "shape": "box",
            "style": "rounded,filled,bold",
            "fillcolor": "#E8EAED",
            "color": "#202124",
        },
        "net output (external)",
    ),
    "undefined": (
        {
            "shape": "box",
            "style": "rounded,filled,dashed",
            "fillcolor": "#FCE8E6",
            "color": "#C5221F",
        },
        "read before written, not declared",
    ),
    "param": ({"style": "filled", "fillcolor": "#D2E3FC", "color": "#1A73E8"}, "parameter"),
    "gradient": (
        {"style": "filled,dashed", "fillcolor": "#FEEFC3", "color": "#E37400"},
        "gradient blob",
    ),
    "scratch": (
        {"style": "filled,dotted", "fillcolor": "#DADCE0", "color": "#202124", "penwidth": "2"},
        "scratch: kept per step for backward",
    ),
    "read_by_backward": ({"penwidth": "2.5"}, "read by the backward step"),
    "recompute": (
        {"style": "filled,dotted", "fillcolor": "#E9D5F5", "color": "#7B1FA2", "penwidth": "2"},
        "recomputed on backward",
    ),
    "renamed": (
        {"style": "filled,dashed", "fillcolor": "#FFD7A8", "color": "#B06000", "penwidth": "2"},
        "renamed by the C++ op (_tmpstep)",
    ),
    "accum": (
        {"style": "filled,dashed", "fillcolor": "#F6C7C3", "color": "#C5221F"},
        "_accum: internal gradient part",
    ),
    "state": (
        {"shape": "cylinder", "style": "filled", "fillcolor": "#FFF7D6", "color": "#B08D00"},
        "state tensor, (T+1) rows",
    ),
    "backward_step": (
        {"shape": "box", "style": "filled", "fillcolor": "#FEEFC3", "color": "#E37400"},
        "one run of the backward step net",
    ),
}

# Edge kinds: (attributes, legend text).
EDGE_KINDS = {
    "data": ({"color": "#5F6368"}, "reads / writes"),
    "link": (
        {"style": "dashed", "color": "#1A73E8", "fontcolor": "#1A73E8"},
        "link: view of rows t+offset",
    ),
    "alias": (
        {"style": "dashed", "color": "#188038", "fontcolor": "#188038"},
        "alias: view from row offset",
    ),
    "reference": ({"style": "dotted", "color": "#5F6368"}, "reference (same blob every step)"),
    "recurrent": (
        {"color": "#C5221F", "penwidth": "2", "fontcolor": "#C5221F"},
        "recurrent: step t feeds t+1",
    ),
    "rename": ({"style": "dotted", "color": "#B06000", "fontcolor": "#B06000"}, "renamed blob"),
    "accumulate": (
        {"color": "#C5221F", "penwidth": "1.5", "fontcolor": "#C5221F", "arrowhead": "empty"},
        "+= gradient accumulated",
    ),
    "inplace": (
        {"style": "dotted", "color": "#C5221F", "arrowhead": "none"},
        "same buffer (in-place)",
    ),
}

CLUSTER_STYLES = {
    "rnn": {"style": "rounded,filled", "fillcolor": "#F8F0FC", "color": "#7B1FA2"},
    "step": {"style": "rounded,filled", "fillcolor": "#F1F8F4", "color": "#0F9D58"},
    "backward": {"style": "rounded,filled", "fillcolor": "#FEF7E0", "color": "#E37400"},
    "time": {"style": "rounded,filled", "fillcolor": "#F8F9FA", "color": "#9AA0A6"},
    "state": {"style": "rounded,dashed", "color": "#B08D00", "fillcolor": "#FFFFFF"},
    "side": {"style": "invis"},
    "now": {"style": "rounded,filled,bold", "fillcolor": "#FEF7E0", "color": "#E37400"},
}

# Blob kinds that decide the shape/fill; later ones win.
_KIND_PRIORITY = [
    "blob",
    "external_input",
    "external_output",
    "undefined",
    "param",
    "gradient",
    "accum",
    "renamed",
    "read_by_backward",
    "recompute",
    "scratch",
    "state",
]


def op_family(op_type):
    for family, (_, types) in OP_FAMILIES.items():
        if op_type in types:
            return family
    return "compute"


def _accumulates_gradient(op):
    """A Sum belongs to the red "accumulate" family only when it adds gradients."""
    return is_gradient_op(op) or any(is_gradient_name(name) for name in op.output)


def is_gradient_op(op):
    """Caffe2 marks generated ops with ``is_gradient_op``; older ones only by name."""
    return op.is_gradient_op or op.type.endswith("Gradient")


def is_gradient_name(name):
    """Caffe2's gradient naming: ``x_grad``, ``x_grad_autosplit_0``, ``x_grad_accum``..."""
    return "_grad" in name


def wrap(text, width=24):
    """Break long blob paths after '/' so labels stay narrow."""
    if len(text) <= width or "/" not in text:
        return text
    lines, line = [], ""
    for piece in text.split("/"):
        candidate = piece if not line else line + "/" + piece
        if line and len(candidate) > width:
            lines.append(line + "/")
            line = piece
        else:
            line = candidate
    lines.append(line)
    return "\n".join(lines)


def html_text(text):
    return html.escape(str(text), quote=True)


def safe_id(text):
    """Node ids for the ``graphviz`` package: a ':' would be read as a port."""
    return str(text).replace(":", "_")


class Canvas:
    """A ``graphviz.Digraph`` that styles nodes by kind and adds a legend.

    ``graph`` arguments let callers draw into a cluster subgraph; the legend
    still counts what was used there.
    """

    def __init__(self, name, title=None, rankdir="LR"):
        self.graph = graphviz.Digraph(name)
        self.graph.attr(
            rankdir=rankdir,
            fontname=FONT,
            fontsize="12",
            nodesep="0.25",
            ranksep="0.35",
            newrank="true",
        )
        if title:
            self.graph.attr(label=title, labelloc="t", fontsize="14")
        self.graph.attr("node", fontname=FONT, fontsize="10", margin="0.06,0.03", height="0.3")
        self.graph.attr("edge", fontname=FONT, fontsize="9", arrowsize="0.6")
        self._families = []  # (legend text, op node attributes) in drawing order
        self._blob_kinds = []
        self._edge_kinds = []

    def _note(self, seen, item):
        if item not in seen:
            seen.append(item)

    def _note_blob(self, kinds, attrs):
        """Remember a blob style for the legend, exactly as drawn: keyed by its
        deciding kind and its shape (a parameter that is a net input is a pill,
        one inside a net an ellipse)."""
        main = kinds[-1]
        text = BLOB_KINDS[main][1]
        for side, words in (("external_input", "net input"), ("external_output", "net output")):
            if side in kinds and main != side and not main.startswith("external"):
                text += " (%s)" % words
        key = (main, attrs.get("shape"), text)
        if key not in (k for k, _ in self._blob_kinds):
            self._blob_kinds.append((key, dict(attrs)))

    def op(self, node_id, label, op, graph=None, extra_class=""):
        family = op_family(op.type)
        if family == "accumulate" and not _accumulates_gradient(op):
            family = "compute"  # a forward Sum is arithmetic, not the red += of backward
        attrs = {
            "shape": "box",
            "style": "filled",
            "fillcolor": OP_FAMILIES[family][0],
            "fontcolor": "#FFFFFF",
            "color": OP_FAMILIES[family][0],
        }
        classes = ["op", family]
        if is_gradient_op(op):
            attrs["style"] = "rounded,filled"
            classes.append("gradient_op")
        text = ("gradient operator: %s" if is_gradient_op(op) else "operator: %s") % family
        self._note(self._families, (text, tuple(sorted(attrs.items()))))
        if extra_class:
            classes.append(extra_class)
        attrs["class"] = " ".join(classes)
        (graph or self.graph).node(safe_id(node_id), label, **attrs)

    def blob(self, node_id, label, kinds=("blob",), graph=None, tooltip=None):
        kinds = [k for k in _KIND_PRIORITY if k in kinds] or ["blob"]
        attrs = dict(BLOB_KINDS["blob"][0])
        for kind in kinds:
            attrs.update(BLOB_KINDS[kind][0])
        self._note_blob(kinds, attrs)
        attrs["class"] = " ".join(["blob"] + [k for k in kinds if k != "blob"])
        if tooltip:
            attrs["tooltip"] = tooltip
        (graph or self.graph).node(safe_id(node_id), label, **attrs)

    def table(self, node_id, html_label, graph=None, kind="state"):
        """An HTML-like table node (state tensors drawn row by row)."""
        self._note_blob([kind], {**BLOB_KINDS["blob"][0], **BLOB_KINDS[kind][0], "shape": "box"})
        (graph or self.graph).node(
            safe_id(node_id),
            "<%s>" % html_label,
            shape="plaintext",
            margin="0",
            **{"class": "blob table " + kind},
        )

    def edge(
        self,
        tail,
        head,
        kind="data",
        label=None,
        graph=None,
        tail_port=None,
        head_port=None,
        **extra,
    ):
        """An edge between node ids (ports name cells of table nodes)."""
        self._note(self._edge_kinds, kind)
        attrs = dict(EDGE_KINDS[kind][0])
        attrs["class"] = kind
        if label:
            attrs["label"] = label
        attrs.update(extra)
        tail, head = safe_id(tail), safe_id(head)
        (graph or self.graph).edge(
            tail + (":" + tail_port if tail_port else ""),
            head + (":" + head_port if head_port else ""),
            **attrs,
        )

    def cluster(self, name, label, kind, parent=None):
        """``with canvas.cluster(...) as sub:`` draws into a labelled box
        (nested in ``parent``, another cluster, when given)."""
        sub = (parent or self.graph).subgraph(name="cluster_" + safe_id(name))
        return _Cluster(sub, label, CLUSTER_STYLES[kind])

    def finish(self):
        """Append the legend for what was drawn and return the Digraph.

        The legend is drawn with the same node and edge attributes as the
        figure (an ellipse for a blob, a pill for a net input, a cylinder for a
        state tensor...), in a box of its own, rows of a few entries each.
        """
        entries = []  # (node attributes, text, edge attributes or None)
        for text, attrs in self._families:  # each op look as drawn
            entries.append((dict(attrs), text, None))
        for (_, _, text), attrs in self._blob_kinds:
            entries.append((attrs, text, None))
        for kind in self._edge_kinds:
            attrs, text = EDGE_KINDS[kind]
            entries.append(({}, text, attrs))
        per_row = 4
        with self.graph.subgraph(name="cluster_legend") as box:
            box.attr(
                label="legend",
                style="rounded",
                color="#9AA0A6",
                fontsize="10",
                fontname=FONT,
                **{"class": "legend"},
            )
            firsts = []
            for start in range(0, len(entries), per_row):
                with box.subgraph() as row:
                    row.attr(rank="same")
                    for i, (attrs, text, edge) in enumerate(entries[start : start + per_row]):
                        node = "legend/%d" % (start + i)
                        if edge is None:
                            row.node(node, text, fontsize="9", **attrs)
                        else:  # a sample of the line: colour and dash pattern
                            row.node(node, _edge_sample(edge, text), shape="plaintext")
                firsts.append("legend/%d" % start)
            for a, b in zip(firsts, firsts[1:]):
                box.edge(a, b, style="invis")
        return self.graph


def _edge_sample(attrs, text):
    """An HTML-like label drawing an edge style as text: ``- - -▶ link: ...``."""
    line = {"dashed": "&#8211; &#8211; &#8211;", "dotted": "&#183; &#183; &#183; &#183;"}.get(
        (attrs.get("style") or "").split(",")[0], "&#8212;&#8212;&#8212;"
    )
    head = "" if attrs.get("arrowhead") == "none" else "&#9654;"
    weight = "<b>%s</b>" if float(attrs.get("penwidth", "1")) > 1 else "%s"
    return '<<font color="%s" point-size="10">%s</font><font point-size="9">  %s</font>>' % (
        attrs.get("color", "#5F6368"),
        weight % (line + head),
        html_text(text),
    )


class _Cluster:
    def __init__(self, context, label, attrs):
        self._context = context
        self._label = label
        self._attrs = attrs

    def __enter__(self):
        sub = self._context.__enter__()
        sub.attr(label=self._label, fontname=FONT, fontsize="12", **self._attrs)
        return sub

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


def op_label(op, index):
    """net_drawer's label, ``"<name>/<Type> (op#<i>)"``, wrapped to stay narrow."""
    text = "%s (op#%d)" % (op.type, index)
    return wrap(op.name + "/" + text, 28) if op.name else text
