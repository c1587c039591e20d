"""The example cells as today's ``recurrent_net`` builds them, ready to draw.

Each function returns the ``RecurrentNetwork`` ``OperatorDef`` of the cell of
that name in :mod:`caffe2rnn.example_cells` (the one registry: builder and
NumPy twin); the CLI (``render --version current``), the docs and the tests
draw them.
"""

from ..example_cells import CELLS as _REGISTRY


def op_of(name):
    """The RecurrentNetwork op of example cell ``name``, built by today's recurrent_net."""
    return _REGISTRY[name]().op()


def mul():
    return op_of("mul")


def sum_mul():
    return op_of("sum_mul")


def pass_through_reference():
    return op_of("pass_through_reference")


def two_states():
    return op_of("two_states")


def lstm():
    return op_of("lstm")


def lstm_recompute():
    return op_of("lstm_recompute")


def attention():
    return op_of("attention")


#: cell name → builder of its OperatorDef (a view of the one registry,
#: :data:`caffe2rnn.example_cells.CELLS`).
OPS = {name: (lambda name=name: op_of(name)) for name in _REGISTRY}


def rnn_cell_lstm():
    """The LSTM of the learner's path (docs/start-here.md): ``rnn_cell.LSTM(model,
    "x", "seq_lengths", ("h0", "c0"), dim_in=3, dim_out=4, scope="lstm")`` on a
    ``ModelHelper``, in the default era; the docs draw their views from it."""
    return op_of("rnn_cell_lstm")
