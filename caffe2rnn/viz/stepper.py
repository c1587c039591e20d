"""``stepper(op, T)``: step through time, forward and backward, and see the rows each step uses.

A RecurrentNetwork op is easiest to understand one timestep at a time: in
step t the forward step net reads row t of each state tensor and writes row
t+1; backward step t (they run t = T-1 down to 0) reads row t+1 of each state
*gradient* and writes row t. The stepper shows exactly that: a slider over t
and a forward/backward switch, and for each position the :func:`timeline` or
:func:`backward_timeline` drawing with the rows that step reads (blue) and
writes (amber) highlighted.

Two front ends share one set of frames (an SVG per step and direction,
rendered once):

* :func:`stepper_html` — a self-contained HTML fragment (SVGs inline, a few
  lines of JavaScript, no kernel), what the docs site embeds;
* :func:`stepper` — in Jupyter an ``ipywidgets`` slider and toggle when
  ipywidgets is installed, else the same HTML fragment.
"""

import html
import itertools
import json
import re

from ..errors import DrawingError
from .backward_timeline import backward_plan, backward_timeline
from .render import pipe
from .rnn_op import RecurrentOp
from .timeline import HIGHLIGHT, timeline

# Stepping through more steps than this is a slide show nobody watches; the
# frames are rendered eagerly (one dot run each).
MAX_STEPS = 16
_ids = itertools.count()


def _forward_touches(op, T):
    """{t: (rows read, rows written)} as "tensor[row]" strings, forward."""
    from .. import core

    rnn = RecurrentOp(op)
    _, versions = core.get_ssa(rnn.step_net)
    touches = {}
    for t in range(T):
        reads, writes = [], []
        for link in rnn.links:
            rows = ["%s[%d]" % (link.external, t + link.offset + k) for k in range(link.window)]
            (writes if versions.get(link.internal, 0) > 0 else reads).extend(rows)
        touches[t] = (reads, writes)
    return touches


def _backward_touches(op, T):
    _, _, steps, _ = backward_plan(op, T)
    return {
        t: (
            ["%s[%d]" % (x, row) for x, row, _ in step["reads"]],
            ["%s[%d]" % (x, row) for x, row, _ in step["writes"]],
        )
        for t, step in steps.items()
    }


def frames(op, T=3, width=None):
    """``{"forward": [...], "backward": [...]}``: one frame per step, in run order.

    A frame's ``svg`` is Graphviz's, its ``<title>`` elements dot's ids; the
    two front ends show it through :func:`readable_titles`.

    Each frame is a dict: ``t``, ``svg`` (the highlighted drawing, as text),
    ``reads`` and ``writes`` (``"tensor[row]"`` strings) and ``caption``.
    Forward frames run t = 0..T-1, backward frames t = T-1..0; ``width="page"``
    draws them for a text column (:mod:`~caffe2rnn.viz.sizing`).
    """
    if not isinstance(T, int) or not 1 <= T <= MAX_STEPS:
        raise DrawingError("stepper: T must be a whole number in 1..%d, got %r" % (MAX_STEPS, T))
    out = {}
    for direction, draw, touches, order in (
        ("forward", timeline, _forward_touches(op, T), range(T)),
        ("backward", backward_timeline, _backward_touches(op, T), range(T - 1, -1, -1)),
    ):
        out[direction] = []
        for t in order:
            reads, writes = touches[t]
            graph = draw(op, T, highlight=t, width=width)
            title = _take_title(graph)
            svg = pipe(graph, "svg").decode("utf-8")
            svg = svg[svg.index("<svg") :]  # drop the XML prolog and DOCTYPE: inlined
            caption = "%s pass, timestep t = %d reads %s; writes %s" % (
                direction,
                t,
                ", ".join(map(_unscoped, reads)) or "nothing",
                ", ".join(map(_unscoped, writes)) or "nothing",
            )
            out[direction].append(
                {
                    "t": t,
                    "svg": svg,
                    "reads": reads,
                    "writes": writes,
                    "caption": caption,
                    "title": title,
                }
            )
    return out


#: A Graphviz ``<title>`` right after the group it names (a graph, cluster, node or edge).
_TITLED = re.compile(r'(<g id="[^"]*" class="(\w+)[^"]*"[^>]*>\s*)<title>([^<]*)</title>\s*')
#: Graphviz's comment naming each node and edge (dot's own ids, not the reader's).
_COMMENT = re.compile(r"<!--.*?-->\s*", re.S)
#: The node-id prefixes the views give blobs (``io/h0``, ``tensor/...``, ``grad/...``).
_NODE_PREFIX = re.compile(r"^(?:io|tensor|grad)/")


