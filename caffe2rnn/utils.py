"""``caffe2.python.utils``: ``Argument`` protos, tensor protos, ``debug``.

Caffe2 passed every keyword of ``CreateOperator`` (and of ``net.<Op>(...)``)
through :func:`MakeArgument`; the *Python type* of the value decides which
field of the ``Argument`` holds it (``f``, ``i``, ``s``, ``floats``, ...). That is
why ``value=0`` makes an int64 ``ConstantFill`` and ``value=0.0`` a float one.
"""

import functools
import sys
from collections.abc import Iterable

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import Message

from . import _import_c_extension as C
from . import eras
from .errors import EnforceNotMet, ProtoParseError
from .proto import caffe2_pb2, parse, tensors


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

# Caffe2's names for the conversions of :mod:`caffe2rnn.proto.tensors`.
NumpyArrayToCaffe2Tensor = tensors.NumpyArrayToCaffe2Tensor
Caffe2TensorToNumpyArray = tensors.Caffe2TensorToNumpyArray
tensor_data_type = tensors.tensor_data_type


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
    names = [str(b) for b in blobs]
    op = caffe2_pb2.OperatorDef(type="Free", input=names, output=names)
    op.device_option.device_type = caffe2_pb2.CPU
    C.Workspace.current.run(op)


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
