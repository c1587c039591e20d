"""How FC multiplies by W: the layout chosen per shape, and a cached Wᵀ.

Caffe2's FC stores W as (out, in) = N × K and computes ``Y₂ = X₂ · W₂ᵀ``.
Which way BLAS is fastest depends on the shape: for a step net's few rows
(an 8 × 64 hidden state times a 256 × 64 W) OpenBLAS takes 11 µs with
``W₂ᵀ`` as a transposed view, 6 µs as ``(W₂ · X₂ᵀ)ᵀ`` and under 3 µs with Wᵀ
stored contiguously; for hundreds of rows the plain form wins. So FC keeps
three *layouts*:

* ``"x.wT"`` — ``X₂ · W₂ᵀ`` with ``W₂ᵀ`` a view (no copy);
* ``"(w.xT)T"`` — ``W₂ · X₂ᵀ`` into a buffer, the bias added while
  transposing back;
* ``"x.WT"`` — ``X₂ · Wᵀ`` with Wᵀ a contiguous copy of W, kept here.

A copy of W is only safe while W cannot change: inside the time loop of a
recurrent op (a step net reads its parameters, never writes them). The
recurrent op runs its loop in :func:`step_loop`, which starts a new
*generation*: the first FC of the loop that uses a W copies it (once for all
T steps), later ones reuse the copy. Outside a loop the copy is never used.
The blob the user sees keeps Caffe2's (N, K) layout.

Which layout a shape gets is timed once per (M, K, N, dtype, in a loop or
not) in this process (:func:`layout`), so FC's results can differ in the last
bits from another process's when BLAS sums differently for two layouts (it
does at some tiny shapes); within a process every run of a shape, with or
without the RNN executor, makes the very same calls.
"""

import contextlib
import functools
import time
import weakref

import numpy as np

#: Up to this many rows the view layout is never tried outside a loop.
FEW_ROWS = 64

_state = {"generation": 0, "depth": 0}
_layouts = {}  # (m, k, n, dtype, in_loop) -> layout name
_transposed = {}  # id(w) -> _Transposed


@contextlib.contextmanager
def step_loop():
    """Run a recurrent op's time loop: parameters are fixed inside it."""
    _state["generation"] += 1
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1


def in_step_loop():
    return _state["depth"] > 0


def _forget(key, _):
    _transposed.pop(key, None)


class _Transposed:
    """The contiguous Wᵀ of one W array and the generation it was copied in."""

    __slots__ = ("source", "shape", "wt", "generation", "__weakref__")

    def __init__(self, w, w2):
        # Held weakly (the cache must not keep W alive), and forgotten when W
        # is freed (its id may then be reused).
        self.source = weakref.ref(w, functools.partial(_forget, id(w)))
        self.shape = w2.shape
        self.wt = np.empty(w2.shape[::-1], w2.dtype)
        self.generation = None

    def refresh(self):
        """Copy W into Wᵀ (the RNN executor calls this once per loop)."""
        np.copyto(self.wt, self.source().reshape(self.shape).T)
        self.generation = _state["generation"]


def transposed(w, w2):
    """The cache entry of W (``w2`` its 2-D view), fresh for this loop."""
    entry = _transposed.get(id(w))
    if entry is None or entry.source() is not w or entry.shape != w2.shape:
        entry = _transposed[id(w)] = _Transposed(w, w2)
    if entry.generation != _state["generation"]:
        entry.refresh()
    return entry


def layout(m, k, n, dtype):
    """The layout FC uses for an (M × K) · (K × N) product here (timed once)."""
    in_loop = in_step_loop()
    key = (m, k, n, np.dtype(dtype), in_loop)
    choice = _layouts.get(key)
    if choice is None:
        choice = _layouts[key] = _fastest(m, k, n, np.dtype(dtype), in_loop)
    return choice


def _fastest(m, k, n, dtype, in_loop):
    if not in_loop:
        return "(w.xT)T" if m <= FEW_ROWS else "x.wT"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = np.zeros(n, dtype)
    y, yt, wt = np.empty((m, n), dtype), np.empty((n, m), dtype), np.ascontiguousarray(w.T)
    candidates = {
        "x.wT": lambda: (np.dot(x, w.T, out=y), np.add(y, b, out=y)),
        "(w.xT)T": lambda: (np.dot(w, x.T, out=yt), np.add(yt.T, b, out=y)),
        "x.WT": lambda: (np.dot(x, wt, out=y), np.add(y, b, out=y)),
    }
    repeat = max(2, min(20, int(4e6 // max(1, m * k * n))))
    best = dict.fromkeys(candidates, float("inf"))
    for fn in candidates.values():
        fn()
    # Interleaved rounds, best of each: a busy machine slows all candidates alike.
    for _ in range(5):
        for name, fn in candidates.items():
            start = time.perf_counter()
            for _ in range(repeat):
                fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return min(best, key=best.get)
