"""Link view: ``window`` rows of a tensor starting at row ``start``, as a view.

Before each step, Caffe2's ``rnn_internal_apply_link`` pointed the step net's
blob ``internal`` at rows ``t + offset ... t + offset + window - 1`` of the
tensor ``external`` (``ShareExternalPointer``): ``hidden_t_prev`` is row t of
the states, ``hidden_t`` row t + 1, ``input_t`` row t of the input. Because it
is a view, an op writing ``hidden_t`` writes straight into the states tensor.

    external  R x N x D,  start = t + offset  ->  internal  window x N x D

The leading dimension is kept (``1 x N x D`` for window 1), as in Caffe2. The
caller has checked ``0 <= start`` and ``start + window <= R``.
"""


def link_view(external, start, window):
    """View of rows ``[start, start + window)`` of ``external``."""
    return external[start : start + window]
