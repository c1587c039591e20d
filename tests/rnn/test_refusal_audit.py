"""Every refusal of the recurrent code, with the reason Caffe2 gives it.

The rule (issue 24): caffe2rnn refuses input only where Caffe2 refused it —
a ``CAFFE_ENFORCE`` of its C++, or its Python raising (an ``assert``, an
exception) — or where Caffe2 would have crashed, read or written out of
bounds, or read memory nothing wrote (a result that was not defined).
Everything else Caffe2 accepted runs, with Caffe2's result.

:data:`REFUSALS` lists each ``raise`` (and each ``fail``/``check`` call) of
the modules below with its reason, the Caffe2 source it follows (file and
commit; E4 = 23bd132c1, E5 = 0cdd09da6, E6 = 042e8ede4, E7 = 929c33cee) and a trigger that
must raise the error named. :func:`test_every_refusal_is_listed` counts the
sites in the source, so a new check cannot be added without a row here.
Rows with reason :data:`INTERNAL` are not refusals of input (abstract
methods, a re-raise that adds the timestep, preconditions of caffe2rnn's own
helpers) and have no trigger.
"""

import ast
import os
from dataclasses import dataclass

import numpy as np
import pytest
from rnn_test_builders import op, run_forward
from test_recurrent_network_arguments import feeds, gradient_op, mul_cell_op, set_arg

from caffe2rnn import brew, core, eras, errors, gru_cell, rnn_cell, workspace
from caffe2rnn.attention import AttentionType, attention_type_name
from caffe2rnn.cells import torch_layout
from caffe2rnn.model_helper import ModelHelper
from caffe2rnn.modeling import initializers, parameter_info, parameter_sharing
from caffe2rnn.operators.rnn import prepared_backward_step_net, read_recurrent_arguments
from caffe2rnn.recurrent import set_batch_param_gradients, set_rnn_executor_config
from caffe2rnn.runtime import Workspace
from caffe2rnn.runtime.arguments import ArgumentHelper
from caffe2rnn.utils import MakeArgument

ENFORCE = "Caffe2 refused: CAFFE_ENFORCE"
RAISED = "Caffe2 refused: its Python raised"
CRASH = "Caffe2 would crash or index out of bounds"
UNWRITTEN = "Caffe2 would read memory nothing wrote"
OWN = "an argument or function Caffe2 did not have"
INTERNAL = "not a refusal of input"

OP_H = "caffe2/operators/recurrent_network_op.h (042e8ede4)"
OP_CC = "caffe2/operators/recurrent_network_op.cc (042e8ede4)"
T, N, D = 3, 2, 3


@dataclass(frozen=True)
class Refusal:
    site: str  # the module, relative to caffe2rnn/
    what: str
    reason: str
    caffe2: str  # where Caffe2 refused (file, function, commit), or why it would crash
    error: type = None
    match: str = None
    trigger: object = None  # a function that must raise ``error`` matching ``match``


# -- triggers --------------------------------------------------------------------------


def forward(o, f=None):
    run_forward(o, f or feeds())


def backward(change):
    """Run the mul cell forward, then its gradient op after ``change(g)``."""
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    g = gradient_op(o)
    change(g, ws)
    ws.run_operator_once(g)


def shared_timestep_then_gradient():
    """A timestep named like a blob of the op's workspace: the forward runs
    (it writes t there, as Caffe2's did); its gradient is refused."""
    o = set_arg(mul_cell_op(), "timestep", "outer_t")
    ws = Workspace(name="shared_timestep")
    ws.feed("outer_t", np.zeros(1, np.int32))
    run_forward(o, feeds(), ws)
    assert ws.fetch("outer_t")[0] == T - 1
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    ws.run_operator_once(gradient_op(o))


def with_arg(name, value, base=mul_cell_op):
    def make():
        return set_arg(base(), name, value)

    return make


def drop_arg(o, name):
    del o.arg[[a.name for a in o.arg].index(name)]
    return o


def at_era(era, function):
    def run():
        with eras.use(era):
            function()

    return run


def lstm(**kwargs):
    model = ModelHelper(name="audit")
    args = dict(dim_in=2, dim_out=3, scope="a")
    args.update(kwargs)
    initial = args.pop("initial_states", ("h0", "c0"))
    return rnn_cell.LSTM(model, "x", "seq", initial, **args)


def cell(name="c", **kwargs):
    return rnn_cell.LSTMCell(2, 3, 0.0, False, name=name, **kwargs)


def apply_cell(c, states=("h0", "c0")):
    c.apply_over_sequence(ModelHelper(name="audit"), "x", "seq", None if states is None else states)


def link_op(**args):
    o = op("rnn_internal_apply_link", ["timestep", "states"], ["view", "states"], **args)

    def run():
        ws = Workspace(name="audit")
        ws.feed("timestep", np.array([0], np.int32))
        ws.feed("states", np.zeros((2, 1, 1)))
        ws.run_operator_once(o)

    return run


def run_link_with_timestep(value):
    def run():
        ws = Workspace(name="audit")
        ws.feed("timestep", value)
        ws.feed("states", np.zeros((2, 1, 1)))
        ws.run_operator_once(
            op(
                "rnn_internal_apply_link",
                ["timestep", "states"],
                ["v", "states"],
                offset=0,
                window=1,
            )
        )

    return run


def accumulate_without_offset():
    ws = Workspace(name="audit")
    for name, value in (("t", np.array([0], np.int32)), ("og", np.ones(2)), ("g", np.ones(2))):
        ws.feed(name, value)
    ws.run_operator_once(op("rnn_internal_accumulate_gradient_input", ["t", "og", "g"], ["g"]))


def last_gradient_of_shape(shape):
    def change(g, ws):
        ws.feed("hidden_last_grad", np.ones(shape))

    return lambda: backward(change)


def fetcher_on(value):
    def run():
        ws = Workspace(name="audit")
        ws.feed("not_scratch", value)
        ws.run_operator_once(op("RecurrentNetworkBlobFetcher", ["not_scratch"], ["names"]))

    return run


def fetcher_on_a_non_tensor_step_blob():
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    step = ws.blob("step_workspaces").value.step(0)
    step.create_blob("queue_like").value = object()
    ws.run_operator_once(op("RecurrentNetworkBlobFetcher", ["step_workspaces"], ["names"]))


def forward_with_h0(h0):
    return lambda: forward(mul_cell_op(), {"input": feeds()["input"], "h0": h0})


def gradient_maker(name, value):
    return lambda: gradient_op(set_arg(mul_cell_op(), name, value))


def batched_param_gradient_mismatch():
    from caffe2rnn.operators.rnn.links import Link
    from caffe2rnn.operators.rnn.param_gradients import BatchedFC, BatchedOverTime

    class Param:
        def __init__(self, name):
            self.param, self.grad = name, name + "_grad"

    batched = BatchedOverTime([])
    batched.batched = [
        BatchedFC(Param("w"), Param("b"), Link("x_t", "x", 0), Link("dy_t", "dy", 0), 1)
    ]
    ws = Workspace(name="audit")
    for name, value in (
        ("w", np.ones((2, 3))),
        ("x", np.ones((3, 1, 5))),
        ("dy", np.ones((3, 1, 2))),
    ):
        ws.feed(name, value)
    ws.feed("w_grad", np.zeros((2, 3)))
    ws.feed("b_grad", np.zeros(2))
    batched.after_backward(ws, 3)


