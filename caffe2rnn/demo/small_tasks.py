"""Two small tasks that show a recurrent net learning, and its gradients exact.

* :func:`build_lstm_regressor`: an LSTM (``recurrent.LSTM`` → one
  ``RecurrentNetwork`` op) learns the running mean of a sequence with plain
  SGD (``WeightedSum``), the loss falling.
* :func:`build_attention_reverser`: an encoder LSTM and an attention decoder
  (``LSTMWithAttention``) learn to reverse a token sequence.
* :func:`gradient_check`: each model's analytic gradients against central
  finite differences, in float64, on a copy of the trained weights.

``make demo`` runs both (see :mod:`caffe2rnn.demo`); the data come from
:mod:`caffe2rnn.demo.datasets`.
"""

import logging
import sys
import time

import numpy as np

from .. import brew, core, workspace
from ..cnn import CNNModelHelper
from ..gradient_checker import numeric_gradient
from ..recurrent import LSTM, LSTMWithAttention
from . import datasets
from .progress import Progress


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


def train(model, make_batch, steps, learning_rate, label, stream=None):
    """Run param_init_net, then ``steps`` SGD steps.

    Returns ``(losses, milliseconds per step)``.
    """
    updates = sgd_net(model, learning_rate)
    workspace.RunNetOnce(model.param_init_net)
    _feed(make_batch())
    workspace.CreateNet(model.net, overwrite=True)
    workspace.CreateNet(updates, overwrite=True)
    progress = Progress(steps, label, stream=stream)
    losses = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        _feed(make_batch())
        workspace.RunNet(model.net)
        workspace.RunNet(updates)
        losses.append(float(workspace.FetchBlob("loss")))
        progress.update(step, losses[-1])
    return losses, 1000 * (time.perf_counter() - start) / steps


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


def run(steps=400, rng=None, stream=None):
    """Train both models for ``steps`` SGD steps and check their gradients.

    Returns a dict: ``rows`` (model, steps, first/last-10 mean loss, ms per
    step), ``accuracy`` of the reverser on a fresh batch and ``chance``,
    ``checks`` (model, parameters, max abs error, within bounds), ``lstm``
    (the regressor's model, for drawing its op) and ``ok``: both losses fell
    below 70% of their start, the reverser beats chance twice over, and every
    gradient check holds.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    # recurrent.LSTM is the 2017-04 API, written for CNNModelHelper, which
    # Caffe2 (and caffe2rnn, faithfully) flags as deprecated on every use.
    logging.getLogger("caffe2rnn.cnn").setLevel(logging.ERROR)
    T, N, H = 12, 32, 16
    lstm = build_lstm_regressor(T, N, H)

    def lstm_batch():
        x, y, lengths = datasets.running_mean(rng, T, N)
        zeros = np.zeros((1, N, H), dtype=np.float32)
        return {"input": x, "target": y, "seq_lengths": lengths, "h0": zeros, "c0": zeros}

    write = (stream or sys.stdout).write
    write("LSTM (T=%d, N=%d, H=%d) learning the running mean of a sequence:\n" % (T, N, H))
    lstm_losses, lstm_ms = train(lstm, lstm_batch, steps, 0.5, "lstm", stream)
    lstm_check = gradient_check(lstm, lstm_batch(), lstm.params)

    workspace.ResetWorkspace()
    S, V, HA = 5, 6, 32

    def reverse_batch():
        batch = datasets.reverse(rng, S, N, V)
        zeros = np.zeros((1, N, HA), dtype=np.float32)
        batch.update(enc_h0=zeros, enc_c0=zeros, dec_h0=zeros, dec_c0=zeros, ctx0=zeros)
        return batch

    write(
        "Encoder LSTM + attention decoder (T=%d, vocab=%d, H=%d) learning to reverse "
        "a sequence:\n" % (S, V, HA)
    )
    attn = build_attention_reverser(S, N, V, HA)
    attn_losses, attn_ms = train(attn, reverse_batch, steps, 2.0, "attention", stream)
    accuracy = reverse_accuracy(attn, reverse_batch())
    attn_check = gradient_check(attn, reverse_batch(), attn.params)

    def fell(losses):
        return np.mean(losses[-10:]) < 0.7 * np.mean(losses[:10])

    chance = 1.0 / (V - 1)
    return dict(
        rows=[
            (name, steps, np.mean(losses[:10]), np.mean(losses[-10:]), ms)
            for name, losses, ms in (
                ("lstm", lstm_losses, lstm_ms),
                ("attention", attn_losses, attn_ms),
            )
        ],
        losses={"lstm": lstm_losses, "attention": attn_losses},
        accuracy=accuracy,
        chance=chance,
        checks=[
            ("lstm", len(lstm.params)) + tuple(lstm_check),
            ("attention", len(attn.params)) + tuple(attn_check),
        ],
        lstm=lstm,
        ok=bool(
            fell(lstm_losses)
            and fell(attn_losses)
            and accuracy > 2 * chance
            and lstm_check[1]
            and attn_check[1]
        ),
    )
