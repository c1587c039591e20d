"""``Rollback``: a failed run leaves the workspace exactly as it was.

Caffe2 gave no such promise: an operator that threw half-way had already
resized its outputs, and a net that failed at op #5 kept what ops #0-4 wrote.
Here ``workspace.RunOperatorOnce``, ``RunNetOnce`` and ``RunNet`` (and the
runtime's :meth:`Workspace.run_operator_once
<caffe2rnn.runtime.Workspace.run_operator_once>` ... under them) either
succeed or raise with every blob as it was before the call: the same set of
names, each holding the same object with the same contents.

How it stays cheap. Before the first op runs, the journal notes every blob
the op (or the net's ops) may write -- its outputs -- once per call, however
many ops or iterations write it:

* a blob that does not exist yet costs nothing: it is removed again;
* a blob's *value* is kept by reference, so an op that replaces it (a new
  array, a queue, a string) is undone by putting the reference back;
* a tensor already there may be written *into* (outputs keep their memory
  when the size matches, see :meth:`Blob.resize <caffe2rnn.runtime.Blob.resize>`),
  so its contents are copied once, and put back with ``np.copyto`` into the
  same array: views of it (links, ``Alias``) see the old numbers again too.
  Read-only arrays are not copied: nothing can have written them.

So a call costs at most one copy of the tensors its ops overwrite -- for a
training net, about one extra pass over its activations and parameters, small
beside the ops' own passes. A created net run again and again (``RunNet``)
keeps its journal's copies between runs and copies into them (``spares``):
allocating them afresh each run cost more than the copy itself (the pages of
a new array are faulted in one by one: at T = 10,000, 225 MB, a third of an
LSTM's forward+backward). That keeps one copy of the net's outputs in memory
between runs, which each run allocated anyway. Step nets inside a RecurrentNetwork are not
journaled on their own: the RecurrentNetwork op's outputs are.

What is not undone: changes *inside* non-tensor objects a blob holds (a blobs
queue that was pushed to, a RecurrentNetwork's step workspaces), files an op
wrote, and the random stream fills drew from. A :class:`~caffe2rnn.runtime.plan`
run removes the empty blobs it created and nothing more.
"""

import numpy as np


class Rollback:
    """The journal of one guarded call on ``ws``; :meth:`undo` restores it."""

    __slots__ = ("ws", "names_before", "saved", "spares")

    def __init__(self, ws, spares=None):
        self.ws = ws
        self.names_before = set(ws._blobs)
        self.saved = {}  # id(blob) -> (blob, value, copy of its contents or None)
        # id(blob) -> (blob, array): copies of an earlier call, to copy into
        self.spares = spares

    def note(self, blobs):
        """Remember ``blobs`` (runtime Blobs about to be written), once each."""
        saved = self.saved
        for blob in blobs:
            key = id(blob)
            if key in saved:
                continue
            value = blob.value
            contents = None
            if type(value) is np.ndarray and value.flags.writeable:
                contents = self._copy(key, blob, value)
            saved[key] = (blob, value, contents)

    def _copy(self, key, blob, value):
        spares = self.spares
        if spares is None:
            return value.copy(order="K")
        spare = spares.get(key)
        if spare is not None:
            array = spare[1]
            if array.shape == value.shape and array.dtype == value.dtype:
                np.copyto(array, value)
                return array
        array = np.array(value, order="C", copy=True)
        spares[key] = (blob, array)
        return array

    def note_outputs(self, ops):
        for op in ops:
            self.note(op.outputs)

    def undo(self):
        """Put every noted blob back and drop the names created since."""
        for blob, value, contents in reversed(list(self.saved.values())):
            if contents is not None:
                np.copyto(value, contents)
            blob.value = value
        blobs = self.ws._blobs
        for name in set(blobs) - self.names_before:
            del blobs[name]
