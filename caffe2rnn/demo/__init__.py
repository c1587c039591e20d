"""The main job, ``make demo``, and ``python -m caffe2rnn char-rnn`` for any text.

``make demo`` (``python -m caffe2rnn demo --out demo-out``):

1. **Char-RNN on Python's own source.** :func:`caffe2rnn.demo.char_rnn.train` on
   300,000 characters of the standard library's ``.py`` files
   (:func:`caffe2rnn.demo.datasets.stdlib_source`), with a progress bar and a
   generated sample every few hundred steps.
2. **Small tasks and gradient checks** (:mod:`caffe2rnn.demo.small_tasks`): an
   LSTM learns a running mean, an attention decoder learns to reverse a
   sequence, and both models' gradients match finite differences.
3. **Files** in the output directory: ``report.html`` (self-contained: plots
   and diagrams inlined, ready to project), ``report.md`` (the same as text),
   ``loss.png`` / ``loss.svg``, ``samples.txt``, and ``diagrams/`` with every
   view of the LSTM's ``RecurrentNetwork`` op (SVG; DOT without Graphviz).

``python -m caffe2rnn char-rnn --text FILE`` does step 1 on your text and
writes the same report for it. Exit status: 0 when the model learned (its
final loss is below the text's unigram entropy) and every check holds, 1
when not, 2 for unusable input (one line on stderr saying why).
"""

import contextlib
import os
import platform
import sys

import numpy as np

from .. import __version__, kernels
from ..errors import GraphvizNotFoundError, TextError
from ..viz import plots
from . import char_rnn, datasets, small_tasks
from .report import Report

#: The char-RNN of ``make demo``: about 30 s of CPU time (25 ms a step).
DEMO_CHAR_RNN = dict(steps=1200, seq_len=32, hidden=128, batch=32)
PRIME = "def "  # what Python source so often continues from


