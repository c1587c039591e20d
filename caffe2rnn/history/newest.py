"""``recurrent_net`` of the executor era — seed 001 #8, 2017-12-11 … 2018-09-27.

Commits: ``042e8ede4`` "Remove scoping assertion because it is not useful and
causing errors" (2017-12-11) to ``929c33cee`` (2018-03-26); the file was
emptied by ``5f7cccf14`` (2018-09-27, moved to PyTorch). Core era E6, operator
era ``newest`` (seed 004's op, history.md §3.6).

Changes since v3 (history.md §2.10):

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
from ..recurrent_stages import (accumulate_linked_gradients, build_backward_cell,
                                find_references, parameters, plan_links, scoper,
                                unpack_triples)
from .era import bind_built_op, building


def recurrent_net(net, cell_net, inputs, initial_cell_inputs, links,
                  timestep=None, scope=None, outputs_with_grads=(0,),
                  recompute_blobs_on_backward=None, forward_only=False):
    """Add the 2017-12 ``RecurrentNetwork`` op to ``net``; return its outputs
    minus the step workspaces."""
    with building("newest") as chosen:
        assert len(inputs) == 1, "Only one input blob is supported so far"
        op_name = net.NextName('recurrent')
        s = scoper(op_name, scope)
        references = find_references(cell_net.Proto(), inputs, initial_cell_inputs,
                                     timestep)
        backward = None
        if not forward_only:
            backward = build_backward_cell(cell_net, recompute_blobs_on_backward)
        all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] \
            + references
        cell_net.Proto().type = 'simple'

        plan = plan_links(inputs, initial_cell_inputs, links, s, backward)
        if backward is not None:
            backward.net.Proto().external_input.extend(cell_net.Proto().external_input)
            backward.net.Proto().external_input.extend(cell_net.Proto().external_output)
        link_internal, link_external, link_offset = unpack_triples(plan.forward_links)
        alias_src, alias_dst, alias_offset = unpack_triples(plan.aliases)
        recurrent_inputs = [str(x[1]) for x in initial_cell_inputs]
        if backward is not None:
            accumulate_linked_gradients(backward.net)

        backward_args = {}
        if backward is not None:
            b_internal, b_external, b_offset = unpack_triples(plan.backward_links)
            params, param_grads = parameters(references, backward)
            backward_args = {
                'param': [all_inputs.index(p) for p in params],
                'backward_link_internal': [str(l) for l in b_internal],
                'backward_link_external': [str(l) for l in b_external],
                'backward_link_offset': b_offset,
                'outputs_with_grads': outputs_with_grads,
                'recompute_blobs_on_backward': list(backward.recompute),
                'param_grads': param_grads,
            }
            if len(backward.net.Proto().op) != 0:
                backward_args['backward_step_net'] = backward.net.Proto()
        results = net.RecurrentNetwork(
            all_inputs,
            plan.outputs + [s("step_workspaces")],
            alias_src=alias_src,
            alias_dst=[str(a) for a in alias_dst],
            alias_offset=alias_offset,
            recurrent_states=plan.recurrent_states,
            initial_recurrent_state_ids=[all_inputs.index(i) for i in recurrent_inputs],
            link_internal=[str(l) for l in link_internal],
            link_external=[str(l) for l in link_external],
            link_offset=link_offset,
            enable_rnn_executor=1,
            step_net=cell_net.Proto(),
            timestep="timestep" if timestep is None else str(timestep),
            **backward_args
        )
        cell_net.Proto().type = 'simple'
        bind_built_op(net, chosen)
        return results[:-1]
