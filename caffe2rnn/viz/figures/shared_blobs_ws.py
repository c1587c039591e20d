"""``fig_shared_blobs_ws()``: the three levels of workspaces the gradient op runs in.

What the figure says (step 13, notebooks/06_backward_by_hand.ipynb, "Where the
gradient op puts the blobs it writes"; Caffe2 0cdd09da6,
``RecurrentNetworkGradientOp`` in ``recurrent_network_op.h``; caffe2rnn:
:mod:`caffe2rnn.operators.rnn.gradient`), for that notebook's Elman cell:

* the op's workspace holds what the op reads and writes as a whole: the
  parameters' gradients ``W_grad``, ``b_grad`` (zeroed before the loop) and
  the gradient tensors whose rows the backward links view (``<state>_grad``,
  created there by the op, and ``x_grad``);
* ``shared_blobs_ws``, made by the forward op as the parent of every step
  workspace (``sharedBlobsWs``), is empty after a forward pass. Before its
  loop the gradient op looks up each blob its backward step net writes, as
  step workspace 0 would (``step0Ws->HasBlob``, which asks the parents too),
  and creates there the ones it cannot find (``CreateSharedBlobs``): here
  ``pre_t_grad``, the one buffer drawn;
* each step workspace keeps what forward timestep ``t`` left (``hidden_t``,
  ``pre_t``...), which the backward step net of timestep ``t`` reads; its
  writes of ``pre_t_grad`` reach the one blob in ``shared_blobs_ws`` (a write
  goes to the nearest workspace holding the name: step 2's rule).

The timesteps are drawn left to right in the order they run, ``T-1`` first.
``tests/viz`` checks every placement against the workspaces caffe2rnn's op
leaves.
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

_NAME = style.LABEL  # a blob, an op, a workspace
_NOTE = style.SMALL  # every note: 11 px at page width

#: What the figure draws in each level (the notebook's names): found in the
#: op's workspace; created in ``shared_blobs_ws``; left in each step workspace.
FOUND = ("W_grad", "b_grad", "hidden_t_prev_states_grad", "x_grad")
SHARED = "pre_t_grad"
WRITER = "TanhGradient"
PER_STEP = ("hidden_t", "pre_t")


def fig_shared_blobs_ws(steps=5):
    """The op's workspace, ``shared_blobs_ws`` with its one ``pre_t_grad``, and
    ``steps`` step workspaces (2 to 5) that each write that one blob."""
    steps = parts.check_steps("fig_shared_blobs_ws", steps)
    order = list(range(steps - 1, -1, -1))
    canvas = Canvas(
        style.WIDTH,
        "The gradient op's three levels of workspaces",
        "The op's workspace holds %s. Its child shared_blobs_ws holds one %s, which the "
        "gradient op created there before its loop because step workspace 0 could not find "
        "it. The step workspaces %s, children of shared_blobs_ws, each keep what the forward "
        "timestep left, and each one's %s writes the one %s."
        % (", ".join(FOUND), SHARED, ", ".join(map(str, order)), WRITER, SHARED),
    )
    top = parts.heading(
        canvas,
        "Three levels: one `%s` serves every timestep" % SHARED,
        "A blob step workspace 0 cannot find is created once, in shared_blobs_ws.",
    )
    left, right = 10, style.WIDTH - 10
    op_top = top + 10
    found_y = op_top + 46
    sh_top = found_y + 34
    buffer_y = sh_top + 50
    st_top = buffer_y + 58
    st_h = 104
    sh_bottom = st_top + st_h + 12
    op_bottom = sh_bottom + 12

    # the op's workspace (the totals and the gradient tensors, found there), shared_blobs_ws
    inner_l, inner_r = parts.workspace_levels(
        canvas, left, right, (op_top, sh_top, sh_bottom, op_bottom), shared_stroke=1.6
    )
    canvas.text(left + 120, op_top + 16, "found here: the totals and the gradient tensors",
                _NOTE, fill=style.MUTED)  # fmt: skip
    with canvas.group("found"):
        widths = [text_width("`%s`" % n, _NAME) + 22 for n in FOUND]
        gap = (right - left - 28 - sum(widths)) / (len(FOUND) - 1)
        x = left + 14
        for name, w in zip(FOUND, widths):
            parts.pill(canvas, x + w / 2, found_y, name, style.GRADIENT_EDGE)
            x += w + gap

    # one blob for every timestep
    cx = style.WIDTH / 2
    with canvas.group("shared"):
        buf_l, buf_r = parts.pill(canvas, cx, buffer_y, SHARED, style.GRADIENT_EDGE, 2.0)
        canvas.text(buf_r + 10, buffer_y - 7, "one blob, created", _NOTE, fill=style.MUTED)
        canvas.text(buf_r + 10, buffer_y + 8, "before the loop", _NOTE, fill=style.MUTED)

    # the step workspaces, in the order they run
    xs, box_w = parts.columns(inner_l, inner_r, steps)
    for i, (t, x) in enumerate(zip(order, xs)):
        mid = x + box_w / 2
        with canvas.group("step_workspace"):
            canvas.rect(x, st_top, box_w, st_h, style.STEP_FILL, style.STEP_EDGE, 1.2, 6)
            canvas.box(mid - 46, st_top + 8, 92, 20, WRITER, style.ACTIVATION, style.ACTIVATION,
                       _NOTE, True, "#FFFFFF", 4)  # fmt: skip
            canvas.text(mid, st_top + 42, "step ws %d" % t, _NOTE, "middle", True)
            canvas.text(mid, st_top + 57, "runs %s" % parts.ORDINALS[i], _NOTE, "middle",
                        fill=style.MUTED)  # fmt: skip
            canvas.text(mid, st_top + 76, "forward's, its own:", _NOTE, "middle",
                        fill=style.STEP_EDGE)  # fmt: skip
            canvas.text(mid, st_top + 91, ", ".join("`%s`" % n for n in PER_STEP), _NOTE,
                        "middle", fill=style.STEP_EDGE)  # fmt: skip
        with canvas.group("write"):  # TanhGradient writes the one buffer (its ws has none)
            end_x = buf_l + (buf_r - buf_l) * (i + 0.5) / steps
            canvas.arrow(mid, st_top + 8, end_x, buffer_y + 13, style.GRADIENT_EDGE, 1.4)
    canvas.text(inner_l, st_top - 14, "every timestep writes it", _NOTE, fill=style.GRADIENT_EDGE)
    return Figure("fig_shared_blobs_ws", canvas.svg())
