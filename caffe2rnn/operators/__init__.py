"""Operator implementations, one family per module; importing registers them.

Each module registers its op types with ``@registry.register`` when imported,
the way Caffe2's ``REGISTER_CPU_OPERATOR`` ran at library load time.
"""
from . import registry  # noqa: F401
from . import (activation, elementwise, fc, fill, loss, lstm_unit,  # noqa: F401
               matmul, reduction, rnn, shape, softmax, training, utility)
