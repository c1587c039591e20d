"""Engine preferences: which implementation of an op type to try first.

Caffe2 could register several implementations ("engines": ``CUDNN``,
``SIMD``...) of one op type, and from 2017-09 the process kept a preference
list per device type and per op type (``caffe2/core/operator.cc`` at
042e8ede4: ``SetPerOpEnginePref``, ``SetGlobalEnginePref``,
``SetEnginePref``, ``SetOpEnginePref``; ``core.SetEnginePref`` in Python).
Caffe2's own ``test_util.TestCase.setUp`` resets them with
``core.SetEnginePref({}, {})``.

caffe2rnn has one implementation per op type, so a preference changes
nothing it runs; the preferences are still checked as Caffe2 checked them
(the device type must be registered — here only the CPU — and a per-op
preference must name a registered op type) and kept, so
:func:`per_op_engine_pref` and :func:`global_engine_pref` read them back.
"""

from ..errors import ArgumentError
from ..proto import caffe2_pb2
from . import registry

_per_op = {}
#: Caffe2's default: ``{CUDA: ["CUDNN"]}``; CUDA is not registered here.
_global = {}


def _check_device(device_type):
    if device_type != caffe2_pb2.CPU:
        raise ArgumentError("Device type %r not registered." % (device_type,))


def _check_op(device_type, op_type):
    if not registry.is_registered(op_type):
        raise ArgumentError(
            "Operator type %s not registered in %r registry." % (op_type, device_type)
        )


def _engines(engines):
    return [str(e) for e in engines]


def set_per_op_engine_pref(pref):
    """``{device_type: {op_type: [engine, ...]}}`` replaces the per-op preferences."""
    checked = {}
    for device_type, ops in dict(pref).items():
        _check_device(device_type)
        for op_type, engines in dict(ops).items():
            _check_op(device_type, op_type)
            checked.setdefault(device_type, {})[op_type] = _engines(engines)
    _per_op.clear()
    _per_op.update(checked)


def set_global_engine_pref(pref):
    """``{device_type: [engine, ...]}`` replaces the global preferences."""
    checked = {}
    for device_type, engines in dict(pref).items():
        _check_device(device_type)
        checked[device_type] = _engines(engines)
    _global.clear()
    _global.update(checked)


def set_engine_pref(per_op_pref, global_pref):
    set_per_op_engine_pref(per_op_pref)
    set_global_engine_pref(global_pref)


def set_op_engine_pref(op_type, op_pref):
    """``{device_type: [engine, ...]}`` for one op type (the others are kept)."""
    items = list(dict(op_pref).items())
    for device_type, _ in items:
        _check_device(device_type)
        _check_op(device_type, op_type)
    for device_type, engines in items:
        _per_op.setdefault(device_type, {})[op_type] = _engines(engines)


def per_op_engine_pref():
    return {device: dict(ops) for device, ops in _per_op.items()}


def global_engine_pref():
    return dict(_global)
