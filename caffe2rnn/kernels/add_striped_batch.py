"""Add striped batch: sum ``batch`` equally spaced stripes into ``y``.

Twin of ``_ext/add_striped_batch.pyx`` (same checks, same sums in the same order).

Caffe2's ``math::AddStripedBatch(N, first, y, stripe, batch)`` is how the
gradient of a 1-D initial state is formed: the state was repeated over the N
batch rows, so its gradient is the sum of the N rows of ``states_grad[0]``.

    first  batch x stripe (read flat),  y  n    ->   y += first[j, :n]  for j = 0 .. batch - 1

The rows are added one after the other, in order, exactly as the C++ loop
and the Cython twin do, so both paths give bit-identical sums (``np.sum``
would pick its own, pairwise, order). The stripes must fit in ``first``
(:mod:`caffe2rnn.kernels.contract`).
"""

from . import contract

KERNEL = "add_striped_batch"


def add_striped_batch(first, y, stripe, batch):
    """``y += first_flat[j * stripe : j * stripe + len(y)]`` for each j in order."""
    contract.array(first, KERNEL, "first")
    contract.array(y, KERNEL, "y", writable=True)
    contract.same_dtype(KERNEL, "first", first, "y", y)
    stripe = contract.index(stripe, KERNEL, "stripe")
    batch = contract.index(batch, KERNEL, "batch")
    contract.no_overlap(KERNEL, [("y", y)], [("first", first)])
    contract.stripes(KERNEL, first, y, stripe, batch)
    flat, out = first.reshape(-1), y.reshape(-1)
    n = out.shape[0]
    if n == 0:
        return  # nothing to add (and no batch-long empty loop)
    for j in range(batch):
        out += flat[j * stripe : j * stripe + n]
