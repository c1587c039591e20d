"""``brew.cond`` and ``brew.loop``: If and While over model helpers (929c33cee).

A model helper's ``net`` is the branch or the loop body;
``external_blobs`` names the blobs of the enclosing model the branch or body
may read and write (:func:`caffe2rnn.control_ops_util.add_if_op`; every other
blob it makes is local to it)::

    brew.cond(model, "cond", ["x", "y"], then_model, else_model)
    brew.loop(model, "cond", ["i", "y", "cond"], loop_model, cond_model)
"""

from ..control_ops_util import add_if_op, add_while_op


def cond(model, cond_blob, external_blobs, then_model, else_model=None):
    """``If(cond_blob)``: run ``then_model.net``, else ``else_model.net``, in ``model.net``."""
    add_if_op(
        model.net,
        cond_blob,
        external_blobs,
        then_model.net,
        else_model.net if else_model else None,
    )


def loop(model, cond_blob, external_blobs, loop_model, cond_model=None):
    """``While(cond_blob)``: run ``cond_model.net`` (if given) and, while the
    condition holds, ``loop_model.net`` and the condition again, in ``model.net``."""
    add_while_op(
        model.net,
        cond_blob,
        external_blobs,
        loop_model.net,
        cond_model.net if cond_model else None,
    )
