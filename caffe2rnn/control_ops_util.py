"""``caffe2.python.control_ops_util``: If and While ops over sub-nets, and the blobs they share.

Caffe2's control-flow ops (If, While, Do: :mod:`caffe2rnn.operators.control_flow`)
run a sub-net for the enclosing net. :func:`add_if_op` and :func:`add_while_op`
(929c33cee) wire one up: each branch or loop body runs in a ``Do`` whose
workspace is bound to the outer blobs it shares, found by
:func:`get_external_blob_names`: which outer blobs the sub-net depends on and
which outer blobs it writes, given ``lexical_scope``: the set of blob names
visible at that point of the outer net. ``NetBuilder``'s ``IfNet``/``WhileNet``
and ``brew.cond``/``brew.loop`` call them.

The function had two behaviours in the archived repository (the commits below).
Both are here, chosen with ``variant``:

``variant=1`` — 97842bdd7 "Control flow operators" (2017-08-25; reverted by
    799d7ccaa the same day, re-landed as bff126f09 on 2017-08-28), until
    d72d83528 (2017-09-18). Inputs: the blobs the net reads before writing
    them (SSA version 0) **plus** its declared ``external_input``. Outputs: its
    declared ``external_output`` plus every op output named in
    ``lexical_scope``.

``variant=2`` (default, newest) — d72d83528 "Backpropagation for If operator"
    (2017-09-18) through 929c33cee (2018-03-26). "Use the blobs that are
    actually read/written": inputs are only the SSA-undefined blobs, and each
    must be visible in ``lexical_scope``; outputs are only op outputs named in
    ``lexical_scope``. Declared external inputs/outputs are ignored.

Both return two ``set`` objects of blob names, as Caffe2 did.

``add_if_op`` and ``add_while_op`` exist with Caffe2's signatures (so E6's
``net_builder`` and ``gradient_check_test`` import), but the operators they
build (``If``, ``While``, ``Do``, ``CreateScope``) are not implemented here:
calling one raises an error naming them.
"""

from . import core
from .errors import BlobNotFoundError, BuildError

VARIANTS = (1, 2)


def get_external_blob_names(net, lexical_scope, variant=2):
    """Return ``(input_names, output_names)``: sets of blob names of ``net``.

    ``net`` is a ``core.Net``; ``lexical_scope`` a container of the blob names
    visible to it. With ``variant=2`` an input not in ``lexical_scope`` raises
    :class:`~caffe2rnn.errors.BlobNotFoundError` ("Input blob X is undefined";
    Caffe2 used an ``assert``).
    """
    if variant not in VARIANTS:
        raise ValueError(
            "get_external_blob_names variant must be 1 (2017-08) or "
            "2 (2017-09 on), got %r" % (variant,)
        )
    net_proto = net.Proto()
    net_ssa, _ = core.get_ssa(net_proto)
    input_names = core.get_undefined_blobs(net_ssa)
    if variant == 1:
        input_names |= set(net_proto.external_input)
    else:
        for input_name in sorted(input_names):
            if str(input_name) not in lexical_scope:
                raise BlobNotFoundError("Input blob " + input_name + " is undefined")

    output_names = set(net_proto.external_output) if variant == 1 else set()
    for op in net_proto.op:
        for output in op.output:
            if output in lexical_scope:
                output_names.add(output)
    return input_names, output_names


def _names(blobs):
    """``blobs`` in a fixed order: Caffe2 iterated Python 2 sets here (one order
    per build); caffe2rnn sorts, so every process builds the same NetDef."""
    return sorted(str(b) for b in blobs)


def _do_net(name, body, inputs, outputs, workspace_blob, copy_external_blobs=False):
    """A net holding one ``Do`` that runs ``body`` bound to the outer blobs
    ``inputs`` then ``outputs`` (names), with the workspace stack ``workspace_blob``."""
    ordered = list(inputs) + list(outputs)
    outer = _names(set(inputs) | set(outputs))
    net = core.Net(name)
    do_inputs = [core.BlobReference(name=b, net=None) for b in inputs] + [workspace_blob]
    do_outputs = [core.BlobReference(name=b, net=None) for b in outputs] + [workspace_blob]
    arguments = dict(
        net=body.Proto(), inner_blobs=outer, outer_blobs_idx=[ordered.index(b) for b in outer]
    )
    if copy_external_blobs:
        arguments["copy_external_blobs"] = True
    net.Do(do_inputs, do_outputs, **arguments)
    net.AddExternalOutput(*do_outputs)
    return net


