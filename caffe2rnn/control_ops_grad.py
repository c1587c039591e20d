"""``caffe2.python.control_ops_grad``: the gradients of If, While and Do.

Caffe2 wrote them in Python (d72d83528 "Backpropagation for If operator",
2017-09-18, then While; 929c33cee's ``control_ops_grad.py`` is the
reference) and registered them with ``core.GradientRegistry``; importing
:mod:`caffe2rnn` registers these. The idea, in one paragraph per op:

**Do** runs a sub-net in its own workspace. Its gradient is a *gradient Do*
(``is_gradient_op``) that runs the sub-net's backward pass
(``IR.GetBackwardPass``) in the **same** workspace the forward Do used,
popped from the workspace stack, so the backward ops find the forward's local
blobs there. The gradients of Do's outputs enter under inner names
``<inner>/_DO_OPERATOR_INNER_GRAD_``; the gradient of an outer input leaves
through a copy ``<inner>/_DO_OPERATOR_INNER_GRAD_COPY_`` bound to the outer
``<input>_grad``.

**If** runs ``then_net`` or ``else_net``. Its gradient is an ``If`` on the same
condition whose branches are the branches' backward passes; a gradient that
only one branch writes is zero-filled (or copied from the incoming gradient)
in the other branch, so it exists whichever way the condition went.

**While** runs its body (a single Do with ``copy_external_blobs``) once per
iteration, each in a workspace of its own pushed on the stack. Its gradient
is a ``While`` whose condition is ``HasScope`` (a forward workspace is left
to pop) and whose body is the body's backward pass: the iterations are
undone newest first. The incoming gradients are copied into the names the
body's backward writes before the loop, and back after each iteration.

The numbers: :mod:`tests.operators.test_ops_control_flow` checks each
gradient against finite differences.
"""

from . import core
from .errors import GradientError
from .proto import caffe2_pb2

#: Suffixes of the inner names a gradient Do binds (Caffe2's).
INNER_GRAD = "/_DO_OPERATOR_INNER_GRAD_"
INNER_GRAD_COPY = "/_DO_OPERATOR_INNER_GRAD_COPY_"


def _check(condition, message):
    """Caffe2 asserted these; a :class:`GradientError` (a RuntimeError) here."""
    if not condition:
        raise GradientError(message)


def _copy_op(source, target):
    op = caffe2_pb2.OperatorDef(type="Copy")
    op.input.append(str(source))
    op.output.append(str(target))
    return op


def _net_argument(op, name):
    for arg in op.arg:
        if arg.name == name:
            _check(arg.HasField("n"), "Expected non empty net argument " + name)
            return arg.n
    return None


def _backward_pass(subnet, init_grad):
    """``(ops, {blob name: gradient name})`` of ``subnet``'s backward pass."""
    grad_ops, grad_map = core.IR(subnet.op).GetBackwardPass(init_grad)
    return grad_ops, {str(b): str(g) for b, g in grad_map.items()}


def _gradient_net(subnet, init_grad):
    """The backward pass of ``subnet`` as a NetDef named ``<name>_grad``, its
    map, and the names its ops read before writing (inputs) and write (outputs)."""
    grad_ops, grad_map = _backward_pass(subnet, init_grad)
    inputs, outputs = set(), set()
    for op in grad_ops:
        inputs.update(str(i) for i in op.input if str(i) not in outputs)
        outputs.update(str(o) for o in op.output)
    return _grad_net(subnet, grad_ops), grad_map, inputs, outputs


def _grad_net(forward_net, grad_ops):
    """A copy of ``forward_net`` (its name + ``_grad``, its other fields) that
    holds ``grad_ops`` and no declared external inputs or outputs."""
    net = caffe2_pb2.NetDef()
    net.CopyFrom(forward_net)
    if net.name:
        net.name += "_grad"
    del net.op[:]
    net.op.extend(grad_ops)
    del net.external_input[:]
    del net.external_output[:]
    return net


def dedupe_g_output(op, g_output):
    """Give each output of ``op`` its own gradient blob: Do binds each outer
    name once, so a gradient blob shared by two outputs is copied to
    ``<output>_<grad>_DEDUP`` for the second. Returns ``(copy ops, g_output)``."""
    grad_ops, deduped, chosen = [], [], {}  # chosen: output name -> its gradient
    for output_name, grad_name in zip(op.output, g_output):
        if not grad_name:
            deduped.append(grad_name)
        elif output_name in chosen:
            deduped.append(chosen[output_name])
        elif grad_name not in chosen.values():
            chosen[output_name] = grad_name
            deduped.append(grad_name)
        else:
            copy_name = "%s_%s_DEDUP" % (output_name, grad_name)
            _check(copy_name not in chosen.values(), "Duplicate gradient name " + copy_name)
            grad_ops.append(_copy_op(grad_name, copy_name))
            chosen[output_name] = copy_name
            deduped.append(copy_name)
    return grad_ops, deduped


