"""``fig_models()``: a ``ModelHelper`` after one ``brew.fc`` — two nets, one workspace, a list.

What ``brew.fc(model, "x", "y", dim_in=3, dim_out=2)`` on
``ModelHelper(name="mlp")`` leaves behind (docs/concepts/models.md, step 6;
Caffe2 0cdd09da6, ``caffe2/python/helpers/fc.py`` and ``model_helper.py``):

* ``model.param_init_net`` (named ``mlp_init``) gets the fill ops —
  ``XavierFill -> y_w``, ``ConstantFill -> y_b``: run once, like the
  constructor of an ``nn.Module``;
* ``model.net`` (named ``mlp``) gets ``FC(x, y_w, y_b) -> y``: run every
  iteration, like ``forward``;
* ``model.params`` gets the two names, like ``model.parameters()``;
* both nets run in one workspace: ``y_w`` and ``y_b`` stay there between the
  run of the first and every run of the second.

Nothing is written here by hand: the figure builds that model, reads every
net name, op type, input, output and parameter from it, and runs
``param_init_net`` in a workspace of its own for the shapes it draws — so a
change to ``brew.fc`` or ``ModelHelper`` changes the drawing
(``tests/viz/test_viz_figures.py``).
"""

from ...errors import DrawingError
from . import parts, style
from .svg import Canvas, Figure, text_width

_MONO = style.NOTE  # the size of a blob or op name
_NUMBER = style.RNN_OP  # the colour of the numbers 1 2 3: where brew.fc writes


def build(name="mlp", blob_in="x", blob_out="y", dim_in=3, dim_out=2):
    """The model the figure draws, its two nets' ops, and the parameter shapes.

    Returns ``(model, init_ops, net_ops, shapes)``: the ops as
    ``(type, inputs, outputs)`` and ``shapes`` the shape of every blob
    ``param_init_net`` writes, from running it in a workspace of its own.
    """
    from ... import brew, eras, model_helper
    from ...runtime import Workspace

    with eras.use("E5"), parts.fresh_net_names():  # Caffe2 0cdd09da6, a fresh process
        model = model_helper.ModelHelper(name=name)
        brew.fc(model, blob_in, blob_out, dim_in=dim_in, dim_out=dim_out)
    init_ops, net_ops = (
        [(op.type, list(op.input), list(op.output)) for op in net.Proto().op]
        for net in (model.param_init_net, model.net)
    )
    workspace = Workspace()
    workspace.run_net_once(model.param_init_net.Proto())
    shapes = {out: workspace.fetch(out).shape for _, _, outs in init_ops for out in outs}
    return model, init_ops, net_ops, shapes


def _shape(shape):
    return " × ".join(str(d) for d in shape)


def _pill(canvas, x, y, text, fill, edge, h=20, anchor="start", cls="blob"):
    """A blob pill centred on ``y``, starting at ``x`` (or ending there: ``anchor="end"``,
    or centred on it); returns ``(left, right)``."""
    w = text_width("`%s`" % text, _MONO) + 16
    left = {"start": x, "end": x - w, "middle": x - w / 2}[anchor]
    with canvas.group(cls):
        canvas.box(left, y - h / 2, w, h, "`%s`" % text, fill, edge, _MONO, rx=h / 2)
    return left, left + w


def _op(canvas, x, y, op_type, colour, anchor="start"):
    """An op chip centred on ``y``; returns ``(left, right)``."""
    w = text_width(op_type, _MONO, True) + 16
    left = {"start": x, "end": x - w, "middle": x - w / 2}[anchor]
    with canvas.group("op"):
        canvas.box(left, y - 11, w, 22, op_type, colour, colour, _MONO, True, "#FFFFFF", 3)
    return left, left + w


def _number(canvas, x, y, k):
    canvas.circle(x, y, 8, "#FFFFFF", _NUMBER, 1.4)
    canvas.text(x, y, str(k), style.NOTE, "middle", True, _NUMBER)


