"""Offset alias: the rows of a tensor from ``start`` to the end, as a view.

Caffe2's ``applyOffsetAlias`` made an output blob (``hidden_all``,
``hidden_last``) point into the recurrent-state tensor instead of copying it
(``ShareExternalPointer``). The NumPy equivalent is a basic slice: O(1), no
copy, whatever the number of rows.

    states  (T + 1) x N x D       start = 1  ->  hidden_all  T x N x D
                                  start = T  ->  hidden_last 1 x N x D

``start`` has been checked against the tensor (``kernels.checks``) before this
runs; this twin and ``_ext/offset_alias.pyx`` return identical views.
"""


def offset_alias(src, start):
    """View of ``src[start:]`` (shares memory with ``src``)."""
    return src[start:]
