"""``Workspace``: named blobs and nets, optionally inside a parent workspace.

A child workspace (Caffe2's ``Workspace(shared)``) *sees* its parent's blobs:
lookups go up the chain, and creating a blob that is visible anywhere up the
chain returns that blob instead of shadowing it. That is how a step net run
in a per-timestep workspace reads parameters from the outer workspace and
writes recurrent states into tensors the outer workspace owns, while its
intermediate blobs stay local to the timestep.

A workspace also has a *root folder* (Caffe2's ``RootFolder()``, ``"."`` unless
given): the directory operators that read or write files resolve relative
paths against. A child workspace made for a step has ``"."``, as in Caffe2.

Creating an operator binds its outputs, creating their blobs. In Caffe2 a run
that failed left those blobs behind, and whatever the ops before the failing
one had written. Here :meth:`Workspace.run_operator_once`,
:meth:`~Workspace.run_net_once` and :meth:`~Workspace.run_net` (so
``workspace.RunOperatorOnce``, ``RunNetOnce``, ``RunNet``) succeed or leave
the workspace exactly as it was: same blob names, same values, same contents
(see :mod:`caffe2rnn.runtime.rollback` for how, and what lies outside).
"""

import contextlib

import numpy as np

from ..errors import BlobNotFoundError, WorkspaceError, op_context
from .blob import Blob
from .net import NetInstance, create_operator, with_context
from .plan import run_plan
from .rollback import Rollback, swappable


class Workspace:
    """Blobs by name, nets by name, and an optional parent workspace."""

    caffe2_type_name = "caffe2::Workspace"
    #: Index in its net of the last operator that failed to be created or to
    #: run here (Caffe2's ``last_failed_op_net_position``); set by NetInstance.
    last_failed_op_net_position = 0

    def __init__(self, parent=None, name="", root_folder="."):
        self.parent = parent
        self.name = name
        self.root_folder = root_folder
        self._blobs = {}
        self._nets = {}
        self._journals = []  # the open Rollback journals of calls on this workspace

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

    def local_blob(self, name):
        """The blob ``name`` of this workspace itself (not a parent's), or None."""
        return self._blobs.get(name)

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
        return fetch_value(self.blob(name))

    # --- nets -----------------------------------------------------------------
    def create_net(self, netdef, overwrite=False, era=None, checked=False):
        # Caffe2's own words (workspace.cc, CreateNet), C++ spelling of the flag included.
        if netdef.name in self._nets and not overwrite:
            raise WorkspaceError(
                "I respectfully refuse to overwrite an existing net of the same "
                'name "%s", unless you explicitly specify overwrite=true.' % netdef.name
            )
        net = NetInstance(netdef, self, era, checked)
        self._nets[netdef.name] = net
        return net

    def get_net(self, name):
        return self._nets.get(name)

    def nets(self):
        return sorted(self._nets)

    def delete_net(self, name):
        """Forget the created net ``name`` (nothing happens if there is none)."""
        self._nets.pop(name, None)

    def run_net(self, name, num_iter=1):
        """Run the created net ``name`` ``num_iter`` times; all or nothing."""
        net = self._nets.get(name)
        if net is None:
            raise WorkspaceError(
                "Can't find net %s (created nets in workspace '%s': %s)"
                % (name, self.name, ", ".join(sorted(self._nets)) or "none")
            )
        return self.run_created(net, num_iter)

    def run_created(self, net, num_iter=1):
        """Run the :class:`NetInstance` ``net`` (created here) ``num_iter``
        times; all or nothing — what ``RunNet`` and ``ws.nets[name].run()`` do."""
        # The journal copies into the net's spare arrays of its last run; a run
        # of the same net on another thread meanwhile finds none and allocates.
        spares, net.journal_spares = net.journal_spares or {}, None
        if net.journal_swaps is None:  # the outputs a run writes whole first
            net.journal_swaps = swappable(net.ops)
        try:
            with self.rolling_back(spares) as journal:
                if num_iter > 0:  # (no run, nothing written: a swap would lose the values)
                    journal.swap(net.journal_swaps)
                journal.note_outputs(net.ops)
                for _ in range(num_iter):
                    net.run()
            journal.commit()
        finally:
            net.journal_spares = spares
        return True

    @contextlib.contextmanager
    def rolling_back(self, spares=None):
        """Yield a :class:`~caffe2rnn.runtime.rollback.Rollback` journal; on an
        exception, undo what it noted (and drop blobs created meanwhile).
        ``spares``: arrays to copy into (see the journal)."""
        journal = Rollback(self, spares)
        self._journals.append(journal)
        try:
            yield journal
        except BaseException:
            journal.undo()
            raise
        finally:
            self._journals.remove(journal)

    def note_writes(self, names):
        """An operator is about to write the blobs ``names`` (as seen from this
        workspace) besides its outputs: every open journal of this workspace
        and of its parents notes them, so a failed call puts them back too.

        ``RecurrentNetwork`` calls it for what its step nets write *through*
        to outer workspaces: the state tensors, and any blob of an outer
        workspace that a step-net output or the timestep happens to name
        (Caffe2's ``CreateBlob`` returns the outer blob, which is written).
        """
        ws = self
        blobs = None
        while ws is not None:
            if ws._journals:
                if blobs is None:
                    blobs = [b for b in map(self.get_blob, names) if b is not None]
                for journal in ws._journals:
                    journal.note(blobs)
            ws = ws.parent

    @contextlib.contextmanager
    def dropping_new_empty_blobs(self):
        """On an exception, remove the local blobs created meanwhile that hold nothing."""
        before = set(self._blobs)
        try:
            yield
        except BaseException:
            for name in set(self._blobs) - before:
                if self._blobs[name].value is None:
                    del self._blobs[name]
            raise

    def run_net_once(self, netdef, era=None):
        """Create ``netdef`` here, run it once, forget it; all or nothing."""
        with self.rolling_back() as journal:
            net = NetInstance(netdef, self, era)
            journal.note_outputs(net.ops)
            net.run()
        return True

    def run_operator_once(self, op_def, era=None):
        """Create one operator here and run it; all or nothing."""
        with self.rolling_back() as journal:
            # Note the outputs before creating the op: creating binds (and so
            # may create) them, and setup() may already fail.
            journal.note(b for b in map(self.get_blob, op_def.output) if b is not None)
            op = create_operator(op_def, self, era=era)
            try:
                op.run()
            except Exception as exc:
                raise with_context(exc, op_context(op_def)) from exc
        return True

    def run_plan(self, plan, era=None, net_eras=None):
        """Run a ``PlanDef`` here (see :mod:`caffe2rnn.runtime.plan`); its nets are
        created with ``net_eras[name]``, else ``era`` (None: today's operators)."""
        return run_plan(self, plan, era, net_eras)

    def __repr__(self):
        return "Workspace(%r, %d local blobs%s)" % (
            self.name,
            len(self._blobs),
            ", child" if self.parent else "",
        )


def fetch_value(blob):
    """What Caffe2's fetcher returned for ``blob``: a copy of a tensor, the
    bytes of a string, or ``b"<name>, a C++ native class of type <type>."``."""
    value = blob.value
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (bytes, str)):
        return value if isinstance(value, bytes) else value.encode("utf-8")
    return ("%s, a C++ native class of type %s." % (blob.name, blob.type_name())).encode()
