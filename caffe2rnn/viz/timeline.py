"""``timeline(op, T)``: the state tensors row by row, and which step uses each row.

The question learners of RecurrentNetwork got stuck on is *which row is
which*. A state tensor ``<scope>/<cell_input>_states`` has T+1 rows (for an
initial state of one row):

=====  =================================  ============================  ===========
row    written by                         read by                       alias
=====  =================================  ============================  ===========
0      copy of the initial-state input    step 0 ``hidden_t_prev``
t+1    step t ``hidden_t`` (offset 1)     step t+1 (offset 0)           ``_all[t]``
T      step T-1 ``hidden_t``              nobody                        ``_last``
=====  =================================  ============================  ===========

Each state tensor is drawn as that table, the input sequence as a T-row
table, and each step as a small cluster of the blobs its links make views
of: an edge from ``hidden_t_prev`` of step t ends on row t (offset 0), one
from ``hidden_t`` on row t+1 (offset 1). Alias outputs hang off the first row
they view (``_all``: offset 1, ``_last``: offset -1).
"""

from contextlib import nullcontext

from .. import core
from ..errors import DrawingError, op_context
from . import sizing
from .canvas import Canvas
from .rnn_op import RecurrentOp, alias_label
from .style import BLOB_KINDS, html_text, wrap_name

_ALIAS_FILL = "#CEEAD6"
_INITIAL_FILL = "#E8EAED"
# The time stepper's highlight: rows the current step reads / writes.
HIGHLIGHT = {"read": "#AECBFA", "write": "#FDD663"}


def highlight_cell(role, tensor_index, row, text):
    """Attributes of a highlighted row-number cell: fill, an id the SVG keeps
    (Graphviz emits ``<g id="a_hl_...">`` for a cell with an id and a tooltip)
    and the tooltip itself."""
    return ' bgcolor="%s" id="hl_%s_%d_r%d" tooltip="%s" href="#"' % (
        HIGHLIGHT[role],
        role,
        tensor_index,
        row,
        html_text(text),
    )


def _rows_of(link, t):
    return range(t + link.offset, t + link.offset + link.window)


def _alias_rows(alias, n_rows):
    start = alias.offset if alias.offset >= 0 else n_rows + alias.offset
    return range(start, n_rows)


def fitted(text, fit, br="<br/>"):
    """``text`` escaped for an HTML-like label; ``fit`` (a page's wrap) breaks it
    into lines."""
    if fit is None:
        return html_text(text)
    return br.join(html_text(line) for line in fit(text).split("\n"))


#: On a page a tensor of more rows than this shows its first and last rows and the rows
#: the highlighted step touches, with one "⋮" row for the rest.
PAGE_ROWS = 7
#: The rows kept at each end of an elided table.
PAGE_ENDS = (3, 2)
#: A page table's font size (the canvas's nodes are 10 pt; a table scaled to the column
#: reads better a little larger).
PAGE_TABLE_PT = 12


def _shown_rows(n_rows, now, page):
    """The rows a table draws, in order, with None where elided rows are (on a page)."""
    if not page or n_rows <= PAGE_ROWS:
        return list(range(n_rows))
    head, tail = PAGE_ENDS
    keep = sorted(set(range(head)) | set(range(n_rows - tail, n_rows)) | set(now))
    shown = []
    for r in keep:
        if shown and r > shown[-1] + 1:
            shown.append(None)
        shown.append(r)
    return shown


def _shared_blob(entries):
    """The blob name every "step t: blob" entry of a column shares, or None."""
    names = {text.split(": ", 1)[1] for texts in entries.values() for text in texts}
    if len(names) != 1 or any(not t.startswith("step ") for v in entries.values() for t in v):
        return None
    return names.pop()


