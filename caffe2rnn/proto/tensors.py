"""``TensorProto`` ⇄ NumPy array: the types and fields Caffe2's serializer used.

Caffe2's ``utils.NumpyArrayToCaffe2Tensor`` / ``Caffe2TensorToNumpyArray``
(:mod:`caffe2rnn.utils` keeps those names) and the blob (de)serialization of
the bindings both convert here.
"""

import math

import numpy as np

from .. import errors
from ..errors import DTypeError, ShapeError
from . import caffe2_pb2


def _is_text(x):
    return isinstance(x, (bytes, str))


def _as_bytes(x):
    return x if isinstance(x, bytes) else x.encode("utf-8")


#: ``TensorProto.DataType`` → (NumPy dtype, the repeated field holding the data).
#: Caffe2's serializer stored the small integer types, bool and float16 (its
#: bits) in ``int32_data``, strings in ``string_data`` and BYTE in ``byte_data``.
TENSOR_TYPES = {
    caffe2_pb2.TensorProto.FLOAT: (np.float32, "float_data"),
    caffe2_pb2.TensorProto.DOUBLE: (np.float64, "double_data"),
    caffe2_pb2.TensorProto.INT32: (np.int32, "int32_data"),
    caffe2_pb2.TensorProto.INT64: (np.int64, "int64_data"),
    caffe2_pb2.TensorProto.BOOL: (np.bool_, "int32_data"),
    caffe2_pb2.TensorProto.UINT8: (np.uint8, "int32_data"),
    caffe2_pb2.TensorProto.INT8: (np.int8, "int32_data"),
    caffe2_pb2.TensorProto.UINT16: (np.uint16, "int32_data"),
    caffe2_pb2.TensorProto.INT16: (np.int16, "int32_data"),
    caffe2_pb2.TensorProto.FLOAT16: (np.float16, "int32_data"),
    caffe2_pb2.TensorProto.STRING: (object, "string_data"),
    caffe2_pb2.TensorProto.BYTE: (np.uint8, "byte_data"),
}
_NUMPY_TO_TENSOR_TYPE = {
    np.dtype(dtype): data_type
    for data_type, (dtype, _) in TENSOR_TYPES.items()
    if data_type != caffe2_pb2.TensorProto.BYTE  # uint8 arrays are UINT8
}


def tensor_data_type(dtype):
    """The ``TensorProto.DataType`` of a NumPy dtype (object arrays: STRING)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "SU":
        dtype = np.dtype(object)
    data_type = _NUMPY_TO_TENSOR_TYPE.get(dtype)
    if data_type is None:
        raise DTypeError("NumPy type %s has no TensorProto data type" % dtype)
    return data_type


def NumpyArrayToCaffe2Tensor(arr, name=None):
    """A ``TensorProto`` holding ``arr`` (its dims, type and values).

    Every type Caffe2's tensor serializer knew is supported. (Caffe2's Python
    helper of 0cdd09da6 knew float32, float64 and "int", which it stored as
    INT32 even for int64 arrays; here int64 stays INT64.) Strings (``S``/``U``/
    object arrays of bytes or str) become STRING.
    """
    arr = np.asarray(arr)
    if arr.dtype.kind in "SU":
        arr = arr.astype(object)
    try:
        data_type = tensor_data_type(arr.dtype)
    except DTypeError as exc:
        raise DTypeError("NumpyArrayToCaffe2Tensor%s: %s" % (_of(name), exc)) from None
    tensor = caffe2_pb2.TensorProto(data_type=data_type)
    tensor.dims.extend(arr.shape)
    if name:
        tensor.name = name
    flat = arr.reshape(-1)
    field = TENSOR_TYPES[data_type][1]
    if data_type == caffe2_pb2.TensorProto.STRING:
        if not all(_is_text(v) for v in flat):
            raise DTypeError(
                "NumpyArrayToCaffe2Tensor%s: an object array must hold only bytes or str"
                % _of(name)
            )
        tensor.string_data.extend(_as_bytes(v) for v in flat)
    elif data_type == caffe2_pb2.TensorProto.FLOAT16:
        tensor.int32_data.extend(flat.view(np.uint16).tolist())
    elif field == "int32_data":  # bool and the small integer types, widened
        tensor.int32_data.extend(flat.astype(np.int32).tolist())
    else:
        getattr(tensor, field).extend(flat.tolist())
    return tensor


def _of(name):
    return " of '%s'" % name if name else ""


def _in_range(tensor, field, dtype):
    """``tensor.<field>`` as ``dtype``; integers outside its range are an error
    (NumPy casts a protobuf container silently: 1000 would become -24 in int8)."""
    values = np.asarray(getattr(tensor, field))
    if values.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and values.size:
        info = np.iinfo(dtype)
        low, high = int(values.min()), int(values.max())
        if low < info.min or high > info.max:
            raise errors.InvalidValueError(
                "tensor '%s': %s holds %d, outside the range of %s"
                % (tensor.name, field, low if low < info.min else high, np.dtype(dtype).name)
            )
    return values.astype(dtype, copy=False)


def Caffe2TensorToNumpyArray(tensor):
    """The NumPy array a ``TensorProto`` holds (a new array; dtype by data_type).

    Caffe2's helper of 0cdd09da6 read INT32 tensors from ``double_data`` (so
    they came back empty) and knew only three types; every type is read here
    from the field Caffe2's serializer wrote it to.
    """
    if tensor.data_type not in TENSOR_TYPES:
        raise DTypeError(
            "tensor '%s': data type %s is not supported"
            % (tensor.name, caffe2_pb2.TensorProto.DataType.Name(tensor.data_type))
        )
    dtype, field = TENSOR_TYPES[tensor.data_type]
    dims = tuple(tensor.dims)
    if min(dims, default=0) < 0:
        raise ShapeError("tensor '%s' has negative dims %s" % (tensor.name, list(dims)))
    try:  # NumPy refuses values outside the type's range (int32_data for an INT8...)
        if tensor.data_type == caffe2_pb2.TensorProto.BYTE:
            values = np.frombuffer(tensor.byte_data, dtype=np.uint8).copy()
        elif tensor.data_type == caffe2_pb2.TensorProto.FLOAT16:  # bit patterns in int32_data
            values = _in_range(tensor, "int32_data", np.uint16).view(np.float16)
        elif tensor.data_type == caffe2_pb2.TensorProto.STRING:
            values = np.empty(len(tensor.string_data), dtype=object)
            values[:] = list(tensor.string_data)
        else:
            values = _in_range(tensor, field, dtype)
    except (OverflowError, ValueError, TypeError) as exc:
        if isinstance(exc, errors.Caffe2RNNError):
            raise
        raise errors.in_family(
            exc, "tensor '%s': %s does not hold %s values: %s" % (tensor.name, field, dtype, exc)
        ) from exc
    if values.size != math.prod(dims):
        raise ShapeError(
            "tensor '%s' has %d values in %s; its dims %s need %d"
            % (tensor.name, values.size, field, list(dims), math.prod(dims))
        )
    return values.reshape(dims)
