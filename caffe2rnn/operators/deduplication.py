"""Unique and UnsortedSegmentSum/Mean: merging the repeated rows of a sparse gradient.

A :class:`~caffe2rnn.core.GradientSlice` may name the same row many times
(a word that occurs twice in a batch). ``Net.DeduplicateGradientSlices``
(``core.py``; the optimizers call it when given a ``sparse_dedup_aggregator``)
merges them with two ops:

* ``Unique(indices) → [unique, remapping]``: the distinct indices (sorted
  ascending here; Caffe2 promised no order) and, for each input position,
  the position of its value in ``unique`` (int32);
* ``UnsortedSegmentSum([values, remapping])`` (or ``…Mean``): the rows of
  ``values`` added up (averaged) per segment id, in any order; the output
  has ``num_segments`` rows (argument) or ``max(ids) + 1``, zeros for a
  segment no row falls in.

Their gradients: ``UnsortedSegmentSumGradient([dOUT, ids])`` gives each row
its segment's gradient, ``…Mean…`` divides it by the segment's size.

Caffe2 sources at 0cdd09da6: caffe2/python/core.py
(``Net.DeduplicateGradientSlices``), caffe2/operators/utility_ops.{h,cc}
(``UniqueOp``), segment_reduction_op.{h,cc} (``AbstractUnsortedSegmentOp``
and its gradient), reducer_functors.h (Sum, Mean). Registered for float32
data and int32 ids; float64 data is accepted too.
"""

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, ShouldNotDoGradient


@register("Unique", inputs=1, outputs=(1, 2))
class Unique(Operator):
    """Distinct int32/int64 indices of a 1-D tensor (+ the int32 remapping)."""

    def run(self):
        x = self.input(0)
        if x.dtype not in (np.int32, np.int64):
            # LOG(FATAL) in Caffe2: the process aborted.
            raise DTypeError(
                "input 0 ('%s') has type %s; Unsupported type of input in Unique "
                "(expected int32 or int64)" % (self.input_name(0), x.dtype)
            )
        if x.ndim != 1:
            raise self.shape_error(0, "1-D (Input should be a vector)")
        unique, remapping = np.unique(x, return_inverse=True)
        np.copyto(self.output(0, unique.shape, x.dtype), unique)
        if len(self.outputs) > 1:
            np.copyto(
                self.output(1, x.shape, np.int32), remapping.reshape(x.shape), casting="unsafe"
            )


register_gradient("Unique")(ShouldNotDoGradient)


def _segment_ids(op, i, rows):
    ids = op.input(i)
    if ids.dtype != np.int32:
        raise DTypeError(
            "input %d ('%s') has type %s; expected int32 segment ids"
            % (i, op.input_name(i), ids.dtype)
        )
    if ids.ndim != 1:
        raise op.shape_error(i, "1-D: SEGMENT_IDS must be a vector")
    if rows is not None and ids.size != rows:
        raise op.shape_error(
            i, "(%d,): DATA must have the same first dimension as SEGMENT_IDS" % rows
        )
    return ids


def _check_range(op, i, ids, count):
    if ids.size and (ids.min() < 0 or ids.max() >= count):
        bad = ids[(ids < 0) | (ids >= count)][0]
        raise ShapeError(
            "input %d ('%s'): Segment id out of range: %d, range 0 to %d"
            % (i, op.input_name(i), bad, count)
        )


class _UnsortedSegment(Operator):
    mean = False

    def setup(self):
        self.num_segments = self.args.single("num_segments", -1, int)

    def run(self):
        x = self.float_input(0)
        if x.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension")
        ids = _segment_ids(self, 1, x.shape[0])
        if self.num_segments != -1:
            count = self.num_segments
            if count < 0:
                raise ArgumentError("num_segments=%d; expected >= 0 (or -1)" % count)
        else:
            count = int(ids.max()) + 1 if ids.size else 0
        _check_range(self, 1, ids, count)
        out = self.output(0, (count,) + x.shape[1:], x.dtype)
        out.fill(0)
        np.add.at(out, ids, x)
        if self.mean:
            sizes = np.bincount(ids, minlength=count)[:count]
            hit = sizes > 0
            out[hit] /= sizes[hit].astype(x.dtype).reshape((-1,) + (1,) * (x.ndim - 1))


class _UnsortedSegmentGradient(Operator):
    mean = False

    def run(self):
        dy = self.float_input(0)
        if dy.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension")
        ids = _segment_ids(self, 1, None)
        _check_range(self, 1, ids, dy.shape[0])
        grad = dy[ids]
        if self.mean:
            sizes = np.bincount(ids, minlength=dy.shape[0])[ids]
            grad = grad / sizes.astype(dy.dtype).reshape((-1,) + (1,) * (dy.ndim - 1))
        np.copyto(self.output(0, (ids.size,) + dy.shape[1:], dy.dtype), grad)


def _make_gradient_maker(name):
    class GetUnsortedSegmentGradient(GradientMaker):
        """``UnsortedSegment…Gradient([dOUT, SEGMENT_IDS] → dDATA)``."""

        def get_gradient_defs(self):
            return [
                self.op_def(
                    "UnsortedSegment%sGradient" % name, [self.GO(0), self.I(1)], [self.GI(0)]
                )
            ]

    return GetUnsortedSegmentGradient


for _name, _mean in (("Sum", False), ("Mean", True)):
    _type = "UnsortedSegment" + _name
    globals()[_type] = register(_type, inputs=2, outputs=1)(
        type(_type, (_UnsortedSegment,), {"mean": _mean, "__module__": __name__})
    )
    globals()[_type + "Gradient"] = register(_type + "Gradient", inputs=2, outputs=1)(
        type(
            _type + "Gradient", (_UnsortedSegmentGradient,), {"mean": _mean, "__module__": __name__}
        )
    )
    register_gradient(_type)(_make_gradient_maker(_name))


def deduplicate_gradient_slices(net, g, aggregator="sum"):
    """Caffe2's ``Net.DeduplicateGradientSlices``: a GradientSlice whose
    indices are distinct, their values summed (``"sum"``) or averaged
    (``"mean"``)."""
    from .gradient_maker import GradientSlice

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