def _blob_title(node):
    """``"tensor/lstm/i2h:w"`` -> ``"lstm/i2h"``: the blob a node id draws."""
    node = html.unescape(node).split(":")[0]
    if node.startswith("bstep"):
        return "backward step t = %s" % node[len("bstep") :]
    if node == "io/param_grads":
        return "the parameter gradients"
    if node.startswith("legend/"):
        return "legend"
    return _NODE_PREFIX.sub("", node)


def readable_titles(svg):
    """``svg`` (Graphviz output, inlined on a page) with titles a reader can read.

    Graphviz puts a ``<title>`` in every graph, node and edge group, holding
    dot's ids (``timeline_RecurrentNetwork_tensor0``, ``tensor/lstm/i2h:w``,
    ``io/h0->tensor/...``); inline in a page, a browser shows it as the
    tooltip of whatever the pointer is over. Here a node's title is the blob
    it draws, an edge's ``from → to``, a graph's is dropped (the page and the
    frame caption name it), and dot's comments go.
    """

    def retitle(match):
        group, kind, title = match.groups()
        if kind == "node":
            return "%s<title>%s</title>\n" % (group, html.escape(_blob_title(title)))
        if kind == "edge":
            ends = html.unescape(title).split("->")
            if len(ends) == 2:
                shown = "%s \u2192 %s" % tuple(_blob_title(e) for e in ends)
                return "%s<title>%s</title>\n" % (group, html.escape(shown))
        return group

    return _TITLED.sub(retitle, _COMMENT.sub("", svg))


def _unscoped(row):
    """``"lstm/lstm/hidden_t_prev_states[3]"`` -> ``"hidden_t_prev_states[3]"``: the
    caption sits in the sticky controls, so it stays short (the frame's tables
    below give each tensor's full name)."""
    return row.rsplit("/", 1)[-1]


def _take_title(graph):
    """A page-width frame's title, taken out of its drawing (``""`` for a full-size one).

    The page stepper shows the title in its sticky controls instead, so it
    is never hidden under them when the frame scrolls (a title drawn at the
    top of the SVG was the first thing the controls covered)."""
    parts = getattr(graph, "parts", None)
    if not parts or not parts[0].name.endswith("_title"):
        return ""
    label = next((line for line in parts[0].body if "label=" in line), "")
    graph.parts = parts[1:]
    found = re.search(r'label="((?:[^"\\]|\\.)*)"', label)
    text = found.group(1) if found else ""
    text = " ".join(re.sub(r"\\[nlr]", " ", text).replace('\\"', '"').split())
    # the controls already name the op and T: keep what the drawing shows
    return text.split(": ", 1)[-1]


#: The controls and the caption stay at the top of the window while the
#: frame scrolls under them (right below the theme's sticky article header,
#: 48 px = 3rem in sphinx-book-theme at 1280 px: at 3.5rem the frame showed
#: through an 8 px gap above the controls), so what a move of the slider
#: changes is in view with the slider.
_STICKY = (
    "position: sticky; top: var(--c2r-sticky-top, 3rem); z-index: 5; "
    "background: var(--pst-color-background, #fff); "
    "border-bottom: 1px solid var(--pst-color-border, #ddd); padding: 0.3rem 0"
)

_SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s);
  var slider = root.querySelector("input[type=range]");
  var caption = root.querySelector(".c2r-caption");
  var label = root.querySelector(".c2r-t");
  var captions = %(captions)s;
  var titles = %(titles)s;
  var heading = root.querySelector(".c2r-frame-title");
  function direction() {
    return root.querySelector("input[type=radio]:checked").value;
  }
  function show() {
    var d = direction(), k = Number(slider.value);
    root.querySelectorAll(".c2r-frame").forEach(function (frame) {
      var on = frame.dataset.direction === d && Number(frame.dataset.index) === k;
      frame.hidden = !on;
      if (on) { label.textContent = "t = " + frame.dataset.t; }
    });
    caption.textContent = captions[d][k];
    heading.textContent = titles[d][k];
    heading.hidden = !titles[d][k];
    root.dataset.direction = d;
    root.dataset.index = String(k);
  }
  slider.addEventListener("input", show);
  root.querySelectorAll("input[type=radio]").forEach(function (r) {
    r.addEventListener("change", show);
  });
  show();
})();
"""


def stepper_html(op, T=3, title=None, width=None):
    """A self-contained HTML fragment: slider, forward/backward switch, one SVG per step.

    Needs no kernel and no network: the frames are inline and the script is
    a dozen lines. Each highlighted row is an SVG group ``<g id="a_hl_read_...">``
    or ``<g id="a_hl_write_...">`` (the browser test reads them). With
    ``width="page"`` the frames are laid out for a text column and the
    fragment's class ``c2r-page`` lets a page's CSS fit them to it.
    """
    data = frames(op, T, width)
    uid = "c2r-stepper-%d" % next(_ids)
    name = title or RecurrentOp(op).called
    parts = [
        # overflow visible: a scrolling box would hold the sticky controls in
        # itself; a page-width stepper has nothing to scroll sideways
        '<div class="c2r-stepper%s" id="%s"%s>'
        % (" c2r-page" if width == "page" else "", uid,
           ' style="overflow: visible"' if width == "page" else ""),
        '<div class="c2r-sticky" style="%s">' % _STICKY,
        '<div class="c2r-controls">',
        "<b>%s</b> over T = %d steps: " % (html.escape(name), T),
    ]  # fmt: skip
    for d in ("forward", "backward"):
        parts.append(
            '<label><input type="radio" name="%s-dir" value="%s"%s> %s</label> '
            % (uid, d, " checked" if d == "forward" else "", d)
        )
    parts.append(
        '<input type="range" min="0" max="%d" value="0" step="1" aria-label="step"> '
        '<span class="c2r-t"></span>' % (T - 1)
    )
    parts.append(
        '<span class="c2r-key"><span style="background:%s">&#160;read&#160;</span> '
        '<span style="background:%s">&#160;written&#160;</span></span>'
        % (HIGHLIGHT["read"], HIGHLIGHT["write"])
    )
    parts.append(
        '</div><p class="c2r-frame-title" style="margin: 0.2rem 0 0; font-weight: bold; '
        'font-size: 0.85em"></p><p class="c2r-caption"></p></div>'
    )
    for d, items in data.items():
        for k, frame in enumerate(items):
            parts.append(
                '<div class="c2r-frame" data-direction="%s" data-index="%d" data-t="%d"%s>%s</div>'
                % (
                    d,
                    k,
                    frame["t"],
                    "" if (d, k) == ("forward", 0) else " hidden",
                    readable_titles(frame["svg"]),
                )  # fmt: skip
            )
    captions = {d: [f["caption"] for f in items] for d, items in data.items()}
    titles = {d: [f["title"] for f in items] for d, items in data.items()}
    script = _SCRIPT % {
        "id": json.dumps(uid),
        "captions": json.dumps(captions),
        "titles": json.dumps(titles),
    }
    parts.append("<script>%s</script></div>" % script)
    return "\n".join(parts)


class HTMLStepper:
    """Shows :func:`stepper_html` in Jupyter (no ipywidgets needed)."""

    def __init__(self, op, T, width=None):
        self.html = stepper_html(op, T, width=width)

    def _repr_html_(self):
        return self.html


def stepper(op, T=3, width=None):
    """In Jupyter: a slider over t and a forward/backward toggle over the highlighted
    timelines of RecurrentNetwork ``op``. Uses ipywidgets when it is installed
    (the kernel swaps the SVG), else the kernel-free HTML version."""
    try:
        import ipywidgets as widgets
    except ImportError:
        return HTMLStepper(op, T, width)
    data = frames(op, T, width)
    slider = widgets.IntSlider(value=0, min=0, max=T - 1, description="step", readout=False)
    direction = widgets.ToggleButtons(options=["forward", "backward"], value="forward")
    caption = widgets.HTML()
    picture = widgets.HTML()

    def show(_=None):
        frame = data[direction.value][slider.value]
        caption.value = "<b>t = %d</b>: %s" % (frame["t"], html.escape(frame["caption"]))
        picture.value = readable_titles(frame["svg"])

    slider.observe(show, names="value")
    direction.observe(show, names="value")
    show()
    return widgets.VBox([widgets.HBox([direction, slider]), caption, picture])
