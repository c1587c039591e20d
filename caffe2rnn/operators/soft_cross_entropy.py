"""CrossEntropy (soft labels) and SigmoidCrossEntropyWithLogits, with gradients.

``CrossEntropy([X, label] → Y)``: X holds probabilities, ``N`` rows of ``D``
(``N = X.dim(0)``, ``D = X.size / N``; a 1-D X is one row); label holds a
probability for every class of every row (shape ``(N, D)``, or ``(N,)`` when
``D = 1``)::

    Y[i] = −Σ_d label[i, d] · log(max(X[i, d], 1e-20))            Y: (N,)
    dX[i, d] = −dY[i] · label[i, d] / max(X[i, d], 1e-20)

Caffe2 refused labels outside [0, 1] ("Soft label seems incorrect...") and
read ``N · D`` label values whatever label's shape, so a label with fewer
values, which it would have read past, is refused here.

``SigmoidCrossEntropyWithLogits([logits, targets] → Y)`` averages, over the
last dim, the cross entropy of ``sigmoid(logits)`` against targets, in a form
that never takes the exp of a large positive number::

    Y[...] = −mean_j (l · (t − [l ≥ 0]) − log(1 + exp(l − 2 l [l ≥ 0])))
    dlogits = −dY / D · (t − sigmoid(l))

(``D`` the last dim; a 0-d input is one value). Y has logits' dims without
the last. A last dim of 0 is refused: Caffe2 divided the size by it.
E6's ``WeightedSigmoidCrossEntropyWithLogits([logits, targets, weights])``
multiplies each term (and its gradient) by a weight of the same shape
(cross_entropy_op.cc at 042e8ede4).

Caffe2: caffe2/operators/cross_entropy_op.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .cross_entropy import LOG_THRESHOLD
from .gradient_maker import GradientMaker


class _SoftLabels(Operator):
    def rows(self):
        """X and label as ``(N, D)`` matrices, validated as Caffe2 did."""
        x = self.typed_input(0, (np.float32, np.float64), "float probabilities")
        if x.ndim == 0:
            raise self.shape_error(0, "a 1-D or N-D tensor of probabilities")
        n = x.shape[0] if x.ndim > 1 else 1
        d = int(np.prod(x.shape[1:], dtype=np.int64)) if x.ndim > 1 else x.shape[0]
        label = self.typed_input(1, (x.dtype.type,), "%s probabilities like input 0" % x.dtype)
        shape_ok = label.ndim == 1 or (label.ndim == 2 and label.shape[1] == d)
        if not shape_ok or label.shape[0] != n or label.size != n * d:
            raise self.shape_error(1, "(%d, %d): a probability per class of each row" % (n, d))
        labels = label.reshape(n, d)
        if labels.size and not ((labels >= 0) & (labels <= 1)).all():
            raise ArgumentError(
                "input 1 ('%s'): Soft label seems incorrect: label value should be a "
                "probability between 0 and 1.0. You may be using the wrong cross entropy "
                "operator; use LabelCrossEntropy if the labels are integers whose values "
                "are at most the number of classes, %d." % (self.input_name(1), d)
            )
        floored = np.maximum(x.reshape(n, d), x.dtype.type(LOG_THRESHOLD))
        return x, labels, floored


@register("CrossEntropy", inputs=2, outputs=1)
class CrossEntropy(_SoftLabels):
    """``Y[i] = −Σ_d label[i, d] · log(max(X[i, d], 1e-20))``."""

    def run(self):
        _, labels, floored = self.rows()
        y = self.output(0, (labels.shape[0],), floored.dtype)
        np.negative((labels * np.log(floored)).sum(axis=1), out=y)


@register("CrossEntropyGradient", inputs=3, outputs=1)
class CrossEntropyGradient(_SoftLabels):
    """``[X, label, dY] → dX = −dY[i] · label / max(X, 1e-20)``."""

    def run(self):
        x, labels, floored = self.rows()
        dy = self.float_input(2)
        if dy.shape != (labels.shape[0],):
            raise self.shape_error(2, "(%d,): one gradient per row of input 0" % labels.shape[0])
        dx = self.output(0, x.shape, x.dtype)
        np.multiply(-dy[:, None], labels / floored, out=dx.reshape(floored.shape))


class _Logits(Operator):
    weighted = False  # the Weighted… ops take a third input, the weights

    def terms(self, first):
        """logits, targets and the weights (inputs ``first``...) as ``(outer, D)``."""
        logits = self.typed_input(first, (np.float32, np.float64), "float logits")
        inner = logits.shape[-1] if logits.ndim else 1
        if inner == 0:
            raise self.shape_error(first, "a last dim > 0 (the mean is over it)")
        rows = []
        for i in range(first + 1, first + (3 if self.weighted else 2)):
            x = self.typed_input(i, (logits.dtype.type,), "%s values" % logits.dtype)
            if x.shape != logits.shape:
                raise self.shape_error(i, "%s like the logits" % (logits.shape,))
            rows.append(x.reshape(-1, inner))
        weights = rows[1] if self.weighted else 1
        return logits, logits.reshape(-1, inner), rows[0], weights


@register("SigmoidCrossEntropyWithLogits", inputs=2, outputs=1)
class SigmoidCrossEntropyWithLogits(_Logits):
    """The mean over the last dim of the sigmoid cross entropy of logits vs targets."""

    def run(self):
        logits, lgt, tgt, weights = self.terms(0)
        positive = (lgt >= 0).astype(lgt.dtype)
        value = lgt * (tgt - positive) - np.log1p(np.exp(lgt - 2 * lgt * positive))
        y = self.output(0, logits.shape[:-1], logits.dtype)
        y.reshape(-1)[...] = -(value * weights).mean(axis=1)


@register("SigmoidCrossEntropyWithLogitsGradient", inputs=3, outputs=1)
class SigmoidCrossEntropyWithLogitsGradient(_Logits):
    """``[dY, logits, targets] → dlogits = −dY / D · (targets − sigmoid(logits))``."""

    def run(self):
        logits, lgt, tgt, weights = self.terms(1)
        g = self.float_input(0)
        if g.size != lgt.shape[0]:
            raise self.shape_error(0, "%d values, one per output of the forward op" % lgt.shape[0])
        with np.errstate(over="ignore"):
            sigmoid = 1 / (1 + np.exp(-lgt))
        factor = -g.reshape(-1, 1).astype(lgt.dtype) / lgt.shape[1]
        dx = self.output(0, logits.shape, logits.dtype)
        np.multiply(factor, (tgt - sigmoid) * weights, out=dx.reshape(lgt.shape))


@register("WeightedSigmoidCrossEntropyWithLogits", inputs=3, outputs=1)
class WeightedSigmoidCrossEntropyWithLogits(SigmoidCrossEntropyWithLogits):
    """SigmoidCrossEntropyWithLogits with each term times its weight (input 2)."""

    weighted = True


@register("WeightedSigmoidCrossEntropyWithLogitsGradient", inputs=4, outputs=1)
class WeightedSigmoidCrossEntropyWithLogitsGradient(SigmoidCrossEntropyWithLogitsGradient):
    """``[dY, logits, targets, weights] → dlogits``, each term times its weight."""

    weighted = True


@register_gradient("CrossEntropy")
class GetCrossEntropyGradient(GradientMaker):
    """``CrossEntropyGradient([I0, I1, GO0] → GI0)``; the labels get none."""

    def get_gradient_defs(self):
        return [
            self.op_def("CrossEntropyGradient", [self.I(0), self.I(1), self.GO(0)], [self.GI(0)])
        ]


class GetSigmoidCrossEntropyWithLogitsGradient(GradientMaker):
    """``<Op>Gradient([GO0, I0, I1, (I2)] → GI0)``: the targets and weights get none."""

    def get_gradient_defs(self):
        inputs = [self.GO(0)] + [self.I(i) for i in range(len(self.def_.input))]
        return [self.op_def(self.def_.type + "Gradient", inputs, [self.GI(0)])]


register_gradient("SigmoidCrossEntropyWithLogits")(GetSigmoidCrossEntropyWithLogitsGradient)
register_gradient("WeightedSigmoidCrossEntropyWithLogits")(GetSigmoidCrossEntropyWithLogitsGradient)
