"""The inner workspaces of Caffe2's ``Do`` operator, and the stack that keeps them.

Caffe2 (2017-09 on; 929c33cee's ``core/workspace.h`` and
``operators/create_scope_op.h``) ran the body of an ``If`` or ``While``
block in a workspace of its own, made by the ``Do`` operator:

* A :class:`BoundWorkspace` sees **only** the blobs it is bound to:
  ``inner name -> outer name`` of a parent workspace (Caffe2's
  ``Workspace(parent, forwarded_blobs)``). Reading or writing ``y`` inside
  is reading or writing the parent's ``y``; every other blob the body makes
  is local and disappears with the workspace, so a block's temporaries never
  reach the outer net. Bindings resolve lazily: the parent blob as it is
  when the inner op binds it.
* ``copy_forwarded_tensors`` (``Do``'s ``copy_external_blobs``, which the
  ``While`` body sets) turns bound blobs into local copies of their current
  values after a run: each iteration's workspace keeps the values that
  iteration saw, which is what the backward pass reads.
* A :class:`WorkspaceStack` (the value of the blob ``CreateScope`` makes) is
  a stack of such workspaces. A forward ``Do`` pushes one (reusing a
  workspace from an earlier run of the net when there is one, with its local
  copies of bound blobs dropped and the bindings set again), a gradient
  ``Do`` pops the newest and adds the gradients' bindings to it
  (``skip_defined_blobs``: a local copy stays). ``CreateScope`` empties the
  stack; ``HasScope`` says whether anything is left to pop, which is how the
  gradient of ``While`` runs its body once per forward iteration.

Errors are Caffe2's ``CAFFE_ENFORCE`` messages, as
:class:`~caffe2rnn.errors.EnforceNotMet`.
"""

from ..errors import EnforceNotMet
from .workspace import Workspace


class BoundWorkspace(Workspace):
    """A workspace that sees only its bound parent blobs (module docstring)."""

    def __init__(self, parent, bindings):
        super().__init__(parent=None, name="Do")
        self._forwarded = {}  # inner name -> (parent workspace, outer name)
        for inner, outer in bindings.items():
            if not parent.has_blob(outer):
                raise EnforceNotMet("Invalid parent workspace blob " + outer)
            self._forwarded[inner] = (parent, outer)

    def has_blob(self, name):
        if name in self._blobs:
            return True
        bound = self._forwarded.get(name)
        return bound is not None and bound[0].has_blob(bound[1])

    def get_blob(self, name):
        blob = self._blobs.get(name)
        if blob is not None:
            return blob
        bound = self._forwarded.get(name)
        return None if bound is None else bound[0].get_blob(bound[1])

    def create_blob(self, name):
        blob = self.get_blob(name)
        if blob is None and name in self._forwarded:
            parent, outer = self._forwarded[name]
            raise EnforceNotMet(
                "blob %s is bound to the parent workspace's %s, which no longer exists"
                % (name, outer)
            )
        return blob if blob is not None else self.create_local_blob(name)

    def blobs(self):
        names = self.local_blobs()
        names += sorted(n for n, (ws, outer) in self._forwarded.items() if ws.has_blob(outer))
        return names

    def add_blob_mapping(self, parent, bindings, skip_defined_blobs=False):
        """Caffe2's ``AddBlobMapping``: bind more names (the same binding again is fine)."""
        for inner, outer in bindings.items():
            if not parent.has_blob(outer):
                raise EnforceNotMet("Invalid parent workspace blob " + outer)
            if inner in self._forwarded:
                bound_parent, bound_outer = self._forwarded[inner]
                if bound_parent is not parent or bound_outer != outer:
                    raise EnforceNotMet("Redefinition of blob " + inner)
                continue
            if skip_defined_blobs and self.has_blob(inner):
                continue
            if self.has_blob(inner):
                raise EnforceNotMet("Redefinition of blob " + inner)
            self._forwarded[inner] = (parent, outer)

    def copy_forwarded_tensors(self, names):
        """Make each bound name of ``names`` a local blob holding a copy of the
        parent's tensor (Caffe2's ``CopyForwardedTensors``)."""
        import numpy as np

        for name in names:
            bound = self._forwarded.get(name)
            if bound is None:
                continue
            source = bound[0].get_blob(bound[1])
            if source is None:
                raise EnforceNotMet("Expected blob with tensor value " + bound[1])
            if type(source.value) is not np.ndarray:
                raise EnforceNotMet("Expected blob with tensor value " + bound[1])
            del self._forwarded[name]
            self.create_local_blob(name).value = source.value.copy()


class WorkspaceStack:
    """The stack of ``Do`` workspaces a ``CreateScope`` blob holds (module docstring)."""

    caffe2_type_name = "caffe2::detail::WorkspaceStack"

    def __init__(self):
        self._workspaces = []
        self._top = -1

    def push_forward_workspace(self, parent, bindings):
        if self._top == len(self._workspaces) - 1:
            self._workspaces.append(BoundWorkspace(parent, bindings))
        else:
            # Reuse the workspace of an earlier run: drop its local copies of
            # bound blobs, bind them again.
            workspace = self._workspaces[self._top + 1]
            copies = [inner for inner in bindings if workspace.has_local_blob(inner)]
            for inner in copies:
                workspace.remove_blob(inner)
            if copies:
                workspace.add_blob_mapping(parent, bindings)
        self._top += 1
        return self._workspaces[self._top]

    def pop_gradient_workspace(self, parent, bindings):
        if self._top < 0:
            return None
        workspace = self._workspaces[self._top]
        workspace.add_blob_mapping(parent, bindings, skip_defined_blobs=True)
        self._top -= 1
        return workspace

    def reuse_last_forward_workspace(self, parent, bindings):
        if self._top < 0:
            return None
        self._workspaces[self._top].add_blob_mapping(parent, bindings)
        return self._workspaces[self._top]

    def clear(self):
        self._top = -1

    def empty(self):
        return self._top < 0