def fig_models(name="mlp", blob_in="x", blob_out="y", dim_in=3, dim_out=2):
    """The two nets of a ModelHelper after one ``brew.fc``, the workspace they share,
    and ``model.params`` — every name read from the model built here."""
    model, init_ops, net_ops, shapes = build(name, blob_in, blob_out, dim_in, dim_out)
    if len(net_ops) != 1 or len(init_ops) < 1:
        raise DrawingError(
            "fig_models: expected brew.fc to add one op to net and fill ops to "
            "param_init_net, got %s and %s" % (net_ops, init_ops)
        )
    (fc_type, fc_inputs, fc_outputs) = net_ops[0]
    params = [str(p) for p in model.params]
    written = [out for _, _, outs in init_ops for out in outs]
    fed = [b for b in fc_inputs if b not in written]
    init_name = model.param_init_net.Proto().name
    net_name = model.net.Proto().name
    call = 'brew.fc(model, "%s", "%s", dim_in=%d, dim_out=%d)' % (
        blob_in, blob_out, dim_in, dim_out)  # fmt: skip

    canvas = Canvas(
        style.WIDTH,
        "A ModelHelper after one brew.fc: two nets, one workspace, a list of parameters",
        "What %s on ModelHelper(name=%r) builds. model.param_init_net (named %s) holds %s: "
        "run once. model.net (named %s) holds %s(%s) -> %s: run every iteration. Both run in "
        "one workspace, where the filled parameters stay between runs. model.params lists %s."
        % (
            call,
            name,
            init_name,
            ", ".join("%s -> %s" % (t, ", ".join(o)) for t, _, o in init_ops),
            net_name,
            fc_type,
            ", ".join(fc_inputs),
            ", ".join(fc_outputs),
            ", ".join(params),
        ),
    )
    top = parts.heading(
        canvas,
        "A ModelHelper after one `brew.fc`: two nets, one workspace, a list",
        '`model = ModelHelper(name="%s")`, then one call; every name read from the model.' % name,
    )
    left, right = 10, style.WIDTH - 10

    # -- the call, and the three places it writes to -----------------------------------
    call_y = top + 16
    call_w = text_width("`%s`" % call, style.SMALL) + 20
    call_x = (style.WIDTH - call_w) / 2
    canvas.box(call_x, call_y - 12, call_w, 24, "`%s`" % call, "#FFFFFF", style.INK,
               style.SMALL, rx=4)  # fmt: skip
    canvas.text(call_x + call_w + 8, call_y, "adds to 3 places", style.NOTE,
                fill=style.MUTED)  # fmt: skip

    # three columns: param_init_net | the workspace | net
    col_init = (left, 212)
    col_ws = (234, 438)
    col_net = (460, right)
    places_y = call_y + 50  # the numbered row: 1 fill ops, 2 model.params, 3 the op
    box_top = places_y + 24
    pitch = 34
    # the workspace's blobs, one a row: the fed inputs, the parameters, the outputs
    rows = fed + written + [o for o in fc_outputs if o not in written]
    first_row = box_top + 48
    row_y = {blob: first_row + k * pitch for k, blob in enumerate(rows)}
    box_bottom = first_row + (len(rows) - 1) * pitch + 26

    # 2: model.params, above the workspace its names refer to
    listed = "`model.params` = [%s]" % ", ".join("`%s`" % p for p in params)
    params_w = text_width(listed, style.NOTE) + 18
    params_x = (col_ws[0] + col_ws[1]) / 2 - params_w / 2 + 10
    with canvas.group("params"):
        canvas.box(params_x, places_y - 11, params_w, 22, listed, style.PARAM_FILL,
                   style.PARAM_EDGE, style.NOTE)  # fmt: skip
    _number(canvas, params_x - 12, places_y, 2)
    # arrows from the call to the three places, each numbered
    ends = [((col_init[0] + col_init[1]) / 2, places_y - 10),
            (params_x + params_w / 2, places_y - 12),
            ((col_net[0] + col_net[1]) / 2, places_y - 10)]  # fmt: skip
    for k, end in enumerate(ends):
        canvas.arrow(style.WIDTH / 2 + (k - 1) * 60, call_y + 12, end[0], end[1], style.MUTED,
                     1.2)  # fmt: skip

    # -- param_init_net ---------------------------------------------------------------------
    with canvas.group("param_init_net"):
        x0, x1 = col_init
        canvas.rect(x0, box_top, x1 - x0, box_bottom - box_top, style.STEP_FILL,
                    style.STEP_EDGE, 1.3, 6)  # fmt: skip
        canvas.text(x0 + 10, box_top + 14, "`model.param_init_net`", style.SMALL, bold=True)
        canvas.text(x0 + 10, box_top + 29, 'named `"%s"`' % init_name, style.NOTE,
                    fill=style.MUTED)  # fmt: skip
        for op_type, _, outs in init_ops:
            _op(canvas, x1 - 12, row_y[outs[0]], op_type, style.COMPUTE, "end")
    _number(canvas, (col_init[0] + col_init[1]) / 2 - 36, places_y, 1)
    canvas.text((col_init[0] + col_init[1]) / 2 - 24, places_y, "the fill ops", style.NOTE,
                fill=style.MUTED)  # fmt: skip

    # -- net --------------------------------------------------------------------------------
    with canvas.group("net"):
        x0, x1 = col_net
        canvas.rect(x0, box_top, x1 - x0, box_bottom - box_top, style.STEP_FILL,
                    style.STEP_EDGE, 1.3, 6)  # fmt: skip
        canvas.text(x0 + 10, box_top + 14, "`model.net`", style.SMALL, bold=True)
        canvas.text(x0 + 10, box_top + 29, 'named `"%s"`' % net_name, style.NOTE,
                    fill=style.MUTED)  # fmt: skip
        reads = [row_y[b] for b in fc_inputs]
        fc_y = sum(reads) / len(reads)
        fc_left, fc_right = _op(canvas, x0 + 36, fc_y, fc_type, style.COMPUTE)
        canvas.text(fc_right + 8, fc_y - 7, "reads %s" % ", ".join("`%s`" % b for b in fc_inputs),
                    style.NOTE, fill=style.MUTED)  # fmt: skip
        canvas.text(fc_right + 8, fc_y + 8, "writes %s" % ", ".join("`%s`" % b for b in fc_outputs),
                    style.NOTE, fill=style.MUTED)  # fmt: skip
    _number(canvas, (col_net[0] + col_net[1]) / 2 - 36, places_y, 3)
    canvas.text((col_net[0] + col_net[1]) / 2 - 24, places_y, "the `%s` op" % fc_type,
                style.NOTE, fill=style.MUTED)  # fmt: skip

    # -- the workspace, and the arrows in and out of it -------------------------------------
    with canvas.group("workspace"):
        x0, x1 = col_ws
        canvas.rect(x0, box_top, x1 - x0, box_bottom - box_top, "#F8F9FA", style.MUTED, 1.3,
                    6, dash="5 3")  # fmt: skip
        canvas.text(x0 + 10, box_top + 14, "one workspace", style.SMALL, bold=True)
        canvas.text(x0 + 10, box_top + 29, "both nets read and write its blobs", style.NOTE,
                    fill=style.MUTED)  # fmt: skip
        mid = (x0 + x1) / 2
        pills = {}
        for blob in rows:
            if blob in params:
                fill, edge = style.PARAM_FILL, style.PARAM_EDGE
            elif blob in fed:
                fill, edge = style.INPUT_FILL, style.INPUT_EDGE
            else:
                fill, edge = "#FFFFFF", style.INK
            pills[blob] = _pill(canvas, mid - 24, row_y[blob], blob, fill, edge, anchor="middle")
            if blob in shapes:
                note = _shape(shapes[blob])
            elif blob in fed:
                note = "N × %d, fed" % dim_in
            else:
                note = "N × %d" % dim_out
            canvas.text(pills[blob][1] + 5, row_y[blob], note, style.NOTE,
                        fill=style.MUTED)  # fmt: skip

    # the fill ops write the parameters (left to right)...
    for _, _, outs in init_ops:
        for out in outs:
            y = row_y[out]
            canvas.arrow(col_init[1] - 10, y, pills[out][0] - 2, y, style.INK, 1.3)
    # ... FC reads its inputs (right to left) and writes its output
    for blob in fc_inputs:
        y = row_y[blob]
        canvas.path([(col_ws[1] - 4, y), (fc_left - 16, y), (fc_left - 2, fc_y)], style.INK,
                    1.2)  # fmt: skip
    for blob in fc_outputs:
        y = row_y[blob]
        start = (fc_left + 14, fc_y + 11)
        canvas.path([start, (start[0], y), (col_ws[1] - 4, y)], style.INK, 1.3)

    # -- when each runs -----------------------------------------------------------------------
    y = box_bottom + 18
    canvas.text(col_init[0], y, "run once", style.SMALL, bold=True)
    canvas.text_block(col_init[0], y + 16, "`RunNetOnce(param_init_net)`\nas `nn.Linear(%d, %d)` "
                      "makes its weights" % (dim_in, dim_out), style.NOTE,
                      fill=style.MUTED)  # fmt: skip
    canvas.text(col_net[0], y, "run every iteration", style.SMALL, bold=True)
    canvas.text_block(col_net[0], y + 16, "`RunNet(net.Name())`\nlike `forward`",
                      style.NOTE, fill=style.MUTED)  # fmt: skip
    canvas.text_block(col_ws[0], y, "parameters stay here between runs;\n`model.params` holds "
                      "names", style.NOTE, fill=style.MUTED)  # fmt: skip
    return Figure("fig_models", canvas.svg())
