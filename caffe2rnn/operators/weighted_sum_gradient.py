"""WeightedSumGradient: the gradient WeightedSum got in late 2017 (E6).

Until then ``WeightedSum`` (an optimizer's update ``w = w·1 + g·lr``) had no
gradient (``SHOULD_NOT_DO_GRADIENT``, utility_ops.cc at 0cdd09da6). E6's
maker (utility_ops.cc at 042e8ede4) writes one op::

    WeightedSumGradient([dY, X_0, w_0, X_1, w_1, ...] → [dX_0, dX_1, ..., (dw_0, dw_1, ...)])

with ``dX_i = w_i · dY`` and, when the forward op had ``grad_on_w=1``,
``dw_i = ⟨dY, X_i⟩`` (a 1-element tensor). Each weight must have one element
and each X_i dY's size (Caffe2's ``CAFFE_ENFORCE_EQ`` checks). The maker is the E6
and E7 variant of WeightedSum's (unchanged to 929c33cee); earlier eras keep refusing
the gradient.
"""

import numpy as np

from ..errors import EnforceNotMet
from ..runtime.registry import register, register_gradient_variant
from .base import Operator
from .gradient_maker import GradientMaker


def _odd(n_in, n_out):
    """an odd number of inputs (dY, then X_i, w_i pairs)"""
    return n_in % 2 == 1


@register("WeightedSumGradient", inputs=(1, None), outputs=(1, None), counts=_odd)
class WeightedSumGradient(Operator):
    """dX_i = w_i · dY; with ``grad_on_w`` also dw_i = Σ dY · X_i."""

    def setup(self):
        self.grad_on_w = self.args.single("grad_on_w", False, bool)
        expected = len(self.inputs) - 1 if self.grad_on_w else len(self.inputs) // 2
        if len(self.inputs) % 2 != 1 or len(self.outputs) != expected:
            raise EnforceNotMet(
                "WeightedSumGradient takes dY and (X_i, w_i) pairs and writes %s; got %d "
                "inputs, %d outputs"
                % (
                    "dX_i then dw_i" if self.grad_on_w else "dX_i",
                    len(self.inputs),
                    len(self.outputs),
                )
            )

    def run(self):
        dy = self.float_input(0)
        pairs = len(self.inputs) // 2
        results = []
        for k in range(pairs):
            x, w = self.float_input(2 * k + 1), self.float_input(2 * k + 2)
            if w.size != 1:
                raise self.shape_error(2 * k + 2, "a 1-element weight")
            if self.grad_on_w and x.size != dy.size:
                raise self.shape_error(2 * k + 1, "%d elements like input 0" % dy.size)
            results.append((x, w.reshape(-1)[0]))
        for k, (_, w) in enumerate(results):
            np.multiply(dy, w, out=self.output(k, dy.shape, dy.dtype))
        if self.grad_on_w:
            for k, (x, _) in enumerate(results):
                dw = self.output(pairs + k, (1,), np.float32)
                dw[0] = np.dot(dy.reshape(-1), x.reshape(-1))


@register_gradient_variant("WeightedSum", eras=["E6", "E7"])
class GetWeightedSumGradient(GradientMaker):
    """``WeightedSumGradient([GO0, I0, I1, ...] → [GI0, GI2, ..., (GI1, GI3, ...)])``."""

    def get_gradient_defs(self):
        inputs = [self.GO(0)]
        outputs = []
        for i in range(0, len(self.def_.input), 2):
            inputs += [self.I(i), self.I(i + 1)]
            outputs.append(self.GI(i))
        if self.arg("grad_on_w", 0):
            outputs += [self.GI(i + 1) for i in range(0, len(self.def_.input), 2)]
        return [self.op_def("WeightedSumGradient", inputs, outputs)]
