"""LabelCrossEntropy and MakeTwoClass, with their gradients.

``LabelCrossEntropy([X, label] → Y)`` is the loss of a classifier that already
applied a softmax: X holds probabilities, ``N`` rows of ``D`` classes (``N =
X.dim(0)`` and ``D = X.size / N``; a 1-D X is one row), label holds one int32
class per row (shape ``(N,)`` or ``(N, 1)``), and::

    Y[i] = −log(max(X[i, label[i]], 1e-20))              Y: (N,)

The floor keeps a zero probability from giving ``inf``. char_rnn averages Y
with ``AveragedLoss``. The gradient is ``dX[i, label[i]] = −dY[i] / max(X[i,
label[i]], 1e-20)`` and zero elsewhere; the label gets none.

``MakeTwoClass(X → Y)`` turns probabilities of the positive class into the two
columns a two-class classifier outputs: ``Y[..., 0] = 1 − X``, ``Y[..., 1] = X``
(Y has X's dims plus a last dim of 2). Its gradient is ``dX = dY[..., 1] −
dY[..., 0]``.

Caffe2: caffe2/operators/cross_entropy_op.{h,cc}.
"""

import numpy as np

from ..errors import DTypeError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

#: Probabilities are floored here before ``log`` (Caffe2's kLOG_THRESHOLD).
LOG_THRESHOLD = 1e-20


class _LabelCrossEntropyBase(Operator):
    def rows_and_labels(self):
        """X as an ``N × D`` matrix and the labels, validated."""
        x = self.float_input(0)
        if x.ndim == 0:
            raise self.shape_error(0, "a 1-D or N-D tensor of probabilities")
        n = x.shape[0] if x.ndim > 1 else 1
        d = x.size // n if n else 0
        label = self.input(1)
        if label.dtype != np.int32:
            raise DTypeError(
                "input 1 ('%s') has type %s; expected int32 class labels"
                % (self.input_name(1), label.dtype)
            )
        if not (label.ndim == 1 or (label.ndim == 2 and label.shape[1] == 1)) or (
            label.shape[0] != n
        ):
            raise self.shape_error(1, "(%d,) or (%d, 1): one label per row of input 0" % (n, n))
        labels = label.reshape(n)
        if n and (labels.min() < 0 or labels.max() >= d):
            raise ShapeError(
                "input 1 ('%s'): label values must be in [0, %d) (the classes of input 0); "
                "got values from %d to %d" % (self.input_name(1), d, labels.min(), labels.max())
            )
        return x.reshape(n, d), labels

    def picked(self, x2, labels):
        """``max(X[i, label[i]], 1e-20)`` for every row i."""
        return np.maximum(x2[np.arange(len(labels)), labels], x2.dtype.type(LOG_THRESHOLD))


@register("LabelCrossEntropy", inputs=2, outputs=1)
class LabelCrossEntropy(_LabelCrossEntropyBase):
    """``Y[i] = −log(max(X[i, label[i]], 1e-20))`` for each of the N rows."""

    def run(self):
        x2, labels = self.rows_and_labels()
        y = self.output(0, (len(labels),), x2.dtype)
        np.log(self.picked(x2, labels), out=y)
        np.negative(y, out=y)


@register("LabelCrossEntropyGradient", inputs=3, outputs=1)
class LabelCrossEntropyGradient(_LabelCrossEntropyBase):
    """``[X, label, dY] → dX``: ``−dY[i] / max(X[i, label[i]], 1e-20)`` at the labels."""

    def run(self):
        x2, labels = self.rows_and_labels()
        dy = self.float_input(2)
        n = len(labels)
        if dy.shape != (n,):
            raise self.shape_error(2, "(%d,): one gradient per row of input 0" % n)
        picked = self.picked(x2, labels)
        x = self.input(0)
        dx = self.output(0, x.shape, x.dtype)
        dx[...] = 0
        dx.reshape(x2.shape)[np.arange(n), labels] = -dy / picked


@register_gradient("LabelCrossEntropy")
class GetLabelCrossEntropyGradient(GradientMaker):
    """``LabelCrossEntropyGradient([I0, I1, GO0] → GI0)``; the label gets none."""

    def get_gradient_defs(self):
        return [
            self.op_def(
                "LabelCrossEntropyGradient", [self.I(0), self.I(1), self.GO(0)], [self.GI(0)]
            )
        ]


@register("MakeTwoClass", inputs=1, outputs=1)
class MakeTwoClass(Operator):
    """``Y[..., 0] = 1 − X``, ``Y[..., 1] = X``: Y has X's dims plus 2.

    X should hold probabilities in [0, 1]; Caffe2 checked that only in debug
    builds, and so the values are not checked here either.
    """

    def run(self):
        x = self.float_input(0)
        y = self.output(0, x.shape + (2,), x.dtype)
        np.subtract(1, x, out=y[..., 0])
        y[..., 1] = x


@register("MakeTwoClassGradient", inputs=1, outputs=1)
class MakeTwoClassGradient(Operator):
    """``dX = dY[..., 1] − dY[..., 0]``; dY's last dim must be 2."""

    def run(self):
        dy = self.float_input(0)
        if dy.ndim < 1 or dy.shape[-1] != 2:
            raise self.shape_error(0, "a last dimension of 2 (the two classes)")
        np.subtract(dy[..., 1], dy[..., 0], out=self.output(0, dy.shape[:-1], dy.dtype))


@register_gradient("MakeTwoClass")
class GetMakeTwoClassGradient(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("MakeTwoClassGradient", [self.GO(0)], [self.GI(0)])]
