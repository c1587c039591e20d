"""``Blob``: a named container whose content is usually a tensor.

In Caffe2 a blob is a box owned by a workspace; operators are bound to boxes
when a net is created, and later runs replace or rewrite the *content*. Two
facts about Caffe2 tensors matter for recurrent nets and are copied here:

* an op writing an output first ``Resize``-s it: when the existing tensor has
  the same number of elements and type, its memory is **kept** and written in
  place. A RecurrentNetwork *link* makes ``hidden_t`` a view of row ``t + 1``
  of the states tensor; the step net's op then writes the new hidden state
  straight into that row. :meth:`Blob.resize` does exactly this.
* a blob may hold a view that shares memory with another blob (``Alias``,
  links, aliases): assigning ``blob.value = view`` shares, never copies.
"""

import math

import numpy as np


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
        array is reshaped in place: views into bigger tensors stay views);
        otherwise allocates a new, uninitialised array, as Caffe2 did.
        """
        shape = tuple(shape)
        cur = self.value
        if (
            type(cur) is np.ndarray
            and cur.dtype == dtype
            and cur.size == math.prod(shape)
            and cur.flags.c_contiguous
        ):
            if cur.shape != shape:
                cur = cur.reshape(shape)
                self.value = cur
            return cur
        arr = np.empty(shape, dtype=dtype)
        self.value = arr
        return arr

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
