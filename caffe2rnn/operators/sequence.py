"""Operators on batches of variable-length sequences, described by lengths.

* ``LengthsRangeFill(lengths)``: ``[0, 1, ..., l_0 - 1, 0, 1, ..., l_1 - 1, ...]``
  (int32), each sequence's positions; ``crf.py`` numbers time steps with it.
* ``LengthsToShape(lengths)``: ``[len(lengths), l]`` (int32) when every
  length is the same ``l``.
* ``ReversePackedSegs([data, lengths])``: data is ``T × B × D`` (time,
  batch, features); the first ``lengths[b]`` steps of sequence b are
  reversed, the padding after them stays where it is. The backward half of
  a bidirectional encoder reads its input this way
  (``seq2seq_util.rnn_bidirectional_encoder``), and the gradient is the
  same reversal of the output gradient.

Caffe2 sources at 0cdd09da6: caffe2/operators/filler_op.{h,cc}
(LengthsRangeFill), utility_ops.{h,cc} (LengthsToShape),
reverse_packed_segs_op.{h,cc}.
"""

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, NoGradient, ShouldNotDoGradient


def int32_vector(op, i, what="lengths"):
    """Input i: a 1-D int32 tensor (Caffe2 read it with ``data<int32_t>()``)."""
    return op.typed_input(i, (np.int32,), "int32 %s (Input must be a vector.)" % what, ndim=1)


@register("LengthsRangeFill", inputs=1, outputs=1)
class LengthsRangeFill(Operator):
    """``0 .. l-1`` for each length l, concatenated (int32)."""

    def run(self):
        lengths = int32_vector(self, 0)
        if lengths.size and lengths.min() < 0:
            # std::iota over a reversed range: Caffe2 ran past the output.
            raise ArgumentError(
                "input 0 ('%s') holds a negative length (%d)" % (self.input_name(0), lengths.min())
            )
        total = int(lengths.sum(dtype=np.int64))
        out = self.output(0, (total,), np.int32)
        starts = np.repeat(np.cumsum(lengths, dtype=np.int64) - lengths, lengths)
        np.subtract(np.arange(total, dtype=np.int64), starts, out=out, casting="unsafe")


register_gradient("LengthsRangeFill")(NoGradient)


@register("LengthsToShape", inputs=1, outputs=1)
class LengthsToShape(Operator):
    """``[len(lengths), l]`` for equal lengths ``l`` (int32)."""

    def run(self):
        lengths = int32_vector(self, 0)
        if lengths.size == 0:
            # Caffe2 read lengths[0] of an empty tensor.
            raise self.shape_error(0, "at least one length")
        if np.any(lengths != lengths[0]):
            raise ShapeError(
                "input 0 ('%s'): All elements of input must be same (got %s)"
                % (self.input_name(0), np.unique(lengths).tolist())
            )
        out = self.output(0, (2,), np.int32)
        out[0], out[1] = lengths.size, lengths[0]


register_gradient("LengthsToShape")(ShouldNotDoGradient)

_REVERSIBLE = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_))


@register("ReversePackedSegs", inputs=2, outputs=1)
class ReversePackedSegs(Operator):
    """Each sequence's first ``lengths[b]`` time steps reversed (module doc).

    Lengths are int32 or int64 (Caffe2 read any other type as int64 and
    failed); a length above T is refused as Caffe2 did
    (``CAFFE_ENFORCE_LE(seg_length, max_length)``), a negative one reverses
    nothing.
    """

    def run(self):
        data = self.typed_input(0, _REVERSIBLE, "float32, float64, int32, int64 or bool")
        if data.ndim != 3:
            raise self.shape_error(0, "a 3-D tensor <lengths, segments, embeddings>")
        lengths = self.typed_input(
            1, (np.int32, np.int64), "int32 or int64 lengths (LENGTH should be 1-D)", ndim=1
        )
        steps, batch = data.shape[:2]
        if lengths.size != batch:
            raise self.shape_error(1, "(%d,): lengths size should be equal to batch size" % batch)
        if lengths.size and lengths.max() > steps:
            raise ShapeError(
                "input 1 ('%s') holds a length of %d, more than the %d time steps of input 0 "
                "('%s')" % (self.input_name(1), lengths.max(), steps, self.input_name(0))
            )
        t = np.arange(steps)[:, None]
        n = lengths.astype(np.int64)[None, :]
        source = np.where(t < n, n - 1 - t, t)  # the time step each output step reads
        out = self.output(0, data.shape, data.dtype)
        np.copyto(out, data[source, np.arange(batch)[None, :]])


@register_gradient("ReversePackedSegs")
class GetReversePackedSegsGradient(GradientMaker):
    """``ReversePackedSegs([dY, lengths] → dX)``: the reversal is its own inverse."""

    def get_gradient_defs(self):
        return [self.op_def("ReversePackedSegs", [self.GO(0), self.I(1)], [self.GI(0)])]
