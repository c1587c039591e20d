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

Each runs on its own era's operator semantics (:mod:`.era`); ``with
era("v2"): ...`` chooses one explicitly. :mod:`.bugs` reproduces the bugs each
version fixed; :mod:`.compare` lays the versions' op arguments side by side.
"""

from . import april, newest, v1, v2, v3
from .era import ERAS, era  # noqa: F401

#: version name → its module, oldest first.
VERSIONS = {"v1": v1, "april": april, "v2": v2, "v3": v3, "newest": newest}


def recurrent_net(version):
    """The ``recurrent_net`` function of ``version`` (a key of :data:`VERSIONS`)."""
    try:
        return VERSIONS[version].recurrent_net
    except KeyError:
        raise ValueError("unknown version %r; known: %s" % (version, ", ".join(VERSIONS))) from None
