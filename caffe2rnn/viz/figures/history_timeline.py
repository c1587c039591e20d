"""``fig_history_timeline()``: Caffe2's recurrent networks, 2016-12 to 2018-03, then PyTorch.

A timeline read top to bottom, one row per month with a change: the eras
caffe2rnn reproduces (E0 … E7, each a bar from its commit to the next era's),
what changed in the Python (``recurrent_net``, ``rnn_cell``) and in the C++
(the operator, its executor, the link ops), and when each bug of the gallery
(B1 … B10) was fixed. Rows are in date order but not to scale. The text is
set at 11 px, a few words per event: each event's commit is in the figure's
description (``<desc>``, for a screen reader) and on the history page, not in
the drawing; the eras keep theirs, the commits everything is pinned to.

:func:`fig_history_2017` (2016-12 → 2017-06) and :func:`fig_history_2018`
(2017-07 → 2018-09, with the move into PyTorch) are its two halves, each
short enough to read beside the part of the story it belongs to; an era
that began in the first half is carried into the second as a bar from the top.

Every date and commit is Caffe2's (facebookarchive/caffe2), checked against
its history; ``tests/viz/test_viz_figures.py`` checks the eras against
:mod:`caffe2rnn.eras` and the bugs against :mod:`caffe2rnn.history.bugs`.
Sources: ``docs/concepts/history.md``, issue 32 for E7 and 2018.
"""

from dataclasses import dataclass

from ... import eras
from . import parts, style
from .svg import Canvas, Figure, text_width, wrap


@dataclass(frozen=True)
class Event:
    date: str  # YYYY-MM-DD
    lane: str  # "era", "python", "cpp", "bug"
    commit: str
    text: str


#: The eras (caffe2rnn.eras) by date: name, version, Caffe2 commit, date. E7 has
#: no ``recurrent_net`` version of its own; the figure calls it "last" (Caffe2's
#: last RNN code).
ERAS = tuple(
    (e.name, e.version or "last", e.commit, e.date)
    for e in sorted(eras.ERAS.values(), key=lambda e: e.date)
)

#: The bugs of the gallery (caffe2rnn.history.bugs) at the commit that fixed them
#: (B7's fix of 2017-05-24, ``417f74509``, took effect with ``f49200962`` on
#: 2017-06-07, so B7 is drawn there), and B8, which never shipped: the guard
#: against it came in the same commit as the working rewrite (drawn muted, as
#: "never shipped", not as a fix).
BUG_FIXES = (
    ("B1", "66ad84303", "2017-01-30", "no gradient for h0"),
    ("B2", "f81113a1a", "2017-03-18", "stale links, run 2"),
    ("B3", "96bafa3b2", "2017-03-21", "gradient lost behind a Sum"),
    ("B4", "21e9049f6", "2017-03-23", "a weight's gradient: garbage"),
    ("B5", "8e01e4c8b", "2017-04-25", "wrong on run 2"),
    ("B6", "90d756208", "2017-05-05", "recompute list dropped"),
    ("B7", "f49200962", "2017-06-07", "linked gradient overwritten (fix of 05-24 effective)"),
    ("B8", "f49200962", "2017-06-07", "never shipped: guarded in the same commit"),
    ("B9", "96e718751", "2017-08-17", "forward-only won't build"),
    ("B10", "359776004", "2017-08-17", "workspaces shrunk to 2"),
)

EVENTS = (
    Event("2016-12-20", "python", "3b190c4df", "first recurrent_net: scratch tensors"),
    Event("2017-01-24", "python", "903acaff1", "weights as input indices"),
    Event("2017-01-27", "cpp", "32d884d22", "step workspaces"),
    Event("2017-03-14", "python", "22b4533f0", "v1: outputs_with_grads"),
    Event("2017-04-11", "python", "faaafeccd", "recompute on backward"),
    Event("2017-04-18", "python", "e2efb83a7", "rnn_cell: LSTM, attention"),
    Event("2017-04-24", "python", "5cf13df48", "forward_only"),
    Event("2017-04-25", "python", "8e01e4c8b", "param_grads"),
    Event("2017-05-01", "cpp", "43084f228", "executor, one thread"),
    Event("2017-05-05", "cpp", "dfa303a0a", "output gradients added by an op"),
    Event("2017-05-10", "cpp", "5227e3e6f", "link ops tried, reverted same day"),
    Event("2017-05-24", "python", "417f74509", "the _accum rewrite (works from 06-07)"),
    Event("2017-06-05", "cpp", "0c2c95309", "_tmpstep: no _acc swap"),
    Event("2017-06-29", "python", "0cdd09da6", "v3: Python 3 dict views"),
    Event("2017-07-10", "python", "34c65f71e", "gru_cell: a GRU"),
    Event("2017-08-15", "cpp", "476e9e30d", "threaded executor + link ops, tried"),
    Event("2017-08-16", "cpp", "44e868108", "… reverted next day"),
    Event("2017-08-22", "cpp", "6538f8783", "Argument.n: a NetDef argument"),
    Event("2017-09-06", "cpp", "dc775484e", "threaded executor + link ops, for good"),
    Event("2017-10-10", "python", "201087e1e", "step nets as NetDef, not text"),
    Event("2018-01-08", "python", "7d4c7690d", "GRU linear_before_reset"),
    Event("2018-01-26", "cpp", "2bf8d0cd4", "LSTMUnit without seq_lengths"),
) + tuple(Event(date, "bug", commit, "**%s** %s" % (bug, text))
          for bug, commit, date, text in BUG_FIXES)  # fmt: skip

