"""The recurrent op's kernels, each with a readable Python twin and a Cython build.

Every kernel exists twice under one name: ``caffe2rnn/kernels/<module>.py``
(vectorised NumPy, the reference) and ``_ext/<module>.pyx`` (compiled into
``caffe2rnn._ext.<module>``); each file's header names its partner:

================================  =================================  =============================
twin (this package)               compiled (``_ext/``)               kernels
================================  =================================  =============================
``offset_alias.py``               ``offset_alias.pyx``               ``offset_alias``
``link_view.py``                  ``link_view.pyx``                  ``link_view``
``repeat_copy.py``                ``repeat_copy.pyx``                ``repeat_copy``
``accumulate_input_gradient.py``  ``accumulate_input_gradient.pyx``  ``accumulate_input_gradient``
``add_striped_batch.py``          ``add_striped_batch.pyx``          ``add_striped_batch``
``inplace_add.py``                ``inplace_add.pyx``                ``inplace_add``
``activations.py``                ``activations.pyx``                ``exp``, ``sigmoid``, ``tanh``
                                                                     (the LSTM kernels' σ and tanh,
                                                                     ``_activations.pxi``)
``lstm_unit.py``                  ``lstm_unit.pyx``                  ``lstm_unit_forward``,
                                                                     ``lstm_unit_backward``
``lstm_step.py``                  ``lstm_step.pyx``                  ``lstm_step_forward``,
                                                                     ``lstm_step_backward``
``stream_copy.py``                ``stream_copy.pyx``                ``stream_copy`` (the rollback
                                                                     journal's copies)
``rnn_executor.py``               ``rnn_executor.pyx``               ``run_step_plan``,
                                                                     ``run_lane``, ...
``contract.py``                   ``_contract.pxd``                  the checks every kernel runs
================================  =================================  =============================

**Exactness contract.** The two are interchangeable: bit-identical results
(the same IEEE operations in the same order; the build forbids FMA
contraction), and they reject the same inputs -- None, wrong dtype, byte
order, non-contiguous, misaligned, read-only or overlapping destinations,
out-of-range indices (64-bit, overflow-safe) -- with the same
:mod:`caffe2rnn.errors` class and message, before any write
(:mod:`caffe2rnn.kernels.contract`). The compiled one saves NumPy's per-call
overhead, most of the cost at a step net's small row sizes.

**Why no typed memoryviews.** The kernels take ``cnp.ndarray`` and loop over
the raw data pointer: acquiring a ``float[::1]`` buffer costs more than the
whole loop at these sizes (``dst += src`` over 64 float32: 0.05 µs per call
through the pointer, 0.3-0.9 µs through memoryviews; measured by
``benchmarks/bench_kernels.py``, see ``docs/concepts/kernels.md``).

The path is chosen by ``CAFFE2RNN_KERNELS``:

* ``python`` — the NumPy twins;
* ``cython`` — the compiled kernels (an ImportError if they were not built);
* unset or ``auto`` — compiled when they import, otherwise the twins, with a
  one-line notice on stderr the first time a kernel runs.

Operators call the checked entry points of :mod:`caffe2rnn.kernels.checked`
(``checked.link_view(...)``): each validates its arguments once, naming the
link or blob, and then calls the active path (looked up on every call), so a
bad offset, window or shape is a clear error on both paths. Tests and the
benchmark reach the raw functions of a path through :func:`implementation`;
``with kernels.use("python"): ...`` switches paths for a block. (The entry
points live in their own module because each twin module's name is also a
kernel's name.)
"""

import contextlib
import importlib
import os
import sys
import types

#: kernel name -> the module (twin and compiled) that defines it.
KERNELS = {
    "offset_alias": "offset_alias",
    "link_view": "link_view",
    "repeat_copy": "repeat_copy",
    "accumulate_input_gradient": "accumulate_input_gradient",
    "add_striped_batch": "add_striped_batch",
    "inplace_add": "inplace_add",
    "lstm_unit_forward": "lstm_unit",
    "lstm_unit_backward": "lstm_unit",
    "lstm_step_forward": "lstm_step",
    "lstm_step_backward": "lstm_step",
    "stream_copy": "stream_copy",
    "run_step_plan": "rnn_executor",
    "first_stale_guard": "rnn_executor",
    "assign_values": "rnn_executor",
    "run_lane": "rnn_executor",
    "compile_calls": "rnn_executor",
}
PATHS = ("python", "cython")

_loaded = {}
_state = {"path": None, "impl": None}


def implementation(path):
    """A namespace holding the raw kernels of ``path`` ("python" or "cython")."""
    if path not in PATHS:
        raise ValueError("unknown kernel path %r; expected one of %s" % (path, PATHS))
    if path not in _loaded:
        package = "caffe2rnn.kernels." if path == "python" else "caffe2rnn._ext."
        modules = {m: importlib.import_module(package + m) for m in set(KERNELS.values())}
        _loaded[path] = types.SimpleNamespace(
            path=path,
            # The compiled kernels release Python's lock while they compute;
            # the twins are NumPy calls that hold it around small loops.
            releases_gil=path == "cython",
            **{name: getattr(modules[m], name) for name, m in KERNELS.items()},
        )
    return _loaded[path]


def cython_available():
    """True when the compiled kernels import."""
    try:
        implementation("cython")
    except ImportError:
        return False
    return True


def _select(path):
    _state["impl"] = implementation(path)
    _state["path"] = path


def _resolve():
    """Pick the path from ``CAFFE2RNN_KERNELS`` the first time a kernel runs."""
    wanted = os.environ.get("CAFFE2RNN_KERNELS", "auto").strip().lower() or "auto"
    if wanted in PATHS:
        try:
            _select(wanted)
        except ImportError as exc:
            raise ImportError(
                "CAFFE2RNN_KERNELS=cython but the compiled kernels do "
                "not import (%s); build them with `python setup.py "
                "build_ext --inplace`" % exc
            ) from exc
    elif wanted == "auto":
        if cython_available():
            _select("cython")
        else:
            _select("python")
            sys.stderr.write(
                "caffe2rnn: Cython kernels not built; using the pure-"
                "Python kernels (build: python setup.py build_ext "
                "--inplace)\n"
            )
    else:
        raise ValueError("CAFFE2RNN_KERNELS=%r: expected python, cython or auto" % wanted)
    return _state["impl"]


def current():
    """The namespace of raw kernels of the active path (resolved on first use)."""
    return _state["impl"] or _resolve()


def active():
    """The kernel path in use: ``"python"`` or ``"cython"``."""
    current()
    return _state["path"]


@contextlib.contextmanager
def use(path):
    """Run a block with the kernels of ``path``: ``with kernels.use("python"): ...``."""
    previous = _state["path"]
    _select(path)
    try:
        yield implementation(path)
    finally:
        if previous is None:
            _state["path"] = _state["impl"] = None
        else:
            _select(previous)
