"""A small SVG canvas for figures drawn by hand, and the object a figure returns.

The graph views of :mod:`caffe2rnn.viz` let Graphviz place every node; the
figures of this package are *composed*, the way a textbook figure is: a
tensor drawn as its rows, a step beside the rows it reads, an arrow where the
eye should go. Each is a few dozen calls on a :class:`Canvas` in user units
that are CSS pixels (the figure is shown at its own width, about the
:data:`~caffe2rnn.viz.sizing.PAGE_PX` of the docs' text column, so a
``size=11`` label reads as 11 px).

Text stays text (``<text>``, not paths): searchable, selectable, and measurable
by ``scripts/check_site.py``. Widths are estimated from Helvetica's metrics
(which Arial and Liberation Sans share) so boxes can be sized to their labels;
a span between backticks is set in a monospaced font (blob and op names):
``"reads `hidden_t_prev`"``, and ``_{...}`` outside them is a subscript
(``"h_{t−1}"``).

:class:`Figure` is what ``caffe2rnn.viz.figures.<name>()`` returns: Jupyter
shows it (``_repr_svg_``) and :meth:`Figure.save` writes it.
"""

import html
import math
import os
import re
import shutil
import subprocess

from ...errors import DrawingError

SANS = "Helvetica, Arial, 'Liberation Sans', sans-serif"
MONO = "Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace"

# Advance widths of Helvetica (= Arial = Liberation Sans) in 1/1000 em, for
# the characters 32 (space) .. 126 (~), regular and bold.
_REGULAR = (
    "278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 "
    "556 556 556 278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 500 667 556 833 "
    "722 778 667 778 722 667 611 722 667 944 667 667 611 278 278 278 469 556 333 556 556 500 556 "
    "556 278 556 556 222 222 500 222 833 556 556 556 556 333 500 278 556 500 722 500 500 500 334 "
    "260 334 584"
)
_BOLD = (
    "278 333 474 556 556 889 722 238 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 "
    "556 556 556 333 333 584 584 584 611 975 722 722 722 722 667 611 778 722 278 556 722 611 833 "
    "722 778 667 778 722 667 611 722 667 944 667 667 611 333 278 333 584 556 333 556 611 556 611 "
    "556 333 611 611 278 278 556 278 889 611 611 611 611 389 556 333 611 556 778 556 556 500 389 "
    "280 389 584"
)
_WIDTHS = {
    False: [int(w) / 1000 for w in _REGULAR.split()],
    True: [int(w) / 1000 for w in _BOLD.split()],
}
#: A monospaced character is 0.6 em wide (Menlo, DejaVu Sans Mono; Consolas is narrower).
MONO_EM = 0.6
#: Characters outside ASCII (σ, ⊙, →, subscripts) are taken as this wide.
OTHER_EM = 0.62

INK = "#202124"
MUTED = "#5F6368"


#: A subscript is set this much smaller, and this much (in em) lower...
SUB_SCALE, SUB_DROP = 0.72, 0.28
#: ... but never under this many px: shown at 100 %, every label of a figure,
#: subscripts too, is at least 9 px (``tests/viz/test_viz_figures.py`` measures
#: each ``<text>`` and ``<tspan>``).
SUB_MIN = 10.5


def sub_size(size):
    """The font size of a subscript in a label of ``size`` px."""
    return max(SUB_SCALE * size, min(SUB_MIN, size))


_SUBSCRIPT = re.compile(r"_\{([^}]*)\}")


def spans(text):
    """``"a `b` c_{t}"`` -> [("a ", "text"), ("b", "mono"), (" c", "text"), ("t", "sub")]."""
    found = []
    for i, part in enumerate(str(text).split("`")):
        if i % 2 == 1:
            found.append((part, "mono"))
            continue
        for j, piece in enumerate(_SUBSCRIPT.split(part)):
            found.append((piece, "sub" if j % 2 == 1 else "text"))
    return [(part, kind) for part, kind in found if part]


def text_width(text, size, bold=False):
    """The estimated width in px of ``text`` (backticks: monospaced spans) at ``size`` px."""
    width = 0.0
    for part, kind in spans(text):
        if kind == "mono":
            width += len(part) * MONO_EM * size
            continue
        shown = sub_size(size) if kind == "sub" else size
        for char in part:
            code = ord(char)
            em = _WIDTHS[bold][code - 32] if 32 <= code < 127 else OTHER_EM
            width += em * shown
    return width


