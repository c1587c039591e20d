"""The legend of a drawing: the styles it used, drawn as they were, and what it left out.

:meth:`caffe2rnn.viz.canvas.Canvas.finish` collects the entries (an op's look,
a blob's look, an edge's look, each with its text) and :func:`draw` lays them
out in a box of rows: four entries a row beside a full-size figure; under a
page figure three, and at most :data:`~caffe2rnn.viz.sizing.LEGEND_CHARS`
characters of text a row; then the page view's notes (what it abbreviated).
"""

import textwrap

from . import sizing
from .style import FONT, dot_text, html_text


def draw(graph, entries, notes, per_row, page, node_id):
    """Draw the legend box into ``graph``: ``entries`` are ``(node attributes,
    text, edge attributes or None)``, ``notes`` lines of text, ``node_id(key)``
    the canvas's name of each node."""
    with graph.subgraph(name="cluster_legend") as box:
        box.attr(
            label="legend",
            style="rounded",
            color="#9AA0A6",
            fontsize="10",
            fontname=FONT,
            **{"class": "legend"},
        )
        firsts = []
        for start, stop in _rows(entries, per_row, page):
            with box.subgraph() as row:
                row.attr(rank="same")
                for i, (attrs, text, edge) in enumerate(entries[start:stop]):
                    node = node_id("legend/%d" % (start + i))
                    if edge is None:
                        row.node(node, dot_text(text), fontsize="9", **attrs)
                    else:  # a sample of the line: colour and dash pattern
                        row.node(node, _edge_sample(edge, text), shape="plaintext")
                    if i == 0:
                        firsts.append(node)
        for i, text in enumerate(notes):
            node = node_id("legend/note%d" % i)
            box.node(node, dot_text(textwrap.fill(text, 60)), shape="plaintext", fontsize="9")
            firsts.append(node)
        for a, b in zip(firsts, firsts[1:]):
            box.edge(a, b, style="invis")


def _rows(entries, per_row, page):
    """(start, stop) of each legend row: ``per_row`` entries; on a page also at
    most :data:`~caffe2rnn.viz.sizing.LEGEND_CHARS` characters of text a row."""
    rows, start = [], 0
    while start < len(entries):
        stop, chars = start, 0
        while stop < len(entries) and stop - start < per_row:
            chars += len(entries[stop][1]) + 6
            if page and stop > start and chars > sizing.LEGEND_CHARS:
                break
            stop += 1
        rows.append((start, stop))
        start = stop
    return rows


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
