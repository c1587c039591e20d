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
* **E7** (``with eras.use("E7")``; Caffe2 929c33cee, 2018-03-26, the last
  before the move into PyTorch): also ``LayerNormMILSTMCell``/
  ``LayerNormMILSTM`` and the Elman RNN ``BasicRNNCell``/``BasicRNN``;
  ``seq_lengths=None`` for LSTM (and GRU, BasicRNN) layers; cells that define
  ``apply_override``/``get_state_names_override`` and are scoped by their
  name; ``MultiRNNCell`` scoping its layers (docs/concepts/history-e7.md).

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
from .cells.basic_rnn import BasicRNNCell
from .cells.initializers import LSTMInitializer, MultiRNNCellInitializer
from .cells.layers import (  # noqa: F401
    _LSTM,
    LSTM,
    MILSTM,
    BasicRNN,
    LayerNormLSTM,
    LayerNormMILSTM,
    LSTMWithAttentionLengths,
    _layered_LSTM,
    cudnn_LSTM,
    layered_LSTM,
)
from .cells.layers import LSTMWithAttention as _LSTMWithAttention2017_06
from .cells.lstm import LayerNormLSTMCell, LayerNormMILSTMCell, LSTMCell, MILSTMCell  # noqa: F401
from .cells.unrolled import UnrolledCell  # noqa: F401
from .cells.wrappers import DropoutCell, MultiRNNCell  # noqa: F401
from .recurrent import GetLSTMParamNames, InitFromLSTMParams  # noqa: F401

#: Names that exist only from a later era on: name → (object, the era's
#: policy that has it, when it arrived, the first era that has it).
_LATER = {
    "LayerNormLSTMCell": (LayerNormLSTMCell, "late_2017_cells", "after 2017-06", "E6"),
    "LayerNormLSTM": (LayerNormLSTM, "late_2017_cells", "after 2017-06", "E6"),
    "LSTMInitializer": (LSTMInitializer, "late_2017_cells", "after 2017-06", "E6"),
    "MultiRNNCellInitializer": (
        MultiRNNCellInitializer,
        "late_2017_cells",
        "after 2017-06",
        "E6",
    ),
    "LayerNormMILSTMCell": (LayerNormMILSTMCell, "layer_norm_milstm", "in d37199548", "E7"),
    "LayerNormMILSTM": (LayerNormMILSTM, "layer_norm_milstm", "in d37199548", "E7"),
    "BasicRNNCell": (BasicRNNCell, "basic_rnn_cell", "in a3d2ebeaf", "E7"),
    "BasicRNN": (BasicRNN, "basic_rnn_cell", "in a3d2ebeaf", "E7"),
}
del LayerNormLSTMCell, LayerNormLSTM, LSTMInitializer, MultiRNNCellInitializer
del LayerNormMILSTMCell, LayerNormMILSTM, BasicRNNCell, BasicRNN


def __getattr__(name):
    era = eras.current()
    if name == "LSTMWithAttention":
        return LSTMWithAttentionLengths if era.late_2017_cells else _LSTMWithAttention2017_06
    if name in _LATER:
        value, policy, arrived, first = _LATER[name]
        if getattr(era, policy):
            return value
        raise AttributeError(
            "rnn_cell.%s arrived in Caffe2 %s (era %s); the era in force is %s: use eras.use('%s')"
            % (name, arrived, first, era.name, first)
        )
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    era = eras.current()
    names = set(globals()) | {"LSTMWithAttention"}
    names |= {name for name, (_, policy, _, _) in _LATER.items() if getattr(era, policy)}
    return sorted(names)
