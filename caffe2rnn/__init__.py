"""caffe2rnn: see and run how Caffe2's recurrent networks worked.

A pure-Python + NumPy re-implementation of the part of Caffe2 that recurrent
networks need (protobuf NetDefs, ``core``, workspaces, operators, model
helpers), the ``RecurrentNetwork`` operator with Cython kernels beneath
readable Python twins, and the cells built on it. The public modules keep
Caffe2's names: :mod:`caffe2rnn.core`, :mod:`caffe2rnn.workspace`, ...
"""

__version__ = "0.1.0"

from . import (
    history,  # noqa: F401, E402  (registers the operators of older eras)
    operators,  # noqa: F401  (registers every operator)
)
