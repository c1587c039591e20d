"""``backward_timeline(op, T)``: which gradient rows each backward step reads and writes.

The backward pass of a RecurrentNetwork runs its backward step net for
t = T-1 down to 0. Each run is wired to rows of *gradient* tensors the way
the forward run is wired to rows of the state tensors, by the
``backward_link_*`` arguments:

===========================  ===============================  =================
``<state>_grad`` row         written / accumulated             read by
===========================  ===============================  =================
T                            ``+= GO`` of ``_last`` (once)     backward step T-1
t+1 (t < T-1)                backward step t+1 (offset 0),     backward step t
                             ``+= GO_all[t]`` before step t    (offset 1)
0                            backward step 0                   the initial state's
                                                               gradient
===========================  ===============================  =================

and each step also *reads forward values*: the state rows its forward links
viewed (``hidden_t_prev`` = row t, ``hidden_t`` = row t+1), the blobs its
forward step kept in step workspace t (the scratches), and the parameters.
Parameter gradients do not live in rows: every step adds its part into one
blob (``w_grad += w_grad_tmpstep``, the Sums the C++ op appends).

The drawing runs top to bottom: one box per backward step, left to right in
the order they *run* (t = T-1 first), the gradient tensors below them row by
row, and the output gradients (GO) and parameter gradients at the sides. The
boxes are single nodes on one rank chained by invisible edges, which fixes
their order (Graphviz would otherwise order them to save crossings). On a
page (and in the time stepper's frames) the gradient tensors come first, the
steps under them: the rows a step touches sit right under the stepper's
slider, and a highlighted page frame (the stepper's) draws only the step that
runs then, compactly (short tensor names, tight cells), right under the tables
it touches: the box and its rows fit on one screen. The last row of each
state gradient says it is zeroed before the loop (no step writes it), and a
state gradient nothing is added into says why (its outputs are not in
``outputs_with_grads``).
"""

from .. import core
from ..errors import DrawingError, op_context
from . import sizing
from .canvas import Canvas
from .rnn_op import ACCUMULATE_OP, RecurrentOp
from .style import BLOB_KINDS, html_text, wrap_name
from .timeline import HIGHLIGHT, highlight_cell

_ACCUM_FILL = "#F6C7C3"
#: On a page a long blob name breaks after a '/' at about this many characters
#: (never after a '_': ``lstm/lstm/`` + ``hidden_t_prev_states``, not ``hidden_t_`` +
#: ``prev_states``).
NAME_CHARS = 26
#: A stepper frame's tables are set this tight (cell padding, pt), so the step's
#: box and the rows it touches fit on one screen under the stepper's controls.
PAD_FRAME = 2
_READ_FILL = "#E8F0FE"


def _step_label(
    t, order, T, ports, forward_reads, scratches, param_grads, now=False, sep=", ", pad=3
):
    """One backward step as an HTML-like table; a port on each gradient row."""
    head = "backward, timestep t = %d" % t
    runs = "runs %s of %d" % (_ordinal(order + 1), T)
    colour = "#FBBC04" if now else BLOB_KINDS["backward_step"][0]["fillcolor"]
    rows = [
        '<tr><td colspan="2" bgcolor="%s"><b>%s</b><br/><font point-size="8">%s</font></td></tr>'
        % (colour, html_text(head), runs)
    ]
    for port, verb, blob, where in ports:
        rows.append(
            '<tr><td port="%s" align="left" bgcolor="%s">%s</td><td align="left">%s</td></tr>'
            % (port, _READ_FILL if verb == "reads" else "#FFFFFF", _lines(blob), _lines(where))
        )
    if forward_reads:
        left = '<br align="left"/>'
        rows.append(
            '<tr><td colspan="2" align="left"><font point-size="9">reads forward:%s%s%s'
            "</font></td></tr>" % (left, left.join(_lines(x, left) for x in forward_reads), left)
        )
    if scratches:
        rows.append(
            '<tr><td colspan="2" align="left"><font point-size="9">'
            "step workspace %d keeps: %s</font></td></tr>" % (t, _lines(sep.join(scratches)))
        )
    if param_grads:
        rows.append(
            '<tr><td port="params" colspan="2" align="left" bgcolor="%s"><font point-size="9">'
            "+= into: %s</font></td></tr>" % (_ACCUM_FILL, _lines(sep.join(param_grads)))
        )
    return '<table border="0" cellborder="1" cellspacing="0" cellpadding="%d">%s</table>' % (
        pad,
        "".join(rows),
    )


