"""Softmax and SoftmaxWithLoss, with their gradients.

Both view the input as a matrix: ``N = X.size_to_dim(axis)`` rows of
``D = X.size_from_dim(axis)`` logits (``axis`` defaults to 1, negative counts
from the end), and normalise each row: ``softmax(x) = exp(x − max x) / Σ exp(x
− max x)`` (subtracting the row max keeps ``exp`` from overflowing).

``SpatialSoftmaxWithLoss`` applies the softmax at each pixel of an NCHW
image over its D channels (classes), with a label per pixel.

Caffe2: caffe2/operators/softmax_op.{h,cc}, softmax_shared.cc,
softmax_with_loss_op.{h,cc} (at 0cdd09da6), spatial_softmax_with_loss_op.{h,cc}
(at 0cdd09da6 and 929c33cee).
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

#: Probabilities are clamped here before ``log`` so a zero never gives inf.
_LOG_FLOOR = 1e-20


def _canonical_axis(op, index, axis):
    ndim = op.input(index).ndim
    if not -ndim <= axis < ndim:
        raise op.shape_error(
            index, "more than %d dims (argument axis=%d)" % (axis if axis >= 0 else -axis - 1, axis)
        )
    return axis + ndim if axis < 0 else axis


def _rows(x, axis):
    """The ``N × D`` matrix view of ``x`` split at ``axis``."""
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def softmax_rows(x, out):
    """Row-wise softmax of the 2-D ``x`` written into ``out`` (same shape)."""
    if not x.size:  # no rows, or rows of no logits: nothing to normalise
        return out
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)
    return out


@register("Softmax", inputs=1, outputs=1)
class Softmax(Operator):
    """Y = softmax of each row of the ``N × D`` view of X; Y has X's shape."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)

    def run(self):
        x = self.float_input(0)
        axis = _canonical_axis(self, 0, self.axis)
        y = self.output(0, x.shape, x.dtype)
        softmax_rows(_rows(x, axis), _rows(y, axis))


@register("SoftmaxGradient", inputs=2, outputs=1)
class SoftmaxGradient(Operator):
    """dX = Y ⊙ (dY − rowsum(dY ⊙ Y)), rows taken as in the forward op."""

    def setup(self):
        self.axis = self.args.single("axis", 1, int)

    def run(self):
        y, dy = self.float_input(0), self.float_input(1)
        dtype = self.same_dtype(0, 1)
        if dy.shape != y.shape:
            raise self.shape_error(1, "%s (like input 0, the softmax output)" % (y.shape,))
        axis = _canonical_axis(self, 0, self.axis)
        y2, dy2 = _rows(y, axis), _rows(dy, axis)
        dot = np.einsum("nd,nd->n", dy2, y2)[:, None]
        dx2 = _rows(self.output(0, y.shape, dtype), axis)
        np.subtract(dy2, dot, out=dx2)
        dx2 *= y2


@register_gradient("Softmax")
class GetSoftmaxGradient(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("SoftmaxGradient", [self.O(0), self.GO(0)], [self.GI(0)])]


