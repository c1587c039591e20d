"""``caffe2.python.control_ops_util``: which blobs a sub-net reads and writes.

Caffe2's control-flow ops (If, While, Do) run a sub-net inside the enclosing
net's workspace. To wire it up, ``add_if_op``/``add_while_op`` asked
:func:`get_external_blob_names` which outer blobs the sub-net depends on and
which outer blobs it writes, given ``lexical_scope``: the set of blob names
visible at that point of the outer net.

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
from .errors import BlobNotFoundError

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


def _control_flow_operators(helper, *op_types):
    from .errors import UnknownOperatorError
    from .runtime import registry

    missing = [t for t in op_types if not registry.is_registered(t)]
    if missing:
        raise UnknownOperatorError(
            "%s builds the control-flow operators %s (Caffe2 042e8ede4), which caffe2rnn does "
            "not implement" % (helper, ", ".join(missing))
        )


def add_if_op(if_net, cond_blob, lexical_scope, then_net, else_net=None):
    """E6: add an ``If`` op running ``then_net`` (or ``else_net``) in a nested
    workspace (``Do``, ``CreateScope``). caffe2rnn does not implement those
    operators: this names them, and adds nothing to ``if_net``."""
    _control_flow_operators("add_if_op", "If", "Do", "CreateScope")


def add_while_op(while_net, cond_blob, lexical_scope, loop_body_net, condition_body_net=None):
    """E6: add a ``While`` op running ``loop_body_net`` while ``cond_blob``
    holds. caffe2rnn does not implement the operators it builds (``While``,
    ``Do``, ``CreateScope``): this names them, and adds nothing to ``while_net``."""
    _control_flow_operators("add_while_op", "While", "Do", "CreateScope")