def _short(tensor):
    """A tensor's name without its scope (``lstm/lstm/hidden_t_prev_states_grad`` ->
    ``hidden_t_prev_states_grad``): a stepper frame's step box names rows by it, its
    table above giving the full name."""
    return tensor.rsplit("/", 1)[-1]


def _lines(text, br='<br align="left"/>'):
    """``text`` for an HTML-like cell, its line breaks kept."""
    return br.join(html_text(line) for line in text.split("\n"))


def _ordinal(n):
    return "%d%s" % (n, {1: "st", 2: "nd", 3: "rd"}.get(n if n < 20 else n % 10, "th"))


def _grad_table(title, n_rows, writers, readers, added, final, now=None, index=0, note="", pad=3):
    fill = BLOB_KINDS["gradient"][0]["fillcolor"]
    head = "".join(
        '<td bgcolor="%s"><b>%s</b></td>' % (fill, h)
        for h in ("row", "written by", "read by", "+= accumulated")
    )
    rows = [
        '<tr><td colspan="4" bgcolor="%s"><b>%s</b></td></tr><tr>%s</tr>'
        % (fill, _lines(title, "<br/>"), head)
    ]
    now = now or {}
    for r in range(n_rows):
        mark = highlight_cell(now[r], index, r, "%s row %d" % (now[r], r)) if r in now else ""
        fill = ' bgcolor="%s"' % HIGHLIGHT[now[r]] if r in now else ""
        cells = ['<td port="r%d"%s>%d</td>' % (r, mark, r)]
        for texts in (writers.get(r, []), readers.get(r, []) + final.get(r, [])):
            cells.append(
                '<td align="left"%s>%s</td>'
                % (fill, "<br/>".join(_lines(x) for x in texts) or "&#8212;")
            )
        extra = added.get(r, [])
        cells.append(
            '<td port="a%d" align="left" bgcolor="%s">%s</td>'
            % (r, _ACCUM_FILL if extra else "#FFFFFF", "<br/>".join(_lines(x) for x in extra))
        )
        rows.append("<tr>%s</tr>" % "".join(cells))
    if note:
        rows.append('<tr><td colspan="4" align="left">%s</td></tr>' % _lines(note))
    return '<table border="0" cellborder="1" cellspacing="0" cellpadding="%d">%s</table>' % (
        pad,
        "".join(rows),
    )


def backward_plan(op, T):
    """What each backward step touches, as data (the drawing and the stepper read it).

    Returns ``(steps, tensors)``: ``steps[t]`` is a dict with ``reads`` and
    ``writes`` (lists of ``(gradient tensor, row, step-net blob)``),
    ``forward`` (forward ``(state tensor, row, blob)`` it reads), ``scratch``
    (blobs kept in step workspace t) and ``params`` (parameter gradients it
    adds into); ``tensors`` maps each gradient tensor to its number of rows.
    """
    rnn = RecurrentOp(op)
    if not isinstance(T, int) or T < 1:
        raise DrawingError(
            "%s: backward_timeline needs a sequence length T >= 1, got %r" % (op_context(op), T)
        )
    cpp = rnn.cpp_backward_step_net()
    _, versions = core.get_ssa(cpp.net)
    _, forward_versions = core.get_ssa(rnn.step_net)
    read_by_backward = {name for o in cpp.net.op for name in o.input}
    lengths = {}
    for link in rnn.backward_links:
        forward_external = link.external[: -len("_grad")]
        lengths[link.external] = T if forward_external == rnn.sequence_input else T + 1
    linked = {l.internal for l in rnn.links}
    params = {rnn.inputs[i] for i in rnn.params}
    steps = {}
    for t in range(T):
        step = {"reads": [], "writes": [], "forward": [], "scratch": [], "params": []}
        for link in rnn.backward_links:
            row = t + link.offset
            written = versions.get(link.internal, 0) > 0
            step["writes" if written else "reads"].append((link.external, row, link.internal))
        for link in rnn.links:
            if link.internal in read_by_backward:
                step["forward"].append((link.external, t + link.offset, link.internal))
        step["scratch"] = sorted(
            name
            for name in read_by_backward
            if forward_versions.get(name, 0) > 0 and name not in linked and name not in params
        )
        step["params"] = [grad for _, grad, _ in rnn.param_gradient_names()]
        steps[t] = step
    return rnn, cpp, steps, lengths


