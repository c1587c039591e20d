"""``Lars``: the rate factor of Layer-wise Adaptive Rate Scaling (E7).

``Lars([X, dX] → [lr_rescale])``, argument ``offset`` (default 0.5): one
number per parameter tensor ``X`` and its gradient ``dX`` (You, Gitman and
Ginsburg, https://arxiv.org/abs/1708.03888)::

    lr_rescale = 1 / (‖dX‖₂ / ‖X‖₂ + offset)     when ‖X‖₂ > 0
    lr_rescale = 1                                when X is all zeros

a 1-element tensor. E7's ``SgdOptimizer(lars=offset)`` and
``AdagradOptimizer(lars=offset)`` multiply the learning rate by it
(:mod:`caffe2rnn.optimizers.base`). With ``offset`` 0 and a zero gradient the
factor is ``inf``, as in Caffe2 (a float division by zero).

Caffe2: caffe2/sgd/lars_op.{h,cc} at 929c33cee (the op came after
042e8ede4): registered for float only, no gradient (``SHOULD_NOT_DO_GRADIENT``).
``RunOnDevice`` refuses (``CAFFE_ENFORCE``) a gradient whose size differs
from the parameter's ("Gradient size doesn't match parameter size.") and a
negative ``offset`` (``CAFFE_ENFORCE_GE(offset_, 0)``); caffe2rnn refuses
both, naming the op's input or argument. The norms are float32 sums of
squares (Eigen's), here NumPy's (pairwise summation): the factor can differ
in its last bits.
"""

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import ShouldNotDoGradient


@register("Lars", inputs=2, outputs=1)
class Lars(Operator):
    """``[X, dX] → [lr_rescale]`` (module docstring)."""

    def setup(self):
        self.offset = self.args.single("offset", 0.5, float)

    def run(self):
        x, dx = self.float_input(0), self.float_input(1)
        if dx.size != x.size:  # CAFFE_ENFORCE(dX.size() == X.size(), ...)
            raise ShapeError(
                "Lars: input 1 ('%s') has %d elements, input 0 ('%s') %d: Gradient size "
                "doesn't match parameter size."
                % (self.input_name(1), dx.size, self.input_name(0), x.size)
            )
        self.same_dtype(0, 1)
        if self.offset < 0:  # CAFFE_ENFORCE_GE(offset_, 0)
            raise ArgumentError("Lars: argument offset is %g; expected offset >= 0" % self.offset)
        t = x.dtype.type
        x_norm = np.sqrt(np.sum(np.square(x), dtype=x.dtype))
        out = self.output(0, (1,), x.dtype)
        out[0] = t(1.0)
        if x_norm > 0:
            dx_norm = np.sqrt(np.sum(np.square(dx), dtype=x.dtype))
            with np.errstate(divide="ignore"):
                out[0] = out[0] / (dx_norm / x_norm + t(self.offset))


register_gradient("Lars")(ShouldNotDoGradient)
