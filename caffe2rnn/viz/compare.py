"""``compare(versions, cell)``: the historical versions' ops side by side.

One table: a row per argument of the ``RecurrentNetwork`` op (plus its
inputs and outputs), a column per version of ``recurrent_net``, differing
rows highlighted. The values come from :func:`caffe2rnn.history.compare.compare`,
which builds the cell with each version under its own era; step nets are
summarised by their op types (the full nets are what :func:`recurrent`
draws), so the table shows *what* changed and the other views show how.

Shading follows what a reader can see: a cell is shaded when its text
differs from its left neighbour's, a row when any cell is. A step net that
changed where its summary does not look (an op's outputs, its arguments)
says so in its text (``vs v2: op#0 outputs; ...``), so a real change is never
hidden; a difference the text does not show (a net's name) is never shaded.
A list of links (or aliases) whose entries only moved -- the same
``(internal, external, offset)`` triples in another order, as
``backward_link_*`` from v1 to april -- is the same set of links: its cells
say "reordered" and are not shaded. The drawing says all this in a legend.
"""

import textwrap
from itertools import zip_longest

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


_OP_FIELDS = (("type", "type"), ("input", "inputs"), ("output", "outputs"), ("engine", "engine"),
               ("device_option", "device"), ("control_input", "control inputs"),
               ("is_gradient_op", "is_gradient_op"))  # fmt: skip


def net_changes(net, previous):
    """What differs in step net ``net`` from ``previous``, in the words of an op
    list: ``["op#0 outputs", "op#1 args +order", "external inputs"]`` (the net's
    name is not counted: it changes nothing the op runs)."""
    changes = []
    for i, (old, new) in enumerate(zip_longest(previous.op, net.op)):
        if old == new:
            continue
        if old is None or new is None:
            changes.append("op#%d %s" % (i, "added" if old is None else "removed"))
            continue
        what = [words for field, words in _OP_FIELDS if getattr(old, field) != getattr(new, field)]
        old_args = {a.name: a for a in old.arg}
        new_args = {a.name: a for a in new.arg}
        args = ["+" + n for n in new_args if n not in old_args]
        args += ["-" + n for n in old_args if n not in new_args]
        args += [n for n in new_args if n in old_args and new_args[n] != old_args[n]]
        if args:
            what.append("args " + " ".join(args))
        changes.append("op#%d %s" % (i, ", ".join(what)))
    for field, words in (("external_input", "external inputs"),
                         ("external_output", "external outputs")):  # fmt: skip
        if getattr(net, field) != getattr(previous, field):
            changes.append(words)
    return changes


def _cell_text(value, width=46, previous=None, previous_name=""):
    """A readable, bounded summary of one argument value; a step net that
    changed from ``previous`` (the version ``previous_name``'s) names what."""
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
        if isinstance(previous, caffe2_pb2.NetDef):
            changes = net_changes(value, previous)
            if changes:
                text += "; vs %s: %s" % (previous_name, "; ".join(changes))
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


#: Arguments read together, entry by entry: one link (or alias) is one column of all.
GROUPS = (
    ("link_internal", "link_external", "link_offset", "link_window"),
    ("backward_link_internal", "backward_link_external", "backward_link_offset",
     "backward_link_window"),
    ("alias_src", "alias_dst", "alias_offset"),
)  # fmt: skip

REORDERED = " (reordered: the same links)"

#: How a title names an example cell: the versions can only build the April API's.
CELL_WORDS = {"lstm": "the April 2017 API's recurrent.LSTM"}


def reordered(rows):
    """``{argument: {version index}}``: where a group of arguments (:data:`GROUPS`)
    holds, in version k, the same entries as in version k - 1, only in another order."""
    by_name = {row.argument: row for row in rows}
    found = {}
    for group in GROUPS:
        members = [by_name[name] for name in group if name in by_name]
        if not members:
            continue
        n = len(members[0].values)
        for k in range(1, n):
            columns = []
            for version in (k - 1, k):
                values = [m.values[version] for m in members]
                if any(not isinstance(v, list) for v in values):
                    break
                columns.append(list(zip(*values)))
            else:
                old, new = columns
                if old != new and sorted(map(str, old)) == sorted(map(str, new)):
                    for member in members:
                        if member.values[k] != member.values[k - 1]:
                            found.setdefault(member.argument, set()).add(k)
    return found


