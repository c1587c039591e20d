"""Comparisons (LT, LE, GT, GE, EQ) and logic (And, Or, Xor, Not), element-wise.

The binary ones share Add's template (:mod:`.elementwise`): same-typed A and
B, ``broadcast=1`` for a scalar B or a block of A's dims; the result is a
``bool`` tensor shaped like A. Which types each accepted was Caffe2's
kernel list:

* ``LT``, ``LE``, ``GT``, ``GE``: int32, int64, float32, float64;
* ``EQ``: int32 and int64 only (float equality was not offered);
* ``And``, ``Or``, ``Xor`` and the unary ``Not``: bool.

E6's beam search asks ``EQ`` whether it is on the first step
(``models/seq2seq/beam_search.py``). None of these has a gradient
(``SHOULD_NOT_DO_GRADIENT``).

Caffe2 sources: caffe2/operators/elementwise_op.{h,cc},
elementwise_op_schema.cc at 0cdd09da6 (the same at 042e8ede4).
"""

import numpy as np

from ..errors import DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .elementwise import NUMERIC_TYPES, BinaryElementwise
from .gradient_maker import ShouldNotDoGradient

INT_TYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64))
BOOL_TYPES = frozenset([np.dtype(np.bool_)])

#: op type → (NumPy ufunc, accepted input types, allowed in-place pairs).
BINARY = {
    "LT": (np.less, NUMERIC_TYPES, []),
    "LE": (np.less_equal, NUMERIC_TYPES, []),
    "GT": (np.greater, NUMERIC_TYPES, []),
    "GE": (np.greater_equal, NUMERIC_TYPES, []),
    "EQ": (np.equal, INT_TYPES, []),
    "And": (np.logical_and, BOOL_TYPES, [(0, 0)]),
    "Or": (np.logical_or, BOOL_TYPES, [(0, 0)]),
    "Xor": (np.logical_xor, BOOL_TYPES, [(0, 0)]),
}


def _binary_class(op_type, ufunc, types, inplace):
    cls = type(
        op_type,
        (BinaryElementwise,),
        {
            "__doc__": "C = A %s B as bool, element-wise (``broadcast=1``: B a scalar or a "
            "block of A's dims)." % ufunc.__name__,
            "__module__": __name__,
            "ufunc": ufunc,
            "input_types": types,
            "output_type": np.bool_,
        },
    )
    register_gradient(op_type)(ShouldNotDoGradient)
    return register(op_type, inputs=2, outputs=1, inplace=inplace)(cls)


for _op_type, (_ufunc, _types, _inplace) in BINARY.items():
    globals()[_op_type] = _binary_class(_op_type, _ufunc, _types, _inplace)


@register("Not", inputs=1, outputs=1)
class Not(Operator):
    """Y = not X, element-wise, for a bool tensor."""

    def run(self):
        x = self.input(0)
        if x.dtype != np.bool_:
            raise DTypeError(
                "input 0 ('%s') has type %s; expected bool" % (self.input_name(0), x.dtype)
            )
        np.logical_not(x, out=self.output(0, x.shape, np.bool_))


register_gradient("Not")(ShouldNotDoGradient)
