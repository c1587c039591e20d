"""``caffe2.python.workspace``: the module-level API over named workspaces.

Caffe2 kept one global table of workspaces and a *current* one (initially
``"default"``); ``FeedBlob``/``FetchBlob``/``RunNet`` all act on the current
workspace. Blob data is copied on the way in and on the way out, so an array
you fed can be changed without touching the blob. The table and the object
model behind it (``workspace.C.Workspace``...) are in
:mod:`caffe2rnn._import_c_extension`, imported here as ``C`` as in Caffe2.

Nets, operators and plans go in as objects (``core.Net``, ``NetDef``,
``OperatorDef``, ``core.Plan``) or as their serialized bytes: Caffe2 sent
everything through :func:`StringifyProto` to the C++ side, so both worked.

**Immediate mode** (:func:`StartImmediate` ... :func:`StopImmediate`): while
it is on, every operator made by ``core.CreateOperator`` (so every
``net.Op(...)``) and every gradient op of ``AddGradientOperators`` is also run
at once, in a workspace of its own (``_CAFFE2_IMMEDIATE``) whose blobs you
read with :func:`FetchImmediate`. A debugging aid: the ops must be runnable in
the order they are made.
"""

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from typing import Any, Optional

import numpy as np
from google.protobuf.message import Message

from . import _import_c_extension as C
from . import eras, scope, utils
from .errors import DTypeError, WrongTypeError
from .proto import caffe2_pb2
from .runtime import Workspace as _RuntimeWorkspace
from .runtime import tracebacks

Blobs = C.blobs
CreateBlob = C.create_blob
CurrentWorkspace = C.current_workspace
DeserializeBlob = C.deserialize_blob
GlobalInit = C.global_init
HasBlob = C.has_blob
RegisteredOperators = C.registered_operators
SerializeBlob = C.serialize_blob
SwitchWorkspace = C.switch_workspace
RootFolder = C.root_folder
Workspaces = C.workspaces
BenchmarkNet = C.benchmark_net
Predictor = C.Predictor
Nets = C.nets

#: net name → {op index → [(file, line), ...]}: where each op of a ``core.Net``
#: was created (innermost frame first). ``Net.PopulateProtoWithFileName`` and
#: the failure report of :func:`CallWithExceptionIntercept` read it
#: (:mod:`caffe2rnn.runtime.tracebacks`).
operator_tracebacks = tracebacks.operator_tracebacks

is_asan = C.is_asan
has_gpu_support = C.has_gpu_support
NumCudaDevices = C.num_cuda_devices


def SetDefaultGPUID(gpu_id):
    return None


def GetDefaultGPUID():
    return 0


def GetCuDNNVersion():
    return 0


def GetCudaPeerAccessPattern():
    return np.array([])


def C_Workspace():
    """The current :class:`~caffe2rnn.runtime.Workspace` object itself
    (caffe2rnn's; ``C.Workspace.current`` is Caffe2's view of the same object)."""
    return C.current()


def StringifyProto(obj):
    """Serialized bytes of a message, or of ``obj.Proto()``; a str/bytes is returned as is."""
    if isinstance(obj, (str, bytes)):
        return obj
    if isinstance(obj, Message):
        return obj.SerializeToString()
    if hasattr(obj, "Proto"):
        return obj.Proto().SerializeToString()
    raise WrongTypeError("Unexpected argument to StringifyProto of type " + type(obj).__name__)


def ResetWorkspace(root_folder: Optional[str] = None) -> bool:
    """Replace the current workspace by an empty one; True.

    Without ``root_folder`` the root folder is kept; with one, it is created if
    missing and becomes the workspace's :func:`RootFolder`.
    """
    if root_folder is None:
        return C.reset_workspace(C.root_folder())
    os.makedirs(root_folder, exist_ok=True)
    return C.reset_workspace(root_folder)


StringifyBlobName = C.blob_name


def StringifyNetName(name):
    return GetNetName(name)


def GetNetName(net):
    """The name of a net given as a str, a ``core.Net`` or a NetDef."""
    if isinstance(net, (str, bytes)):
        return net
    if type(net).__name__ == "Net":
        return net.Name()
    if isinstance(net, caffe2_pb2.NetDef):
        return net.name
    raise WrongTypeError("Not a Net object: %r (%s)" % (net, type(net).__name__))