#: The bugs that never reached users: drawn in the bug lane, muted, not as fixes.
NEVER_SHIPPED = ("B8",)

#: After the last era: Caffe2 moves into PyTorch.
PYTORCH = (
    ("2018-03-30", "a062b05d7", "Caffe2's code moves into the pytorch/pytorch repository"),
    ("2018-09-27", "5f7cccf14", "facebookarchive/caffe2 becomes a redirect to PyTorch"),
)

LANES = {  # lane -> (heading, subheading, x, width)
    "era": ("Era", "caffe2rnn runs", 62, 104),
    "python": ("Python", "recurrent_net, rnn_cell", 168, 168),
    "cpp": ("C++", "operator, executor", 338, 160),
    "bug": ("Bugs", "the day each was fixed", 500, 164),
}
LANE_COLOUR = {"era": style.MUTED, "python": style.LINK, "cpp": style.RNN_OP,
               "bug": style.ACCUMULATE}  # fmt: skip
_SIZE = 11  # the events' text: readable at page width without a click
_LINE = 14
_DAY = 18  # px before an event's text: its day of the month


def _era_events():
    default = eras.DEFAULT.name
    return tuple(
        Event(date, "era", commit, "**%s · %s**%s" % (name, version,
                                                       " (default)" if name == default else ""))
        for name, version, commit, date in ERAS
    )  # fmt: skip


def _draw(canvas, x, y, event, colour):
    """An event's lines from ``y``; a bug's id or an era's name bold in the lane's colour
    (a bug that never shipped: grey, its text italic), an era's commit on a line of its
    own. Returns the y below it."""
    _, _, _, width = LANES[event.lane]
    never = event.lane == "bug" and event.text.split("**")[1] in NEVER_SHIPPED
    if never:
        colour = style.MUTED
    lines = wrap(event.text.replace("**", ""), width - _DAY - 14, _SIZE)
    prefix = event.text.split("**")[1] if "**" in event.text else ""
    if not prefix and event.lane == "bug":
        prefix = event.text.split(" ")[0]
    for k, line in enumerate(lines):
        line_x = x
        if k == 0 and prefix and line.startswith(prefix):
            canvas.text(line_x, y, prefix, _SIZE, bold=True, fill=colour)
            line_x += text_width(prefix + " ", _SIZE, True)
            line = line[len(prefix) :].lstrip()
        canvas.text(line_x, y + k * _LINE, line, _SIZE, italic=never,
                    fill=style.MUTED if never else style.INK)  # fmt: skip
    y += len(lines) * _LINE
    if event.lane == "era":
        canvas.text(x, y, "`%s`" % event.commit, _SIZE - 0.5, fill=style.MUTED)
        y += _LINE
    return y


def _description(events, first, last):
    """What the figure shows, as text, with every commit (the drawing leaves them out)."""
    parts = ["%s %s (%s)" % (e.date, e.text.replace("**", ""), e.commit) for e in events]
    return "Caffe2's recurrent networks, %s to %s: %s." % (first, last, "; ".join(parts))


