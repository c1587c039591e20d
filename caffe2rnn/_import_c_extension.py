"""``workspace.C``: Caffe2's C++ binding module, in pure Python.

Caffe2's ``workspace.py`` imported a pybind11 module as ``C``
(``caffe2/python/pybind_state.cc`` of 0cdd09da6) and built its Python API on
it. Code written for Caffe2 reaches into it directly: Caffe2's own
``test_util.TestCase`` does ``self.ws = workspace.C.Workspace()``, and
``hypothesis_test_util`` reads ``workspace.has_gpu_support``. This module is
that object model over caffe2rnn's runtime (:mod:`caffe2rnn.runtime`):

* the **process's workspaces**: a table of named :class:`runtime.Workspace
  <caffe2rnn.runtime.Workspace>` objects and the current one (``"default"`` at
  start) — the one place they live; ``workspace.SwitchWorkspace`` and friends
  are these functions under Caffe2's Python names;
* :class:`Workspace` and :class:`Net`, and ``Blob``/``TensorCPU`` from
  :mod:`caffe2rnn.runtime.bindings`: *views* of runtime objects
  (``C.Workspace.current.blobs["x"].fetch()``), never copies of them;
  :class:`Predictor`;
* the build flags: ``has_gpu_support``, ``has_mkldnn`` and ``is_asan`` are
  False, ``num_cuda_devices()`` is 0.

Like the C++ bindings, the functions here take protos as serialized bytes (or
as messages, or objects with ``Proto()``) and names as ``str`` or ``bytes``.
"""

import time

import numpy as np

from . import eras
from .blob_recycling import (
    memonger_compute_blob_recycling_for_dag,  # noqa: F401
    memonger_optimize_inference_net,  # noqa: F401
)
from .errors import DTypeError, EnforceNotMet, WorkspaceError, WrongTypeError
from .proto import caffe2_pb2
from .runtime import Workspace as _RuntimeWorkspace
from .runtime import observers as _observers
from .runtime import python_functions as _python_functions
from .runtime import registry as _registry
from .runtime.bindings import (  # noqa: F401  (Blob, TensorCPU: C's names)
    Blob,
    TensorCPU,
    blob_name,
    feedable,
    message,
    tensor_copy,
)
from .runtime.python_functions import register_python_gradient_op, register_python_op  # noqa: F401
from .runtime.tracebacks import call_with_exception_intercept
from .runtime.workspace import fetch_value

# Engine preferences (caffe2/python/pybind_state.cc, 042e8ede4: set_engine_pref...).
set_per_op_engine_pref = _registry.set_per_op_engine_pref
set_global_engine_pref = _registry.set_global_engine_pref
set_engine_pref = _registry.set_engine_pref
set_op_engine_pref = _registry.set_op_engine_pref

has_gpu_support = False
has_mkldnn = False
is_asan = False


def num_cuda_devices():
    return 0


# -- the process's workspaces ------------------------------------------------------

_workspaces = {"default": _RuntimeWorkspace(name="default")}
_current_name = "default"
_current = _workspaces["default"]


def current():
    """The current runtime workspace (Caffe2's ``gWorkspace``)."""
    return _current


def current_workspace():
    return _current_name


def workspaces():
    return list(_workspaces)


def switch_workspace(name, create_if_missing=None):
    """Make workspace ``name`` current; an unknown one needs ``create_if_missing``.

    Returns None, as Caffe2's binding did. Passing a :class:`Workspace` makes
    that (possibly unnamed) workspace current without renaming anything.
    """
    global _current, _current_name
    if isinstance(name, Workspace):
        _current = name._ws
        return None
    name = blob_name(name)
    if name not in _workspaces:
        if not create_if_missing:
            raise WorkspaceError(
                "Workspace %s does not exist; pass create_if_missing=True to create it "
                "(workspaces: %s)" % (name, ", ".join(_workspaces))
            )
        _workspaces[name] = _RuntimeWorkspace(name=name)
    _current_name = name
    _current = _workspaces[name]
    return None


def reset_workspace(root_folder=None):
    """Replace the current named workspace by an empty one with ``root_folder``."""
    global _current
    root = "." if root_folder is None else str(root_folder)
    _current = _workspaces[_current_name] = _RuntimeWorkspace(name=_current_name, root_folder=root)
    return True


def root_folder():
    return _current.root_folder


def blobs():
    return _current.blobs()


def local_blobs():
    return _current.local_blobs()


def has_blob(name):
    return _current.has_blob(blob_name(name))


def create_blob(name):
    _current.create_blob(blob_name(name))
    return True


def feed_blob(name, arg, device_option=None):
    """Store a copy of ``arg`` (ndarray, str or bytes) as blob ``name``; True.

    Checked first, so a bad value creates no blob.
    """
    value = feedable(arg, name, device_option)
    _current.create_blob(blob_name(name)).value = value
    return True


