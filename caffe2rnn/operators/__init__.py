"""Operator implementations, one family per module; importing registers them.

Each module registers its op types with ``@registry.register`` when imported,
the way Caffe2's ``REGISTER_CPU_OPERATOR`` ran at library load time.
"""

from . import (  # noqa: F401
    activation,
    atomic,
    conv,
    cross_entropy,
    distance,
    elementwise,
    fc,
    fill,
    flatten,
    gru_unit,
    image_input,
    layer_norm,
    lrn,
    lstm_unit,
    matmul,
    order_switch,
    queue,
    reduction,
    rnn,
    sequence_mask,
    sgd,
    shape,
    slice,
    softmax,
    training,
    utility,
)
