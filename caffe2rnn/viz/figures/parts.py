"""Pieces several figures draw: a heading, a tensor as a stack of rows, a one-line key."""

import contextlib
import numbers

from ...errors import DrawingError
from . import style
from .svg import text_width


def check_steps(figure, steps):
    """A figure drawn row by row takes 2 to 5 timesteps (an int); say so otherwise."""
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or not 2 <= steps <= 5:
        raise DrawingError("%s(steps=%r): expected 2 to 5 steps" % (figure, steps))
    return int(steps)


def heading(canvas, title, subtitle="", x=10, y=14):
    """The figure's title (bold) and a one-line subtitle under it; returns the y below.

    The figures of this package keep it to one line (the page's text explains;
    round-6 review; ``tests/viz`` checks each); a longer one, as a page's own
    drawing may pass, wraps.
    """
    canvas.text(x, y, title, style.TITLE, bold=True, cls="title")
    if not subtitle:
        return y + 16
    height = canvas.text_block(
        x,
        y + 18,
        subtitle,
        style.SMALL,
        width=canvas.width - 2 * x,
        fill=style.MUTED,
        cls="subtitle",
    )
    return y + 12 + height


def tensor_rows(
    canvas,
    x,
    y,
    width,
    pitch,
    rows,
    fill=style.STATE_FILL,
    edge=style.STATE_EDGE,
    cls="tensor",
    label_size=style.SMALL,
    note_size=style.NOTE,
):
    """A tensor drawn as its rows, top to bottom: ``rows`` is a list of
    ``(label, notes, fill or None)`` (``notes`` a line or a list of lines);
    each row is a slab ``pitch`` px tall with a faint N x D grid on its right
    (a row of a (T + k) x N x D tensor is an N x D matrix) and its label and
    notes on its left (at ``label_size`` and ``note_size`` px). Returns the y
    centre of each row."""
    centres = []
    with canvas.group(cls):
        for r, (label, notes, row_fill) in enumerate(rows):
            top = y + r * pitch
            canvas.rect(x, top, width, pitch, row_fill or fill, edge, 1.0)
            centre = top + pitch / 2
            grid_x = x + width - 26
            for i in range(3):  # the N x D matrix of the row, as a hint (top right: clear of notes)
                for j in range(4):
                    canvas.rect(grid_x + j * 5.5, top + 6 + i * 5.5, 4.5, 4.5, "#FFFFFF",
                                edge, 0.5)  # fmt: skip
            notes = [notes] if isinstance(notes, str) and notes else list(notes or ())
            line = 13.0 * note_size / style.NOTE
            first = centre - line * len(notes) / 2
            canvas.text(x + 6, first, label, label_size, bold=True)
            for i, note in enumerate(notes):
                canvas.text(x + 6, first + (i + 1) * line, note, note_size,
                            fill=style.MUTED)  # fmt: skip
            centres.append(centre)
        canvas.rect(x, y, width, pitch * len(rows), "none", edge, 1.6)
    return centres


def key(canvas, y, items, x=10, size=style.NOTE):
    """A one-line key: ``items`` are ``(kind, colour, text)`` with kind
    ``"arrow"``, ``"dashed"`` (an arrow), ``"bracket"``, ``"box"`` (a swatch:
    colour is ``(fill, edge)``), ``"hexagon"`` (an outline) or ``"plus"``;
    wraps to a second line when the first is full. Returns the y below it."""
    cursor, line = x, y
    with canvas.group("key"):
        for kind, colour, text in items:
            need = 28 + text_width(text, size) + 16
            if cursor + need > canvas.width - 8 and cursor > x:
                cursor, line = x, line + size * 1.8
            if kind in ("arrow", "dashed"):
                dash = "4 3" if kind == "dashed" else None
                canvas.arrow(cursor, line, cursor + 22, line, colour, 1.5, dash)
            elif kind == "bracket":
                canvas.bracket(cursor + 14, line - 6, line + 6, stroke=colour, width=1.6)
            elif kind == "box":
                canvas.rect(cursor + 2, line - 6, 20, 12, colour[0], colour[1], 1.0, 2)
            elif kind == "hexagon":  # the shape of a Sum: an outline in ``colour``
                corners = [(2, 0), (7, -6), (17, -6), (22, 0), (17, 6), (7, 6)]
                points = [(cursor + dx, line + dy) for dx, dy in corners]
                canvas.polygon(points, "#FFFFFF", colour, 1.4)
            elif kind == "plus":
                canvas.circle(cursor + 11, line, 6.5, "#FFFFFF", colour, 1.4)
                canvas.text(cursor + 11, line, "+", size + 1, "middle", True, colour)
            canvas.text(cursor + 28, line, text, size)
            cursor += need
    return line + size


@contextlib.contextmanager
def fresh_net_names():
    """``with fresh_net_names():`` a figure builds its model as in a fresh process, and
    leaves no trace.

    Caffe2 never reuses a net name in a process (a second ``ModelHelper("mlp")``
    gets the net ``mlp_1``). A figure that builds a model to read its names
    draws the names a reader's fresh notebook prints, and the nets it built do
    not rename the reader's own later ones.
    """
    from ...core import Net

    used = set(Net._net_names_used)
    Net._net_names_used.clear()
    try:
        yield
    finally:
        Net._net_names_used.clear()
        Net._net_names_used.update(used)
