"""Add striped batch: sum ``batch`` equally spaced stripes into ``y``.

Caffe2's ``math::AddStripedBatch(N, first, y, stripe, batch)`` is how the
gradient of a 1-D initial state is formed: the state was repeated over the N
batch rows, so its gradient is the sum of the N rows of ``states_grad[0]``.

    first  batch x stripe (read flat),  y  n    ->   y += first[j, :n]  for j = 0 .. batch - 1

The rows are added one after the other, in order, exactly as the C++ loop
and the Cython twin do, so both paths give bit-identical sums (``np.sum``
would pick its own, pairwise, order).
"""


def add_striped_batch(first, y, stripe, batch):
    """``y += first_flat[j * stripe : j * stripe + len(y)]`` for each j in order."""
    flat = first.reshape(-1)
    n = y.shape[0]
    for j in range(batch):
        y += flat[j * stripe : j * stripe + n]
