"""Repeat copy: fill every row of ``dst`` with the vector ``src``.

Twin of ``_ext/repeat_copy.pyx`` (same checks, same result).

Caffe2's ``repeatCopy`` is how ``initializeRecurrentInput`` accepts a 1-D
initial state: the same D-vector is copied into each of the N batch rows of
the first row of the (T + 1) x N x D states tensor.

    src  D,   dst  N x D   ->   dst[n, :] = src   for every n

Both are contiguous float arrays of one type, ``dst`` writable and apart from
``src``, ``dst.size`` a multiple of ``src.size`` (:mod:`caffe2rnn.kernels.contract`).
"""

import numpy as np

from . import contract


def repeat_copy(src, dst):
    """``dst[n] = src`` for every row n of ``dst`` (``dst.size`` = k * ``src.size``)."""
    contract.array(src, "repeat_copy", "src")
    contract.array(dst, "repeat_copy", "dst", writable=True)
    contract.same_dtype("repeat_copy", "src", src, "dst", dst)
    contract.no_overlap("repeat_copy", [("dst", dst)], [("src", src)])
    contract.repeat("repeat_copy", src, dst)
    np.copyto(dst.reshape(-1, src.size), src.reshape(-1))
