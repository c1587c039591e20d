"""``caffe2.python.rnn_cell``: Caffe2's cell-based recurrent API (2017-05 on).

From 2017-04-18 Caffe2 code builds recurrent nets from *cells* (an
:class:`RNNCell` says what one step does; ``apply_over_sequence`` makes the
``RecurrentNetwork`` op with :func:`caffe2rnn.recurrent.recurrent_net`)::

    from caffe2.python import rnn_cell
    output, hidden_last, _, cell_last = rnn_cell.LSTM(
        model, input_blob, seq_lengths, (hidden_init, cell_init),
        dim_in=D, dim_out=H, scope="lstm")

The module follows the era in force (:mod:`caffe2rnn.eras`):

* **E5** (default; Caffe2 0cdd09da6, 2017-06-29): ``RNNCell``, ``LSTMCell``,
  ``MILSTMCell``, ``DropoutCell``, ``MultiRNNCell``, ``AttentionCell``,
  ``LSTMWithAttentionCell``, ``MILSTMWithAttentionCell``, ``UnrolledCell``;
  ``LSTM``, ``MILSTM``, ``LSTMWithAttention``, ``layered_LSTM``,
  ``GetLSTMParamNames``, ``InitFromLSTMParams``.
* **E6** (``with eras.use("E6")``; Caffe2 042e8ede4, 2017-12): also
  ``LayerNormLSTMCell``/``LayerNormLSTM``, ``LSTMInitializer``/
  ``MultiRNNCellInitializer`` (``initial_states=None`` → learned states made
  by the cells), ``LSTMWithAttention`` with ``encoder_lengths`` after
  ``encoder_outputs`` and the ``Dot``/``SoftCoverage`` attention types, and
  ``DropoutCell(is_test=...)``. ``GRUCell``/``GRU`` are in
  :mod:`caffe2rnn.gru_cell`.

The classes live in :mod:`caffe2rnn.cells`; this module is their public
home, the one ``caffe2.python.rnn_cell`` resolves to under
:mod:`caffe2rnn.compat`.
"""

from . import eras
from .attention import AttentionType  # noqa: F401 - Caffe2 code imports it from here
from .cells.attention_cell import (  # noqa: F401
    AttentionCell,
    LSTMWithAttentionCell,
    MILSTMWithAttentionCell,
)
from .cells.base import RNNCell  # noqa: F401
from .cells.initializers import LSTMInitializer, MultiRNNCellInitializer
from .cells.layers import (  # noqa: F401
    _LSTM,
    LSTM,
    MILSTM,
    LayerNormLSTM,
    LSTMWithAttentionLengths,
    _layered_LSTM,
    cudnn_LSTM,
    layered_LSTM,
)
from .cells.layers import LSTMWithAttention as _LSTMWithAttention2017_06
from .cells.lstm import LayerNormLSTMCell, LSTMCell, MILSTMCell  # noqa: F401
from .cells.unrolled import UnrolledCell  # noqa: F401
from .cells.wrappers import DropoutCell, MultiRNNCell  # noqa: F401
from .recurrent import GetLSTMParamNames, InitFromLSTMParams  # noqa: F401

#: Names that exist only from era E6 on.
_LATE_2017 = {
    "LayerNormLSTMCell": LayerNormLSTMCell,
    "LayerNormLSTM": LayerNormLSTM,
    "LSTMInitializer": LSTMInitializer,
    "MultiRNNCellInitializer": MultiRNNCellInitializer,
}
del LayerNormLSTMCell, LayerNormLSTM, LSTMInitializer, MultiRNNCellInitializer


def __getattr__(name):
    late = eras.current().late_2017_cells
    if name == "LSTMWithAttention":
        return LSTMWithAttentionLengths if late else _LSTMWithAttention2017_06
    if name in _LATE_2017:
        if late:
            return _LATE_2017[name]
        raise AttributeError(
            "rnn_cell.%s arrived in Caffe2 after 2017-06 (era E6); the era in force is %s: "
            "use eras.use('E6')" % (name, eras.current().name)
        )
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    names = set(globals()) | {"LSTMWithAttention"}
    if eras.current().late_2017_cells:
        names |= set(_LATE_2017)
    return sorted(names)
