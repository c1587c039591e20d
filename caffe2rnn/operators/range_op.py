"""Range: ``np.arange`` as an operator (E6).

``Range([stop])``, ``Range([start, stop])`` or ``Range([start, stop, step])``:
0-d tensors of one type (int32, int64, float32 or float64; input 0's type
decides, as Caffe2's dispatch did) → the 1-D tensor ``start, start + step,
...`` below ``stop`` (above it for a negative step), of that type. The length
is Caffe2's: for floats ``ceil((stop − start) / step)`` in the type's
precision; for integers the truncated quotient, plus one when it falls short
of the difference — which for a negative step that does not divide the
difference gives one value fewer than ``np.arange`` (Caffe2's arithmetic, kept).
A step of 0 is refused ("Step size cannot be 0."), and so is input 0 with
dims (Caffe2 checked input 0 only, and read the first value of the others).

Caffe2: caffe2/operators/utility_ops.{h,cc} at 042e8ede4.
"""

import numpy as np

from ..errors import ArgumentError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient

_TYPES = (np.int32, np.int64, np.float32, np.float64)


@register("Range", inputs=(1, 3), outputs=1)
class Range(Operator):
    """``start + i · step`` for i < length (see the module doc)."""

    def run(self):
        first = self.typed_input(0, _TYPES, "a 0-d int32, int64, float32 or float64 tensor")
        if first.ndim != 0:
            raise self.shape_error(0, "a 0-d tensor: All inputs must be scalar.")
        kind = first.dtype.type
        values = []
        for i in range(len(self.inputs)):
            x = self.typed_input(i, (kind,), "%s like input 0" % first.dtype)
            if x.size == 0:
                raise self.shape_error(i, "one value")
            values.append(kind(x.reshape(-1)[0]))
        start, stop, step = kind(0), kind(0), kind(1)
        if len(values) == 1:
            (stop,) = values
        elif len(values) == 2:
            start, stop = values
        else:
            start, stop, step = values
        if step == 0:
            raise ArgumentError("Step size cannot be 0.")
        with np.errstate(over="ignore"):
            diff = kind(stop - start)
        if np.issubdtype(kind, np.integer):
            d, s = int(diff), int(step)
            length = abs(d) // abs(s) * (1 if (d >= 0) == (s > 0) else -1)  # C's truncation
            if length * s < d:
                length += 1
        else:
            length = int(np.ceil(kind(diff / step)))
        length = max(length, 0)
        out = self.output(0, (length,), first.dtype)
        out[...] = start + np.arange(length, dtype=first.dtype) * step


register_gradient("Range")(NoGradient)
