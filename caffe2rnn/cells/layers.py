"""The layer functions of ``rnn_cell``: ``LSTM``, ``MILSTM``, ``LSTMWithAttention``...

They build cells and run them with ``apply_over_sequence``; the result tuple
is the RecurrentNetwork op's outputs, ``(hidden_all, hidden_last, cell_all,
cell_last)`` per layer (Caffe2 ``rnn_cell._LSTM``, 0cdd09da6).
"""

import functools

from .. import core, eras
from ..attention import AttentionType, attention_type_name
from ..errors import ArgumentError, ArgumentTypeError
from .attention_cell import LSTMWithAttentionCell
from .basic_rnn import BasicRNNCell
from .lstm import LayerNormLSTMCell, LayerNormMILSTMCell, LSTMCell, MILSTMCell
from .unrolled import UnrolledCell
from .wrappers import MultiRNNCell

#: ``_LSTM``'s ``scope`` when it is left out (allowed from era E7).
_REQUIRED = object()


def _layer_name(era, scope, i, num_layers):
    """The name of layer ``i``'s cell: ``scope`` for a single layer; in a
    stack ``<scope>/layer_<i>`` until E7, then ``scope`` (085ce4663: the
    MultiRNNCell scopes the layers), then None (baf8cdb76)."""
    if num_layers == 1:
        return scope
    if not era.cells_scope_their_ops:
        return f"{scope}/layer_{i}"
    return None if era.multi_rnn_scoped_by_name else scope


def _zero_initial_states(model, scope, dim_out):
    """Learned initial states, zero-filled parameters of the model (one pair per
    layer: ``<scope>/initial_hidden_state[_<i>]``, ``initial_cell_state[_<i>]``)."""
    states = []
    many = len(dim_out) > 1
    with core.NameScope(scope):
        for i, dim in enumerate(dim_out):
            suffix = f"_{i}" if many else ""
            for name in ("initial_hidden_state", "initial_cell_state"):
                blob = model.param_init_net.ConstantFill([], name + suffix, shape=[dim], value=0.0)
                states.append(blob)
                model.params.append(blob)
    return states


def _LSTM(
    cell_class,
    model,
    input_blob,
    seq_lengths,
    initial_states,
    dim_in,
    dim_out,
    scope=_REQUIRED,
    outputs_with_grads=(0,),
    return_params=False,
    memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
    drop_states=False,
    return_last_layer_only=True,
    static_rnn_unroll_size=None,
    **cell_kwargs,
):
    """One or more stacked LSTM layers (``cell_class`` per layer) over
    ``input_blob`` (T × N × dim_in).

    * ``dim_out``: an int, or a list of ints for stacked layers (named
      ``<scope>/layer_<i>``, states of layer i feeding layer i + 1 each step);
    * ``initial_states``: ``2 * num_layers`` blobs ``(h0, c0, h1, c1...)``, or
      None for learned zero-initialised states added to the model's params;
    * ``outputs_with_grads`` index the *last* layer's four outputs;
    * ``return_last_layer_only`` (default) returns 4 outputs, else 4 per layer;
    * ``static_rnn_unroll_size=T`` builds a :class:`UnrolledCell` (plain ops,
      T copies) instead of a RecurrentNetwork op; same parameters and numbers;
    * ``return_params`` (one layer only) appends
      ``{'input': {'weights', 'biases'}, 'recurrent': {...}}``;
    * ``memory_optimization``, ``forget_bias``, ``drop_states``,
      ``forward_only``: see :class:`~caffe2rnn.cells.lstm.LSTMCell`.

    Era E7: ``scope`` may be left out (None), further keywords go to every
    cell (``linear_before_reset=`` of a GRU, ``activation=`` of
    ``BasicRNN``; Caffe2 7d4c7690d), ``seq_lengths`` may be None (LSTM, GRU,
    BasicRNN: every sequence runs all T steps), and a stack's layers are
    nameless: ``MultiRNNCell`` scopes them (``<scope>/layer_<i>/``; before
    baf8cdb76 each layer was named ``scope``).
    """
    era = eras.current()
    if scope is _REQUIRED:
        if not era.cells_scope_their_ops:
            raise ArgumentTypeError("_LSTM() missing 1 required positional argument: 'scope'")
        scope = None
    if cell_kwargs and not era.gru_linear_before_reset:
        raise ArgumentTypeError(
            "_LSTM() got an unexpected keyword argument %r (cell keywords arrived in era E7)"
            % sorted(cell_kwargs)[0]
        )
    dims = list(dim_out) if isinstance(dim_out, (list, tuple)) else [dim_out]
    if not dims:  # Caffe2: IndexError on cells[0]
        raise ArgumentError("dim_out: an empty list has no layers")
    num_layers = len(dims)
    if return_params and num_layers > 1:  # Caffe2: MultiRNNCell has no get_input_params
        raise ArgumentError("return_params is supported for a single layer only")

    cells = [
        cell_class(
            input_size=dim_in if i == 0 else dims[i - 1],
            hidden_size=dims[i],
            forget_bias=forget_bias,
            memory_optimization=memory_optimization,
            name=_layer_name(era, scope, i, num_layers),
            forward_only=forward_only,
            drop_states=drop_states,
            **cell_kwargs,
        )
        for i in range(num_layers)
    ]
    # 2 states per LSTM layer (hidden, cell), 1 per GRU layer: each state
    # gives two outputs (all steps, last step).
    per_layer = len(cells[0].get_state_names())
    outputs_per_layer = 2 * per_layer
    cell = (
        MultiRNNCell(cells, name=scope, forward_only=forward_only) if num_layers > 1 else cells[0]
    )
    if static_rnn_unroll_size is not None:
        cell = UnrolledCell(cell, static_rnn_unroll_size)

    if initial_states is None and not eras.current().late_2017_cells:
        # E5: zero-filled states added to params by hand; E6 asks the cells'
        # initializers (apply_over_sequence does, given None).
        initial_states = _zero_initial_states(model, scope, dims)

    # outputs_with_grads index the final layer's block of outputs
    first_of_last = outputs_per_layer * (num_layers - 1)
    outputs_with_grads = [first_of_last + i for i in outputs_with_grads]
    _, result = cell.apply_over_sequence(
        model=model,
        inputs=input_blob,
        seq_lengths=seq_lengths,
        initial_states=initial_states,
        outputs_with_grads=outputs_with_grads,
    )
    if return_last_layer_only:
        result = result[first_of_last:]
    if return_params:
        layer = cells[0]
        result = list(result) + [
            {"input": layer.get_input_params(), "recurrent": layer.get_recurrent_params()}
        ]
    return tuple(result)


