"""Repeat copy: fill every row of ``dst`` with the vector ``src``.

Caffe2's ``repeatCopy`` is how ``initializeRecurrentInput`` accepts a 1-D
initial state: the same D-vector is copied into each of the N batch rows of
the first row of the (T + 1) x N x D states tensor.

    src  D,   dst  N x D   ->   dst[n, :] = src   for every n
"""

import numpy as np


def repeat_copy(src, dst):
    """``dst[n] = src`` for every row n of ``dst`` (broadcast assignment)."""
    np.copyto(dst, src)
