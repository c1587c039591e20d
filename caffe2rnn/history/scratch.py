"""``recurrent_net`` of the scratch era: Caffe2 3b190c4df (S1) and 3913181a4 (S2).

The first ``caffe2/python/recurrent.py`` (3b190c4df, 2016-12-20, "RNNs API
simplification", era E0) and its 2017-01-24 revision (3913181a4, "Remove
recurrent_sizes from RecurrentNetwork", era E1), before step workspaces
existed (32d884d22, 2017-01-27). The op kept every timestep's intermediates
in tensors the *caller* sized:

* ``scratch_sizes`` (positional): one per *scratch* — a blob the forward cell
  writes and the backward cell reads (the LSTM's ``gates_t``). Each gets a
  T x N x size tensor ``<scratch>_states`` linked at row t, and a gradient
  tensor ``<scratch>_states_grad``;
* S1: ``initial_cell_inputs`` are triples ``(cell input, initial blob,
  size)``; the op gets ``recurrent_inputs`` by name and ``recurrent_sizes``;
  params by name with their per-step gradient blob names (``param_gradient``);
* S2 (:func:`recurrent_net_s2`): pairs; ``param`` and ``recurrent_input_ids``
  are input indices, the size is read from the initial state;
* the gradient of the step input is a *backward alias* of a scratch gradient
  tensor when it is one (the LSTM's in-place ``Sum`` makes ``input_t``'s
  gradient ``gates_t_grad``), else a backward link listed in
  ``input_gradient_ids``.

Only output 0 receives an external gradient, aliases are ``_last`` then
``_all`` (outputs ``_all, _last``), and the op returns its outputs as they are
(there is no step-workspaces blob yet). The operators of the time are
:mod:`.scratch_operator`; their gradient never computed the initial states'
gradient (bug B1, fixed by 66ad84303). Python 2 only in the original
(``map(...)`` then ``+=``).
"""

from .. import core
from ..recurrent_stages import find_references, find_scratches, scoper, unpack_triples
from .building import building


def _layout(net, cell_net, inputs, initial_cell_inputs, links, timestep, scope):
    """What both texts compute alike: references, backward cell, scratches,
    links, aliases and outputs."""
    assert len(inputs) == 1, "Only one input blob is supported so far"
    op_name = net.NextName("recurrent")
    s = scoper(op_name, scope)
    pairs = [(x[0], x[1]) for x in initial_cell_inputs]
    references = [str(r) for r in find_references(cell_net.Proto(), inputs, pairs, timestep)]

    cell = cell_net.Proto()
    outputs_map = {o: o + "_grad" for o in cell.external_output}
    backward_ops, mapping = core.GradientRegistry.GetBackwardPass(cell.op, outputs_map)
    mapping = {str(k): str(v) for k, v in mapping.items()}
    backward = core.Net("RecurrentBackwardStep")
    del backward.Proto().op[:]
    backward.Proto().op.extend(backward_ops)
    scratches = find_scratches(cell, backward.Proto())

    all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
    cell.type = "simple"
    backward.Proto().type = "simple"

    forward_links, backward_links, aliases, backward_aliases = [], [], [], []
    recurrent_states, outputs, grad_to_state = [], [], {}
    for cell_input, _ in pairs:
        cell_input = str(cell_input)
        state = s(cell_input + "_states")
        cell_output = links[cell_input]
        forward_links += [(cell_input, state, 0), (cell_output, state, 1)]
        backward_links += [
            (cell_input + "_grad", state + "_grad", 0),
            (cell_output + "_grad", state + "_grad", 1),
        ]
        backward.Proto().external_input.append(str(cell_output) + "_grad")
        aliases += [(state, cell_output + "_last", -1), (state, cell_output + "_all", 1)]
        outputs += [cell_output + "_all", cell_output + "_last"]
        recurrent_states.append(state)

    for scratch in scratches:  # already scoped by the cell
        forward_links.append((scratch, scratch + "_states", 0))
        backward_links.append((scratch + "_grad", scratch + "_states_grad", 0))
        backward.Proto().external_input.append(scratch)
        grad_to_state[scratch + "_grad"] = scratch + "_states_grad"

    input_gradient_ids = []
    for input_id, (input_t, input_blob) in enumerate(inputs):
        forward_links.append((str(input_t), str(input_blob), 0))
        input_grad = str(input_blob) + "_grad"
        if mapping[str(input_t)] != str(input_t) + "_grad":
            # The step input's gradient is a scratch's: expose that tensor.
            backward_aliases.append((grad_to_state[mapping[str(input_t)]], input_grad, 0))
        else:
            backward_links.append((str(input_t) + "_grad", input_grad, 0))
            input_gradient_ids.append(input_id)

    backward.Proto().external_input.extend(cell.external_input)
    backward.Proto().external_input.extend(cell.external_output)
    params = [x for x in references if x in mapping]
    link_internal, link_external, link_offset = unpack_triples(forward_links)
    b_internal, b_external, b_offset = unpack_triples(backward_links)
    alias_src, alias_dst, alias_offset = unpack_triples(aliases)
    ba_src, ba_dst, ba_offset = unpack_triples(backward_aliases)
    return dict(
        all_inputs=all_inputs,
        outputs=outputs,
        params=params,
        mapping=mapping,
        scratches=scratches,
        recurrent_states=recurrent_states,
        arguments=dict(
            alias_src=list(alias_src),
            alias_dst=[str(d) for d in alias_dst],
            alias_offset=list(alias_offset),
            recurrent_states=recurrent_states,
            link_internal=[str(x) for x in link_internal],
            link_external=[str(x) for x in link_external],
            link_offset=list(link_offset),
            backward_link_internal=[str(x) for x in b_internal],
            backward_link_external=[str(x) for x in b_external],
            backward_link_offset=list(b_offset),
            backward_alias_src=list(ba_src),
            backward_alias_dst=list(ba_dst),
            backward_alias_offset=list(ba_offset),
            scratch=[sc + "_states" for sc in scratches],
            backward_scratch=[sc + "_states_grad" for sc in scratches],
        ),
        nets=dict(
            step_net=str(cell),
            backward_step_net=str(backward.Proto()),
            timestep="timestep" if timestep is None else str(timestep),
            input_gradient_ids=input_gradient_ids,
        ),
    )


