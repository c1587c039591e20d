"""The legend of a drawing: the styles it used, drawn as they were, and what it left out.

:meth:`caffe2rnn.viz.canvas.Canvas.finish` collects the entries (an op's look,
a blob's look, an edge's look, each with its text). Beside a full-size figure
:func:`draw` lays them out as nodes in a box, four a row. Under a page figure
:func:`draw_compact` writes them as one small table, a few lines tall: each
entry a swatch (the fill, border and dash of the look, a word in it) and its
text, as many a line as :data:`~caffe2rnn.viz.sizing.LEGEND_CHARS` characters
allow, then the page view's notes (what it abbreviated) in one paragraph.
"""

import textwrap

from . import sizing
from .style import FONT, dot_text, html_text

#: The key of an entry's node attributes that names the word in its swatch (a
#: highlight's "row"); never passed to Graphviz.
WORD = "legend_word"


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
                        shown = {k: v for k, v in attrs.items() if k != WORD}
                        row.node(node, dot_text(text), fontsize="9", **shown)
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


#: The word written in a swatch, by look.
_SWATCH_WORD = {"op": "op", "edge": "", "blob": "blob"}


def draw_compact(graph, entries, notes, node_id):
    """The page legend: one HTML-like table node ``legend/table``, a line of
    (swatch, text) pairs per row (each line its own table, so swatches keep
    their size), then the notes. Returns the node id."""
    lines, line, chars = [], [], 0
    # A highlight's colours first, as coloured blocks in one line of text: a
    # swatch cell alone on a short line would be stretched to the table's width
    highlights = [(attrs, text) for attrs, text, _ in entries if WORD in attrs]
    entries = [entry for entry in entries if WORD not in entry[0]]
    body = []
    if highlights:
        keys = "&#160;&#160;&#160;".join(
            '<font color="%s" point-size="11">&#9608;&#9608;</font> %s'
            % (attrs.get("fillcolor", "#FFFFFF"), _small(text))
            for attrs, text in highlights
        )
        body.append('<tr><td align="left">%s</td></tr>' % keys)
    for attrs, text, edge in entries:
        need = len(text) + 8
        if line and chars + need > sizing.COMPACT_LEGEND_CHARS:
            lines.append(line)
            line, chars = [], 0
        line.append(_swatch(attrs, edge) + '<td align="left">%s</td>' % _small(text))
        chars += need
    if line:
        lines.append(line)
    body += [
        '<tr><td align="left"><table border="0" cellspacing="2" cellpadding="1"><tr>%s</tr>'
        "</table></td></tr>" % '<td width="6"></td>'.join(cells)
        for cells in lines
    ]
    if notes:
        text = "<br/>".join(_small(part) for note in notes for part in textwrap.wrap(note, 96))
        body.append('<tr><td align="left" balign="left">%s</td></tr>' % text)
    label = '<<table border="0" cellspacing="0" cellpadding="0">%s</table>>' % "".join(body)
    node = node_id("legend/table")
    graph.node(node, label, shape="plaintext", margin="0", **{"class": "legend"})
    return node


def _small(text):
    return '<font point-size="9">%s</font>' % html_text(text)


def _swatch(attrs, edge):
    """The cell that shows a look: a line sample for an edge, else a small box
    with the node's fill, border colour and dash (rounded for an ellipse or a
    rounded box)."""
    if edge is not None:
        return "<td>%s</td>" % _line_sample(edge)
    styles = (attrs.get("style") or "").split(",")
    cell_style = [s for s in ("dashed", "dotted") if s in styles]
    if attrs.get("shape", "ellipse") == "ellipse" or "rounded" in styles:
        cell_style.insert(0, "rounded")
    fill = attrs.get("fillcolor", "#FFFFFF") if "filled" in styles else "#FFFFFF"
    op_like = attrs.get("fontcolor") == "#FFFFFF"
    word = "op" if op_like else "blob"
    return (
        '<td bgcolor="%s" color="%s" border="%s"%s><font point-size="9" color="%s"> %s </font>'
        "</td>"
        % (
            fill,
            attrs.get("color", "#202124"),
            "2" if float(attrs.get("penwidth", "1")) > 1.5 or "bold" in styles else "1",
            ' style="%s"' % ",".join(cell_style) if cell_style else "",
            "#FFFFFF" if op_like else "#202124",
            word,
        )
    )


def _line_sample(attrs):
    """An edge style as coloured text: ``- - -▶``, ``——▶`` or ``· · ·``."""
    line = {"dashed": "&#8211; &#8211;", "dotted": "&#183; &#183; &#183;"}.get(
        (attrs.get("style") or "").split(",")[0], "&#8212;&#8212;"
    )
    head = "" if attrs.get("arrowhead") == "none" else "&#9654;"
    weight = "<b>%s</b>" if float(attrs.get("penwidth", "1")) > 1 else "%s"
    return '<font color="%s" point-size="9">%s</font>' % (
        attrs.get("color", "#5F6368"),
        weight % (line + head),
    )


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
