"""Process-wide settings of the runtime: the allocation cap, the log folder, float64.

Caffe2 read such things from command-line flags (``--caffe2_log_dir``...,
passed to ``workspace.GlobalInit``). Here each has a default, an environment
variable read when first needed, and a setter:

* **the allocation cap** (``CAFFE2RNN_MAX_ALLOC_BYTES``, default 4 GiB): no
  single tensor an operator makes may be larger. A ``ConstantFill`` of 10^12
  floats is refused at once with an :class:`~caffe2rnn.errors.AllocationError`
  (a ``MemoryError``) naming the operator and the shape, instead of being left
  to the operating system, which may grant it lazily and kill the process
  later. Raise it for big models: ``set_max_alloc_bytes(16 << 30)``.
* **the log folder** (``CAFFE2RNN_LOG_DIR``, default ``logs``): where
  ``Print(to_file=1)`` appends ``<blob>.log``. A relative folder is taken
  under the workspace's root folder (``workspace.ResetWorkspace(root)``,
  ``RootFolder()``); Caffe2 wrote into the root folder itself.
* **float64** (``CAFFE2RNN_FLOAT64``, default on): caffe2rnn's one stated
  extension of Caffe2's element types. Most of Caffe2's operators were
  registered for ``float`` only (``REGISTER_CPU_OPERATOR(Tanh,
  UnaryElementwiseOp<TensorTypes<float>, ...>)``) and refused a double tensor
  ("Tensor type mismatch"); caffe2rnn's also take float64 and compute in it,
  so that every gradient — the recurrent op's included — can be checked
  against finite differences in double precision, where float32's rounding
  would hide real errors (``gradient_checker``, ``make demo``). Off
  (``set_float64(False)`` or ``CAFFE2RNN_FLOAT64=0``) those operators refuse
  float64 as Caffe2 did: each reads its float inputs through
  :meth:`~caffe2rnn.operators.base.Operator.float_input`, which names the op,
  the input and the setting. Operators Caffe2 registered for double too
  (``Add``, ``Sum``, ``Transpose``...) take it either way.
"""

import math
import os

import numpy as np

from ..errors import AllocationError, ArgumentError, ShapeError

DEFAULT_MAX_ALLOC_BYTES = 4 << 30
DEFAULT_LOG_DIR = "logs"

_log_dir = None


def _env_bytes():
    text = os.environ.get("CAFFE2RNN_MAX_ALLOC_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_ALLOC_BYTES
    try:
        value = int(float(text)) if "e" in text.lower() else int(text)
    except ValueError:
        raise ArgumentError(
            "CAFFE2RNN_MAX_ALLOC_BYTES=%r is not a number of bytes" % text
        ) from None
    if value <= 0:
        raise ArgumentError("CAFFE2RNN_MAX_ALLOC_BYTES=%r must be positive" % text)
    return value


def max_alloc_bytes():
    """The largest tensor (in bytes) an operator may allocate."""
    return _max_alloc_bytes


def set_max_alloc_bytes(nbytes=None):
    """Set the allocation cap (``None``: back to the environment / default); the old one."""
    global _max_alloc_bytes, unchecked_elements
    if nbytes is None:
        nbytes = _env_bytes()
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
        raise ArgumentError("the allocation cap must be a positive int of bytes, got %r" % nbytes)
    old = _max_alloc_bytes
    _max_alloc_bytes = nbytes
    # Tensors of at most this many elements fit under the cap whatever their
    # type (16 bytes: complex128), so the hot path only multiplies the dims.
    unchecked_elements = nbytes // 16
    return old


def check_allocation(shape, dtype, what):
    """Refuse a tensor of ``shape``/``dtype`` that is malformed or over the cap.

    ``what`` names it for the message (``"output 0 ('y')"``). Sizes are
    computed with Python ints, so no overflow hides a huge request.
    """
    for dim in shape:
        if dim < 0:
            raise ShapeError("%s: shape %s has a negative dim" % (what, tuple(shape)))
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    cap = max_alloc_bytes()
    if nbytes > cap:
        raise AllocationError(
            "%s: a %s tensor of shape %s needs %s; the allocation cap is %s "
            "(raise it with caffe2rnn.runtime.settings.set_max_alloc_bytes or "
            "CAFFE2RNN_MAX_ALLOC_BYTES)"
            % (what, np.dtype(dtype).name, tuple(shape), _human(nbytes), _human(cap))
        )


def _human(nbytes):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return ("%d %s" if unit == "bytes" else "%.1f %s") % (nbytes, unit)
        nbytes /= 1024.0
    return "%d bytes" % nbytes


_max_alloc_bytes = unchecked_elements = 0
set_max_alloc_bytes()

#: The element types ``Operator.float_input`` accepts: float32 and, with the
#: float64 extension on (the default), float64.
float_dtypes = frozenset()


def float64_enabled():
    """True when float operators take float64 too (module docstring)."""
    return np.dtype(np.float64) in float_dtypes


def set_float64(enabled=None):
    """Turn the float64 extension on or off (``None``: back to
    ``CAFFE2RNN_FLOAT64``, default on); returns the old setting."""
    global float_dtypes
    old = bool(float_dtypes) and float64_enabled()
    if enabled is None:
        text = os.environ.get("CAFFE2RNN_FLOAT64", "1").strip().lower()
        enabled = text not in ("0", "off", "false", "no")
    types = (np.float32, np.float64) if enabled else (np.float32,)
    float_dtypes = frozenset(np.dtype(t) for t in types)
    return old


set_float64()


def log_dir(root_folder="."):
    """The folder ``Print(to_file=1)`` writes into, for a workspace whose root
    folder is ``root_folder`` (not created here)."""
    folder = _log_dir if _log_dir is not None else os.environ.get("CAFFE2RNN_LOG_DIR", "")
    folder = folder or DEFAULT_LOG_DIR
    return folder if os.path.isabs(folder) else os.path.join(root_folder, folder)


def set_log_dir(folder=None):
    """Set the log folder (``None``: back to the environment / default); the old setting."""
    global _log_dir
    old = _log_dir
    _log_dir = None if folder is None else os.fspath(folder)
    return old
