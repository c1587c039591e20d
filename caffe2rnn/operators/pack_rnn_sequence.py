"""PackRNNSequence / UnpackRNNSequence: sequences laid end to end ⇄ the T × N × ...
layout of a recurrent network's input.

``PackRNNSequence([values, lengths])``: ``values`` holds N sequences one after
the other (rows ``0 .. sum(lengths) - 1``, sequence c taking the next
``lengths[c]`` rows); the output is ``max(lengths) × N × ...`` with
``output[r, c]`` = row r of sequence c, zeros where a sequence is shorter::

    values  = [v1, v2, v3, v4, v5, v6, v7, v8]      lengths = [2, 3, 1, 2]
    output  = [[v1, v3, v6, v7],
               [v2, v4, 0,  v8],
               [0,  v5, 0,  0 ]]

``UnpackRNNSequence`` is the inverse, ``sum(lengths) × ...`` from
``T × N × ...``, and each is the other's gradient. Both existed from 2017
(Caffe2's pack_rnn_sequence_op.{h,cc}, unchanged to 929c33cee).

What Caffe2 checked, these check (``values`` int32, int64, float32 or
float64, of rank above 1 for Pack and above 2 for Unpack; ``lengths`` a 1-D
int32 tensor whose largest value is not negative). Caffe2 did not check
that the rows it copied existed: a pack whose lengths add up to more rows
than ``values`` has, or an unpack reading rows past the packed tensor's end,
read memory beyond the tensor; here they are refused, naming the lengths.
Rows no length reaches are left out; Unpack reads the packed tensor as its
rows of ``T × N'`` (``N'`` its second dimension) at ``r * N + c``, N being
``len(lengths)``, as Caffe2 did, even when N' differs.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet, OutOfRangeError
from ..runtime.registry import register
from .base import Operator
from .gradient_maker import single_op_gradient

_TYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64))


class _PackRNNSequenceBase(Operator):
    """The copy loop of both ops; ``forward`` is True for Pack."""

    forward = True

    def run(self):
        values = self.input(0)
        if values.dtype not in _TYPES:
            raise DTypeError(
                "input 0 ('%s') has type %s; expected int32, int64, float32 or float64"
                % (self.input_name(0), values.dtype)
            )
        dim_offset = 1 if self.forward else 2
        if values.ndim <= dim_offset:
            raise self.shape_error(0, "a tensor of rank above %d" % dim_offset)
        lengths = self.typed_input(1, (np.int32,), "int32 lengths", ndim=1)
        cols = lengths.size
        lengths = lengths.astype(np.int64)
        rows = int(lengths.max()) if cols else 0
        if rows < 0:
            raise EnforceNotMet(
                "input 1 ('%s'): the largest length is %d; it must not be negative"
                % (self.input_name(1), rows)
            )
        # Caffe2's loop: for each sequence c, its rows r < lengths[c] (none for
        # a length below 1), from sequence row offset + r, offset growing by
        # lengths[c] (negative lengths included), to packed row r * N + c.
        counts = np.maximum(lengths, 0)
        c = np.repeat(np.arange(cols), counts)
        r = np.arange(c.size) - np.repeat(np.cumsum(counts) - counts, counts)
        sequence_rows = (np.cumsum(lengths) - lengths)[c] + r
        packed_rows = r * cols + c
        feature_shape = values.shape[dim_offset:]
        source = values.reshape((-1,) + feature_shape)
        if self.forward:
            shape, reads, writes = (rows, cols) + feature_shape, sequence_rows, packed_rows
        else:
            shape = (int(lengths.sum()),) + feature_shape
            reads, writes = packed_rows, sequence_rows
            if shape[0] < 0:
                raise EnforceNotMet(
                    "input 1 ('%s'): the lengths add up to %d rows; the output cannot have "
                    "a negative size" % (self.input_name(1), shape[0])
                )
        out_rows = shape[0] * (cols if self.forward else 1)
        if reads.size and (reads.min() < 0 or reads.max() >= source.shape[0]):
            raise OutOfRangeError(
                "input 1 ('%s'): the lengths %s read row %d of input 0 ('%s'), which has %d "
                "rows of %s (Caffe2 read past the tensor)"
                % (
                    self.input_name(1),
                    lengths.tolist(),
                    int(reads.max() if reads.max() >= source.shape[0] else reads.min()),
                    self.input_name(0),
                    source.shape[0],
                    feature_shape,
                )
            )
        if writes.size and (writes.min() < 0 or writes.max() >= out_rows):
            raise OutOfRangeError(
                "input 1 ('%s'): the lengths %s write past the %d rows of the output "
                "(Caffe2 wrote past it)" % (self.input_name(1), lengths.tolist(), out_rows)
            )
        result = np.zeros((out_rows,) + feature_shape, values.dtype)
        result[writes] = source[reads]
        self.output(0, shape, values.dtype)[...] = result.reshape(shape)


@register("PackRNNSequence", inputs=2, outputs=1)
class PackRNNSequence(_PackRNNSequenceBase):
    """``values`` (sequences end to end) → ``max(lengths) × N × ...``."""

    forward = True


@register("UnpackRNNSequence", inputs=2, outputs=1)
class UnpackRNNSequence(_PackRNNSequenceBase):
    """``T × N × ...`` → ``sum(lengths) × ...``, sequences end to end."""

    forward = False


single_op_gradient("PackRNNSequence", "UnpackRNNSequence", ["GO0", "I1"])
single_op_gradient("UnpackRNNSequence", "PackRNNSequence", ["GO0", "I1"])
