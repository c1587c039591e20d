"""``caffe2.python.recurrent``: ``recurrent_net`` and the cells built on it.

:func:`recurrent_net` is the newest 2017 text (Caffe2 0cdd09da6, 2017-06-29 …
08-17) with the one-line fix of 96e718751 (bug B9: ``forward_only=True`` used
to raise ``UnboundLocalError``). The cells — :func:`LSTM`, :func:`MILSTM`,
:func:`LSTMWithAttention` — and the parameter helpers mirror the 2017-04
module (Caffe2 89ea32b11), so their step nets, blob names and outputs are
the ones Caffe2 built (``<scope>/hidden_t_all``, ``<scope>/cell_t_last``...).
The faithful historical versions of ``recurrent_net``, bugs included, are in
:mod:`caffe2rnn.history`.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import numpy as np

from . import core, eras, workspace
from .attention import (  # noqa: F401 - Caffe2 code imported these from here
    AttentionType,
    apply_recurrent_attention,
    apply_regular_attention,
    attention_type_name,
    v_vector_attention,
)
from .cnn import CNNModelHelper
from .errors import ArgumentError
from .recurrent_stages import (
    accumulate_linked_gradients,
    build_backward_cell,
    check_scoping,
    find_references,
    in_call_order,
    op_arguments,
    plan_links,
    scoper,
)

#: The arguments :func:`recurrent_net` passes to ``net.RecurrentNetwork``, in
#: its call's order — which becomes the OperatorDef's (0cdd09da6: the
#: backward-only ones last; see :func:`caffe2rnn.recurrent_stages.in_call_order`).
CALL_ORDER = (
    "alias_src",
    "alias_dst",
    "alias_offset",
    "recurrent_states",
    "initial_recurrent_state_ids",
    "link_internal",
    "link_external",
    "link_offset",
    "step_net",
    "timestep",
    "param",
    "backward_link_internal",
    "backward_link_external",
    "backward_link_offset",
    "backward_step_net",
    "outputs_with_grads",
    "recompute_blobs_on_backward",
    "param_grads",
)

#: era name → the ``recurrent_net`` Caffe2 shipped in that era, where it is
#: not this module's text; filled by :func:`register_era_text`.
_ERA_TEXTS: dict = {}


def register_era_text(function, era_names, forward_only=True):
    """Make ``function`` (a ``recurrent_net`` of the same signature) what
    :func:`recurrent_net` runs while one of ``era_names`` is in force.

    ``forward_only=False``: that text had no ``forward_only`` argument (before
    2017-05); a forward-only op is then built with this module's text.
    """
    for name in era_names:
        _ERA_TEXTS[eras.get(name).name] = (function, forward_only)


def recurrent_net(
    net: "core.Net",
    cell_net: "core.Net",
    inputs: Sequence[tuple[str, Any]],
    initial_cell_inputs: Sequence[tuple[str, Any]],
    links: Mapping[str, str],
    timestep: Optional[str] = None,
    scope: Optional[str] = None,
    outputs_with_grads: Sequence[int] = (0,),
    recompute_blobs_on_backward: Optional[Sequence[Any]] = None,
    forward_only: bool = False,
) -> tuple[Any, ...]:
    """Add a ``RecurrentNetwork`` op to ``net`` that runs ``cell_net`` over time.

    Args:
        net: the main net the operator is added to.
        cell_net: one timestep, executed T times (in per-step workspaces).
        inputs: ``[(cell_input_name, sequence_blob)]`` — one T × N × D… sequence;
            step t's cell sees row t as ``cell_input_name``.
        initial_cell_inputs: ``[(cell_input_name, initial_blob)]`` for the
            recurrent inputs at t = 0 (initial blob 1-D: repeated over the batch;
            2-D N × D; or 3-D k × N × D with k initial rows).
        links: ``{cell_input_name: cell_output_name}``: the output of step t is
            that input at step t + 1.
        timestep: name of the int32 timestep blob (default ``"timestep"``).
        scope: prefix of internal blob names (default: ``net.NextName('recurrent')``).
        outputs_with_grads: indices of the op outputs that receive an external
            gradient in the backward pass.
        recompute_blobs_on_backward: forward blobs not kept per timestep but
            recomputed in the backward step (saves memory; same gradients).
        forward_only: build no backward step net; the op then cycles a couple of
            step workspaces instead of keeping T.

    Returns the op's outputs without its last one (the step workspaces):
    ``(out0_all, out0_last, out1_all, out1_last, ...)`` in
    ``initial_cell_inputs`` order.

    This is Caffe2's ``recurrent_net`` of 0cdd09da6 (era E5, the default). An
    era whose Caffe2 shipped another text has it registered here
    (:func:`register_era_text`; :mod:`caffe2rnn.history` registers the
    042e8ede4 text for E6: step nets passed as NetDef, ``enable_rnn_executor=1``),
    so code built under that era — ``rnn_cell``, or Caffe2 code importing
    ``caffe2.python.recurrent`` through :mod:`caffe2rnn.compat` — gets the op
    that era built. The era is read at each call.
    """
    era_text, had_forward_only = _ERA_TEXTS.get(eras.current().name, (None, True))
    if era_text is not None and (had_forward_only or not forward_only):
        extra = {"forward_only": forward_only} if had_forward_only else {}
        return era_text(
            net,
            cell_net,
            inputs,
            initial_cell_inputs,
            links,
            timestep=timestep,
            scope=scope,
            outputs_with_grads=outputs_with_grads,
            recompute_blobs_on_backward=recompute_blobs_on_backward,
            **extra,
        )
    assert len(inputs) == 1, "Only one input blob is supported so far"
    check_scoping(cell_net)
    op_name = net.NextName("recurrent")
    s = scoper(op_name, scope)
    references = find_references(cell_net.Proto(), inputs, initial_cell_inputs, timestep)
    backward = None
    if not forward_only:
        backward = build_backward_cell(cell_net, recompute_blobs_on_backward)

    all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
    # 'rnn' selected Caffe2's single-threaded RecurrentNetworkExecutor while
    # the op was built; the type is restored below (unknown outside RNNs).
    cell_net.Proto().type = "rnn"

    plan = plan_links(inputs, initial_cell_inputs, links, s, backward)
    if backward is not None:
        backward.net.Proto().external_input.extend(cell_net.Proto().external_input)
        backward.net.Proto().external_input.extend(cell_net.Proto().external_output)
        accumulate_linked_gradients(backward.net)

    arguments = op_arguments(
        plan,
        all_inputs,
        initial_cell_inputs,
        timestep,
        cell_net,
        backward,
        references,
        outputs_with_grads,
    )
    results = net.RecurrentNetwork(
        all_inputs, plan.outputs + [s("step_workspaces")], **in_call_order(arguments, CALL_ORDER)
    )
    cell_net.Proto().type = "simple"
    # The last output holds the step workspaces, needed only by the gradient.
    return results[:-1]


def _lstm_unit_args(forget_bias, drop_states):
    # Only non-default values become arguments, so default LSTMs build the
    # exact ops of the 2017-04 module (whose LSTMUnit had no arguments).
    args = {}
    if forget_bias:
        args["forget_bias"] = float(forget_bias)
    if drop_states:
        args["drop_states"] = True
    return args


def _run_lstm_cell(
    model,
    step_model,
    input_t,
    input_blob,
    timestep,
    hidden_t_prev,
    cell_t_prev,
    hidden_t,
    cell_t,
    initial_states,
    scope,
    outputs_with_grads,
    recompute,
    forward_only,
):
    hidden_input_blob, cell_input_blob = initial_states
    return recurrent_net(
        net=model.net,
        cell_net=step_model.net,
        inputs=[(input_t, input_blob)],
        initial_cell_inputs=[
            (hidden_t_prev, hidden_input_blob),
            (cell_t_prev, cell_input_blob),
        ],
        links={hidden_t_prev: hidden_t, cell_t_prev: cell_t},
        timestep=timestep,
        scope=scope,
        outputs_with_grads=outputs_with_grads,
        recompute_blobs_on_backward=recompute,
        forward_only=forward_only,
    )


def LSTM(
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
):
    """A standard LSTM layer over ``input_blob`` (T × N × dim_in).

    The input projection ``i2h`` (one FC over all timesteps, outside the
    loop) feeds the step net ``gates_t = FC(hidden_t_prev) + input_t;
    hidden_t, cell_t = LSTMUnit(...)``. ``LSTMUnit`` holds no weights: gates
    come from the FCs, in the order input, forget, output, cell candidate.
    ``seq_lengths`` (int32, N) masks finished sequences.

    Returns ``(hidden_all, hidden_last, cell_all, cell_last)`` (plus a dict of
    the parameter blobs when ``return_params``). ``memory_optimization``
    recomputes ``gates_t`` in the backward pass instead of storing it per step.
    """
    s = scoper(scope, None)
    input_blob = model.FC(input_blob, s("i2h"), dim_in=dim_in, dim_out=4 * dim_out, axis=2)

    step_model = CNNModelHelper(name="lstm_cell", param_model=model)
    input_t, timestep, cell_t_prev, hidden_t_prev = step_model.net.AddScopedExternalInputs(
        "input_t", "timestep", "cell_t_prev", "hidden_t_prev"
    )
    gates_t = step_model.FC(
        hidden_t_prev, s("gates_t"), dim_in=dim_out, dim_out=4 * dim_out, axis=2
    )
    step_model.net.Sum([gates_t, input_t], gates_t)
    hidden_t, cell_t = step_model.net.LSTMUnit(
        [hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep],
        [s("hidden_t"), s("cell_t")],
        **_lstm_unit_args(forget_bias, drop_states),
    )
    step_model.net.AddExternalOutputs(cell_t, hidden_t)

    outputs = _run_lstm_cell(
        model,
        step_model,
        input_t,
        input_blob,
        timestep,
        hidden_t_prev,
        cell_t_prev,
        hidden_t,
        cell_t,
        initial_states,
        scope,
        outputs_with_grads,
        [gates_t] if memory_optimization else None,
        forward_only,
    )
    output, last_output, all_states, last_state = outputs
    if return_params:
        params = {
            "input": {"weights": input_blob + "_w", "biases": input_blob + "_b"},
            "recurrent": {"weights": gates_t + "_w", "biases": gates_t + "_b"},
        }
        return output, last_output, all_states, last_state, params
    return output, last_output, all_states, last_state


def GetLSTMParamNames():
    """Per-gate parameter names, in Caffe2's gate order i, f, o, g (``cell``)."""
    weight_params = ["input_gate_w", "forget_gate_w", "output_gate_w", "cell_w"]
    bias_params = ["input_gate_b", "forget_gate_b", "output_gate_b", "cell_b"]
    return {"weights": weight_params, "biases": bias_params}


