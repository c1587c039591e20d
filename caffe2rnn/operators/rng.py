"""Random numbers for the random operators (fillers, Dropout).

Caffe2 gave every operator its own ``CPUContext`` whose random engine was
seeded from the op's ``device_option.random_seed`` (or from the clock when
absent). We keep the *seeding rule* but not Caffe2's streams (its engine was
``std::mt19937`` behind ``std::*_distribution`` classes whose output differs
between C++ standard libraries, so only distributions and shapes carry over):

* an op whose ``device_option`` has ``random_seed`` gets its own
  ``numpy.random.Generator`` seeded with it when the op is created, so running
  the same OperatorDef twice (two ``RunOperatorOnce`` calls) draws the same
  numbers, and one created op draws a fresh stream on each run;
* every other op draws from one module generator, reseeded by :func:`seed`
  for reproducible demos and tests::

      from caffe2rnn.operators import rng
      rng.seed(0)
"""

import numpy as np

_module_generator = np.random.default_rng()


def seed(value):
    """Reseed the generator shared by random ops without a ``random_seed``."""
    global _module_generator
    _module_generator = np.random.default_rng(value)


class OpRandom:
    """The generator an op draws from (its own, or the module's)."""

    def __init__(self, op_def):
        option = op_def.device_option
        if op_def.HasField("device_option") and option.HasField("random_seed"):
            self._own = np.random.default_rng(option.random_seed)
        else:
            self._own = None

    @property
    def generator(self):
        # Looked up on each use so that a later seed() reaches existing ops.
        return self._own if self._own is not None else _module_generator
