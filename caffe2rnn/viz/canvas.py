"""The canvas every view draws on: node ids, styles by kind, escaped text, the legend.

A view names each thing it draws by a *key* (a string, or a tuple of parts
such as ``("io/", blob)``) and the canvas gives it a DOT node id:

* **injective**: two different keys never share an id. The readable form of a
  key is its parts joined, with the characters DOT or the ``graphviz`` package
  would read as syntax (``:`` starts a port, quotes, backslashes, ``<>``)
  replaced by ``_``; when that form is already taken by another key (blobs
  ``a:b`` and ``a_b``), the later one gets ``~2``, ``~3``... So
  ``fwd/lstm/hidden_t@1`` stays the id of that blob, and no two blobs merge.
* **text escaped once**: labels, edge labels, titles and tooltips go through
  :func:`~caffe2rnn.viz.style.dot_text` here and nowhere else; HTML-like
  tables are built with :func:`~caffe2rnn.viz.style.html_text` by the views.

Styles come from :mod:`caffe2rnn.viz.style`; the canvas remembers which it
used and :meth:`Canvas.finish` draws a legend of exactly those, beside the
figure at full size and below it on a page (:mod:`caffe2rnn.viz.sizing`),
with the notes a page view adds to say what it abbreviated.
"""

import contextlib
import re
import textwrap

import graphviz

from . import legend, page, sizing
from .style import (
    BLOB_KINDS,
    CLUSTER_STYLES,
    EDGE_KINDS,
    FONT,
    KIND_PRIORITY,
    OP_FAMILIES,
    accumulates_gradient,
    dot_text,
    is_gradient_op,
    op_family,
    op_label,
    wrap,
    wrap_name,
)

# Characters a node id must not contain: ':' (the graphviz package splits an
# edge end there into node and port), quotes and backslashes (DOT escapes),
# '<' and '>' (an id <...> would be HTML) and control characters.
_UNSAFE = re.compile(r'[:"\\<>\x00-\x1f\x7f]')


