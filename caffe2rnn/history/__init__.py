"""The history you can run: Caffe2's ``recurrent_net`` as it was in 2017.

One module per version, each following its seed text step by step, composed
from :mod:`caffe2rnn.recurrent_stages`:

==========  ==========================  =====================================
module      seed                        valid
==========  ==========================  =====================================
``v1``      000 #3                      2017-03-14 … 03-21
``april``   002 (the whole module)      2017-04-07 … 04-11
``v2``      000 #1                      2017-04-12 … 04-24
``v3``      000 #2 (bug B9 kept)        2017-06-29 … 08-17
``newest``  001 #8                      2017-12-11 … 2018-09
==========  ==========================  =====================================

A version name is another name of a Caffe2 era (:mod:`caffe2rnn.eras`:
``v1`` = E2, ``april`` = E3, ``v2`` = E4, ``v3`` = E5, ``newest`` = E6). Each
version builds in its own era and marks the net it built, so the net runs with
the operators of its time (:mod:`.operator_eras`); ``with era("v2"): ...``
chooses an era explicitly for building and running. :mod:`.bugs` reproduces
the bugs each version fixed; :mod:`.compare` lays the versions' op arguments
side by side.
"""

from .. import eras
from . import april, newest, v1, v2, v3


def era(name):
    """``with history.era("v2"): ...`` — build and run under an era; the same
    as :func:`caffe2rnn.eras.use` (version names and E0..E6 both work)."""
    return eras.use(name)


#: version name → its module, oldest first.
VERSIONS = {"v1": v1, "april": april, "v2": v2, "v3": v3, "newest": newest}


def recurrent_net(version):
    """The ``recurrent_net`` function of ``version`` (a key of :data:`VERSIONS`)."""
    try:
        return VERSIONS[version].recurrent_net
    except KeyError:
        raise ValueError("unknown version %r; known: %s" % (version, ", ".join(VERSIONS))) from None