def nets():
    return _current.nets()


def delete_net(name):
    _current.delete_net(blob_name(name))
    return True


def registered_operators():
    return _registry.registered_operators()


def nearby_opnames(name):
    return _registry.close_matches(name)


def global_init(args):
    """Caffe2 parsed command-line flags here. Two apply: ``--caffe2_keep_on_shrink``
    and ``--caffe2_max_keep_on_shrink_memory`` (:mod:`caffe2rnn.runtime.blob`);
    others (log level...) are accepted and ignored."""
    from .runtime import blob

    for arg in list(args)[1:]:
        name, _, value = str(arg).lstrip("-").partition("=")
        if name == "caffe2_keep_on_shrink":
            if value.lower() not in ("", "1", "true", "0", "false"):
                raise WrongTypeError("--caffe2_keep_on_shrink takes true/false, got %r" % value)
            blob.keep_on_shrink = value.lower() in ("", "1", "true")
        elif name == "caffe2_max_keep_on_shrink_memory":
            try:
                blob.max_keep_on_shrink_memory = int(value)
            except ValueError:
                raise WrongTypeError(
                    "--caffe2_max_keep_on_shrink_memory takes a byte count, got %r" % value
                ) from None
    return None


# -- net observers (runtime/observers.py; Caffe2 042e8ede4) ----------------------------


def _created_net(name):
    net = _current.get_net(blob_name(name))
    if net is None:
        raise WorkspaceError("Can't find net %s" % name)
    return net


def add_observer_to_net(net_name, observer_type):
    return _observers.add_observer(_created_net(net_name), observer_type)


def remove_observer_from_net(net_name, observer):
    _observers.remove_observer(_created_net(net_name), observer)


def num_observers_on_net(net_name):
    return len(_created_net(net_name).observers)


def serialize_blob(name):
    return Blob(_current.blob(blob_name(name))).serialize(blob_name(name))


def deserialize_blob(name, serialized):
    Blob(_current.create_blob(blob_name(name))).deserialize(serialized)


def benchmark_net(name, warmup_runs, main_runs, run_individual):
    """Time the created net ``name``: ``[ms per run]``, then ms per op if asked.

    Runs it ``warmup_runs`` times untimed, then ``main_runs`` times; with
    ``run_individual`` each op is also run ``main_runs`` times on its own.
    """
    net = _current.get_net(blob_name(name))
    if net is None:
        raise WorkspaceError("Didn't find net: %s" % name)
    for _ in range(warmup_runs):
        net.run()
    start = time.perf_counter()
    for _ in range(main_runs):
        net.run()
    per_run = (time.perf_counter() - start) * 1000.0 / max(main_runs, 1)
    stats = [per_run]
    if run_individual:
        for op in net.ops:
            start = time.perf_counter()
            for _ in range(main_runs):
                op.run()
            stats.append((time.perf_counter() - start) * 1000.0 / max(main_runs, 1))
    return stats


# -- the object model -----------------------------------------------------------


class _WorkspaceType(type):
    @property
    def current(cls):
        """The current workspace (``workspace.C.Workspace.current``)."""
        return cls._wrap(_current)