def visible(versions, row, width, moved=()):
    """``(texts, shades, differs)`` of one row as shown: each version's text,
    each cell's colour and whether the row differs, all decided by what the
    texts say. A cell is :data:`CHANGED` when its summary differs from its left
    neighbour's or it names a change of its own (``vs v2: ...``); a row
    :data:`DIFFERS` when any cell changed. The versions in ``moved`` hold the
    entries of the version before them, only reordered (:func:`reordered`): said
    in the text, not shaded."""
    previous = (None,) + tuple(row.values[:-1])
    names = ("",) + tuple(versions[:-1])
    texts = [_cell_text(v, width, p, n) for v, p, n in zip(row.values, previous, names)]
    summaries = [_cell_text(v, width) for v in row.values]
    changed = [False] + [
        (summary != left or text != summary) and k not in moved
        for k, (left, summary, text) in enumerate(zip(summaries, summaries[1:], texts[1:]), 1)
    ]
    for k in moved:
        texts[k] += html_text(REORDERED)
    differs = any(changed)
    colour = DIFFERS if differs else SAME
    shades = [CHANGED if c else colour for c in changed]
    return texts, shades, differs


def _shown(versions, rows, width, only_differences):
    """The rows to draw with their visible texts and shades."""
    moved = reordered(rows)
    shown = [(row,) + visible(versions, row, width, moved.get(row.argument, ())) for row in rows]
    return [s for s in shown if s[3] or not only_differences]


#: The legend every comparison carries: what its shades mean.
LEGEND = (
    (CHANGED, "changed from the version to its left"),
    (DIFFERS, "this argument differs between versions"),
    (SAME, "the same in every version; a list whose entries only moved is the same"),
)


#: Values a reader meets in the table without a word about them elsewhere:
#: (a piece of a cell's text, what it means). Said under the legend when shown.
VALUE_NOTES = (
    (
        "step_workspaces_",
        "step_workspaces_<n> (v1): 22b4533f0 (2017-03-14) numbered the step workspaces' "
        "blob with a module-global counter, so a training and a test net of one model "
        "would not share (and race on) one; 89ea32b11 (2017-04-07) dropped the number.",
    ),
    (
        "type 'rnn'",
        "type 'rnn' (v3): recurrent_net marks the step net 'rnn' while it builds the op "
        "(43084f228, 2017-05-01) and the C++ op then runs it with its RNN executor, "
        "single-threaded in E5 (recurrent_network_op.h at 0cdd09da6); from dc775484e "
        "(2017-09-06) the argument enable_rnn_executor says so instead.",
    ),
)


def _value_notes(shown):
    """The :data:`VALUE_NOTES` whose piece appears in a shown cell."""
    texts = " ".join(html_text(t) + " " + t for row in shown for t in row[1])
    return [note for piece, note in VALUE_NOTES if html_text(piece) in texts]


def _legend_rows(columns, notes=(), width=72):
    """The legend as table rows spanning ``columns`` cells, then the ``notes``."""
    rows = [
        '<tr><td bgcolor="%s"> </td><td colspan="%d" align="left">%s</td></tr>'
        % (colour, columns - 1, html_text(text))
        for colour, text in LEGEND
    ]
    for note in notes:
        lines = textwrap.wrap(note, width)
        rows.append(
            '<tr><td colspan="%d" align="left">%s<br align="left"/></td></tr>'
            % (columns, '<br align="left"/>'.join(html_text(line) for line in lines))
        )
    return "".join(rows)