def add_if_op(if_net, cond_blob, lexical_scope, then_net, else_net=None):
    """Add ``If(cond_blob)`` running ``then_net`` (else ``else_net``) to ``if_net``.

    Each branch runs inside a ``Do`` (:mod:`caffe2rnn.operators.control_flow`):
    the blobs it reads before writing (which must be in ``lexical_scope``,
    the outer names visible there) and the blobs of ``lexical_scope`` it
    writes are bound to the outer workspace; everything else it makes is
    local to the branch. ``if_net`` gets a ``CreateScope`` per branch (the
    workspace stack, a blob named ``<if_net>/workspace_if_then``...) and the
    ``If`` op, whose inputs are the condition and every outer blob a branch
    reads, and whose outputs every outer blob a branch writes (also made
    ``if_net``'s external outputs). 929c33cee's ``control_ops_util.add_if_op``.
    """
    then_inputs, then_outputs = get_external_blob_names(then_net, lexical_scope)
    else_inputs, else_outputs = set(), set()
    if else_net:
        else_inputs, else_outputs = get_external_blob_names(else_net, lexical_scope)
    if_inputs = [cond_blob] + [
        core.BlobReference(name=b, net=None) for b in _names(then_inputs | else_inputs)
    ]
    if_outputs = [core.BlobReference(name=b, net=None) for b in _names(then_outputs | else_outputs)]

    then_workspace = if_net.NextScopedBlob(if_net.Name() + "/workspace_if_then")
    if_inputs.append(then_workspace)
    if_outputs.append(then_workspace)
    do_then = _do_net(
        "do_then_net", then_net, _names(then_inputs), _names(then_outputs), then_workspace
    )
    if_args = {"then_net": do_then.Proto()}
    else_workspace = None
    if else_net:
        else_workspace = if_net.NextScopedBlob(if_net.Name() + "/workspace_if_else")
        if_inputs.append(else_workspace)
        if_outputs.append(else_workspace)
        do_else = _do_net(
            "do_else_net", else_net, _names(else_inputs), _names(else_outputs), else_workspace
        )
        if_args["else_net"] = do_else.Proto()

    if_net.CreateScope([], [then_workspace])
    if else_workspace:
        if_net.CreateScope([], [else_workspace])
    if_net.If(if_inputs, if_outputs, **if_args)
    if_net.AddExternalOutput(*if_outputs)


def add_while_op(while_net, cond_blob, lexical_scope, loop_body_net, condition_body_net=None):
    """Add ``While(cond_blob)`` running ``loop_body_net`` to ``while_net``.

    The body runs in a ``Do`` as :func:`add_if_op`'s branches do, with
    ``copy_external_blobs`` (each iteration's workspace keeps the values it
    saw, for the gradient); since it may run zero times, what it writes is
    also an input. ``condition_body_net`` (optional) runs in a ``Do`` of its
    own before the first and after every iteration and must write
    ``cond_blob`` (made a False bool first when ``cond_blob`` is not in
    ``lexical_scope``). 929c33cee's ``control_ops_util.add_while_op``.
    """
    input_names, output_names = get_external_blob_names(loop_body_net, lexical_scope)
    input_names |= output_names  # the loop may not run at all
    loop_inputs, loop_outputs = _names(input_names), _names(output_names)
    while_inputs = [cond_blob] + [core.BlobReference(name=b, net=None) for b in loop_inputs]
    while_outputs = [core.BlobReference(name=b, net=None) for b in loop_outputs]

    body_workspace = while_net.NextScopedBlob(while_net.Name() + "/workspace_loop_body")
    while_inputs.append(body_workspace)
    while_outputs.append(body_workspace)
    do_body = _do_net(
        "do_loop_body_net",
        loop_body_net,
        loop_inputs,
        loop_outputs,
        body_workspace,
        copy_external_blobs=True,
    )
    while_args = {"loop_net": do_body.Proto()}

    cond_workspace = None
    if condition_body_net:
        cond_inputs, cond_outputs = get_external_blob_names(condition_body_net, lexical_scope)
        writes_condition = any(str(cond_blob) in op.output for op in condition_body_net.Proto().op)
        if not writes_condition:
            raise BuildError("Condition net does not write into condition blob")
        cond_outputs.add(str(cond_blob))
        cond_workspace = while_net.NextScopedBlob(while_net.Name() + "/workspace_loop_cond")
        do_cond = _do_net(
            "do_loop_condition_net",
            condition_body_net,
            _names(cond_inputs),
            _names(cond_outputs),
            cond_workspace,
        )
        while_args["cond_net"] = do_cond.Proto()
        while_inputs += [
            core.BlobReference(name=b, net=None)
            for b in _names(cond_inputs) + [str(cond_workspace)]
            if b not in input_names
        ]
        while_outputs += [
            core.BlobReference(name=b, net=None)
            for b in _names(cond_outputs) + [str(cond_workspace)]
            if b not in output_names
        ]
        if str(cond_blob) not in lexical_scope:
            while_net.ConstantFill([], cond_blob, dtype=core.DataType.BOOL, value=False)

    while_net.CreateScope([], [body_workspace])
    if cond_workspace:
        while_net.CreateScope([], [cond_workspace])
    while_net.While(while_inputs, while_outputs, **while_args)
    while_net.AddExternalOutput(*while_outputs)