def _timeline(name, title, first, last, pytorch=True):
    """The timeline of the months ``first`` .. ``last`` (YYYY-MM), and PyTorch if asked."""
    events = [
        e for e in sorted(_era_events() + EVENTS, key=lambda e: e.date)
        if first <= e.date[:7] <= last
    ]  # fmt: skip
    canvas = Canvas(style.WIDTH, title, _description(events, first, last))
    top = parts.heading(
        canvas,
        title,
        "One row per month with a change; the number before an entry is its day.",
    )
    y = top + 14
    for lane, (heading, sub, x, _) in LANES.items():
        canvas.text(x + 4, y, heading, style.LABEL, bold=True, fill=LANE_COLOUR[lane])
        canvas.text(x + 4, y + 14, sub, style.NOTE, fill=style.MUTED)
    y += 24
    canvas.line(8, y, style.WIDTH - 8, y, style.INK, 0.8)
    table_top = y

    months = sorted({e.date[:7] for e in events})
    era_marks = {}  # era name -> y of its entry
    for month in months:
        found = [e for e in events if e.date[:7] == month]
        row_top = y + 8
        bottoms = [row_top + _LINE]
        for lane, (_, _, x, _) in LANES.items():
            line_y = row_top + 6
            colour = LANE_COLOUR[lane]
            for event in (e for e in found if e.lane == lane):
                with canvas.group("event " + lane):
                    canvas.text(x + 4, line_y, event.date[8:], _SIZE - 0.5, fill=style.MUTED)
                    if lane == "era":
                        era_marks[event.text.split("**")[1].split(" ")[0]] = line_y
                    line_y = _draw(canvas, x + 4 + _DAY, line_y, event, colour) + 4
            bottoms.append(line_y)
        row_bottom = max(bottoms) + 2
        canvas.text(10, row_top + 6, month, _SIZE, bold=True)
        y = row_bottom
        canvas.line(8, y, style.WIDTH - 8, y, "#DADCE0", 0.8)

    # the eras' spans: a bar from each era's entry to the next one's; an era that
    # began before this part runs in from the top
    names = [name for name, *_ in ERAS]
    started = [n for n, _, _, date in ERAS if date[:7] < first]
    if started:
        carried = started[-1]
        era_marks.setdefault(carried, table_top + 8)
        _, version, _, date = next(e for e in ERAS if e[0] == carried)
        x = LANES["era"][2] + 4 + _DAY
        canvas.text(x, table_top + 14, "%s · %s" % (carried, version), _SIZE, bold=True,
                    fill=style.MUTED)  # fmt: skip
        canvas.text(x, table_top + 14 + _LINE, "since %s" % date[2:], _SIZE - 0.5,
                    fill=style.MUTED)  # fmt: skip
    shown = [n for n in names if n in era_marks]
    for i, era_name in enumerate(shown):
        start = era_marks[era_name] - 5
        stop = era_marks[shown[i + 1]] - 7 if i + 1 < len(shown) else y - 3
        k = names.index(era_name)
        colour = (
            style.RNN_OP if era_name == eras.DEFAULT.name else ("#9AA0A6" if k % 2 else "#5F6368")
        )
        canvas.rect(60, start, 4, max(stop - start, 4), colour, None)

    y += 14
    y = (
        parts.key(
            canvas,
            y,
            [
                (
                    "box",
                    (style.RNN_OP, style.RNN_OP),
                    "bar: the default era, %s" % eras.DEFAULT.name,
                ),
                ("box", ("#5F6368", "#5F6368"), "bar: another era's span"),
                ("box", ("#9AA0A6", "#9AA0A6"), "(shades alternate)"),
            ],
        )
        + 10
    )
    if pytorch:  # and then: PyTorch
        with canvas.group("pytorch"):
            height = 22 + (_LINE + 2) * len(PYTORCH)
            canvas.rect(8, y, style.WIDTH - 16, height, "#FFF3E0", "#E37400", 1.2, 6)
            canvas.text(16, y + 14, "→ PyTorch", style.LABEL, bold=True, fill="#B06000")
            for k, (date, _, text) in enumerate(PYTORCH):
                line_y = y + 14 + k * (_LINE + 2)
                canvas.text(104, line_y, date, _SIZE, bold=True)
                canvas.text(180, line_y, text, _SIZE)
            y += height + 12
        canvas.text_block(
            10,
            y,
            "caffe2rnn runs links as ops in every era (a modelling choice).",
            style.NOTE,
            width=canvas.width - 20,
            fill=style.MUTED,
        )
    else:
        canvas.text_block(
            10,
            y,
            "No `recurrent_net` of 2017-01-27 … 03-14 is reproduced.",
            style.NOTE,
            width=canvas.width - 20,
            fill=style.MUTED,
        )
    return Figure(name, canvas.svg())


def fig_history_timeline():
    """The whole timeline of Caffe2's RNN code: eras, Python and C++ changes, bug fixes, PyTorch."""
    return _timeline(
        "fig_history_timeline",
        "History: Caffe2's recurrent networks, 2016-12 → 2018-03 → PyTorch",
        "2016-12",
        "2018-09",
    )


def fig_history_2017():
    """The first half: 2016-12 → 2017-06, the eras E0 … E5 and bugs B1 … B8."""
    return _timeline(
        "fig_history_2017",
        "History, part 1: 2016-12 → 2017-06",
        "2016-12",
        "2017-06",
        pytorch=False,
    )


def fig_history_2018():
    """The second half: 2017-07 → 2018-09, E5 on, E6, E7 and the move into PyTorch."""
    return _timeline(
        "fig_history_2018",
        "History, part 2: 2017-07 → 2018-03 → PyTorch",
        "2017-07",
        "2018-09",
    )
