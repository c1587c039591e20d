"""Accumulate one timestep of an external gradient into the states gradient.

Twin of ``_ext/accumulate_input_gradient.pyx`` (same checks, same sums).

``rnn_internal_accumulate_gradient_input`` runs first in the backward step
net at step t and adds the gradient of ``hidden_all[t]`` (arriving from
outside the recurrent op) into row ``t + offset`` of ``states_grad``:

    g   R x N x D  (states_grad),   og  T x N x D  (d loss / d hidden_all)
    g[t + offset] += og[t]            (offset is 1: hidden_all = states[1:])

Rows are addressed by the size of one row of ``g`` (``g.size / g.shape[0]``),
as Caffe2 did with raw pointers. Both rows must be in bounds ("Accumulation
destination address over bounds", "Accumulation source address out of
bounds", Caffe2's words), checked by :mod:`caffe2rnn.kernels.contract`.
"""

import numpy as np

from . import contract

KERNEL = "accumulate_input_gradient"


def accumulate_input_gradient(g, og, t, offset):
    """``g[t + offset] += og[t]``, rows of ``g.size // g.shape[0]`` elements."""
    contract.array(g, KERNEL, "g", writable=True)
    contract.array(og, KERNEL, "og")
    contract.same_dtype(KERNEL, "g", g, "og", og)
    t = contract.index(t, KERNEL, "t")
    offset = contract.index(offset, KERNEL, "offset")
    contract.no_overlap(KERNEL, [("g", g)], [("og", og)])
    contract.accumulate_rows(KERNEL, g, og, t, offset)
    step = g.size // g.shape[0]
    dst = g.reshape(-1)[(t + offset) * step : (t + offset + 1) * step]
    src = og.reshape(-1)[t * step : (t + 1) * step]
    np.add(dst, src, out=dst)