def recurrent_net(
    net, cell_net, inputs, initial_cell_inputs, links, scratch_sizes, timestep=None, scope=None
):
    """Add the 2016-12 ``RecurrentNetwork`` op (S1, era E0) to ``net``; return its
    outputs ``[out0_all, out0_last, ...]``. ``initial_cell_inputs`` are
    ``(cell input, initial blob, size)`` triples; ``scratch_sizes`` gives one
    size per scratch blob of the cell."""
    with building("scratch"):
        layout = _layout(net, cell_net, inputs, initial_cell_inputs, links, timestep, scope)
        a, n = layout["arguments"], layout["nets"]
        return net.RecurrentNetwork(
            layout["all_inputs"],
            layout["outputs"],
            param=layout["params"],
            param_gradient=[layout["mapping"][p] for p in layout["params"]],
            alias_src=a["alias_src"],
            alias_dst=a["alias_dst"],
            alias_offset=a["alias_offset"],
            recurrent_states=a["recurrent_states"],
            recurrent_inputs=[str(x[1]) for x in initial_cell_inputs],
            recurrent_sizes=[int(x[2]) for x in initial_cell_inputs],
            link_internal=a["link_internal"],
            link_external=a["link_external"],
            link_offset=a["link_offset"],
            backward_link_internal=a["backward_link_internal"],
            backward_link_external=a["backward_link_external"],
            backward_link_offset=a["backward_link_offset"],
            backward_alias_src=a["backward_alias_src"],
            backward_alias_dst=a["backward_alias_dst"],
            backward_alias_offset=a["backward_alias_offset"],
            scratch=a["scratch"],
            backward_scratch=a["backward_scratch"],
            scratch_sizes=scratch_sizes,
            **n,
        )


def recurrent_net_s2(
    net, cell_net, inputs, initial_cell_inputs, links, scratch_sizes, timestep=None, scope=None
):
    """Add the 2017-01-24 ``RecurrentNetwork`` op (S2, era E1) to ``net``:
    ``initial_cell_inputs`` are pairs, params and initial states go by index."""
    with building("s2"):
        layout = _layout(net, cell_net, inputs, initial_cell_inputs, links, timestep, scope)
        a, n = layout["arguments"], layout["nets"]
        all_inputs = layout["all_inputs"]
        recurrent_inputs = [str(x[1]) for x in initial_cell_inputs]
        return net.RecurrentNetwork(
            all_inputs,
            layout["outputs"],
            param=[all_inputs.index(p) for p in layout["params"]],
            alias_src=a["alias_src"],
            alias_dst=a["alias_dst"],
            alias_offset=a["alias_offset"],
            recurrent_states=a["recurrent_states"],
            recurrent_inputs=recurrent_inputs,
            recurrent_input_ids=[all_inputs.index(r) for r in recurrent_inputs],
            link_internal=a["link_internal"],
            link_external=a["link_external"],
            link_offset=a["link_offset"],
            backward_link_internal=a["backward_link_internal"],
            backward_link_external=a["backward_link_external"],
            backward_link_offset=a["backward_link_offset"],
            backward_alias_src=a["backward_alias_src"],
            backward_alias_dst=a["backward_alias_dst"],
            backward_alias_offset=a["backward_alias_offset"],
            scratch=a["scratch"],
            backward_scratch=a["backward_scratch"],
            scratch_sizes=scratch_sizes,
            **n,
        )