class _SoftmaxLossBase(Operator):
    """Argument parsing and input checks shared by the loss and its gradient."""

    def setup(self):
        self.scale = self.args.single("scale", 1.0, float)
        self.label_prob = self.args.single("label_prob", 0, int)
        self.axis = self.args.single("axis", 1, int)
        # StringToStorageOrder(order); CAFFE_ENFORCE_EQ(order_, NCHW) (softmax_with_loss_op.h)
        order = self.args.single("order", "NCHW", str)
        if order != "NCHW":
            raise EnforceNotMet(
                "%s: Only NCHW order is supported right now (argument order=%r)"
                % (self.def_.type, order)
            )
        if self.scale < 0:
            raise ArgumentError("argument 'scale' is %g; it must be >= 0" % self.scale)

    def _check(self, weight_index):
        """Validate X, T, (weights); return (X rows, T as rows/labels, weights)."""
        x = self.float_input(0)
        axis = _canonical_axis(self, 0, self.axis)
        x2 = _rows(x, axis)
        n, d = x2.shape
        t = self.input(1)
        if self.label_prob:
            if t.dtype != x.dtype:
                raise DTypeError(
                    "input 1 ('%s') has type %s; expected %s "
                    "probabilities like input 0 (label_prob=1)"
                    % (self.input_name(1), t.dtype, x.dtype)
                )
            if t.ndim < 2 or t.size != n * d:
                raise self.shape_error(1, "%d x %d probabilities (label_prob=1)" % (n, d))
            labels = t.reshape(n, d)
        else:
            if t.dtype != np.int32:
                raise DTypeError(
                    "input 1 ('%s') has type %s; expected int32 labels"
                    % (self.input_name(1), t.dtype)
                )
            if t.size != n:
                raise self.shape_error(1, "%d labels (one per row of input 0)" % n)
            labels = t.reshape(n)
            if n and (labels.min() < 0 or labels.max() >= d):
                raise ShapeError(
                    "input 1 ('%s'): label values must be in [0, %d); "
                    "got values from %d to %d" % (self.input_name(1), d, labels.min(), labels.max())
                )
        weights = None
        if weight_index is not None:
            weights = self.float_input(weight_index)
            if weights.size != n:
                raise self.shape_error(weight_index, "%d weights (one per row)" % n)
            weights = weights.reshape(n)
        return x2, labels, weights


@register("SoftmaxWithLoss", inputs=(2, 3), outputs=2)
class SoftmaxWithLoss(_SoftmaxLossBase):
    """P = softmax(X) and the weighted mean cross-entropy loss (a 0-d tensor).

    ``loss = scale · Σ_i w_i · (−log P[i, T_i]) / Σ_i w_i`` (w = 1 without the
    weight input; 0 when the weights sum to 0). With ``label_prob=1``, T is an
    ``N × D`` probability matrix and the row term is ``Σ_j −log P_ij · T_ij``.
    """

    def run(self):
        x2, labels, weights = self._check(2 if len(self.inputs) == 3 else None)
        x = self.input(0)
        p = self.output(0, x.shape, x.dtype)
        p2 = softmax_rows(x2, _rows(p, _canonical_axis(self, 0, self.axis)))
        logp = np.log(np.maximum(p2, _LOG_FLOOR))
        if self.label_prob:
            row_loss = -np.einsum("nd,nd->n", logp, labels)
        else:
            row_loss = -logp[np.arange(len(labels)), labels]
        if weights is None:
            total, weighted = len(row_loss), row_loss.sum()
        else:
            total, weighted = weights.sum(), np.dot(weights, row_loss)
        loss = self.output(1, (), x.dtype)
        loss[...] = self.scale * weighted / total if total != 0 else 0.0


@register("SoftmaxWithLossGradient", inputs=(4, 5), outputs=1)
class SoftmaxWithLossGradient(_SoftmaxLossBase):
    """dX = (P − onehot(T) or P − T) · w_i · scale / total_weight · dLoss.

    Inputs: X, T, (weights), P, dLoss — the weights are present when there
    are 5 inputs.
    """

    def setup(self):
        super().setup()
        # read as SoftmaxWithLossGradientOp read it; only its CUDA code used it
        self.only_loss = self.args.single("only_loss", False, bool)

    def run(self):
        has_weights = len(self.inputs) == 5
        x2, labels, weights = self._check(2 if has_weights else None)
        p_index = 3 if has_weights else 2
        p, dloss = self.float_input(p_index), self.float_input(p_index + 1)
        x = self.input(0)
        if p.shape != x.shape:
            raise self.shape_error(p_index, "%s (the softmax output, like input 0)" % (x.shape,))
        if dloss.size != 1:
            raise self.shape_error(p_index + 1, "one element (the loss gradient)")
        dx = self.output(0, x.shape, x.dtype)
        dx2 = dx.reshape(x2.shape)
        p2 = p.reshape(x2.shape)
        if self.label_prob:
            np.subtract(p2, labels, out=dx2)
        else:
            np.copyto(dx2, p2)
            dx2[np.arange(len(labels)), labels] -= 1
        total = len(labels) if weights is None else weights.sum()
        if weights is not None:
            dx2 *= weights[:, None]
        factor = self.scale * float(dloss.reshape(-1)[0]) / total if total != 0 else 0.0
        dx2 *= factor


