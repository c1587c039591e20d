"""Learned initial states for cells (Caffe2 ``rnn_cell.LSTMInitializer``, E6).

From late 2017 a cell may carry an *initializer*: when
``apply_over_sequence`` gets ``initial_states=None`` it asks
``cell.initializer.create_states(model)`` (under the cell's name scope) for
one zero-initialised parameter per state, so the model learns its start
state. ``LSTMCell`` defaults to :class:`LSTMInitializer`; ``MultiRNNCell``
to :class:`MultiRNNCellInitializer` (each layer's, in its own scope: the
layer's name, and from era E7 ``layer_<i>/`` before it).
"""

from .. import eras, scope
from ..modeling.initializers import Initializer


def _zero_state(model, name, size):
    return model.create_param(
        param_name=name,
        shape=[size],
        initializer=Initializer(operator_name="ConstantFill", value=0.0),
    )


class LSTMInitializer:
    """``initial_hidden_state`` and ``initial_cell_state``, ``[hidden_size]`` zeros."""

    def __init__(self, hidden_size):
        self.hidden_size = hidden_size

    def create_states(self, model):
        return [
            _zero_state(model, "initial_hidden_state", self.hidden_size),
            _zero_state(model, "initial_cell_state", self.hidden_size),
        ]


class MultiRNNCellInitializer:
    """Every layer's initializer, each under its cell's name scope."""

    def __init__(self, cells):
        self.cells = cells

    def create_states(self, model):
        states = []
        layer_scopes = eras.current().cells_scope_their_ops  # E7 (085ce4663)
        for i, cell in enumerate(self.cells):
            if cell.initializer is None:
                raise ValueError(
                    "initial_states=None needs an initializer on every layer; %s '%s' has none"
                    % (type(cell).__name__, cell.name)
                )
            layer = scope.NameScope(f"layer_{i}" if layer_scopes else None)
            with layer, scope.NameScope(cell.name):
                states.extend(cell.initializer.create_states(model))
        return states