def backward_timeline(op, T=3, highlight=None, width=None):
    """The backward pass of RecurrentNetwork ``op`` over a sequence of length ``T``.

    ``highlight=t`` colours the gradient rows backward step t reads and
    writes (one frame of the time stepper). ``width="page"``
    (:mod:`~caffe2rnn.viz.sizing`): the steps one under the other in the order
    they run, then the gradient tensors, then the parameter gradients; long
    cells break their lines."""
    page = sizing.check(width) == "page"
    # a stepper frame: one step, drawn compactly under the tables it touches
    frame = page and highlight is not None
    rnn, cpp, steps, lengths = backward_plan(op, T)
    if highlight not in (None, *range(T)):
        raise DrawingError(
            "%s: highlight must be a step in 0..%d, got %r" % (op_context(op), T - 1, highlight)
        )
    now = {}
    if highlight is not None:
        for role in ("reads", "writes"):
            for tensor, row, _ in steps[highlight][role]:
                now.setdefault(tensor, {})[row] = role[:-1]
    canvas = Canvas(
        "backward_timeline_" + rnn.name,
        (
            "%s backward over T = %d steps: the gradient tensors row by row,\n"
            "then the step that runs now (they run t = %d first)"
            if page and highlight is not None
            else "%s backward over T = %d steps: the gradient tensors row by row,\n"
            "then the steps top to bottom in the order they run (t = %d first)"
            if page
            else "%s backward over T = %d steps: the gradient rows each step reads and writes,\n"
            "steps left to right in the order they run (t = %d first)"
        )
        % (rnn.called, T, T - 1),
        "TB",
        width,
    )
    if highlight is not None:
        canvas.swatch(HIGHLIGHT["read"], "row read by backward step %d" % highlight)
        canvas.swatch(HIGHLIGHT["write"], "row written by backward step %d" % highlight)
    gap = "\n" if page and not frame else " "  # where a page breaks a long cell

    def name(text):  # and how it breaks a long name: after '/' only, never inside a name
        return wrap_name(text, NAME_CHARS) if page else text

    writers, readers = {}, {}
    for t, step in steps.items():
        for tensor, row, blob in step["writes"]:
            writers.setdefault(tensor, {}).setdefault(row, []).append(
                "step %d: %s" % (t, name(blob))
            )
        for tensor, row, blob in step["reads"]:
            readers.setdefault(tensor, {}).setdefault(row, []).append(
                "step %d: %s" % (t, name(blob))
            )

    # Output gradients (GO) added into state-gradient rows.
    added, go_nodes = {}, []
    accumulate = [o for o in cpp.net.op if o.type == ACCUMULATE_OP]
    for o in accumulate:
        go, grad = o.input[1], o.input[2]
        for t in range(T):
            added.setdefault(grad, {}).setdefault(t + 1, []).append(
                "%s[%d]%s(before step %d)" % (name(go), t, gap, t)
            )
        # an arrow into every row it is added into: rows 1 … T
        go_nodes.append((go, grad, range(1, T + 1), "+= row t+1 before step t"))
    for go, grad in cpp.last_row_grads:
        added.setdefault(grad, {}).setdefault(T, []).append(
            "%s%s(once, before the loop)" % (name(go), gap)
        )
        go_nodes.append((go, grad, [T], "+= row T"))
    final = {}
    for state in rnn.states:
        grad = state + "_grad"
        if grad in lengths:
            final.setdefault(grad, {})[0] = [
                "\u2192 gradient of %s (initial state)" % rnn.initial_state(state)
            ]
            # no step writes the last row: the op zeroes it before the loop
            # (and adds a _last output's gradient into it, when there is one)
            writers.setdefault(grad, {}).setdefault(lengths[grad] - 1, []).insert(
                0, "zeroed before the loop"
            )
    notes = {}
    for grad in lengths:
        state = grad[: -len("_grad")]
        if state in rnn.states and not added.get(grad):
            outputs = [a.dst for a in rnn.aliases if a.src == state]
            notes[grad] = "+= nothing: %s get%s no gradient%s(outputs_with_grads = [%s])" % (
                ", ".join(name(o) for o in outputs) or "its outputs",
                "s" if len(outputs) == 1 else "",
                gap,
                ", ".join(str(i) for i in rnn.outputs_with_grads),
            )

    def draw_tensors():
        for index, (tensor, n_rows) in enumerate(lengths.items()):
            with canvas.part("tensor%d" % index) as part:
                canvas.table(
                    ("grad/", tensor),
                    _grad_table(
                        "%s  (%d rows)" % (name(tensor), n_rows),
                        n_rows,
                        writers.get(tensor, {}),
                        readers.get(tensor, {}),
                        added.get(tensor, {}),
                        final.get(tensor, {}),
                        now.get(tensor),
                        index,
                        notes.get(tensor, ""),
                        PAD_FRAME if frame else 3,
                    ),
                    graph=part,
                    kind="gradient",
                )
                if page:  # the output gradients added into this table, in its part
                    for go, grad, rows, label in go_nodes:
                        if grad == tensor:
                            text = name(go) + "\n" + label  # the label would widen the part
                            canvas.blob(("io/", go), text, ["external_input", "gradient"], part)
                            for row in rows:
                                canvas.edge(("io/", go), ("grad/", grad), "accumulate",
                                            head_port="a%d:e" % row)  # fmt: skip

    # On a page the gradient tensors come first: a stepper frame then shows
    # the rows a step reads and writes right under its slider.
    if page:
        draw_tensors()
    order = list(range(T - 1, -1, -1))
    # At full size the steps share one rank, left to right in run order (an
    # invisible chain fixes their order: Graphviz would otherwise order them to
    # save crossings); on a page each step is a part of the column, in run order.
    with canvas.graph.subgraph(name="steps") as top:
        top.attr(rank="same")
        for k, t in enumerate(order):
            if frame and t != highlight:
                # a stepper frame: only the step that runs now, right under the
                # tables, so its box and the rows it touches are on screen together
                continue
            step = steps[t]
            ports = []
            for verb in ("reads", "writes"):
                for tensor, row, blob in step[verb]:
                    port = "%s%d" % (verb[0], len(ports))
                    where = (
                        "%s row %d of %s" % (verb, row, _short(tensor))
                        if frame
                        else "%s row %d of%s%s" % (verb, row, gap, name(tensor))
                    )
                    ports.append((port, verb, name(blob), where))
                    step.setdefault("ports", []).append((port, verb, tensor, row))
            if frame:  # one line a state tensor: "hidden_t_prev_states rows 2, 3"
                rows_of = {}
                for x, row, _ in step["forward"]:
                    rows_of.setdefault(_short(x), []).append(str(row))
                forward = ["%s rows %s" % (x, ", ".join(r)) for x, r in rows_of.items()]
            else:
                forward = [
                    "%s = row %d of%s%s" % (name(b), row, gap, name(x))
                    for x, row, b in step["forward"]
                ]
            label = _step_label(
                t,
                k,
                T,
                ports,
                forward,
                step["scratch"],
                step["params"],
                t == highlight,
                "\n" if page and not frame else ", ",
                PAD_FRAME if frame else 3,
            )
            with canvas.part("step%d" % t) as part:
                canvas.table(
                    "bstep%d" % t, label, graph=part if page else top, kind="backward_step"
                )
    if not page:
        canvas.chain(["bstep%d" % t for t in order], weight="10")
        draw_tensors()

    if not page:
        # Row-level edges (5 per step for an LSTM) would hide the tables; each
        # step box and each table row names its rows instead. Invisible edges
        # keep the tables under the steps that use them.
        for tensor in lengths:
            canvas.invisible("bstep%d" % order[len(order) // 2], ("grad/", tensor))
        for go, grad, rows, label in go_nodes:
            canvas.blob(("io/", go), canvas.wrap(go), ["external_input", "gradient"])
            for k, row in enumerate(rows):
                canvas.edge(("io/", go), ("grad/", grad), "accumulate", label if k == 0 else None,
                            head_port="a%d:e" % row)  # fmt: skip
    params = steps[0]["params"]
    if params:
        with canvas.part("params") as part:
            canvas.blob(
                "io/param_grads",
                "parameter gradients: every step adds its part\n(w_grad += w_grad_tmpstep)\n"
                + "\n".join(map(name if page else canvas.wrap, params)),
                ["gradient", "external_output"],
                part,
            )
        if not page:
            canvas.invisible("bstep%d" % order[-1], "io/param_grads")
    graph = canvas.finish()
    if page:
        sizing.with_full_size(graph, lambda: backward_timeline(op, T, highlight))
    return graph
