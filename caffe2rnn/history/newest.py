"""``recurrent_net`` of the executor era — Caffe2 042e8ede4, 2017-12-11 … 2018-09-27.

Commits: ``042e8ede4`` "Remove scoping assertion because it is not useful and
causing errors" (2017-12-11) to ``929c33cee`` (2018-03-26); the file was
emptied by ``5f7cccf14`` (2018-09-27, moved to PyTorch). Era E6: its ops run
with today's operators (Caffe2 042e8ede4).

Changes since v3:

* ``96e718751`` fixes **B9**: ``backward_mapping_keys`` moved inside the
  backward branch, so ``forward_only=True`` works;
* ``dc775484e``: ``enable_rnn_executor=1`` is always passed (C++: threaded
  executor on CPU, multi-stream on GPU; here steps still run in order — the
  executor was required to give bit-identical results); the cell net keeps
  type ``'simple'``;
* ``201087e1e``: ``step_net`` / ``backward_step_net`` are passed as NetDef
  objects, and ``backward_step_net`` **only if the backward net has ops** —
  a cell whose gradient is pure pass-through gets no backward net, which the
  op reads as forward-only;
* ``042e8ede4``: no scoping assertion. (``a83a9b836`` left an unused
  ``map_to_dual_list`` helper in the function; it builds nothing.)
"""

from ..recurrent_stages import (
    accumulate_linked_gradients,
    build_backward_cell,
    find_references,
    op_arguments,
    plan_links,
    scoper,
)
from .building import building
from .stages import ordered


def recurrent_net(
    net,
    cell_net,
    inputs,
    initial_cell_inputs,
    links,
    timestep=None,
    scope=None,
    outputs_with_grads=(0,),
    recompute_blobs_on_backward=None,
    forward_only=False,
):
    """Add the 2017-12 ``RecurrentNetwork`` op to ``net``; return its outputs
    minus the step workspaces."""
    with building("newest"):
        assert len(inputs) == 1, "Only one input blob is supported so far"
        op_name = net.NextName("recurrent")
        s = scoper(op_name, scope)
        references = find_references(cell_net.Proto(), inputs, initial_cell_inputs, timestep)
        backward = None
        if not forward_only:
            backward = build_backward_cell(cell_net, recompute_blobs_on_backward)
        all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
        cell_net.Proto().type = "simple"

        plan = plan_links(inputs, initial_cell_inputs, links, s, backward)
        if backward is not None:
            backward.net.Proto().external_input.extend(cell_net.Proto().external_input)
            backward.net.Proto().external_input.extend(cell_net.Proto().external_output)
        if backward is not None:
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
        arguments["enable_rnn_executor"] = 1
        arguments["step_net"] = cell_net.Proto()  # a NetDef now (Argument.n)
        if backward is not None:
            del arguments["backward_step_net"]
            if len(backward.net.Proto().op) != 0:  # 201087e1e: only if non-empty
                arguments["backward_step_net"] = backward.net.Proto()
        results = net.RecurrentNetwork(
            all_inputs, plan.outputs + [s("step_workspaces")], **ordered(arguments, "newest")
        )
        cell_net.Proto().type = "simple"
        return results[:-1]
