"""``caffe2.python.utils``: turning Python values into ``Argument`` protos.

Caffe2 passed every keyword of ``CreateOperator`` (and of ``net.<Op>(...)``)
through :func:`MakeArgument`; the *Python type* of the value decides which
field of the ``Argument`` holds it (``f``, ``i``, ``s``, ``floats``, ...). That is
why ``value=0`` makes an int64 ``ConstantFill`` and ``value=0.0`` a float one.
"""

from collections.abc import Iterable

import numpy as np
from google.protobuf.message import Message

from . import eras
from .proto import caffe2_pb2


def _is_float(x):
    return isinstance(x, float)  # np.float64 subclasses float; float32 does not


def _is_int(x):
    return isinstance(x, (int, np.int64)) and not isinstance(x, float)


def _is_text(x):
    return isinstance(x, (bytes, str))


def _as_bytes(x):
    return x if isinstance(x, bytes) else x.encode("utf-8")


def MakeArgument(key, value):
    """Build an ``Argument`` named ``key`` holding ``value`` (spec §2.6).

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