#: ``LSTM(model, input_blob, seq_lengths, initial_states, dim_in, dim_out, scope, ...)``
LSTM = functools.partial(_LSTM, LSTMCell)
#: The same with multiplicative-integration cells.
MILSTM = functools.partial(_LSTM, MILSTMCell)
#: The same with layer-normalised gates (era E6).
LayerNormLSTM = functools.partial(_LSTM, LayerNormLSTMCell)
#: Layer-normalised MI gates (era E7).
LayerNormMILSTM = functools.partial(_LSTM, LayerNormMILSTMCell)
#: Elman RNN layers (era E7; give ``activation='tanh'`` or ``'relu'``).
BasicRNN = functools.partial(_LSTM, BasicRNNCell)


def LSTMWithAttention(
    model,
    decoder_inputs,
    decoder_input_lengths,
    initial_decoder_hidden_state,
    initial_decoder_cell_state,
    initial_attention_weighted_encoder_context,
    encoder_output_dim,
    encoder_outputs,
    decoder_input_dim,
    decoder_state_dim,
    scope,
    attention_type=AttentionType.Regular,
    outputs_with_grads=(0, 4),
    weighted_encoder_outputs=None,
    lstm_memory_optimization=False,
    attention_memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
):
    """An LSTM decoder (T × N × decoder_input_dim) attending over
    ``encoder_outputs`` (S × N × E) with a :class:`LSTMWithAttentionCell`
    (the 2017-06 signature; :func:`LSTMWithAttentionLengths` adds ``encoder_lengths``).

    Returns the six RecurrentNetwork outputs ``(hidden_all, hidden_last,
    cell_all, cell_last, context_all, context_last)``; the external gradient
    enters through ``outputs_with_grads`` (default: all hidden states and all
    contexts). ``lstm_memory_optimization`` / ``attention_memory_optimization``
    recompute ``gates_t`` / the attention sum in the backward step.
    """
    return _lstm_with_attention(**locals())