def _table(title, n_rows, writers, readers, aliases, initial=None, now=None, index=0, fit=None):
    """HTML-like label: one row per tensor row, a port ``r<i>`` on each.

    ``now`` maps rows to "read"/"write" for the step the stepper shows; ``fit``
    breaks long names into lines (on a page). On a page the table is also
    compact: a column no step uses is left out, a column whose every entry is
    the same blob names it once in its header ("step t" in its cells), and a
    long tensor shows its first and last rows with "⋮" for the rest
    (:data:`PAGE_ROWS`)."""
    now = now or {}
    page = fit is not None
    sep = '<br align="left"/>' if fit else "<br/>"
    fill = BLOB_KINDS["state"][0]["fillcolor"]
    columns = []  # (header, entries by row, the blob named in the header or None)
    for header, entries in (("written by", writers), ("read by", readers)):
        if page and not entries and not (header == "written by" and initial):
            continue
        shared = _shared_blob(entries) if page else None
        columns.append((header, entries, shared))
    head = ['<td bgcolor="%s"><b>row</b></td>' % fill]
    for header, _, shared in columns:
        text = "<b>%s</b>" % header
        if shared:
            text = "<b>%s step t's</b><br/>%s" % (header, fitted(shared, fit))
        head.append('<td bgcolor="%s">%s</td>' % (fill, text))
    head += ['<td bgcolor="%s"><b>%s</b></td>' % (_ALIAS_FILL, fitted(a.dst, fit)) for a in aliases]
    width = 1 + len(columns) + len(aliases)
    rows = [
        '<tr><td colspan="%d" bgcolor="%s"><b>%s</b></td></tr>' % (width, fill, html_text(title)),
        "<tr>%s</tr>" % "".join(head),
    ]
    shown = _shown_rows(n_rows, now, page)
    for position, r in enumerate(shown):
        if r is None:
            first, last = shown[position - 1] + 1, shown[position + 1] - 1
            rows.append(
                '<tr><td colspan="%d" bgcolor="#FFFFFF">&#8942; rows %d to %d: likewise</td></tr>'
                % (width, first, last)
            )
            continue
        if r in now:
            mark = highlight_cell(now[r], index, r, "%s row %d" % (now[r], r))
            fill = ' bgcolor="%s"' % HIGHLIGHT[now[r]]
        else:
            mark = ' bgcolor="%s"' % (_INITIAL_FILL if r == 0 and initial else "#FFFFFF")
            fill = ""
        cells = ['<td port="r%d"%s>%d</td>' % (r, mark, r)]
        for header, entries, shared in columns:
            texts = entries.get(r, [])
            if shared:
                texts = [t.split(": ", 1)[0] for t in texts]
            if header == "written by" and r == 0 and initial:
                texts = ["initial: " + initial] + texts
            cells.append(
                '<td align="left"%s>%s</td>'
                % (fill, sep.join(fitted(x, fit, sep) for x in texts) or "&#8212;")
            )
        for j, alias in enumerate(aliases):
            covered = _alias_rows(alias, n_rows)
            text = "[%d]" % (r - covered.start) if r in covered else ""
            # the port on the column's last row: the alias edge leaves from its bottom
            port = ' port="a%d"' % j if r == covered.stop - 1 else ""
            cells.append(
                '<td%s bgcolor="%s">%s</td>' % (port, _ALIAS_FILL if text else "#FFFFFF", text)
            )
        rows.append("<tr>%s</tr>" % "".join(cells))
    table = '<table border="0" cellborder="1" cellspacing="0" cellpadding="%d">%s</table>' % (
        4 if page else 3,
        "".join(rows),
    )
    return '<font point-size="%d">%s</font>' % (PAGE_TABLE_PT, table) if page else table


def _page_fit(text):
    """A table cell on a page: long names broken after '/' only, never inside a name
    (``lstm/lstm/`` + ``hidden_t_prev_states``, not ``hidden_t_`` + ``prev_states``)."""
    return wrap_name(text, 26)


def _fit_name(text, page, canvas):
    """A blob's name in a node: on a page broken after '/' only (:func:`_page_fit`)."""
    return _page_fit(text) if page else canvas.wrap(text)


