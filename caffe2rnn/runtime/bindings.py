"""Caffe2's Python bindings of a blob: ``C.Blob`` and ``C.TensorCPU``.

These are *views* of a :class:`caffe2rnn.runtime.Blob` (``ws.blobs["x"]``),
never copies of it: ``blob.tensor().data`` is the blob's own array, so writing
into it writes the blob. Also here: how the C++ bindings took Python values
(names as ``str`` or ``bytes``, protos as messages or serialized bytes, arrays
to feed), used by :mod:`caffe2rnn._import_c_extension` as well.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet, WrongTypeError
from ..proto import caffe2_pb2, parse, tensors
from .blob import expose
from .workspace import fetch_value


def blob_name(name):
    """A blob (or workspace) name as a ``str``: from str, bytes or a BlobReference."""
    if isinstance(name, str):
        return name
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if type(name).__name__ == "BlobReference":
        return str(name)
    raise WrongTypeError(
        "Expected a string or BlobReference as a blob name, got %r (%s)"
        % (name, type(name).__name__)
    )


def message(obj, cls):
    """``obj`` as a ``cls`` message (e.g. ``caffe2_pb2.NetDef``).

    Accepts the message itself, an object with ``Proto()`` returning one (a
    ``core.Net``, ``core.Plan``...), or its serialized bytes, which are parsed
    (:class:`~caffe2rnn.errors.ProtoParseError` if they do not parse).
    """
    if hasattr(obj, "Proto"):
        obj = obj.Proto()
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return parse(cls, obj)
    expected = cls.DESCRIPTOR.name
    hint = (
        " (text format? parse it with caffe2rnn.proto.parse_text)" if isinstance(obj, str) else ""
    )
    raise WrongTypeError(
        "expected a %s, an object with Proto() or serialized %s bytes; got %s%s"
        % (expected, expected, type(obj).__name__, hint)
    )


def feedable(arg, name, device_option):
    """What storing ``arg`` puts in the blob: a contiguous copy, or the string."""
    if device_option is not None:
        option = message(device_option, caffe2_pb2.DeviceOption)
        if option.device_type != caffe2_pb2.CPU:
            raise EnforceNotMet(
                "feeding blob '%s': device type %d (CUDA or other) is not supported; "
                "caffe2rnn runs on the CPU" % (name, option.device_type)
            )
    if isinstance(arg, np.ndarray):
        return tensor_copy(arg)
    if isinstance(arg, (bytes, str)):
        return arg
    raise WrongTypeError(
        "Unexpected type of argument - only numpy array or string are supported "
        "for feeding (blob '%s' got %s)" % (name, type(arg).__name__)
    )


# -- the views ---------------------------------------------------------------------


class Blob:
    """A view of one blob of a workspace."""

    def __init__(self, blob):
        self._blob = blob

    def fetch(self):
        """A copy of the tensor; bytes for a string; a description otherwise."""
        return fetch_value(self._blob)

    def feed(self, arg, device_option=None):
        """Store a copy of ``arg`` (ndarray, str or bytes); True."""
        self._blob.value = feedable(arg, self._blob.name, device_option)
        return True

    _feed = feed

    def tensor(self):
        """The blob as a :class:`TensorCPU` (made an empty tensor if it is not one)."""
        if not isinstance(self._blob.value, np.ndarray):
            self._blob.value = np.empty((0,), np.float32)
        return TensorCPU(self._blob)

    def serialize(self, name):
        """A serialized ``BlobProto``: a tensor as a TensorProto, a string as content."""
        value = self._blob.value
        proto = caffe2_pb2.BlobProto(name=name)
        if isinstance(value, np.ndarray):
            proto.type = "Tensor"
            proto.tensor.CopyFrom(tensors.NumpyArrayToCaffe2Tensor(value, name))
            proto.tensor.segment.begin = 0
            proto.tensor.segment.end = value.size
        elif isinstance(value, (bytes, str)):
            proto.type = "std::string"
            proto.content = value if isinstance(value, bytes) else value.encode("utf-8")
        else:
            raise DTypeError(
                "blob '%s' holds %s, which has no serializer" % (name, self._blob.type_name())
            )
        return proto.SerializeToString()

    def deserialize(self, serialized):
        proto = message(serialized, caffe2_pb2.BlobProto)
        if proto.type == "Tensor":
            self._blob.value = tensors.Caffe2TensorToNumpyArray(proto.tensor)
        elif proto.type == "std::string":
            self._blob.value = proto.content
        else:
            raise DTypeError("cannot deserialize blob '%s' of type '%s'" % (proto.name, proto.type))

    def __eq__(self, other):
        return isinstance(other, Blob) and other._blob is self._blob

    def __hash__(self):
        return id(self._blob)

    def __repr__(self):
        return "<C.Blob %r>" % self._blob.name


def tensor_copy(arr):
    arr = np.array(arr, copy=True, order="C")
    return arr.astype(object) if arr.dtype.kind in "SU" else arr


_INIT_TYPES = {
    data_type: dtype
    for data_type, (dtype, _) in tensors.TENSOR_TYPES.items()
    if dtype is not object
}


class TensorCPU:
    """A blob's tensor: ``data`` is the array itself (writes go to the blob)."""

    def __init__(self, blob):
        self._blob = blob

    def _array(self):
        value = self._blob.value
        if not isinstance(value, np.ndarray):
            raise DTypeError("blob '%s' no longer holds a tensor" % self._blob.name)
        return value

    @property
    def data(self):
        """The blob's array (a copy for strings, as in Caffe2)."""
        value = self._array()
        if value.dtype == object:
            return value.copy()
        expose(value)  # the caller may keep it: RunNet must not swap it out (rollback.py)
        return value

    @property
    def shape(self):
        return tuple(self._array().shape)

    _shape = shape

    def feed(self, obj):
        if not isinstance(obj, np.ndarray):
            raise WrongTypeError("Unexpected type of argument -- expected numpy array")
        self._blob.value = tensor_copy(obj)

    def fetch(self):
        return self._array().copy()

    def init(self, dims, caffe_type):
        """Resize to ``dims`` with element type ``caffe_type`` (a DataType value).

        New memory is zero-filled (Caffe2 left it uninitialised). Strings cannot
        be initialised this way: ``feed`` them.
        """
        dtype = _INIT_TYPES.get(caffe_type)
        if dtype is None:
            raise DTypeError("Cannot init tensor of this type. Use `feed` instead.")
        old = self._array()
        arr = self._blob.resize(tuple(dims), dtype)
        if not np.shares_memory(arr, old):
            arr.fill(0)

    def reshape(self, shape):
        """Caffe2's ``Resize``: same element count keeps the data."""
        self._blob.resize(tuple(shape), self._array().dtype)

    _reshape = reshape
