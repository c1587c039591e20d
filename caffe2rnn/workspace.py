"""``caffe2.python.workspace``: the module-level API over named workspaces.

Caffe2 kept one global table of workspaces and a *current* one (initially
``"default"``); ``FeedBlob``/``FetchBlob``/``RunNet`` all act on the current
workspace. Blob data is copied on the way in and on the way out, so an array
you fed can be changed without touching the blob.
"""

import numpy as np

from . import eras
from .errors import BlobNotFoundError, WorkspaceError
from .operators import registry as _registry
from .proto import caffe2_pb2, parse
from .runtime import Workspace

_workspaces = {}
_current_name = "default"


def _ws():
    ws = _workspaces.get(_current_name)
    if ws is None:
        ws = _workspaces[_current_name] = Workspace(name=_current_name)
    return ws


def C_Workspace():
    """The current :class:`~caffe2rnn.runtime.Workspace` object itself."""
    return _ws()


def CurrentWorkspace():
    return _current_name


def Workspaces():
    _ws()
    return list(_workspaces)


def SwitchWorkspace(name, create_if_missing=None):
    """Make workspace ``name`` current (creating it if ``create_if_missing``)."""
    global _current_name
    if name not in _workspaces:
        if not create_if_missing:
            raise WorkspaceError(
                "Workspace %s does not exist; pass create_if_missing=True to create it." % name
            )
        _workspaces[name] = Workspace(name=name)
    _current_name = name
    return True


def ResetWorkspace(root_folder=None):
    """Replace the current workspace by an empty one of the same name."""
    _workspaces[_current_name] = Workspace(name=_current_name)
    return True


def _name(name):
    from .core.blob import BlobReference

    assert isinstance(name, (str, BlobReference)), (
        "Blob name must be a str or a BlobReference, got %r" % (name,)
    )
    return str(name)


_TENSOR_FIELDS = {
    caffe2_pb2.TensorProto.FLOAT: ("float_data", np.float32),
    caffe2_pb2.TensorProto.DOUBLE: ("double_data", np.float64),
    caffe2_pb2.TensorProto.INT32: ("int32_data", np.int32),
    caffe2_pb2.TensorProto.INT64: ("int64_data", np.int64),
}


def _tensor_proto_to_array(proto):
    if proto.data_type not in _TENSOR_FIELDS:
        raise TypeError(
            "FeedBlob of a TensorProto supports FLOAT, DOUBLE, INT32 "
            "and INT64 data, not %s" % caffe2_pb2.TensorProto.DataType.Name(proto.data_type)
        )
    field, dtype = _TENSOR_FIELDS[proto.data_type]
    return np.asarray(getattr(proto, field), dtype=dtype).reshape(tuple(proto.dims))


def FeedBlob(name, arr, device_option=None):
    """Copy ``arr`` (ndarray, TensorProto, str or bytes) into blob ``name``."""
    name = _name(name)
    if isinstance(arr, caffe2_pb2.TensorProto):
        arr = _tensor_proto_to_array(arr)
    if not isinstance(arr, (np.ndarray, str, bytes)):
        raise TypeError(
            "Unexpected type of argument - only numpy array or "
            "string are supported for feeding (blob '%s' got %s)" % (name, type(arr).__name__)
        )
    return _ws().feed(name, arr)


def FetchBlob(name):
    """A copy of blob ``name``'s tensor (bytes for a string blob)."""
    return _ws().fetch(_name(name))


def FetchBlobs(names):
    return [FetchBlob(name) for name in names]


def HasBlob(name):
    return _ws().has_blob(_name(name))


def Blobs():
    return _ws().blobs()


def CreateBlob(name):
    _ws().create_blob(_name(name))
    return True


def _netdef(net):
    return net if isinstance(net, caffe2_pb2.NetDef) else net.Proto()


def _op_def(op):
    if isinstance(op, bytes):
        return parse(caffe2_pb2.OperatorDef, op)
    return op


def CreateNet(net, overwrite=False, input_blobs=None):
    """Instantiate ``net`` (a Net or NetDef) in the current workspace."""
    ws = _ws()
    for name in input_blobs or []:
        ws.create_blob(_name(name))
    ws.create_net(_netdef(net), overwrite=overwrite)
    return True


def RunNet(name, num_iter=1, allow_fail=False):
    """Run the created net ``name`` (a str or a Net) ``num_iter`` times."""
    name = name if isinstance(name, str) else name.Proto().name
    try:
        return _ws().run_net(name, num_iter)
    except Exception:
        if allow_fail:
            return False
        raise


def RunNetOnce(net):
    """Instantiate ``net`` in the current workspace, run it once, discard it."""
    return _ws().run_net_once(_netdef(net))


def RunOperatorOnce(op):
    """Run one OperatorDef (or its serialized bytes) in the current workspace."""
    return _ws().run_operator_once(_op_def(op))


def RunOperatorsOnce(ops):
    for op in ops:
        try:
            RunOperatorOnce(op)
        except Exception:
            return False
    return True


def Nets():
    return _ws().nets()


def RegisteredOperators():
    return _registry.registered_operators()


def RootFolder():
    return "."


def GlobalInit(args):
    return True


class _BlobsView:
    """``workspace.blobs``: dict-like access to the current workspace's blobs."""

    def __getitem__(self, key):
        try:
            return FetchBlob(key)
        except BlobNotFoundError:
            raise KeyError(key) from None

    def __setitem__(self, key, value):
        FeedBlob(key, value)

    def __len__(self):
        return len(Blobs())

    def __iter__(self):
        return iter(Blobs())

    def __contains__(self, key):
        return HasBlob(key)


blobs = _BlobsView()

__all__ = [n for n in dir() if n[0].isupper() or n == "blobs"]
del eras
