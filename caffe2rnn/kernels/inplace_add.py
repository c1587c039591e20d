"""In-place add: ``dst += src`` over two tensors of the same size.

The accumulation every gradient sum of the recurrent op reduces to: the
in-place ``Sum([param_grad, param_grad_tmpstep]) -> param_grad`` that
accumulates a parameter's gradient over timesteps, and the one-off
``states_grad[T] += hidden_last_grad`` of a ``_last`` output's gradient.
"""

import numpy as np


def inplace_add(dst, src):
    """``dst += src`` element-wise (``src`` is read in ``dst``'s shape)."""
    np.add(dst, src.reshape(dst.shape), out=dst)