@register_gradient("SoftmaxWithLoss")
class GetSoftmaxWithLossGradient(GradientMaker):
    def get_gradient_defs(self):
        inputs = [self.I(i) for i in range(len(self.def_.input))]
        return [
            self.op_def("SoftmaxWithLossGradient", inputs + [self.O(0), self.GO(1)], [self.GI(0)])
        ]


# --- SpatialSoftmaxWithLoss ---------------------------------------------------------
#: SpatialSoftmaxWithLoss's ignored label (``DONT_CARE``): the pixel adds no loss.
_DONT_CARE = -1


class _SpatialLossBase(Operator):
    """SpatialSoftmaxWithLoss and its gradient: one softmax per pixel.

    ``X`` is ``N × D × H × W`` logits (NCHW: D classes per pixel), ``T`` an
    ``N × H × W`` int32 label map (``-1``: ignore the pixel), optional weights
    one per pixel. ``P = softmax(X)`` over D at each pixel and ``loss = Σ w ·
    (−log max(P[label], 1e-20)) / Σ w`` over the labelled pixels (0 when the
    weights add up to 0); ``scale`` (default 1, ``>= 0``) scales only the
    gradient. Caffe2 929c33cee (and 042e8ede4):
    caffe2/operators/spatial_softmax_with_loss_op.{h,cc}: float only, order
    NCHW only; it refuses (``CAFFE_ENFORCE``) a 4-D X, a 3-D T and a first
    dimension of T other than N (at 0cdd09da6, era E5, these were ``DCHECK``s,
    gone in release builds, where a T of another rank but as many labels ran),
    and a label outside ``[0, D)`` other than -1 (the gradient did not check:
    it would have written elsewhere). The pixels are read at ``T``'s and the
    weights' flat positions ``(i·H + y)·W + x``: fewer than ``N·H·W`` would
    have been read past their end and are refused.
    """

    def setup(self):
        self.scale = self.args.single("scale", 1.0, float)
        order = self.args.single("order", "NCHW", str)
        if not self.scale >= 0:  # CAFFE_ENFORCE(scale_ >= 0)
            raise ArgumentError(
                "%s: argument 'scale' is %g; it must be >= 0" % (self.def_.type, self.scale)
            )
        if order != "NCHW":  # CAFFE_ENFORCE_EQ(order_, StorageOrder::NCHW, ...)
            raise EnforceNotMet(
                "%s: Only NCHW order is supported right now (argument order=%r)"
                % (self.def_.type, order)
            )

    def _pixels(self, weight_index):
        """``(X, labels (N, H·W), weights (N, H·W) or None)``, checked."""
        x = self.float_input(0)
        t = self.input(1)
        if x.ndim != 4:
            raise self.shape_error(0, "4 dimensions (N × D × H × W)")
        if t.dtype != np.int32:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected int32 labels" % (self.input_name(1), t.dtype)
            )
        n, d, h, w = x.shape
        # E5's DCHECKs, off in a release build: any labels with N·H·W elements ran
        if (t.ndim != 3 or t.shape[0] != n) and eras.current().spatial_loss_label_shape:
            raise self.shape_error(1, "3 dimensions, the first %d (N × H × W labels)" % n)
        if t.size < n * h * w:
            raise self.shape_error(1, "%d labels (N × H × W)" % (n * h * w))
        labels = t.reshape(-1)[: n * h * w].reshape(n, h * w)
        bad = (labels != _DONT_CARE) & ((labels < 0) | (labels >= d))
        if bad.any():
            raise ShapeError(
                "input 1 ('%s'): Label seems incorrect: label value larger than number of "
                "classes: %d vs %d" % (self.input_name(1), labels[bad][0], d)
            )
        weights = None
        if weight_index is not None:
            weights = self.typed_input(weight_index, (x.dtype,), "%s weights" % x.dtype)
            if weights.size < n * h * w:
                raise self.shape_error(weight_index, "%d weights (one per pixel)" % (n * h * w))
            weights = weights.reshape(-1)[: n * h * w].reshape(n, h * w)
        return x, labels, weights


