"""The main job (``make demo``): build, check and train recurrent nets.

1. An LSTM (``recurrent.LSTM`` → ``recurrent_net`` → one ``RecurrentNetwork``
   op) learns the running mean of a sequence with plain SGD; the loss falls.
2. An encoder LSTM plus an attention decoder (``LSTMWithAttention``) learns
   to reverse a token sequence.
3. Both models' analytic gradients are checked against central finite
   differences, in float64, on a fresh copy of the trained weights.
4. A report (and, when Graphviz is available, the diagrams of the LSTM's
   RecurrentNetwork op) is written to the output directory.
"""

import logging
import os
import sys
import time

import numpy as np

from . import brew, core, datasets, workspace
from .cnn import CNNModelHelper
from .gradient_checker import numeric_gradient
from .recurrent import LSTM, LSTMWithAttention


class Progress:
    """A one-line text progress bar with the latest loss (no dependencies)."""

    def __init__(self, total, label, stream=sys.stdout, width=30):
        self.total, self.label, self.stream, self.width = total, label, stream, width
        self.interactive = stream.isatty()

    def update(self, step, loss):
        done = int(self.width * step / self.total)
        line = "%-10s [%s%s] %4d/%d  loss %.5f" % (
            self.label,
            "#" * done,
            "." * (self.width - done),
            step,
            self.total,
            loss,
        )
        if self.interactive:
            self.stream.write("\r" + line)
        elif step == self.total or step % max(1, self.total // 10) == 0:
            self.stream.write(line + "\n")
        if self.interactive and step == self.total:
            self.stream.write("\n")
        self.stream.flush()


def sgd_net(model, learning_rate):
    """A net applying ``w ← w − lr·∇w`` to every parameter (Caffe2: WeightedSum).

    Kept apart from ``model.net`` so the gradient check can run the forward
    and backward ops without updating the weights.
    """
    one = model.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
    lr = model.param_init_net.ConstantFill([], "LR", shape=[1], value=-learning_rate)
    updates = core.Net(model.net.Name() + "_sgd")
    for param in model.params:
        grad = model.param_to_grad[param]
        updates.WeightedSum([param, one, grad, lr], param)
    return updates


def build_lstm_regressor(T, N, hidden):
    """LSTM over x (T × N × 1) → FC → prediction; loss = mean ½(pred − y)².

    ``recurrent.LSTM`` is the 2017-04 API, so the model is a CNNModelHelper
    (its ``model.FC`` creates parameters); output layers use ``brew``.
    """
    model = CNNModelHelper(name="running_mean")
    hidden_all, _, _, _ = LSTM(
        model, "input", "seq_lengths", ("h0", "c0"), dim_in=1, dim_out=hidden, scope="lstm"
    )
    pred = brew.fc(model, hidden_all, "pred", dim_in=hidden, dim_out=1, axis=2)
    pred2 = model.net.Reshape(pred, ["pred2d", "_pred_old_shape"], shape=[-1, 1])[0]
    target = model.net.Reshape("target", ["target2d", "_target_old_shape"], shape=[-1, 1])[0]
    dist = model.net.SquaredL2Distance([pred2, target], "dist")
    loss = model.net.AveragedLoss(dist, "loss")
    model.AddGradientOperators([loss])
    return model


def build_attention_reverser(T, N, vocab, hidden):
    """Encoder LSTM + LSTMWithAttention decoder → FC → SoftmaxWithLoss."""
    model = CNNModelHelper(name="reverse")
    enc_all, _, _, _ = LSTM(
        model,
        "encoder_inputs",
        "seq_lengths",
        ("enc_h0", "enc_c0"),
        dim_in=vocab,
        dim_out=hidden,
        scope="encoder",
    )
    dec_all = LSTMWithAttention(
        model,
        "decoder_inputs",
        "seq_lengths",
        "dec_h0",
        "dec_c0",
        "ctx0",
        encoder_output_dim=hidden,
        encoder_outputs=enc_all,
        decoder_input_dim=vocab,
        decoder_state_dim=hidden,
        scope="decoder",
        outputs_with_grads=(0,),
    )[0]  # only the hidden states reach the loss
    logits = brew.fc(model, dec_all, "logits", dim_in=hidden, dim_out=vocab, axis=2)
    logits2 = model.net.Reshape(logits, ["logits2d", "_logits_old_shape"], shape=[-1, vocab])[0]
    labels = model.net.Reshape("targets", ["labels", "_labels_old_shape"], shape=[-1])[0]
    _, loss = model.net.SoftmaxWithLoss([logits2, labels], ["probs", "loss"])
    model.AddGradientOperators([loss])
    return model


def _feed(batch):
    for name, value in batch.items():
        workspace.FeedBlob(name, value)


def train(model, make_batch, steps, learning_rate, label, out_lines):
    """Run param_init_net, then ``steps`` SGD steps; return the loss history."""
    updates = sgd_net(model, learning_rate)
    workspace.RunNetOnce(model.param_init_net)
    _feed(make_batch())
    workspace.CreateNet(model.net, overwrite=True)
    workspace.CreateNet(updates, overwrite=True)
    progress = Progress(steps, label)
    losses = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        _feed(make_batch())
        workspace.RunNet(model.net)
        workspace.RunNet(updates)
        losses.append(float(workspace.FetchBlob("loss")))
        progress.update(step, losses[-1])
    elapsed = time.perf_counter() - start
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    out_lines.append(
        "| %s | %d | %.5f | %.5f | %.2f ms |" % (label, steps, first, last, 1000 * elapsed / steps)
    )
    return losses


def gradient_check(model, batch, params, elements=4, eps=1e-6, seed=0, rtol=1e-5, atol=1e-8):
    """Compare analytic and central-difference gradients, in float64.

    Every blob the net reads is cast to float64 in a scratch workspace, so the
    check measures the maths, not float32 rounding. ``elements`` random
    entries of each parameter are perturbed. Returns ``(max |analytic −
    numeric|, every entry within atol + rtol·|numeric|)``; the bound allows
    for the finite difference's own round-off (~1e-10 here).
    """
    previous = workspace.CurrentWorkspace()
    snapshot = {
        name: workspace.FetchBlob(name)
        for name in workspace.Blobs()
        if isinstance(workspace.FetchBlob(name), np.ndarray)
    }
    workspace.SwitchWorkspace("gradient_check", True)
    workspace.ResetWorkspace()
    try:
        for name, value in list(snapshot.items()) + list(batch.items()):
            workspace.FeedBlob(
                name, value.astype(np.float64) if value.dtype == np.float32 else value
            )
        workspace.CreateNet(model.net, overwrite=True)
        name = model.net.Name()
        rng = np.random.default_rng(seed)
        worst, ok = 0.0, True
        for param in params:
            workspace.RunNet(name)
            analytic = workspace.FetchBlob(str(model.param_to_grad[param]))
            value = workspace.FetchBlob(param)
            indices = rng.choice(value.size, size=min(elements, value.size), replace=False)

            def loss(bumped, param=param):
                workspace.FeedBlob(param, bumped)
                workspace.RunNet(name)
                return workspace.FetchBlob("loss")

            numeric = numeric_gradient(loss, value.copy(), eps, indices)
            workspace.FeedBlob(param, value)
            for index in indices:
                error = abs(analytic.flat[index] - numeric.flat[index])
                worst = max(worst, error)
                ok = ok and error <= atol + rtol * abs(numeric.flat[index])
        return worst, ok
    finally:
        workspace.SwitchWorkspace(previous)


def reverse_accuracy(model, batch):
    """Fraction of tokens the trained decoder reverses correctly (fresh batch)."""
    _feed(batch)
    workspace.RunNet(model.net.Name())
    predicted = workspace.FetchBlob("probs").argmax(axis=1)
    return float(np.mean(predicted == batch["targets"].reshape(-1)))


def write_diagrams(model, out_dir, T=4):
    """Every view of the model's RecurrentNetwork op: SVG, or DOT without ``dot``."""
    from .errors import GraphvizNotFoundError
    from .viz import gallery, render

    op = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"][0]
    directory = os.path.join(out_dir, "diagrams")
    written = []
    for name, graph in gallery.all_views(op, T).items():
        path = os.path.join(directory, "lstm_%s.svg" % name)
        try:
            render(graph, path)
        except GraphvizNotFoundError:
            path = os.path.join(directory, "lstm_%s.dot" % name)
            render(graph, path, "dot")
        written.append(path)
    return written


def run(out_dir="demo-out", steps=400, seed=0):
    """The whole demo; returns the report text (also written to out_dir)."""
    os.makedirs(out_dir, exist_ok=True)
    # recurrent.LSTM is the 2017-04 API, written for CNNModelHelper, which
    # Caffe2 (and caffe2rnn, faithfully) flags as deprecated on every use.
    logging.getLogger("caffe2rnn.cnn").setLevel(logging.ERROR)
    rng = np.random.default_rng(seed)
    from .operators import rng as op_rng

    op_rng.seed(seed)
    lines = [
        "# caffe2rnn demo report",
        "",
        "| model | SGD steps | loss (first 10) | loss (last 10) | time/step |",
        "|---|---|---|---|---|",
    ]

    T, N, H = 12, 32, 16
    lstm = build_lstm_regressor(T, N, H)

    def lstm_batch():
        x, y, lengths = datasets.running_mean(rng, T, N)
        zeros = np.zeros((1, N, H), dtype=np.float32)
        return {"input": x, "target": y, "seq_lengths": lengths, "h0": zeros, "c0": zeros}

    print("LSTM (T=%d, N=%d, H=%d) learning the running mean of a sequence:" % (T, N, H))
    lstm_losses = train(lstm, lstm_batch, steps, 0.5, "lstm", lines)
    lstm_check = gradient_check(lstm, lstm_batch(), lstm.params)
    diagrams = write_diagrams(lstm, out_dir)

    workspace.ResetWorkspace()
    S, V, HA = 5, 6, 32

    def reverse_batch():
        batch = datasets.reverse(rng, S, N, V)
        zeros = np.zeros((1, N, HA), dtype=np.float32)
        batch.update(enc_h0=zeros, enc_c0=zeros, dec_h0=zeros, dec_c0=zeros, ctx0=zeros)
        return batch

    print(
        "Encoder LSTM + attention decoder (T=%d, vocab=%d, H=%d) learning to "
        "reverse a sequence:" % (S, V, HA)
    )
    attn = build_attention_reverser(S, N, V, HA)
    attn_losses = train(attn, reverse_batch, steps, 2.0, "attention", lines)
    accuracy = reverse_accuracy(attn, reverse_batch())
    attn_check = gradient_check(attn, reverse_batch(), attn.params)

    lines += [
        "",
        "Reverse task, tokens right on a fresh batch: %.0f%% (chance: %.0f%%)"
        % (100 * accuracy, 100 / (V - 1)),
    ]
    lines += [
        "",
        "## Gradient checks (float64, central differences, eps=1e-6)",
        "",
        "| model | parameters checked | max abs error | within 1e-8 + 1e-5·abs(numeric) |",
        "|---|---|---|---|",
        "| lstm | %d | %.2e | %s |" % (len(lstm.params), lstm_check[0], lstm_check[1]),
        "| attention | %d | %.2e | %s |" % (len(attn.params), attn_check[0], attn_check[1]),
        "",
    ]
    # Learned: the loss fell well below its start, and the decoder reverses
    # far more tokens than chance; exact: the gradient checks hold.
    ok = (
        np.mean(lstm_losses[-10:]) < 0.7 * np.mean(lstm_losses[:10])
        and np.mean(attn_losses[-10:]) < 0.7 * np.mean(attn_losses[:10])
        and accuracy > 2.0 / (V - 1)
        and lstm_check[1]
        and attn_check[1]
    )
    lines += ["## Diagrams of the LSTM's RecurrentNetwork op", ""]
    lines += ["* [%s](%s)" % (os.path.basename(p), os.path.relpath(p, out_dir)) for p in diagrams]
    lines += ["", "Result: %s" % ("OK — losses fell and gradients match" if ok else "FAILED")]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(report)
    print("\n" + report)
    print("Report written to %s" % os.path.join(out_dir, "report.md"))
    return report, ok