def InitFromLSTMParams(lstm_pblobs, param_values):
    """Set an LSTM's weights from per-gate values.

    ``lstm_pblobs`` is the dict :func:`LSTM` returns with ``return_params``
    (``{'input'|'recurrent': {'weights': blob, 'biases': blob}}``);
    ``param_values[input_type][name]`` holds one gate's block for each name of
    :func:`GetLSTMParamNames`. The blocks are stacked in gate order i, f, o, g
    into the existing (4H × in) weight and (4H,) bias blobs.
    """
    weight_params = GetLSTMParamNames()["weights"]
    bias_params = GetLSTMParamNames()["biases"]
    for input_type in param_values:
        values = param_values[input_type]
        wmat = np.concatenate([np.asarray(values[w]).ravel() for w in weight_params])
        bm = np.concatenate([np.asarray(values[b]).ravel() for b in bias_params])
        weights_blob = lstm_pblobs[input_type]["weights"]
        bias_blob = lstm_pblobs[input_type]["biases"]
        cur_weight = workspace.FetchBlob(weights_blob)
        cur_biases = workspace.FetchBlob(bias_blob)
        workspace.FeedBlob(weights_blob, wmat.reshape(cur_weight.shape).astype(np.float32))
        workspace.FeedBlob(bias_blob, bm.reshape(cur_biases.shape).astype(np.float32))


