"""The process's table of Python functions that ``Python`` operators run.

Caffe2 kept it in its bindings (caffe2/python/pybind_state.cc, 0cdd09da6):
``C.register_python_op(f, pass_workspace, name)`` stores ``f`` and returns a
*token* (``f.__name__``, made unique with ``:1``, ``:2``...);
``C.register_python_gradient_op(token, grad_f)`` adds ``<token>_gradient``.
The table keeps every function alive. caffe2rnn also keeps *builders*
``(func, args, kwargs)`` here (see :mod:`caffe2rnn.operators.python_op`).

The operator hands a function that asks for it the workspace as a
``C.Workspace``; that view class belongs to ``workspace.C``, which registers
it here (:func:`set_workspace_view`) so the runtime needs no import of it.
"""

import itertools
import threading

from ..errors import ArgumentError, KeyNotFoundError

_lock = threading.Lock()
_functions = {}  # token -> (function, pass_workspace)
_builders = {}  # builder token -> (func, args, kwargs)
_builder_ids = itertools.count()
_workspace_view = [lambda ws: ws]


def register_python_op(func, pass_workspace=False, name=""):
    """``C.register_python_op``: keep ``func``; its token."""
    if func is None:
        raise ArgumentError("register_python_op: the function is None")
    base = (name + ":" if name else "") + getattr(func, "__name__", type(func).__name__)
    with _lock:
        token = base
        for i in itertools.count(1):
            if token not in _functions:
                break
            token = "%s:%d" % (base, i)
        _functions[token] = (func, bool(pass_workspace))
    return token


def register_python_gradient_op(token, func):
    """``C.register_python_gradient_op``: ``func`` is ``token``'s gradient."""
    if func is None:
        raise ArgumentError("register_python_gradient_op: the function is None")
    with _lock:
        if token not in _functions:
            raise KeyNotFoundError("register_python_gradient_op: no Python op has token %r" % token)
        _functions[token + "_gradient"] = (func, False)  # gradients never get the workspace


def function(key):
    """``(function, pass_workspace)`` registered under ``key``, or None."""
    with _lock:
        return _functions.get(key)


def register_builder(builder):
    """Keep a ``(func, args, kwargs)`` builder; its token."""
    func, args, kwargs = builder
    token = "builder:%s:%d" % (getattr(func, "__name__", "builder"), next(_builder_ids))
    with _lock:
        _builders[token] = (func, tuple(args), dict(kwargs))
    return token


def builder(token):
    with _lock:
        return _builders.get(token)


def set_workspace_view(make_view):
    """``make_view(runtime_workspace)`` is what a function with
    ``pass_workspace`` receives (``workspace.C`` sets its ``C.Workspace``)."""
    _workspace_view[0] = make_view


def workspace_view(ws):
    return _workspace_view[0](ws)