def not_a_tensor_parameter():
    from caffe2rnn.operators.rnn.param_gradients import TmpstepSum

    ws = Workspace(name="audit")
    ws.create_blob("p").value = object()

    class P:
        param, grad = "p", "p_grad"

    TmpstepSum().before_backward(ws, [P])


def duplicate_params():
    model = ModelHelper(name="audit")
    w = model.param_init_net.ConstantFill([], "w", shape=[1], value=0.0)
    model.params.extend([w, w])
    model.Validate()


def gradient_twice():
    model = ModelHelper(name="audit")
    model.net.Copy("x", "y")
    model.AddGradientOperators(["y"])
    model.AddGradientOperators(["y"])


def create_param_twice_with_two_shapes():
    model = ModelHelper(name="audit")
    init = initializers.Initializer("ConstantFill")
    model.create_param("w", [2], init)
    model.create_param("w", [3], init)


def unknown_op_of_model():
    ModelHelper(name="audit").NoSuchOperatorAnywhere


def not_known_safe():
    ModelHelper(name="audit", allow_not_known_ops=False).Relu


def second_optimizer():
    info = parameter_info.ParameterInfo(None, core.BlobReference("w"))
    info.optimizer = "first"
    info.optimizer = "second"


def pop_sharing():
    parameter_sharing.ParameterSharingContext().pop()


def sharing(overrides):
    def run():
        with parameter_sharing.ParameterSharing(overrides):
            pass

    return run


def register_twice():
    def fc(model):
        pass

    brew.Register(fc)


def weight_decay_without_gradients():
    model = ModelHelper(name="audit")
    brew.fc(model, "x", "y", 2, 3)
    brew.add_weight_decay(model, 0.1)


def conv(**kwargs):
    return lambda: brew.conv(ModelHelper(name="audit"), "x", "y", 1, 1, 3, **kwargs)


def attention_cell(attention_type=AttentionType.Regular):
    return rnn_cell.AttentionCell(
        encoder_output_dim=2,
        encoder_outputs="enc",
        decoder_cell=cell("dec"),
        decoder_state_dim=3,
        attention_type=attention_type,
        weighted_encoder_outputs="wenc",
        attention_memory_optimization=False,
        name="att",
    )


def forward_only_then_gradient():
    ws = run_forward(drop_arg(mul_cell_op(), "backward_step_net"), feeds())
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    ws.run_operator_once(gradient_op(mul_cell_op()))


def attention_cell_apply_with_extra_inputs():
    attention_cell()._apply(ModelHelper(name="audit"), "x", "s", ["h", "c", "ctx"], "t", ["e"])


def multi_cell_wrong_states():
    m = rnn_cell.MultiRNNCell([cell("l0"), cell("l1")], name="m")
    m._apply(ModelHelper(name="audit"), "x", "s", ["h0", "c0"], "t")


def gru_apply_with_extra_inputs():
    with eras.use("E6"):
        g = gru_cell.GRUCell(2, 3, 0.0, False, name="g")
        g._apply(ModelHelper(name="audit"), "x", "s", ["h"], "t", extra_inputs=[("e", 1)])


def abstract(method):
    return lambda: getattr(rnn_cell.RNNCell(name="abstract"), method)(
        *([None] * {"_apply": 5, "get_state_names": 0, "get_output_dim": 0}[method])
    )


def unknown_attention_type_name():
    attention_type_name(7)


# -- the table ----------------------------------------------------------------------------


def load_into_wrong_shapes():
    """Blobs of H = 3 in the workspace, torch weights of H = 2: refused, and
    nothing fed (the first blob keeps its value)."""
    shapes = {"i2h_w": (12, 5), "i2h_b": (12,), "gates_t_w": (12, 3), "gates_t_b": (12,)}
    for suffix in torch_layout.PARAM_NAMES:
        workspace.FeedBlob("audit_lstm/" + suffix, np.ones(shapes[suffix], np.float32))
    try:
        torch_layout.load_torch_lstm("audit_lstm", np.zeros((8, 5)), np.zeros((8, 2)))
    finally:
        assert (workspace.FetchBlob("audit_lstm/i2h_w") == 1).all()


def unread_state_recurrent_net():
    """recurrent_net over a step net that never reads its recurrent state h_prev."""
    from caffe2rnn.recurrent import recurrent_net

    step = core.Net("unread")
    x_t, _ = step.AddExternalInputs("input_t", "h_prev")
    step.AddExternalOutputs(step.Tanh(x_t, "h"))
    recurrent_net(core.Net("main"), step, [("input_t", "x")], [("h_prev", "h0")], {"h_prev": "h"})