def MILSTM(
    model,
    input_blob,
    seq_lengths,
    initial_states,
    dim_in,
    dim_out,
    scope,
    outputs_with_grads=(0,),
    memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
    drop_states=False,
):
    """Multiplicative-integration LSTM (arXiv:1606.06630).

    The gate pre-activation ``Wx + Uh + b`` becomes
    ``α ⊙ Wx ⊙ Uh + β1 ⊙ Uh + β2 ⊙ Wx + b`` with learned per-unit vectors
    α, β1, β2 (initialised to 1) and b (0). In Caffe2's 2017-04 version
    those four vectors are created in ``param_init_net`` but not added to
    the model's params, so they reach the op as references with gradients.
    """
    s = scoper(scope, None)
    input_blob = model.FC(input_blob, s("i2h"), dim_in=dim_in, dim_out=4 * dim_out, axis=2)

    step_model = CNNModelHelper(name="milstm_cell", param_model=model)
    input_t, timestep, cell_t_prev, hidden_t_prev = step_model.net.AddScopedExternalInputs(
        "input_t", "timestep", "cell_t_prev", "hidden_t_prev"
    )
    # hU^T: 1 × N × 4H
    prev_t = step_model.FC(hidden_t_prev, s("prev_t"), dim_in=dim_out, dim_out=4 * dim_out, axis=2)
    alpha, beta1, beta2, b = [
        step_model.param_init_net.ConstantFill([], [s(name)], shape=[4 * dim_out], value=value)
        for name, value in (("alpha", 1.0), ("beta1", 1.0), ("beta2", 1.0), ("b", 0.0))
    ]

    def flat(blob, name):
        # N × 4H, so the per-unit vectors broadcast along the last axis
        return step_model.net.Reshape(
            blob, [s(name + "_rs"), s(name + "_old_shape")], shape=[-1, 4 * dim_out]
        )[0]

    alpha_tdash = step_model.net.Mul([prev_t, input_t], s("alpha_tdash"))
    alpha_t = step_model.net.Mul(
        [flat(alpha_tdash, "alpha_tdash"), alpha], s("alpha_t"), broadcast=1, use_grad_hack=1
    )
    beta1_t = step_model.net.Mul(
        [flat(prev_t, "prev_t"), beta1], s("beta1_t"), broadcast=1, use_grad_hack=1
    )
    beta2_t = step_model.net.Mul(
        [flat(input_t, "input_t"), beta2], s("beta2_t"), broadcast=1, use_grad_hack=1
    )
    gates_tdash = step_model.net.Sum([alpha_t, beta1_t, beta2_t], s("gates_tdash"))
    gates_t = step_model.net.Add([gates_tdash, b], s("gates_t"), broadcast=1, use_grad_hack=1)
    # back to 1 × N × 4H for LSTMUnit
    gates_t_rs, _ = step_model.net.Reshape(
        gates_t, [s("gates_t_rs"), s("gates_t_old_shape")], shape=[1, -1, 4 * dim_out]
    )
    hidden_t, cell_t = step_model.net.LSTMUnit(
        [hidden_t_prev, cell_t_prev, gates_t_rs, seq_lengths, timestep],
        [s("hidden_t"), s("cell_t")],
        **_lstm_unit_args(forget_bias, drop_states),
    )
    step_model.net.AddExternalOutputs(cell_t, hidden_t)

    return _run_lstm_cell(
        model,
        step_model,
        input_t,
        input_blob,
        timestep,
        hidden_t_prev,
        cell_t_prev,
        hidden_t,
        cell_t,
        initial_states,
        scope,
        outputs_with_grads,
        [gates_t] if memory_optimization else None,
        forward_only,
    )


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
    forward_only=False,
    lstm_memory_optimization=False,
    attention_memory_optimization=False,
):
    """An LSTM decoder with attention over ``encoder_outputs`` (S × N × E).

    Three recurrent states: hidden, cell, and the attention context
    ``c_{t-1}``, which is concatenated to ``h_{t-1}`` as the gates' FC input
    (arXiv:1409.0473, with the context computed after the new hidden state as
    in arXiv:1508.04025). Returns the six outputs
    ``(hidden_all, hidden_last, cell_all, cell_last, context_all,
    context_last)``; by default the external gradient enters through outputs 0
    and 4 (all hidden states and all contexts).

    ``lstm_memory_optimization`` recomputes ``gates_t`` and
    ``attention_memory_optimization`` the S × N × E attention sum in the
    backward step instead of keeping them for every timestep (Caffe2
    8be1311d9, 2017-05-05); the gradients are the same.
    """
    attention_type_name(attention_type)  # validate before building anything
    s = scoper(scope, None)
    decoder_inputs = model.FC(
        decoder_inputs, s("i2h"), dim_in=decoder_input_dim, dim_out=4 * decoder_state_dim, axis=2
    )
    # N × E × S, for the context BatchMatMul
    encoder_outputs_transposed = model.Transpose(
        encoder_outputs, s("encoder_outputs_transposed"), axes=[1, 2, 0]
    )
    if weighted_encoder_outputs is None:
        weighted_encoder_outputs = model.FC(
            encoder_outputs,
            s("weighted_encoder_outputs"),
            dim_in=encoder_output_dim,
            dim_out=encoder_output_dim,
            axis=2,
        )

    step_model = CNNModelHelper(name="lstm_with_attention_cell", param_model=model)
    (input_t, timestep, cell_t_prev, hidden_t_prev, attention_weighted_encoder_context_t_prev) = (
        step_model.net.AddScopedExternalInputs(
            "input_t",
            "timestep",
            "cell_t_prev",
            "hidden_t_prev",
            "attention_weighted_encoder_context_t_prev",
        )
    )
    step_model.net.AddExternalInputs(encoder_outputs_transposed, weighted_encoder_outputs)
    gates_concatenated_input_t, _ = step_model.net.Concat(
        [hidden_t_prev, attention_weighted_encoder_context_t_prev],
        [s("gates_concatenated_input_t"), s("_gates_concatenated_input_t_concat_dims")],
        axis=2,
    )
    gates_t = step_model.FC(
        gates_concatenated_input_t,
        s("gates_t"),
        dim_in=decoder_state_dim + encoder_output_dim,
        dim_out=4 * decoder_state_dim,
        axis=2,
    )
    step_model.net.Sum([gates_t, input_t], gates_t)
    # 'hidden_t_intermediate' is unscoped in Caffe2 too; the Copy below gives
    # the linked output its own blob (a 2017-04 workaround for bug B7).
    hidden_t_intermediate, cell_t = step_model.net.LSTMUnit(
        [hidden_t_prev, cell_t_prev, gates_t, decoder_input_lengths, timestep],
        ["hidden_t_intermediate", s("cell_t")],
    )
    attention = dict(
        model=step_model,
        encoder_output_dim=encoder_output_dim,
        encoder_outputs_transposed=encoder_outputs_transposed,
        weighted_encoder_outputs=weighted_encoder_outputs,
        decoder_hidden_state_t=hidden_t_intermediate,
        decoder_hidden_state_dim=decoder_state_dim,
        scope=scope,
    )
    context_t, _, attention_blobs = v_vector_attention(
        attention_type,
        attention_weighted_encoder_context_t_prev=attention_weighted_encoder_context_t_prev,
        **attention,
    )
    recompute = []
    if lstm_memory_optimization:
        recompute.append(gates_t)
    if attention_memory_optimization:
        recompute.extend(attention_blobs)
    hidden_t = step_model.Copy(hidden_t_intermediate, s("hidden_t"))
    step_model.net.AddExternalOutputs(cell_t, hidden_t, context_t)

    return recurrent_net(
        net=model.net,
        cell_net=step_model.net,
        inputs=[(input_t, decoder_inputs)],
        initial_cell_inputs=[
            (hidden_t_prev, initial_decoder_hidden_state),
            (cell_t_prev, initial_decoder_cell_state),
            (attention_weighted_encoder_context_t_prev, initial_attention_weighted_encoder_context),
        ],
        links={
            hidden_t_prev: hidden_t,
            cell_t_prev: cell_t,
            attention_weighted_encoder_context_t_prev: context_t,
        },
        timestep=timestep,
        scope=scope,
        outputs_with_grads=outputs_with_grads,
        recompute_blobs_on_backward=recompute or None,
        forward_only=forward_only,
    )


