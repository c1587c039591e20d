"""``recurrent_net`` of the 2017-04-07 module — Caffe2 commit ``89ea32b11``.

Valid 2017-04-07 23:48 → 2017-04-11 01:54 ("remove workspace sequence id";
superseded by ``cd704ee12``). Era E3: its ops
run with the C++ of the time (``_acc`` + swap, initial-state gradient shares
``<state>_grad``; :mod:`caffe2rnn.history.operator_eras`).

v1 plus five commits:

* ``96bafa3b2`` / ``0d616f25c`` (2017-03-21/28), **B3 fixed**: when no
  backward op writes ``<cell_input>_grad`` (the cell starts with ``Sum`` on
  it), the offset-0 backward link uses the blob that really holds the
  gradient, ``backward_mapping[cell_input]``;
* ``21e9049f6`` / ``9ab756ee9`` (2017-03-23/24), **B4 fixed**: a reference
  with a pass-through gradient gets ``Alias(<real gradient>) -> <ref>_grad``
  in the backward step net — which introduces **B5** with the ``_acc`` swap;
* ``89ea32b11``: the ``_workspace_seq`` counter removed (the blob is
  ``<scope>/step_workspaces`` again; a stale ``global`` statement remained).

``backward_mapping`` values stay ``BlobReference``; still Python 2 only.
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
from .stages import alias_pass_through_references, ordered


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
    """Add the 2017-04-07 ``RecurrentNetwork`` op to ``net``; return its outputs
    minus the step workspaces."""
    with building("april"):
        return build(
            net,
            cell_net,
            inputs,
            initial_cell_inputs,
            links,
            timestep,
            scope,
            outputs_with_grads,
        )


def build(
    net,
    cell_net,
    inputs,
    initial_cell_inputs,
    links,
    timestep,
    scope,
    outputs_with_grads,
    recompute_blobs_on_backward=None,
    pass_recompute=False,
):
    """The body shared with v2, which only adds ``recompute_blobs_on_backward``."""
    assert len(inputs) == 1, "Only one input blob is supported so far"
    check_scoping(cell_net)
    op_name = net.NextName("recurrent")
    s = scoper(op_name, scope)
    references = find_references(cell_net.Proto(), inputs, initial_cell_inputs, timestep)
    backward = build_backward_cell(cell_net, recompute_blobs_on_backward)
    all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
    cell_net.Proto().type = "simple"

    plan = plan_links(inputs, initial_cell_inputs, links, s, backward)
    alias_pass_through_references(backward, references)
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
        plan.outputs + [s("step_workspaces")],
        **ordered(arguments, "v2" if pass_recompute else "v1"),
    )
    return results[:-1]
