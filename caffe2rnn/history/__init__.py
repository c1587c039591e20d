"""The history you can run: Caffe2's ``recurrent_net`` as it was in 2016-2017.

One module per version, each following the text of its Caffe2 commit step by
step, composed from :mod:`caffe2rnn.recurrent_stages`:

==============  ====  =================================  =====================
module          era   Caffe2 text                        valid
==============  ====  =================================  =====================
``scratch``     E0    3b190c4df                          2016-12-20 … 2017-01
(same module)   E1    3913181a4 (``recurrent_net_s2``)   2017-01-24 … 01-27
``v1``          E2    22b4533f0                          2017-03-14 … 03-21
``april``       E3    89ea32b11 (the whole module)       2017-04-07 … 04-11
``v2``          E4    c2913bcac                          2017-04-12 … 04-24
``v3``          E5    0cdd09da6 (bug B9 kept)            2017-06-29 … 08-17
``newest``      E6    042e8ede4                          2017-12-11 … 2018-09
(same text)     E7    929c33cee                          (the last of Caffe2)
==============  ====  =================================  =====================

A version name is another name of a Caffe2 era (:mod:`caffe2rnn.eras`;
``s1`` is ``scratch``, ``s2`` its E1 text). The scratch era takes
``scratch_sizes`` and size triples, so its functions are not in
:data:`VERSIONS` (whose cells call the 2017-03 signature). Each
version builds in its own era and marks the net it built, so the net runs with
the operators of its time (:mod:`.operator_eras`); ``with era("v2"): ...``
chooses an era explicitly for building and running. :mod:`.bugs` reproduces
the bugs each version fixed; :mod:`.compare` lays the versions' op arguments
side by side.
"""

# ``operator_eras`` and ``scratch_operator`` register the operators of older
# eras as variants when imported (caffe2rnn/__init__.py imports this package,
# so they always are).
from .. import eras, recurrent
from . import april, newest, operator_eras, scratch, scratch_operator, v1, v2, v3  # noqa: F401

# Under E6 and E7 (whose recurrent.py is E6's, unchanged to 929c33cee),
# ``recurrent.recurrent_net`` is the text Caffe2 shipped then. Under
# E4 too: the E4 operator did not read ``param_grads`` (8e01e4c8b, 2017-04-25),
# so a parameter consumed by a pass-through op (the attention's
# weighted_encoder_outputs) needs the E4 text's ``Alias`` to get its gradient.
recurrent.register_era_text(newest.recurrent_net, ["E6", "E7"])
recurrent.register_era_text(v2.recurrent_net, ["E4"], forward_only=False)

#: The scratch era's first text (Caffe2 3b190c4df, era E0) under its other name.
s1 = scratch


def era(name):
    """``with history.era("v2"): ...`` — build and run under an era; the same
    as :func:`caffe2rnn.eras.use` (version names and E0..E7 both work)."""
    return eras.use(name)


#: version name → its module, oldest first.
VERSIONS = {"v1": v1, "april": april, "v2": v2, "v3": v3, "newest": newest}


#: the scratch era's functions (their own signature: ``scratch_sizes``).
SCRATCH_VERSIONS = {"scratch": scratch.recurrent_net, "s2": scratch.recurrent_net_s2}
SCRATCH_VERSIONS["s1"] = SCRATCH_VERSIONS["scratch"]


def recurrent_net(version):
    """The ``recurrent_net`` function of ``version``: a key of :data:`VERSIONS`,
    or of :data:`SCRATCH_VERSIONS` (``"scratch"``/``"s1"``, ``"s2"``)."""
    if version in SCRATCH_VERSIONS:
        return SCRATCH_VERSIONS[version]
    try:
        return VERSIONS[version].recurrent_net
    except KeyError:
        known = ", ".join(list(VERSIONS) + list(SCRATCH_VERSIONS))
        raise ValueError("unknown version %r; known: %s" % (version, known)) from None
