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
beside the ops' own passes. Memory is copied once however many blobs show it:
a blob that is a view of bytes already copied (``hidden_all`` is a view of the
recurrent op's state tensor, ``h0_grad`` of its gradient) costs nothing more,
and a view covering most of its buffer is copied as the whole buffer, so that
the other views of it noted later are covered too (the recurrent op notes its
state tensors when it starts, after its outputs were noted).

A created net run again and again (``RunNet``) keeps its journal's copies
between runs and copies into them (``spares``):
allocating them afresh each run cost more than the copy itself (the pages of
a new array are faulted in one by one: at T = 10,000, 225 MB, a third of an
LSTM's forward+backward). That keeps one copy of the net's outputs in memory
between runs, which each run allocated anyway. Copies of a quarter megabyte
and more are written with streaming stores (:mod:`caffe2rnn.kernels.stream_copy`),
past the cache: they are read back only if a run fails, and an ordinary copy
of an LSTM's activations would push out of the cache the data the run is
about to use. Step nets inside a RecurrentNetwork are not
journaled on their own: the RecurrentNetwork op's outputs are.

Swaps instead of copies. Some outputs are written whole before anything
reads them: ``FC``'s ``Y`` (an LSTM's input projection, two thirds of what an
inference net's journal copied). For those the journal copies nothing: it
hands the blob a spare array of the same shape and capacity, keeps the old
array aside untouched, and puts it back if the run fails; after a successful
run the old array is the next run's spare, so two arrays take turns. Which
outputs qualify is read off the net once (:func:`swappable`: the outputs of
its leading ops that declare :attr:`~caffe2rnn.operators.base.Operator.writes_outputs_whole`,
read by none of them), and each run checks that nobody else sees the array:
not a Python caller who took it as ``TensorCPU.data`` (:func:`~caffe2rnn.runtime.blob.expose`),
not another blob of the workspace (an ``Alias``). A recurrent op reading the
swapped blob keeps an executor plan per array (:mod:`caffe2rnn.operators.rnn.executor`).
``FetchBlob`` returns a copy, which no run changes either way.

What is not undone: changes *inside* non-tensor objects a blob holds (a blobs
queue that was pushed to, a RecurrentNetwork's step workspaces), files an op
wrote, and the random stream fills drew from. A :class:`~caffe2rnn.runtime.plan`
run removes the empty blobs it created and nothing more.
"""

import numpy as np

from .. import kernels
from .blob import capacity_storage, exposed, same_capacity

try:  # NumPy >= 2.0
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # pragma: no cover (NumPy 1.x)
    byte_bounds = np.byte_bounds  # type: ignore[attr-defined]

#: A view covering at least this share of its buffer is copied as the whole buffer.
WHOLE_BUFFER = 0.5
#: Below this size a tensor is copied without looking for other blobs that
#: show the same memory (the look costs more than copying a small tensor twice).
SHARED_BYTES = 1 << 16
#: From this size a copy into a spare is streamed past the cache
#: (:mod:`caffe2rnn.kernels.stream_copy`): it is read back only if a run fails.
STREAM_BYTES = 1 << 18
#: The key of a swapped blob's spare array in ``spares``: (SWAP, id(blob)).
SWAP = "swap"
#: A swap looks at every blob of the workspace first (is the array shown
#: elsewhere?); below this many bytes per blob looked at, copying is cheaper.
SWAP_BYTES_PER_BLOB = 4096
#: Whether the journal swaps what it may (:meth:`Rollback.swap`); False copies
#: every blob, as before swaps (benchmarks/bench_journal.py times both).
swapping = True


def swappable(ops):
    """The output blobs of ``ops`` (a net's, in order) that every run writes
    whole before anything reads them: the outputs of the net's *leading* ops
    that declare ``writes_outputs_whole``, first written there and read by
    none of those ops. The search stops at the first op that does not
    declare it: from there on anything may read anything (a recurrent op's
    step net reads blobs by name)."""
    touched, found = set(), []
    for op in ops:
        if not op.writes_outputs_whole:
            break
        touched.update(map(id, op.inputs))
        for blob in op.outputs:
            if id(blob) not in touched:
                found.append(blob)
            touched.add(id(blob))
    return found


def _root(array):
    """The array that owns ``array``'s memory (NumPy keeps views' ``base``
    pointing at it)."""
    while type(array.base) is np.ndarray:
        array = array.base
    return array


def _seen_elsewhere(ws, blob, root):
    """Whether a blob of ``ws`` or its parents other than ``blob`` holds
    memory of ``root`` (an ``Alias``, or a view)."""
    while ws is not None:
        for other in ws._blobs.values():
            value = other.value
            if other is not blob and type(value) is np.ndarray and _root(value) is root:
                return True
        ws = ws.parent
    return False


def _capacity(array):
    storage = capacity_storage(array)
    return array.size if storage is None else storage.size


class Rollback:
    """The journal of one guarded call on ``ws``; :meth:`undo` restores it."""

    __slots__ = ("ws", "names_before", "saved", "spares", "copied", "swapped")

    def __init__(self, ws, spares=None):
        self.ws = ws
        self.names_before = set(ws._blobs)
        # id(blob) -> (blob, value, array to restore into or None, its copy)
        self.saved = {}
        # id(blob) -> (array copied, its copy): copies of an earlier call, to copy into;
        # (SWAP, id(blob)) -> the spare array a swapped blob gets next
        self.spares = spares
        self.copied = {}  # id(buffer) -> the array of it copied (a list: several)
        self.swapped = []  # (blob, its array kept aside, the spare it holds now)

    def swap(self, blobs):
        """Hand each of ``blobs`` (see :func:`swappable`; the run must write
        them whole before reading them) a spare array in place of its own,
        which is kept aside untouched -- instead of copying it. Only with
        ``spares`` (a created net's), for an array of at least
        :data:`SHARED_BYTES` and :data:`SWAP_BYTES_PER_BLOB` per blob of the
        workspace (and its parents) that no Python caller was given and no other
        blob shows, whose memory is its own (not a view into another
        tensor); any other blob is left to :meth:`note`. Call before
        :meth:`note`."""
        spares = self.spares
        if spares is None or not swapping or not blobs:
            return
        ws, looked_at = self.ws, 0
        while ws is not None:
            looked_at += len(ws._blobs)
            ws = ws.parent
        smallest = max(SHARED_BYTES, SWAP_BYTES_PER_BLOB * looked_at)
        for blob in blobs:
            value = blob.value
            if (
                type(value) is not np.ndarray
                or id(blob) in self.saved
                or value.nbytes < smallest
                or value.dtype.hasobject
                or not (value.flags.writeable and value.flags.c_contiguous)
                or exposed(value)
            ):
                continue
            root = _root(value)
            if root is not value and root is not capacity_storage(value):
                continue  # a view into another tensor's memory
            if _seen_elsewhere(self.ws, blob, root):
                continue
            spare = spares.get((SWAP, id(blob)))
            if (
                spare is None
                or spare.shape != value.shape
                or spare.dtype != value.dtype
                or _capacity(spare) != _capacity(value)
            ):
                spare = same_capacity(value)
            blob.value = spare
            self.saved[id(blob)] = (blob, value, None, None)
            self.swapped.append((blob, value, spare))

    def commit(self):
        """The call succeeded: each swapped blob's old array is its next spare."""
        for blob, value, _ in self.swapped:
            self.spares[(SWAP, id(blob))] = value

    def note(self, blobs):
        """Remember ``blobs`` (runtime Blobs about to be written), once each.

        A tensor's bytes are copied unless an earlier noted array of the same
        buffer covers them; a view covering most of its buffer is copied as
        the buffer (:data:`WHOLE_BUFFER`). A small tensor is simply copied
        (:data:`SHARED_BYTES`): this runs for every output of every
        ``RunNet``, and a net of small ops should not pay for the search."""
        saved, copied = self.saved, self.copied
        for blob in blobs:
            key = id(blob)
            if key in saved:
                continue
            value = blob.value
            target = contents = None
            if type(value) is np.ndarray and value.flags.writeable and value.size:
                if value.nbytes < SHARED_BYTES:  # small: copied, however many show it
                    target = value
                    saved[key] = (blob, value, value, self._copy(key, value))
                    continue
                root = value
                while type(root.base) is np.ndarray:
                    root = root.base
                target = value
                if root is not value and WHOLE_BUFFER * root.nbytes <= value.nbytes < root.nbytes:
                    flags = root.flags
                    if flags.writeable and (flags.c_contiguous or flags.f_contiguous):
                        target = root
                if id(root) in copied:
                    target = self._not_copied_yet(value, target, copied, id(root))
                else:
                    copied[id(root)] = target
                if target is not None:
                    contents = self._copy(key, target)
            saved[key] = (blob, value, target, contents)

    @staticmethod
    def _not_copied_yet(value, target, copied, buffer):
        """``target``, or None when an array of the same buffer copied before
        covers ``value``'s bytes."""
        done = copied[buffer]
        if type(done) is not list:
            done = copied[buffer] = [done]
        low, high = byte_bounds(value)
        for array in done:
            lo, hi = byte_bounds(array)
            if lo <= low and high <= hi:
                return None
        done.append(target)
        return target

    def _copy(self, key, value):
        spares = self.spares
        if spares is None:
            return value.copy(order="K")
        spare = spares.get(key)
        if spare is not None and spare[0] is value:
            array = spare[1]
            if array.shape == value.shape and array.dtype == value.dtype:
                big = value.nbytes >= STREAM_BYTES and not value.dtype.hasobject
                if big and value.flags.c_contiguous:
                    kernels.current().stream_copy(array, value)
                    return array
                np.copyto(array, value)
                return array
        array = np.array(value, order="C", copy=True)
        spares[key] = (value, array)
        return array

    def note_outputs(self, ops):
        for op in ops:
            self.note(op.outputs)

    def undo(self):
        """Put every noted blob back and drop the names created since (a
        swapped blob gets its own array back; the spare stays a spare)."""
        for blob, _, spare in self.swapped:
            self.spares[(SWAP, id(blob))] = spare
        for blob, value, target, contents in reversed(list(self.saved.values())):
            if contents is not None:
                np.copyto(target, contents)
            blob.value = value
        blobs = self.ws._blobs
        for name in set(blobs) - self.names_before:
            del blobs[name]


def swapped_from(ws, blob):
    """The array an open journal of ``ws`` (or of a parent) put aside when it
    handed ``blob`` the spare it holds now (:meth:`Rollback.swap`), or None.
    The RNN executor derives a plan for the spare from the plan bound to
    that array (:mod:`caffe2rnn.operators.rnn.plan_pair`)."""
    while ws is not None:
        for journal in ws._journals:
            for swapped, value, spare in journal.swapped:
                if swapped is blob and blob.value is spare:
                    return value
        ws = ws.parent
    return None
