"""Offset alias: the rows of a tensor from ``start`` to the end, as a view.

Twin of ``_ext/offset_alias.pyx`` (same checks, same view).

Caffe2's ``applyOffsetAlias`` made an output blob (``hidden_all``,
``hidden_last``) point into the recurrent-state tensor instead of copying it
(``ShareExternalPointer``). The NumPy equivalent is a basic slice: O(1), no
copy, whatever the number of rows.

    states  (T + 1) x N x D       start = 1  ->  hidden_all  T x N x D
                                  start = T  ->  hidden_last 1 x N x D

Operators reach it through :func:`caffe2rnn.kernels.checked.offset_alias`,
which turns a negative offset into ``start`` and names the alias in its
errors; the raw kernel still refuses a ``start`` outside ``[0, rows]``
(:mod:`caffe2rnn.kernels.contract`).
"""

from . import contract


def offset_alias(src, start):
    """View of ``src[start:]`` (shares memory with ``src``)."""
    n_rows = contract.view_source(src, "offset_alias", "src")
    start = contract.index(start, "offset_alias", "start")
    contract.alias_start("offset_alias", n_rows, start)
    return src[start:]