def table(versions, rows, title, only_differences=False):
    """A Digraph holding one HTML-like table of ``rows`` (history.compare.Row).

    Rows whose texts differ anywhere are shaded; within them, the cell of each
    version whose text changed from the version to its left is darker, so
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
    shown = _shown(versions, rows, 46, only_differences)
    for row, texts, shades, _ in shown:
        cells = "".join(
            '<td bgcolor="%s" align="left">%s</td>' % (shade, text)
            for shade, text in zip(shades, texts)
        )
        body.append(
            '<tr><td bgcolor="%s" align="left"><b>%s</b></td>%s</tr>'
            % (shades[0], html_text(row.argument), cells)
        )
    label = (
        '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
        "<tr>%s</tr>%s</table>>" % (header, "".join(body))
    )
    graph.node(
        "legend",
        label='<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">%s</table>>'
        % _legend_rows(2, _value_notes(shown), 96),
        shape="plaintext",
        fontname=FONT,
        fontsize="9",
        **{"class": "legend"},
    )
    graph.edge("table", "legend", style="invis")
    graph.node(
        "table",
        label=label,
        shape="plaintext",
        fontname=FONT,
        fontsize="10",
        **{"class": "compare"},
    )
    return graph


def page_tables(versions, rows, title, only_differences=False):
    """The page layout of :func:`table`: one small table per argument (a row
    per version, the value next to it), two side by side, the pairs one under
    the other (:class:`~caffe2rnn.viz.page.PageGraph`). Same shading: a changed value is
    darker than the rest of a differing argument."""
    attrs = ({"fontname": FONT}, {"fontname": FONT, "fontsize": "10"}, {})
    heading = graphviz.Digraph("compare_title", graph_attr={"label": title, "labelloc": "t",
                                                             "fontname": FONT})  # fmt: skip
    parts = [heading]
    shown = _shown(versions, rows, 40, only_differences)
    for i, (row, texts, shades, _) in enumerate(shown):
        body = "".join(
            '<tr><td bgcolor="%s" align="left"><b>%s</b></td><td bgcolor="%s" align="left">%s</td>'
            "</tr>" % (HEADER, html_text(version), shade, text)
            for version, shade, text in zip(versions, shades, texts)
        )
        label = (
            '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
            '<tr><td colspan="2" bgcolor="%s"><b>%s</b></td></tr>%s</table>>'
            % (shades[0], html_text(row.argument), body)
        )
        if i % 2 == 0:  # two tables a part, side by side (each is narrow)
            parts.append(
                graphviz.Digraph("compare_%d" % i, graph_attr=attrs[0], node_attr=attrs[1])
            )
        parts[-1].node("table%d" % i, label=label, shape="plaintext", **{"class": "compare"})
    key = graphviz.Digraph("compare_legend", graph_attr=attrs[0], node_attr=attrs[1])
    key.node(
        "legend",
        label='<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">%s</table>>'
        % _legend_rows(2, _value_notes(shown)),
        shape="plaintext",
        **{"class": "legend"},
    )
    parts.append(key)
    return PageGraph("compare", parts, *attrs)


def compare(versions, cell="lstm", only_differences=False, width=None):
    """The ops ``versions`` of ``recurrent_net`` build for ``cell``, as a table.

    ``cell`` is a name in :data:`caffe2rnn.history.cells.HISTORICAL` (or a Cell);
    rows whose shown texts differ between versions are highlighted, or alone
    with ``only_differences``. ``width="page"`` draws one table per argument,
    one under the other (:func:`page_tables`), for a text column.
    """
    from ..history.compare import compare as compare_rows

    rows = compare_rows(list(versions), cell)
    name = cell if isinstance(cell, str) else cell.name
    what = CELL_WORDS.get(name, "the '%s' cell" % name)
    title = "RecurrentNetwork arguments of %s: %s (differences shaded)" % (
        what,
        " vs ".join(versions),
    )
    if sizing.check(width) == "page":
        graph = page_tables(
            list(versions), rows, textwrap.fill(title, sizing.PAGE_TITLE_CHARS), only_differences
        )
        return sizing.with_full_size(
            graph, lambda: table(list(versions), rows, title, only_differences)
        )
    return table(list(versions), rows, title, only_differences)
