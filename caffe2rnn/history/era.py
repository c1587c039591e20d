"""Which Caffe2 a historical ``recurrent_net`` runs on: its *era*.

An era is two sets of policies, chosen outside the OperatorDef so the ops stay
exactly what the seed code built:

* the **core era** (:mod:`caffe2rnn.eras`, E2…E6): how the gradient registry
  named and accumulated gradients when the backward step net was derived;
* the **operator era** (:mod:`caffe2rnn.operators.rnn.policies`): what the
  C++ ``RecurrentNetwork`` / ``RecurrentNetworkGradient`` did at run time
  (history.md §3.3–3.6, table §3.8).

==========  =========  ==============================================================
version     core era   operator era
==========  =========  ==============================================================
``v1``      E2         ``_acc`` + swap; initial-state gradient copied; no forward-only
``april``   E3         ``_acc`` + swap; initial-state gradient shared; no forward-only
``v2``      E4         same as april
``v3``      E5         ``_tmpstep`` + in-net Sum; forward-only with 2 workspaces
``newest``  E6         same as v3 (seed 004's op)
==========  =========  ==============================================================

Use ``with era("v2"): ...`` to build *and run* under an era; without it each
version's ``recurrent_net`` builds under its own era and binds the op it made
to its operator era (:func:`bind_built_op`), so running that net later needs
no ``with`` block.
"""

import contextlib
from dataclasses import dataclass

from .. import eras
from ..operators.rnn import policies


@dataclass(frozen=True)
class Era:
    name: str
    core: str
    operator: policies.RecurrentPolicies


ERAS = {
    "v1": Era("v1", "E2", policies.V1),
    "april": Era("april", "E3", policies.V2),
    "v2": Era("v2", "E4", policies.V2),
    "v3": Era("v3", "E5", policies.V3),
    "newest": Era("newest", "E6", policies.SEED_004),
}

_chosen = []  # stack of explicitly chosen eras (innermost last)


def get(name):
    try:
        return ERAS[name]
    except KeyError:
        raise ValueError("unknown history era %r; known: %s" % (name, ", ".join(ERAS))) from None


@contextlib.contextmanager
def era(name):
    """Build and run recurrent nets with the core and operator policies of ``name``."""
    chosen = get(name)
    _chosen.append(chosen)
    try:
        with eras.use(chosen.core), policies.use(chosen.operator):
            yield chosen
    finally:
        _chosen.pop()


@contextlib.contextmanager
def building(default_name):
    """A version's ``recurrent_net`` body: its own era unless one was chosen."""
    if _chosen:
        yield _chosen[-1]
    else:
        with eras.use(get(default_name).core):
            yield get(default_name)


def bind_built_op(net, chosen):
    """Bind the RecurrentNetwork op just added to ``net`` to ``chosen``'s operator era."""
    policies.bind(net.Proto().op[-1], chosen.operator)
