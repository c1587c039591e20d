"""Cast: a tensor converted element by element to another type.

``Cast(X, to=T)`` writes X's values as type T, with C++'s ``static_cast``
(float → int truncates toward zero, any non-zero → ``True``, integers wrap
modulo the target's range). ``to`` is a ``TensorProto.DataType``: the enum
value (``core.DataType.INT32``) or its name in any case (``"int32"``).
Beam search uses it to turn token indices into floats and back
(``models/seq2seq/beam_search.py``), ``crf.py`` to make int64 indices.

The gradient is the cast back, ``Cast(dY, to=from_type)``; it needs the
``from_type`` argument, which the forward op ignores. How the maker read the
two arguments changed on 2017-08-23 (e935673c4), see
:attr:`caffe2rnn.eras.Era.cast_gradient_type_enums`.

Caffe2 sources: caffe2/operators/cast_op.{h,cc} and caffe2/utils/cast.h at
0cdd09da6 (E5) and 042e8ede4 (E6).
"""

import numpy as np

from .. import eras
from ..errors import ArgumentError, GradientError
from ..proto import caffe2_pb2
from ..runtime.arguments import ArgumentHelper
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker

_DataType = caffe2_pb2.TensorProto.DataType

#: ``DataType`` → the NumPy type Caffe2's CPU Cast writes.
TARGETS = {
    _DataType.Value("FLOAT"): np.float32,
    _DataType.Value("INT32"): np.int32,
    _DataType.Value("BOOL"): np.bool_,
    _DataType.Value("UINT8"): np.uint8,
    _DataType.Value("INT8"): np.int8,
    _DataType.Value("UINT16"): np.uint16,
    _DataType.Value("INT16"): np.int16,
    _DataType.Value("INT64"): np.int64,
    _DataType.Value("DOUBLE"): np.float64,
}
#: Types the CPU Cast read (its ``DispatchHelper`` list): the same nine.
SOURCES = frozenset(np.dtype(t) for t in TARGETS.values())

#: Targets Caffe2 refused, and how (``CastOp<CPUContext>::SetBody``).
_REFUSED = {
    _DataType.Value("UNDEFINED"): "Cast op must have 'to' argument of type DataType",
    # LOG(FATAL) in Caffe2: the process aborted.
    _DataType.Value("BYTE"): "BYTE is deprecated",
    _DataType.Value("STRING"): "Casting to and from strings is not supported yet",
    _DataType.Value("FLOAT16"): "Casting to and from float16 on CPU is not supported yet",
}


def data_type_argument(args, name):
    """Caffe2's ``cast::GetCastDataType``: argument ``name`` as a DataType value.

    A string is a DataType name in any case; otherwise an int, FLOAT if the
    argument is missing. An unknown name is an ArgumentError, as Caffe2's
    ``CAFFE_ENFORCE(TensorProto_DataType_Parse(...))``.
    """
    if args.has(name) and _holds_string(args, name):
        text = args.single(name, kind=str)
        try:
            return _DataType.Value(text.upper())
        except ValueError:
            raise ArgumentError("Unknown '%s' argument: %s" % (name, text)) from None
    return args.single(name, _DataType.Value("FLOAT"), int)


def _holds_string(args, name):
    try:
        args.single(name, kind=str)
    except ArgumentError:
        return False
    return True


@register("Cast", inputs=1, outputs=1)
class Cast(Operator):
    """Y = X converted to the type ``to`` (module doc). ``from_type`` is parsed
    (and must be valid) but not used, as in Caffe2."""

    def setup(self):
        to = data_type_argument(self.args, "to")
        data_type_argument(self.args, "from_type")
        if to in _REFUSED:
            raise ArgumentError("Cast: %s (to=%d)" % (_REFUSED[to], to))
        if to not in TARGETS:
            raise ArgumentError("Cast: Unexpected 'to' argument value: %d" % to)
        self.target = TARGETS[to]

    def run(self):
        x = self.typed_input(0, SOURCES, "float32, float64, bool or an integer type")
        out = self.output(0, x.shape, self.target)
        with np.errstate(invalid="ignore", over="ignore"):  # out of range: undefined in C++
            np.copyto(out, x, casting="unsafe")


@register_gradient("Cast")
class GetCastGradient(GradientMaker):
    """``Cast(dY → dX)`` with ``to`` and ``from_type`` swapped; no other argument."""

    copy_arguments = False

    def get_gradient_defs(self):
        if eras.current().cast_gradient_type_enums:
            args = ArgumentHelper(self.def_)
            to = data_type_argument(args, "to")
            if not self.has_arg("from_type"):
                raise GradientError(
                    "Argument 'from_type' of type int or string is required to get the "
                    "gradient of CastOp"
                )
            source = data_type_argument(args, "from_type")
        else:
            to, source = self._string_arg("to"), self._string_arg("from_type")
        return [self.op_def("Cast", [self.GO(0)], [self.GI(0)], to=source, from_type=to)]

    def _string_arg(self, name):
        """E5 read both arguments as strings (``GetSingleArgument<string>``)."""
        value = self.arg(name, "")
        if not isinstance(value, str):
            raise GradientError(
                "Argument %s does not have the right field: expected field s "
                "(the gradient of Cast needs 'to' and 'from_type' as type names)" % name
            )
        return value