def timeline(op, T=3, steps=None, rankdir="LR", highlight=None, width=None):
    """The (T+1)-row state tensors of a RecurrentNetwork op for a sequence of
    length ``T``, with the link views of each step in ``steps`` (default all)
    and the ``_all``/``_last`` aliases. ``highlight=t`` colours the rows step
    t reads and writes (one frame of the time stepper).

    ``width="page"`` (:mod:`~caffe2rnn.viz.sizing`) draws the tables one
    under the other, each with its initial state above and its aliases below,
    and no step boxes: the tables' "written by" / "read by" columns already
    name, row by row, the step and blob each link connects (the legend says so).
    """
    rnn = RecurrentOp(op)
    if not isinstance(T, int) or T < 1:
        raise DrawingError(
            "%s: timeline needs a sequence length T >= 1, got %r" % (op_context(op), T)
        )
    steps = range(T) if steps is None else list(steps)
    if any(not 0 <= t < T for t in steps) or highlight not in (None, *range(T)):
        raise DrawingError(
            "%s: steps %s (and highlight %r) must lie in 0..%d"
            % (op_context(op), list(steps), highlight, T - 1)
        )
    _, versions = core.get_ssa(rnn.step_net)
    page = sizing.check(width) == "page"
    canvas = Canvas(
        "timeline_" + rnn.name,
        "%s over T = %d steps: which row each step reads and writes" % (rnn.called, T),
        "TB" if page else rankdir,
        width,
    )
    lengths = {state: T + 1 for state in rnn.states}
    lengths[rnn.sequence_input] = T
    links = [l for l in rnn.links if l.external in lengths]

    writers, readers = {}, {}
    for link in links:
        written = versions.get(link.internal, 0) > 0
        for t in range(T):
            for r in _rows_of(link, t):
                role = writers if written else readers
                role.setdefault(link.external, {}).setdefault(r, []).append(
                    "step %d: %s" % (t, link.internal)
                )
    now = {}
    if highlight is not None:
        canvas.swatch(HIGHLIGHT["read"], "row read by step %d" % highlight)
        canvas.swatch(HIGHLIGHT["write"], "row written by step %d" % highlight)
        for link in links:
            role = "write" if versions.get(link.internal, 0) > 0 else "read"
            for r in _rows_of(link, highlight):
                now.setdefault(link.external, {})[r] = role
    for index, (tensor, n_rows) in enumerate(lengths.items()):
        is_state = tensor in rnn.states
        initial = rnn.initial_state(tensor) if is_state else None
        aliases = [a for a in rnn.aliases if a.src == tensor]
        table = ("tensor/", tensor)
        # On a page each table, with its initial state and aliases, is one
        # part of the column (the tables one under the other).
        with canvas.part("tensor%d" % index) if page else nullcontext() as part:
            canvas.table(
                table,
                _table(
                    "%s  (%d rows)" % (tensor, n_rows),
                    n_rows,
                    writers.get(tensor, {}),
                    readers.get(tensor, {}),
                    aliases,
                    initial,
                    now.get(tensor),
                    index,
                    fit=_page_fit if page else None,
                ),
                graph=part,
            )
            if initial:
                canvas.blob(
                    ("io/", initial), _fit_name(initial, page, canvas), ["external_input"], part
                )
                canvas.edge(("io/", initial), table, label="copied to row 0", head_port="r0:w")
            for j, alias in enumerate(aliases):
                rows = _alias_rows(alias, n_rows)
                text = "%s\n= rows %d..%d" % (
                    _fit_name(alias.dst, page, canvas),
                    rows.start,
                    n_rows - 1,
                )
                if page:  # the edge's label in the node: beside the table it would widen it
                    text += " (alias %+d)" % alias.offset
                canvas.blob(("io/", alias.dst), text, ["external_output"], part)
                canvas.edge(
                    table,
                    ("io/", alias.dst),
                    "alias",
                    None if page else alias_label(alias),
                    tail_port="a%d:s" % j,
                )

    if page:  # each table a part of the page's column; no step boxes (their rows say it)
        canvas.note(
            "Each row lists the steps that write and read it: in step t, a link "
            "with offset k makes the step-net blob a view of row t + k."
        )
        graph = canvas.finish()
        full = dict(steps=steps, rankdir=rankdir, highlight=highlight)
        return sizing.with_full_size(graph, lambda: timeline(op, T, **full))

    for t in steps:
        kind = "now" if t == highlight else "time"
        with canvas.cluster("step%d" % t, "timestep t = %d" % t, kind) as sub:
            for link in links:
                node = ("t%d/" % t, link.internal)
                rows = _rows_of(link, t)
                where = (
                    "row %d" % rows.start
                    if len(rows) == 1
                    else "rows %d..%d (window %d)" % (rows.start, rows[-1], link.window)
                )
                # The offset and row go in the node, not on the edge: a fan of
                # edges into one table has no room for labels.
                canvas.blob(
                    node,
                    "%s\nlink %+d: %s"
                    % (_fit_name(link.internal, page, canvas), link.offset, where),
                    ["blob"],
                    graph=sub,
                )
                # Every link edge points step -> tensor for the layout (steps
                # on one side, tensors on the other); reads are drawn reversed.
                written = versions.get(link.internal, 0) > 0
                canvas.edge(
                    node,
                    ("tensor/", link.external),
                    "link",
                    head_port="r%d:w" % rows.start,
                    **({} if written else {"dir": "back"}),
                )
    return canvas.finish()
