"""``caffe2.python.utils``: ``Argument`` protos, tensor protos, ``debug``.

Caffe2 passed every keyword of ``CreateOperator`` (and of ``net.<Op>(...)``)
through :func:`MakeArgument`; the *Python type* of the value decides which
field of the ``Argument`` holds it (``f``, ``i``, ``s``, ``floats``, ...). That is
why ``value=0`` makes an int64 ``ConstantFill`` and ``value=0.0`` a float one.
"""

import functools
import math
import sys
from collections.abc import Iterable

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import Message

from . import eras, errors
from .errors import DTypeError, EnforceNotMet, ProtoParseError, ShapeError
from .proto import caffe2_pb2, parse


def _is_float(x):
    return isinstance(x, float)  # np.float64 subclasses float; float32 does not


def _is_int(x):
    return isinstance(x, (int, np.int64)) and not isinstance(x, float)


def _is_text(x):
    return isinstance(x, (bytes, str))


def _as_bytes(x):
    return x if isinstance(x, bytes) else x.encode("utf-8")


def MakeArgument(key, value):
    """Build an ``Argument`` named ``key`` holding ``value``.

    The first matching rule wins: a NumPy array is flattened to a list and a
    NumPy scalar becomes a Python scalar; then float → ``f``; int/bool → ``i``;
    str/bytes → ``s``; a NetDef → ``n`` (from 2017-08, era E6; before, like any
    other message, its binary serialization → ``s``); an iterable of floats →
    ``floats`` (an empty iterable lands here: only ``name`` is set); of ints →
    ``ints``; of strings → ``strings``; of NetDefs → ``nets`` (E6); of other
    messages → ``strings`` (serialized). Anything else is a ``ValueError``.

    One deliberate difference from Caffe2: a one-shot iterator (e.g. a Python 3
    ``map`` object) is read into a list first. Caffe2 iterated it once per test
    and so silently stored an empty argument.
    """
    argument = caffe2_pb2.Argument()
    argument.name = key
    netdef_ok = eras.current().netdef_arguments
    if isinstance(value, np.ndarray):
        value = value.flatten().tolist()
    elif isinstance(value, np.generic):
        value = value.item()

    if _is_float(value):
        argument.f = value
    elif isinstance(value, bool):
        argument.i = int(value)  # Caffe2 relied on protobuf accepting bools
    elif _is_int(value):
        argument.i = int(value)
    elif _is_text(value):
        argument.s = _as_bytes(value)
    elif isinstance(value, caffe2_pb2.NetDef) and netdef_ok:
        argument.n.CopyFrom(value)
    elif isinstance(value, Message):
        argument.s = value.SerializeToString()
    elif isinstance(value, Iterable):
        values = list(value)
        if all(_is_float(v) for v in values):
            argument.floats.extend(values)
        elif all(isinstance(v, bool) or _is_int(v) for v in values):
            argument.ints.extend(int(v) for v in values)
        elif all(_is_text(v) for v in values):
            argument.strings.extend(_as_bytes(v) for v in values)
        elif netdef_ok and all(isinstance(v, caffe2_pb2.NetDef) for v in values):
            for v in values:
                argument.nets.add().CopyFrom(v)
        elif all(isinstance(v, Message) for v in values):
            argument.strings.extend(v.SerializeToString() for v in values)
        else:
            raise ValueError(f"Unknown iterable argument type: key={key} value={value}")
    else:
        raise ValueError(
            f"Unknown argument type: key={key} value={value}, value type={type(value)}"
        )
    return argument


# -- tensors as TensorProtos ---------------------------------------------------

