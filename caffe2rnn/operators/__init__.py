"""Operator implementations, one family per module; importing registers them.

Each module registers its op types with ``@registry.register`` when imported,
the way Caffe2's ``REGISTER_CPU_OPERATOR`` ran at library load time.
"""

from . import (  # noqa: F401
    activation,
    atomic,
    conv,
    counter,
    cross_entropy,
    db_input,
    distance,
    elementwise,
    fc,
    fill,
    flatten,
    ftrl,
    gru_unit,
    layer_norm,
    load_save,
    lrn,
    lstm_unit,
    matmul,
    python_op,
    queue,
    reduction,
    rmsprop,
    rnn,
    sequence_mask,
    sgd,
    shape,
    slice,
    softmax,
    training,
    utility,
    yellowfin,
)
