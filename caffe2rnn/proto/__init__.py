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

__all__ = ["caffe2_pb2"]
