"""``recurrent_net`` v2 — Caffe2 c2913bcac, 2017-04-12 … 2017-04-24.

Commits: ``c2913bcac`` "Remove prof_dag from step net" (2017-04-12) to
``51b152798`` (2017-04-22); the feature commit is ``faaafeccd`` (2017-04-11,
"option to recompute blobs backward pass with massive memory savings");
superseded by ``5cf13df48`` "Forward-only rnns" (2017-04-24). Era E4 (its ops
run with the C++ of the time, :mod:`caffe2rnn.history.operator_eras`).

The 2017-04-07 text (:mod:`.april`: B3 and B4 fixed, reference ``Alias``) plus
**``recompute_blobs_on_backward``**: the forward ops writing the listed blobs
are copied to the front of the backward step net, and the C++ op keeps those
blobs in one shared workspace instead of one copy per timestep — less memory,
the same gradients. The list always reaches the op (empty when ``None``).

Still present: **B5** (the reference ``Alias`` and the ``_acc`` swap double a
shared buffer from the second run on) and **B7** (linked gradients
overwritten). Python 2 only in the original.
"""

from .april import build
from .building import building


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
):
    """Add the v2 ``RecurrentNetwork`` op to ``net``; return its outputs minus
    the step workspaces."""
    with building("v2"):
        return build(
            net,
            cell_net,
            inputs,
            initial_cell_inputs,
            links,
            timestep,
            scope,
            outputs_with_grads,
            recompute_blobs_on_backward=recompute_blobs_on_backward,
            pass_recompute=True,
        )
