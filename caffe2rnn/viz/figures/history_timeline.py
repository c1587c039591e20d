"""``fig_history_timeline()``: Caffe2's recurrent networks, 2016-12 to 2018-03, then PyTorch.

A timeline read top to bottom, one row per date: the eras caffe2rnn
reproduces (E0 … E7, each a shaded band from its commit to the next era's),
what changed in the Python (``recurrent_net``, ``rnn_cell``) and in the C++
(the operator, its executor, the link ops), and when each bug of the gallery
(B1 … B10) was fixed. Rows are in date order but not to scale: a quiet month
takes no room, a busy week as much as it needs.

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


#: The eras (caffe2rnn.eras): name, version, Caffe2 commit, date.
ERAS = (
    ("E0", "scratch", "3b190c4df", "2016-12-20"),
    ("E1", "s2", "3913181a4", "2017-01-24"),
    ("E2", "v1", "73f75a980", "2017-03-19"),
    ("E3", "april", "89ea32b11", "2017-04-07"),
    ("E4", "v2", "c2913bcac", "2017-04-12"),
    ("E5", "v3", "0cdd09da6", "2017-06-29"),
    ("E6", "newest", "042e8ede4", "2017-12-11"),
    ("E7", "last", "929c33cee", "2018-03-26"),
)

#: The bugs of the gallery (caffe2rnn.history.bugs) at the commit that fixed them.
BUG_FIXES = (
    ("B1", "66ad84303", "2017-01-30", "initial-state gradient never written"),
    ("B2", "f81113a1a", "2017-03-18", "stale links on a second, smaller run"),
    ("B3", "96bafa3b2", "2017-03-21", "recurrent gradient lost behind a first `Sum`"),
    ("B4", "21e9049f6", "2017-03-23", "a reference's gradient from unwritten memory"),
    ("B5", "8e01e4c8b", "2017-04-25", "right on run 1, doubled on run 2"),
    ("B6", "90d756208", "2017-05-05", "the recompute list dropped"),
    ("B7", "417f74509", "2017-05-24", "linked gradient overwritten (the `_accum` rewrite)"),
    ("B8", "f49200962", "2017-06-07", "the rewrite's guard for in-place ops"),
    ("B9", "96e718751", "2017-08-17", "`forward_only` fails to build"),
    ("B10", "359776004", "2017-08-17", "shared step workspaces shrunk to 2"),
)

EVENTS = (
    Event("2016-12-20", "python", "3b190c4df", "first `recurrent_net`: scratch tensors"),
    Event("2017-01-24", "python", "903acaff1", "parameters as input indices"),
    Event("2017-01-27", "cpp", "32d884d22", "step workspaces replace scratch tensors"),
    Event("2017-03-14", "python", "22b4533f0", "v1: `outputs_with_grads`"),
    Event("2017-04-11", "python", "faaafeccd", "`recompute_blobs_on_backward`"),
    Event("2017-04-18", "python", "e2efb83a7", "`rnn_cell`: LSTM, attention cells"),
    Event("2017-04-24", "python", "5cf13df48", "`forward_only`"),
    Event("2017-05-01", "cpp", "43084f228", "RecurrentNetworkExecutor, single-threaded"),
    Event("2017-06-29", "python", "0cdd09da6", "`param_grads`; the `_accum` rewrite; Python 3"),
    Event("2017-08-15", "cpp", "476e9e30d", "threaded executor; links become ops"),
    Event("2017-08-16", "cpp", "44e868108", "… reverted the next day"),
    Event("2017-08-22", "cpp", "6538f8783", "`Argument.n`: a NetDef argument"),
    Event("2017-09-06", "cpp", "dc775484e",
          "threaded executor for good, links as `rnn_internal_apply_link` ops"),
    Event("2017-10-10", "python", "201087e1e", "step nets passed as NetDef, not text"),
    Event("2018-01-08", "python", "7d4c7690d",
          "GRU `linear_before_reset`; then Elman cells, scoping, beam search"),
    Event("2018-01-26", "cpp", "2bf8d0cd4", "LSTMUnit (then GRUUnit) without `seq_lengths`"),
) + tuple(Event(date, "bug", commit, "**%s** %s" % (bug, text))
          for bug, commit, date, text in BUG_FIXES)  # fmt: skip

#: After the last era: Caffe2 moves into PyTorch.
PYTORCH = (
    ("2018-03-30", "a062b05d7", "Caffe2's development moves into the pytorch/pytorch repository"),
    ("2018-09-27", "5f7cccf14", "facebookarchive/caffe2 becomes a redirect to PyTorch"),
)

LANES = {  # lane -> (heading, subheading, x, width)
    "era": ("Era", "caffe2rnn reproduces", 60, 104),
    "python": ("Python", "`recurrent_net`, `rnn_cell`", 166, 166),
    "cpp": ("C++", "operator, executor, links", 334, 166),
    "bug": ("Bugs fixed", "B1 … B10 of the gallery", 502, 164),
}
LANE_COLOUR = {"era": style.MUTED, "python": style.LINK, "cpp": style.RNN_OP,
               "bug": style.ACCUMULATE}  # fmt: skip
_LINE = 12.5
_DAY = 16  # px before an event's text: its day of the month


def _era_events():
    default = eras.DEFAULT.name
    return tuple(
        Event(date, "era", commit, "**%s · %s**%s" % (name, version,
                                                       " (default)" if name == default else ""))
        for name, version, commit, date in ERAS
    )  # fmt: skip


def _lines(event):
    """The event's text in lines for its lane, and where its commit goes: ``(lines,
    same_line)``, the commit after the last line (``same_line``) or on a line of its own."""
    _, _, _, width = LANES[event.lane]
    room = width - _DAY - 4
    lines = wrap(event.text.replace("**", ""), room, style.NOTE)
    commit = " `%s`" % event.commit
    same_line = text_width(lines[-1] + commit, style.NOTE) <= room
    return lines, same_line


def _draw(canvas, x, y, event, colour):
    """An event's lines from ``y``; a bug's id or an era's name bold in the lane's colour.
    Returns the y below it."""
    lines, same_line = _lines(event)
    prefix = event.text.split("**")[1] if "**" in event.text else ""
    for k, line in enumerate(lines):
        line_x = x
        if k == 0 and prefix and line.startswith(prefix):
            canvas.text(line_x, y, prefix, style.NOTE, bold=True, fill=colour)
            line_x += text_width(prefix + " ", style.NOTE, True)
            line = line[len(prefix) :].lstrip()
        canvas.text(line_x, y + k * _LINE, line, style.NOTE)
    last = lines[-1]
    if same_line:
        commit_x = x + text_width(last + " ", style.NOTE, bool(prefix) and len(lines) == 1)
        commit_y = y + (len(lines) - 1) * _LINE
    else:
        commit_x, commit_y = x, y + len(lines) * _LINE
    canvas.text(commit_x, commit_y, "`%s`" % event.commit, style.NOTE - 0.5, fill=style.MUTED)
    return commit_y + _LINE


def fig_history_timeline():
    """The timeline of Caffe2's RNN code: eras, Python and C++ changes, bug fixes, PyTorch."""
    canvas = Canvas(
        style.WIDTH,
        "Caffe2's recurrent networks, 2016-12 to 2018-03, then PyTorch",
        "A timeline, one row per month: the eras E0 to E7 that caffe2rnn reproduces, the "
        "changes to recurrent_net and rnn_cell, to the C++ operator and its executor (the "
        "single-threaded RecurrentNetworkExecutor of 2017-05-01, the threaded one of "
        "2017-08-15 reverted the next day and landed for good on 2017-09-06 with the link "
        "ops), the fixes of bugs B1 to B10, and the move into PyTorch in 2018-03.",
    )
    top = parts.heading(
        canvas,
        "History: Caffe2's recurrent networks, 2016-12 → 2018-03 → PyTorch",
        "One row per month with a change (the day before each entry), every hash a Caffe2 "
        "commit. The bar beside the eras runs from each era's commit to the next.",
    )
    y = top + 12
    for lane, (heading, sub, x, _) in LANES.items():
        canvas.text(x + 4, y, heading, style.SMALL, bold=True, fill=LANE_COLOUR[lane])
        canvas.text(x + 4, y + 13, sub, style.NOTE - 0.5, fill=style.MUTED)
    y += 22
    canvas.line(8, y, style.WIDTH - 8, y, style.INK, 0.8)

    events = _era_events() + EVENTS
    months = sorted({e.date[:7] for e in events})
    era_marks = {}  # era name -> y of its entry
    for month in months:
        found = sorted((e for e in events if e.date[:7] == month), key=lambda e: e.date)
        row_top = y + 6
        bottoms = [row_top + _LINE]
        for lane, (_, _, x, _) in LANES.items():
            line_y = row_top + 6
            colour = LANE_COLOUR[lane]
            for event in (e for e in found if e.lane == lane):
                with canvas.group("event " + lane):
                    canvas.text(x + 4, line_y, event.date[8:], style.NOTE, fill=style.MUTED)
                    if lane == "era":
                        era_marks[event.text.split("**")[1].split(" ")[0]] = line_y
                    line_y = _draw(canvas, x + 4 + _DAY, line_y, event, colour) + 4
            bottoms.append(line_y)
        row_bottom = max(bottoms) + 2
        canvas.text(10, row_top + 6, month, style.NOTE, bold=True)
        y = row_bottom
        canvas.line(8, y, style.WIDTH - 8, y, "#DADCE0", 0.8)

    # the eras' spans: a bar from each era's entry to the next one's
    names = [name for name, *_ in ERAS]
    for i, name in enumerate(names):
        start = era_marks[name] - 5
        stop = era_marks[names[i + 1]] - 7 if i + 1 < len(names) else y - 3
        colour = style.RNN_OP if name == eras.DEFAULT.name else ("#9AA0A6" if i % 2 else "#5F6368")
        canvas.rect(58, start, 4, max(stop - start, 4), colour, None)

    # and then: PyTorch
    y += 10
    with canvas.group("pytorch"):
        canvas.rect(8, y, style.WIDTH - 16, 22 + _LINE * len(PYTORCH), "#FFF3E0", "#E37400",
                    1.2, 6)  # fmt: skip
        canvas.text(16, y + 12, "→ PyTorch", style.LABEL, bold=True, fill="#B06000")
        for k, (date, commit, text) in enumerate(PYTORCH):
            line_y = y + 12 + k * (_LINE + 2)
            canvas.text(110, line_y, date, style.NOTE, bold=True)
            canvas.text(176, line_y, "`%s`" % commit, style.NOTE - 0.5, fill=style.MUTED)
            canvas.text(240, line_y, text, style.NOTE)
        y += 22 + _LINE * len(PYTORCH) + 12
    canvas.text_block(
        10,
        y,
        "E7 (929c33cee) is Caffe2's last RNN code before the move; PyTorch carried it until "
        "Caffe2 was removed. Until 2017-09-06 (but for a day in August) the C++ applied links "
        "itself; caffe2rnn runs "
        "them as `rnn_internal_apply_link` ops in every era (a modelling choice). No version "
        "of `recurrent_net` from 2017-01-27 to 03-14 is reproduced: the E1 bar runs on to E2.",
        style.NOTE,
        width=canvas.width - 20,
        fill=style.MUTED,
    )
    return Figure("fig_history_timeline", canvas.svg())
