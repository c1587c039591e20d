"""Shared test set-up: a clean workspace and net-name table for every test, and
the ``kernel_path`` parametrization.

**Kernel paths.** Every test that exercises the recurrent op's kernels runs once
per available path, with ids ``python`` and ``cython`` (``test_x[cython]``): the
tests under ``tests/rnn``, ``tests/cells`` and ``tests/history``, every test
marked ``kernels``, and every test that asks for the ``kernel_path`` fixture
(its value is the path in use). The cython case is a skip, with the reason,
when the compiled kernels do not import. The path is switched with
``kernels.use`` around the whole module (one switch per module and path, so
Hypothesis tests may use it), and operators look the active path up on every
call, so the switch is real.
"""

import os
import shutil
import sys
import tempfile

import pytest

from caffe2rnn import kernels, workspace

#: test directories whose every test runs the kernels (RNNs, cells, history).
KERNEL_DIRS = ("rnn", "cells", "history")
_TESTS = os.path.dirname(os.path.abspath(__file__))


def _kernel_path_params():
    cython = (
        pytest.param("cython", id="cython")
        if kernels.cython_available()
        else pytest.param(
            "cython",
            id="cython",
            marks=pytest.mark.skip(
                reason="Cython kernels not built (make ext, or python setup.py build_ext --inplace)"
            ),
        )
    )
    return [pytest.param("python", id="python"), cython]


def _exercises_kernels(metafunc):
    rel = os.path.relpath(str(metafunc.definition.path), _TESTS).split(os.sep)
    return (
        "kernel_path" in metafunc.fixturenames
        or rel[0] in KERNEL_DIRS
        or metafunc.definition.get_closest_marker("kernels") is not None
    )


def pytest_generate_tests(metafunc):
    if _exercises_kernels(metafunc):
        if "kernel_path" not in metafunc.fixturenames:
            metafunc.fixturenames.append("kernel_path")
        metafunc.parametrize("kernel_path", _kernel_path_params(), indirect=True, scope="module")


@pytest.fixture(scope="module")
def kernel_path(request):
    """The kernel path the test runs on (``"python"`` or ``"cython"``)."""
    with kernels.use(request.param):
        yield request.param


@pytest.fixture(autouse=True)
def _fresh_caffe2_state():
    """Each test starts in an empty "default" workspace with no net names used."""
    workspace.SwitchWorkspace("default", True)
    workspace.ResetWorkspace()
    from caffe2rnn import core

    reset = getattr(core.Net, "reset_names", None)
    if reset is not None:
        reset()
    yield


def pytest_configure(config):
    """One bytecode cache for the session and every Python it starts.

    Many tests start Pythons of their own (each Caffe2 test file, each
    notebook's kernel, the docs build, the fuzzers' isolated runs), and each
    imports caffe2rnn, Caffe2's modules, NumPy and Hypothesis. Where
    ``PYTHONDONTWRITEBYTECODE`` is set (these machines set it) every one of
    them compiled every module from source again. The session keeps compiled
    modules in a folder of its own (``PYTHONPYCACHEPREFIX``), so no file is
    written beside any source, Caffe2's checkouts included, and removes the
    folder at the end. A prefix the caller chose is kept."""
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = tempfile.mkdtemp(prefix="caffe2rnn-pycache-")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    config.add_cleanup(lambda: shutil.rmtree(prefix, ignore_errors=True))


def pytest_collection_modifyitems(config, items):
    if shutil.which("dot") is None:
        skip = pytest.mark.skip(
            reason="Graphviz `dot` binary not installed (apt-get install graphviz)"
        )
        for item in items:
            if "needs_dot" in item.keywords:
                item.add_marker(skip)
