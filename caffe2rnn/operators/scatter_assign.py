"""ScatterAssign: overwrite rows of a tensor, in place.

``ScatterAssign([DATA, INDICES, SLICES] → DATA)``: ``DATA[INDICES[k]] =
SLICES[k]`` for every k, DATA's first dim being its rows (``DATA.size / N``
values each) and SLICES read as ``K = INDICES.size`` such rows. The output
must be DATA itself (``CAFFE_ENFORCE_EQ(&input, output, "In place operation
is required")``). Caffe2 copied the rows one after the other, so a repeated
index keeps the last of its slices. Caffe2 checked the indices and SLICES'
size with ``DCHECK`` only (gone in release builds, where a bad one wrote
outside DATA): refused here. E5 registered float data only, E6 more types;
caffe2rnn takes any numeric DATA with SLICES of the same type. No gradient.

Caffe2: caffe2/operators/utility_ops.{h,cc} at 0cdd09da6 and 042e8ede4.
"""

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient
from .training import index_input


@register("ScatterAssign", inputs=3, outputs=1, enforce_inplace=[(0, 0)])
class ScatterAssign(Operator):
    """Rows ``INDICES[k]`` of DATA become ``SLICES[k]``; the last of repeated indices wins."""

    def run(self):
        data = self.input(0)
        if not isinstance(data, np.ndarray) or data.dtype.kind not in "fiub":
            raise DTypeError("input 0 ('%s') must be a numeric tensor" % self.input_name(0))
        if data.ndim == 0:
            raise self.shape_error(0, "at least 1 dim (its rows)")
        n = data.shape[0]
        block = data.size // n if n else 0
        indices = index_input(self, 1, n)
        slices = self.input(2)
        if getattr(slices, "dtype", None) != data.dtype:
            raise DTypeError(
                "input 2 ('%s') has type %s; expected %s like input 0"
                % (self.input_name(2), getattr(slices, "dtype", type(slices)), data.dtype)
            )
        if slices.size != indices.size * block:
            raise self.shape_error(
                2, "%d values (%d rows of %d)" % (indices.size * block, indices.size, block)
            )
        k = indices.size
        # The last occurrence of each index: Caffe2's sequential copies leave that one.
        _, first_from_end = np.unique(indices[::-1], return_index=True)
        last = k - 1 - first_from_end
        out = self.output(0, data.shape, data.dtype)  # DATA itself (in place)
        out.reshape(n, block)[indices[last]] = slices.reshape(k, block)[last]


register_gradient("ScatterAssign")(ShouldNotDoGradient)
