"""The behaviours of the recurrent op that changed across Caffe2's history.

Each is a small object with named hooks, so a historical era (history.md
§3.3–3.6) can replace one without touching the op's loop:

========================  =====================================  ===========================
behaviour                 seed 004 (2017-09 .. 2018)             hooks
========================  =====================================  ===========================
link application          ``rnn_internal_apply_link`` ops        ``apply_links(...)``
                          prepended to the step nets
external gradients        prepended accumulate op (``_all``),    ``prepare``,
                          one add before the loop (``_last``)    ``before_backward``
parameter gradients       ``_tmpstep`` rename + appended Sum     ``param``, ``prepare``,
                                                                 ``before_backward``
initial-state gradient    shared view (>= 2-D), striped sum      ``write``
                          (1-D)
forward-only workspaces   cycle over ``num_workspaces``          ``num_workspaces``,
                          (default 2)                            ``prepare``, ``index``
========================  =====================================  ===========================

The operators read ``self.policies``; :data:`SEED_004` is what they use
unless an era was chosen for them: :data:`V1`, :data:`V2`, :data:`V3` are
the operator semantics of the historical eras (history.md §3.3–3.5, used by
:mod:`caffe2rnn.history`), selected per op by :func:`use` (a block) or
:func:`bind` (the op a historical ``recurrent_net`` built) — never by an
argument in the OperatorDef.
"""

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...errors import DTypeError, EnforceNotMet
from ..base import Operator
from ..registry import register
from .accumulate import AccumulateOpsAndLast
from .initial_states import ShareOrStripe
from .links import add_apply_link_ops, read_timestep
from .param_gradients import Param, TmpstepSum
from .step_workspaces import CycleWhenForwardOnly


@dataclass(frozen=True)
class RecurrentPolicies:
    apply_links: Callable
    external_gradients: Any
    param_gradients: Any
    initial_state_gradient: Any
    step_workspaces: Any

    def __get__(self, op, owner=None):
        # ``policies = SEED_004`` on an op class makes this a (non-data)
        # descriptor: the first read on an op instance resolves the era
        # (:func:`resolve`) and caches it on the instance, so set-up and every
        # later run of that op use the same policies.
        if op is None:
            return self
        chosen = resolve(self, op.def_)
        op.__dict__["policies"] = chosen
        return chosen


SEED_004 = RecurrentPolicies(
    apply_links=add_apply_link_ops,
    external_gradients=AccumulateOpsAndLast(),
    param_gradients=TmpstepSum(),
    initial_state_gradient=ShareOrStripe(),
    step_workspaces=CycleWhenForwardOnly(),
)


# ---------------------------------------------------------------------------
# Historical eras (caffe2rnn.history). Everything below is additive: an op
# whose era nobody chose keeps SEED_004.
# ---------------------------------------------------------------------------
_in_force = contextvars.ContextVar("recurrent_policies", default=None)
_bound = {}


AMBIGUOUS = object()


def resolve(default, op_def):
    """The policies the op ``op_def`` runs with: those of the :func:`use` block
    in force, else those bound to it by a historical ``recurrent_net``
    (:func:`bind`), else ``default``."""
    chosen = _in_force.get()
    if chosen is None:
        chosen = _bound.get(op_key(op_def), default)
    if chosen is AMBIGUOUS:
        raise EnforceNotMet(
            "%s: this exact op was built by several historical recurrent_net "
            "versions of different eras; choose one with history.era(...)" % op_def.type
        )
    return chosen


def op_key(op_def):
    """What ties a forward op and its gradient op to the era they were built in.

    Both carry the step-workspaces blob (last output / last input) and the
    same ``step_net`` / ``backward_step_net`` arguments; none of this is an
    argument added for us, so the OperatorDef stays what the seed built.
    """
    workspaces = op_def.output[-1] if op_def.type == "RecurrentNetwork" else op_def.input[-1]
    nets = tuple(
        arg.SerializeToString(deterministic=True)
        for arg in op_def.arg
        if arg.name in ("step_net", "backward_step_net")
    )
    return (workspaces, nets)


def bind(op_def, policies):
    """Make ops built from ``op_def`` (and their gradient) default to ``policies``.

    If two versions built the very same op with different policies, creating
    it raises unless an era is chosen explicitly (never a silent guess).
    """
    key = op_key(op_def)
    previous = _bound.get(key, policies)
    _bound[key] = policies if previous is policies else AMBIGUOUS


def clear_bindings():
    """Forget every :func:`bind` (ops then default to the class's policies)."""
    _bound.clear()


@contextlib.contextmanager
def use(policies):
    """Create (and run) RecurrentNetwork ops with ``policies`` in this block."""
    token = _in_force.set(policies)
    try:
        yield policies
    finally:
        _in_force.reset(token)


