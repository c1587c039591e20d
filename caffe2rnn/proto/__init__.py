"""Caffe2's protobuf messages: ``NetDef``, ``OperatorDef``, ``Argument`` ...

``caffe2_pb2`` is generated from ``caffe2.proto`` by protoc (see
:mod:`caffe2rnn.proto.build`), so its binary wire format is exactly the real
Caffe2's. One thing is adjusted after generation: ``str(message)``. Caffe2's
``recurrent_net`` of 2016-2017 passed step nets to the C++ operator as
``str(net.Proto())``, the *text format* of the pure-Python protobuf printer,
which prints floats as ``0.0``/``1.0``. Modern protobuf backends print ``0`` and
``1``; we install the pure-Python printer as ``__str__`` so step-net strings read
as they did in 2017.
"""

from google.protobuf import text_format as _text_format

from ..errors import ProtoNestingError, ProtoParseError
from . import build as _build

_build.generate()

from . import caffe2_pb2  # noqa: E402  (generated just above when missing)


def _to_text(message):
    return _text_format.MessageToString(message)


for _name in caffe2_pb2.DESCRIPTOR.message_types_by_name:
    _cls = getattr(caffe2_pb2, _name)
    _cls.__str__ = _to_text
    for _nested in _cls.DESCRIPTOR.nested_types:
        getattr(_cls, _nested.name).__str__ = _to_text


def _type_name(message_cls):
    return message_cls.DESCRIPTOR.full_name


def parse(message_cls, data):
    """Parse binary ``data`` into a new ``message_cls`` (e.g. ``caffe2_pb2.NetDef``).

    Caffe2 let protobuf's ``DecodeError`` escape; we raise
    :class:`~caffe2rnn.errors.ProtoParseError` (a ``ValueError``) naming the
    message type, with the parser's error chained. A ``string`` field that is
    not UTF-8 is an error here too: proto2 parsers accept it and hand back
    ``bytes``, which would fail far away, in whatever reads the field.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProtoParseError(
            "cannot parse a %s from a %s; expected serialized "
            "bytes" % (_type_name(message_cls), type(data).__name__)
        )
    message = message_cls()
    try:
        message.ParseFromString(bytes(data))
    except RecursionError as exc:
        raise ProtoNestingError(
            "%d bytes do not parse as a %s: nested too deeply"
            % (len(data), _type_name(message_cls))
        ) from exc
    except Exception as exc:  # DecodeError, and whatever else the backend raises
        if _too_deep(exc):
            raise ProtoNestingError(
                "%d bytes do not parse as a %s: nested too deeply (%s)"
                % (len(data), _type_name(message_cls), exc)
            ) from exc
        raise ProtoParseError(
            "%d bytes do not parse as a %s: %s (%s)"
            % (len(data), _type_name(message_cls), exc, type(exc).__name__)
        ) from exc
    problem = _non_utf8_string(message)
    if problem:
        raise ProtoParseError(
            "%d bytes do not parse as a %s: string field %s is not UTF-8"
            % (len(data), _type_name(message_cls), problem)
        )
    return message


#: protobuf's default recursion limit, which the C++ parser Caffe2 handed every
#: operator and net to applied (``ParseProtobufFromLargeString``,
#: caffe2/python/pybind_state.cc at 042e8ede4): a message nested deeper did not
#: parse there, and Python's upb backend cannot copy it either.
MAX_DEPTH = 100


def nesting_depth(message):
    """How deeply ``message`` nests: 1 for a message without message fields,
    one more per level of submessages (an OperatorDef whose argument holds a
    NetDef of OperatorDefs... grows by 3 per step net). Iterative, so any depth
    can be measured."""
    deepest, stack = 0, [(message, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        for field, value in current.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            repeated = (
                field.is_repeated
                if hasattr(field, "is_repeated")
                else field.label == field.LABEL_REPEATED
            )
            for item in value if repeated else (value,):
                stack.append((item, depth + 1))
    return deepest


def check_depth(message, where):
    """Refuse ``message`` nested deeper than :data:`MAX_DEPTH`, naming ``where``."""
    depth = nesting_depth(message)
    if depth > MAX_DEPTH:
        raise ProtoNestingError(
            "%s: nested too deeply: %d levels of messages (step nets within step nets); "
            "Caffe2's protobuf parser refused more than %d (its default recursion limit)"
            % (where, depth, MAX_DEPTH)
        )
    return depth


def _too_deep(exc):
    """Whether a parser error is the backend's nesting limit (upb:
    "Exceeded upb_DecodeOptions_MaxDepth"; the C++ backend: "recursion")."""
    text = str(exc).lower()
    return "depth" in text or "recursion" in text


def _non_utf8_string(message, path=""):
    """The path (``op[2].arg[0].s``...) of the first ``string`` field holding
    bytes that are not UTF-8, or ``""``. ``bytes`` fields may hold anything."""
    for field, value in message.ListFields():
        name = path + field.name
        repeated = (
            field.is_repeated  # protobuf >= 6; older backends have only ``label``
            if hasattr(field, "is_repeated")
            else field.label == field.LABEL_REPEATED
        )
        values = value if repeated else (value,)
        if field.type == field.TYPE_STRING:
            for i, item in enumerate(values):
                if isinstance(item, bytes):
                    return "%s[%d]" % (name, i) if repeated else name
        elif field.type == field.TYPE_MESSAGE:
            for i, item in enumerate(values):
                found = _non_utf8_string(item, "%s[%d]." % (name, i) if repeated else name + ".")
                if found:
                    return found
    return ""


def parse_text(message_cls, text):
    """Parse protobuf *text format* (what ``str(net_proto)`` prints).

    Accepts everything the C++ ``TextFormat`` parser did for a NetDef:
    ``#`` comments, ``< >`` as braces, adjacent strings, octal/hex
    escapes, ``f``-suffixed floats... Unknown field names are errors, and so is
    nesting deeper than Python's recursion allows
    (:class:`~caffe2rnn.errors.ProtoNestingError`, also a ``RecursionError``).
    """
    type_name = _type_name(message_cls)
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtoParseError("text for a %s is not UTF-8: %s" % (type_name, exc)) from exc
    if not isinstance(text, str):
        raise ProtoParseError(
            "cannot parse a %s from a %s; expected text" % (type_name, type(text).__name__)
        )
    message = message_cls()
    try:
        _text_format.Parse(text, message)
    except _text_format.ParseError as exc:
        raise ProtoParseError("text does not parse as a %s: %s" % (type_name, exc)) from exc
    except RecursionError as exc:
        raise ProtoNestingError(
            "text does not parse as a %s: nested deeper than the parser can follow" % type_name
        ) from exc
    except Exception as exc:  # the backend's own checks (an unpaired surrogate...)
        raise ProtoParseError(
            "text does not parse as a %s: %s (%s)" % (type_name, exc, type(exc).__name__)
        ) from exc
    return message


__all__ = ["caffe2_pb2", "parse", "parse_text"]
