"""``RmsProp``: the RMSProp step (Tieleman & Hinton, lecture 6 of csc321).

``RmsProp([grad, mean_squares, mom, lr] → [grad_o, mean_squares_o, mom_o])``,
arguments ``decay`` (default 0.9), ``momentum`` (0.0) and ``epsilon``
(1e-5)::

    ms' = ms + (1 − decay) · (g² − ms)
    mom' = momentum · mom + lr · g / √(ε + ms')
    g'  = mom'

The op does not touch the parameter: Caffe2's ``RmsPropOptimizer`` (E6) runs
it and then ``MomentumSGDUpdate([g', mom', lr, w])`` with the default
momentum 0, which subtracts ``lr · g'`` from ``w``. That ``lr`` is the
optimizer's learning rate (negative, see :mod:`caffe2rnn.optimizer`) while
RmsProp's own ``lr`` input is the constant ``ONE``: the RMS-scaled gradient is
made first, the step size applied after.

Caffe2: caffe2/sgd/rmsprop_op.{h,cc} (unchanged from 0cdd09da6 to 042e8ede4):
``CAFFE_ENFORCE``s a 1-element ``lr`` and ``grad`` of the size of
``mean_squares`` and of ``mom``; every input may be written in place.
"""

import numpy as np

from ..runtime.registry import register, register_gradient
from .gradient_maker import ShouldNotDoGradient
from .sgd import ParameterUpdate


@register("RmsProp", inputs=4, outputs=3, inplace=[(0, 0), (1, 1), (2, 2)])
class RmsProp(ParameterUpdate):
    """``[grad, mean_squares, mom, lr] → [grad_o, mean_squares_o, mom_o]``."""

    def setup(self):
        self.decay = self.args.single("decay", 0.9, float)
        self.momentum = self.args.single("momentum", 0.0, float)
        self.epsilon = self.args.single("epsilon", 1e-5, float)

    def run(self):
        g, ms, mom = self.floats_of_one_size((0, 1, 2))
        lr = self.learning_rate(3)
        t = g.dtype.type
        ms = ms.reshape(g.shape)
        ms_new = ms + t(1.0 - self.decay) * (g * g - ms)
        mom_new = mom.reshape(g.shape) * t(self.momentum) + lr * g / np.sqrt(
            t(self.epsilon) + ms_new
        )
        self.write(1, ms_new, self.input(1))
        self.write(2, mom_new, self.input(2))
        self.write(0, mom_new, g)


register_gradient("RmsProp")(ShouldNotDoGradient)
