"""``Workspace``: named blobs and nets, optionally inside a parent workspace.

A child workspace (Caffe2's ``Workspace(shared)``) *sees* its parent's blobs:
lookups go up the chain, and creating a blob that is visible anywhere up the
chain returns that blob instead of shadowing it. That is how a step net run
in a per-timestep workspace reads parameters from the outer workspace and
writes recurrent states into tensors the outer workspace owns, while its
intermediate blobs stay local to the timestep (spec §5.4).
"""

import numpy as np

from ..errors import BlobNotFoundError, WorkspaceError, op_context
from .blob import Blob
from .net import NetInstance, create_operator, with_context


class Workspace:
    """Blobs by name, nets by name, and an optional parent workspace."""

    caffe2_type_name = "caffe2::Workspace"

    def __init__(self, parent=None, name=""):
        self.parent = parent
        self.name = name
        self._blobs = {}
        self._nets = {}

    # --- blobs ----------------------------------------------------------------
    def has_blob(self, name):
        ws = self
        while ws is not None:
            if name in ws._blobs:
                return True
            ws = ws.parent
        return False

    def get_blob(self, name):
        """The blob visible under ``name`` (local first, then parents), or None."""
        ws = self
        while ws is not None:
            blob = ws._blobs.get(name)
            if blob is not None:
                return blob
            ws = ws.parent
        return None

    def blob(self, name):
        """Like :meth:`get_blob` but a missing blob is a BlobNotFoundError."""
        blob = self.get_blob(name)
        if blob is None:
            raise BlobNotFoundError("Can't find blob: %s" % name)
        return blob

    def create_blob(self, name):
        """The visible blob ``name``, or a new local one if none is visible."""
        blob = self.get_blob(name)
        if blob is None:
            blob = self._blobs[name] = Blob(name)
        return blob

    def create_local_blob(self, name):
        """A blob in *this* workspace, shadowing any parent blob of that name."""
        blob = self._blobs.get(name)
        if blob is None:
            blob = self._blobs[name] = Blob(name)
        return blob

    def remove_blob(self, name):
        return self._blobs.pop(name, None) is not None

    def has_local_blob(self, name):
        return name in self._blobs

    def local_blob_names(self):
        return list(self._blobs)

    def local_blobs(self):
        return sorted(self._blobs)

    def blobs(self):
        """Local names (sorted), then the parent's :meth:`blobs`."""
        names = self.local_blobs()
        if self.parent is not None:
            names += self.parent.blobs()
        return names

    def feed(self, name, value):
        """Store ``value`` (an ndarray is copied, contiguous) as blob ``name``."""
        if isinstance(value, np.ndarray):
            value = np.array(value, copy=True, order="C")
            if value.dtype.kind in "US":
                value = value.astype(object)
        self.create_blob(name).value = value
        return True

    def fetch(self, name):
        """A copy of a tensor blob; bytes for a string blob; a description otherwise."""
        blob = self.blob(name)
        value = blob.value
        if isinstance(value, np.ndarray):
            return value.copy()
        if isinstance(value, (bytes, str)):
            return value if isinstance(value, bytes) else value.encode("utf-8")
        return ("%s, a C++ native class of type %s." % (name, blob.type_name())).encode()

    # --- nets -----------------------------------------------------------------
    def create_net(self, netdef, overwrite=False):
        if netdef.name in self._nets and not overwrite:
            raise WorkspaceError(
                "I respectfully refuse to overwrite an existing net of the same "
                'name "%s", unless you explicitly specify overwrite=True.' % netdef.name
            )
        net = NetInstance(netdef, self)
        self._nets[netdef.name] = net
        return net

    def get_net(self, name):
        return self._nets.get(name)

    def nets(self):
        return sorted(self._nets)

    def run_net(self, name, num_iter=1):
        net = self._nets.get(name)
        if net is None:
            raise WorkspaceError("Can't find net %s" % name)
        for _ in range(num_iter):
            net.run()
        return True

    def run_net_once(self, netdef):
        NetInstance(netdef, self).run()
        return True

    def run_operator_once(self, op_def):
        op = create_operator(op_def, self)
        try:
            op.run()
        except Exception as exc:
            raise with_context(exc, op_context(op_def)) from exc
        return True

    def __repr__(self):
        return "Workspace(%r, %d local blobs%s)" % (
            self.name,
            len(self._blobs),
            ", child" if self.parent else "",
        )
