"""Comparisons (LT, LE, GT, GE, EQ), logic (And, Or, Xor, Not), Where, IsMemberOf.

The binary ones share Add's template (:mod:`.elementwise`): same-typed A and
B, ``broadcast=1`` for a scalar B or a block of A's dims; the result is a
``bool`` tensor shaped like A. Which types each accepted was Caffe2's
kernel list:

* ``LT``, ``LE``, ``GT``, ``GE``: int32, int64, float32, float64;
* ``EQ``: int32 and int64 only (float equality was not offered);
* ``And``, ``Or``, ``Xor`` and the unary ``Not``: bool.

E6's beam search asks ``EQ`` whether it is on the first step
(``models/seq2seq/beam_search.py``). None of these has a gradient
(``SHOULD_NOT_DO_GRADIENT``).

Caffe2 sources: caffe2/operators/elementwise_op.{h,cc},
elementwise_op_schema.cc at 0cdd09da6 (the same at 042e8ede4).
"""

import numpy as np

from ..errors import ArgumentError, DTypeError
from ..runtime.registry import register, register_gradient
from .base import Operator
from .elementwise import NUMERIC_TYPES, BinaryElementwise
from .gradient_maker import ShouldNotDoGradient

INT_TYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64))
BOOL_TYPES = frozenset([np.dtype(np.bool_)])

#: op type → (NumPy ufunc, accepted input types, allowed in-place pairs).
BINARY = {
    "LT": (np.less, NUMERIC_TYPES, []),
    "LE": (np.less_equal, NUMERIC_TYPES, []),
    "GT": (np.greater, NUMERIC_TYPES, []),
    "GE": (np.greater_equal, NUMERIC_TYPES, []),
    "EQ": (np.equal, INT_TYPES, []),
    "And": (np.logical_and, BOOL_TYPES, [(0, 0)]),
    "Or": (np.logical_or, BOOL_TYPES, [(0, 0)]),
    "Xor": (np.logical_xor, BOOL_TYPES, [(0, 0)]),
}


def _binary_class(op_type, ufunc, types, inplace):
    cls = type(
        op_type,
        (BinaryElementwise,),
        {
            "__doc__": "C = A %s B as bool, element-wise (``broadcast=1``: B a scalar or a "
            "block of A's dims)." % ufunc.__name__,
            "__module__": __name__,
            "ufunc": ufunc,
            "input_types": types,
            "output_type": np.bool_,
        },
    )
    register_gradient(op_type)(ShouldNotDoGradient)
    return register(op_type, inputs=2, outputs=1, inplace=inplace)(cls)


for _op_type, (_ufunc, _types, _inplace) in BINARY.items():
    globals()[_op_type] = _binary_class(_op_type, _ufunc, _types, _inplace)


@register("Not", inputs=1, outputs=1)
class Not(Operator):
    """Y = not X, element-wise, for a bool tensor."""

    def run(self):
        x = self.input(0)
        if x.dtype != np.bool_:
            raise DTypeError(
                "input 0 ('%s') has type %s; expected bool" % (self.input_name(0), x.dtype)
            )
        np.logical_not(x, out=self.output(0, x.shape, np.bool_))


register_gradient("Not")(ShouldNotDoGradient)


_WHERE_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


