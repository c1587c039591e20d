"""The behaviours of the recurrent op that changed across Caffe2's history.

Each is a small object with named hooks, so a historical era (history.md
§3.3–3.6) can replace one without touching the op's loop:

======================  ====================================  =====================
behaviour               seed 004 (2017-09 .. 2018)            hooks
======================  ====================================  =====================
link application        ``rnn_internal_apply_link`` ops       ``apply_links(...)``
                        prepended to the step nets
external gradients      prepended accumulate op (``_all``),   ``prepare``,
                        one add before the loop (``_last``)   ``before_backward``
parameter gradients     ``_tmpstep`` rename + appended Sum    ``param``, ``prepare``,
                                                              ``before_backward``
initial-state gradient  shared view (>= 2-D), striped sum     ``write``
                        (1-D)
forward-only workspaces cycle over ``num_workspaces``         ``num_workspaces``,
                        (default 2)                           ``prepare``, ``index``
======================  ====================================  =====================

The operators read ``self.policies``; :data:`SEED_004` is what they use.
"""
from dataclasses import dataclass
from typing import Any, Callable

from .accumulate import AccumulateOpsAndLast
from .initial_states import ShareOrStripe
from .links import add_apply_link_ops
from .param_gradients import TmpstepSum
from .step_workspaces import CycleWhenForwardOnly


@dataclass(frozen=True)
class RecurrentPolicies:
    apply_links: Callable
    external_gradients: Any
    param_gradients: Any
    initial_state_gradient: Any
    step_workspaces: Any


SEED_004 = RecurrentPolicies(
    apply_links=add_apply_link_ops,
    external_gradients=AccumulateOpsAndLast(),
    param_gradients=TmpstepSum(),
    initial_state_gradient=ShareOrStripe(),
    step_workspaces=CycleWhenForwardOnly(),
)
