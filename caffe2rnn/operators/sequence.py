"""Operators on batches of variable-length sequences, described by lengths.

* ``ReversePackedSegs([data, lengths])``: data is ``T × B × D`` (time,
  batch, features); the first ``lengths[b]`` steps of sequence b are
  reversed, the padding after them stays where it is. The backward half of
  a bidirectional encoder reads its input this way
  (``seq2seq_util.rnn_bidirectional_encoder``), and the gradient is the
  same reversal of the output gradient.
* ``PackSegments`` / ``UnpackSegments``: consecutive runs of rows (their
  lengths given) into a padded ``batch × max_length × ...`` tensor and back;
  each is the other's gradient.
* ``RemoveDataBlocks``, ``FindDuplicateElements``: rows removed by index,
  and the positions of repeated elements.

(Lengths turned into positions, ids, ranges or shapes: :mod:`.lengths`.)

Caffe2 sources at 0cdd09da6: caffe2/operators/reverse_packed_segs_op.{h,cc},
pack_segments.{h,cc}, remove_data_blocks_op.{h,cc},
find_duplicate_elements_op.{h,cc}.
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient, single_op_gradient

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


single_op_gradient("ReversePackedSegs", "ReversePackedSegs", ["GO0", "I1"])


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


def _segment_lengths(op):
    """Input 0: int32/int64 lengths (1-D), none negative (Caffe2 would have
    copied a negative count)."""
    lengths = op.typed_input(0, (np.int32, np.int64), "int32 or int64 lengths", ndim=1)
    if lengths.size and lengths.min() < 0:
        raise ShapeError("input 0 ('%s') holds a negative length" % op.input_name(0))
    return lengths.astype(np.int64)


@register("PackSegments", inputs=2, outputs=(1, 2))
class PackSegments(Operator):
    """``[lengths, data]`` → ``len(lengths) × max(lengths) × ...``: consecutive
    runs of ``lengths[i]`` rows of data, one per output row, padded with 0
    (``pad_minf=1``: -inf; float32 data only, as in Caffe2; other types 0).
    Rows of data after the last run are left out — until E6, whose
    PackSegments requires the lengths to add up to data's rows (39716d929).
    ``return_presence_mask=1`` (05a0c35a0, 2017-10-12; accepted in every era)
    adds output 1, a ``len(lengths) × max(lengths)`` bool tensor: True where
    a row holds data. Source: caffe2/operators/pack_segments.{h,cc} at
    0cdd09da6 and 042e8ede4."""

    def setup(self):
        self.pad_minf = self.args.single("pad_minf", False, bool)
        self.presence = self.args.single("return_presence_mask", False, bool)
        if self.presence and len(self.outputs) != 2:
            raise ArgumentError("return_presence_mask=1 needs a second output, the mask")

    def run(self):
        lengths = _segment_lengths(self)
        data = self.input(1)
        if data.ndim < 1:
            raise self.shape_error(1, "at least 1 dimension (DATA should be at least 1-D)")
        if int(lengths.sum()) > data.shape[0]:
            raise self.shape_error(1, "at least %d rows (the sum of the lengths)" % lengths.sum())
        if eras.current().pack_segments_exact_lengths and int(lengths.sum()) != data.shape[0]:
            raise self.shape_error(
                1,
                "%d rows: PackSegments requires that the sum of the lengths is equal to "
                "the first data dimension" % lengths.sum(),
            )
        longest = int(lengths.max()) if lengths.size else 0
        out = self.output(0, (lengths.size, longest) + data.shape[1:], data.dtype)
        out.fill(-np.inf if self.pad_minf and data.dtype == np.float32 else 0)
        starts = np.cumsum(lengths) - lengths
        for i, (start, n) in enumerate(zip(starts.tolist(), lengths.tolist())):
            out[i, :n] = data[start : start + n]
        if self.presence:
            mask = self.output(1, (lengths.size, longest), np.bool_)
            mask[...] = np.arange(longest)[None, :] < lengths[:, None]


@register("UnpackSegments", inputs=2, outputs=1)
class UnpackSegments(Operator):
    """``[lengths, packed]`` → the first ``lengths[i]`` rows of each ``packed[i]``,
    concatenated: PackSegments undone. As in Caffe2 a length above
    ``packed.shape[1]`` reads on into the next packed row; past the end of
    ``packed`` it is refused."""

    def run(self):
        lengths = _segment_lengths(self)
        data = self.input(1)
        if data.ndim < 2:
            raise self.shape_error(1, "at least 2 dimensions (DATA should be at least 2-D)")
        if data.shape[0] != lengths.size:
            raise self.shape_error(
                1, "(%d, ...): LENGTH should match DATA in dimension 0" % lengths.size
            )
        width = data.shape[1]
        rows = data.reshape((data.shape[0] * width,) + data.shape[2:])
        picked = np.concatenate(
            [np.arange(i * width, i * width + n) for i, n in enumerate(lengths.tolist())]
            or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        if picked.size and picked.max() >= rows.shape[0]:
            raise self.shape_error(
                0, "lengths that stay inside input 1 ('%s')" % self.input_name(1), lengths.shape
            )
        self.copy_to_output(0, rows[picked])


single_op_gradient("PackSegments", "UnpackSegments", ["I0", "GO0"], grad_input=1)


single_op_gradient("UnpackSegments", "PackSegments", ["I0", "GO0"], grad_input=1)
