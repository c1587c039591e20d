"""``caffe2.python.scope``: the name scope and device scope of op creation.

Caffe2 prefixed blob names given as plain strings with the current name
scope (``'encoder/layer1/'``), so the same model-building code could be called
twice without name clashes. ``recurrent_net`` depends on it: the step net's
inputs must be scoped like the outer net's blobs.
"""

import contextlib
import threading

_NAMESCOPE_SEPARATOR = "/"

_threadlocal_scope = threading.local()


def CurrentNameScope():
    """The active prefix: ``''``, or every active scope followed by ``/``."""
    return getattr(_threadlocal_scope, "namescope", "")


def CurrentDeviceScope():
    """The active ``DeviceOption`` (or ``None``) copied into new operators."""
    return getattr(_threadlocal_scope, "devicescope", None)


@contextlib.contextmanager
def NameScope(prefix, reset=False):
    """Append ``prefix + '/'`` to the name scope for the ``with`` block.

    ``reset=True`` replaces the current scope instead of appending; an empty
    prefix adds nothing (``None`` is treated as empty, as from 2018).
    """
    if prefix is None:
        prefix = ""
    assert isinstance(prefix, str), "NameScope takes in a string as its argument."
    old_scope = CurrentNameScope()
    prefix = prefix + _NAMESCOPE_SEPARATOR if prefix else ""
    _threadlocal_scope.namescope = prefix if reset else old_scope + prefix
    try:
        yield
    finally:
        assert _threadlocal_scope.namescope.endswith(prefix), (
            "The namescope variable is changed from outside NameScope() calls."
        )
        _threadlocal_scope.namescope = old_scope


@contextlib.contextmanager
def DeviceScope(scope):
    """Make ``scope`` (a DeviceOption) the device of operators created inside."""
    old_scope = CurrentDeviceScope()
    _threadlocal_scope.devicescope = scope
    try:
        yield
    finally:
        _threadlocal_scope.devicescope = old_scope
