"""Link view: ``window`` rows of a tensor starting at row ``start``, as a view.

Twin of ``_ext/link_view.pyx`` (same checks, same view).

Before each step, Caffe2's ``rnn_internal_apply_link`` pointed the step net's
blob ``internal`` at rows ``t + offset ... t + offset + window - 1`` of the
tensor ``external`` (``ShareExternalPointer``): ``hidden_t_prev`` is row t of
the states, ``hidden_t`` row t + 1, ``input_t`` row t of the input. Because it
is a view, an op writing ``hidden_t`` writes straight into the states tensor.

    external  R x N x D,  start = t + offset  ->  internal  window x N x D

The leading dimension is kept (``1 x N x D`` for window 1), as in Caffe2. The
rows must lie in ``[0, R)`` (:mod:`caffe2rnn.kernels.contract`);
:func:`caffe2rnn.kernels.checked.link_view` says which link broke it.
"""

from . import contract


def link_view(external, start, window):
    """View of rows ``[start, start + window)`` of ``external``."""
    n_rows = contract.view_source(external, "link_view", "external")
    start = contract.index(start, "link_view", "start")
    window = contract.index(window, "link_view", "window")
    contract.rows("link_view", n_rows, start, window)
    return external[start : start + window]
