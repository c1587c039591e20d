"""UnsafeCoalesce: copy tensors into one byte buffer and make them views of it.

``UnsafeCoalesce([X_0, ..., X_{k−1}] → [Y_0, ..., Y_{k−1}, coalesced])``:
``coalesced`` is a uint8 tensor holding the bytes of every X_i one after the
other, each start rounded up to a multiple of 32 bytes (Caffe2's
``gCaffe2Alignment``; the gaps are 0); ``Y_i`` has X_i's values, shape and
type, and *is* its stretch of ``coalesced``: writing one writes the other
(Caffe2's ``ShareExternalPointer``; hence "unsafe"). ``Y_i`` may be ``X_i``.
Only fundamental types (numbers, bools) can be coalesced: "Must only
coalesce fundamental types". No gradient was registered.

Caffe2: caffe2/operators/utility_ops.{h,cc} at 0cdd09da6.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient

#: Every tensor starts at a multiple of this many bytes (gCaffe2Alignment).
ALIGNMENT = 32


def _aligned(nbytes):
    return (nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _same_index(i, j):
    return i == j


def _one_more_output(n_in, n_out):
    """one output more than inputs (the coalesced buffer)"""
    return n_in + 1 == n_out


@register(
    "UnsafeCoalesce",
    inputs=(0, None),
    outputs=(1, None),
    counts=_one_more_output,
    inplace=_same_index,
)
class UnsafeCoalesce(Operator):
    """Y_i: views of one uint8 buffer (the last output) holding every X_i."""

    def setup(self):
        if len(self.outputs) != len(self.inputs) + 1:
            raise EnforceNotMet(
                "Operator def did not pass schema checking: UnsafeCoalesce takes k "
                "inputs and k + 1 outputs; got %d and %d" % (len(self.inputs), len(self.outputs))
            )

    def run(self):
        xs = []
        for i in range(len(self.inputs)):
            x = self.input(i)
            if not isinstance(x, np.ndarray) or x.dtype.kind not in "biufc":
                raise DTypeError("Must only coalesce fundamental types, error at input: %d" % i)
            xs.append(np.ascontiguousarray(x))
        offsets = np.cumsum([0] + [_aligned(x.nbytes) for x in xs])
        coalesced = np.zeros(int(offsets[-1]), np.uint8)
        views = []
        for x, start in zip(xs, offsets):
            stretch = coalesced[start : start + x.nbytes]
            stretch[...] = x.reshape(-1).view(np.uint8)
            views.append(stretch.view(x.dtype).reshape(x.shape))
        for i, view in enumerate(views):
            self.set_output(i, view)
        self.set_output(len(views), coalesced)


# SHOULD_NOT_DO_GRADIENT(UnsafeCoalesce) (utility_ops.cc, every era)
register_gradient("UnsafeCoalesce")(ShouldNotDoGradient)