def _do_bindings(op):
    """Check a Do op as Caffe2's gradient code did; return its sub-net, the
    outer -> inner and inner -> outer maps and its workspace blob's name."""
    _check(op.type == "Do", "Expected Do op")
    subnet = _net_argument(op, "net")
    _check(subnet is not None, "No net argument found in Do op")
    inner_blobs = outer_blobs_idx = None
    for arg in op.arg:
        if arg.name == "inner_blobs":
            _check(inner_blobs is None, "inner_blobs redefinition")
            inner_blobs = [s.decode("utf-8") for s in arg.strings]
        elif arg.name == "outer_blobs_idx":
            _check(outer_blobs_idx is None, "outer_blobs_idx redefinition")
            outer_blobs_idx = list(arg.ints)
    _check(inner_blobs, "No inner_blobs argument found in Do op")
    _check(outer_blobs_idx, "No outer_blobs_idx argument found in Do op")
    _check(
        len(inner_blobs) == len(outer_blobs_idx),
        "Arguments inner_blobs and outer_blobs_idx of different length in Do op",
    )
    _check(len(set(inner_blobs)) == len(inner_blobs), "Found duplicates in inner_blobs in Do op")
    inputs, outputs = [str(i) for i in op.input], [str(o) for o in op.output]
    _check(inputs and outputs, "Expected at least one input and one output blob")
    _check(inputs[-1] == outputs[-1], "Expected same input/output workspace blob")
    workspace_blob = outputs[-1]
    inputs, outputs = inputs[:-1], outputs[:-1]
    _check(len(set(inputs)) == len(inputs), "Found duplicates in Do op inputs")
    _check(len(set(outputs)) == len(outputs), "Found duplicates in Do op outputs")
    ordered = inputs + outputs
    outer_to_inner, inner_to_outer = {}, {}
    for inner, index in zip(inner_blobs, outer_blobs_idx):
        _check(0 <= index < len(ordered), "Outer blob index is out of bounds in Do op")
        outer = ordered[index]
        _check(outer not in outer_to_inner, "Reusage of outer blob name " + outer + " in Do op")
        outer_to_inner[outer] = inner
        inner_to_outer[inner] = outer
    _check(
        len(outer_to_inner) == len(set(ordered)),
        "Not all outer blob names are used in blob bindings in Do op",
    )
    return subnet, outer_to_inner, inner_to_outer, workspace_blob


def gen_do_gradient(op, g_output):
    """The gradient Do of ``op`` (module docstring): ``(ops, g_input)``."""
    subnet, outer_to_inner, inner_to_outer, workspace_blob = _do_bindings(op)
    _check(len(g_output) == len(op.output), "Different number of gradient blobs and Do op outputs")
    grad_ops, g_output = dedupe_g_output(op, g_output)
    op_inputs = [str(i) for i in op.input][:-1]  # without the workspace blob
    op_outputs = [str(o) for o in op.output][:-1]

    backward_init, incoming = {}, {}  # inner output -> inner grad name; inner grad -> outer grad
    for output_name, grad_name in zip(op_outputs, g_output):
        if grad_name:
            inner = outer_to_inner[output_name]
            backward_init[core.BlobReference(inner)] = core.BlobReference(inner + INNER_GRAD)
            incoming[inner + INNER_GRAD] = str(grad_name)
    _check(incoming, "Empty initial gradient map for Do op")
    inner_grad_ops, inner_grad_map = _backward_pass(subnet, backward_init)
    if not inner_grad_ops:
        return [], [None] * len(op.input)

    # Each input gradient leaves through a copy bound to <outer input>_grad: the
    # inner gradient blob may already be bound to another outer blob.
    copies, g_input, new_outputs, bindings = [], [], [], {}
    for outer in op_inputs:
        inner = outer_to_inner[outer]
        if inner in inner_grad_map:
            copy_name, outer_grad = inner + INNER_GRAD_COPY, outer + "_grad"
            copies.append(_copy_op(inner_grad_map[inner], copy_name))
            bindings[copy_name] = outer_grad
            new_outputs.append(outer_grad)
            g_input.append(outer_grad)
        else:
            g_input.append(None)
    g_input.append(None)  # the workspace blob

    # What the backward ops read: outer blobs and incoming gradients are bound;
    # anything else is a local of the forward workspace, found there.
    new_inputs, overwritten, saved = [], set(), set()
    for grad_op in inner_grad_ops:
        for name in map(str, grad_op.input):
            if name in overwritten:
                continue
            outer = inner_to_outer.get(name) or incoming.get(name)
            if outer:
                if outer not in new_inputs:
                    new_inputs.append(outer)
                bindings[name] = outer
            else:
                saved.add(name)
        overwritten.update(map(str, grad_op.output))

    gradient_do = _gradient_do_op(
        op, subnet, inner_grad_ops + copies, new_inputs, new_outputs, bindings, saved
    )
    gradient_do.input.append(workspace_blob)
    gradient_do.output.append(workspace_blob)
    _do_bindings(gradient_do)  # the same checks as a forward Do
    return grad_ops + [gradient_do], g_input


