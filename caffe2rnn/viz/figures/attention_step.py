"""``fig_attention_step()``: one step of ``LSTMWithAttention``, and what runs before the loop.

What the figure says (``rnn_cell.LSTMWithAttention`` with regular attention,
``attention.apply_regular_attention``, Caffe2 0cdd09da6; the layer built
with ``scope="decoder"``, as docs/concepts/cells.md and notebook 10 build it,
so every name drawn is one those pages print):

* **before the loop**, once: ``Transpose(encoder_outputs)`` →
  ``decoder/encoder_outputs_transposed`` (N × E × S), ``FC(encoder_outputs)`` →
  ``decoder/weighted_encoder_outputs`` (``W_e s_j + b``, S × N × D)
  and the decoder's input projection ``decoder/decoder/i2h`` (the LSTM inside
  the attention cell is a cell named ``decoder``, whatever the scope);
* **each timestep t**, three recurrent states (hidden, cell, context), numbered
  by their row as on every page from step 8 on (timestep t reads row t and
  writes row t + 1): the LSTM's gates read ``Concat(h_{t}, a_{t})``
  (``decoder/hidden_t_external_prev``,
  ``decoder/attention_weighted_encoder_context_t_prev``), then ``LSTMUnit`` gives
  ``h_{t+1}`` (``decoder/decoder/hidden_t``); **then** ``h_{t+1}`` scores the
  encoder outputs: ``FC(h_{t+1})`` + ``decoder/weighted_encoder_outputs`` →
  ``Tanh`` → ``FC`` (``v``) → ``Softmax`` over the S positions → ``α_t``
  (``decoder/attention_weights_3d``); ``BatchMatMul`` of the transposed encoder
  outputs with ``α_t`` gives the context ``a_{t+1}``
  (``decoder/attention_weighted_encoder_context``); ``Copy`` writes ``h_{t+1}``
  as ``decoder/hidden_t_external``, the state the next timestep reads;
* timing: this timestep's new state scores the encoder outputs (Luong et al.
  2015), with Bahdanau's additive score; Bahdanau et al. (2015) score with
  ``h_{t}``, before the recurrent update.

``tests/viz/test_viz_figures.py`` checks the op types and names against the
op caffe2rnn builds with ``scope=SCOPE``.
"""

from . import parts, style
from .svg import Canvas, Figure, text_width

#: The step net's ops in order (regular attention, E5).
STEP_OPS = (
    "Concat", "FC", "Sum", "LSTMUnit",
    "FC", "Squeeze", "Add", "Tanh", "FC", "Transpose", "Softmax",
    "BatchMatMul", "Reshape", "Copy",
)  # fmt: skip
#: The layer's ``scope``: the pages build the decoder with ``scope="decoder"``.
SCOPE = "decoder"
#: Ops computed once, before the loop, from the encoder outputs (in the order they run).
BEFORE_LOOP = (
    ("Transpose", "encoder_outputs", SCOPE + "/encoder_outputs_transposed"),
    ("FC", "encoder_outputs", SCOPE + "/weighted_encoder_outputs"),
)
#: Blob names drawn. The LSTM inside the attention cell is a cell named ``decoder``
#: (whatever the scope): its blobs are ``<scope>/decoder/...``.
BLOBS = {
    "hidden_prev": SCOPE + "/hidden_t_external_prev",
    "context_prev": SCOPE + "/attention_weighted_encoder_context_t_prev",
    "cell_prev": SCOPE + "/decoder/cell_t_prev",
    "hidden_t": SCOPE + "/decoder/hidden_t",
    "weights": SCOPE + "/attention_weights_3d",
    "context": SCOPE + "/attention_weighted_encoder_context",
    "hidden_external": SCOPE + "/hidden_t_external",
    "projected": SCOPE + "/decoder/i2h",
    "weighted_encoder": SCOPE + "/weighted_encoder_outputs",
    "encoder_transposed": SCOPE + "/encoder_outputs_transposed",
}

_MONO = style.NOTE
_SCORE = "#1A73E8"  # the score: what is new in attention


def _op(canvas, x, y, text, colour, h=22):
    """An op chip from ``x``; returns its right edge."""
    w = text_width(text, style.NOTE, True) + 14
    canvas.box(x, y - h / 2, w, h, text, colour, colour, style.NOTE, True, "#FFFFFF", 3)
    return x + w


def _chain(canvas, x, y, ops):
    """Op chips left to right joined by arrows; returns the right edge."""
    for k, (text, colour) in enumerate(ops):
        if k:
            canvas.arrow(x, y, x + 10, y, style.INK, 1.1)
            x += 11
        x = _op(canvas, x, y, text, colour)
    return x


