"""FC (fully connected) and FCGradient: ``Y = X · Wᵀ + b``.

Caffe2 (``caffe2/operators/fully_connected_op.h``) flattens X to a matrix
``X₂ = M × K`` at ``axis`` (M = product of the dims before it, K = of the rest)
and keeps W in ``(out, in) = N × K`` layout, so ``Y₂ = X₂ · W₂ᵀ + b`` and Y's
shape is ``X.shape[:axis] + (N,)``. In an LSTM step net X is ``1 × batch × D``
with ``axis=2``, giving gates of shape ``1 × batch × 4H``.

W must be 2-D until 0d9607ace (2017-08, era E6); from then on ``axis_w``
flattens an N-D W the same way (``N = W.size_to_dim(axis_w)``).

FC runs in every timestep of a recurrent net, so :meth:`FC.run` and
:meth:`FCGradient.run` validate only when the input shapes change and write
straight into the outputs' memory. How the product is formed is chosen per
shape (:mod:`.fc_layout`): outside a recurrent op's loop, with few rows, FC
computes ``Y₂ᵀ = W₂ · X₂ᵀ`` and adds the bias while transposing back (BLAS
runs a GEMM whose tall operand is W 1.3–1.6× faster than ``X₂ · W₂ᵀ`` when
X₂ has ≤ 64 rows); inside a loop the fastest of three layouts, timed once,
one of them a contiguous Wᵀ copied once per loop.
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime.registry import register, register_gradient
from . import fc_layout
from .base import Operator
from .bound_call import BoundCall
from .gradient_maker import GradientMaker

#: Never held by a blob (unlike None, an empty blob's value): forces a refresh.
_STALE = object()


#: Up to this many rows in X₂, FC computes Y₂ᵀ = W₂ · X₂ᵀ outside a loop.
FEW_ROWS = fc_layout.FEW_ROWS

#: (shape, dtype) -> the Y₂ᵀ buffer the bound calls of every few-rows FC share
#: (run() allocates one per call; the executor's plan must not keep one per step).
_transposed_buffers = {}


def _transposed_buffer(name, shape, dtype):
    """A scratch Yᵀ for the bound calls of the FCs writing blob ``name``: one
    per output name, so the same FC at every timestep shares it, while two
    different FCs of a step net (two layers) do not, and may run at once on
    the RNN executor's threads."""
    key = (name, shape, dtype)
    if key not in _transposed_buffers:
        _transposed_buffers[key] = np.empty(shape, dtype)
    return _transposed_buffers[key]


def _flat_views(*pairs):
    """``a.reshape(shape)`` for each ``(a, shape)``, or None if one would be a
    copy (a non-contiguous array): bound calls must write and read the blobs'
    own memory."""
    if not all(a.flags.c_contiguous for a, _ in pairs):
        return None
    # An array already of that shape is used itself (one view object less per step).
    return [a if a.shape == shape else a.reshape(shape) for a, shape in pairs]


def _shape_key(*values):
    """Shapes and types of ``values`` (None if one is not an array): the ops
    re-validate only when this changes, so the full check, which names the
    blob, runs for anything new."""
    try:
        return tuple(v.shape for v in values) + tuple(v.dtype for v in values)
    except AttributeError:
        return None


