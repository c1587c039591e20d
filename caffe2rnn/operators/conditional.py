"""Conditional: rows from one tensor or another, chosen by a bool vector.

``Conditional([condition, data_t, data_f]) → out``: ``out[i] = data_t[i]`` where
``condition[i]``, else ``data_f[i]``, along the first dimension. E6's beam
search switches between its first step and the later ones with it
(``models/seq2seq/beam_search.py``).

Caffe2's checks (``CAFFE_ENFORCE``): condition 1-D (and bool), data_t at
least 1-D with one row per condition, data_f of the same shape and the same
item size. It copied bytes, so a data_f of another type of that size is
read as data_t's type (reproduced). No gradient. Source:
caffe2/operators/conditional_op.{h,cc} at 042e8ede4 (new since E5).
"""

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient


@register("Conditional", inputs=3, outputs=1)
class Conditional(Operator):
    """``out[i] = data_t[i] if condition[i] else data_f[i]``."""

    def run(self):
        condition = self.typed_input(0, (np.bool_,), "bool")
        if condition.ndim != 1:
            raise self.shape_error(0, "a 1-D condition")
        data_t, data_f = self.input(1), self.input(2)
        if data_t.ndim < 1 or data_t.shape[0] != condition.size:
            raise self.shape_error(1, "(%d, ...): one row per condition" % condition.size)
        if data_f.shape != data_t.shape:
            raise self.shape_error(2, "%s like input 1 ('%s')" % (data_t.shape, self.input_name(1)))
        differs = data_f.dtype != data_t.dtype
        if differs and (
            data_f.dtype.itemsize != data_t.dtype.itemsize
            or data_t.dtype.hasobject
            or data_f.dtype.hasobject
        ):
            raise DTypeError(
                "input 2 ('%s') has type %s; expected items of %d bytes like input 1 ('%s', %s)"
                % (
                    self.input_name(2),
                    data_f.dtype,
                    data_t.dtype.itemsize,
                    self.input_name(1),
                    data_t.dtype,
                )
            )
        if differs:
            data_f = np.ascontiguousarray(data_f).view(data_t.dtype)  # Caffe2 copied bytes
        mask = condition.reshape((-1,) + (1,) * (data_t.ndim - 1))
        np.copyto(self.output(0, data_t.shape, data_t.dtype), np.where(mask, data_t, data_f))


register_gradient("Conditional")(NoGradient)
