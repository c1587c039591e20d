"""AccumulateHistogram: a histogram of each input, and one of every input so far.

``AccumulateHistogram(X → [cur_hist, acc_hist])`` with ``lower_bound``
(default 0), ``upper_bound`` (default 1) and ``num_buckets`` (default 1, > 0):
``num_buckets`` equal buckets between the bounds plus one below and one at or
above, so both outputs are int64 of ``num_buckets + 2`` counts. An element x
goes to bucket 0 when ``x < lower_bound``, ``num_buckets + 1`` when ``x ≥
upper_bound``, else ``int((x − lower_bound) / segment) + 1`` with ``segment
= (upper_bound − lower_bound) / num_buckets``, computed in float32 as Caffe2
did. ``cur_hist`` counts this run's X; ``acc_hist`` every X this op instance
has seen (the operator keeps the counts, so a net that runs again adds on).

A NaN would have given Caffe2 an undefined bucket index (the cast of NaN to
int) and a write outside the histogram: refused. No gradient.

Caffe2: caffe2/operators/utility_ops.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient


@register("AccumulateHistogram", inputs=1, outputs=2)
class AccumulateHistogram(Operator):
    """Counts of X per bucket (``cur_hist``) and over every run (``acc_hist``)."""

    def setup(self):
        self.lower = np.float32(self.args.single("lower_bound", 0.0, float))
        self.upper = np.float32(self.args.single("upper_bound", 1.0, float))
        self.buckets = self.args.single("num_buckets", 1, int)
        if self.buckets <= 0:
            raise ArgumentError("num_buckets must be > 0, got %d" % self.buckets)
        self.accumulated = np.zeros(self.buckets + 2, np.int64)

    def run(self):
        x = self.typed_input(0, (np.float32,), "float32 values").reshape(-1)
        if np.isnan(x).any():
            raise ArgumentError(
                "input 0 ('%s') holds NaN, which falls in no bucket" % self.input_name(0)
            )
        segment = np.float32((self.upper - self.lower) / np.float32(self.buckets))
        index = np.empty(x.size, np.int64)
        below, above = x < self.lower, x >= self.upper
        inside = ~(below | above)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inner = ((x[inside] - self.lower) / segment).astype(np.float64)
        index[inside] = np.minimum(np.trunc(inner), self.buckets).astype(np.int64) + 1
        index[below] = 0
        index[above] = self.buckets + 1
        current = np.bincount(index, minlength=self.buckets + 2).astype(np.int64)
        self.accumulated += current
        self.output(0, current.shape, np.int64)[...] = current
        self.output(1, current.shape, np.int64)[...] = self.accumulated


register_gradient("AccumulateHistogram")(ShouldNotDoGradient)