@contextlib.contextmanager
def blas_threads(limit=1):
    """Run a block with at most ``limit`` BLAS threads (when threadpoolctl is there).

    The matrices of these models are small (32 × 128 · 128 × 512): a BLAS
    thread per core only adds hand-offs, and on a busy machine spinning
    threads made a training step several times slower, not faster.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=limit, user_api="blas"):
        yield


def _environment(seed):
    return "caffe2rnn %s · Python %s · NumPy %s · kernels: %s · seed %d" % (
        __version__,
        platform.python_version(),
        np.__version__,
        kernels.active(),
        seed,
    )


def char_rnn_section(report, training, out_dir, source, about_text="", level=2):
    """Add the char-RNN's section to ``report``; write its plot and samples.

    ``source`` names the text in the heading; ``about_text`` (optional) says
    more about where it came from.

    Returns ``(files written, learned)`` where ``learned`` means the final
    loss (mean of the last 20 steps) is below the text's unigram entropy.
    """
    config, losses = training.config, training.losses
    vocab = len(training.model.vocab)
    uniform, unigram = float(np.log(vocab)), training.unigram_entropy
    first, last = float(np.mean(losses[:20])), training.final_loss()
    learned = last < unigram
    chars = config["steps"] * config["seq_len"] * config["batch"]
    report.heading("Char-RNN on %s" % source, level)
    report.paragraph(
        "An LSTM with %d hidden units (one `RecurrentNetwork` op, then an FC to %d logits and "
        "`SoftmaxWithLoss`) reads %d streams of %d characters a step and learns to predict each "
        "next character; Adam, learning rate %g. The text has %s characters, %d distinct. "
        "%d steps (%s characters, %.1f passes over the text) took %.1f s: %.1f ms a step."
        % (
            config["hidden"],
            vocab,
            config["batch"],
            config["seq_len"],
            config["learning_rate"],
            format(training.text_length, ","),
            vocab,
            config["steps"],
            format(chars, ","),
            chars / training.text_length,
            training.seconds,
            1000 * training.seconds / config["steps"],
        )
    )
    if about_text:
        report.paragraph(about_text)
    report.table(
        ["", "nats / character", "bits / character"],
        [
            (label, "%.3f" % value, "%.3f" % (value / np.log(2)))
            for label, value in (
                ("guessing uniformly: log %d" % vocab, uniform),
                ("knowing only character frequencies (unigram entropy)", unigram),
                ("the LSTM, first 20 steps", first),
                ("the LSTM, last 20 steps", last),
            )
        ],
    )
    report.paragraph(
        "Learned: the loss is %.0f%% below the unigram entropy, so the LSTM uses context."
        % (100 * (1 - last / unigram))
        if learned
        else "Not learned: the final loss is not below the unigram entropy (more steps?).",
        status=learned,
    )
    written = []
    if plots.have_matplotlib():
        written += plots.loss_plot(
            os.path.join(out_dir, "loss"),
            [("loss per step (bold: mean of the last 20)", losses, training.smoothed(20))],
            references=[("uniform", uniform), ("unigram entropy", unigram)],
            title="char-rnn: cross-entropy of the next character",
            ylabel="nats per character",
        )
        report.figure(written[1], "Training loss, each step and smoothed, against two baselines.")
    else:
        report.paragraph("(No loss plot: install matplotlib to draw one.)")
    samples_path = os.path.join(out_dir, "samples.txt")
    with open(samples_path, "w", encoding="utf-8") as f:
        for step, text in training.samples:
            f.write("=== after %d steps ===\n%s\n\n" % (step, text))
    written.append(samples_path)
    report.heading("Samples", level + 1)
    prime = config.get("prime") or ""
    report.paragraph(
        "Each sample starts %s and goes on with characters drawn one at a time from the "
        "model's prediction, at temperature %g."
        % ("from `%s`" % prime.replace("`", "'") if prime else "at a random character",
           config["temperature"])
    )  # fmt: skip
    for step, text in training.samples:
        report.preformatted(text, "after %d steps" % step)
    return written, learned


def write_diagrams(model, out_dir, T=4):
    """Every view of the model's RecurrentNetwork op: ``[(path, view name)]``.

    SVG when Graphviz's ``dot`` is installed, DOT text otherwise; laid out for
    the report's text column (``width="page"``, :mod:`caffe2rnn.viz.sizing`).
    """
    from ..viz import gallery, render

    op = [o for o in model.net.Proto().op if o.type == "RecurrentNetwork"][0]
    directory = os.path.join(out_dir, "diagrams")
    written = []
    for name, graph in gallery.all_views(op, T, "page").items():
        path = os.path.join(directory, "lstm_%s.svg" % name)
        try:
            render(graph, path)
        except GraphvizNotFoundError:
            path = os.path.join(directory, "lstm_%s.dot" % name)
            render(graph, path, "dot")
        written.append((path, name))
    return written


def run(out_dir="demo-out", steps=None, small_steps=400, seed=0, stream=None):
    """The whole demo; returns ``(paths of report.html and report.md, ok)``."""
    from ..operators import rng as op_rng
    from ..viz.gallery import VIEWS

    stream = stream or sys.stdout
    os.makedirs(out_dir, exist_ok=True)
    corpus = datasets.stdlib_source()
    config = dict(DEMO_CHAR_RNN, steps=steps or DEMO_CHAR_RNN["steps"])
    with blas_threads(1):
        title = "Char-RNN on %s characters of Python's standard library (%d files):" % (
            format(len(corpus.text), ","),
            len(corpus.files),
        )
        training = char_rnn.train(
            corpus.text, seed=seed, prime=PRIME, stream=stream, title=title, **config
        )
        op_rng.seed(seed)
        small = small_tasks.run(small_steps, np.random.default_rng(seed), stream)
    diagrams = write_diagrams(small["lstm"], out_dir)

    report = Report("caffe2rnn demo", _environment(seed))
    names = ", ".join("`%s`" % os.path.basename(path) for path, _ in corpus.files)
    about = "The text: %s, from `%s`." % (names, os.path.dirname(corpus.files[0][0]))
    _, learned = char_rnn_section(report, training, out_dir, "Python's own source code", about)

    report.heading("Small tasks")
    report.table(
        ["model", "SGD steps", "loss (first 10)", "loss (last 10)", "time/step"],
        [(n, s, "%.5f" % a, "%.5f" % b, "%.2f ms" % ms) for n, s, a, b, ms in small["rows"]],
    )
    report.paragraph(
        "Reverse task, tokens right on a fresh batch: %.0f%% (chance: %.0f%%)."
        % (100 * small["accuracy"], 100 * small["chance"])
    )
    report.heading("Gradient checks (float64, central differences, eps=1e-6)")
    report.table(
        ["model", "parameters checked", "max abs error", "within 1e-8 + 1e-5·abs(numeric)"],
        [(name, count, "%.2e" % error, ok) for name, count, error, ok in small["checks"]],
    )
    report.heading("Diagrams of the LSTM's RecurrentNetwork op")
    report.paragraph(
        "Laid out for this column; `python -m caffe2rnn render --view VIEW` draws each full size."
    )
    for path, view in diagrams:
        caption = "`%s`: %s" % (view, VIEWS[view][0])
        if path.endswith(".svg"):
            report.figure(path, caption)
        else:
            report.link(path, caption + " (DOT text: install Graphviz to draw it)")
    ok = learned and small["ok"]
    report.paragraph(
        "Result: %s"
        % (
            "OK — the char-RNN learned, the small models' losses fell and gradients match"
            if ok
            else "FAILED"
        ),
        status=ok,
    )
    paths = report.write(out_dir)
    stream.write("\n" + report.markdown(out_dir) + "\n")
    stream.write("Report written to %s (and %s)\n" % (paths[0], os.path.basename(paths[1])))
    return paths, ok


# -- python -m caffe2rnn char-rnn ------------------------------------------------


def demo_command(args):
    """Run ``demo``; exit status 0 when everything learned and checked out."""
    _, ok = run(out_dir=args.out, steps=args.steps, small_steps=args.small_steps)
    return 0 if ok else 1


def char_rnn_command(args, stream=None):
    """Run ``char-rnn``: 0 when the model learned, 1 when not.

    Unusable input raises :class:`~caffe2rnn.errors.TextError` before anything
    is printed or written (the command line shows it as one line, exit 2).
    """
    stream = stream or sys.stdout
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise TextError("--out %s exists and is not a directory" % args.out)
    text = char_rnn.read_text(args.text)
    with blas_threads(1):
        training = char_rnn.train(
            text,
            steps=args.steps,
            seq_len=args.seq_len,
            hidden=args.hidden,
            batch=args.batch,
            learning_rate=args.learning_rate,
            seed=args.seed,
            sample_every=args.sample_every,
            sample_length=args.sample_length,
            temperature=args.temperature,
            prime=args.prime,
            stream=stream,
            title="Char-RNN on %s (%s characters):" % (args.text, format(len(text), ",")),
        )
    os.makedirs(args.out, exist_ok=True)
    report = Report("caffe2rnn char-rnn", _environment(args.seed))
    _, learned = char_rnn_section(report, training, args.out, "`%s`" % args.text)
    paths = report.write(args.out)
    stream.write(
        "Final loss %.3f nats/char (unigram entropy %.3f): %s\nReport written to %s\n"
        % (
            training.final_loss(),
            training.unigram_entropy,
            "learned" if learned else "not learned",
            paths[0],
        )
    )
    return 0 if learned else 1
