"""Cells made of cells: ``DropoutCell`` and the stacked ``MultiRNNCell``."""

import contextlib

from .. import core, eras
from ..errors import ArgumentError
from .base import RNNCell, rectify_name
from .initializers import MultiRNNCellInitializer


class DropoutCell(RNNCell):
    """Dropout on a cell's *output*, never on its recurrent connection.

    The wrapped cell's states flow between timesteps untouched; only what the
    next layer (or the loss) sees is dropped: ``Dropout(output, ratio=...)``
    gives ``<output>_with_dropout_mask<k>`` and the mask
    ``<output>_dropout_mask<k>`` (``k`` counts this cell's dropouts). With
    ``forward_only`` (inference) or no ``dropout_ratio`` the output passes
    through unchanged.
    """

    def __init__(self, internal_cell, dropout_ratio=None, use_cudnn=False, **kwargs):
        self.internal_cell = internal_cell
        self.dropout_ratio = dropout_ratio
        self.use_cudnn = use_cudnn
        # E6 made is_test a required argument (and passes it to Dropout).
        if "is_test" in kwargs:
            self.is_test = bool(kwargs.pop("is_test"))
        elif eras.current().late_2017_cells:
            raise ArgumentError("DropoutCell: argument 'is_test' is required (era E6)")
        else:
            self.is_test = None
        kwargs.setdefault("initializer", internal_cell.initializer)
        super().__init__(**kwargs)
        self.mask = 0

    # The state layout and input work are the wrapped cell's.
    def prepare_input(self, model, input_blob):
        return self.internal_cell.prepare_input(model, input_blob)

    def get_state_names(self):
        return self.internal_cell.get_state_names()

    def get_output_state_index(self):
        return self.internal_cell.get_output_state_index()

    def get_output_dim(self):
        return self.internal_cell.get_output_dim()

    def collected_recompute_blobs(self):
        return self.internal_cell.collected_recompute_blobs()

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        return self.internal_cell._apply(
            model, input_t, seq_lengths, states, timestep, extra_inputs
        )

    def _prepare_output(self, model, states):
        output = self.internal_cell._prepare_output(model, states)
        return self._apply_dropout(model, output)

    def _prepare_output_sequence(self, model, state_outputs):
        output = self.internal_cell._prepare_output_sequence(model, state_outputs)
        return self._apply_dropout(model, output)

    def _apply_dropout(self, model, output):
        if not self.dropout_ratio or self.forward_only:
            return output
        extra = {} if self.is_test is None else {"is_test": self.is_test}
        if self.use_cudnn:
            extra["engine"] = "CUDNN"
        with core.NameScope(self.name or ""):
            output, _ = model.net.Dropout(
                output,
                [
                    str(output) + f"_with_dropout_mask{self.mask}",
                    str(output) + f"_dropout_mask{self.mask}",
                ],
                ratio=float(self.dropout_ratio),
                **extra,
            )
        self.mask += 1
        return output


