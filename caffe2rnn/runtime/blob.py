"""``Blob``: a named container whose content is usually a tensor.

In Caffe2 a blob is a box owned by a workspace; operators are bound to boxes
when a net is created, and later runs replace or rewrite the *content*. Two
facts about Caffe2 tensors matter for recurrent nets and are copied here:

* an op writing an output first ``Resize``-s it: when the existing tensor has
  the same number of elements and type, its memory is **kept** and written in
  place. A RecurrentNetwork *link* makes ``hidden_t`` a view of row ``t + 1``
  of the states tensor; the step net's op then writes the new hidden state
  straight into that row. :meth:`Blob.resize` does exactly this.
* when the size changes, Caffe2's ``Tensor::Resize`` kept the allocation if
  it was big enough (``--caffe2_keep_on_shrink``, default on, and at most
  ``--caffe2_max_keep_on_shrink_memory`` bytes unused): a smaller batch reuses
  the front of the old buffer, so whatever shared that buffer still shares it
  (Caffe2 8e01e4c8b: this is why bug B5 of ``recurrent_net`` showed with a
  smaller batch and not with a larger one). :data:`keep_on_shrink` and
  :data:`max_keep_on_shrink_memory` are those flags; ``workspace.GlobalInit``
  sets them from the same command-line options.
* a blob may hold a view that shares memory with another blob (``Alias``,
  links, aliases): assigning ``blob.value = view`` shares, never copies.
"""

import math
import sys
import weakref

import numpy as np

#: Caffe2's ``--caffe2_keep_on_shrink`` (default true): a tensor resized to
#: fewer bytes than it holds keeps its memory.
keep_on_shrink = True
#: Caffe2's ``--caffe2_max_keep_on_shrink_memory``: beyond this many unused
#: bytes a shrinking tensor is reallocated after all.
max_keep_on_shrink_memory = sys.maxsize


# A tensor's capacity, as Caffe2 kept it in the Tensor object: for each array
# :meth:`Blob.resize` handed out, the flat buffer it was cut from. The entry
# follows the array object wherever it goes (``Alias`` shares it, a blob swap
# moves it, as ``ShareData`` / ``std::swap`` did) and dies with it. Views made
# by slicing (RNN links, aliases: ``ShareExternalPointer``) are other objects
# and have no entry: their capacity is their own size.
_storage_of = {}


def _remember(arr, storage):
    key = id(arr)
    _storage_of[key] = (weakref.ref(arr, lambda _, key=key: _storage_of.pop(key, None)), storage)


def same_capacity(arr):
    """A new, uninitialised array of ``arr``'s shape and dtype whose capacity
    (the buffer :meth:`Blob.resize` may reuse) is as big as ``arr``'s: in
    place of ``arr`` in a blob, every later resize keeps or reallocates
    memory exactly as it would have with ``arr``."""
    storage = capacity_storage(arr)
    size = arr.size if storage is None else storage.size
    fresh = np.empty(size, dtype=arr.dtype)
    new = fresh[: arr.size].reshape(arr.shape)
    _remember(new, fresh)
    return new


# Arrays handed to Python code as a blob's own array (``TensorCPU.data``, a
# Python op's inputs and outputs): whoever holds one expects it to show the
# blob's later values, so the rollback journal never hands the blob another
# array in its place (:mod:`caffe2rnn.runtime.rollback`).
_exposed = {}


def expose(arr):
    """Note that Python code now holds ``arr``, a blob's own array."""
    key = id(arr)
    if key not in _exposed:
        _exposed[key] = weakref.ref(arr, lambda _, key=key: _exposed.pop(key, None))


def exposed(arr):
    """Whether :func:`expose` was called on ``arr`` (this very object)."""
    ref = _exposed.get(id(arr))
    return ref is not None and ref() is arr


def capacity_storage(arr):
    """The buffer behind ``arr`` if :meth:`Blob.resize` allocated it, else None."""
    entry = _storage_of.get(id(arr))
    if entry is None or entry[0]() is not arr:
        return None
    return entry[1]


class Blob:
    """A named slot in a workspace. ``value`` is an ndarray, bytes, or an object."""

    __slots__ = ("name", "value")

    def __init__(self, name, value=None):
        self.name = name
        self.value = value

    def is_tensor(self):
        return type(self.value) is np.ndarray

    def resize(self, shape, dtype=np.float32):
        """Return an ndarray of ``shape``/``dtype`` to write this blob's output into.

        Reuses the current storage when element count and type match (the
        array is reshaped in place: views into bigger tensors stay views).
        A different count of the same type reuses the tensor's buffer if its
        capacity is big enough and :data:`keep_on_shrink` is on (the front of
        it, holding old values); otherwise a new, uninitialised array is
        allocated, as Caffe2's ``Resize`` did.
        """
        cur = self.value
        # The common case first (every step of a loop): same shape and type.
        if (
            type(cur) is np.ndarray
            and cur.shape == shape
            and cur.dtype == dtype
            and cur.flags.c_contiguous
        ):
            return cur
        shape = tuple(shape)
        size = math.prod(shape)
        if type(cur) is np.ndarray and cur.dtype == dtype and cur.flags.c_contiguous:
            if cur.size == size:
                if cur.shape != shape:
                    storage = capacity_storage(cur)
                    cur = cur.reshape(shape)
                    self.value = cur
                    if storage is not None:
                        _remember(cur, storage)
                return cur
            # A tensor whose buffer resize did not allocate (a view made by
            # slicing) has its own size as capacity.
            storage = capacity_storage(cur)
            if storage is None:
                storage = cur.reshape(-1)
            if (
                keep_on_shrink
                and size <= storage.size
                and (storage.size - size) * storage.itemsize <= max_keep_on_shrink_memory
            ):
                arr = storage[:size].reshape(shape)
                _remember(arr, storage)
                self.value = arr
                return arr
        storage = np.empty(size, dtype=dtype)
        arr = storage.reshape(shape)
        _remember(arr, storage)
        self.value = arr
        return arr

    def swap(self, other):
        """Exchange contents (tensors, with their capacity) with blob ``other``,
        as C++ ``std::swap(*blob_a, *blob_b)`` did."""
        self.value, other.value = other.value, self.value

    def type_name(self):
        """The C++-style type name Caffe2's FetchBlob reported for non-tensors."""
        value = self.value
        if value is None:
            return "nullptr (uninitialized)"
        return getattr(value, "caffe2_type_name", type(value).__name__)

    def __repr__(self):
        if self.is_tensor():
            return "Blob(%r, %s%s)" % (self.name, self.value.dtype, self.value.shape)
        return "Blob(%r, %s)" % (self.name, self.type_name())
