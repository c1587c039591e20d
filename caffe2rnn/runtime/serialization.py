"""Blobs as database records: Caffe2's chunked ``BlobProto`` serialization.

``Save`` turns each blob into one or more records (Caffe2
``caffe2/core/blob_serialization.{h,cc}`` at 0cdd09da6):

* a tensor becomes ``BlobProto(name, type="Tensor", tensor=TensorProto)``
  records of at most :data:`CHUNK_SIZE` elements (Caffe2's
  ``--caffe2_tensor_chunk_size``, 1,000,000): each carries the full ``dims``,
  the data type, the CPU ``device_detail`` and a ``segment`` ``[begin, end)``
  of the flattened values, under the key ``<name>#%<chunk index>`` (an empty
  tensor is one chunk ``[0, 0)``);
* a string becomes one ``BlobProto(name, type="std::string", content=...)``
  record under the key ``<name>``.

``Load`` reads them back with :class:`Assembler`, which applies Caffe2's
bookkeeping (``LoadOp::ProcessBlob``): the key up to ``#%`` names the blob;
a tensor's chunks must together fill it exactly once; a non-tensor may
appear once. Everything is checked before a value is built, and a value is
built in a new array — a workspace sees nothing until the whole load
succeeded (the operator commits it, :mod:`caffe2rnn.operators.load_save`).
"""

import numpy as np
from google.protobuf.message import DecodeError

from ..errors import DatabaseError, DTypeError, ShapeError
from ..proto import caffe2_pb2, tensors
from . import settings

CHUNK_SIZE = 1_000_000
CHUNK_SEPARATOR = "#%"
TENSOR_TYPE = "Tensor"
STRING_TYPE = "std::string"


#: blob value class -> (BlobProto type name, serialize(value, name) -> BlobProto),
#: and type name -> deserialize(BlobProto) -> value: the other blob types
#: Caffe2 serialized (counters, :mod:`caffe2rnn.operators.counter`).
_SERIALIZERS = {}
_DESERIALIZERS = {}


def register_blob_type(cls, type_name, serialize, deserialize):
    """Let ``Save``/``Load`` handle blobs holding ``cls`` objects."""
    _SERIALIZERS[cls] = (type_name, serialize)
    _DESERIALIZERS[type_name] = deserialize


def check_serializable(value, name):
    """Refuse a blob no serializer knew (Caffe2: ``No known serializer for``)."""
    if type(value) in _SERIALIZERS:
        return
    if isinstance(value, np.ndarray):
        tensors.tensor_data_type(value.dtype)  # DTypeError for a type TensorProto lacks
        return
    if not isinstance(value, (bytes, str)):
        kind = (
            "nothing (an empty blob)"
            if value is None
            else getattr(value, "caffe2_type_name", type(value).__name__)
        )
        raise DTypeError("No known serializer for blob '%s', which holds %s" % (name, kind))


def records(value, name, chunk_size=None):
    """The ``(key, serialized BlobProto)`` records of one blob (see module doc);
    ``chunk_size`` defaults to :data:`CHUNK_SIZE`."""
    check_serializable(value, name)
    chunk_size = chunk_size or CHUNK_SIZE
    if type(value) in _SERIALIZERS:
        yield name, _SERIALIZERS[type(value)][1](value, name).SerializeToString()
        return
    if not isinstance(value, np.ndarray):
        proto = caffe2_pb2.BlobProto(name=name, type=STRING_TYPE)
        proto.content = value if isinstance(value, bytes) else value.encode("utf-8")
        yield name, proto.SerializeToString()
        return
    flat = value.reshape(-1)
    for index, begin in enumerate(range(0, max(flat.size, 1), chunk_size)):
        end = min(begin + chunk_size, flat.size)
        proto = caffe2_pb2.BlobProto(name=name, type=TENSOR_TYPE)
        proto.tensor.CopyFrom(tensors.NumpyArrayToCaffe2Tensor(flat[begin:end], name))
        del proto.tensor.dims[:]
        proto.tensor.dims.extend(value.shape)
        proto.tensor.device_detail.device_type = caffe2_pb2.CPU
        proto.tensor.segment.begin = begin
        proto.tensor.segment.end = end
        yield "%s%s%d" % (name, CHUNK_SEPARATOR, index), proto.SerializeToString()


def blob_name_of_key(key):
    """The blob a record's key belongs to: the key up to ``#%``."""
    return key.split(CHUNK_SEPARATOR, 1)[0]


class _TensorState:
    """A tensor being filled chunk by chunk (Caffe2's ``BlobState``)."""

    __slots__ = ("array", "total", "current", "dims", "data_type")

    def __init__(self, array, dims, data_type):
        self.array, self.dims, self.data_type = array, dims, data_type
        self.total = array.size
        self.current = 0


