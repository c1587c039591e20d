"""``recurrent_net`` v3 — Caffe2 0cdd09da6, 2017-06-29 … 2017-08-17, bug B9 included.

Commits: ``0cdd09da6`` "Dict fixes/improvements and unittest targets for
Python 3 in caffe2 core" (2017-06-29) to ``c0ef34a60`` (2017-07-17), and
again after the revert ``44e868108`` (2017-08-16); superseded by
``96e718751`` "fix forward_only mode" (2017-08-17). Era E5 (its ops run
with the C++ of the time, :mod:`caffe2rnn.history.operator_eras`).

Changes since v2:

* **forward_only** (``5cf13df48``): no backward step net is built and every
  backward-only argument is left out (the op then cycles 2 step workspaces);
* **param_grads** (``8e01e4c8b``, fixes **B5**): for each parameter, the blob
  the cell writes its per-step gradient into; the reference ``Alias`` is gone;
* the **``_accum`` rewrite** (``417f74509``, effective with ``f49200962``,
  fixes **B7**): a backward op writing a blob whose gradient arrives through
  a link writes ``<blob>_accum`` and a ``Sum`` adds the two;
* the cell net's type is ``'rnn'`` while the op is built (the C++
  single-threaded executor), then ``'simple'`` again;
* Python 3 (``viewitems``/``viewkeys``, list comprehensions).

**B9**, kept on purpose: ``backward_mapping_keys`` is computed outside the
``if`` that guards the backward branch, so ``forward_only=True`` raises
``UnboundLocalError`` while the net is being built (the 0cdd09da6 codemod
hoisted the line; ``rnn_cell`` did not pass ``forward_only`` on, so nobody
noticed until 96e718751). :mod:`caffe2rnn.recurrent` is this text with the fix.
"""

from ..recurrent_stages import (
    accumulate_linked_gradients,
    build_backward_cell,
    check_scoping,
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
    """Add the v3 ``RecurrentNetwork`` op to ``net``; return its outputs minus
    the step workspaces. ``forward_only=True`` raises UnboundLocalError (B9)."""
    with building("v3"):
        assert len(inputs) == 1, "Only one input blob is supported so far"
        check_scoping(cell_net)
        op_name = net.NextName("recurrent")
        s = scoper(op_name, scope)
        references = find_references(cell_net.Proto(), inputs, initial_cell_inputs, timestep)
        backward = None
        if not forward_only:
            backward = build_backward_cell(cell_net, recompute_blobs_on_backward)
            backward_mapping = backward.mapping
        all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
        cell_net.Proto().type = "rnn"

        plan = plan_links(inputs, initial_cell_inputs, links, s, backward)
        if backward is not None:
            backward.net.Proto().external_input.extend(cell_net.Proto().external_input)
            backward.net.Proto().external_input.extend(cell_net.Proto().external_output)
        if backward is not None:
            accumulate_linked_gradients(backward.net)
        # B9: read before the guard below; unbound when forward_only.
        backward_mapping_keys = set(backward_mapping)  # noqa: F841
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
            all_inputs, plan.outputs + [s("step_workspaces")], **ordered(arguments, "v3")
        )
        cell_net.Proto().type = "simple"
        return results[:-1]