REFUSALS = [
    # operators/rnn/arguments.py: the recurrent op's arguments
    Refusal("operators/rnn/arguments.py", "not a recurrent op", INTERNAL, "reader precondition"),
    Refusal(
        "operators/rnn/arguments.py",
        "gradient op with fewer outputs than param + states address",
        CRASH,
        "constructParams/DoRunWithType read output(1 + i) out of range, " + OP_H,
        errors.ArgumentError,
        "ask for 2 outputs",
        lambda: backward(lambda g, ws: g.output.__delitem__(-1)),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "link_internal/external/offset/window of unequal lengths",
        ENFORCE,
        "extractLinks: CAFFE_ENFORCE_EQ, " + OP_CC,
        errors.ArgumentError,
        "must have equal lengths",
        lambda: forward(set_arg(mul_cell_op(), "link_offset", [0, 1])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "negative link offset",
        ENFORCE,
        "RNNApplyLinkOp: CAFFE_ENFORCE(offset_ >= 0), " + OP_H,
        errors.ArgumentError,
        "'link_offset' is -1",
        lambda: forward(set_arg(mul_cell_op(), "link_offset", [0, -1, 0])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "negative link window",
        ENFORCE,
        "RNNApplyLinkOp: CAFFE_ENFORCE(window_ >= 0), " + OP_H,
        errors.ArgumentError,
        "'link_window' is -1",
        lambda: forward(set_arg(mul_cell_op(), "link_window", [1, -1, 1])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "alias_src/dst/offset of unequal lengths",
        ENFORCE,
        "constructAliases: CAFFE_ENFORCE, " + OP_H,
        errors.ArgumentError,
        "alias_src, alias_dst, alias_offset must have equal lengths",
        lambda: forward(set_arg(mul_cell_op(), "alias_offset", [1])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "forward op without inputs",
        ENFORCE,
        "OPERATOR_SCHEMA(RecurrentNetwork).NumInputs(1, INT_MAX), " + OP_CC,
        errors.ArgumentError,
        "needs an input sequence",
        lambda: read_recurrent_arguments(op("RecurrentNetwork", [], ["a", "b"])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "gradient op with fewer inputs than its output gradients + sequence + workspaces",
        CRASH,
        "Input(gradInputs_.size()) read past the inputs (std::out_of_range), " + OP_H,
        errors.ArgumentError,
        "gradient op needs at least 4 inputs",
        lambda: read_recurrent_arguments(
            set_arg(
                op("RecurrentNetworkGradient", ["a", "b", "c"], ["d"]), "outputs_with_grads", [0, 1]
            )
        ),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "recurrent_states and initial_recurrent_state_ids of unequal lengths",
        ENFORCE,
        "constructRecurrentInputs: CAFFE_ENFORCE_EQ 'states/inputs mismatch', " + OP_H,
        errors.ArgumentError,
        "must have equal lengths",
        lambda: forward(set_arg(mul_cell_op(), "initial_recurrent_state_ids", [1, 1])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "initial_recurrent_state_ids outside the inputs",
        CRASH,
        "operator_def.input(inputs[i]) read out of range, constructRecurrentInputs, " + OP_H,
        errors.ArgumentError,
        "'initial_recurrent_state_ids' holds 5",
        lambda: forward(set_arg(mul_cell_op(), "initial_recurrent_state_ids", [5])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "gradient op: param outside its inputs",
        CRASH,
        "constructParams: operator_def.input(param[i] + n) read out of range, " + OP_H,
        errors.ArgumentError,
        "'param' holds 9",
        lambda: backward(lambda g, ws: set_arg(g, "param", [9])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "param_grads of another length than param",
        ENFORCE,
        "constructParams: CAFFE_ENFORCE(param_grads.empty() || sizes equal), " + OP_H,
        errors.ArgumentError,
        "'param_grads' has 2 names for 0 params",
        lambda: backward(lambda g, ws: set_arg(g, "param_grads", ["a", "b"])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "gradient op: gradient of a state alias at an offset other than 1, -1",
        ENFORCE,
        "constructRecurrentGradients: CAFFE_ENFORCE(offset[j] == 1 || offset[j] == -1), " + OP_H,
        errors.ArgumentError,
        "at alias_offset 2",
        lambda: backward(lambda g, ws: set_arg(g, "alias_offset", [2, -1])),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "num_workspaces < 1",
        OWN,
        "no Caffe2 era had num_workspaces (PyTorch's copy of the op added it)",
        errors.ArgumentError,
        "'num_workspaces' is 0",
        lambda: forward(set_arg(mul_cell_op(), "num_workspaces", 0)),
    ),
    # operators/rnn: the ops
    Refusal(
        "operators/rnn/accumulate.py",
        "accumulate op without an offset",
        ENFORCE,
        "AccumulateInputGradientOp: CAFFE_ENFORCE(offset_ >= 0), " + OP_H,
        errors.ArgumentError,
        "Offset not set",
        accumulate_without_offset,
    ),
    Refusal(
        "operators/rnn/accumulate.py",
        "_last output gradient that is not one (1, N, D) row",
        ENFORCE,
        "accumulateFinalInputGradients: CAFFE_ENFORCE_EQ of dims 1, 2 and sizes, " + OP_H,
        errors.ShapeError,
        "of a _last output has shape",
        last_gradient_of_shape((2, N, D)),
    ),
    Refusal(
        "operators/rnn/blob_fetcher.py",
        "fetcher input that is not step workspaces",
        ENFORCE,
        "Input<ScratchWorkspaces>: Blob::Get's type CAFFE_ENFORCE, "
        "caffe2/operators/recurrent_network_blob_fetcher_op.h (042e8ede4)",
        errors.EnforceNotMet,
        "must hold the step workspaces",
        fetcher_on(np.zeros(1)),
    ),
    Refusal(
        "operators/rnn/blob_fetcher.py",
        "a step-workspace blob that is not a tensor",
        ENFORCE,
        "Get<Tensor<Context>>: Blob::Get's type CAFFE_ENFORCE, "
        "caffe2/operators/recurrent_network_blob_fetcher_op.h (042e8ede4)",
        errors.DTypeError,
        "is not a tensor",
        fetcher_on_a_non_tensor_step_blob,
    ),
    Refusal(
        "operators/rnn/executor.py", "plan made stale by a shape change", INTERNAL, "control flow"
    ),
    Refusal(
        "operators/rnn/fusion.py",
        "the fused step's own checks (then run as parts)",
        INTERNAL,
        "kernel",
    ),
    Refusal("operators/rnn/fusion.py", "not a fused kernel", INTERNAL, "plan precondition"),
    *[
        Refusal("operators/rnn/executor.py", "re-raise adding the timestep", INTERNAL, "context")
        for _ in range(7)
    ],
    *[
        Refusal(
            "operators/rnn/derive.py",
            "a step its template cannot write out (built op by op instead)",
            INTERNAL,
            "control flow",
        )
        for _ in range(13)
    ],
    *[
        Refusal(
            "operators/rnn/plan_pair.py",
            "a plan its arrays cannot be substituted in (built op by op instead)",
            INTERNAL,
            "control flow",
        )
        for _ in range(4)
    ],
    Refusal(
        "operators/rnn/gradient.py",
        "backward_step_net named like step_net",
        UNWRITTEN,
        "both nets were cached by name in the step workspaces: the gradient op re-ran the "
        "forward net and its gradient outputs held memory nothing wrote, " + OP_H,
        errors.ArgumentError,
        "named 'mul_step' like step_net",
        lambda: backward(
            lambda g, ws: set_arg(g, "backward_step_net", str(ArgumentHelper(g).net("step_net")))
        ),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "a timestep shared by all steps (named like an outer blob)",
        UNWRITTEN,
        "the forward op's UpdateTimestepBlob wrote t into the outer blob CreateBlob returned, "
        "the gradient op sets no timestep: every backward step read the last t and the "
        "links left the other gradient rows unwritten, " + OP_H,
        errors.ArgumentError,
        "all 3 steps shared one timestep",
        shared_timestep_then_gradient,
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "state tensors of another sequence length than the gradient's input",
        UNWRITTEN,
        "the state gradient took the forward's T + k rows and only its last row was zeroed; "
        "a backward over another T read rows nothing wrote (or past the end), " + OP_H,
        errors.ShapeError,
        "the forward op ran on another sequence",
        lambda: backward(lambda g, ws: ws.feed("input", feeds()["input"][:2])),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "last input is not the step workspaces",
        ENFORCE,
        "Input<ScratchWorkspaces>: Blob::Get's type CAFFE_ENFORCE, " + OP_H,
        errors.EnforceNotMet,
        "must hold the forward op's step workspaces",
        lambda: backward(lambda g, ws: ws.feed("step_workspaces", np.zeros(1))),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "fewer step workspaces than timesteps (forward-only forward op)",
        ENFORCE,
        "CAFFE_ENFORCE_GE(stepWorkspaces.size(), seqLen), " + OP_H,
        errors.EnforceNotMet,
        "holds 2 step workspaces for 3 timesteps",
        forward_only_then_gradient,
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "state that is not 3-D",
        ENFORCE,
        "CAFFE_ENFORCE_EQ(g->ndim(), 3), " + OP_H,
        errors.ShapeError,
        "state 'hidden' must be a 3-D tensor",
        lambda: backward(lambda g, ws: ws.feed("hidden", np.zeros(3))),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "input gradient blob absent",
        ENFORCE,
        "CAFFE_ENFORCE(pGradientBlob), " + OP_H,
        errors.EnforceNotMet,
        "input gradient blob 'input_grad.renamed' does not exist",
        lambda: backward(
            lambda g, ws: g.arg.add().CopyFrom(
                MakeArgument("input_grad.rename", "input_grad.renamed")
            )
        ),
    ),
    Refusal(
        "operators/rnn/arguments.py",
        "gradient op whose outputs_with_grads names no forward output (-1, 7)",
        CRASH,
        "the maker that writes this op read GO(id) as g_output_.at(id) (std::out_of_range, "
        + OP_CC
        + "); Caffe2's op itself ignored such an index, silently dropping that output's "
        "gradient (constructRecurrentGradients, " + OP_H + ")",
        errors.ArgumentError,
        "'outputs_with_grads' holds -1",
        lambda: read_recurrent_arguments(
            set_arg(gradient_op(mul_cell_op()), "outputs_with_grads", [0, -1])
        ),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "gradient of an op without outputs_with_grads",
        ENFORCE,
        "GetRecurrentNetworkGradient: CAFFE_ENFORCE(outputs_with_grads.size() > 0), " + OP_CC,
        errors.GradientError,
        "must list at least one output",
        gradient_maker("outputs_with_grads", []),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "gradient of outputs_with_grads past the outputs",
        CRASH,
        "GetRecurrentNetworkGradient: GO(id) is g_output_.at(id), std::out_of_range, " + OP_CC,
        errors.GradientError,
        "'outputs_with_grads' holds 3",
        gradient_maker("outputs_with_grads", [3]),
    ),
    Refusal(
        "operators/rnn/gradient.py",
        "gradient of param / initial state ids past the inputs",
        CRASH,
        "GetRecurrentNetworkGradient: GI(id) reads def_.input(id) out of range, " + OP_CC,
        errors.GradientError,
        "'param' holds 4",
        gradient_maker("param", [4]),
    ),
    Refusal(
        "operators/rnn/initial_states.py",
        "initial state that is not a float tensor",
        ENFORCE,
        "initializeRecurrentInput: Get<Tensor>/data<float>() type CAFFE_ENFORCE, " + OP_H,
        errors.DTypeError,
        "must be a float32/float64 tensor",
        forward_with_h0(np.zeros((N, D), np.int32)),
    ),
    Refusal(
        "operators/rnn/initial_states.py",
        "initial state of 0 or > 3 dims",
        ENFORCE,
        "initializeRecurrentInput: CAFFE_ENFORCE_GE/LE(input.ndim(), 1/3), " + OP_H,
        errors.ShapeError,
        r"expected \(D,\), \(N, D\) or \(k, N, D\)",
        forward_with_h0(np.zeros((1, 1, N, D))),
    ),
    Refusal(
        "operators/rnn/initial_states.py",
        "initial state of another batch size",
        ENFORCE,
        "initializeRecurrentInput: CAFFE_ENFORCE_EQ(input.dim(ndim - 2), batchSize), " + OP_H,
        errors.ShapeError,
        "expected a batch dimension of 2",
        forward_with_h0(np.zeros((N + 1, D))),
    ),
    Refusal(
        "operators/rnn/links.py",
        "link op without an offset",
        ENFORCE,
        "RNNApplyLinkOp: CAFFE_ENFORCE(offset_ >= 0, 'offset not set'), " + OP_H,
        errors.ArgumentError,
        "offset not set",
        link_op(window=1),
    ),
    Refusal(
        "operators/rnn/links.py",
        "link op without a window",
        ENFORCE,
        "RNNApplyLinkOp: CAFFE_ENFORCE(window_ >= 0, 'window not set'), " + OP_H,
        errors.ArgumentError,
        "window not set",
        link_op(offset=0),
    ),
    Refusal(
        "operators/rnn/links.py",
        "timestep that is not an int tensor (or empty)",
        ENFORCE,
        "t0.data<int32_t>() type CAFFE_ENFORCE (an empty one: data()[0] out of bounds), " + OP_H,
        errors.DTypeError,
        "must be the int32 timestep tensor",
        run_link_with_timestep(np.zeros(1, np.float32)),
    ),
    Refusal(
        "operators/rnn/param_gradients.py",
        "parameter that is not a tensor",
        ENFORCE,
        "DoRunWithType: pBlob->Get<Tensor<Context>>() type CAFFE_ENFORCE, " + OP_H,
        errors.DTypeError,
        "parameter 'p' is not a tensor",
        not_a_tensor_parameter,
    ),
    Refusal(
        "operators/rnn/param_gradients.py",
        "batched parameter gradient of mismatched X and dY",
        OWN,
        "caffe2rnn_batch_param_gradients is a caffe2rnn option",
        errors.ShapeError,
        "batched gradient of 'w'",
        batched_param_gradient_mismatch,
    ),
    Refusal(
        "operators/rnn/recurrent_network.py",
        "sequence of fewer than 2 dims",
        ENFORCE,
        "Input(0).dim32(1): CAFFE_ENFORCE_LT(i, ndim) 'Exceeding ndim limit', " + OP_H,
        errors.ShapeError,
        "expected a sequence of at least 2 dimensions",
        lambda: forward(mul_cell_op(), {"input": np.zeros(T), "h0": np.zeros((N, D))}),
    ),
    Refusal(
        "operators/rnn/recurrent_network.py",
        "alias_dst naming no blob at all",
        CRASH,
        "applyOffsetAlias: ws->GetBlob(dst)->GetMutable on a null pointer, " + OP_H,
        errors.ArgumentError,
        "'elsewhere', which is neither an output",
        lambda: forward(set_arg(mul_cell_op(), "alias_dst", ["hidden_all", "elsewhere"])),
    ),
    Refusal(
        "operators/rnn/rows.py",
        "a row read before any step wrote it",
        UNWRITTEN,
        "state rows a link or alias reads that no step (nor the initial state) wrote, " + OP_H,
        errors.ArgumentError,
        "never written",
        lambda: forward(set_arg(mul_cell_op(), "link_offset", [1, 1, 0])),
    ),
    Refusal(
        "runtime/arguments.py",
        "step net text that does not parse",
        ENFORCE,
        "extractNetDef: CAFFE_ENFORCE(TextFormat::ParseFromString, 'Invalid NetDef'), " + OP_CC,
        errors.ProtoParseError,
        "is not a valid NetDef",
        lambda: forward(set_arg(mul_cell_op(), "step_net", "op { type: ")),
    ),
    Refusal(
        "runtime/arguments.py",
        "step net argument holding neither a NetDef nor text",
        ENFORCE,
        "extractNetDef: GetSingleArgument<string> on an argument without s, "
        "caffe2/utils/proto_utils.cc (042e8ede4)",
        errors.ArgumentError,
        "must hold a NetDef",
        lambda: forward(set_arg(drop_arg(mul_cell_op(), "step_net"), "step_net", 3)),
    ),
    Refusal("operators/rnn/step_net.py", "re-raise adding the timestep", INTERNAL, "context"),
    Refusal(
        "operators/rnn/gradient.py",
        "prepared_backward_step_net of a forward-only op",
        INTERNAL,
        "a caffe2rnn helper (viz)",
        errors.ArgumentError,
        "forward-only",
        lambda: prepared_backward_step_net(drop_arg(mul_cell_op(), "backward_step_net")),
    ),
    # cells/, rnn_cell, gru_cell, attention
    *[
        Refusal("cells/base.py", "abstract %s" % m, INTERNAL, "NotImplementedError, as Caffe2's")
        for m in (
            "_apply",
            "get_state_names",
            "get_output_dim",
            "apply_override (E7)",
            "get_state_names_override (E7)",
        )
    ],
    Refusal(
        "cells/base.py",
        "a blob name that is neither a str nor a BlobReference (E7)",
        RAISED,
        "_RectifyName: raise Exception('Unknown blob reference type'), "
        "caffe2/python/rnn_cell.py (929c33cee)",
        errors.ArgumentError,
        "Unknown blob reference type",
        at_era(
            "E7",
            lambda: cell()._apply(ModelHelper(name="audit"), 7, None, ["h", "c"], "t"),
        ),
    ),
    Refusal(
        "cells/base.py",
        "another number of initial states than of states (E7)",
        RAISED,
        "apply_over_sequence: utils.raiseIfNotEqual, caffe2/python/rnn_cell.py (929c33cee)",
        errors.ArgumentError,
        "doesn't match the number of states. 3 != 2",
        at_era("E7", lambda: apply_cell(cell(), ["h0", "c0", "x0"])),
    ),
    Refusal(
        "cells/base.py",
        "initial_states None (E5; E6 with an initializer it is not None)",
        RAISED,
        "zip(states_prev, None): TypeError, caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "got None",
        lambda: apply_cell(cell(), None),
    ),
    Refusal(
        "cells/base.py",
        "no initial state for the output state",
        RAISED,
        "_prepare_output_sequence: IndexError, caffe2/python/rnn_cell.py (042e8ede4)",
        errors.ArgumentError,
        "the output state 'c/hidden_t'",
        lambda: apply_cell(cell(), []),
    ),
    Refusal(
        "cells/base.py",
        "initial_states None and no initializer (E6)",
        RAISED,
        "apply_over_sequence: raise Exception('Either initial states or initializer have to be "
        "set'), caffe2/python/rnn_cell.py (042e8ede4)",
        errors.ArgumentError,
        "needs an initializer",
        at_era("E6", lambda: apply_cell(attention_cell(), None)),
    ),
    Refusal(
        "cells/initializers.py",
        "MultiRNNCell learned states with a layer without initializer",
        RAISED,
        "MultiRNNCellInitializer: None.create_states, AttributeError, "
        "caffe2/python/rnn_cell.py (042e8ede4)",
        ValueError,
        "needs an initializer on every layer",
        at_era(
            "E6",
            lambda: apply_cell(
                rnn_cell.MultiRNNCell([cell("l0"), attention_cell()], name="m"), None
            ),
        ),
    ),
    Refusal(
        "cells/layers.py",
        "_LSTM with dim_out []",
        RAISED,
        "_LSTM: cells[0] IndexError, caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "dim_out: an empty list",
        lambda: lstm(dim_out=[]),
    ),
    Refusal(
        "cells/layers.py",
        "_LSTM return_params with several layers",
        RAISED,
        "_LSTM: MultiRNNCell has no get_input_params, AttributeError, "
        "caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "return_params is supported for a single layer only",
        lambda: lstm(dim_out=[3, 3], return_params=True, initial_states=None),
    ),
    Refusal(
        "cells/layers.py",
        "layered_LSTM with dim_out []",
        RAISED,
        "_layered_LSTM: assert len(dim_out) != 0, caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "dim_out: an empty list",
        lambda: rnn_cell.layered_LSTM(ModelHelper(), "x", "s", ("h", "c"), 2, [], scope="a"),
    ),
    Refusal(
        "cells/layers.py",
        "layered_LSTM return_params with several layers",
        RAISED,
        "_layered_LSTM: assert return_params is False, caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "not supported for layering",
        lambda: rnn_cell.layered_LSTM(
            ModelHelper(), "x", "s", ("h", "c"), 2, [3, 3], scope="a", return_params=True
        ),
    ),
    Refusal(
        "cells/layers.py",
        "cudnn_LSTM",
        RAISED,
        "Caffe2 without CUDA had no 'Recurrent' operator: 'not a registered operator'",
        NotImplementedError,
        "CPU-only",
        lambda: rnn_cell.cudnn_LSTM(ModelHelper(), "x", ("h", "c"), 2, 3, scope="a"),
    ),
    Refusal(
        "cells/layers.py",
        "_LSTM without scope before E7",
        RAISED,
        "_LSTM() missing 1 required positional argument: 'scope', TypeError, "
        "caffe2/python/rnn_cell.py (042e8ede4)",
        TypeError,
        "'scope'",
        at_era("E6", lambda: rnn_cell.LSTM(ModelHelper(), "x", "s", ("h", "c"), 2, 3)),
    ),
    Refusal(
        "cells/layers.py",
        "_LSTM with cell keywords before E7",
        RAISED,
        "_LSTM() got an unexpected keyword argument, TypeError, caffe2/python/rnn_cell.py "
        "(042e8ede4; **cell_kwargs from 7d4c7690d)",
        TypeError,
        "unexpected keyword argument 'activation'",
        at_era("E6", lambda: lstm(activation="tanh")),
    ),
    Refusal(
        "cells/basic_rnn.py",
        "BasicRNNCell with an activation other than tanh or relu",
        RAISED,
        "BasicRNNCell.__init__: raise RuntimeError('BasicRNNCell with unknown activation "
        "function'), caffe2/python/rnn_cell.py (929c33cee)",
        errors.ArgumentError,
        "unknown activation function",
        at_era("E7", lambda: rnn_cell.BasicRNNCell(2, 3, 0.0, False, activation="sigmoid")),
    ),
    Refusal(
        "cells/unrolled.py",
        "static_rnn_unroll_size <= 0 or not an integer",
        RAISED,
        "UnrolledCell: range(T) TypeError, or no steps: an empty output, "
        "caffe2/python/rnn_cell.py (0cdd09da6)",
        errors.ArgumentError,
        "static_rnn_unroll_size",
        lambda: lstm(static_rnn_unroll_size=0),
    ),
    Refusal(
        "cells/wrappers.py",
        "DropoutCell without is_test (E6)",
        RAISED,
        "assert 'is_test' in kwargs, caffe2/python/rnn_cell.py (042e8ede4)",
        errors.ArgumentError,
        "'is_test' is required",
        at_era("E6", lambda: rnn_cell.DropoutCell(cell(), dropout_ratio=0.5, name="d")),
    ),
    Refusal(
        "cells/wrappers.py",
        "MultiRNNCell of no cells",
        RAISED,
        "output_index_per_layer[-1] IndexError, caffe2/python/rnn_cell.py (042e8ede4)",
        errors.ArgumentError,
        "at least one cell",
        lambda: rnn_cell.MultiRNNCell([], name="m"),
    ),
    Refusal(
        "cells/wrappers.py",
        "MultiRNNCell layers with the same state names",
        RAISED,
        "raise RuntimeError('Duplicate state names...'), caffe2/python/rnn_cell.py (042e8ede4)",
        errors.ArgumentError,
        "Duplicate state names",
        lambda: rnn_cell.MultiRNNCell([cell("same"), cell("same")], name="m"),
    ),
    Refusal(
        "cells/wrappers.py",
        "MultiRNNCell step with another number of states",
        RAISED,
        "_apply: assert len(states) == sum(states_per_layer), caffe2/python/rnn_cell.py "
        "(042e8ede4)",
        errors.ArgumentError,
        "2 states given, its layers have 4",
        multi_cell_wrong_states,
    ),
    Refusal(
        "cells/attention_cell.py",
        "AttentionCell step with extra_inputs",
        RAISED,
        "_apply: assert extra_inputs is None, caffe2/python/rnn_cell.py (0cdd09da6)",
        NotImplementedError,
        "takes no extra_inputs",
        attention_cell_apply_with_extra_inputs,
    ),
    Refusal(
        "cells/attention_cell.py",
        "build_initial_coverage without SoftCoverage",
        RAISED,
        "assert self.attention_type == AttentionType.SoftCoverage, caffe2/python/rnn_cell.py "
        "(042e8ede4)",
        errors.ArgumentError,
        "is not SoftCoverage",
        lambda: attention_cell().build_initial_coverage(ModelHelper()),
    ),
    Refusal(
        "cells/gru.py",
        "GRUCell step with extra_inputs",
        RAISED,
        "GRUCell._apply: assert extra_inputs is None, caffe2/python/gru_cell.py (042e8ede4)",
        NotImplementedError,
        "takes no extra_inputs",
        gru_apply_with_extra_inputs,
    ),
    Refusal(
        "cells/gru.py",
        "GRUCell linear_before_reset before E7",
        RAISED,
        "GRUCell.__init__() got an unexpected keyword argument, TypeError, "
        "caffe2/python/gru_cell.py (042e8ede4; added 7d4c7690d)",
        TypeError,
        "linear_before_reset arrived",
        at_era("E6", lambda: gru_cell.GRUCell(2, 3, 0.0, False, linear_before_reset=True)),
    ),
    Refusal(
        "gru_cell.py",
        "gru_cell.GRU before E6",
        RAISED,
        "caffe2/python/gru_cell.py is not in Caffe2 at 0cdd09da6 (added 486f549da)",
        AttributeError,
        "arrived in Caffe2 486f549da",
        lambda: gru_cell.GRU,
    ),
    Refusal(
        "gru_cell.py",
        "a name gru_cell never had",
        RAISED,
        "AttributeError, as for any module",
        AttributeError,
        "has no attribute 'Nothing'",
        lambda: gru_cell.Nothing,
    ),
    Refusal(
        "rnn_cell.py",
        "rnn_cell.LayerNormLSTM before E6",
        RAISED,
        "not in caffe2/python/rnn_cell.py at 0cdd09da6",
        AttributeError,
        "arrived in Caffe2 after 2017-06",
        lambda: rnn_cell.LayerNormLSTM,
    ),
    Refusal(
        "rnn_cell.py",
        "a name rnn_cell never had",
        RAISED,
        "AttributeError, as for any module",
        AttributeError,
        "has no attribute 'Nothing'",
        lambda: rnn_cell.Nothing,
    ),
    Refusal(
        "attention.py",
        "AttentionType.Dot before E6",
        RAISED,
        "not in caffe2/python/attention.py at 0cdd09da6",
        AttributeError,
        "arrived in Caffe2 after 2017-06",
        lambda: AttentionType.Dot,
    ),
    Refusal(
        "attention.py",
        "an AttentionType Caffe2 never had",
        RAISED,
        "AttributeError of the class",
        AttributeError,
        "has no attribute 'Nothing'",
        lambda: AttentionType.Nothing,
    ),
    Refusal(
        "attention.py",
        "attention_type not among the era's types",
        RAISED,
        "LSTMWithAttentionCell: assert attention_type in [...], caffe2/python/rnn_cell.py "
        "(0cdd09da6, 042e8ede4)",
        errors.ArgumentError,
        "attention_type=7 is not an AttentionType",
        unknown_attention_type_name,
    ),
    Refusal(
        "recurrent_stages.py",
        "a recurrent state no op of the step net gives a gradient",
        RAISED,
        "backward_mapping[cell_input]: KeyError, caffe2/python/recurrent.py (0cdd09da6)",
        errors.KeyNotFoundError,
        "'h_prev' gets no gradient in the backward step net",
        lambda: unread_state_recurrent_net(),
    ),
    Refusal(
        "recurrent.py",
        "set_rnn_executor_config of another op",
        RAISED,
        "assert rnn_op.type in {...}, caffe2/python/recurrent.py (042e8ede4)",
        errors.ArgumentError,
        "expected a RecurrentNetwork",
        lambda: set_rnn_executor_config(op("FC", [], []), num_threads=2),
    ),
    Refusal(
        "recurrent.py",
        "set_batch_param_gradients of another op",
        OWN,
        "a caffe2rnn function",
        errors.ArgumentError,
        "expected a RecurrentNetwork",
        lambda: set_batch_param_gradients(op("FC", [], [])),
    ),
    # cells/torch_layout: loading a torch.nn.LSTM layer (caffe2rnn's own)
    Refusal(
        "cells/torch_layout.py",
        "gate blocks of unequal height",
        OWN,
        "reorder_gates is a caffe2rnn function",
        errors.ShapeError,
        "expected 4 gate blocks",
        lambda: torch_layout.reorder_gates(np.zeros((6, 2)), "ifgo", "ifog"),
    ),
    Refusal(
        "cells/torch_layout.py",
        "weight_hh not 4H x H",
        OWN,
        "lstm_params_from_torch is a caffe2rnn function",
        errors.ShapeError,
        r"weight_hh has shape \(8, 3\)",
        lambda: torch_layout.lstm_params_from_torch(np.zeros((8, 3)), np.zeros((8, 3))),
    ),
    Refusal(
        "cells/torch_layout.py",
        "weight_ih of another H than weight_hh",
        OWN,
        "lstm_params_from_torch is a caffe2rnn function",
        errors.ShapeError,
        r"weight_ih has shape \(12, 5\)",
        lambda: torch_layout.lstm_params_from_torch(np.zeros((12, 5)), np.zeros((8, 2))),
    ),
    Refusal(
        "cells/torch_layout.py",
        "a bias not 4H long",
        OWN,
        "lstm_params_from_torch is a caffe2rnn function",
        errors.ShapeError,
        r"bias_hh has shape \(7,\)",
        lambda: torch_layout.lstm_params_from_torch(
            np.zeros((8, 5)), np.zeros((8, 2)), None, np.zeros(7)
        ),
    ),
    Refusal(
        "cells/torch_layout.py",
        "loading into a scope whose blobs do not exist",
        OWN,
        "load_torch_lstm is a caffe2rnn function",
        errors.BlobNotFoundError,
        "audit_missing/i2h_w is not in the workspace",
        lambda: torch_layout.load_torch_lstm("audit_missing", np.zeros((8, 5)), np.zeros((8, 2))),
    ),
    Refusal(
        "cells/torch_layout.py",
        "loading weights of another shape than the model's",
        OWN,
        "load_torch_lstm is a caffe2rnn function",
        errors.ShapeError,
        "audit_lstm/i2h_w has shape",
        load_into_wrong_shapes,
    ),
    # model_helper, brew, helpers, modeling
    Refusal(
        "model_helper.py",
        "create_param with a name that is neither str nor BlobReference",
        RAISED,
        "raise 'Unsupported type for param_name' (a TypeError), caffe2/python/model_helper.py "
        "(0cdd09da6)",
        TypeError,
        "create_param takes a str or BlobReference",
        lambda: ModelHelper().create_param(3, [1], initializers.Initializer("ConstantFill")),
    ),
    Refusal(
        "model_helper.py",
        "create_param again with another shape",
        RAISED,
        "assert self._parameters_info[param_name].shape == shape, caffe2/python/model_helper.py "
        "(0cdd09da6)",
        errors.ShapeError,
        "already exists with shape",
        create_param_twice_with_two_shapes,
    ),
    Refusal(
        "model_helper.py",
        "AddParameter of a non-BlobReference",
        RAISED,
        "assert isinstance(param, core.BlobReference), caffe2/python/model_helper.py (0cdd09da6)",
        TypeError,
        "AddParameter takes a BlobReference",
        lambda: ModelHelper().AddParameter("w"),
    ),
    Refusal(
        "model_helper.py",
        "Validate with duplicate params",
        RAISED,
        "assert dupes == [], caffe2/python/model_helper.py (0cdd09da6; from 41ae85f4e)",
        errors.WorkspaceError,
        "Duplicate params",
        duplicate_params,
    ),
    Refusal(
        "model_helper.py",
        "get_param_to_grad before AddGradientOperators",
        RAISED,
        "raise RuntimeError, caffe2/python/model_helper.py (0cdd09da6)",
        errors.WorkspaceError,
        "You need to run AddGradientOperators first",
        lambda: ModelHelper().get_param_to_grad([]),
    ),
    Refusal(
        "model_helper.py",
        "GetOptimizationParamInfo before AddGradientOperators",
        RAISED,
        "raise RuntimeError, caffe2/python/model_helper.py (0cdd09da6)",
        errors.WorkspaceError,
        "Need to call AddGradientOperators first",
        lambda: ModelHelper().GetOptimizationParamInfo(),
    ),
    Refusal(
        "model_helper.py",
        "AddGradientOperators twice",
        RAISED,
        "raise RuntimeError, caffe2/python/model_helper.py (0cdd09da6)",
        errors.WorkspaceError,
        "cannot run AddGradientOperators twice",
        gradient_twice,
    ),
    Refusal(
        "model_helper.py",
        "model.__dunder__",
        RAISED,
        "raise AttributeError(op_type), caffe2/python/model_helper.py (0cdd09da6)",
        AttributeError,
        "__nothing__",
        lambda: ModelHelper().__nothing__,
    ),
    Refusal(
        "model_helper.py",
        "model.<not an operator>",
        RAISED,
        "'Method ... is not a registered operator', caffe2/python/model_helper.py (0cdd09da6)",
        errors.UnknownOperatorError,
        "NoSuchOperatorAnywhere",
        unknown_op_of_model,
    ),
    Refusal(
        "model_helper.py",
        "an op not known to be safe, allow_not_known_ops=False",
        RAISED,
        "raise RuntimeError('Operator ... is not known to be safe'), "
        "caffe2/python/model_helper.py (0cdd09da6)",
        errors.WorkspaceError,
        "not known to be safe",
        not_known_safe,
    ),
    Refusal(
        "modeling/initializers.py",
        "Initializer.update of one that has an op",
        RAISED,
        "raise Exception('Operator name overwrites are not allowed'), "
        "caffe2/python/modeling/initializers.py (042e8ede4)",
        errors.ArgumentError,
        "overwrites are not allowed",
        lambda: initializers.Initializer("ConstantFill").update("XavierFill", {}),
    ),
    Refusal(
        "modeling/initializers.py",
        "Initializer without an op creating a parameter",
        RAISED,
        "init_net.__getattr__(None): AttributeError, caffe2/python/modeling/initializers.py "
        "(042e8ede4)",
        errors.ArgumentError,
        "has no fill operator",
        lambda: initializers.Initializer().create_param("w", core.Net("n"), [1]),
    ),
    Refusal(
        "modeling/initializers.py",
        "ExternalInitializer with a name that is neither str nor BlobReference",
        RAISED,
        "raise 'Unsupported type for param_name' (a TypeError), "
        "caffe2/python/modeling/initializers.py (042e8ede4)",
        TypeError,
        "param_name must be a str or BlobReference",
        lambda: initializers.ExternalInitializer().create_param(3, core.Net("n"), [1]),
    ),
    Refusal(
        "modeling/initializers.py",
        "PseudoFP16Initializer before E7 (E7's name of pFP16Initializer)",
        RAISED,
        "no attribute PseudoFP16Initializer: AttributeError, caffe2/python/modeling/"
        "initializers.py (042e8ede4 has pFP16Initializer only)",
        AttributeError,
        "the name Caffe2 gave pFP16Initializer after 042e8ede4",
        lambda: initializers.PseudoFP16Initializer,
    ),
    Refusal(
        "modeling/initializers.py",
        "another name the module does not have",
        RAISED,
        "no such attribute: AttributeError, caffe2/python/modeling/initializers.py",
        AttributeError,
        "has no attribute 'NoSuchInitializer'",
        lambda: initializers.NoSuchInitializer,
    ),
    Refusal(
        "modeling/parameter_info.py",
        "ParameterInfo of a non-BlobReference",
        RAISED,
        "assert isinstance(param, core.BlobReference), caffe2/python/modeling/parameter_info.py "
        "(0cdd09da6)",
        TypeError,
        "ParameterInfo takes a BlobReference",
        lambda: parameter_info.ParameterInfo(None, "w"),
    ),
    Refusal(
        "modeling/parameter_info.py",
        "a second optimizer for one parameter",
        RAISED,
        "assert self._optimizer is None, caffe2/python/modeling/parameter_info.py (042e8ede4)",
        errors.ModelError,
        "optimizer has already been set",
        second_optimizer,
    ),
    Refusal(
        "modeling/parameter_sharing.py",
        "pop without push",
        RAISED,
        "assert len(self._contexts) > 0, caffe2/python/modeling/parameter_sharing.py (0cdd09da6)",
        errors.ArgumentError,
        "pop\\(\\) without a matching push",
        pop_sharing,
    ),
    Refusal(
        "modeling/parameter_sharing.py",
        "ParameterSharing of a non-dict",
        RAISED,
        "assert isinstance(shared_scopes, dict), caffe2/python/modeling/parameter_sharing.py "
        "(0cdd09da6)",
        errors.ArgumentError,
        "takes a dict",
        sharing([("a", "b")]),
    ),
    Refusal(
        "modeling/parameter_sharing.py",
        "an override whose target starts with its source",
        RAISED,
        "assert not v.startswith(k), caffe2/python/modeling/parameter_sharing.py (0cdd09da6)",
        errors.ArgumentError,
        "illegal override",
        sharing({"a": "a/b"}),
    ),
    Refusal(
        "brew.py",
        "helper called without a model",
        RAISED,
        "raise RuntimeError('The first input of helper function should be model...'), "
        "caffe2/python/brew.py (0cdd09da6)",
        TypeError,
        "should be model",
        lambda: brew.fc("x", "y", 2, 3),
    ),
    Refusal(
        "brew.py",
        "Register of a name already registered",
        RAISED,
        "raise AttributeError('Helper ... already exists'), caffe2/python/brew.py (0cdd09da6)",
        AttributeError,
        "already exists",
        register_twice,
    ),
    Refusal(
        "brew.py",
        "get_helper of an unknown helper",
        RAISED,
        "brew.<name>: 'Helper function ... not registered', caffe2/python/brew.py (0cdd09da6)",
        AttributeError,
        "not registered",
        lambda: brew.get_helper("nothing"),
    ),
    Refusal(
        "brew.py",
        "brew.__dunder__",
        RAISED,
        "AttributeError, caffe2/python/brew.py (0cdd09da6)",
        AttributeError,
        "__nothing__",
        lambda: brew.__nothing__,
    ),
    Refusal(
        "brew.py",
        "brew.<unknown helper>",
        RAISED,
        "raise AttributeError('Helper function ... not registered'), caffe2/python/brew.py "
        "(0cdd09da6)",
        AttributeError,
        "not registered",
        lambda: brew.nothing,
    ),
    Refusal(
        "helpers/arg_scope.py",
        "arg_scope of something not callable",
        RAISED,
        "assert callable(helper), caffe2/python/helpers/arg_scope.py (0cdd09da6)",
        TypeError,
        "takes a helper function",
        lambda: brew.arg_scope([3]).__enter__(),
    ),
    Refusal(
        "helpers/conv.py",
        "use_cudnn with another engine",
        RAISED,
        "raise ValueError, caffe2/python/helpers/conv.py (0cdd09da6)",
        errors.ModelError,
        "use_cudnn=True, the only engine",
        conv(use_cudnn=True, engine="OTHER"),
    ),
    Refusal(
        "helpers/conv.py",
        "engine CUDNN without use_cudnn",
        RAISED,
        "raise ValueError, caffe2/python/helpers/conv.py (0cdd09da6)",
        errors.ModelError,
        "use_cudnn=False, the only engine",
        conv(use_cudnn=False, engine="CUDNN"),
    ),
    Refusal(
        "helpers/conv.py",
        "conv_nd in NHWC",
        RAISED,
        "assert order == 'NCHW', caffe2/python/helpers/conv.py (0cdd09da6)",
        errors.ModelError,
        "only supported for NCHW",
        lambda: brew.conv_nd(ModelHelper(), "x", "y", 1, 1, [3, 3], order="NHWC"),
    ),
    Refusal(
        "helpers/conv.py",
        "a kernel list of other than two sizes",
        RAISED,
        "assert len(kernel) == 2, 'Conv support only a 2D kernel.', "
        "caffe2/python/helpers/conv.py (042e8ede4)",
        errors.ModelError,
        "only a 2D kernel",
        lambda: brew.conv(ModelHelper(), "x", "y", 1, 1, [3, 3, 3]),
    ),
    Refusal(
        "helpers/unimplemented.py",
        "a helper whose operator caffe2rnn does not implement",
        OWN,
        "Caffe2's helper built the operator (SpatialBN, ConvTranspose...); caffe2rnn has none "
        "to build, and says so before creating anything",
        errors.UnknownOperatorError,
        "needs the operator SpatialBN",
        lambda: brew.spatial_bn(ModelHelper(), "x", "y", 3),
    ),
    Refusal(
        "helpers/train.py",
        "add_weight_decay of a weight without gradient",
        RAISED,
        "model.param_to_grad[param]: KeyError, caffe2/python/helpers/train.py (0cdd09da6)",
        errors.ModelError,
        "has no gradient",
        weight_decay_without_gradients,
    ),
]

#: helper functions whose own ``raise`` is counted at their call sites
HELPERS = {
    ("operators/rnn/arguments.py", "__call__"),  # _Failer: fail(argument, message)
    ("operators/rnn/arguments.py", "_same_length"),
    ("operators/rnn/gradient.py", "_check_index_range"),
}
CALLS = {"fail", "check", "_same_length", "_check_index_range"}


def refusal_sites(module):
    """The lines of ``raise`` statements and of ``fail``/``check`` calls."""
    sites = []

    def visit(node, in_helper=False):
        for child in ast.iter_child_nodes(node):
            helper = in_helper or (
                isinstance(child, ast.FunctionDef) and (module, child.name) in HELPERS
            )
            if isinstance(child, ast.Raise) and not helper:
                sites.append(child.lineno)
            elif isinstance(child, ast.Call):
                func = child.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name in CALLS:
                    sites.append(child.lineno)
            visit(child, helper)

    with open(os.path.join(PACKAGE, module), encoding="utf-8") as f:
        visit(ast.parse(f.read()))
    return sites


PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "caffe2rnn")
AUDITED = [
    "operators/rnn",
    "cells",
    "recurrent.py",
    "recurrent_stages.py",
    "model_helper.py",
    "brew.py",
    "rnn_cell.py",
    "gru_cell.py",
    "attention.py",
    "modeling",
    "helpers",
]


def audited_modules():
    for entry in AUDITED:
        path = os.path.join(PACKAGE, entry)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith(".py"):
                    yield entry + "/" + name
        else:
            yield entry


def test_every_refusal_is_listed():
    """Per audited module, as many rows as checks. (Rows of other modules, such
    as the argument reader the recurrent op shares with every operator, are
    here for their triggers only.)"""
    modules = list(audited_modules())
    listed = {}
    for r in REFUSALS:
        if r.site in modules:
            listed[r.site] = listed.get(r.site, 0) + 1
    found = {module: len(refusal_sites(module)) for module in modules}
    found = {module: n for module, n in found.items() if n}
    assert found == listed


@pytest.mark.parametrize(
    "refusal",
    [r for r in REFUSALS if r.trigger is not None],
    ids=[r.site + ": " + r.what for r in REFUSALS if r.trigger is not None],
)
def test_refusal(refusal):
    assert refusal.reason in (ENFORCE, RAISED, CRASH, UNWRITTEN, OWN, INTERNAL)
    assert refusal.caffe2
    with pytest.raises(refusal.error, match=refusal.match):
        refusal.trigger()


def test_internal_rows_are_the_only_ones_without_a_trigger():
    for r in REFUSALS:
        assert (r.trigger is None) == (r.reason == INTERNAL and r.error is None), r.what


def test_workspace_is_left_alone_by_a_refused_forward_run():
    """Refused before anything was written: the workspace is as it was."""
    ws = Workspace(name="audit")
    f = feeds()
    for name, value in f.items():
        ws.feed(name, value)
    with pytest.raises(errors.ArgumentError):
        ws.run_operator_once(set_arg(mul_cell_op(), "link_offset", [1, 1, 0]))
    assert sorted(ws.local_blob_names()) == ["h0", "input"]
    workspace.ResetWorkspace()
