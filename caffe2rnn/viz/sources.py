"""What the drawers accept: nets, lists of ops, and nets stored in arguments.

Caffe2's ``net_drawer`` accepted a ``NetDef``, anything with a ``Proto()``
method returning one (``core.Net``, a model helper), or a plain list of
``OperatorDef``s. A ``RecurrentNetwork`` op carries its step nets as
*arguments*: until August 2017 ``recurrent_net`` passed ``str(net.Proto())``
(protobuf text, in the argument's ``s`` field); later the ``NetDef`` itself
(field ``n``). :func:`net_argument` reads either.
"""

from google.protobuf import text_format

from ..errors import DrawingError, ProtoParseError, op_context
from ..proto import caffe2_pb2


def as_netdef(net_like):
    """A ``NetDef`` for a NetDef, a ``Net``/model helper, or a list of ops."""
    if isinstance(net_like, caffe2_pb2.NetDef):
        return net_like
    proto = getattr(net_like, "Proto", None)
    if callable(proto):
        return as_netdef(proto())
    if isinstance(net_like, (list, tuple)) and all(
        isinstance(op, caffe2_pb2.OperatorDef) for op in net_like
    ):
        netdef = caffe2_pb2.NetDef(name="unnamed")
        netdef.op.extend(net_like)
        return netdef
    raise DrawingError(
        "cannot draw %r: expected a NetDef, an object with Proto() "
        "(core.Net, ModelHelper) or a list of OperatorDefs" % type(net_like).__name__
    )


def find_argument(op, name):
    for argument in op.arg:
        if argument.name == name:
            return argument
    return None


def net_argument(op, name):
    """The NetDef stored in argument ``name`` of ``op``, or None if absent/empty.

    An empty string means "no net": that is how a forward-only
    RecurrentNetwork op says it has no backward pass.
    """
    argument = find_argument(op, name)
    if argument is None:
        return None
    if argument.HasField("n"):
        return argument.n
    if not argument.s:
        return None
    netdef = caffe2_pb2.NetDef()
    try:
        text_format.Parse(argument.s.decode("utf-8"), netdef)
    except (text_format.ParseError, UnicodeDecodeError) as error:
        raise ProtoParseError(
            "%s: argument '%s' is not a NetDef in protobuf text "
            "format: %s" % (op_context(op), name, error)
        ) from None
    return netdef


def strings(op, name):
    argument = find_argument(op, name)
    return [s.decode("utf-8") for s in argument.strings] if argument else []


def ints(op, name):
    argument = find_argument(op, name)
    return list(argument.ints) if argument else []


def string(op, name, default):
    argument = find_argument(op, name)
    return argument.s.decode("utf-8") if argument is not None and argument.s else default


# brew/ModelHelper name parameters "<scope>/<name>_w" and "_b"; recurrent
# cells add "_v" for attention vectors.
_PARAM_SUFFIXES = ("_w", "_b", "_v")


def param_names(net_like, netdef, params=None):
    """The parameter blobs to colour blue.

    A NetDef does not record which inputs are parameters; a model helper
    does (``model.params``). Without either, external inputs named like
    Caffe2 parameters (``..._w``, ``..._b``) are taken.
    """
    if params is not None:
        return {str(p) for p in params}
    known = getattr(net_like, "params", None)
    if known is not None:
        return {str(p) for p in known}
    return {b for b in netdef.external_input if b.endswith(_PARAM_SUFFIXES)}


def load_netdef(path):
    """The ``NetDef`` in file ``path``: binary protobuf or protobuf text.

    Caffe2 wrote nets both ways: ``net.Proto().SerializeToString()`` (what
    ``predict_net.pb`` files hold) and ``str(net.Proto())`` (``.pbtxt``). A
    file that is UTF-8 and parses as text is text; anything else must parse
    as binary. OS errors (missing file, no permission) propagate unchanged.
    """
    from .. import proto

    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.strip():
        try:
            return proto.parse_text(caffe2_pb2.NetDef, text)
        except ProtoParseError as text_error:
            try:
                return proto.parse(caffe2_pb2.NetDef, data)
            except ProtoParseError:
                raise ProtoParseError(
                    "%s is neither a binary NetDef nor NetDef text (%s)" % (path, text_error)
                ) from None
    try:
        netdef = proto.parse(caffe2_pb2.NetDef, data)
    except ProtoParseError as error:
        raise ProtoParseError("%s: %s" % (path, error)) from None
    if not netdef.op:
        raise ProtoParseError("%s holds no operators: is it a NetDef?" % path)
    return netdef


def nested_nets(op):
    """``[(argument name, NetDef)]`` of the nets stored in ``op``'s arguments.

    RecurrentNetwork keeps ``step_net`` and ``backward_step_net`` there;
    control-flow ops (``If``, ``While``) keep ``then_net``/``else_net``/
    ``loop_net`` as NetDefs in the ``n`` field.
    """
    found = []
    for argument in op.arg:
        if argument.HasField("n") or argument.name in _NET_ARGUMENTS:
            netdef = net_argument(op, argument.name)
            if netdef is not None and netdef.op:
                found.append((argument.name, netdef))
    return found


_NET_ARGUMENTS = ("step_net", "backward_step_net", "then_net", "else_net", "loop_net")


def blob_values(source):
    """A ``name -> value`` lookup from what a run left behind, for labelling blobs.

    ``source`` is a ``caffe2rnn.runtime.Workspace``, the ``caffe2rnn.workspace``
    module (its current workspace) or a plain dict of arrays. Returns a
    function giving the value of a blob, or None where there is none.
    """
    if source is None:
        return lambda name: None
    if isinstance(source, dict):
        return source.get
    if hasattr(source, "C_Workspace"):  # the workspace module
        source = source.C_Workspace()
    if hasattr(source, "get_blob"):

        def value(name):
            blob = source.get_blob(name)
            return None if blob is None else getattr(blob, "value", None)

        return value
    raise DrawingError(
        "shapes=%r: expected a Workspace, the workspace module or a dict of arrays"
        % type(source).__name__
    )


def shape_text(value):
    """``"2×3 float32"`` for an array (a scalar: ``"() int32"``), else None."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return None
    return "%s %s" % ("×".join(map(str, shape)) or "()", dtype)


def value_text(value, limit=12):
    """The first values of an array, for a tooltip."""
    import numpy as np

    if getattr(value, "dtype", None) is None:
        return None
    flat = np.asarray(value).ravel()
    shown = np.array2string(flat[:limit], precision=4, separator=", ")
    return "%s%s" % (shown, " … (%d values)" % flat.size if flat.size > limit else "")