@register("rnn_history_accumulate_param_gradient", inputs=3, outputs=1, enforce_inplace=[(2, 0)])
class AccumulateParamGradientOp(Operator):
    """What the 2016-12 .. 2017-06 C++ loop did after each backward step.

    Inputs (timestep, ``<param>_grad``, ``<param>_grad_acc``), output the
    accumulator (in place). ``acc += grad`` after every step; after the last
    backward step (t = 0) the two blobs' *contents* are swapped (C++
    ``std::swap(*accGradBlob, *gradBlob)``) so the gradient output holds the
    sum. The swap moves tensor objects, not values: the accumulator keeps
    whatever the gradient blob held, shared buffers included (bug B5).
    """

    def run(self):
        t = read_timestep(self, 0)
        grad, acc = self.inputs[1], self.inputs[2]
        g, a = self.input(1), self.input(2)
        if a.shape != g.shape:
            raise EnforceNotMet(
                "'%s' has shape %s but its accumulator '%s' %s"
                % (grad.name, g.shape, acc.name, a.shape)
            )
        np.add(a, g, out=a)
        if t == 0:
            grad.value, acc.value = acc.value, grad.value


class AccumulateAndSwap:
    """v1, 002, v2 (C++ until 0c2c95309, 2017-06-05): ``_acc`` blob plus swap.

    The per-step gradient is read from the gradient *output* ``<param>_grad``
    (``param_grads`` did not exist before 8e01e4c8b); the accumulator
    ``<param>_grad_acc`` lived in the op's private workspace in C++ and is a
    blob of the op's workspace here, so it can be inspected.
    """

    def param(self, param, grad, cell_grad_blob, step_net):
        return Param(param, grad, grad + "_acc")

    def prepare(self, step_net, params, device_option):
        # The timestep blob is input 0 of the link ops set up just before.
        timestep = next(
            (op.input[0] for op in step_net.op if op.type == "rnn_internal_apply_link"), None
        )
        if params and timestep is None:
            raise EnforceNotMet(
                "backward step net '%s' has no link ops to take "
                "the timestep blob from" % step_net.name
            )
        for p in params:
            op = step_net.op.add()
            op.type = "rnn_history_accumulate_param_gradient"
            op.input.extend([timestep, p.grad, p.cell_gradient])
            op.output.append(p.cell_gradient)
            op.device_option.CopyFrom(device_option)
            step_net.external_input.extend([p.grad, p.cell_gradient])

    def before_backward(self, ws, params):
        for p in params:
            value = ws.blob(p.param).value
            if not hasattr(value, "dtype"):
                raise DTypeError("parameter '%s' is not a tensor" % p.param)
            # ResizeLike without a fill: uninitialised the first time, the
            # previous run's content later.
            ws.create_blob(p.grad).resize(value.shape, value.dtype)
            ws.create_blob(p.cell_gradient).resize(value.shape, value.dtype).fill(0)


class CopyInitialStateGradient:
    """v1 (66ad84303, 9e7a26027): the initial-state gradient is a *copy* of the
    first rows of ``<state>_grad`` (1-D initial state: the N rows summed)."""

    def write(self, out_blob, states_grad, h0, batch):
        out = out_blob.resize(h0.shape, states_grad.dtype)
        if h0.ndim >= 2:
            np.copyto(out, states_grad.reshape(-1)[: h0.size].reshape(h0.shape))
        else:
            np.copyto(out, states_grad[0].reshape(batch, -1).sum(axis=0))


class StepWorkspacePerTimestep:
    """Before 5cf13df48 (2017-04-24) there was no forward-only mode: the op
    always kept one step workspace per timestep."""

    def num_workspaces(self, args):
        return 0

    def prepare(self, scratch, seq_len, has_backward_pass, num_workspaces):
        scratch.grow(seq_len)

    def index(self, t, has_backward_pass, num_workspaces):
        return t


# Link application and external-gradient adds were loops in the C++ op before
# 2017-05/09 and are ops here in every era: same place in the step, same sums.
V1 = RecurrentPolicies(
    apply_links=add_apply_link_ops,
    external_gradients=AccumulateOpsAndLast(),
    param_gradients=AccumulateAndSwap(),
    initial_state_gradient=CopyInitialStateGradient(),
    step_workspaces=StepWorkspacePerTimestep(),
)
V2 = RecurrentPolicies(
    apply_links=add_apply_link_ops,
    external_gradients=AccumulateOpsAndLast(),
    param_gradients=AccumulateAndSwap(),
    initial_state_gradient=ShareOrStripe(),
    step_workspaces=StepWorkspacePerTimestep(),
)
V3 = RecurrentPolicies(
    apply_links=add_apply_link_ops,
    external_gradients=AccumulateOpsAndLast(),
    param_gradients=TmpstepSum(),
    initial_state_gradient=ShareOrStripe(),
    step_workspaces=CycleWhenForwardOnly(),
)
