"""Pieces several figures draw: a heading, a tensor as a stack of rows, a one-line key, a blob
as a pill, and the gradient op's nested workspaces."""

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


#: The order the step workspaces run in, written out (at most 5 are drawn).
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th")


def pill(canvas, cx, y, name, edge, width=1.4, h=24, pad=22, fill=style.GRADIENT_FILL,
         dash=None, left=None):  # fmt: skip
    """A blob ``name`` as a pill centred on (cx, y), or starting at x = ``left`` when
    given; returns its left and right x."""
    w = text_width("`%s`" % name, style.LABEL) + pad
    x = cx - w / 2 if left is None else left
    with canvas.group("blob"):
        canvas.box(x, y - h / 2, w, h, "`%s`" % name, fill, edge, style.LABEL, rx=h / 2,
                   dash=dash, width=width)  # fmt: skip
    return x, x + w


def workspace_levels(canvas, left, right, tops, shared_stroke=1.3):
    """The gradient op's workspace and, inside it, ``shared_blobs_ws`` (step 13).

    ``tops`` is (op's top, shared's top, shared's bottom, op's bottom); the step
    workspaces, which the caller draws, sit inside the inner frame. Returns the x
    range that holds the step workspaces.
    """
    op_top, sh_top, sh_bottom, op_bottom = tops
    canvas.rect(left, op_top, right - left, op_bottom - op_top, "#FAFAFA", style.MUTED, 1.2, 8)
    canvas.text(left + 14, op_top + 16, "op's workspace", style.LABEL, bold=True)
    canvas.rect(left + 18, sh_top, right - left - 36, sh_bottom - sh_top, "#FFFFFF",
                style.BACKWARD_EDGE, shared_stroke, 8)  # fmt: skip
    canvas.text(left + 32, sh_top + 16, "`shared_blobs_ws`", style.LABEL, bold=True)
    canvas.text(left + 32, sh_top + 32, "one for all timesteps", style.SMALL, fill=style.MUTED)
    return left + 34, right - 34


def columns(inner_left, inner_right, count, gap=10):
    """The left x of ``count`` equal boxes across [inner_left, inner_right], and their width."""
    width = (inner_right - inner_left - gap * (count - 1)) / count
    return [inner_left + i * (width + gap) for i in range(count)], width


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