class FullyConnectedBase(Operator):
    """Argument parsing and the X/W/b shape rules shared by FC and FCGradient."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)
        self.axis_w = self.args.single("axis_w", 1, int) if eras.current().fc_axis_w else None

    def matrix_dims(self, x, w):
        """``(M, K, N)`` of ``Y₂ (M×N) = X₂ (M×K) · W₂ᵀ (K×N)``, validated."""
        axis = self.axis + x.ndim if self.axis < 0 else self.axis
        if not 0 <= axis <= x.ndim:
            raise ArgumentError(
                "axis %d is out of range for input 0 ('%s') of "
                "shape %s" % (self.axis, self.input_name(0), x.shape)
            )
        m, k = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
        if self.axis_w is None:
            if w.ndim != 2:
                raise self.shape_error(1, "a 2-D matrix (N, %d)" % k)
            n, k_w = w.shape
        else:
            axis_w = self.axis_w + w.ndim if self.axis_w < 0 else self.axis_w
            if not 0 <= axis_w <= w.ndim:
                raise ArgumentError(
                    "axis_w %d is out of range for input 1 ('%s') "
                    "of shape %s" % (self.axis_w, self.input_name(1), w.shape)
                )
            n, k_w = math.prod(w.shape[:axis_w]), math.prod(w.shape[axis_w:])
        if k_w != k:
            raise ShapeError(
                "Dimension mismatch: input 1 ('%s') has shape %s, i.e. N x K = %d x %d; "
                "expected K = %d, the size of input 0 ('%s', shape %s) from axis %d"
                % (self.input_name(1), w.shape, n, k_w, k, self.input_name(0), x.shape, axis)
            )
        if w.dtype != x.dtype:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected %s like input 0 "
                "('%s')" % (self.input_name(1), w.dtype, x.dtype, self.input_name(0))
            )
        return m, k, n, axis


@register("FC", inputs=3, outputs=1)
class FC(FullyConnectedBase):
    """``Y = X₂ · W₂ᵀ + b`` with Y shaped ``X.shape[:axis] + (N,)``.

    Inputs X, W (N × K), b (N,). The shapes are validated when they change,
    not on every run, and the 2-D views of X, W and Y are kept while the
    blobs hold the same arrays: in a step net W and Y usually do (Y being
    rewritten in place), so a run is one ``np.matmul`` and one bias add.
    """

    #: Y is written whole (the product, then the bias added in place).
    writes_outputs_whole = True

    def setup(self):
        super().setup()
        self._checked = ()  # the input shapes/types last validated
        self._x = self._w = self._y = _STALE  # arrays whose 2-D views are cached

    def run(self):
        x = self.inputs[0].value
        w = self.inputs[1].value
        b = self.inputs[2].value
        key = _shape_key(x, w, b)
        if key != self._checked:
            self.plan(key)
        # A reshape of a non-contiguous array is a copy, which must not be kept.
        if x is not self._x:
            self._x2 = x.reshape(self._x2_shape)
            self._x = x if x.flags.c_contiguous else _STALE
        if w is not self._w:
            self._w2 = w.reshape(self._w2_shape)
            self._w = w if w.flags.c_contiguous else _STALE
        y = self.outputs[0].value
        if y is not self._y:
            y = self.outputs[0].resize(self._y_shape, x.dtype)
            self._y, self._y2 = y, y.reshape(self._y2_shape)
        y2 = self._y2
        # np.matmul, though np.dot is a little cheaper to call: the RNN
        # executor runs matmul's inner loop directly, and that must be the
        # very code run() runs.
        in_loop = fc_layout.in_step_loop()
        layout = self._layouts.get(in_loop) or self._layout(in_loop)
        if layout == "(w.xT)T":
            y2t = np.empty(self._y2_shape[::-1], x.dtype)
            np.matmul(self._w2, self._x2.T, out=y2t)
            np.add(y2t.T, b, out=y2)
        elif layout == "x.WT":
            np.matmul(self._x2, fc_layout.transposed(w, self._w2).value, out=y2)
            np.add(y2, b, out=y2)
        else:
            np.matmul(self._x2, self._w2.T, out=y2)
            np.add(y2, b, out=y2)

    def _layout(self, in_loop):
        m, n = self._y2_shape
        self._layouts[in_loop] = fc_layout.layout(m, self._x2_shape[1], n)
        return self._layouts[in_loop]

    def bind(self):
        """run()'s two calls on this run's arrays (for the RNN executor)."""
        x, w, b = (blob.value for blob in self.inputs)
        views = _flat_views(
            (x, self._x2_shape), (w, self._w2_shape), (self.outputs[0].value, self._y2_shape)
        )
        if views is None:
            return None
        x2, w2, y2 = views
        layout = self._layouts.get(fc_layout.in_step_loop())
        if layout == "(w.xT)T":
            y2t = _transposed_buffer(self.outputs[0].name, self._y2_shape[::-1], x.dtype)
            return [
                BoundCall.product(w2, x2.T, y2t),
                BoundCall.elementwise(np.add, y2t.T, b, y2),
            ]
        if layout == "x.WT":
            # Two copies made once per loop (the executor's prologue): Wᵀ
            # contiguous, and b over the rows (the same sums as run()'s
            # broadcast add, in half the time).
            wt = fc_layout.transposed(w, self._w2)
            rows = fc_layout.tiled(b, y2.shape[0])
            self.loop_prologue = [
                (id(wt), BoundCall.loop_copy(wt)),
                (id(rows), BoundCall.loop_copy(rows)),
            ]
            return [
                BoundCall.product(x2, wt.value, y2),
                BoundCall.elementwise(np.add, y2, rows.value, y2),
            ]
        return [
            BoundCall.product(x2, w2.T, y2),
            BoundCall.elementwise(np.add, y2, b, y2),
        ]

    def plan(self, key):
        """Validate the inputs; remember the 2-D shapes run() uses."""
        x = self.float_input(0)
        w = self.input(1)
        b = self.input(2)
        m, k, n, axis = self.matrix_dims(x, w)
        if b.shape != (n,):
            raise self.shape_error(2, "(%d,), one bias per output (N = W's dim 0)" % n)
        if b.dtype != x.dtype:
            raise DTypeError(
                "input 2 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(2), b.dtype, x.dtype)
            )
        self._x2_shape, self._w2_shape = (m, k), (n, k)
        self._y_shape, self._y2_shape = x.shape[:axis] + (n,), (m, n)
        self._layouts = {}  # in a step loop or not -> layout (fc_layout)
        self._checked = key
        self._x = self._w = self._y = _STALE


@register("FCGradient", inputs=3, outputs=(2, 3))
class FCGradient(FullyConnectedBase):
    """Inputs X, W, dY → dW = dY₂ᵀ · X₂, db = Σ_rows dY₂, and (3rd output) dX = dY₂ · W₂.

    The column sums of dY₂ are the product ``1ᵀ · dY₂`` of a 1 × M row of
    ones (a GEMV: fewer passes than a reduction along the first axis). Every
    product is an ``np.matmul`` of matrices, the form the RNN executor runs
    without NumPy's dispatch (:func:`caffe2rnn.kernels.rnn_executor.compile_calls`).
    """

    def setup(self):
        super().setup()
        self._checked = ()  # the input shapes/types last validated

    def run(self):
        x = self.inputs[0].value
        w = self.inputs[1].value
        dy = self.inputs[2].value
        key = _shape_key(x, w, dy)
        if key != self._checked:
            self.plan(key)
        m, k, n = self._mkn
        dtype, outputs = x.dtype, self.outputs
        x2, dy2 = x.reshape(m, k), dy.reshape(m, n)
        np.matmul(dy2.T, x2, out=outputs[0].resize(w.shape, dtype).reshape(n, k))
        np.matmul(self._ones, dy2, out=outputs[1].resize((n,), dtype).reshape(1, n))
        if len(outputs) == 3:
            np.matmul(dy2, w.reshape(n, k), out=outputs[2].resize(x.shape, dtype).reshape(m, k))

    def bind(self):
        """run()'s GEMMs and GEMV on this run's arrays (for the RNN executor)."""
        m, k, n = self._mkn
        x, w, dy = (blob.value for blob in self.inputs)
        pairs = [(x, (m, k)), (w, (n, k)), (dy, (m, n))]
        pairs += [(self.outputs[0].value, (n, k)), (self.outputs[1].value, (1, n))]
        if len(self.outputs) == 3:
            pairs.append((self.outputs[2].value, (m, k)))
        views = _flat_views(*pairs)
        if views is None:
            return None
        x2, w2, dy2, dw2, db = views[:5]
        calls = [BoundCall.product(dy2.T, x2, dw2), BoundCall.product(self._ones, dy2, db)]
        if len(self.outputs) == 3:
            calls.append(BoundCall.product(dy2, w2, views[5]))
        return calls

    def plan(self, key):
        """Validate the inputs; remember (M, K, N) and the row of ones."""
        x = self.float_input(0)
        w = self.input(1)
        dy = self.input(2)
        m, k, n, _ = self.matrix_dims(x, w)
        if dy.size != m * n:
            raise self.shape_error(2, "%d x %d = %d elements (M x N)" % (m, n, m * n))
        if dy.dtype != x.dtype:
            raise DTypeError(
                "input 2 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(2), dy.dtype, x.dtype)
            )
        self._mkn, self._ones = (m, k, n), np.ones((1, m), x.dtype)
        self._checked = key


@register("rnn_internal_fc_input_gradient", inputs=3, outputs=1)
class FCInputGradient(FCGradient):
    """Inputs X, W, dY → dX = dY₂ · W₂ alone: an ``FCGradient`` of a backward
    step net whose dW and db are formed after the loop, over all timesteps at
    once (:class:`~caffe2rnn.operators.rnn.param_gradients.BatchedOverTime`).
    The same checks and the same call as FCGradient's dX, so the same numbers."""

    def run(self):
        x, w, dy = (blob.value for blob in self.inputs)
        key = _shape_key(x, w, dy)
        if key != self._checked:
            self.plan(key)
        m, k, n = self._mkn
        dx = self.outputs[0].resize(x.shape, x.dtype)
        np.matmul(dy.reshape(m, n), w.reshape(n, k), out=dx.reshape(m, k))

    def bind(self):
        m, k, n = self._mkn
        x, w, dy = (blob.value for blob in self.inputs)
        views = _flat_views((dy, (m, n)), (w, (n, k)), (self.outputs[0].value, (m, k)))
        if views is None:
            return None
        return [BoundCall.product(*views)]


@register_gradient("FC")
class GetFCGradient(GradientMaker):
    """``FCGradient([X, W, dY] → [dW, db, dX])``; forward args (axis...) copied."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "FCGradient",
                [self.I(0), self.I(1), self.GO(0)],
                [self.GI(1), self.GI(2), self.GI(0)],
            )
        ]
