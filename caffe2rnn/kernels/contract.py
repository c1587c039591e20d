"""What every raw kernel refuses, on both paths, with one message for each refusal.

The compiled kernels loop over raw memory, so before the first read or write
each entry point checks what its loops assume; the NumPy twins check the same
things, so the two paths accept exactly the same calls and refuse the others
with the same :mod:`caffe2rnn.errors` class and message (the tests and
``tests/fuzz/test_kernels_fuzz.py`` compare both). The checks, in the order
they run for each array argument:

=========================================  ====================================
refused                                     error (also a)
=========================================  ====================================
``None`` or not an ndarray                 :class:`DTypeError` (TypeError)
wrong dtype (float32/float64, int32)       :class:`DTypeError`
non-native byte order (``'>f4'``)          :class:`DTypeError`
not C-contiguous, misaligned               :class:`MemoryLayoutError` (ValueError)
read-only destination (memmap included)    :class:`MemoryLayoutError`
destination overlapping another argument   :class:`MemoryLayoutError`
sizes that do not match                    :class:`ShapeError` (ValueError)
an index that is no integer                :class:`ArgumentTypeError` (TypeError)
an index beyond 64 bits, or rows out of    :class:`OutOfRangeError` (IndexError)
bounds (negative included)
=========================================  ====================================

This module is the twin of ``_ext/_contract.pxd``: there each check is a few C
comparisons, done in 64-bit arithmetic arranged so that no intermediate can
overflow (``window <= rows - start``, never ``start + window <= rows``); only
when one fails does the compiled kernel call the function here that builds the
error, so the message has one home. A check here that finds nothing wrong after
the C side refused is a contract bug and raises ``SystemError``.
"""

import operator
import sys

import numpy as np

from ..errors import (
    ArgumentTypeError,
    DTypeError,
    MemoryLayoutError,
    OutOfRangeError,
    ShapeError,
)

INDEX_MIN, INDEX_MAX = -sys.maxsize - 1, sys.maxsize  # Py_ssize_t: 64 bits here
FLOAT_NUMS = (np.dtype(np.float32).num, np.dtype(np.float64).num)
INT32_NUM = np.dtype(np.int32).num
KINDS = {"float": "a float32 or float64", "int32": "an int32"}


def index(value, kernel, name):
    """``value`` as an int that fits a C ``Py_ssize_t`` (what the loops index with)."""
    try:
        value = operator.index(value)
    except TypeError:
        raise ArgumentTypeError(
            "%s: %s must be an integer, got %s" % (kernel, name, type(value).__name__)
        ) from None
    if not INDEX_MIN <= value <= INDEX_MAX:
        raise OutOfRangeError("%s: %s = %d does not fit in 64 bits" % (kernel, name, value))
    return value