class MultiRNNCell(RNNCell):
    """Stacked cells: layer i's output is layer i + 1's input, within one step.

    The states are all layers' states, in order; the output is the last
    layer's. ``residual_output_layers``: layers (not 0, whose input is
    prepared before the recurrence) whose input is added to their output
    (``<name>/residual_output_<i>``); the final output then sums the last
    layer with the contiguous run of residual layers below it
    (``output_connected_layers``, whose state indices are ``output_indices``).
    Callers give the layers distinct names (``<scope>/layer_<i>``).

    **Era E7** scopes the layers itself (Caffe2 085ce4663, policy
    ``cells_scope_their_ops``): layer i's step is built inside
    ``NameScope(name)`` and ``NameScope("layer_<i>")``, its states are named
    ``layer_<i>/<state>`` and its learned initial states are made under
    ``layer_<i>/``, so layers need no names of their own (``rnn_cell.LSTM``
    leaves them nameless). From baf8cdb76 (2018-03-02, policy
    ``multi_rnn_scoped_by_name``) the states are ``<name>/layer_<i>/<state>``
    — Python's formatting of ``<name>``, so a nameless stack's states are
    ``None/layer_<i>/...``, as in Caffe2 — and the first layer's input
    projection is made inside ``NameScope(name)``.

    One deliberate difference from Caffe2 (0cdd09da6): a residual layer's
    output is copied (``<name>/residual_input_<i>``) before the ``Sum``.
    Caffe2 summed the linked state directly; ``Sum``'s gradient is a
    pass-through name, so the layer's ``LSTMUnitGradient`` read it and the
    gradient arriving through the recurrent link (``<hidden_t>_grad``: the
    next step's and the external one) was never added: residual layers got
    wrong gradients through time. It is the linked-gradient bug fixed by
    f49200962, with a pass-through consumer.
    """

    def __init__(self, cells, residual_output_layers=None, **kwargs):
        kwargs.setdefault("initializer", MultiRNNCellInitializer(cells))
        super().__init__(**kwargs)
        if not cells:  # Caffe2: IndexError (output_index_per_layer[-1])
            raise ArgumentError("MultiRNNCell needs at least one cell")
        self.cells = list(cells)
        # Layer 0 (its input is prepared outside the recurrence) and indices
        # past the last layer are never residual; Caffe2 ignored them too.
        self.residual_output_layers = list(residual_output_layers or [])

        output_index_per_layer = []
        base_index = 0
        for cell in self.cells:
            output_index_per_layer.append(base_index + cell.get_output_state_index())
            base_index += len(cell.get_state_names())
        # A residual layer i + 1 connects layer i's output to the final sum; a
        # non-residual one cuts the chain.
        self.output_connected_layers = []
        self.output_indices = []
        for i in range(len(self.cells) - 1):
            if (i + 1) in self.residual_output_layers:
                self.output_connected_layers.append(i)
                self.output_indices.append(output_index_per_layer[i])
            else:
                self.output_connected_layers = []
                self.output_indices = []
        self.output_connected_layers.append(len(self.cells) - 1)
        self.output_indices.append(output_index_per_layer[-1])

        self.state_names = []
        self.scoped_layers = eras.current().cells_scope_their_ops
        if self.scoped_layers:  # E7: each layer's states in its own scope
            for i, cell in enumerate(self.cells):
                self.state_names.extend(map(self.layer_scoper(i), cell.get_state_names()))
            return
        for cell in self.cells:
            self.state_names.extend(cell.get_state_names())
        duplicates = sorted({n for n in self.state_names if self.state_names.count(n) > 1})
        if duplicates:
            raise ArgumentError(
                "Duplicate state names in MultiRNNCell: %s (give each layer its own name)"
                % duplicates
            )

    def layer_scoper(self, layer_id):
        """E7: the function naming layer ``layer_id``'s states."""
        if eras.current().multi_rnn_scoped_by_name:
            return lambda name: f"{self.name}/layer_{layer_id}/{name}"
        return lambda name: f"layer_{layer_id}/{name}"

    def _layer_scope(self, i):
        """E7: ``NameScope(name)`` and ``NameScope("layer_<i>")``; before: none."""
        if not self.scoped_layers:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        stack.enter_context(core.NameScope(self.name))
        stack.enter_context(core.NameScope(f"layer_{i}"))
        return stack

    def prepare_input(self, model, input_blob):
        if eras.current().multi_rnn_scoped_by_name:
            input_blob = rectify_name(input_blob)
            with core.NameScope(self.name or ""):
                return self.cells[0].prepare_input(model, input_blob)
        return self.cells[0].prepare_input(model, input_blob)

    def collected_recompute_blobs(self):
        # Caffe2 kept only the outer cell's list, dropping the layers' own
        # memory_optimization; collecting them saves that memory too.
        blobs = list(self.recompute_blobs)
        for cell in self.cells:
            blobs.extend(cell.collected_recompute_blobs())
        return blobs

    def _layer_states(self, states, factor=1):
        index = 0
        for cell in self.cells:
            n = factor * len(cell.get_state_names())
            yield cell, states[index : index + n]
            index += n

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        if len(states) != len(self.state_names):
            raise ArgumentError(
                "MultiRNNCell: %d states given, its layers have %d"
                % (len(states), len(self.state_names))
            )
        if self.scoped_layers:
            # E7: names become references before the layers' scopes could prefix them
            input_t, seq_lengths, states, timestep, extra_inputs = self._rectify_apply_inputs(
                input_t, seq_lengths, states, timestep, extra_inputs
            )
        next_states = []
        layer_input = input_t
        last = len(self.cells) - 1
        for i, (cell, layer_states) in enumerate(self._layer_states(states)):
            with self._layer_scope(i):
                prepared = cell.prepare_input(model, layer_input) if i > 0 else layer_input
                layer_next_states = cell._apply(
                    model,
                    prepared,
                    seq_lengths,
                    layer_states,
                    timestep,
                    extra_inputs=extra_inputs if i == 0 else None,
                )
                if i != last:
                    layer_output = cell._prepare_output(model, layer_next_states)
                    if i > 0 and i in self.residual_output_layers:
                        # The Copy gives the linked state's gradient a real op: Sum's
                        # gradient is a pass-through name, behind which the gradient
                        # arriving through the recurrent link would be lost.
                        layer_output = model.net.Copy(
                            layer_output, self.scope(f"residual_input_{i}")
                        )
                        layer_input = model.net.Sum(
                            [layer_output, layer_input], self.scope(f"residual_output_{i}")
                        )
                    else:
                        layer_input = layer_output
                next_states.extend(layer_next_states)
        return next_states

    def get_state_names(self):
        return self.state_names

    def get_output_state_index(self):
        index = sum(len(cell.get_state_names()) for cell in self.cells[:-1])
        return index + self.cells[-1].get_output_state_index()

    def get_output_dim(self):
        return self.cells[-1].get_output_dim()

    def _prepare_output(self, model, states):
        connected = [
            cell._prepare_output(model, layer_states)
            for i, (cell, layer_states) in enumerate(self._layer_states(states))
            if i in self.output_connected_layers
        ]
        return model.net.Sum(connected, self.scope("residual_output"))

    def _prepare_output_sequence(self, model, states):
        connected = [
            cell._prepare_output_sequence(model, layer_states)
            for i, (cell, layer_states) in enumerate(self._layer_states(states, factor=2))
            if i in self.output_connected_layers
        ]
        return model.net.Sum(connected, self.scope("residual_output_sequence"))