class Canvas:
    """A ``graphviz.Digraph`` that names nodes, styles them by kind and adds a legend.

    ``graph`` arguments let callers draw into a cluster subgraph; the legend
    still counts what was used there. ``width`` is ``"full"`` or ``"page"``
    (:mod:`caffe2rnn.viz.sizing`).
    """

    def __init__(self, name, title=None, rankdir="LR", width=None):
        self.width = sizing.check(width)
        self.page = self.width == "page"
        self.name = name
        self._families = []  # (legend text, op node attributes) in drawing order
        self._blob_kinds = []
        self._edge_kinds = []
        self._swatches = []  # (fill, border, word, text): colours that mean something here
        self._notes = []  # what a page view abbreviated, said in the legend
        self._ids = {}  # key -> node id
        self._taken = set()
        self._figure = {}  # keys of the figure's nodes (not the legend's), in drawing order
        if self.page:
            # A page figure is a column of parts (title, panels, legend), each
            # laid out on its own and stacked by caffe2rnn.viz.page.PageGraph.
            self._attrs = (
                dict(rankdir=rankdir, fontname=FONT, fontsize="12", nodesep="0.14", ranksep="0.3"),
                dict(fontname=FONT, fontsize="10", margin="0.06,0.03", height="0.3"),
                dict(fontname=FONT, fontsize="9", arrowsize="0.6"),
            )
            self._parts = []
            if title:
                heading = self._new_part("title")
                heading.attr(label=dot_text(self._title(title)), labelloc="t", fontsize="14")
            self.graph = self._new_part("main")
            return
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
            self.graph.attr(label=dot_text(title), labelloc="t", fontsize="14")
        self.graph.attr("node", fontname=FONT, fontsize="10", margin="0.06,0.03", height="0.3")
        self.graph.attr("edge", fontname=FONT, fontsize="9", arrowsize="0.6")

    def _new_part(self, name):
        graph_attr, node_attr, edge_attr = self._attrs
        part = graphviz.Digraph(
            "%s_%s" % (self.name, name),
            graph_attr=dict(graph_attr),
            node_attr=dict(node_attr),
            edge_attr=dict(edge_attr),
        )
        self._parts.append(part)
        return part

    @contextlib.contextmanager
    def part(self, name):
        """``with canvas.part(name) as graph:`` on a page, draw one part of the
        column (laid out on its own, stacked under the parts before it); no
        edge may join two parts. At full size, the drawing itself."""
        if not self.page:
            yield self.graph
            return
        previous, self.graph = self.graph, self._new_part(name)
        try:
            yield self.graph
        finally:
            self.graph = previous

    # -- names and text ------------------------------------------------------------

    def id(self, key):
        """The DOT node id of ``key`` (a string or a tuple of strings)."""
        key = _key(key)
        found = self._ids.get(key)
        if found is None:
            natural = _UNSAFE.sub("_", "".join(str(part) for part in key)) or "_"
            found, n = natural, 1
            while found in self._taken:
                n += 1
                found = "%s~%d" % (natural, n)
            self._ids[key] = found
            self._taken.add(found)
        return found

    def wrap(self, text):
        """A name broken into lines for this width: after '/'; on a page after '_' too,
        but only in a name with a part too long for a line (:func:`~.style.wrap_name`:
        ``lstm/`` + ``hidden_t_prev``, not ``lstm/hidden_t_`` + ``prev``)."""
        if self.page:
            width = sizing.WRAP["page"]
            return wrap_name(text, width, width)
        return wrap(text, sizing.WRAP[self.width], "/")

    def op_label(self, op, index):
        """net_drawer's op label, ``"<name>/<Type> (op#<i>)"``, wrapped for this width."""
        if self.page:
            return op_label(op, index, sizing.WRAP["page"] + 4, "/_")
        return op_label(op, index)

    def _title(self, title):
        if not self.page:
            return title
        lines = [textwrap.fill(line, sizing.PAGE_TITLE_CHARS) for line in title.split("\n")]
        return "\n".join(lines)

    def note(self, text):
        """Say in the legend what this drawing leaves out or abbreviates."""
        if text not in self._notes:
            self._notes.append(text)

    def swatch(self, fill, text, word="row", border="#5F6368"):
        """Say in the legend what a colour of this drawing means (a filled box
        with ``word`` in it, then ``text``): a highlight, not a blob or op kind."""
        entry = (fill, border, word, text)
        if entry not in self._swatches:
            self._swatches.append(entry)

    # -- nodes ---------------------------------------------------------------------

    def _node(self, graph, key, label, attrs):
        self._figure.setdefault(_key(key), None)
        (graph or self.graph).node(self.id(key), label, **attrs)
        return key

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

    def op(self, key, label, op, graph=None, extra_class=""):
        family = op_family(op.type)
        if family == "accumulate" and not accumulates_gradient(op):
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
        if (text, tuple(sorted(attrs.items()))) not in self._families:
            self._families.append((text, tuple(sorted(attrs.items()))))
        if extra_class:
            classes.append(extra_class)
        attrs["class"] = " ".join(classes)
        return self._node(graph, key, dot_text(label), attrs)

    def blob(self, key, label, kinds=("blob",), graph=None, tooltip=None):
        kinds = [k for k in KIND_PRIORITY if k in kinds] or ["blob"]
        attrs = dict(BLOB_KINDS["blob"][0])
        for kind in kinds:
            attrs.update(BLOB_KINDS[kind][0])
        self._note_blob(kinds, attrs)
        attrs["class"] = " ".join(["blob"] + [k for k in kinds if k != "blob"])
        if tooltip:
            attrs["tooltip"] = dot_text(tooltip)
        return self._node(graph, key, dot_text(label), attrs)

    def table(self, key, html_label, graph=None, kind="state"):
        """An HTML-like table node (state tensors drawn row by row); the caller
        escapes the text in it with :func:`~caffe2rnn.viz.style.html_text`."""
        self._note_blob([kind], {**BLOB_KINDS["blob"][0], **BLOB_KINDS[kind][0], "shape": "box"})
        attrs = {"shape": "plaintext", "margin": "0", "class": "blob table " + kind}
        return self._node(graph, key, "<%s>" % html_label, attrs)

    def text(self, key, label, graph=None, **attrs):
        """Plain text in the figure (an ellipsis standing for what is not drawn)."""
        attrs = {"shape": "plaintext", "class": "note", **attrs}
        return self._node(graph, key, dot_text(label), attrs)

    def point(self, key, graph=None, **attrs):
        """An invisible anchor node (layout only: never in the legend or a sink)."""
        node_id = self.id(key)
        (graph or self.graph).node(node_id, "", shape="point", style="invis", width="0", **attrs)
        return node_id

    def mention(self, key, graph):
        """Name an already drawn node inside ``graph`` (e.g. a ``rank=same`` group)."""
        graph.node(self.id(key))

    # -- edges and groups ----------------------------------------------------------

    def _edge(self, graph, tail, head, tail_port, head_port, attrs):
        tail_id, head_id = self.id(tail), self.id(head)
        (graph or self.graph).edge(
            tail_id + (":" + tail_port if tail_port else ""),
            head_id + (":" + head_port if head_port else ""),
            **attrs,
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
        """An edge between node keys (ports name cells of table nodes)."""
        if kind not in self._edge_kinds:
            self._edge_kinds.append(kind)
        attrs = dict(EDGE_KINDS[kind][0])
        attrs["class"] = kind
        if label:
            attrs["label"] = dot_text(label)
        if "tooltip" in extra:
            extra["tooltip"] = dot_text(extra["tooltip"])
        attrs.update(extra)
        self._edge(graph, tail, head, tail_port, head_port, attrs)

    def invisible(self, tail, head, graph=None, tail_port=None, head_port=None, **extra):
        """An edge that only places nodes (``weight``, ``constraint``...)."""
        self._edge(graph, tail, head, tail_port, head_port, {"style": "invis", **extra})

    def fold(self, keys, per_row, graph=None):
        """Lay ``keys`` (nodes dot would put side by side) out in rows of
        ``per_row``: each node sits one rank above the one ``per_row`` later."""
        keys = list(keys)
        for upper, lower in zip(keys, keys[per_row:]):
            self.invisible(upper, lower, graph)

    def chain_all(self, upper, lower, graph=None):
        """Invisible edges from every key of ``upper`` to every key of ``lower``."""
        for tail in upper:
            for head in lower:
                self.invisible(tail, head, graph)

    def chain(self, keys, graph=None, **extra):
        """Invisible edges key 0 -> key 1 -> ...: one after the other along the ranks."""
        keys = list(keys)
        for upper, lower in zip(keys, keys[1:]):
            self.invisible(upper, lower, graph, **extra)

    def below(self, name, upper, lower):
        """Put the nodes ``lower`` under the nodes ``upper`` (on a TB page)
        through one invisible gate node ``name``: upper -> gate -> lower.

        Pick the bottom nodes of the part above and the top nodes of the part
        below: an invisible edge that has to pass a cluster makes Graphviz
        route it around the cluster, which pushes whole panels sideways."""
        self.point(name)
        for key in upper:
            self.invisible(key, name)
        for key in lower:
            self.invisible(name, key)

    def drawn(self):
        """Keys of the figure's nodes drawn so far, in order."""
        return list(self._figure)

    def cluster_id(self, name):
        """The subgraph id of cluster ``name`` (``cluster_<name>``; ``lhead`` takes it)."""
        return "cluster_" + _UNSAFE.sub("_", str(name))

    def cluster(self, name, label, kind, parent=None):
        """``with canvas.cluster(...) as sub:`` draws into a labelled box
        (nested in ``parent``, another cluster, when given)."""
        sub = (parent or self.graph).subgraph(name=self.cluster_id(name))
        return _Cluster(sub, dot_text(label), CLUSTER_STYLES[kind])

    # -- the legend ----------------------------------------------------------------

    def finish(self):
        """Append the legend for what was drawn and return the Digraph.

        At full size the legend is drawn with the same node and edge
        attributes as the figure (an ellipse for a blob, a pill for a net
        input, a cylinder for a state tensor...), in a box of its own, rows of
        a few entries each. On a page it is the last part of the column, one
        compact table a few lines tall (swatches with the figures' fills,
        borders and dashes; :func:`~caffe2rnn.viz.legend.draw_compact`), its
        last lines the page view's notes.
        """
        entries = []  # (node attributes, text, edge attributes or None)
        for fill, border, word, text in self._swatches:  # a highlight's colours first
            attrs = {"shape": "box", "style": "filled", "fillcolor": fill, "color": border}
            entries.append(({**attrs, legend.WORD: word}, text, None))
        for text, attrs in self._families:  # each op look as drawn
            entries.append((dict(attrs), text, None))
        for (_, _, text), attrs in self._blob_kinds:
            entries.append((attrs, text, None))
        for kind in self._edge_kinds:
            attrs, text = EDGE_KINDS[kind]
            entries.append(({}, text, attrs))
        per_row = sizing.LEGEND_PER_ROW[self.width]
        if self.page:
            with self.part("legend"):
                legend.draw_compact(self.graph, entries, self._notes, self.id)
            parts = [part for part in self._parts if part.body or part.name.endswith("_title")]
            return page.PageGraph(self.name, parts, *self._attrs)
        legend.draw(self.graph, entries, self._notes, per_row, False, self.id)
        return self.graph


def _key(key):
    """Keys are tuples of strings; a string is a key of one part."""
    return key if isinstance(key, tuple) else (key,)


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
