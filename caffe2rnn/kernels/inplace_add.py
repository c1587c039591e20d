"""In-place add: ``dst += src`` over two tensors of the same size.

Twin of ``_ext/inplace_add.pyx`` (same checks, same sums).

The accumulation every gradient sum of the recurrent op reduces to: the
in-place ``Sum([param_grad, param_grad_tmpstep]) -> param_grad`` that
accumulates a parameter's gradient over timesteps, and the one-off
``states_grad[T] += hidden_last_grad`` of a ``_last`` output's gradient.
Contiguous float arrays of one type, ``dst`` writable and apart from ``src``
(:mod:`caffe2rnn.kernels.contract`).
"""

import numpy as np

from . import contract


def inplace_add(dst, src):
    """``dst += src`` element-wise (``src`` is read in ``dst``'s shape)."""
    contract.array(dst, "inplace_add", "dst", writable=True)
    contract.array(src, "inplace_add", "src")
    contract.same_dtype("inplace_add", "dst", dst, "src", src)
    contract.no_overlap("inplace_add", [("dst", dst)], [("src", src)])
    contract.same_size("inplace_add", "src", src, dst.size)
    np.add(dst, src.reshape(dst.shape), out=dst)