def LSTMWithAttentionLengths(
    model,
    decoder_inputs,
    decoder_input_lengths,
    initial_decoder_hidden_state,
    initial_decoder_cell_state,
    initial_attention_weighted_encoder_context,
    encoder_output_dim,
    encoder_outputs,
    encoder_lengths,
    decoder_input_dim,
    decoder_state_dim,
    scope,
    attention_type=AttentionType.Regular,
    outputs_with_grads=(0, 4),
    weighted_encoder_outputs=None,
    lstm_memory_optimization=False,
    attention_memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
):
    """``rnn_cell.LSTMWithAttention`` of late 2017 (era policy
    ``late_2017_cells``, E6): ``encoder_lengths`` (int32 N, or None) after
    ``encoder_outputs``, attention types Dot and SoftCoverage (which adds the
    coverage state: eight outputs)."""
    return _lstm_with_attention(**locals())


def _lstm_with_attention(
    model,
    decoder_inputs,
    decoder_input_lengths,
    initial_decoder_hidden_state,
    initial_decoder_cell_state,
    initial_attention_weighted_encoder_context,
    encoder_output_dim,
    encoder_outputs,
    decoder_input_dim,
    decoder_state_dim,
    scope,
    attention_type,
    outputs_with_grads,
    weighted_encoder_outputs,
    lstm_memory_optimization,
    attention_memory_optimization,
    forget_bias,
    forward_only,
    encoder_lengths=None,
):
    attention_type_name(attention_type)
    cell = LSTMWithAttentionCell(
        encoder_output_dim=encoder_output_dim,
        encoder_outputs=encoder_outputs,
        decoder_input_dim=decoder_input_dim,
        decoder_state_dim=decoder_state_dim,
        name=scope,
        attention_type=attention_type,
        weighted_encoder_outputs=weighted_encoder_outputs,
        forget_bias=forget_bias,
        lstm_memory_optimization=lstm_memory_optimization,
        attention_memory_optimization=attention_memory_optimization,
        forward_only=forward_only,
        encoder_lengths=encoder_lengths,
    )
    initial_states = [
        initial_decoder_hidden_state,
        initial_decoder_cell_state,
        initial_attention_weighted_encoder_context,
    ]
    if attention_type_name(attention_type) == "SoftCoverage":
        initial_states.append(cell.build_initial_coverage(model))
    _, result = cell.apply_over_sequence(
        model=model,
        inputs=decoder_inputs,
        seq_lengths=decoder_input_lengths,
        initial_states=initial_states,
        outputs_with_grads=outputs_with_grads,
    )
    return result


def _layered_LSTM(
    model,
    input_blob,
    seq_lengths,
    initial_states,
    dim_in,
    dim_out,
    scope,
    outputs_with_grads=(0,),
    return_params=False,
    memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
    drop_states=False,
    create_lstm=None,
):
    """Stacked layers as *separate* RecurrentNetwork ops (one per layer).

    Layer i + 1 (scope ``<scope>_layer_<i+1>``) runs over layer i's hidden
    states and starts from its final states. An int ``dim_out`` (or a list of
    one) is a single ``create_lstm`` call. Returns the last layer's outputs.
    """
    params = dict(
        model=model,
        input_blob=input_blob,
        seq_lengths=seq_lengths,
        initial_states=initial_states,
        dim_in=dim_in,
        dim_out=dim_out,
        scope=scope,
        outputs_with_grads=outputs_with_grads,
        return_params=return_params,
        memory_optimization=memory_optimization,
        forget_bias=forget_bias,
        forward_only=forward_only,
        drop_states=drop_states,
    )
    if not isinstance(dim_out, list):
        return create_lstm(**params)
    if not dim_out:
        raise ArgumentError("dim_out: an empty list has no layers")
    if len(dim_out) == 1:
        params["dim_out"] = dim_out[0]
        return create_lstm(**params)
    if return_params:
        raise ArgumentError("return_params is not supported for layering")
    for i, output_dim in enumerate(dim_out):
        params["dim_out"] = output_dim
        output, last_output, all_states, last_state = create_lstm(**params)
        params.update(
            input_blob=output,
            dim_in=output_dim,
            initial_states=(last_output, last_state),
            scope=scope + f"_layer_{i + 1}",
        )
    return output, last_output, all_states, last_state


layered_LSTM = functools.partial(_layered_LSTM, create_lstm=LSTM)


def cudnn_LSTM(model, input_blob, initial_states, dim_in, dim_out, scope, **kwargs):
    """Caffe2's cuDNN LSTM (the GPU ``Recurrent`` op): not available here.

    caffe2rnn runs on the CPU only; use :func:`LSTM` (same gate layout, and
    :func:`InitFromLSTMParams` sets its weights from per-gate values).
    """
    raise NotImplementedError(
        "cudnn_LSTM needs Caffe2's CUDA 'Recurrent' op; caffe2rnn is CPU-only: use rnn_cell.LSTM"
    )