def _gradient_do_op(fwd_op, fwd_net, grad_ops, inputs, outputs, bindings, saved):
    net = _grad_net(fwd_net, grad_ops)

    op = caffe2_pb2.OperatorDef()
    op.CopyFrom(fwd_op)
    if op.name:
        op.name += "_grad"
    del op.input[:]
    op.input.extend(inputs)
    del op.output[:]
    op.output.extend(outputs)
    ordered = list(inputs) + list(outputs)
    del op.arg[:]
    op.arg.add(name="net").n.CopyFrom(net)
    op.arg.add(name="inner_blobs").strings.extend(b.encode("utf-8") for b in bindings)
    op.arg.add(name="outer_blobs_idx").ints.extend(ordered.index(o) for o in bindings.values())
    op.arg.add(name="saved_fwd_blobs").strings.extend(b.encode("utf-8") for b in sorted(saved))
    del op.control_input[:]
    op.is_gradient_op = True
    return op


def _zero_fills(init_grad, grad_map, grad_outputs):
    """Ops that make each gradient of ``grad_outputs`` exist in a branch that
    did not write it: a copy of the incoming gradient, or zeros shaped like
    its blob."""
    ops = []
    for grad_output in sorted(grad_outputs):
        blob = next((b for b, g in grad_map.items() if g == grad_output), None)
        _check(blob, "Unknown gradient output " + grad_output)
        incoming = init_grad.get(blob)
        if incoming is not None:
            if incoming != grad_output:
                ops.append(_copy_op(incoming, grad_output))
        else:
            fill = caffe2_pb2.OperatorDef(type="ConstantFill")
            fill.input.append(blob)
            fill.output.append(grad_output)
            fill.arg.add(name="value", f=0.0)
            ops.append(fill)
    return ops


def gen_if_gradient(op, g_output):
    """The gradient If of ``op`` (module docstring): ``(ops, g_input)``."""
    _check(op.type == "If", "Expected If op")
    _check(len(op.input) > 0, "Expected at least one input in If op")
    _check(len(op.output) == len(g_output), "Different number of gradient blobs and If op outputs")
    grad_ops, g_output = dedupe_g_output(op, g_output)
    op_inputs = [str(i) for i in op.input]
    init_grad = {
        core.BlobReference(str(o)): core.BlobReference(str(g))
        for o, g in zip(op.output, g_output)
        if g
    }
    _check(init_grad, "Empty initial gradient map for If op")
    incoming = {str(b): str(g) for b, g in init_grad.items()}

    then_net = _net_argument(op, "then_net")
    _check(then_net is not None, "Expected then subnet in If op")
    then_grad, then_map, then_inputs, then_outputs = _gradient_net(then_net, init_grad)
    grad_map = dict(then_map)
    else_grad, else_map, else_inputs, else_outputs = None, {}, set(), set()
    else_net = _net_argument(op, "else_net")
    if else_net is not None:
        else_grad, else_map, else_inputs, else_outputs = _gradient_net(else_net, init_grad)
        for blob, else_g in else_map.items():
            then_g = then_map.get(blob)
            if then_g is None or then_g == else_g or then_g == incoming.get(blob):
                grad_map[blob] = else_g
            elif else_g != incoming.get(blob):
                raise GradientError("Unexpected grad blob name %s, %s, %s" % (blob, else_g, then_g))

    # A gradient only one branch writes is made in the other one too.
    then_only = {o for o in then_outputs - else_outputs if o in then_map.values()}
    zero_then = _zero_fills(incoming, then_map, then_only)
    if else_grad is not None:
        else_grad.op.extend(zero_then)
    elif zero_then:
        else_grad = caffe2_pb2.NetDef()
        else_grad.CopyFrom(then_grad)
        if else_grad.name:
            else_grad.name += "_auto_else_zero_blobs_"
        del else_grad.op[:]
        else_grad.op.extend(zero_then)
    else_only = {o for o in else_outputs - then_outputs if o in else_map.values()}
    then_grad.op.extend(_zero_fills(incoming, else_map, else_only))

    inputs = [op_inputs[0]] + sorted((then_inputs | else_inputs) - {op_inputs[0]})
    gradient_if = caffe2_pb2.OperatorDef()
    gradient_if.CopyFrom(op)
    del gradient_if.input[:]
    gradient_if.input.extend(inputs)
    del gradient_if.output[:]
    gradient_if.output.extend(sorted(then_outputs | else_outputs))
    del gradient_if.arg[:]
    gradient_if.arg.add(name="then_net").n.CopyFrom(then_grad)
    if else_grad is not None:
        gradient_if.arg.add(name="else_net").n.CopyFrom(else_grad)
    if gradient_if.name:
        gradient_if.name += "_grad"
    del gradient_if.control_input[:]
    gradient_if.is_gradient_op = True
    return grad_ops + [gradient_if], [grad_map.get(i) for i in op_inputs]


