"""The era a historical ``recurrent_net`` builds in, and the net it marks.

Each version's ``recurrent_net`` runs its body inside :func:`building`: under
the era named by an enclosing ``with history.era(...)`` / ``eras.use(...)``
block, else under the version's own era (``"v2"`` is E4, see
:data:`caffe2rnn.eras.VERSION_NAMES`). The ``RecurrentNetwork`` op it adds
then marks the ``core.Net`` with that era (:func:`caffe2rnn.eras.mark`), so
``workspace.CreateNet(net)`` / ``RunNetOnce(net)`` run it with the operators
of its time. The NetDef itself carries no trace of the era.
"""

import contextlib

from .. import eras


@contextlib.contextmanager
def building(version):
    """Build under the named era, else under ``version``'s own; yields the Era."""
    with eras.use(eras.named() or eras.get(version)) as chosen:
        yield chosen