class Workspace(metaclass=_WorkspaceType):
    """A workspace: ``C.Workspace()`` is a new empty one outside the named table,
    ``C.Workspace(parent)`` a child of ``parent``; ``Workspace.current`` wraps
    the current one. ``blobs`` and ``nets`` map names to :class:`Blob` /
    :class:`Net` views."""

    def __init__(self, parent=None):
        if parent is not None and not isinstance(parent, Workspace):
            raise WrongTypeError("Workspace(parent) takes a C.Workspace, got %r" % (parent,))
        self._ws = _RuntimeWorkspace(parent=None if parent is None else parent._ws)
        self._ws._c_view = self

    @classmethod
    def _wrap(cls, runtime_ws):
        view = getattr(runtime_ws, "_c_view", None)
        if view is None:
            view = cls.__new__(cls)
            view._ws = runtime_ws
            runtime_ws._c_view = view
        return view

    @property
    def blobs(self):
        return {name: Blob(self._ws.blob(name)) for name in self._ws.blobs()}

    @property
    def nets(self):
        return {name: Net(self._ws.get_net(name)) for name in self._ws.nets()}

    def create_blob(self, name):
        return Blob(self._ws.create_blob(blob_name(name)))

    def fetch_blob(self, name):
        return fetch_value(self._ws.blob(blob_name(name)))

    def has_blob(self, name):
        return self._ws.has_blob(blob_name(name))

    def create_net(self, net, overwrite=False, era=None):
        """Create ``net`` (Net, NetDef or bytes) here and return it as a :class:`Net`.

        The net runs with ``era`` if given, else the era a ``core.Net`` was
        marked with (:func:`caffe2rnn.eras.for_running`).
        """
        era = eras.for_running(net, era)
        netdef = _copy(message(net, caffe2_pb2.NetDef))
        self._ws.last_failed_op_net_position = -1
        created = call_with_exception_intercept(
            self._ws.create_net,
            self._last_failed_op_net_position,
            netdef.name,
            netdef,
            overwrite,
            era,
        )
        return Net(created)

    def run(self, obj, era=None):
        """Run a plan, or a net once (not kept), or an operator once, here.

        A net or operator runs with ``era`` if given, else the era a
        ``core.Net`` was marked with (:func:`caffe2rnn.eras.for_running`).

        ``workspace.RunNetOnce``, ``RunOperatorOnce`` and ``RunPlan`` come here
        too. A failed net or operator leaves the workspace exactly as it was
        (:mod:`caffe2rnn.runtime.rollback`); a failed plan leaves no new empty
        blobs (:meth:`runtime.Workspace.dropping_new_empty_blobs
        <caffe2rnn.runtime.Workspace.dropping_new_empty_blobs>`).
        """
        net_eras = None
        if hasattr(obj, "Nets"):  # a core.Plan: each net runs with its own era
            net_eras = {net.Name(): eras.for_running(net, era) for net in obj.Nets()}
        era = eras.for_running(obj, era)
        if hasattr(obj, "Proto"):
            obj = obj.Proto()
        ws = self._ws
        with ws.dropping_new_empty_blobs():
            if isinstance(obj, caffe2_pb2.PlanDef):
                return ws.run_plan(obj, era, net_eras)
            if isinstance(obj, caffe2_pb2.NetDef):
                ws.last_failed_op_net_position = -1
                return call_with_exception_intercept(
                    ws.run_net_once, self._last_failed_op_net_position, obj.name, obj, era
                )
            if isinstance(obj, caffe2_pb2.OperatorDef):
                return ws.run_operator_once(obj, era)
        raise WrongTypeError("Don't know how to do Workspace.run() on %s" % type(obj).__name__)

    def _last_failed_op_net_position(self):
        return self._ws.last_failed_op_net_position

    def __eq__(self, other):
        return isinstance(other, Workspace) and other._ws is self._ws

    def __hash__(self):
        return id(self._ws)

    def __repr__(self):
        return "<C.Workspace %r, %d blobs>" % (self._ws.name, len(self._ws.blobs()))


# A Python op with ``pass_workspace`` gets its workspace as a C.Workspace.
_python_functions.set_workspace_view(Workspace._wrap)


def _copy(netdef):
    """A created net keeps its own NetDef, as the C++ side kept a parsed copy."""
    copy = caffe2_pb2.NetDef()
    copy.CopyFrom(netdef)
    return copy


class Net:
    """A created net (``ws.nets[name]``, ``ws.create_net(net)``); ``run()`` runs it."""

    def __init__(self, instance):
        self._net = instance

    def run(self):
        """Run once; a failure leaves the workspace as it was (as ``RunNet``)."""
        self._net.ws.run_created(self._net)

    def __repr__(self):
        return "<C.Net %r>" % self._net.name


class Predictor:
    """Caffe2's ``Predictor(init_net, predict_net)`` in a child of the current workspace.

    The init net runs once; ``run(inputs)`` puts ``inputs[i]`` into the
    predict net's i-th external input (which must already hold a tensor),
    runs the net and returns copies of its external outputs.
    """

    def __init__(self, init_net, predict_net):
        self._ws = _RuntimeWorkspace(parent=_current)
        self._net = _copy(message(predict_net, caffe2_pb2.NetDef))
        self._ws.run_net_once(message(init_net, caffe2_pb2.NetDef))
        self._ws.create_net(self._net)

    def run(self, inputs):
        names = self._net.external_input
        if len(inputs) > len(names):
            raise EnforceNotMet(
                "Predictor.run got %d inputs; net '%s' has %d external inputs"
                % (len(inputs), self._net.name, len(names))
            )
        blobs = []
        for name, value in zip(names, inputs):  # check them all before writing one
            if not isinstance(value, np.ndarray):
                raise WrongTypeError("Input must be of type numpy array (input '%s')" % name)
            blobs.append(_tensor_blob(self._ws, name))
        for blob, value in zip(blobs, inputs):
            blob.value = tensor_copy(value)
        self._ws.run_net(self._net.name)
        return [_tensor_blob(self._ws, name).value.copy() for name in self._net.external_output]


def _tensor_blob(ws, name):
    blob = ws.get_blob(name)
    if blob is None:
        raise WorkspaceError("Blob does not exist: %s" % name)
    if not isinstance(blob.value, np.ndarray):
        raise DTypeError("Blob is not a CPU Tensor: %s" % name)
    return blob
