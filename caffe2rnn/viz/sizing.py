"""How big a drawing is: full size, or laid out for a page's text column.

Graphviz lays a graph out at its natural size and an SVG keeps it: a view
4,000 px wide shown in a 700 px text column is scaled down six times, and its
10 pt labels become 2 px smudges. So every view takes ``width``:

* ``"full"`` (the default, and what ``python -m caffe2rnn render`` draws):
  dot's natural layout, everything drawn, legend beside the figure;
* ``"page"``: laid out for a column of about :data:`PAGE_PX` pixels (the docs
  theme's article column at a 1280 px window, measured by
  ``scripts/check_site.py``): top to bottom, long chains folded into rows,
  labels wrapped after ``/`` and ``_``, the legend below the figure, repeated
  structure collapsed. What a page view abbreviates, its legend or title says.

A page view keeps the way back: ``graph.full_size()`` draws the same view at
full size, and :func:`caffe2rnn.viz.show` puts it one click away (a "full
size" switch under the figure).
"""

from ..errors import DrawingError

WIDTHS = ("full", "page")

#: The text column the "page" layouts are made for, in CSS pixels: the docs
#: theme's article column at a 1280 px window (``scripts/check_site.py``
#: measures it). A diagram no wider than this is shown at 100 %.
PAGE_PX = 688

#: Labels wrap after '/' (and, on a page, '_') at about this many characters.
WRAP = {"full": 24, "page": 16}

#: Legend entries per row.
LEGEND_PER_ROW = {"full": 4, "page": 3}

#: On a page a legend row holds at most this many characters of text.
LEGEND_CHARS = 64

#: A page's compact legend (one small table) holds about this many characters
#: a line, each entry counted with its swatch.
COMPACT_LEGEND_CHARS = 96

#: Titles wrap at about this many characters on a page.
PAGE_TITLE_CHARS = 56


def check(width):
    """The width a view was asked for: ``"full"`` (None means full) or ``"page"``."""
    if width is None:
        return "full"
    if width not in WIDTHS:
        raise DrawingError("width=%r: expected 'full' or 'page'" % (width,))
    return width


def with_full_size(graph, draw_full):
    """Remember on a page-width ``graph`` how to draw it at full size
    (``draw_full()`` returns the full-size Digraph); returns ``graph``."""
    graph.full_size = draw_full
    return graph
