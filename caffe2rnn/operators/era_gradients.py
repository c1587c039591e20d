"""Gradient registrations that were different in an early era's C++.

caffe2rnn registers today's gradient maker for every op (the one 042e8ede4, E6,
had); where E4 (c2913bcac) or E5 (0cdd09da6) registered something else, code
built in that era gets what that era's C++ had (:func:`register_gradient_variant`,
looked up with the building era, :func:`caffe2rnn.eras.current`):

======================  =====  ===============================================================
op                      eras   that era's registration
======================  =====  ===============================================================
Cast                    E4     ``GRADIENT_NOT_IMPLEMENTED_YET(Cast)`` (cast_op.cc)
LengthsTile             E4     ``GRADIENT_NOT_IMPLEMENTED_YET(LengthsTile)`` (lengths_tile_op.cc)
Slice                   E4     ``SHOULD_NOT_DO_GRADIENT(Slice)`` (utility_ops.cc)
SparseToDense           E4     ``NO_GRADIENT(SparseToDense)`` (sparse_to_dense_op.cc)
TopK                    E4     none (top_k.cc registered GetTopKGradient from E5)
SafeEnqueueBlobs        E4     none (queue_ops.cc's ``NO_GRADIENT(SafeDequeueBlobsQueue)``
SafeDequeueBlobs        E4     names no op)
GivenTensorStringFill   E4 E5  none (given_tensor_fill_op.cc: ``NO_GRADIENT`` from E6)
======================  =====  ===============================================================

"none" is :class:`~caffe2rnn.operators.gradient_maker.NotRegistered`: the
request fails as it did for a type without a maker. The Relu gradient of E4
(``ReluGradient([X, Y, dY])``) is in :mod:`caffe2rnn.operators.activation`.
"""

from ..runtime.registry import register_gradient_variant
from .gradient_maker import (
    GradientNotImplementedYet,
    NoGradient,
    NotRegistered,
    ShouldNotDoGradient,
)

#: (op type, eras, the maker of those eras)
EARLY_GRADIENTS = (
    ("Cast", ("E4",), GradientNotImplementedYet),
    ("LengthsTile", ("E4",), GradientNotImplementedYet),
    ("Slice", ("E4",), ShouldNotDoGradient),
    ("SparseToDense", ("E4",), NoGradient),
    ("TopK", ("E4",), NotRegistered),
    ("SafeEnqueueBlobs", ("E4",), NotRegistered),
    ("SafeDequeueBlobs", ("E4",), NotRegistered),
    ("GivenTensorStringFill", ("E4", "E5"), NotRegistered),
)

for _op_type, _eras, _maker in EARLY_GRADIENTS:
    register_gradient_variant(_op_type, eras=list(_eras))(_maker)