def gen_while_gradient(op, g_output):
    """The gradient While of ``op`` (module docstring): ``(ops, g_input)``."""
    _check(op.type == "While", "Expected While op")
    _check(len(op.input) > 0, "Expected at least one input in While op")
    _check(
        len(op.output) == len(g_output), "Different number of gradient blobs and While op outputs"
    )
    grad_ops, g_output = dedupe_g_output(op, g_output)
    init_grad = {
        core.BlobReference(str(o)): core.BlobReference(str(g))
        for o, g in zip(op.output, g_output)
        if g
    }
    _check(init_grad, "Empty initial gradient map for While op")
    loop_net = _net_argument(op, "loop_net")
    _check(loop_net is not None, "Expected loop subnet in While op")
    _check(
        len(loop_net.op) == 1 and loop_net.op[0].type == "Do",
        "Gradient While op requires single Do op as a loop body",
    )
    do_op = loop_net.op[0]
    reuse = [a for a in do_op.arg if a.name == "reuse_workspace" and a.i]
    _check(not reuse, "Gradient While op requires Do loop body op without reuse_workspace set")
    workspace_blob = do_op.output[-1]
    loop_grad, loop_map, inputs, outputs = _gradient_net(loop_net, init_grad)

    # The condition: is a forward workspace left to pop? And the incoming
    # gradients moved to where the body's backward reads them, and back.
    cond_net = core.Net("gradient_loop_cond_net")
    cond_init_net = core.Net("gradient_loop_cond_net_init")
    cond_blob = cond_net.NextScopedBlob(cond_net.Name() + "/cond")
    cond_init_net.HasScope(workspace_blob, cond_blob)
    cond_net.HasScope(workspace_blob, cond_blob)
    for blob, incoming in init_grad.items():
        body_grad = loop_map.get(str(blob))
        if body_grad is not None and body_grad != str(incoming):
            cond_net.Copy(core.BlobReference(body_grad), incoming)
            cond_init_net.Copy(incoming, core.BlobReference(body_grad))

    gradient_while = caffe2_pb2.OperatorDef()
    gradient_while.CopyFrom(op)
    if gradient_while.name:
        gradient_while.name += "_grad"
    del gradient_while.arg[:]
    gradient_while.arg.add(name="loop_net").n.CopyFrom(loop_grad)
    gradient_while.arg.add(name="cond_net").n.CopyFrom(cond_net.Proto())
    del gradient_while.control_input[:]
    del gradient_while.input[:]
    gradient_while.input.extend([str(cond_blob)] + sorted(inputs))
    del gradient_while.output[:]
    gradient_while.output.extend(sorted(outputs))
    gradient_while.is_gradient_op = True
    ops = grad_ops + list(cond_init_net.Proto().op) + [gradient_while]
    return ops, [loop_map.get(str(i)) for i in op.input]


core.GradientRegistry.RegisterGradient("Do")(gen_do_gradient)
core.GradientRegistry.RegisterGradient("If")(gen_if_gradient)
core.GradientRegistry.RegisterGradient("While")(gen_while_gradient)