def CallWithExceptionIntercept(func, op_id_fetcher, net_name, *args, **kwargs):
    """``func(*args, **kwargs)``; if it raises, say where the failing op was made
    (:func:`caffe2rnn.runtime.tracebacks.call_with_exception_intercept`)."""
    return tracebacks.call_with_exception_intercept(func, op_id_fetcher, net_name, *args, **kwargs)


def CreateNet(
    net: Any,
    overwrite: bool = False,
    input_blobs: Optional[Iterable[Any]] = None,
    era: Optional[str] = None,
) -> bool:
    """Instantiate ``net`` (a Net, a NetDef or its bytes) in the current workspace.

    ``era`` (caffe2rnn; e.g. ``"E3"`` or ``"v2"``) names the Caffe2 era whose
    ``RecurrentNetwork`` operators the net runs with; without it a ``core.Net``
    runs with the era it was built in, a bare NetDef with today's operators
    (see :mod:`caffe2rnn.eras`). The created net keeps it for every ``RunNet``.
    """
    for name in input_blobs or []:
        CreateBlob(name)
    C.Workspace.current.create_net(net, overwrite, era)
    return True


def RunNet(name: Any, num_iter: int = 1, allow_fail: bool = False) -> bool:
    """Run the created net ``name`` (a str or a Net) ``num_iter`` times.

    With ``allow_fail`` a failing run returns False instead of raising.
    """
    ws = C.Workspace.current
    name = C.blob_name(GetNetName(name))
    ws._ws.last_failed_op_net_position = -1
    try:
        return CallWithExceptionIntercept(
            ws._ws.run_net, ws._last_failed_op_net_position, name, name, num_iter
        )
    except Exception:
        if allow_fail:
            return False
        raise


def RunNetOnce(net: Any, era: Optional[str] = None) -> bool:
    """Instantiate ``net`` (Net, NetDef or bytes) here, run it once, discard it.

    ``era`` as in :func:`CreateNet`: ``RunNetOnce(netdef, era="E4")`` runs a
    NetDef saved from a 2017-04 model with the operators of its time.
    """
    return C.Workspace.current.run(
        C.message(net, caffe2_pb2.NetDef), era=eras.for_running(net, era)
    )


def RunOperatorOnce(operator: Any, era: Optional[str] = None) -> bool:
    """Run one OperatorDef (or its serialized bytes) in the current workspace
    (``era`` as in :func:`CreateNet`)."""
    return C.Workspace.current.run(C.message(operator, caffe2_pb2.OperatorDef), era=era)


def RunOperatorsOnce(operators: Iterable[Any]) -> bool:
    """Run each operator in turn; the first failure raises. True."""
    for op in operators:
        RunOperatorOnce(op)
    return True


def RunPlan(plan_or_step, era=None):
    """Run a plan (``core.Plan``, PlanDef, bytes, or one ``core.ExecutionStep``).

    See :mod:`caffe2rnn.runtime.plan` for how steps run. The nets of a
    ``core.Plan`` run with the era each was marked with (a historical
    ``recurrent_net`` marks the net it builds); ``era`` names one for the
    others, as in :func:`RunNetOnce`.
    """
    as_plan = getattr(plan_or_step, "_as_plan", None)  # a core.ExecutionStep
    if as_plan is not None:
        plan_or_step = as_plan()
    if not hasattr(plan_or_step, "Nets"):  # not a core.Plan: a PlanDef or its bytes
        plan_or_step = C.message(plan_or_step, caffe2_pb2.PlanDef)
    return C.Workspace.current.run(plan_or_step, era)


def InferShapesAndTypes(nets, blob_dimensions=None):
    """``(shapes, types)``: dicts blob name → dims list / ``TensorProto`` data type.

    Caffe2 asked each operator's C++ shape function. caffe2rnn has none, so it
    runs the nets once, in order, in a scratch workspace seeded with copies of
    the current workspace's tensors (or, given ``blob_dimensions``, float32
    zeros of those shapes, as Caffe2 assumed float), and reports every tensor
    there. Nothing of yours changes: the scratch workspace is dropped and the
    shared random stream is restored. An op that fails stops the run; blobs it
    and later ops would have made are absent (unknown), as in Caffe2.
    """
    from .operators import rng

    scratch = _RuntimeWorkspace()
    if blob_dimensions is None:
        current = C.current()
        for name in current.blobs():
            value = current.get_blob(name).value
            if isinstance(value, np.ndarray):
                scratch.feed(name, value)
    else:
        for name, dims in blob_dimensions.items():
            scratch.feed(name, np.zeros(dims, np.float32))
    state = rng._module_generator.bit_generator.state
    try:
        for net in nets:
            scratch.run_net_once(C.message(net, caffe2_pb2.NetDef))
    except Exception:
        pass  # the shapes found so far are the answer
    finally:
        rng._module_generator.bit_generator.state = state
    shapes, types = {}, {}
    for name in scratch.local_blobs():
        value = scratch.get_blob(name).value
        if isinstance(value, np.ndarray):
            shapes[name] = list(value.shape)
            with contextlib.suppress(DTypeError):  # an object array of non-strings
                types[name] = utils.tensor_data_type(value.dtype)
    return shapes, types


