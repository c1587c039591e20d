"""``recurrent_net`` v1 — Caffe2 22b4533f0, 2017-03-14 … 2017-03-21.

Commits: ``22b4533f0`` "Fix workspace clashes" (2017-03-14) to ``73f75a980``
(2017-03-19); superseded by ``96bafa3b2`` (2017-03-21). Era E2 (its ops run
with the C++ of the time, :mod:`caffe2rnn.history.operator_eras`).

What this version is: since 32d884d22 (2017-01) every
forward intermediate lives in a per-timestep workspace, so there are no
scratch tensors; initial states are passed by index; ``outputs_with_grads``
selects the outputs with an external gradient; a scoping assertion checks the
cell's inputs. New in 22b4533f0: the step-workspaces blob is named
``<scope>/step_workspaces_<n>`` with a module-global counter, because a
train and a test net built from one model shared step workspaces and raced.

What it gets wrong, fixed by the next versions:

* **B3**: the backward link of a recurrent input always uses the literal
  ``<cell_input>_grad``; when the cell's first op on it is a pass-through
  (``Sum``) nobody writes that blob and the recurrent gradient is lost;
* **B4**: a reference whose gradient is a pass-through name gets nothing: the
  op accumulates ``<ref>_grad``, which no step writes;
* **B7**: a linked gradient also produced inside the cell is overwritten.

``backward_mapping`` values are converted to ``str``; Python 2 only in the
original (``map(...)`` then ``+=``).
"""

from ..recurrent_stages import (
    build_backward_cell,
    check_scoping,
    find_references,
    op_arguments,
    plan_links,
    scoper,
)
from .building import building
from .stages import literal_input_gradient, ordered

#: The module-global counter of 22b4533f0: one step-workspaces blob per call.
_workspace_seq = 0


def recurrent_net(
    net,
    cell_net,
    inputs,
    initial_cell_inputs,
    links,
    timestep=None,
    scope=None,
    outputs_with_grads=(0,),
):
    """Add the v1 ``RecurrentNetwork`` op to ``net``; return its outputs minus
    the step workspaces (``out0_all, out0_last, ...``)."""
    global _workspace_seq
    with building("v1"):
        assert len(inputs) == 1, "Only one input blob is supported so far"
        check_scoping(cell_net)
        op_name = net.NextName("recurrent")
        s = scoper(op_name, scope)
        references = find_references(cell_net.Proto(), inputs, initial_cell_inputs, timestep)
        backward = build_backward_cell(cell_net, mapping_to_str=True)
        all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
        cell_net.Proto().type = "simple"

        plan = plan_links(
            inputs,
            initial_cell_inputs,
            links,
            s,
            backward,
            state_input_gradient=literal_input_gradient,
            input_gradient_link_first=True,
        )
        backward.net.Proto().external_input.extend(cell_net.Proto().external_input)
        backward.net.Proto().external_input.extend(cell_net.Proto().external_output)

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
            all_inputs,
            plan.outputs + [s(f"step_workspaces_{_workspace_seq}")],
            **ordered(arguments, "v1"),
        )
        _workspace_seq += 1
        return results[:-1]