class Assembler:
    """Collects the records read for one ``Load`` and builds the blob values.

    ``where`` names the database in messages. ``keep_device`` False reads
    every tensor onto the CPU (Caffe2's ``SetCurrentDevice``); True keeps the
    device the record names, and only the CPU exists here.
    """

    def __init__(self, where, keep_device=False):
        self.where = where
        self.keep_device = keep_device
        self.states = {}  # blob name -> _TensorState, or a finished non-tensor value
        self.loaded = 0  # blobs complete so far (Caffe2's loaded_blobs)

    def _fail(self, key, what):
        return DatabaseError("%s, blob '%s': %s" % (self.where, key, what))

    def add(self, name, value):
        """Add the record ``value`` (serialized BlobProto) for blob ``name``."""
        proto = caffe2_pb2.BlobProto()
        try:
            proto.ParseFromString(value)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise self._fail(name, "Couldn't parse Proto (%s)" % exc) from None
        if proto.type != TENSOR_TYPE:
            deserialize = _DESERIALIZERS.get(proto.type)
            if proto.type != STRING_TYPE and deserialize is None:
                raise self._fail(name, "No registered deserializer for type '%s'" % proto.type)
            if name in self.states:
                raise self._fail(name, "Blob duplicated")
            if deserialize is None:
                self.states[name] = bytes(proto.content)
            else:
                try:
                    self.states[name] = deserialize(proto)
                except (ShapeError, ValueError, TypeError) as exc:
                    raise self._fail(name, str(exc)) from None
            self.loaded += 1
            return
        self._add_chunk(name, proto.tensor)

    def _add_chunk(self, name, tensor):
        device = tensor.device_detail.device_type if tensor.HasField("device_detail") else 0
        if self.keep_device and device != caffe2_pb2.CPU:
            raise self._fail(
                name, "No registered deserializer for type 'Tensor%d' (not a CPU tensor)" % device
            )
        dims = tuple(tensor.dims)
        state = self.states.get(name)
        if state is None:
            if tensor.data_type not in tensors.TENSOR_TYPES:
                raise self._fail(name, "data type %d is not supported" % tensor.data_type)
            if min(dims, default=0) < 0:
                raise self._fail(name, "dims %s are negative" % (list(dims),))
            dtype = tensors.TENSOR_TYPES[tensor.data_type][0]
            settings.check_allocation(dims, dtype, "%s, blob '%s'" % (self.where, name))
            try:
                array = np.zeros(dims, dtype) if dtype is not object else np.full(dims, b"", object)
            except (ValueError, MemoryError) as exc:  # dims whose product NumPy cannot hold
                raise self._fail(
                    name, "dims %s cannot be allocated (%s)" % (list(dims), exc)
                ) from None
            state = self.states[name] = _TensorState(array, dims, tensor.data_type)
        elif not isinstance(state, _TensorState):
            raise self._fail(name, "Must be tensor (the blob appeared before as a string)")
        else:
            if state.current >= state.total:
                raise self._fail(name, "Found an extra part for an already filled tensor")
            if not tensor.HasField("segment"):
                raise self._fail(name, "Partial tensor must have a segment")
            if dims != state.dims or tensor.data_type != state.data_type:
                raise self._fail(
                    name,
                    "a chunk has dims %s and type %d; the first had %s and %d"
                    % (list(dims), tensor.data_type, list(state.dims), state.data_type),
                )
        begin, end = 0, state.total
        if tensor.HasField("segment"):
            begin, end = tensor.segment.begin, tensor.segment.end
        if not 0 <= begin <= end <= state.total:
            raise self._fail(
                name, "Invalid chunk %d %d with total tensor size %d" % (begin, end, state.total)
            )
        chunk = caffe2_pb2.TensorProto()
        chunk.CopyFrom(tensor)
        del chunk.dims[:]
        chunk.dims.append(end - begin)
        chunk.ClearField("segment")
        try:
            values = tensors.Caffe2TensorToNumpyArray(chunk)
        except (ShapeError, ValueError, TypeError) as exc:
            raise self._fail(name, "Incorrect proto field size or values: %s" % exc) from None
        state.array.reshape(-1)[begin:end] = values
        state.current += end - begin
        if state.current > state.total:
            raise self._fail(name, "Tensor parts are bigger than target size for tensor")
        if state.current == state.total:
            self.loaded += 1

    def values(self):
        """``{name: value}`` once every tensor is complete (Caffe2's validateBlobStates)."""
        out = {}
        for name, state in self.states.items():
            if isinstance(state, _TensorState):
                if state.current != state.total:
                    raise self._fail(
                        name,
                        "Data size mismatch. Expected: %d Read: %d" % (state.total, state.current),
                    )
                out[name] = state.array
            else:
                out[name] = state
        return out
