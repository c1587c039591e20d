"""``compare(versions, cell)``: the historical versions' ops side by side.

One table: a row per argument of the ``RecurrentNetwork`` op (plus its
inputs and outputs), a column per version of ``recurrent_net``, differing
rows highlighted. The values come from :func:`caffe2rnn.history.compare.compare`,
which builds the cell with each version under its own era; step nets are
summarised by their op types (the full nets are what :func:`recurrent`
draws), so the table shows *what* changed and the other views show how.
"""

import textwrap

import graphviz

from ..proto import caffe2_pb2
from . import sizing
from .page import PageGraph
from .style import FONT, html_text

DIFFERS = "#FCE8E6"  # rows whose values differ between versions
CHANGED = "#F6AEA9"  # the cell where a value changed from the previous version
SAME = "#FFFFFF"
HEADER = "#E8EAED"
ABSENT = "—"


def _cell_text(value, width=46):
    """A readable, bounded summary of one argument value."""
    if value is None:
        return ABSENT
    if isinstance(value, caffe2_pb2.NetDef):
        types = [op.type for op in value.op]
        text = "type '%s', %d ops: %s; %d external inputs" % (
            value.type,
            len(types),
            ", ".join(types),
            len(value.external_input),
        )
    elif isinstance(value, list):
        text = "[%s]" % ", ".join(str(v) for v in value)
    else:
        text = str(value)
    lines, line = [], ""
    for word in text.split(" "):  # wrap on spaces, then hard-wrap long words
        while len(word) > width:
            word, rest = word[:width], word[width:]
            lines.append((line + " " + word).strip())
            line, word = "", rest
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = (line + " " + word).strip()
    lines.append(line)
    return "<br/>".join(html_text(l) for l in lines[:8]) + ("<br/>…" if len(lines) > 8 else "")


def table(versions, rows, title):
    """A Digraph holding one HTML-like table of ``rows`` (history.compare.Row).

    Rows that differ anywhere are shaded; within them, the cell of each
    version whose value changed from the version to its left is darker, so
    reading left to right shows when each change happened.
    """
    graph = graphviz.Digraph(
        "compare", graph_attr={"label": title, "labelloc": "t", "fontname": FONT}
    )
    header = "".join(
        '<td bgcolor="%s"><b>%s</b></td>' % (HEADER, html_text(v))
        for v in ["argument"] + list(versions)
    )
    body = []
    for row in rows:
        colour = DIFFERS if row.differs else SAME
        shades = [colour] + [
            CHANGED if v != previous else colour for previous, v in zip(row.values, row.values[1:])
        ]
        cells = "".join(
            '<td bgcolor="%s" align="left">%s</td>' % (shade, _cell_text(v))
            for shade, v in zip(shades, row.values)
        )
        body.append(
            '<tr><td bgcolor="%s" align="left"><b>%s</b></td>%s</tr>'
            % (colour, html_text(row.argument), cells)
        )
    label = (
        '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
        "<tr>%s</tr>%s</table>>" % (header, "".join(body))
    )
    graph.node(
        "table",
        label=label,
        shape="plaintext",
        fontname=FONT,
        fontsize="10",
        **{"class": "compare"},
    )
    return graph


def page_tables(versions, rows, title):
    """The page layout of :func:`table`: one small table per argument (a row
    per version, the value next to it), two side by side, the pairs one under
    the other (:class:`~caffe2rnn.viz.page.PageGraph`). Same shading: a changed value is
    darker than the rest of a differing argument."""
    attrs = ({"fontname": FONT}, {"fontname": FONT, "fontsize": "10"}, {})
    heading = graphviz.Digraph("compare_title", graph_attr={"label": title, "labelloc": "t",
                                                             "fontname": FONT})  # fmt: skip
    parts = [heading]
    for i, row in enumerate(rows):
        colour = DIFFERS if row.differs else SAME
        shades = [colour] + [
            CHANGED if v != previous else colour for previous, v in zip(row.values, row.values[1:])
        ]
        body = "".join(
            '<tr><td bgcolor="%s" align="left"><b>%s</b></td><td bgcolor="%s" align="left">%s</td>'
            "</tr>" % (HEADER, html_text(version), shade, _cell_text(value, 40))
            for version, shade, value in zip(versions, shades, row.values)
        )
        label = (
            '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
            '<tr><td colspan="2" bgcolor="%s"><b>%s</b></td></tr>%s</table>>'
            % (colour, html_text(row.argument), body)
        )
        if i % 2 == 0:  # two tables a part, side by side (each is narrow)
            parts.append(
                graphviz.Digraph("compare_%d" % i, graph_attr=attrs[0], node_attr=attrs[1])
            )
        parts[-1].node("table%d" % i, label=label, shape="plaintext", **{"class": "compare"})
    return PageGraph("compare", parts, *attrs)


def compare(versions, cell="lstm", only_differences=False, width=None):
    """The ops ``versions`` of ``recurrent_net`` build for ``cell``, as a table.

    ``cell`` is a name in :data:`caffe2rnn.history.cells.HISTORICAL` (or a Cell);
    rows that differ between versions are highlighted, or alone with
    ``only_differences``. ``width="page"`` draws one table per argument, one
    under the other (:func:`page_tables`), for a text column.
    """
    from ..history.compare import compare as compare_rows

    rows = compare_rows(list(versions), cell)
    if only_differences:
        rows = [r for r in rows if r.differs]
    name = cell if isinstance(cell, str) else cell.name
    title = "RecurrentNetwork arguments of the '%s' cell: %s (differences shaded)" % (
        name,
        " vs ".join(versions),
    )
    if sizing.check(width) == "page":
        graph = page_tables(list(versions), rows, textwrap.fill(title, sizing.PAGE_TITLE_CHARS))
        return sizing.with_full_size(graph, lambda: table(list(versions), rows, title))
    return table(list(versions), rows, title)
