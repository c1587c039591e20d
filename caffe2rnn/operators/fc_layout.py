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

Which layout a shape gets is a fixed rule of the shape (:func:`layout`),
never a timing: BLAS may sum differently for two layouts (OpenBLAS does at
some tiny shapes, e.g. 8 × 32 · 32 × 128), so a choice timed at start-up
would let two processes print different last bits for the same net. The
rule was read off ``benchmarks/bench_fc_layouts.py`` (OpenBLAS, SkylakeX
kernels), which prints each layout's time beside the rule's pick; on other
BLAS builds the pick may be a little slower, never different in value from
run to run.
"""

import contextlib
import functools
import weakref

import numpy as np

#: Outside a loop, up to this many rows FC forms (W₂ · X₂ᵀ)ᵀ.
FEW_ROWS = 64
#: Inside a loop, rows in this band with K ≥ 8·M take (W₂ · X₂ᵀ)ᵀ too.
MIDDLE_ROWS = (16, 64)

_state = {"generation": 0, "depth": 0}
_copies = {}  # (kind, id(array), ...) -> _LoopCopy


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
    _copies.pop(key, None)


class _LoopCopy:
    """A parameter copied into another layout (``value``), and the loop
    (generation) it was copied in: Wᵀ contiguous, or b repeated over rows."""

    __slots__ = ("source", "shape", "value", "fill", "generation", "__weakref__")

    def __init__(self, key, array, shape, value, fill):
        # Held weakly (the cache must not keep the parameter alive), and
        # forgotten when it is freed (its id may then be reused).
        self.source = weakref.ref(array, functools.partial(_forget, key))
        self.shape, self.value, self.fill = shape, value, fill
        self.generation = None

    @property
    def what(self):
        """The copy in words (``StepPlan.describe()`` shows the prologue with it)."""
        if self.fill is _copy_transposed:
            return "copy W %s into its cached W^T" % (self.shape,)
        return "copy b %s into %d rows" % (self.shape, self.value.shape[0])

    def refresh(self):
        """Copy the parameter (the RNN executor calls this once per loop)."""
        self.fill(self.value, self.source().reshape(self.shape))
        self.generation = _state["generation"]


def _fresh(entry):
    # FC.run calls transposed() at every step of the op-by-op loop: a hit
    # is a dict lookup and two comparisons.
    if entry.generation != _state["generation"]:
        entry.refresh()
    return entry


def _copy_transposed(out, w2):
    np.copyto(out, w2.T)


def transposed(w, w2):
    """The contiguous Wᵀ of W (``w2`` its 2-D view), fresh for this loop
    (``.value``)."""
    key = ("W^T", id(w))
    entry = _copies.get(key)
    if entry is None or entry.source() is not w or entry.shape != w2.shape:
        value = np.empty(w2.shape[::-1], w2.dtype)
        entry = _copies[key] = _LoopCopy(key, w, w2.shape, value, _copy_transposed)
    return _fresh(entry)


def tiled(b, rows):
    """b repeated over ``rows`` rows, fresh for this loop (``.value``): adding
    it is a same-shape add, about twice as fast as NumPy's broadcast at a
    step net's size (8 × 256: 0.8 against 1.9 µs), and the same sums."""
    key = ("rows", id(b), rows)
    entry = _copies.get(key)
    if entry is None or entry.source() is not b or entry.shape != b.shape:
        value = np.empty((rows,) + b.shape, b.dtype)
        entry = _copies[key] = _LoopCopy(key, b, b.shape, value, np.copyto)
    return _fresh(entry)


def tiled_row(array):
    """The row ``array`` repeats if it is a :func:`tiled` copy (its first row,
    a view of it), else None: a reader that can broadcast the row adds the
    same numbers reading N times less (the fused LSTM step)."""
    for entry in _copies.values():
        if entry.fill is np.copyto and entry.value is array:
            return array[0]
    return None


def layout(m, k, n):
    """The layout FC uses for an (M × K) · (K × N) product here: a pure
    function of the shape and of whether a step loop is running.

    Outside a loop W may change between runs, so there is no cached Wᵀ: up to
    :data:`FEW_ROWS` rows ``(W₂ · X₂ᵀ)ᵀ`` is the faster of the two, above it
    the plain view. Inside a loop the contiguous Wᵀ is fastest except for a
    middle band of rows with a long inner dimension (16-64 rows, K ≥ 8·M, e.g.
    16 × 128 · 128 × 512: 21 µs against 28 µs), where ``(W₂ · X₂ᵀ)ᵀ`` wins.
    """
    if not in_step_loop():
        return "(w.xT)T" if m <= FEW_ROWS else "x.wT"
    if MIDDLE_ROWS[0] <= m <= MIDDLE_ROWS[1] and k >= 8 * m:
        return "(w.xT)T"
    return "x.WT"
