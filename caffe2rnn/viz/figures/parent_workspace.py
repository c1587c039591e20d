"""``fig_parent_workspace()``: a child workspace reads and writes its parent's blobs.

What the figure says (step 2, docs/concepts/netdef.md, "Parents"; Caffe2
0cdd09da6, ``workspace.cc``: ``GetBlob`` falls back to the ``shared_``
parent, and ``CreateBlob`` makes a local blob only when ``HasBlob``, which
asks the parent too, is false; caffe2rnn: :class:`caffe2rnn.runtime.Workspace`): looking a
name up tries the workspace's own blobs first, then its parent's. Every op
*creates* each output, and creating returns the visible blob if there is
one; only otherwise is a local blob made. So in the page's example, a child
of a parent holding ``x`` and ``y`` that runs ``Scale(x) -> h`` then
``Add(h, y) -> y``:

* ``Scale`` reads ``x``: not in the child, found in the parent;
* ``Scale`` writes ``h``: visible nowhere, so it is made in the child;
* ``Add`` writes ``y`` in place: the child has none, so it writes the
  parent's ``y`` (the surprise the page's predict is about).

Nothing is written by hand: :func:`run` builds the page's net, runs it in a
child of such a parent, and reads back the op types, their inputs and
outputs, which blobs each workspace holds afterwards and which of the
parent's blobs changed (``tests/viz/test_viz_figures.py``).
"""

import numpy as np

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

_NAME = style.LABEL  # a blob or op name
_NOTE = style.SMALL  # every note: 11 px at page width


def run():
    """Run the page's net in one child workspace; returns what the figure draws.

    ``(ops, parent_blobs, child_blobs, changed)``: the ops as ``(type,
    inputs, outputs)``, the names each workspace holds after the run (its own
    blobs, sorted) and the parent's blobs whose values the child changed.
    """
    from ... import core, eras
    from ...runtime import Workspace

    with eras.use("E5"), parts.fresh_net_names():  # Caffe2 0cdd09da6, the page's era
        net = core.Net("step")
        net.Scale("x", "h", scale=2.0)
        net.Add(["h", "y"], "y")  # in place: reads y, writes y
    parent = Workspace(name="parent")
    parent.feed("x", np.ones(3, np.float32))
    parent.feed("y", np.zeros(3, np.float32))
    before = {name: np.array(parent.fetch(name)) for name in parent.local_blobs()}
    child = Workspace(parent=parent, name="child")
    child.run_net_once(net.Proto())
    ops = [(op.type, list(op.input), list(op.output)) for op in net.Proto().op]
    changed = sorted(n for n, v in before.items() if not np.array_equal(parent.fetch(n), v))
    return ops, sorted(parent.local_blobs()), sorted(child.local_blobs()), changed


def _pill(canvas, cx, y, name, edge=style.INK, width=1.0, h=22):
    w = text_width("`%s`" % name, _NAME) + 22
    with canvas.group("blob"):
        canvas.box(cx - w / 2, y - h / 2, w, h, "`%s`" % name, "#FFFFFF", edge, _NAME, rx=h / 2,
                   width=width)  # fmt: skip
    return cx - w / 2, cx + w / 2


def _chip(canvas, cx, y, op_type, h=24):
    w = text_width(op_type, _NAME, True) + 20
    with canvas.group("op"):
        canvas.box(cx - w / 2, y - h / 2, w, h, op_type, style.COMPUTE, style.COMPUTE, _NAME,
                   True, "#FFFFFF", 4)  # fmt: skip
    return cx - w / 2, cx + w / 2


