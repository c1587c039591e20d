"""Stream copy: ``dst[...] = src``, for a copy nobody will read soon.

Twin of ``_ext/stream_copy.pyx`` (same checks, same bytes).

``workspace.RunNet`` keeps a rollback journal (:mod:`caffe2rnn.runtime.rollback`):
before a run it copies every tensor the net will overwrite, and reads the
copies back only if the run fails. Written the ordinary way, those copies —
an LSTM's activations and gradients, tens of megabytes — pass through the
cache on their way to memory and push out the data the run is about to use.
The compiled kernel writes them with non-temporal (streaming) stores, which
go to memory without being cached; this twin is ``np.copyto``. Either way
``dst`` ends up holding ``src``'s bytes.

Both are C-contiguous arrays of one dtype and size, not holding Python
objects; ``dst`` is writable and apart from ``src``.
"""

import numpy as np

from ..errors import DTypeError, EnforceNotMet, ShapeError

KERNEL = "stream_copy"


def check(dst, src):
    """The kernel's checks (both paths run this very function)."""
    for name, a in (("dst", dst), ("src", src)):
        if type(a) is not np.ndarray or not a.flags.c_contiguous:
            raise EnforceNotMet("%s: %s must be a C-contiguous ndarray" % (KERNEL, name))
    if dst.dtype != src.dtype or dst.dtype.hasobject:
        raise DTypeError(
            "%s: dst is %s and src %s; expected one dtype without Python objects"
            % (KERNEL, dst.dtype, src.dtype)
        )
    if dst.shape != src.shape:
        raise ShapeError("%s: dst has shape %s, src %s" % (KERNEL, dst.shape, src.shape))
    if not dst.flags.writeable:
        raise EnforceNotMet("%s: dst is read-only; the kernel writes into it" % KERNEL)
    if dst.nbytes and np.may_share_memory(dst, src):
        raise EnforceNotMet("%s: dst and src overlap" % KERNEL)


def stream_copy(dst, src):
    """``dst[...] = src`` (see the module docstring)."""
    check(dst, src)
    np.copyto(dst, src)
