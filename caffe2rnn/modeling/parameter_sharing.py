"""Parameters shared across name scopes (Caffe2 ``modeling/parameter_sharing.py``).

``ModelHelper.create_param('w', ...)`` called under name scope ``a/b/`` makes
``a/b/w``. Inside ``with ParameterSharing({'b': 'c'}):`` (entered from scope
``a/``) the same call gives ``a/c/w``: the scope is rewritten before the name
is formed, so both scopes use one blob. Overrides apply repeatedly, the
longest matching prefix first, until none matches::

    {'scope_b/': 'scope_a/'}            scope_b/w          -> scope_a/w
    + {'scope_b/shared/': 'scope_b/'}   scope_b/shared/w   -> scope_a/w
                                        scope_b/unshared/w -> scope_a/unshared/w

``rnn_cell.UnrolledCell`` builds timestep t under ``timestep_t/`` with the
override ``{'timestep_t': ''}``, so every unrolled step uses the parameters
``<cell>/gates_t_w``... of a RecurrentNetwork-built cell. Only parameter names
change; op outputs keep their scoped names.
"""

import contextlib

from .. import scope
from ..errors import ArgumentError

_SEP = scope._NAMESCOPE_SEPARATOR


def _normalize_namescope(namescope):
    if namescope and not namescope.endswith(_SEP):
        return namescope + _SEP
    return namescope


class ParameterSharingContext:
    """The stack of active overrides (one per ``ParameterSharing`` block)."""

    def __init__(self):
        self._contexts = []
        self._scope_overrides = {}

    def _resolve_scope_overrides(self, candidate_scope):
        # Find the longest prefix of candidate_scope (by whole sub-scopes)
        # that has an override, replace it, and resolve the result again.
        parts = candidate_scope.split(_SEP)
        prefix = ""
        best, best_index = None, 0
        for index, part in enumerate(parts):
            prefix += part + _SEP
            if prefix in self._scope_overrides:
                best, best_index = self._scope_overrides[prefix], index
        if best is None:
            return candidate_scope
        return self._resolve_scope_overrides(best) + _SEP.join(parts[best_index + 1 :])

    def get_parameter_name(self, name):
        """``name`` in the current name scope, after the sharing overrides."""
        return self._resolve_scope_overrides(scope.CurrentNameScope()) + name

    def add_scope_overrides(self, shared_scopes):
        self._contexts.append(shared_scopes)
        self._scope_overrides.update(shared_scopes)

    def pop(self):
        if not self._contexts:
            raise ArgumentError("ParameterSharing: pop() without a matching push")
        self._contexts.pop()
        # Later blocks win, as they did while they were all active.
        self._scope_overrides = {}
        for overrides in self._contexts:
            self._scope_overrides.update(overrides)


#: The process-wide context ``ModelHelper.create_param`` reads.
parameter_sharing_context = ParameterSharingContext()


@contextlib.contextmanager
def ParameterSharing(shared_scopes):
    """Share parameters: ``{'scope_b': 'scope_a'}`` makes ``<cur>/scope_b/w`` be
    ``<cur>/scope_a/w``, where ``<cur>`` is the name scope the block is entered in.

    A target may not start with its own source (``{'a': 'a/b'}`` would never
    resolve): that raises :class:`~caffe2rnn.errors.ArgumentError`.
    """
    if not isinstance(shared_scopes, dict):
        raise ArgumentError(
            "ParameterSharing takes a dict {scope: shared_scope}, got %r" % (shared_scopes,)
        )
    current = scope.CurrentNameScope()
    overrides = {}
    for source, target in shared_scopes.items():
        if target.startswith(source):
            raise ArgumentError(
                "ParameterSharing: illegal override %r -> %r (%r is a prefix of %r)"
                % (source, target, source, target)
            )
        overrides[_normalize_namescope(current + source)] = _normalize_namescope(current + target)
    parameter_sharing_context.add_scope_overrides(overrides)
    try:
        yield
    finally:
        parameter_sharing_context.pop()
