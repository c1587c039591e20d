"""Char-RNN: an LSTM that learns to continue a text one character at a time.

Caffe2 shipped this as ``caffe2/python/examples/char_rnn.py`` (Caffe2
0cdd09da6); that program runs unchanged through :mod:`caffe2rnn.compat`.
This is the same model written for caffe2rnn, as a library you can call and
test, with a fixed number of steps, a seed, and a report::

    python -m caffe2rnn char-rnn --text book.txt --steps 2000 --out char-rnn-out

**Data.** The vocabulary is every distinct character; each one is a one-hot
vector, so an input batch is ``T × N × V`` (time, batch, vocabulary) and the
targets are the next characters, ``T·N`` int32 labels. As in Caffe2's program
the text is cut into ``N`` equal blocks and row ``e`` of every batch reads the
next ``T`` characters of block ``e`` (:class:`Batches`). The LSTM's final
hidden and cell state are copied back to its initial state after each step,
so each row continues where it stopped: truncated backpropagation through
time, gradients flowing back ``T`` steps while the memory reaches further.

**Model.** ``rnn_cell.LSTM`` (one ``RecurrentNetwork`` op) → ``FC`` to ``V`` logits
per step → ``Reshape`` to ``T·N × V`` → ``SoftmaxWithLoss``: the loss is the
mean negative log-likelihood of the next character, in nats per character.
A model that only knew how often each character occurs would score the
text's unigram entropy (:func:`unigram_entropy`); a loss below it means the
LSTM uses context.

**Sampling.** A clone of the forward part of the net (no loss) runs with a
batch of one: feed a character, read the softmax, draw the next character
(sharpened by ``temperature``), feed it back with the carried state.

Where this differs from Caffe2's program, and why: the vocabulary is sorted
(``list(set(text))`` changes order between runs, so a seed could not
reproduce one); ``SoftmaxWithLoss`` replaces ``Softmax`` + ``LabelCrossEntropy``
(the same loss, without ``log`` of a rounded-to-zero probability); Adam
(rate 0.01) replaces SGD at ``0.1·T`` decayed by 0.9999 a step, because a
short run needs it: on the demo's text, after 500 steps, 1.44 nats per
character against SGD's 2.06; and sampling saves and restores the training
state instead of overwriting it.
"""

import dataclasses
import itertools
import math
import os
import time

import numpy as np

from .. import brew, core, workspace
from ..errors import TextError
from ..model_helper import ModelHelper
from ..optimizer import build_adam
from ..rnn_cell import LSTM
from .datasets import one_hot
from .progress import Progress


