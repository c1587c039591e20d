"""TopK: the k largest entries along the last dimension, and their gradient.

``TopK(X, k=k) → [Values, Indices(, FlattenIndices)]``: for X of shape
``[a_1, ..., a_n, r]``, Values and Indices are ``[a_1, ..., a_n, k]``: the k
largest entries of each row, largest first, and their positions in the row.
Equal values keep the lower index first. The optional third output is 1-D:
each index plus its row's offset into the flattened X (``row · r``). Beam
search picks its ``beam_size`` best continuations with it
(``models/seq2seq/beam_search.py``).

``TopKGradient([dValues, Indices, X]) → dX`` scatters each row's gradients
back to the positions they came from, zeros elsewhere.

E7 (top_k.{h,cc} at 929c33cee; the era policy
:attr:`~caffe2rnn.eras.Era.top_k_axis`): both ops read ``axis`` (default -1,
the last dimension; any other negative axis is refused,
``CAFFE_ENFORCE_GE(axis_, 0)``), Values and Indices have ``k`` at ``axis``,
and the flat indices count into the flattened X (``i · n · s + index · s +
j`` for the ``i``-th block before the axis and the ``j``-th position after
it, ``s`` the size after the axis, ``n`` the axis's). ``TopK`` refuses
``k < 1`` when it is created ("k argument must be >= 1") and a k above the
axis's size ("k argument should not be greater than the axis dim.");
``TopKGradient`` refuses a dValues whose rank differs from X's
(``CAFFE_ENFORCE_EQ``). Caffe2 wrote the axis it filled in for -1 back into
the op, so a TopK run again on an X of another rank kept the first rank's
last axis; here -1 is the last axis of each run's X.

Caffe2 sources: caffe2/operators/top_k.{h,cc} at 0cdd09da6 (unchanged at
042e8ede4) and 929c33cee. The kernels were float32 only (``TopKOp<float>``) and read any
input's bytes as float32; here a non-float input is refused rather than
misread, and float64 is kept as float64. Indices are int64 (``TIndex``).
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register
from .base import Operator
from .gradient_maker import single_op_gradient


def _axis_view(op, a, axis):
    """``a`` seen as ``(before, n, after)`` around ``axis`` (E7's prev/next sizes)."""
    return a.reshape(math.prod(a.shape[:axis]), a.shape[axis], math.prod(a.shape[axis + 1 :]))


def _resolve_axis(op, ndim, i):
    """E7's axis: -1 is the last; else it must lie in ``[0, ndim)`` (input ``i``'s rank)."""
    axis = ndim - 1 if op.axis == -1 else op.axis
    if not 0 <= axis < ndim:
        raise ArgumentError(
            "axis=%d; expected 0 <= axis < %d (the rank of input %d '%s'), or -1"
            % (op.axis, ndim, i, op.input_name(i))
        )
    return axis


@register("TopK", inputs=1, outputs=(2, 3))
class TopK(Operator):
    """``[Values, Indices(, FlattenIndices)]`` of the k largest per row (module doc)."""

    def setup(self):
        self.k = self.args.single("k", -1, int)
        self.axis = None
        if self.era is None or eras.get(self.era).top_k_axis:
            self.axis = self.args.single("axis", -1, int)
            if self.k < 1:
                # TopKOp's constructor, top_k.h at 929c33cee
                raise ArgumentError("k argument must be >= 1 (got k=%d)" % self.k)

    def run(self):
        x = self.float_input(0)
        k = self.k
        if x.ndim == 0:
            raise self.shape_error(0, "at least 1 dimension (TopK works on the last one)")
        if self.axis is not None:
            self.run_along(x, _resolve_axis(self, x.ndim, 0))
            return
        r = x.shape[-1]
        if r < k:
            # CAFFE_ENFORCE in TopKOp::RunOnDevice.
            raise ArgumentError(
                "k=%d: k argment should not be greater than last dim (%d, of input 0 '%s')"
                % (k, r, self.input_name(0))
            )
        if k < 0 or (k == 0 and r > 0):
            # A negative size, or the top of an empty heap: Caffe2 crashed.
            raise ArgumentError("k=%d: expected k >= 1 (the 'k' argument is required)" % k)
        rows = math.prod(x.shape[:-1])
        order = np.argsort(-x.reshape(rows, r), axis=1, kind="stable")[:, :k]
        shape = x.shape[:-1] + (k,)
        values = self.output(0, shape, x.dtype)
        np.copyto(values, np.take_along_axis(x.reshape(rows, r), order, axis=1).reshape(shape))
        np.copyto(self.output(1, shape, np.int64), order.reshape(shape))
        if len(self.outputs) > 2:
            flat = order + (np.arange(rows, dtype=np.int64) * r)[:, None]
            np.copyto(self.output(2, (rows * k,), np.int64), flat.reshape(-1))

    def run_along(self, x, axis):
        """E7: the k largest along ``axis``; ties keep the lower index first."""
        k, n = self.k, x.shape[axis]
        if k > n:
            raise ArgumentError(
                "k=%d: k argument should not be greater than the axis dim (%d, axis %d "
                "of input 0 '%s')" % (k, n, axis, self.input_name(0))
            )
        view = _axis_view(self, x, axis)
        order = np.argsort(-view, axis=1, kind="stable")[:, :k, :]
        shape = x.shape[:axis] + (k,) + x.shape[axis + 1 :]
        np.copyto(self.output(0, shape, x.dtype), np.take_along_axis(view, order, 1).reshape(shape))
        np.copyto(self.output(1, shape, np.int64), order.reshape(shape))
        if len(self.outputs) > 2:
            before, _, after = view.shape
            flat = (
                np.arange(before, dtype=np.int64)[:, None, None] * (n * after)
                + order * after
                + np.arange(after, dtype=np.int64)[None, None, :]
            )
            np.copyto(self.output(2, (flat.size,), np.int64), flat.reshape(-1))


@register("TopKGradient", inputs=3, outputs=1)
class TopKGradient(Operator):
    """``dX`` of X's shape: zeros, and ``dX[row, Indices[row, j]] = dValues[row, j]``.

    Caffe2 wrote without checking; the checks here are the ones that keep
    every write inside dX (indices in ``[0, X.shape[-1])``, no more rows than
    X has) and read the indices as they are (int32 or int64). E7: along
    ``axis`` (module doc).
    """

    def setup(self):
        self.axis = None
        if self.era is None or eras.get(self.era).top_k_axis:
            self.axis = self.args.single("axis", -1, int)

    def run(self):
        dv = self.float_input(0)
        indices = self.typed_input(1, (np.int32, np.int64), "int64 (or int32) indices")
        original = self.input(2)
        if dv.ndim == 0:
            raise self.shape_error(0, "at least 1 dimension")
        if indices.shape != dv.shape:
            raise self.shape_error(1, "%s like input 0 ('%s')" % (dv.shape, self.input_name(0)))
        if original.ndim == 0:
            raise self.shape_error(2, "at least 1 dimension")
        if self.axis is not None:
            self.run_along(dv, indices, original)
            return
        cols = original.shape[-1]
        rows = math.prod(dv.shape[:-1])
        if rows and dv.shape[-1] and rows * cols > original.size:
            raise self.shape_error(2, "at least %d rows (one per row of input 0)" % rows)
        self.check_indices(indices, cols, -1)
        out = self.output(0, original.shape, dv.dtype)
        out.fill(0)
        if dv.size:
            grid = out.reshape(-1)[: rows * cols].reshape(rows, cols)
            np.put_along_axis(grid, indices.reshape(rows, -1), dv.reshape(rows, -1), axis=1)

    def check_indices(self, indices, cols, axis):
        if indices.size and (indices.min() < 0 or indices.max() >= cols):
            raise ShapeError(
                "input 1 ('%s') holds indices from %d to %d; expected them in [0, %d) "
                "(dimension %d of input 2 '%s')"
                % (
                    self.input_name(1),
                    indices.min(),
                    indices.max(),
                    cols,
                    axis,
                    self.input_name(2),
                )
            )

    def run_along(self, dv, indices, original):
        if dv.ndim != original.ndim:
            # CAFFE_ENFORCE_EQ(values_dims.size(), origin_dims.size()), top_k.cc at 929c33cee
            raise self.shape_error(
                0, "%d dimensions like input 2 ('%s')" % (original.ndim, self.input_name(2))
            )
        axis = _resolve_axis(self, dv.ndim, 0)
        others = dv.shape[:axis] + dv.shape[axis + 1 :]
        if others != original.shape[:axis] + original.shape[axis + 1 :]:
            raise self.shape_error(
                0,
                "the shape of input 2 ('%s', %s) but for dimension %d"
                % (self.input_name(2), original.shape, axis),
            )
        self.check_indices(indices, original.shape[axis], axis)
        out = self.output(0, original.shape, dv.dtype)
        out.fill(0)
        if dv.size:
            np.put_along_axis(
                _axis_view(self, out, axis),
                _axis_view(self, indices, axis),
                _axis_view(self, dv, axis),
                axis=1,
            )


single_op_gradient("TopK", "TopKGradient", ["GO0", "O1", "I0"])