def wrap(text, width, size, bold=False):
    """``text`` broken at spaces into lines no wider than ``width`` px (a code
    span is never broken; a line holds at least one word)."""
    lines = []
    for paragraph in str(text).split("\n"):
        line = ""
        for word in _words(paragraph):
            candidate = word if not line else line + " " + word
            if line and text_width(candidate, size, bold) > width:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return lines


def _words(paragraph):
    """Words of a paragraph, a backtick span counting as part of its word."""
    words, current, in_code = [], "", False
    for char in paragraph:
        if char == "`":
            in_code = not in_code
        if char == " " and not in_code:
            words.append(current)
            current = ""
        else:
            current += char
    words.append(current)
    return [w for w in words if w]


def _num(value):
    return ("%.2f" % value).rstrip("0").rstrip(".")


class Canvas:
    """An SVG drawing ``width`` px wide; its height is what was drawn plus ``margin``.

    Every method adds one element and returns nothing useful except where
    noted (:meth:`text_block` returns the height it took). Coordinates are
    px from the top left.
    """

    def __init__(self, width, title, description="", margin=8):
        self.width = width
        self.title = title
        self.description = description
        self.margin = margin
        self._body = []
        self._bottom = 0.0
        self._group_depth = 0

    # -- bookkeeping ---------------------------------------------------------------

    def _add(self, element, bottom):
        self._body.append(element)
        self._bottom = max(self._bottom, bottom)

    @property
    def bottom(self):
        """The lowest y drawn so far."""
        return self._bottom

    def group(self, cls):
        """``with canvas.group("legend"):`` wraps what is drawn inside in ``<g class=...>``
        (tests and stylesheets find parts of a figure by these names)."""
        return _Group(self, cls)

    # -- shapes --------------------------------------------------------------------

    def rect(self, x, y, w, h, fill="none", stroke=INK, width=1.0, rx=0, dash=None, cls=None):
        attrs = {
            "x": x,
            "y": y,
            "width": w,
            "height": h,
            "fill": fill,
            "stroke": stroke if stroke else "none",
            "stroke-width": width if stroke else None,
            "rx": rx or None,
            "stroke-dasharray": dash,
            "class": cls,
        }
        self._add("<rect%s/>" % _attrs(attrs), y + h)

    def circle(self, cx, cy, r, fill="none", stroke=INK, width=1.0, cls=None):
        attrs = {"cx": cx, "cy": cy, "r": r, "fill": fill, "stroke": stroke, "stroke-width": width}
        attrs["class"] = cls
        self._add("<circle%s/>" % _attrs(attrs), cy + r)

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, dash=None, cls=None):
        self.path([(x1, y1), (x2, y2)], stroke, width, dash, head=None, cls=cls)

    def path(self, points, stroke=INK, width=1.2, dash=None, head="end", cls=None, curve=False):
        """A polyline through ``points`` (a cubic Bézier through four when
        ``curve``), with an arrowhead at its ``"end"``, ``"start"``, ``"both"``
        ends or none (``head=None``). The head is a filled triangle drawn in
        the line's colour; the line stops at its base."""
        points = [tuple(map(float, p)) for p in points]
        heads = {"end": [-1], "start": [0], "both": [0, -1], None: []}[head]
        size = 4.0 + 2.2 * width
        drawn = list(points)
        polygons = []
        for end in heads:
            tip = points[end]
            before = points[-2] if end == -1 else points[1]
            angle = math.atan2(tip[1] - before[1], tip[0] - before[0])
            base = (tip[0] - size * math.cos(angle), tip[1] - size * math.sin(angle))
            drawn[end] = base
            left = (
                base[0] + size * 0.45 * math.sin(angle),
                base[1] - size * 0.45 * math.cos(angle),
            )
            right = (
                base[0] - size * 0.45 * math.sin(angle),
                base[1] + size * 0.45 * math.cos(angle),
            )
            polygons.append((tip, left, right))
        if curve:
            if len(drawn) != 4:
                raise DrawingError("a curve takes four points, got %d" % len(drawn))
            d = "M%s,%s C%s,%s %s,%s %s,%s" % tuple(_num(v) for p in drawn for v in p)
        else:
            d = "M" + " L".join("%s,%s" % (_num(x), _num(y)) for x, y in drawn)
        attrs = {
            "d": d,
            "fill": "none",
            "stroke": stroke,
            "stroke-width": width,
            "stroke-dasharray": dash,
            "stroke-linecap": "round" if not dash else None,
            "stroke-linejoin": "round",
        }
        parts = ["<path%s/>" % _attrs(attrs)]
        for polygon in polygons:
            parts.append(
                '<polygon points="%s" fill="%s"/>'
                % (" ".join("%s,%s" % (_num(x), _num(y)) for x, y in polygon), stroke)
            )
        body = "".join(parts)
        if len(parts) > 1 or cls:
            body = "<g%s>%s</g>" % (_attrs({"class": cls}), body)
        self._add(body, max(y for _, y in points))

    def arrow(self, x1, y1, x2, y2, stroke=INK, width=1.2, dash=None, head="end", cls=None):
        self.path([(x1, y1), (x2, y2)], stroke, width, dash, head, cls)

    def polygon(self, points, fill, stroke="none", width=1.0, cls=None):
        attrs = {
            "points": " ".join("%s,%s" % (_num(x), _num(y)) for x, y in points),
            "fill": fill,
            "stroke": stroke,
            "stroke-width": width if stroke != "none" else None,
            "class": cls,
        }
        self._add("<polygon%s/>" % _attrs(attrs), max(y for _, y in points))

    def bracket(self, x, y1, y2, side="right", stroke=INK, width=1.2, reach=6):
        """A square bracket from y1 to y2 at x, opening towards ``side``'s
        opposite (``"right"``: ``]``-shaped, its arms pointing left)."""
        arm = -reach if side == "right" else reach
        self.path([(x + arm, y1), (x, y1), (x, y2), (x + arm, y2)], stroke, width, head=None)

    # -- text ----------------------------------------------------------------------

    def text(
        self,
        x,
        y,
        text,
        size=11,
        anchor="start",
        bold=False,
        fill=INK,
        italic=False,
        cls=None,
    ):
        """One line of text whose *middle* is at ``y``; backticks mark code."""
        baseline = y + 0.35 * size
        attrs = {
            "x": x,
            "y": baseline,
            "font-size": size,
            "text-anchor": None if anchor == "start" else anchor,
            "font-weight": "bold" if bold else None,
            "font-style": "italic" if italic else None,
            "fill": fill,
            "class": cls,
        }
        inner, lowered = [], False
        for part, kind in spans(text):
            shift = ""
            if (kind == "sub") != lowered:  # move to / back from the subscript's baseline
                drop = SUB_DROP * size
                shift = ' dy="%s"' % _num(drop if kind == "sub" else -drop)
                lowered = kind == "sub"
            if kind == "mono":
                inner.append('<tspan font-family="%s"%s>%s</tspan>'
                             % (html.escape(MONO), shift, html.escape(part)))  # fmt: skip
            elif kind == "sub":
                inner.append('<tspan font-size="%s"%s>%s</tspan>'
                             % (_num(sub_size(size)), shift, html.escape(part)))  # fmt: skip
            else:
                inner.append("<tspan%s>%s</tspan>" % (shift, html.escape(part)) if shift
                             else html.escape(part))  # fmt: skip
        inner = "".join(inner)
        # xml:space keeps the space next to a subscript or a code span (a
        # renderer may drop it at the edge of a <tspan> otherwise)
        self._add('<text xml:space="preserve"%s>%s</text>' % (_attrs(attrs), inner), y + 0.6 * size)

    def text_block(
        self,
        x,
        y,
        text,
        size=11,
        width=None,
        anchor="start",
        bold=False,
        fill=INK,
        leading=1.3,
        italic=False,
        cls=None,
    ):
        """Lines of text (``\\n`` breaks; wrapped to ``width`` px when given),
        the first line's middle at ``y``. Returns the height taken."""
        lines = wrap(text, width, size, bold) if width else str(text).split("\n")
        for i, line in enumerate(lines):
            self.text(x, y + i * size * leading, line, size, anchor, bold, fill, italic, cls)
        return len(lines) * size * leading

    def box(
        self,
        x,
        y,
        w,
        h,
        text="",
        fill="#FFFFFF",
        stroke=INK,
        size=11,
        bold=False,
        fill_text=INK,
        rx=4,
        dash=None,
        width=1.0,
        cls=None,
    ):
        """A rectangle with ``text`` centred in it (lines split on ``\\n``)."""
        self.rect(x, y, w, h, fill, stroke, width, rx, dash, cls)
        if text:
            lines = str(text).split("\n")
            leading = 1.25 * size
            top = y + h / 2 - (len(lines) - 1) * leading / 2
            for i, line in enumerate(lines):
                self.text(x + w / 2, top + i * leading, line, size, "middle", bold, fill_text)

    # -- output --------------------------------------------------------------------

    def svg(self):
        """The SVG document: ``width`` px wide, text as ``<text>``, white background."""
        height = math.ceil(self._bottom + self.margin)
        # ids unique to the figure: several may sit inline in one notebook page
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")[:40] or "figure"
        head = (
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'role="img" aria-labelledby="%s-title %s-desc">\n'
            '<title id="%s-title">%s</title>\n<desc id="%s-desc">%s</desc>\n'
            '<rect x="0" y="0" width="%d" height="%d" fill="#FFFFFF"/>\n'
            '<g font-family="%s" fill="%s">\n'
            % (
                self.width,
                height,
                self.width,
                height,
                slug,
                slug,
                slug,
                html.escape(self.title),
                slug,
                html.escape(self.description),
                self.width,
                height,
                html.escape(SANS),
                INK,
            )
        )
        return head + "\n".join(self._body) + "\n</g>\n</svg>\n"


