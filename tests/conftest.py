"""Shared test set-up: a clean workspace and net-name table for every test."""

import shutil

import pytest

from caffe2rnn import workspace


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


def pytest_collection_modifyitems(config, items):
    if shutil.which("dot") is None:
        skip = pytest.mark.skip(
            reason="Graphviz `dot` binary not installed (apt-get install graphviz)"
        )
        for item in items:
            if "needs_dot" in item.keywords:
                item.add_marker(skip)