def FeedBlob(name: Any, arr: Any, device_option: Any = None) -> bool:
    """Copy ``arr`` (ndarray, TensorProto, str or bytes) into blob ``name``; True.

    ``device_option`` defaults to the current device scope; only the CPU exists.
    """
    if isinstance(arr, caffe2_pb2.TensorProto):
        arr = utils.Caffe2TensorToNumpyArray(arr)
    if device_option is None:
        device_option = scope.CurrentDeviceScope()
    return C.feed_blob(StringifyBlobName(name), arr, device_option)


def FetchBlob(name: Any) -> Any:
    """A copy of blob ``name``'s tensor (bytes for a string blob)."""
    return C.current().fetch(StringifyBlobName(name))


def FetchBlobs(names: Iterable[Any]) -> list[Any]:
    return [FetchBlob(name) for name in names]


def GetNameScope():
    """The current name scope (prefix it to a blob name to fetch a scoped blob)."""
    return scope.CurrentNameScope()


class _BlobDict:
    """``workspace.blobs``: dict-like access to the current workspace's blobs."""

    def __getitem__(self, key):
        return FetchBlob(key)

    def __setitem__(self, key, value):
        FeedBlob(key, value)

    def __len__(self):
        return len(Blobs())

    def __iter__(self):
        return iter(Blobs())

    def __contains__(self, key):
        return HasBlob(key)


blobs = _BlobDict()

# -- immediate mode ---------------------------------------------------------------

_immediate_mode = False
_immediate_workspace_name = "_CAFFE2_IMMEDIATE"
_immediate_root_folder = ""


def IsImmediate():
    return _immediate_mode


@contextlib.contextmanager
def WorkspaceGuard(workspace_name):
    """Work in ``workspace_name`` (created if needed), then switch back.

    Switches back even when the body raises (Caffe2's guard did not, so a
    failing immediate op left you in the immediate workspace).
    """
    previous = CurrentWorkspace()
    SwitchWorkspace(workspace_name, True)
    try:
        yield
    finally:
        SwitchWorkspace(previous)


def StartImmediate(i_know=False):
    """Turn immediate mode on (restarting it, emptied, if it was on).

    The immediate workspace gets a fresh temporary root folder. Unless
    ``i_know``, a warning about what immediate mode is (and is not) is printed.
    """
    global _immediate_mode, _immediate_root_folder
    if IsImmediate():
        StopImmediate()
    _immediate_mode = True
    with WorkspaceGuard(_immediate_workspace_name):
        _immediate_root_folder = tempfile.mkdtemp(prefix="caffe2rnn-immediate-")
        ResetWorkspace(_immediate_root_folder)
    if not i_know:
        print(
            "caffe2rnn immediate mode is on: every operator you create is also run\n"
            "at once, in the workspace '%s' (read it with FetchImmediate).\n"
            "Ops must be runnable in the order you create them; all of them share\n"
            "that one workspace; each run makes and drops a temporary operator, so\n"
            "it is slow on purpose. Use it to debug, then call StopImmediate()."
            % _immediate_workspace_name
        )


def StopImmediate():
    """Turn immediate mode off: empty its workspace and delete its root folder."""
    global _immediate_mode, _immediate_root_folder
    if not IsImmediate():
        return
    with WorkspaceGuard(_immediate_workspace_name):
        ResetWorkspace()
    shutil.rmtree(_immediate_root_folder, ignore_errors=True)
    _immediate_root_folder = ""
    _immediate_mode = False


def ImmediateBlobs():
    with WorkspaceGuard(_immediate_workspace_name):
        return Blobs()


def RunOperatorImmediate(op):
    with WorkspaceGuard(_immediate_workspace_name):
        RunOperatorOnce(op)


def FetchImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return FetchBlob(*args, **kwargs)


def FeedImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return FeedBlob(*args, **kwargs)


__all__ = [n for n in dir() if n[0].isupper() or n in ("blobs", "operator_tracebacks")]
