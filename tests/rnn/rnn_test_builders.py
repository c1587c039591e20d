"""Helpers to build RecurrentNetwork ops by hand in the rnn tests.

The step nets are written op by op, as Caffe2's own hypothesis tests did for
the Elman (``Mul``) cell, so the tests do not depend on ``recurrent_net``.
"""

import numpy as np

from caffe2rnn import eras
from caffe2rnn.gradient_checker import gradients
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument


def op(op_type, inputs, outputs, **args):
    o = caffe2_pb2.OperatorDef()
    o.type = op_type
    o.input.extend(inputs)
    o.output.extend(outputs)
    for key, value in args.items():
        o.arg.add().CopyFrom(MakeArgument(key, value))
    return o


def net(name, ops, external_inputs=()):
    n = caffe2_pb2.NetDef()
    n.name = name
    n.op.extend(ops)
    n.external_input.extend(external_inputs)
    return n


def rnn_op(
    inputs,
    outputs,
    step_net,
    backward_net=None,
    *,
    states,
    initial_ids,
    links,
    backward_links=(),
    aliases,
    params=(),
    outputs_with_grads=(0,),
    as_text=True,
    **extra,
):
    """A RecurrentNetwork OperatorDef. ``links``: (internal, external, offset[,
    window]); ``aliases``: (src, dst, offset). Step nets go in as text (the
    E0-E5 way) or, with ``as_text=False``, as NetDefs in ``Argument.n``."""

    def netarg(name, n):
        if as_text:
            return MakeArgument(name, str(n))
        with eras.use("E6"):
            return MakeArgument(name, n)

    o = op("RecurrentNetwork", inputs, outputs)
    o.arg.add().CopyFrom(netarg("step_net", step_net))
    if backward_net is not None:
        o.arg.add().CopyFrom(netarg("backward_step_net", backward_net))
    args = dict(
        recurrent_states=list(states),
        initial_recurrent_state_ids=list(initial_ids),
        link_internal=[l[0] for l in links],
        link_external=[l[1] for l in links],
        link_offset=[l[2] for l in links],
        link_window=[l[3] if len(l) > 3 else 1 for l in links],
        backward_link_internal=[l[0] for l in backward_links],
        backward_link_external=[l[1] for l in backward_links],
        backward_link_offset=[l[2] for l in backward_links],
        alias_src=[a[0] for a in aliases],
        alias_dst=[a[1] for a in aliases],
        alias_offset=[a[2] for a in aliases],
        param=list(params),
        outputs_with_grads=list(outputs_with_grads),
    )
    args.update(extra)
    for key, value in args.items():
        o.arg.add().CopyFrom(MakeArgument(key, value))
    return o


def run_forward(op_def, feeds, ws=None):
    ws = ws or Workspace(name="rnn_test")
    for name, value in feeds.items():
        ws.feed(name, value)
    ws.run_operator_once(op_def)
    return ws


def run_backward(op_def, ws, output_grads):
    """Run the gradient ops of ``op_def`` (made by the registered maker) with
    ``output_grads`` {output index: array}; return {input name: gradient}."""
    g_output = [
        op_def.output[j] + "_grad" if j in output_grads else None for j in range(len(op_def.output))
    ]
    grad_ops, g_input = get_gradient_for_op(op_def, g_output)
    for j, value in output_grads.items():
        ws.feed(g_output[j], value)
    for grad_op in grad_ops:
        ws.run_operator_once(grad_op)
    return {name: ws.fetch(g) for name, g in zip(op_def.input, g_input) if g}


def check_with_finite_differences(op_def, feeds, names, outputs_with_grads):
    """Every named input's gradient vs central differences (float64)."""
    arrays = [feeds[name] for name in op_def.input]
    for name in names:
        analytic, numeric = gradients(
            op_def, arrays, list(op_def.input).index(name), outputs_with_grads
        )
        np.testing.assert_allclose(
            analytic, numeric, rtol=1e-6, atol=1e-8, err_msg="gradient of %s" % name
        )


def check_two_state_outputs(ws, h, c, rtol):
    """The four aliases of a (hidden, cell) op against reference rows 0..T."""
    T = len(h) - 1
    for name, ref in [
        ("hidden_all", h[1:]),
        ("hidden_last", h[T:]),
        ("cell_all", c[1:]),
        ("cell_last", c[T:]),
    ]:
        np.testing.assert_allclose(ws.fetch(name), ref, rtol=rtol, err_msg=name)


def seeded_state_gradients(h, c, go):
    """d loss / d rows of the hidden and cell tensors from the four output
    gradients ``go`` (_all rows 1..T, _last row T), before the recurrence."""
    T = len(h) - 1
    gh, gc = np.zeros_like(h), np.zeros_like(c)
    gh[1:] += go[0]
    gh[T] += go[1][0]
    gc[1:] += go[2]
    gc[T] += go[3][0]
    return gh, gc
