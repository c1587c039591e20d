"""Max and Min: the element-wise maximum (minimum) of same-shaped float tensors.

``Max([X_0, X_1, ...]) → Y`` with ``Y = max(X_0, X_1, ...)`` element by
element (may run in place on X_0). train.py clips gradients with
``Max([global_norm, clip_norm])``; E5's beam search takes the larger of two
lengths with it.

``MaxGradient([Y, dY, X_0, X_1, ...]) → [dX_0, dX_1, ...]`` routes dY to
every input equal to the maximum there: ``dX_i = dY · (X_i == Y)`` — on a
tie, *each* tied input gets the whole gradient, as in Caffe2.

``Min`` and ``MinGradient`` are the same with the minimum
(``dX_i = dY · (X_i == Y)``, Y the minimum); Caffe2 added them at
929c33cee (era E7: caffe2/operators/minmax_ops.{h,cc},
minmax_gradient_ops.cc, where ``Max`` moved too), with the same shape
``CAFFE_ENFORCE_EQ`` and a maker ``MinGradient([O0, GO0, I0, I1, ...] →
[GI0, GI1, ...])``. caffe2rnn accepts them in every era.

Caffe2 sources: caffe2/operators/utility_ops.{h,cc} (``MaxOp``,
``MaxGradientOp``, ``GetMaxGradient``) at 0cdd09da6, the same at
042e8ede4. Registered for float32 only there; float64 is accepted too.
"""

import numpy as np

from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


@register("Max", inputs=(1, None), outputs=1, inplace=[(0, 0)])
class Max(Operator):
    """Y = element-wise max of all inputs (same shape, same float type)."""

    combine = staticmethod(np.maximum)

    def run(self):
        x0 = self.float_input(0)
        rest = []
        for i in range(1, len(self.inputs)):
            x = self.float_input(i)
            if x.shape != x0.shape:
                # CAFFE_ENFORCE_EQ in MaxOp::RunOnDevice.
                raise self.shape_error(
                    i, "%s: should match input 0 ('%s')" % (x0.shape, self.input_name(0))
                )
            self.same_dtype(0, i)
            rest.append(x)
        out = self.output(0, x0.shape, x0.dtype)
        if out is not x0:
            np.copyto(out, x0)
        for x in rest:
            self.combine(out, x, out=out)


@register("Min", inputs=(1, None), outputs=1, inplace=[(0, 0)])
class Min(Max):
    """Y = element-wise min of all inputs (same shape, same float type)."""

    combine = staticmethod(np.minimum)


@register("MaxGradient", inputs=(3, None), outputs=(1, None))
class MaxGradient(Operator):
    """``dX_i = dY · (X_i == Y)`` for each input X_i (module doc)."""

    def run(self):
        y = self.float_input(0)
        dy = self.float_input(1)
        count = len(self.outputs)
        if len(self.inputs) - 2 < count:
            raise self.shape_error(
                len(self.inputs) - 1,
                "one input X_i per output: %d outputs but %d inputs after Y and dY"
                % (count, len(self.inputs) - 2),
            )
        for i in range(1, 2 + count):
            x = self.float_input(i)
            if x.size != y.size:
                raise self.shape_error(
                    i, "%d elements like input 0 ('%s')" % (y.size, self.input_name(0))
                )
            self.same_dtype(0, i)
        flat_y, flat_dy = y.reshape(-1), dy.reshape(-1)
        grads = [flat_dy * (self.input(2 + i).reshape(-1) == flat_y) for i in range(count)]
        for i, g in enumerate(grads):
            x = self.input(2 + i)
            np.copyto(self.output(i, x.shape, x.dtype), g.reshape(x.shape))


@register("MinGradient", inputs=(3, None), outputs=(1, None))
class MinGradient(MaxGradient):
    """``dX_i = dY · (X_i == Y)``, Y the minimum (module doc)."""


@register_gradient("Max")
class GetMaxGradient(GradientMaker):
    """``MaxGradient([O0, GO0, I0, I1, ...] → [GI0, GI1, ...])``."""

    gradient_type = "MaxGradient"

    def get_gradient_defs(self):
        n = len(self.def_.input)
        return [
            self.op_def(
                self.gradient_type,
                [self.O(0), self.GO(0)] + [self.I(i) for i in range(n)],
                [self.GI(i) for i in range(n)],
            )
        ]


@register_gradient("Min")
class GetMinGradient(GetMaxGradient):
    """``MinGradient([O0, GO0, I0, I1, ...] → [GI0, GI1, ...])``."""

    gradient_type = "MinGradient"