def set_rnn_executor_config(rnn_op, num_threads=None, max_cuda_streams=None):
    """Add Caffe2's RNN-executor settings to a ``RecurrentNetwork`` (or its
    gradient) OperatorDef: ``rnn_executor.num_threads`` and
    ``rnn_executor.max_cuda_streams`` (Caffe2 2017-08, in ``recurrent.py`` at
    042e8ede4). ``num_threads`` > 1 runs the executor's plan on that many
    lanes, with the same numbers as one thread (docs/concepts/rnn-executor.md);
    ``max_cuda_streams`` is recorded (there is no GPU here).
    """
    if rnn_op.type not in ("RecurrentNetwork", "RecurrentNetworkGradient"):
        raise ArgumentError(
            "set_rnn_executor_config: expected a RecurrentNetwork or "
            "RecurrentNetworkGradient op, got %r" % rnn_op.type
        )
    for name, value in (("num_threads", num_threads), ("max_cuda_streams", max_cuda_streams)):
        if value is not None:
            rnn_op.arg.add(name="rnn_executor." + name, i=int(value))


def set_batch_param_gradients(rnn_op, on=True):
    """Have the gradient of a ``RecurrentNetwork`` OperatorDef form the FC
    parameter gradients of its cell over all timesteps at once (op argument
    ``caffe2rnn_batch_param_gradients``; call before ``AddGradientOperators``,
    which copies the forward op's arguments onto the gradient op).

    A caffe2rnn option, not Caffe2's step-net semantics: per step the backward
    cell computes only dX, and after the loop each FC's dW and db are one GEMM
    and one GEMV over the T·N rows of its X and dY tensors, as cuDNN's RNN did.
    They equal the step-by-step sums up to float rounding; every other gradient
    is bit-identical. An FC whose X or dY is not a plain link of the step net
    keeps the step-by-step sum (:class:`caffe2rnn.operators.rnn.param_gradients.
    BatchedOverTime`; docs/concepts/rnn-executor.md).
    """
    if rnn_op.type not in ("RecurrentNetwork", "RecurrentNetworkGradient"):
        raise ArgumentError(
            "set_batch_param_gradients: expected a RecurrentNetwork or "
            "RecurrentNetworkGradient op, got %r" % rnn_op.type
        )
    for arg in rnn_op.arg:
        if arg.name == "caffe2rnn_batch_param_gradients":
            arg.i = int(bool(on))
            return
    rnn_op.arg.add(name="caffe2rnn_batch_param_gradients", i=int(bool(on)))


def retrieve_step_blobs(net, prefix="rnn"):
    """Copy every step workspace's blobs into the current workspace (debugging).

    For the i-th ``RecurrentNetwork`` op of ``net`` (a Net or NetDef, from 1),
    runs ``RecurrentNetworkBlobFetcher`` on its step-workspaces blob: each blob
    ``b`` of step t becomes ``<prefix>_<b><t>``, and the list of new names is
    stored in blob ``<prefix>_<i>``. Returns all the names (Caffe2 c0ef34a60,
    2017-07): ``str``, or ``bytes`` under era E6 as Caffe2 042e8ede4 gave them
    to Python 3. The op must have run, so its step workspaces exist.
    """
    netdef = net if isinstance(net, core.caffe2_pb2.NetDef) else net.Proto()
    count = 1
    output_list = []
    for op in netdef.op:
        if op.type == "RecurrentNetwork":
            blob_name = prefix + "_" + str(count)
            count += 1
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "RecurrentNetworkBlobFetcher", [op.output[-1]], [blob_name], prefix=prefix
                )
            )
            # str names; bytes under era E6, as Caffe2's under Python 3
            output_list += workspace.FetchBlob(blob_name).tolist()
    return output_list