class Vocabulary:
    """The characters of a text, sorted, and their ids."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.ids = {ch: i for i, ch in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        try:
            return np.array([self.ids[ch] for ch in text], dtype=np.int32)
        except KeyError as error:
            raise TextError(
                "character %r is not in the training text's vocabulary" % error.args[0]
            ) from None

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def unigram_entropy(text):
    """Entropy (nats per character) of the text's character frequencies."""
    _, counts = np.unique(list(text), return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def read_text(path):
    """The UTF-8 text in ``path``; :class:`TextError` saying why it cannot be used."""
    if not os.path.exists(path):
        raise TextError("%s: no such file" % path)
    if os.path.isdir(path):
        raise TextError("%s is a directory; expected a text file" % path)
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise TextError("%s is empty; expected some text to learn from" % path)
    if b"\0" in data:
        raise TextError("%s looks binary (it has NUL bytes); expected a text file" % path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TextError(
            "%s is not UTF-8 text (byte 0x%02x at offset %d)"
            % (path, data[error.start], error.start)
        ) from None


class Batches:
    """Caffe2 char_rnn's reading order: ``N`` blocks, each read ``T`` characters a batch.

    Block ``e`` starts at ``e·(len // N)`` (the last block takes the
    remainder); its read position wraps around inside the block. A target is
    the character after its input in the whole text.
    """

    def __init__(self, ids, batch, seq_len):
        n = len(ids)
        if n < batch * seq_len + 1:
            raise TextError(
                "the text has %d characters; --batch %d × --seq-len %d needs at least %d "
                "(use a smaller batch or sequence length)"
                % (n, batch, seq_len, batch * seq_len + 1)
            )
        self.ids, self.seq_len = ids, seq_len
        block = n // batch
        self.starts = np.arange(batch) * block
        self.sizes = np.full(batch, block)
        self.sizes[-1] += n % batch
        self.offsets = np.zeros(batch, dtype=np.int64)

    def next(self, vocab_size):
        """``(inputs T × N × V one-hot float32, targets T·N int32)``; then advance."""
        steps = np.arange(self.seq_len)
        positions = self.starts[:, None] + (self.offsets[:, None] + steps) % self.sizes[:, None]
        self.offsets = (self.offsets + self.seq_len) % self.sizes
        inputs = self.ids[positions.T]
        targets = self.ids[(positions.T + 1) % len(self.ids)]
        return one_hot(inputs, vocab_size), targets.reshape(-1).astype(np.int32)


class CharRNN:
    """The nets of a char-RNN in a workspace of their own.

    Every model gets a fresh workspace (``char_rnn``, ``char_rnn_1``...,
    unless ``workspace_name`` is given): two models' blobs share names, so in
    one workspace the second would overwrite the first one's weights.

    ``train_step(inputs, targets)`` runs forward, backward and the Adam update
    and returns the loss; ``sample(length, ...)`` generates text.
    """

    _created = itertools.count()

    def __init__(self, vocab, hidden=128, learning_rate=0.01, workspace_name=None):
        if workspace_name is None:
            n = next(CharRNN._created)
            workspace_name = "char_rnn_%d" % n if n else "char_rnn"
        self.vocab, self.hidden, self.workspace_name = vocab, hidden, workspace_name
        V, H = len(vocab), hidden
        model = ModelHelper(name="char_rnn")
        inputs, seq_lengths, hidden_init, cell_init, target = model.net.AddExternalInputs(
            "input_blob", "seq_lengths", "hidden_init", "cell_init", "target"
        )
        hidden_all, hidden_last, _, cell_last = LSTM(
            model, inputs, seq_lengths, (hidden_init, cell_init), V, H, scope="LSTM"
        )
        logits = brew.fc(model, hidden_all, "logits", dim_in=H, dim_out=V, axis=2)
        logits, _ = model.net.Reshape(logits, ["logits_2d", "_logits_shape"], shape=[-1, V])
        self.sample_net = model.net.Clone("char_rnn_sample")  # forward only
        self.sample_net.Softmax(logits, "sample_probs")
        _, loss = model.net.SoftmaxWithLoss([logits, target], ["softmax", "loss"])
        model.AddGradientOperators([loss])
        build_adam(model, base_learning_rate=learning_rate)
        # After every run, the last state becomes the next run's first state.
        self.carry = core.Net("char_rnn_carry")
        self.carry.Copy(hidden_last, hidden_init)
        self.carry.Copy(cell_last, cell_init)
        self.model, self.loss = model, loss
        self.state = (str(hidden_init), str(cell_init))
        with workspace.WorkspaceGuard(workspace_name):
            workspace.RunNetOnce(model.param_init_net)
            self._feed_state(np.zeros((1, 1, H), np.float32))  # shapes for CreateNet
            workspace.FeedBlob("input_blob", np.zeros((1, 1, V), np.float32))
            workspace.FeedBlob("seq_lengths", np.ones(1, np.int32))
            workspace.FeedBlob("target", np.zeros(1, np.int32))
            for net in (model.net, self.sample_net, self.carry):
                workspace.CreateNet(net, overwrite=True)
        self.batch = None

    def _feed_state(self, zeros):
        for blob in self.state:
            workspace.FeedBlob(blob, zeros)

    def train_step(self, inputs, targets):
        """One step on ``inputs`` (T × N × V) and ``targets`` (T·N); returns the loss."""
        T, N, _ = inputs.shape
        with workspace.WorkspaceGuard(self.workspace_name):
            if self.batch != N:  # a new batch size starts from a zero state
                self._feed_state(np.zeros((1, N, self.hidden), np.float32))
                self.batch = N
            workspace.FeedBlob("input_blob", inputs)
            workspace.FeedBlob("target", targets)
            workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
            workspace.RunNet(self.model.net.Name())
            workspace.RunNet(self.carry.Name())
            return float(workspace.FetchBlob(self.loss))

    def sample(self, length, prime="", temperature=1.0, rng=None):
        """``prime`` followed by ``length`` drawn characters (training state kept).

        Without a ``prime`` the first character is drawn from the vocabulary.
        ``temperature`` < 1 sharpens the distribution (p^(1/τ), renormalized).
        """
        if temperature <= 0:
            raise TextError("temperature must be positive, got %r" % temperature)
        rng = rng if rng is not None else np.random.default_rng()
        ids = list(self.vocab.encode(prime)) or [int(rng.integers(len(self.vocab)))]
        with workspace.WorkspaceGuard(self.workspace_name):
            saved = {blob: workspace.FetchBlob(blob) for blob in self.state}
            try:
                self._feed_state(np.zeros((1, 1, self.hidden), np.float32))
                feed = ids
                for _ in range(length):
                    workspace.FeedBlob(
                        "input_blob", one_hot(np.array(feed)[:, None], len(self.vocab))
                    )
                    workspace.FeedBlob("seq_lengths", np.array([len(feed)], np.int32))
                    workspace.RunNet(self.sample_net.Name())
                    workspace.RunNet(self.carry.Name())
                    p = workspace.FetchBlob("sample_probs")[-1].astype(np.float64)
                    # p^(1/τ) in log space: a small τ would underflow every p to 0
                    scaled = np.log(np.maximum(p, 1e-300)) / temperature
                    q = np.exp(scaled - scaled.max())
                    feed = [int(rng.choice(len(q), p=q / q.sum()))]
                    ids += feed
            finally:
                for blob, value in saved.items():
                    workspace.FeedBlob(blob, value)
        return self.vocab.decode(ids)


@dataclasses.dataclass
class Training:
    """What :func:`train` returns: the model, the losses and the samples."""

    model: CharRNN
    text_length: int
    losses: list  # nats per character, one per step
    samples: list  # (step, text)
    seconds: float
    unigram_entropy: float
    config: dict

    def smoothed(self, window=20):
        """The losses averaged over a trailing window (the plotted curve)."""
        losses = np.asarray(self.losses)
        cumulative = np.concatenate([[0.0], np.cumsum(losses)])
        lo = np.maximum(0, np.arange(1, len(losses) + 1) - window)
        return (cumulative[1:] - cumulative[lo]) / (np.arange(1, len(losses) + 1) - lo)

    def final_loss(self, window=20):
        return float(np.mean(self.losses[-window:]))


def train(
    text,
    steps=1000,
    seq_len=32,
    hidden=128,
    batch=32,
    learning_rate=0.01,
    seed=0,
    sample_every=None,
    sample_length=300,
    temperature=0.8,
    prime="",
    stream=None,
    label="char-rnn",
    title=None,
):
    """Train a :class:`CharRNN` on ``text`` for ``steps`` steps; a :class:`Training`.

    Checks every argument first (:class:`TextError`, before anything is
    printed), then prints ``title``, a progress bar and each sample to
    ``stream`` (default stdout);
    samples every ``sample_every`` steps (default: five times a run) and at
    the end. The same ``seed`` gives the same weights, losses and samples.
    """
    from ..operators import rng as op_rng

    config = dict(steps=steps, seq_len=seq_len, hidden=hidden, batch=batch)
    config.update(learning_rate=learning_rate, seed=seed, temperature=temperature, prime=prime)
    counts = dict(config, sample_length=sample_length, sample_every=sample_every)
    for name in ("steps", "seq_len", "hidden", "batch", "sample_length", "sample_every"):
        value = counts[name]
        if name == "sample_every" and value is None:
            continue  # the default
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise TextError("%s must be a positive integer, got %r" % (name, value))
    for name in ("learning_rate", "temperature"):
        if not (isinstance(config[name], (int, float)) and 0 < config[name] < math.inf):
            raise TextError("%s must be a positive number, got %r" % (name, config[name]))
    vocab = Vocabulary(text)
    batches = Batches(vocab.encode(text), batch, seq_len)  # validates the length
    vocab.encode(prime)  # a prime with a character the text lacks fails here, not later
    sample_every = sample_every or max(1, steps // 5)

    op_rng.seed(seed)
    rng = np.random.default_rng(seed)
    model = CharRNN(vocab, hidden, learning_rate)
    progress = Progress(steps, label, stream=stream, unit="steps")
    if title:
        progress.write(title)
    losses, samples = [], []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        losses.append(model.train_step(*batches.next(len(vocab))))
        progress.update(step, float(np.mean(losses[-20:])))
        if step % sample_every == 0 or step == steps:
            sample = model.sample(sample_length, prime, temperature, rng)
            samples.append((step, sample))
            progress.write("--- sample after %d steps ---\n%s\n---" % (step, sample))
    return Training(
        model=model,
        text_length=len(text),
        losses=losses,
        samples=samples,
        seconds=time.perf_counter() - start,
        unigram_entropy=unigram_entropy(text),
        config=config,
    )