class _Group:
    def __init__(self, canvas, cls):
        self.canvas, self.cls = canvas, cls

    def __enter__(self):
        self.canvas._body.append('<g class="%s">' % html.escape(self.cls))
        return self.canvas

    def __exit__(self, *exc):
        self.canvas._body.append("</g>")
        return False


def _attrs(attrs):
    out = []
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = _num(value)
        out.append(' %s="%s"' % (key, html.escape(str(value), quote=True)))
    return "".join(out)


#: How much larger a figure's full-size drawing is than the page's (:meth:`Figure.full_size`).
FULL_SCALE = 1.5
_SIZE = re.compile(r'<svg [^>]*?width="([0-9.]+)" height="([0-9.]+)"')


class Figure:
    """A drawn figure: ``name`` (its file name without ``.svg``) and its SVG text.

    The last line of a notebook cell shows it (``_repr_svg_``);
    ``figure.save("x.svg")`` writes it, ``figure.save("x.png")`` renders it
    with CairoSVG or ``rsvg-convert`` when one is installed.
    """

    def __init__(self, name, svg):
        self.name = name
        self.svg = svg

    def _repr_svg_(self):
        return self.svg

    def __repr__(self):
        return "<Figure %s: %s>" % (self.name, self.title)

    @property
    def title(self):
        start = self.svg.index(">", self.svg.index("<title")) + 1
        return html.unescape(self.svg[start : self.svg.index("</title>", start)])

    def full_size(self, scale=FULL_SCALE):
        """The same drawing ``scale`` times larger: what a click on the page's figure opens.

        The page shows a figure at the column's width; its full-size file
        (``fig_<name>_full.svg``, written by ``docs/make_diagrams.py``) has the
        same ``viewBox`` and a ``width`` and ``height`` ``scale`` times its own,
        so the viewer shows every label ``scale`` times the page's size.
        """
        width, height = (float(v) for v in _SIZE.search(self.svg).groups())
        start = '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"' % (
            _num(width), _num(height))  # fmt: skip
        if not self.svg.startswith(start):
            raise DrawingError("figure %s: its <svg> does not start as drawn" % self.name)
        head = '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"' % (
            _num(width * scale), _num(height * scale))  # fmt: skip
        return Figure(self.name + "_full", head + self.svg[len(start) :])

    def save(self, path, scale=1.0):
        """Write the figure to ``path`` (``.svg``, or ``.png`` at ``scale``); returns ``path``."""
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        extension = os.path.splitext(path)[1].lower()
        if extension in ("", ".svg"):
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(self.svg)
            return path
        if extension != ".png":
            raise DrawingError(
                "cannot save figure %s as %r: expected .svg or .png" % (self.name, path)
            )
        with open(path, "wb") as handle:
            handle.write(to_png(self.svg, scale))
        return path


def to_png(svg, scale=1.0):
    """PNG bytes of ``svg``, by CairoSVG or ``rsvg-convert`` (whichever is installed)."""
    try:
        import cairosvg
    except ImportError:
        cairosvg = None
    if cairosvg is not None:
        return cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    tool = shutil.which("rsvg-convert")
    if tool is None:
        raise DrawingError(
            "saving a figure as PNG needs CairoSVG (pip install cairosvg) or rsvg-convert "
            "(apt-get install librsvg2-bin); save it as .svg instead"
        )
    done = subprocess.run(
        [tool, "--zoom", str(scale), "--background-color", "white"],
        input=svg.encode("utf-8"),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise DrawingError("rsvg-convert failed: %s" % done.stderr.decode(errors="replace"))
    return done.stdout
