"""``brew.arg_scope``: default keywords for helpers inside a ``with`` block.

::

    with brew.arg_scope([brew.fc], axis=2):
        brew.fc(model, "x", "y", 4, 8)          # FC(..., axis=2)
        brew.fc(model, "x", "z", 4, 8, axis=1)  # the call's own keyword wins

Scopes nest (the inner one adds to the outer one) and are per thread. A
helper is keyed by its name, so ``brew.fc`` and the raw ``fc`` share a scope.
"""

import contextlib
import copy
import threading

_threadlocal = threading.local()


def get_current_scope():
    """``{helper name: {keyword: value}}`` set by the active ``arg_scope`` blocks."""
    if not hasattr(_threadlocal, "current_scope"):
        _threadlocal.current_scope = {}
    return _threadlocal.current_scope


@contextlib.contextmanager
def arg_scope(single_helper_or_list, **kwargs):
    """Give ``helper(s)`` (a helper or a list of them) default keywords in the block."""
    helpers = single_helper_or_list
    if not isinstance(helpers, list):
        helpers = [helpers]
    for helper in helpers:
        if not callable(helper):
            raise TypeError(
                "arg_scope takes a helper function or a list of them, got %r" % (helper,)
            )
    old_scope = copy.deepcopy(get_current_scope())
    new_scope = copy.deepcopy(old_scope)
    for helper in helpers:
        new_scope.setdefault(helper.__name__, {}).update(kwargs)
    _threadlocal.current_scope = new_scope
    try:
        yield
    finally:
        # Caffe2 restored the scope only on a normal exit; an exception in the
        # block left it changed for every later call.
        _threadlocal.current_scope = old_scope
