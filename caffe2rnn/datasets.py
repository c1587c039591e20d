"""Small synthetic sequence tasks that ship with the package.

No downloads: each task is generated from a NumPy random generator, so a
demo or a notebook runs anywhere, and the same seed gives the same data.
Shapes follow Caffe2's recurrent convention, time first: ``T × N × D``.
"""

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