@register("SpatialSoftmaxWithLoss", inputs=(2, 3), outputs=2)
class SpatialSoftmaxWithLoss(_SpatialLossBase):
    """``[X, T, (weights)] → [P, loss]``: a softmax per pixel (class docstring above)."""

    def run(self):
        x, labels, weights = self._pixels(2 if len(self.inputs) == 3 else None)
        n, d, h, w = x.shape
        p = self.output(0, x.shape, x.dtype)
        if d:
            # max_val starts at -1e20f in the C++ loop
            top = np.maximum(x.max(axis=1, keepdims=True), x.dtype.type(-1e20))
            np.subtract(x, top, out=p)
            np.exp(p, out=p)
            p /= p.sum(axis=1, keepdims=True)
        cells = p.reshape(n, d, h * w)
        keep = labels != _DONT_CARE
        rows, pixels = np.nonzero(keep)
        picked = cells[rows, labels[keep], pixels]
        weight = np.ones_like(picked) if weights is None else weights[keep]
        total = weight.sum(dtype=x.dtype)
        loss = self.output(1, (), x.dtype)
        loss[...] = 0.0
        if total != 0:
            loss[...] = np.sum(-np.log(np.maximum(picked, _LOG_FLOOR)) * weight) / total


@register("SpatialSoftmaxWithLossGradient", outputs=1)
class SpatialSoftmaxWithLossGradient(_SpatialLossBase):
    """``[X, T, (weights), P, dLoss] → dX``: ``(P − onehot(T)) · w · scale /
    Σ w · dLoss`` at each labelled pixel, 0 at an ignored one (no scaling when
    ``Σ w <= 0``). The weights are there with more than 4 inputs."""

    def setup(self):
        super().setup()
        self.only_loss = self.args.single("only_loss", False, bool)  # read, unused on CPU

    def run(self):
        count = len(self.inputs)
        if count < 4:  # Input(InputSize() - 2) and Input(1): the C++ read past its inputs
            raise ShapeError(
                "SpatialSoftmaxWithLossGradient takes X, T, (weights), P, dLoss; got %d inputs"
                % count
            )
        x, labels, weights = self._pixels(2 if count > 4 else None)
        p, dloss = self.float_input(count - 2), self.float_input(count - 1)
        self.same_dtype(0, count - 2, count - 1)
        if p.size != x.size:
            raise self.shape_error(count - 2, "%d elements (the softmax of input 0)" % x.size)
        if dloss.size < 1:
            raise self.shape_error(count - 1, "one element (the loss gradient)")
        n, d, h, w = x.shape
        dx = self.output(0, x.shape, x.dtype)
        np.copyto(dx, p.reshape(x.shape))
        cells = dx.reshape(n, d, h * w)
        keep = labels != _DONT_CARE
        rows, pixels = np.nonzero(keep)
        cells[rows, labels[keep], pixels] -= 1
        if weights is None:
            total = float(keep.sum())
        else:
            cells *= np.where(keep, weights, 1)[:, None, :]
            total = float(weights[keep].sum(dtype=x.dtype))
        cells *= keep[:, None, :]  # an ignored pixel: 0
        if total > 0:
            dx *= x.dtype.type(self.scale / total)
        dx *= dloss.reshape(-1)[0]


@register_gradient("SpatialSoftmaxWithLoss")
class GetSpatialSoftmaxWithLossGradient(GradientMaker):
    """``[X, T, (weights), P, dLoss] → dX`` (spatial_softmax_with_loss_op.cc)."""

    def get_gradient_defs(self):
        inputs = [self.I(i) for i in range(len(self.def_.input))]
        return [
            self.op_def(
                "SpatialSoftmaxWithLossGradient", inputs + [self.O(0), self.GO(1)], [self.GI(0)]
            )
        ]
