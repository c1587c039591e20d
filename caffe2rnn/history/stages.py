"""The stages only the older ``recurrent_net`` texts took, and every text's argument order.

:mod:`caffe2rnn.recurrent_stages` holds the stages today's text shares with
its ancestors; these are the ones it outgrew: v1's literal input gradient
(bug B3), v2's pass-through aliases (its fix for B4, which caused B5), the
scratch era's triples, and the order in which each text passed the op's
arguments (:func:`ordered`).
"""

from ..recurrent import CALL_ORDER
from ..recurrent_stages import in_call_order


def literal_input_gradient(backward, cell_input):
    """v1's choice (until 96bafa3b2, 2017-03-21): always ``<cell_input>_grad``,
    even when no backward op writes it — bug B3."""
    return cell_input + "_grad"


def alias_pass_through_references(backward, references):
    """v2's fix for B4 (21e9049f6 Copy, 9ab756ee9 Alias; 2017-03-23/24).

    A reference consumed first by a pass-through op (``Sum``, broadcast
    ``Add``) has its per-step gradient under another name, so nothing wrote
    ``<ref>_grad``, where the C++ op read it after each step. ``Alias(<the
    real gradient>) -> <ref>_grad`` is appended to the backward step net. The
    op then adds ``<ref>_grad`` into an ``_acc`` blob and swaps the two at the
    end — which, from the second run on, doubles a shared buffer (B5).
    """
    for reference in references:
        reference_grad = reference + "_grad"
        if reference in backward.mapping and reference_grad != str(backward.mapping[reference]):
            backward.net.Alias(backward.mapping[reference], reference_grad)


#: The arguments each version passed, in its call's order (see
#: :func:`caffe2rnn.recurrent_stages.in_call_order`).
ARGUMENT_ORDER = {
    # 2017-03 .. 04 (v1, april; v2 adds recompute_blobs_on_backward)
    "v1": (
        "param",
        "alias_src",
        "alias_dst",
        "alias_offset",
        "recurrent_states",
        "initial_recurrent_state_ids",
        "link_internal",
        "link_external",
        "link_offset",
        "backward_link_internal",
        "backward_link_external",
        "backward_link_offset",
        "step_net",
        "backward_step_net",
        "timestep",
        "outputs_with_grads",
    ),
    # 2017-06 .. 08 (v3 and caffe2rnn.recurrent): backward-only ones last
    "v3": CALL_ORDER,
}
ARGUMENT_ORDER["v2"] = ARGUMENT_ORDER["v1"] + ("recompute_blobs_on_backward",)


def _newest_order():
    """2017-12 .. 2018: v3's order with the executor flag before ``step_net``
    and ``backward_step_net`` last (passed only if the backward net has ops)."""
    order = [name for name in CALL_ORDER if name != "backward_step_net"]
    order.insert(order.index("step_net"), "enable_rnn_executor")
    return tuple(order) + ("backward_step_net",)


ARGUMENT_ORDER["newest"] = _newest_order()


def ordered(arguments, version):
    """``arguments`` in ``version``'s call order, keeping only those it passed."""
    return in_call_order(arguments, ARGUMENT_ORDER[version])
