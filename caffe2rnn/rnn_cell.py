"""``caffe2.python.rnn_cell``: Caffe2's cell-based recurrent API (2017-05 on).

From 2017-04-18 Caffe2 code builds recurrent nets from *cells* (an
:class:`RNNCell` says what one step does; ``apply_over_sequence`` makes the
``RecurrentNetwork`` op with :func:`caffe2rnn.recurrent.recurrent_net`)::

    from caffe2.python import rnn_cell
    output, hidden_last, _, cell_last = rnn_cell.LSTM(
        model, input_blob, seq_lengths, (hidden_init, cell_init),
        dim_in=D, dim_out=H, scope="lstm")

This is the module at era E5 (Caffe2 0cdd09da6, 2017-06-29). The classes
live in :mod:`caffe2rnn.cells`; this module is their public home, the name
``caffe2.python.rnn_cell`` resolves to under :mod:`caffe2rnn.compat`.
``GetLSTMParamNames`` / ``InitFromLSTMParams`` are the ones of
:mod:`caffe2rnn.recurrent` (the same functions moved here in Caffe2).
"""

from .attention import AttentionType  # noqa: F401 - Caffe2 code imports it from here
from .cells.attention_cell import (  # noqa: F401
    AttentionCell,
    LSTMWithAttentionCell,
    MILSTMWithAttentionCell,
)
from .cells.base import RNNCell  # noqa: F401
from .cells.layers import (  # noqa: F401
    _LSTM,
    LSTM,
    MILSTM,
    LSTMWithAttention,
    _layered_LSTM,
    cudnn_LSTM,
    layered_LSTM,
)
from .cells.lstm import LSTMCell, MILSTMCell  # noqa: F401
from .cells.unrolled import UnrolledCell  # noqa: F401
from .cells.wrappers import DropoutCell, MultiRNNCell  # noqa: F401
from .recurrent import GetLSTMParamNames, InitFromLSTMParams  # noqa: F401