def real(value, kernel, name):
    """``value`` as a float, as C's ``PyFloat_AsDouble`` reads it (no strings)."""
    if not isinstance(value, (str, bytes, bytearray)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise ArgumentTypeError(
        "%s: %s must be a number, got %s" % (kernel, name, type(value).__name__)
    )


def array(a, kernel, name, kind="float", writable=False):
    """Refuse an array the loops cannot use (see the table above); return it."""
    if a is None or not isinstance(a, np.ndarray):
        got = "None" if a is None else "a %s" % type(a).__name__
        raise DTypeError("%s: %s is %s; expected %s array" % (kernel, name, got, KINDS[kind]))
    num = a.dtype.num
    if (num not in FLOAT_NUMS) if kind == "float" else (num != INT32_NUM):
        raise DTypeError(
            "%s: %s is %s; expected %s array" % (kernel, name, a.dtype.name, KINDS[kind])
        )
    if not a.dtype.isnative:
        raise DTypeError(
            "%s: %s has the non-native byte order '%s'; expected native %s"
            % (kernel, name, a.dtype.str, a.dtype.name)
        )
    if not a.flags.c_contiguous:
        raise MemoryLayoutError(
            "%s: %s is not C-contiguous (strides %s)" % (kernel, name, a.strides)
        )
    if not a.flags.aligned:
        raise MemoryLayoutError("%s: %s is not aligned for %s" % (kernel, name, a.dtype.name))
    if writable and not a.flags.writeable:
        raise MemoryLayoutError(
            "%s: %s is read-only; the kernel writes its result into it" % (kernel, name)
        )
    return a


def same_dtype(kernel, first_name, first, name, a):
    """``a`` has the dtype of ``first`` (the loops are compiled per dtype)."""
    if a.dtype.num != first.dtype.num:
        raise DTypeError(
            "%s: %s is %s but %s is %s; expected one float type"
            % (kernel, name, a.dtype.name, first_name, first.dtype.name)
        )


def extent(a):
    """The bytes ``[low, high)`` a C-contiguous array occupies (empty: none)."""
    low = a.__array_interface__["data"][0]
    return low, low + a.nbytes


def no_overlap(kernel, written, others):
    """No array in ``written`` (name, array) shares bytes with a later argument.

    Both paths would compute something for overlapping arguments, but not the
    same thing (NumPy buffers an overlapping operand, a C loop does not). The
    arrays are contiguous here, so their byte ranges decide; an empty array
    overlaps nothing. ``None`` entries (an absent optional array) are skipped.
    """
    for i, (name, a) in enumerate(written):
        if a is None or a.nbytes == 0:
            continue
        low = high = None
        for other_name, b in written[i + 1 :] + others:
            if b is None or b.nbytes == 0:
                continue
            if a.flags.c_contiguous and b.flags.c_contiguous and not np.may_share_memory(a, b):
                continue  # the common case, decided in C (there the bounds are the extents)
            if low is None:
                low, high = extent(a)
            b_low, b_high = extent(b)
            if low < b_high and b_low < high:
                raise MemoryLayoutError(
                    "%s: %s overlaps %s; the kernel writes %s while reading %s"
                    % (kernel, name, other_name, name, other_name)
                )


def view_source(a, kernel, name):
    """An ndarray with a leading (row) dimension: its number of rows."""
    if a is None or not isinstance(a, np.ndarray):
        got = "None" if a is None else "a %s" % type(a).__name__
        raise DTypeError("%s: %s is %s; expected an array" % (kernel, name, got))
    if a.ndim < 1:
        raise ShapeError("%s: %s is a scalar; expected an array with rows" % (kernel, name))
    return a.shape[0]


def alias_start(kernel, n_rows, start):
    """Row ``start`` is within ``[0, n_rows]`` (``n_rows``: an empty alias)."""
    if not 0 <= start <= n_rows:
        raise OutOfRangeError(
            "%s: start %d is outside rows [0, %d] of the array" % (kernel, start, n_rows)
        )


def rows(kernel, n_rows, start, count):
    """Rows ``[start, start + count)`` lie within ``[0, n_rows)``."""
    if not (0 <= start <= n_rows and 0 <= count <= n_rows - start):
        raise OutOfRangeError(
            "%s: rows [%d, %d) are outside the %d rows of the array"
            % (kernel, start, start + count, n_rows)
        )


def accumulate_rows(kernel, g, og, t, offset):
    """Row ``t + offset`` of ``g`` and row ``t`` of ``og`` (rows of ``g.size / R``)."""
    if g.ndim < 1 or g.shape[0] == 0:
        raise ShapeError("%s: g has no rows (shape %s)" % (kernel, g.shape))
    n_rows = g.shape[0]
    step = g.size // n_rows
    if t < 0 or not 0 <= t + offset < n_rows:
        raise OutOfRangeError(
            "%s: Accumulation destination address over bounds: row %d (timestep %d + "
            "offset %d) of %d" % (kernel, t + offset, t, offset, n_rows)
        )
    if step > 0 and t >= og.size // step:
        raise OutOfRangeError(
            "%s: Accumulation source address out of bounds: row %d of %d elements in an "
            "array of %d" % (kernel, t, step, og.size)
        )


def stripes(kernel, first, y, stripe, batch):
    """``batch`` stripes of ``y.size`` elements, ``stripe`` apart, fit in ``first``."""
    n = y.size
    if batch < 0 or stripe < n or (batch > 0 and (batch - 1) * stripe + n > first.size):
        raise OutOfRangeError(
            "%s: %d stripes of %d elements every %d do not fit in %d elements"
            % (kernel, batch, n, stripe, first.size)
        )


def same_size(kernel, name, a, size):
    """``a`` holds ``size`` elements."""
    if a.size != size:
        raise ShapeError(
            "%s: %s has %d elements (shape %s); expected %d" % (kernel, name, a.size, a.shape, size)
        )


def repeat(kernel, src, dst):
    """``dst`` is whole copies of a non-empty ``src``."""
    if src.size == 0 or dst.size % src.size:
        raise ShapeError(
            "%s: dst of %d elements is not whole copies of src of %d" % (kernel, dst.size, src.size)
        )


def matrix(kernel, name, a):
    """``a`` is read as (N, D)."""
    if a.ndim != 2:
        raise ShapeError("%s: %s must be (N, D), got shape %s" % (kernel, name, a.shape))


def operand(a, kernel, name):
    """A float matrix a product reads: any strides (a transposed view), but
    native, aligned and not empty (what NumPy's matmul loop is given)."""
    if a is None or not isinstance(a, np.ndarray) or a.dtype.num not in FLOAT_NUMS:
        got = "None" if a is None else getattr(a, "dtype", type(a).__name__)
        raise DTypeError("%s: %s is %s; expected a float32 or float64 matrix" % (kernel, name, got))
    if not a.dtype.isnative:
        raise DTypeError(
            "%s: %s has the non-native byte order '%s'; expected native %s"
            % (kernel, name, a.dtype.str, a.dtype.name)
        )
    if not a.flags.aligned:
        raise MemoryLayoutError("%s: %s is not aligned for %s" % (kernel, name, a.dtype.name))
    if a.ndim != 2 or a.size == 0:
        raise ShapeError(
            "%s: %s must be a non-empty matrix, got shape %s" % (kernel, name, a.shape)
        )


def product(kernel, names, a, b, out):
    """``a`` (M x K) times ``b`` (K x N) into ``out``, an M x N matrix."""
    m, k = a.shape
    if b.shape[0] != k or out.shape != (m, b.shape[1]):
        raise ShapeError(
            "%s: %s %s times %s %s does not fit %s %s"
            % (kernel, names[0], a.shape, names[1], b.shape, names[2], out.shape)
        )


def gates_product(kernel, product, transposed, n, d4):
    """The recurrent product is N x 4D, or 4D x N read transposed."""
    shape = (d4, n) if transposed else (n, d4)
    if product.shape != shape:
        raise ShapeError(
            "%s: product has shape %s; expected %s%s"
            % (kernel, product.shape, shape, " (read transposed)" if transposed else "")
        )


def rows_or_row(kernel, name, a, n, d4):
    """``a`` is one row of 4D (added to every row) or N rows of 4D."""
    if a.size not in (d4, n * d4):
        raise ShapeError(
            "%s: %s has %d elements; expected %d (one row) or %d (N rows)"
            % (kernel, name, a.size, d4, n * d4)
        )


#: The most products, and the most sums, one fused call runs (an LSTM step has 3 of each).
MAX_PARTS = 4


def parts(kernel, products, sums):
    """At most :data:`MAX_PARTS` products and sums."""
    if len(products) > MAX_PARTS or len(sums) > MAX_PARTS:
        raise ShapeError(
            "%s: %d products and %d sums; at most %d of each"
            % (kernel, len(products), len(sums), MAX_PARTS)
        )


def refused(check, *args):
    """Run ``check`` after the compiled side refused its arguments: it must raise."""
    check(*args)
    raise SystemError(
        "kernel contract mismatch: the compiled check refused what %s accepts: %r"
        % (check.__name__, args)
    )