def fig_parent_workspace():
    """The page's two-op net run in a child workspace: what it finds and creates where."""
    ops, parent_blobs, child_blobs, changed = run()
    try:
        (scale, (read,), (made,)), (add, add_in, (written,)) = ops
    except ValueError:
        raise DrawingError("fig_parent_workspace: expected two ops, X(a) -> b and "
                           "Y(b, c) -> c; the net has %r" % (ops,)) from None  # fmt: skip
    if not (read in parent_blobs and made in child_blobs and written in parent_blobs
            and made in add_in and written in add_in and changed == [written]):  # fmt: skip
        raise DrawingError(
            "fig_parent_workspace: the run did not read %r from the parent, create %r in the "
            "child and write the parent's %r (parent %s, child %s, changed %s)"
            % (read, made, written, parent_blobs, child_blobs, changed)
        )
    canvas = Canvas(
        style.WIDTH,
        "A child workspace reads and writes its parent's blobs",
        "A parent workspace holds %s; a child of it runs %s(%s) -> %s, then %s(%s) -> %s. "
        "%s reads %s: the child has none, so it is found in the parent. %s creates %s: no "
        "workspace of the chain has one, so it is made in the child (the parent has no %s). "
        "%s writes %s: the child has none, so the write lands in the parent's %s."
        % (", ".join(parent_blobs), scale, read, made, add, ", ".join(add_in), written,
           scale, read, scale, made, made, add, written, written),
    )  # fmt: skip
    top = parts.heading(
        canvas,
        "A child workspace reads, and writes, its parent's blobs",
        "A name is looked up in the child, then its parent; an output is made in the child "
        "only if none is visible.",
    )
    read_x, made_x, add_x = 236, 384, 520  # the three columns: Scale, h, Add
    p_top = top + 8
    p_row = p_top + 46
    c_top = p_row + 40
    row = c_top + 104
    c_bottom = row + 58
    canvas.rect(10, p_top, style.WIDTH - 20, c_bottom + 14 - p_top, "#FAFAFA", style.MUTED, 1.2, 8)
    canvas.text(24, p_top + 16, "parent workspace", _NAME, bold=True)
    canvas.rect(40, c_top, style.WIDTH - 80, c_bottom - c_top, style.STEP_FILL, style.STEP_EDGE,
                1.3, 8)  # fmt: skip
    canvas.text(54, c_top + 16, "child workspace", _NAME, bold=True)
    canvas.text(54, c_top + 32, "`Workspace(parent=...)`", _NOTE, fill=style.MUTED)

    # the parent's blobs: the one the child reads, the one it writes (red: the surprise)
    with canvas.group("parent"):
        for name in parent_blobs:
            if name == written:
                _, right = _pill(canvas, add_x, p_row, name, style.ACCUMULATE, 2.2)
                canvas.text(right + 8, p_row, "← written by", _NOTE, fill=style.ACCUMULATE)
                canvas.text(right + 8, p_row + 14, "the child's `%s`" % add, _NOTE,
                            fill=style.ACCUMULATE)  # fmt: skip
            elif name == read:
                _pill(canvas, read_x, p_row, name)
            else:
                raise DrawingError("fig_parent_workspace: parent blob %r has no place" % name)

    # the child: the two ops and the blob made in it
    with canvas.group("child"):
        _, scale_r = _chip(canvas, read_x, row, scale)
        add_l, _ = _chip(canvas, add_x, row, add)
        made_l, made_r = _pill(canvas, made_x, row, made, style.STEP_EDGE, 1.6)
        canvas.text(made_x, row + 26, "created here:", _NOTE, "middle", fill=style.STEP_EDGE)
        canvas.text(made_x, row + 40, "the parent has no `%s`" % made, _NOTE, "middle",
                    fill=style.STEP_EDGE)  # fmt: skip
        canvas.text(add_x, row + 26, "in place:", _NOTE, "middle", fill=style.MUTED)
        canvas.text(add_x, row + 40, "reads and writes `%s`" % written, _NOTE, "middle",
                    fill=style.MUTED)  # fmt: skip
    canvas.arrow(scale_r + 1, row, made_l - 1, row, style.INK, 1.4)
    canvas.arrow(made_r + 1, row, add_l - 1, row, style.INK, 1.4)

    # the reads come down from the parent; the write goes up into it
    with canvas.group("reads"):
        canvas.arrow(read_x, p_row + 12, read_x, row - 13, style.INK, 1.4)
        canvas.text(read_x - 10, c_top + 58, "reads `%s`: not in the child," % read, _NOTE,
                    "end")  # fmt: skip
        canvas.text(read_x - 10, c_top + 72, "found in the parent", _NOTE, "end")
        canvas.arrow(add_x - 14, p_row + 12, add_x - 14, row - 13, style.INK, 1.4)
        canvas.text(add_x - 22, c_top + 58, "reads `%s`" % written, _NOTE, "end")
    with canvas.group("write"):
        canvas.arrow(add_x + 14, row - 13, add_x + 14, p_row + 12, style.ACCUMULATE, 2.2)
        canvas.text(add_x + 24, c_top + 58, "writes `%s`:" % written, _NOTE, bold=True,
                    fill=style.ACCUMULATE)  # fmt: skip
        canvas.text(add_x + 24, c_top + 72, "the parent's", _NOTE, fill=style.ACCUMULATE)
    return Figure("fig_parent_workspace", canvas.svg())
