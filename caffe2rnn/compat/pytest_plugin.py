"""Run Caffe2's own test files unchanged under pytest, on caffe2rnn.

::

    python -m pytest -p caffe2rnn.compat.pytest_plugin \\
        --caffe2-source ~/caffe2 --caffe2-era E6 \\
        ~/caffe2/caffe2/python/operator_test/rnn_cell_test.py

Before anything is collected the plugin installs :mod:`caffe2rnn.compat` with
the checkout (``--caffe2-source``, default ``$CAFFE2_SOURCE``; Caffe2's test
utilities such as ``hypothesis_test_util`` are loaded from it), the libraries
of 2017 (:mod:`.environment2017`; NumPy 1.13's list indices in the test files:
:mod:`.numpy_indexing`) and, with ``--caffe2-era``, the Caffe2 era
the files come from (:func:`caffe2rnn.eras.use` for the whole session: E6
files expect E6's ``rnn_cell``; E4 files run E4's operators).

``--caffe2-seed N`` makes a run repeatable: before each test NumPy's global
generator (the one Caffe2's tests draw their data from) and the generator of
caffe2rnn's random operators (fillers, :mod:`caffe2rnn.operators.rng`) are
seeded with N; add pytest's ``--hypothesis-seed N`` for the examples
Hypothesis draws. Without it the numbers differ between runs, as they did in
Caffe2 (whose fillers were seeded from the clock).

How to run Caffe2's own tests on caffe2rnn: docs/caffe2-tests.md.
"""

import contextlib
import os

from .. import eras
from . import environment2017, install, numpy_indexing
from .checkout import Checkout, is_checkout


def pytest_addoption(parser):
    group = parser.getgroup("caffe2rnn", "running Caffe2's test files on caffe2rnn")
    group.addoption(
        "--caffe2-source",
        default=os.environ.get("CAFFE2_SOURCE"),
        help="a Caffe2 source checkout (holding caffe2/python); default $CAFFE2_SOURCE",
    )
    group.addoption(
        "--caffe2-era", default=None, help="the Caffe2 era of the test files (E0..E7; default E5)"
    )
    group.addoption(
        "--caffe2-seed",
        default=None,
        type=int,
        help="seed NumPy's global generator and caffe2rnn's random operators before each test",
    )


def pytest_configure(config):
    import pytest

    source = config.getoption("--caffe2-source")
    if not source or not is_checkout(source):
        raise pytest.UsageError(
            "caffe2rnn.compat.pytest_plugin: --caffe2-source (or $CAFFE2_SOURCE) must name a "
            "Caffe2 checkout, a folder holding caffe2/python; got %r" % (source,)
        )
    install(Checkout(source))
    environment2017.install()
    numpy_indexing.install(source)
    stack = contextlib.ExitStack()
    era = config.getoption("--caffe2-era")
    if era:
        stack.enter_context(eras.use(era))
    config._caffe2rnn_era = stack


def pytest_unconfigure(config):
    stack = getattr(config, "_caffe2rnn_era", None)
    if stack is not None:
        stack.close()


def pytest_runtest_setup(item):
    seed = item.config.getoption("--caffe2-seed")
    if seed is not None:
        import numpy as np

        from ..operators import rng

        np.random.seed(seed)
        rng.seed(seed)
