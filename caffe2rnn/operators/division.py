"""Div: ``C = A / B`` element-wise, with Caffe2's limited broadcasting.

Same template as Add/Sub/Mul (:mod:`.elementwise`: ``broadcast=1`` lets B be
a scalar or a block of A's dims). For int32/int64 the quotient is C++'s:
truncated toward zero (``-7 / 2 == -3``, where NumPy's ``//`` gives -4).
Dividing an integer by zero (or the smallest integer by -1) raised SIGFPE
in Caffe2, so it is refused here; floats follow IEEE (``x / 0 = ±inf``).

Beam search divides a flat hypothesis index by the beam size
(``beam_search.py``), gradient clipping divides the norm (``train.py``).

Gradient: ``DivGradient([B, C, dC]) → [dA, dB]`` with ``dA = dC / B`` and
``dB = -dC · C / B``; there was none for a broadcasting Div (the maker
refused any op carrying a ``broadcast`` argument).

Caffe2 sources: caffe2/operators/elementwise_div_op.cc, elementwise_op.h
(``DivGradientOp``), elementwise_op_schema.cc (``GetDivGradient``), at
0cdd09da6 (unchanged at 042e8ede4).
"""

import numpy as np

from ..errors import EnforceNotMet, GradientError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .elementwise import BinaryElementwise
from .gradient_maker import GradientMaker


@register("Div", inputs=2, outputs=1, inplace=[(0, 0)])
class Div(BinaryElementwise):
    """C = A / B (``broadcast=1``: B a scalar or a block of A's dims)."""

    def check_values(self, a, b):
        if a.dtype.kind != "i":
            return
        if np.any(b == 0):
            raise EnforceNotMet(
                "input 1 ('%s') holds a zero: integer division by zero (Caffe2 crashed "
                "with SIGFPE)" % self.input_name(1)
            )
        if np.any((a == np.iinfo(a.dtype).min) & (b == -1)):
            raise EnforceNotMet(
                "input 0 ('%s') holds the smallest %s and input 1 ('%s') a -1 at the same "
                "place: the quotient overflows (Caffe2 crashed with SIGFPE)"
                % (self.input_name(0), a.dtype, self.input_name(1))
            )

    def compute(self, a, b, out):
        if a.dtype.kind != "i":
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                np.divide(a, b, out=out)
            return
        # C++ truncates toward zero: the floor, plus one where the remainder
        # is non-zero and the signs differ.
        quotient = np.floor_divide(a, b)
        quotient += (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        np.copyto(out, quotient)


@register("DivGradient", inputs=3, outputs=2, inplace=[(0, 0)])
class DivGradient(Operator):
    """Inputs B, C, dC (one size) → dA = dC / B, dB = -dC · C / B (shaped like B).

    Caffe2's kernel was float32 only (``data<float>()`` enforced the type);
    float64 is accepted too, for tight gradient checks.
    """

    def run(self):
        b = self.float_input(0)
        for i in (1, 2):
            x = self.float_input(i)
            if x.size != b.size:
                raise self.shape_error(
                    i, "%d elements like input 0 ('%s')" % (b.size, self.input_name(0))
                )
            self.same_dtype(0, i)
        c = self.input(1).reshape(b.shape)
        dc = self.input(2).reshape(b.shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            da = dc / b
            db = -(dc * c) / b
        np.copyto(self.output(0, b.shape, b.dtype), da)
        np.copyto(self.output(1, b.shape, b.dtype), db)


@register_gradient("Div")
class GetDivGradient(GradientMaker):
    """``DivGradient([B, C, dC] → [dA, dB])``; refused for a broadcasting Div."""

    def get_gradient_defs(self):
        if self.has_arg("broadcast"):
            raise GradientError("Gradient not ready yet for Div with broadcasting.")
        return [
            self.op_def("DivGradient", [self.I(1), self.O(0), self.GO(0)], [self.GI(0), self.GI(1)])
        ]