def _pill(canvas, x, y, text, fill=style.INPUT_FILL, edge=style.INPUT_EDGE, h=20):
    w = text_width(text, _MONO) + 14
    canvas.box(x, y - h / 2, w, h, text, fill, edge, _MONO, rx=h / 2)
    return x + w


def _band(canvas, x, y, w, h, label, fill, edge):
    canvas.rect(x, y, w, h, fill, edge, 1.0, 6, dash="5 3")
    canvas.text(x + 8, y + 10, label, style.NOTE, fill=edge, bold=True)


def fig_attention_step():
    """LSTMWithAttention: what runs once before the loop, and what runs at each timestep t."""
    b = BLOBS
    canvas = Canvas(
        style.WIDTH,
        "One step of LSTMWithAttention, and what runs before the loop",
        "Before the loop: FC and Transpose of the encoder outputs, once. At each timestep t: "
        "the LSTM reads the hidden state h_t and context a_t of row t and gives h_(t+1); then "
        "h_(t+1) scores every encoder output (FC, Add, Tanh, FC, Softmax give the weights "
        "alpha_t); a BatchMatMul with the encoder outputs gives the context a_(t+1); h_(t+1) "
        "and a_(t+1) are written to row t + 1 of their state tensors. Luong's timing: the new "
        "state scores.",
    )
    top = parts.heading(
        canvas,
        "Attention in a step net: `LSTMWithAttention`, timestep t",
        "What depends only on the encoder runs once, before the loop; the rest at every t.",
    )
    left, width = 10, style.WIDTH - 20
    lstm_c, score_c = style.COMPUTE, _SCORE

    # -- before the loop ---------------------------------------------------------------------
    y = top + 8
    _band(canvas, left, y, width, 86, "before the loop: once per batch", "#F8F9FA", style.MUTED)
    enc_y = y + 50
    end = _pill(canvas, left + 10, enc_y, "`encoder_outputs`  S × N × E")
    canvas.text(left + 14, enc_y + 20, "s_{1} … s_{S}: the encoder's states", style.NOTE,
                fill=style.MUTED)  # fmt: skip
    for k, (op, _, out) in enumerate(BEFORE_LOOP):
        oy = y + 32 + k * 30
        canvas.arrow(end + 1, enc_y, end + 30, oy, style.INK, 1.1)
        right = _op(canvas, end + 31, oy, op, style.COMPUTE if op == "FC" else style.MUTED)
        canvas.arrow(right + 1, oy, right + 14, oy, style.INK, 1.1)
        out_end = _pill(canvas, right + 15, oy, "`%s`" % out, "#FFFFFF", style.INK)
        canvas.text(out_end + 6, oy, ("W_{e} s_{j} + b" if op == "FC" else "N × E × S"),
                    style.NOTE, fill=style.MUTED)  # fmt: skip

    # -- each step ----------------------------------------------------------------------------
    s_y = y + 98
    s_h = 346
    _band(canvas, left, s_y, width, s_h, "the step net, at each t (14 ops)", style.STEP_FILL,
          style.STEP_EDGE)  # fmt: skip

    # 1. the LSTM, as in step 1, on [h_t, a_t]
    r1 = s_y + 32
    canvas.text(left + 10, r1, "1  the LSTM: its gates read h_{t} and the last context "
                "a_{t}", style.NOTE, bold=True)  # fmt: skip
    p1, p2 = r1 + 22, r1 + 46
    x = _pill(canvas, left + 10, p1, "`%s`" % b["hidden_prev"])
    canvas.text(x + 4, p1, "h_{t}", style.NOTE, fill=style.MUTED)
    x2 = _pill(canvas, left + 10, p2, "`%s`" % b["context_prev"])
    canvas.text(x2 + 4, p2, "a_{t}", style.NOTE, fill=style.MUTED)
    chain_x, chain_y = x2 + 40, (p1 + p2) / 2
    canvas.arrow(x + 40, p1, chain_x - 1, chain_y - 3, style.INK, 1.1)
    canvas.arrow(x2 + 40, p2, chain_x - 1, chain_y + 3, style.INK, 1.1)
    lstm_ops = [("Concat", style.MUTED), ("FC", lstm_c), ("Sum", lstm_c),
                ("LSTMUnit", style.ACTIVATION)]  # fmt: skip
    end = _chain(canvas, chain_x, chain_y, lstm_ops)
    canvas.text(left + 14, p2 + 22, "the Sum adds `input_t` (row t of `%s`); LSTMUnit also "
                "reads `%s`" % (b["projected"], b["cell_prev"]), style.NOTE,
                fill=style.MUTED)  # fmt: skip

    # 2. h_{t+1}, under the LSTMUnit that wrote it, scores every encoder output
    r2 = r1 + 96
    unit_c = end - 33
    h_w = text_width("`%s`" % b["hidden_t"], _MONO) + 14
    canvas.arrow(unit_c, chain_y + 11, unit_c, r2 - 11, style.INK, 1.1)
    _pill(canvas, unit_c - h_w / 2, r2, "`%s`" % b["hidden_t"], "#FFFFFF", style.INK)
    canvas.text(unit_c - h_w / 2 - 4, r2, "h_{t+1}", style.NOTE, "end", fill=style.MUTED)
    canvas.text(left + 10, r2, "2  then h_{t+1}, the new state, scores every encoder "
                "output s_{j}", style.NOTE, bold=True, fill=score_c)  # fmt: skip
    r2b = r2 + 40
    canvas.path([(unit_c, r2 + 10), (unit_c, r2 + 20), (left + 24, r2 + 20), (left + 24, r2b - 12)],
                style.INK, 1.1)  # fmt: skip
    score_end = _chain(canvas, left + 10, r2b, [("FC", score_c), ("Add", score_c),
                                                ("Tanh", style.ACTIVATION), ("FC", score_c),
                                                ("Softmax", style.ACTIVATION)])  # fmt: skip
    canvas.text(left + 36, r2b + 20, "+ `%s`, broadcast over the S positions"
                % b["weighted_encoder"], style.NOTE, fill=style.MUTED)  # fmt: skip
    canvas.arrow(score_end + 1, r2b, score_end + 12, r2b, style.INK, 1.1)
    alpha_end = _pill(canvas, score_end + 13, r2b, "`%s`" % b["weights"], "#FFFFFF", style.INK)
    canvas.text(alpha_end + 6, r2b, "α_{t}: N × S × 1", style.NOTE, fill=style.MUTED)
    canvas.text(left + 14, r2b + 40, "e_{tj} = vᵀ tanh(W_{e} s_{j} + W_{h} h_{t+1}),   "
                "α_{t} = softmax_{j}(e_{t})", style.NOTE, fill=style.INK)  # fmt: skip
    canvas.text(alpha_end + 2, r2b + 40, "(+ a Squeeze, a Transpose: shapes only)",
                style.NOTE, fill=style.MUTED)  # fmt: skip
    r2 = r2b

    # 3. the context: the encoder outputs weighted by alpha_t
    r3 = r2 + 84
    alpha_c = alpha_end - 12
    canvas.path([(alpha_c, r2 + 10), (alpha_c, r2 + 56), (left + 50, r2 + 56),
                 (left + 50, r3 - 12)], style.INK, 1.1)  # fmt: skip
    end = _chain(canvas, left + 10, r3, [("BatchMatMul", style.COMPUTE), ("Reshape", style.MUTED)])
    canvas.arrow(end + 1, r3, end + 12, r3, style.INK, 1.1)
    c_end = _pill(canvas, end + 13, r3, "`%s`" % b["context"], "#FFFFFF", style.INK)
    canvas.text(c_end + 6, r3, "a_{t+1} = Σ_{j} α_{tj} s_{j}", style.NOTE)
    canvas.text(left + 10, r3 + 24, "3  the context a_{t+1}: the encoder outputs weighted by α_{t}",
                style.NOTE, bold=True)  # fmt: skip
    canvas.text(left + 330, r3 + 24, "(BatchMatMul reads `%s`)" % b["encoder_transposed"],
                style.NOTE, fill=style.MUTED)  # fmt: skip

    # 4. the states written: row t + 1 of each
    r4 = r3 + 50
    canvas.text(left + 10, r4, "4  `Copy` h_{t+1} → `%s`; h_{t+1}, c_{t+1}, a_{t+1} → row t + 1"
                % b["hidden_external"], style.NOTE)  # fmt: skip

    # -- timing ------------------------------------------------------------------------------
    y = s_y + s_h + 16
    with canvas.group("timing"):
        canvas.text(left, y, "Timing:", style.SMALL, bold=True)
        steps = [("h_{t}, a_{t}", style.INK), ("LSTM", style.ACTIVATION),
                 ("h_{t+1}", style.INK), ("scores e_{tj}", score_c), ("α_{t}", style.INK),
                 ("a_{t+1}", style.INK)]  # fmt: skip
        x = left + 60
        for k, (text, colour) in enumerate(steps):
            if k:
                canvas.arrow(x + 2, y, x + 16, y, style.MUTED, 1.1)
                x += 20
            canvas.text(x, y, text, style.NOTE, bold=colour != style.INK, fill=colour)
            x += text_width(text, style.NOTE, True) + 2
    canvas.text(left, y + 18, "Luong's timing (h_{t+1} scores), Bahdanau's additive score",
                style.NOTE, fill=style.MUTED)  # fmt: skip
    return Figure("fig_attention_step", canvas.svg())
