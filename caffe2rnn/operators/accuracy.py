"""Classifier metrics: Accuracy, MultiClassAccuracy, Perplexity.

**Accuracy**: the share of a batch whose label is among the top-k scores.

``Accuracy([predictions, labels]) → accuracy`` (a 0-d float32): predictions
are ``N × D`` float32 scores, labels ``N`` int32 class indices. Row i counts
when fewer than ``top_k`` (argument, default 1) classes beat its label:
a class beats it with a higher score, or with an equal score and a lower
index (as a stable sort of the scores would put it first). With N = 0 the
result is 0/0, NaN. ``brew.accuracy`` (helpers/train.py) adds this op.

Caffe2 checked the shapes only with ``DCHECK`` (gone in release builds);
mismatched shapes or a label outside ``[0, D)`` would have read outside
the scores, so they are refused here. No gradient
(``SHOULD_NOT_DO_GRADIENT``). Source: caffe2/operators/accuracy_op.{h,cc}
at 0cdd09da6.

**MultiClassAccuracy** ``([prediction, labels] → [accuracies, amounts])``:
for each of the D classes, how many rows have that label (``amounts``, int32)
and the share of them whose highest score — the first one, on a tie — is
that class (``accuracies``, float32; 0 for a class with no row). Caffe2 checked
the shapes with ``DCHECK`` only and a label outside ``[0, D)`` would have
written outside the outputs: refused here. (multi_class_accuracy_op.cc at
0cdd09da6.)

**Perplexity** ``(probabilities → perplexity)``: the 0-d float32
``Π p_i^(−1/N)`` of the N probabilities the model gave the true labels
(perplexity_op.cc at 0cdd09da6; ``DCHECK_EQ(X.ndim(), 1)``: a 1-D input).
Neither has a gradient (``SHOULD_NOT_DO_GRADIENT``).
"""

import numpy as np

from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient


def scores_and_labels(op):
    """Inputs 0 and 1: ``N × D`` float32 scores and ``N`` int32 labels in ``[0, D)``."""
    x = op.typed_input(0, (np.float32,), "float32 scores")
    if x.ndim != 2:
        raise op.shape_error(0, "2-D (batch × classes)")
    labels = op.typed_input(1, (np.int32,), "int32 labels")
    n, d = x.shape
    if labels.shape != (n,):
        raise op.shape_error(1, "(%d,): one label per row of input 0" % n)
    if n and (labels.min() < 0 or labels.max() >= d):
        raise ShapeError(
            "input 1 ('%s') holds labels from %d to %d; expected them in [0, %d)"
            % (op.input_name(1), labels.min(), labels.max(), d)
        )
    return x, labels


@register("Accuracy", inputs=2, outputs=1)
class Accuracy(Operator):
    """0-d float32: the fraction of rows whose label is in the top ``top_k``."""

    def setup(self):
        self.top_k = self.args.single("top_k", 1, int)

    def run(self):
        x, labels = scores_and_labels(self)
        n, d = x.shape
        rows = np.arange(n)
        label_score = x[rows, labels][:, None]
        beaten_by = (x > label_score) | ((x == label_score) & (np.arange(d) < labels[:, None]))
        correct = int(np.count_nonzero(beaten_by.sum(axis=1) + 1 <= self.top_k))
        out = self.output(0, (), np.float32)
        with np.errstate(invalid="ignore"):
            out[...] = np.float32(correct) / np.float32(n)


register_gradient("Accuracy")(ShouldNotDoGradient)


@register("MultiClassAccuracy", inputs=2, outputs=2)
class MultiClassAccuracy(Operator):
    """Per class: the share of its rows predicted right, and how many rows it has."""

    def run(self):
        x, labels = scores_and_labels(self)
        n, d = x.shape
        amounts = np.bincount(labels, minlength=d).astype(np.int32)
        # the C++ scan: maxval = lowest(); if (X[j] > maxval) {maxval = X[j]; maxid = j;}
        # — the first maximum above lowest(), NaN never taken, 0 if none
        lowest = np.finfo(x.dtype).min
        above = np.where(x > lowest, x, -np.inf)
        best = above.max(axis=1, keepdims=True) if d else np.zeros((n, 1), x.dtype)
        predicted = np.where(best[:, 0] > lowest, np.argmax(above == best, axis=1) if d else 0, 0)
        hits = np.bincount(labels[predicted == labels], minlength=d) if n else amounts
        accuracies = self.output(0, (d,), np.float32)
        accuracies[...] = np.divide(hits, np.maximum(amounts, 1), dtype=np.float64)
        self.output(1, (d,), np.int32)[...] = amounts


@register("Perplexity", inputs=1, outputs=1)
class Perplexity(Operator):
    """0-d float32: the product of ``p_i^(−1/N)`` over the N probabilities."""

    def run(self):
        p = self.typed_input(0, (np.float32,), "float32 probabilities")
        if p.ndim != 1:
            raise self.shape_error(0, "1-D (one probability per sample)")
        with np.errstate(divide="ignore", over="ignore"):
            value = np.prod(np.power(p.astype(np.float64), -1.0 / max(p.size, 1)))
        self.output(0, (), np.float32)[...] = value


register_gradient("MultiClassAccuracy")(ShouldNotDoGradient)
register_gradient("Perplexity")(ShouldNotDoGradient)
