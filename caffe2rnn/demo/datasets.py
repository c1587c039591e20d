"""Data that needs no download: small synthetic tasks, and Python's own source.

Each synthetic task is generated from a NumPy random generator, so a demo or
a notebook runs anywhere, and the same seed gives the same data. Shapes follow
Caffe2's recurrent convention, time first: ``T × N × D``.

:func:`stdlib_source` is a real text for a character-level language model:
the source files of Python's standard library, present wherever Python is.
"""

import collections
import os
import sysconfig

import numpy as np


def running_mean(rng, T, N, noise=0.0, dtype=np.float32):
    """Regression: ``y_t = mean(x_0 .. x_t)`` for x uniform in [-1, 1].

    Returns ``(x, y, seq_lengths)`` with x, y of shape T × N × 1 and int32
    lengths (all T). An LSTM has to keep a running sum and a step count in
    its cell — a memory task in miniature.
    """
    x = rng.uniform(-1.0, 1.0, size=(T, N, 1))
    y = np.cumsum(x, axis=0) / np.arange(1, T + 1).reshape(T, 1, 1)
    if noise:
        x = x + rng.normal(0.0, noise, size=x.shape)
    return x.astype(dtype), y.astype(dtype), np.full(N, T, dtype=np.int32)


def one_hot(tokens, vocab, dtype=np.float32):
    """``tokens`` (any shape, ints in [0, vocab)) → one-hot with a last axis."""
    out = np.zeros(tokens.shape + (vocab,), dtype=dtype)
    np.put_along_axis(out, tokens[..., None], 1, axis=-1)
    return out


def reverse(rng, T, N, vocab, dtype=np.float32):
    """Sequence-to-sequence: output the input tokens in reverse order.

    Token 0 is the start symbol; content tokens are 1..vocab-1. Returns a
    dict with ``encoder_inputs`` (T × N × vocab one-hot), ``decoder_inputs``
    (the reversed sequence shifted right after a start token, one-hot: teacher
    forcing), ``targets`` (T × N int32) and ``seq_lengths`` (int32, all T).
    An attention decoder solves it by attending to position ``T - 1 - t``.
    """
    tokens = rng.integers(1, vocab, size=(T, N))
    targets = tokens[::-1].copy()
    previous = np.concatenate([np.zeros((1, N), dtype=tokens.dtype), targets[:-1]])
    return dict(
        encoder_inputs=one_hot(tokens, vocab, dtype),
        decoder_inputs=one_hot(previous, vocab, dtype),
        targets=targets.astype(np.int32),
        seq_lengths=np.full(N, T, dtype=np.int32),
    )


#: Standard-library modules whose source :func:`stdlib_source` reads, in this
#: order: plain, well-commented Python present in every CPython since 3.9.
STDLIB_MODULES = (
    "textwrap", "heapq", "bisect", "fnmatch", "functools", "string", "glob",
    "contextlib", "abc", "copy", "queue", "sched", "colorsys", "calendar",
    "fractions", "graphlib", "linecache", "numbers", "operator", "pprint",
    "random", "reprlib", "statistics", "tokenize", "types", "weakref", "csv",
    "base64", "shlex", "dataclasses", "enum", "difflib", "argparse", "datetime",
)  # fmt: skip

Corpus = collections.namedtuple("Corpus", ["text", "files"])
Corpus.__doc__ = """A training text and the ``(path, characters taken)`` it came from."""


def stdlib_source(max_chars=300_000, modules=STDLIB_MODULES, directory=None):
    """Up to ``max_chars`` characters of Python's standard-library source.

    Whole files of ``modules`` are taken in order (the last one cut at
    ``max_chars``) from ``directory`` (default: this interpreter's
    ``sysconfig.get_paths()["stdlib"]``); a module missing there is skipped.
    The same Python version always gives the same text. Returns a
    :class:`Corpus`; raises ``FileNotFoundError`` if no file was found.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive, got %r" % (max_chars,))
    directory = directory or sysconfig.get_paths()["stdlib"]
    parts, files, size = [], [], 0
    for module in modules:
        path = os.path.join(directory, module + ".py")
        if size >= max_chars or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()[: max_chars - size]
        parts.append(text)
        files.append((path, len(text)))
        size += len(text)
    if not parts:
        raise FileNotFoundError(
            "none of the standard-library modules %s... is in %s" % (modules[:3], directory)
        )
    return Corpus("".join(parts), files)
