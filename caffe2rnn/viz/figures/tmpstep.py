"""``fig_tmpstep()``: one ``_tmpstep`` buffer for every timestep's share of a gradient.

What the figure says (step 13, notebooks/06_backward_by_hand.ipynb, "Where the op
keeps each timestep's share"; Caffe2 0cdd09da6, ``RecurrentNetworkGradientOp`` in
``recurrent_network_op.h``; caffe2rnn: :mod:`caffe2rnn.operators.rnn.gradient`):

* before its loop the gradient op sets each parameter's gradient (``W_grad``,
  in the op's workspace) to zero, and creates in ``shared_blobs_ws`` each blob
  its backward step net writes that step workspace 0 cannot find, among them
  the renamed ``W_grad_tmpstep`` (``CreateSharedBlobs``; the rename in
  ``constructParams``);
* ``shared_blobs_ws`` is the parent of every step workspace, so each
  timestep's ``FCGradient``, run in step workspace ``t``, writes that one
  blob (a write goes to the visible blob of that name: step 2's parents);
* the ``Sum`` appended to the backward step net
  (``AddParamGradientAccumulationOps``) adds it into ``W_grad`` inside the
  same timestep, before the next timestep overwrites it.

The timesteps are drawn left to right in the order they run, ``T-1`` first.
"""

from . import parts, style
from .svg import Canvas, Figure

_NAME = style.LABEL  # a blob, an op, a workspace
_NOTE = style.SMALL  # every note: 11 px at page width


def fig_tmpstep(steps=5, param="W"):
    """The gradient op's ``steps`` timesteps (2 to 5) writing one shared buffer,
    ``<param>_grad_tmpstep``, and adding it into ``<param>_grad``."""
    steps = parts.check_steps("fig_tmpstep", steps)
    total, buffer = param + "_grad", param + "_grad_tmpstep"
    order = list(range(steps - 1, -1, -1))
    canvas = Canvas(
        style.WIDTH,
        "One %s for every timestep" % buffer,
        "The op's workspace holds %s, zeroed before the loop. Its child shared_blobs_ws holds "
        "the one %s, created before the loop. The step workspaces %s, children of "
        "shared_blobs_ws, run in that order: in each, FCGradient writes %s, then a Sum adds "
        "it into %s." % (total, buffer, ", ".join(map(str, order)), buffer, total),
    )
    top = parts.heading(
        canvas,
        "One `%s` serves every timestep" % buffer,
        "Timestep t writes its share into the one buffer, then adds it into the total.",
    )
    left, right = 10, style.WIDTH - 10
    op_top = top + 10
    total_y = op_top + 40
    sh_top = total_y + 42
    buffer_y = sh_top + 44
    st_top = buffer_y + 56
    st_h = 92
    sh_bottom = st_top + st_h + 12
    op_bottom = sh_bottom + 12

    # the three levels of workspaces, each inside its parent
    inner_l, inner_r = parts.workspace_levels(
        canvas, left, right, (op_top, sh_top, sh_bottom, op_bottom)
    )

    cx = style.WIDTH / 2
    with canvas.group("total"):
        _, total_r = parts.pill(canvas, cx, total_y, total, style.ACCUMULATE, 2.0, pad=24)
        canvas.text(total_r + 10, total_y, "the total: zeroed, then += at every t", _NOTE,
                    fill=style.ACCUMULATE)  # fmt: skip
    with canvas.group("buffer"):
        buf_l, buf_r = parts.pill(canvas, cx, buffer_y, buffer, style.GRADIENT_EDGE, 2.0, pad=24)
        canvas.text(buf_r + 10, buffer_y, "one blob", _NOTE, fill=style.MUTED)

    # the step workspaces, in the order they run
    xs, box_w = parts.columns(inner_l, inner_r, steps)
    for i, (t, x) in enumerate(zip(order, xs)):
        mid = x + box_w / 2
        with canvas.group("step_workspace"):
            canvas.rect(x, st_top, box_w, st_h, style.STEP_FILL, style.STEP_EDGE, 1.2, 6)
            canvas.box(mid - 44, st_top + 8, 88, 20, "FCGradient", style.COMPUTE,
                       style.COMPUTE, _NOTE, True, "#FFFFFF", 4)  # fmt: skip
            canvas.box(mid - 44, st_top + 32, 88, 20, "Sum +=", "#FFFFFF", style.ACCUMULATE,
                       _NOTE, True, style.ACCUMULATE, 4)  # fmt: skip
            canvas.text(mid, st_top + 64, "step ws %d" % t, _NOTE, "middle", True)
            canvas.text(mid, st_top + 80, "runs %s" % parts.ORDINALS[i],
                        _NOTE, "middle", fill=style.MUTED)  # fmt: skip
        # FCGradient writes the one buffer (its own workspace has none)
        with canvas.group("write"):
            end_x = buf_l + (buf_r - buf_l) * (i + 0.5) / steps
            canvas.arrow(mid, st_top + 8, end_x, buffer_y + 13, style.GRADIENT_EDGE, 1.3)
    with canvas.group("add"):  # the buffer into the total: one Sum per timestep
        canvas.arrow(cx, buffer_y - 13, cx, total_y + 13, style.ACCUMULATE, 2.0)
        canvas.text(cx + 8, total_y + 24, "each timestep's `Sum` adds it in",
                    _NOTE, fill=style.ACCUMULATE)  # fmt: skip
    return Figure("fig_tmpstep", canvas.svg())
