"""A private place for the history helpers to build and run in.

:func:`caffe2rnn.history.compare.compare` and the bug gallery
(:mod:`caffe2rnn.history.bugs`) build nets with fresh names (so every version
lays out the same blob names) and run them. :func:`sandbox` gives them a new
empty workspace and a fresh net-name registry for the duration, then puts the
caller's current workspace, net names and operator tracebacks back as they
were: a blob you fed before calling them is still there afterwards.
"""

import contextlib
import copy

from .. import core, workspace


@contextlib.contextmanager
def sandbox():
    """Run the block in a new unnamed workspace with net names reset."""
    previous = workspace.C.Workspace.current
    names = set(core.Net._net_names_used)
    tracebacks = copy.copy(workspace.operator_tracebacks)
    workspace.SwitchWorkspace(workspace.C.Workspace())
    core.Net.reset_names()
    try:
        yield workspace.C.Workspace.current
    finally:
        workspace.SwitchWorkspace(previous)
        core.Net._net_names_used.clear()
        core.Net._net_names_used.update(names)
        workspace.operator_tracebacks.clear()
        workspace.operator_tracebacks.update(tracebacks)
