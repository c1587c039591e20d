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

from google.protobuf import message as _message
from google.protobuf import text_format as _text_format

from ..errors import ProtoParseError
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
    :class:`~caffe2rnn.errors.ProtoParseError` naming the message type.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProtoParseError(
            "cannot parse a %s from a %s; expected serialized "
            "bytes" % (_type_name(message_cls), type(data).__name__)
        )
    message = message_cls()
    try:
        message.ParseFromString(bytes(data))
    except _message.DecodeError as exc:
        raise ProtoParseError(
            "%d bytes do not parse as a %s: %s" % (len(data), _type_name(message_cls), exc)
        ) from None
    return message


def parse_text(message_cls, text):
    """Parse protobuf *text format* (what ``str(net_proto)`` prints).

    Accepts everything the C++ ``TextFormat`` parser did for a NetDef (spec
    §1.9): ``#`` comments, ``< >`` as braces, adjacent strings, octal/hex
    escapes, ``f``-suffixed floats... Unknown field names are errors.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtoParseError(
                "text for a %s is not UTF-8: %s" % (_type_name(message_cls), exc)
            ) from None
    if not isinstance(text, str):
        raise ProtoParseError(
            "cannot parse a %s from a %s; expected text"
            % (_type_name(message_cls), type(text).__name__)
        )
    message = message_cls()
    try:
        _text_format.Parse(text, message)
    except _text_format.ParseError as exc:
        raise ProtoParseError(
            "text does not parse as a %s: %s" % (_type_name(message_cls), exc)
        ) from None
    return message


__all__ = ["caffe2_pb2", "parse", "parse_text"]