#: ``TensorProto.DataType`` → (NumPy dtype, the repeated field holding the data).
#: Caffe2's serializer stored the small integer types, bool and float16 (its
#: bits) in ``int32_data``, strings in ``string_data`` and BYTE in ``byte_data``.
_TENSOR_TYPES = {
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
    for data_type, (dtype, _) in _TENSOR_TYPES.items()
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
    field = _TENSOR_TYPES[data_type][1]
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
    if tensor.data_type not in _TENSOR_TYPES:
        raise DTypeError(
            "tensor '%s': data type %s is not supported"
            % (tensor.name, caffe2_pb2.TensorProto.DataType.Name(tensor.data_type))
        )
    dtype, field = _TENSOR_TYPES[tensor.data_type]
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


# -- reading protos ----------------------------------------------------------------


def TryReadProtoWithClass(cls, s):
    """Read ``s`` as a ``cls`` message: text format first, then binary.

    Raises :class:`~caffe2rnn.errors.ProtoParseError` when neither works.
    """
    obj = cls()
    try:
        text = s.decode("utf-8") if isinstance(s, bytes) else s
        text_format.Parse(text, obj)
        return obj
    except (text_format.ParseError, UnicodeDecodeError):
        pass
    return parse(cls, s.encode("utf-8") if isinstance(s, str) else s)


def GetContentFromProto(obj, function_map):
    """``function_map[type(obj)](obj)`` for the first class ``obj`` is exactly;
    None when no class matches (as in Caffe2)."""
    for cls, func in function_map.items():
        if type(obj) is cls:
            return func(obj)
    return None


def GetContentFromProtoString(s, function_map):
    """Parse ``s`` with each class of ``function_map`` in turn and apply the
    function of the first that parses."""
    for cls, func in function_map.items():
        try:
            obj = TryReadProtoWithClass(cls, s)
        except ProtoParseError:
            continue
        return func(obj)
    raise ProtoParseError(
        "Cannot find a fit protobuffer class: %s" % ", ".join(c.__name__ for c in function_map)
    )


def ConvertProtoToBinary(proto_class, filename, out_filename):
    """Rewrite a text-format ``proto_class`` file as binary.

    (Caffe2's version opened the output in text mode, which fails under
    Python 3 for binary data; it is written as bytes here.)
    """
    with open(filename, encoding="utf-8") as handle:
        proto = TryReadProtoWithClass(proto_class, handle.read())
    with open(out_filename, "wb") as handle:
        handle.write(proto.SerializeToString())


# -- running --------------------------------------------------------------------


def GetGPUMemoryUsageStats():
    """Caffe2 read CUDA memory statistics here; caffe2rnn runs on the CPU only."""
    raise EnforceNotMet(
        "GetGPUMemoryUsageStats: caffe2rnn has no GPU support "
        "(workspace.has_gpu_support is False), so there is no GPU memory to report"
    )


def ResetBlobs(blobs):
    """Free the content of ``blobs`` in the current workspace (a ``Free`` op)."""
    from . import core, workspace

    workspace.RunOperatorOnce(
        core.CreateOperator(
            "Free",
            list(blobs),
            list(blobs),
            device_option=core.DeviceOption(caffe2_pb2.CPU),
        )
    )


class DebugMode:
    """Run a function; on an unhandled exception, open the debugger on it.

    ``DebugMode.run(main)`` calls ``main()``. If it raises (anything but
    ``KeyboardInterrupt``), Caffe2 printed a hint and the exception, started
    ``pdb.post_mortem()`` at the frame that raised, then exited with status 1.
    That is what happens here when standard input is a terminal. Without one
    (a test runner, a pipe, a notebook kernel) a debugger could only hang or
    quit at once, so the hint and exception are printed and the exception is
    re-raised unchanged instead.
    """

    @classmethod
    def run(cls, func):
        try:
            return func()
        except KeyboardInterrupt:
            raise
        except Exception:
            exc = sys.exc_info()[1]
            print(
                'Entering interactive debugger. Type "bt" to print '
                'the full stacktrace. Type "help" to see command listing.'
            )
            print(exc)
            if not _interactive():
                print("(standard input is not a terminal: no debugger; re-raising)")
                raise
            import pdb

            pdb.post_mortem(exc.__traceback__)
            sys.exit(1)


def _interactive():
    stdin = sys.stdin
    try:
        return stdin is not None and stdin.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdin
        return False


def debug(f):
    """Decorator: run ``f`` under :class:`DebugMode` (post-mortem on exception).

    Returns what ``f`` returns (Caffe2's wrapper dropped the return value).
    """

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return DebugMode.run(lambda: f(*args, **kwargs))

    return wrapper
