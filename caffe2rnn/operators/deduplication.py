"""Unique, and merging the repeated rows of a sparse gradient.

A :class:`~caffe2rnn.core.GradientSlice` may name the same row many times
(a word that occurs twice in a batch). ``Net.DeduplicateGradientSlices``
(``core.py``; the optimizers call it when given a ``sparse_dedup_aggregator``)
merges them with two ops:

* ``Unique(indices) → [unique, remapping]``: the distinct indices (sorted
  ascending here; Caffe2 promised no order) and, for each input position,
  the position of its value in ``unique`` (int32);
* ``UnsortedSegmentSum([values, remapping])`` (or ``…Mean``,
  :mod:`.segment_reduction`): the rows of ``values`` added up (averaged)
  per distinct index.

Caffe2 sources at 0cdd09da6: caffe2/python/core.py
(``Net.DeduplicateGradientSlices``), caffe2/operators/utility_ops.{h,cc}
(``UniqueOp``).
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientSlice, ShouldNotDoGradient


@register("Unique", inputs=1, outputs=(1, 2))
class Unique(Operator):
    """Distinct int32/int64 indices of a 1-D tensor (+ the int32 remapping)."""

    def run(self):
        # Another type: LOG(FATAL) in Caffe2, the process aborted.
        x = self.typed_input(0, (np.int32, np.int64), "int32 or int64 (Unique's types)")
        if x.ndim != 1:
            raise self.shape_error(0, "1-D (Input should be a vector)")
        unique, remapping = np.unique(x, return_inverse=True)
        np.copyto(self.output(0, unique.shape, x.dtype), unique)
        if len(self.outputs) > 1:
            np.copyto(
                self.output(1, x.shape, np.int32), remapping.reshape(x.shape), casting="unsafe"
            )


register_gradient("Unique")(ShouldNotDoGradient)


def deduplicate_gradient_slices(net, g, aggregator="sum"):
    """Caffe2's ``Net.DeduplicateGradientSlices``: a GradientSlice whose
    indices are distinct, their values summed (``"sum"``) or averaged
    (``"mean"``)."""
    if not isinstance(g, GradientSlice):
        raise ArgumentError("DeduplicateGradientSlices takes a GradientSlice, got %r" % (g,))
    unique, remapping = net.Unique([g.indices], 2, engine="SparseHash")
    if aggregator.lower() == "sum":
        values = net.UnsortedSegmentSum([g.values, remapping], 1)
    elif aggregator.lower() == "mean":
        values = net.UnsortedSegmentMean([g.values, remapping], 1)
    else:
        raise ValueError(f"{aggregator} is not supported")
    return GradientSlice(indices=unique, values=values)
