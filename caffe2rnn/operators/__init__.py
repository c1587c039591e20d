"""Operator implementations, one family per module; importing registers them.

Each module registers its op types with ``@registry.register`` when imported,
the way Caffe2's ``REGISTER_CPU_OPERATOR`` ran at library load time.
"""

from . import (  # noqa: F401
    activation,
    elementwise,
    fc,
    fill,
    loss,
    lstm_unit,
    matmul,
    reduction,
    registry,  # noqa: F401
    rnn,
    shape,
    softmax,
    training,
    utility,
)