@register("Where", inputs=3, outputs=1)
class Where(Operator):
    """``[select, left, right]`` → ``left`` where ``select``, else ``right``.

    ``select`` is bool and shaped like ``left`` and ``right``; with
    ``broadcast_on_rows=1`` it is 1-D and picks whole rows. Types of Caffe2's
    kernel: float32, float64, int32, int64 and strings. Source:
    caffe2/operators/elementwise_logical_ops.{h,cc} at 0cdd09da6.
    """

    def setup(self):
        self.on_rows = self.args.single("broadcast_on_rows", False, bool)

    def run(self):
        select = self.typed_input(0, (np.bool_,), "bool")
        left, right = self.input(1), self.input(2)
        if left.dtype != object:
            self.typed_input(1, _WHERE_TYPES, "float32, float64, int32, int64 or strings")
        self.same_dtype(1, 2)
        if right.shape != left.shape:
            raise self.shape_error(2, "%s like input 1 ('%s')" % (left.shape, self.input_name(1)))
        if self.on_rows:
            if select.ndim != 1 or left.ndim < 1 or select.shape[0] != left.shape[0]:
                raise self.shape_error(
                    0, "(%d,): one flag per row of input 1" % (left.shape[:1] or (0,))
                )
            select = select.reshape((-1,) + (1,) * (left.ndim - 1))
        elif select.shape != left.shape:
            raise self.shape_error(0, "%s like input 1 ('%s')" % (left.shape, self.input_name(1)))
        np.copyto(self.output(0, left.shape, left.dtype), np.where(select, left, right))


register_gradient("Where")(ShouldNotDoGradient)


_MEMBER_TYPES = {  # input dtype (kind) -> the C++ set it reads: IsMemberOfValueHolder
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.bool_): "bool",
    np.dtype(object): "string",
}


@register("IsMemberOf", inputs=1, outputs=1)
class IsMemberOf(Operator):
    """``Y[i] = X[i] in value`` (a bool tensor shaped like X); X int32, int64,
    bool or strings.

    As Caffe2's ``IsMemberOfOp`` (elementwise_logical_ops.h at 0cdd09da6, the
    same at 042e8ede4), the ``value`` list is kept in one set *per element
    type* (int32, int64, bool, string), and only one is ever filled: the one
    ``dtype`` (a DataType) names, or, without ``dtype``, the one of the first
    input the op runs on. An input of another type reads its own, empty set:
    every answer is False (an int32 X against ``dtype=INT64`` values, or a
    second run on another type). Values an int32 set cannot hold are refused
    ("cannot be represented correctly in a target type").
    """

    def setup(self):
        from .cast import _DataType

        dtype = self.args.single("dtype", _DataType.Value("UNDEFINED"), int)
        kinds = {
            _DataType.Value("INT32"): "int32",
            _DataType.Value("INT64"): "int64",
            _DataType.Value("BOOL"): "bool",
            _DataType.Value("STRING"): "string",
        }
        if dtype != _DataType.Value("UNDEFINED") and dtype not in kinds:
            raise ArgumentError("Unexpected 'dtype' argument value: %d" % dtype)
        self.filled = None  # (kind, set): the one set the C++ filled
        if dtype in kinds:
            self.filled = (kinds[dtype], self._read(kinds[dtype]))

    def _read(self, kind):
        if kind == "string":
            return set(self.args.repeated("value", kind=str))
        values = self.args.repeated("value", kind=int)
        if kind == "bool":
            return set(bool(v) for v in values)
        if kind == "int32":
            for v in values:  # GetRepeatedArgument<int32_t>: lossless conversion
                if not -(2**31) <= v < 2**31:
                    raise ArgumentError(
                        "IsMemberOf: Value %d of argument value cannot be represented "
                        "correctly in a target type (int32)" % v
                    )
        return set(values)

    def run(self):
        x = self.input(0)
        kind = _MEMBER_TYPES.get(x.dtype)
        if kind is None:
            self.typed_input(0, (np.int32, np.int64, np.bool_), "int32, int64, bool or strings")
        if self.filled is None:  # fixed by the first run, as Caffe2's op kept it
            self.filled = (kind, self._read(kind))
        values = self.filled[1] if self.filled[0] == kind else set()
        flat = x.reshape(-1).tolist()
        if kind == "string":
            flat = [v.decode() if isinstance(v, bytes) else v for v in flat]
        out = self.output(0, x.shape, np.bool_)
        out.reshape(-1)[:] = [v in values for v in flat]


register_gradient("IsMemberOf")(ShouldNotDoGradient)
