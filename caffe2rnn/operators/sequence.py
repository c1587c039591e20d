"""Operators on batches of variable-length sequences, described by lengths.

* ``ReversePackedSegs([data, lengths])``: data is ``T × B × D`` (time,
  batch, features); the first ``lengths[b]`` steps of sequence b are
  reversed, the padding after them stays where it is. The backward half of
  a bidirectional encoder reads its input this way
  (``seq2seq_util.rnn_bidirectional_encoder``), and the gradient is the
  same reversal of the output gradient.
* ``RemoveDataBlocks``, ``FindDuplicateElements``: rows removed by index,
  and the positions of repeated elements.

(Lengths turned into positions, ids, ranges or shapes: :mod:`.lengths`.)

Caffe2 sources at 0cdd09da6: caffe2/operators/reverse_packed_segs_op.{h,cc},
remove_data_blocks_op.{h,cc}, find_duplicate_elements_op.{h,cc}.
"""

import numpy as np

from ..errors import ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker, ShouldNotDoGradient

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


@register("RemoveDataBlocks", inputs=2, outputs=1)
class RemoveDataBlocks(Operator):
    """``[DATA, INDICES]``: DATA without the rows INDICES names (int32/int64,
    1-D, repeats allowed, each in ``[0, rows)`` as Caffe2 enforced).
    Source: caffe2/operators/remove_data_blocks_op.{h,cc} at 0cdd09da6."""

    def run(self):
        data = self.input(0)
        indices = self.input(1)
        if indices.ndim != 1:
            raise self.shape_error(1, "1-D (INDICES should be 1-D)")
        if indices.size == 0:
            self.copy_to_output(0, data)
            return
        self.typed_input(1, (np.int32, np.int64), "int32 or int64 indices")
        if data.ndim < 1:
            raise self.shape_error(0, "at least 1 dimension (DATA should be at leat 1-D)")
        if indices.min() < 0 or indices.max() >= data.shape[0]:
            raise ShapeError(
                "input 1 ('%s') holds indices from %d to %d; expected them in [0, %d)"
                % (self.input_name(1), indices.min(), indices.max(), data.shape[0])
            )
        self.copy_to_output(0, np.delete(data, np.unique(indices), axis=0))


register_gradient("RemoveDataBlocks")(ShouldNotDoGradient)


@register("FindDuplicateElements", inputs=1, outputs=1)
class FindDuplicateElements(Operator):
    """The positions (int64) of the elements of a 1-D tensor that equal an
    earlier one. Source: caffe2/operators/find_duplicate_elements_op.{h,cc}
    at 0cdd09da6."""

    def run(self):
        data = self.input(0)
        if data.dtype != object:
            self.typed_input(
                0, _REVERSIBLE - {np.dtype(np.bool_)}, "float32, float64, int32, int64 or strings"
            )
        if data.ndim != 1:
            raise self.shape_error(0, "1-D (data should be 1-D.)")
        seen, duplicates = set(), []
        for position, value in enumerate(data.tolist()):
            if value in seen:
                duplicates.append(position)
            seen.add(value)
        np.copyto(self.output(0, (len(duplicates),), np.int64), np.array(duplicates, np.int64))


register_gradient("FindDuplicateElements")(ShouldNotDoGradient)
