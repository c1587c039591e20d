"""Filler operators: make a tensor of a given shape from constants or noise.

Every filler (Caffe2 ``FillerOp``) decides the output shape the same way:

* no input: the ``shape`` argument (a list; absent → a 0-d tensor);
* one input: that input's shape — or, with ``input_as_shape=1``, the
  *values* of a 1-D int64 input — followed by ``extra_shape``; ``shape`` must
  then be absent.

Fillers build parameters in ``param_init_net`` (``XavierFill`` weights,
``ConstantFill`` biases) and constants such as RNN step counters
(``ConstantFill(value=0, dtype=INT32)``). None has a gradient.

Random fillers draw from :mod:`caffe2rnn.operators.rng` (seeded by
``device_option.random_seed`` or :func:`seed`); they produce float32, as
Caffe2's ``FillerOp<float>`` did.

``UniformIntFill`` is ``UniformFill`` for int32 (bounds included);
``GivenTensorDoubleFill`` (E6's) is ``GivenTensorFill`` for float64; E6's
``DiagonalFill`` is ``ConstantFill``'s type and value on the diagonal
(``[i, i, ...]``) of a tensor of rank ≥ 2 (all dims equal above rank 2;
a 2-D one may be rectangular), zeros elsewhere.

Caffe2: caffe2/operators/filler_op.{h,cc}, given_tensor_fill_op.{h,cc}
(at 0cdd09da6; GivenTensorDoubleFill at 042e8ede4).
"""

import math

import numpy as np

from .. import eras
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..proto import caffe2_pb2
from ..runtime.registry import register, register_gradient
from . import rng
from .base import Operator
from .cast import data_type_argument
from .gradient_maker import NoGradient

seed = rng.seed  # ``fill.seed(0)``: reproducible random fillers

_DataType = caffe2_pb2.TensorProto

#: ``dtype`` argument → (NumPy type, how ``value`` is read).
_DTYPES = {
    _DataType.FLOAT: (np.float32, float),
    _DataType.DOUBLE: (np.float64, float),
    _DataType.BOOL: (np.bool_, bool),
    _DataType.INT8: (np.int8, int),
    _DataType.INT16: (np.int16, int),
    _DataType.INT32: (np.int32, int),
    _DataType.INT64: (np.int64, int),
    _DataType.UINT8: (np.uint8, int),
    _DataType.UINT16: (np.uint16, int),
    _DataType.STRING: (object, str),
}


def _raw_arg(op, name):
    for arg in op.def_.arg:
        if arg.name == name:
            return arg
    return None


class Filler(Operator):
    """Base of the fillers: shape rules; subclasses implement :meth:`fill`."""

    dtype: type = np.float32

    def setup(self):
        self.shape = self.args.repeated("shape", kind=int)
        self.extra_shape = self.args.repeated("extra_shape", kind=int)
        self.input_as_shape = self.args.single("input_as_shape", False, bool)
        if self.inputs:
            if self.shape:  # FillerOp: ``if (shape_.size() != 0)``: an empty list is no shape
                raise ArgumentError(
                    "Cannot set the shape argument and pass in "
                    "the input '%s' at the same time" % self.input_name(0)
                )
        else:
            if self.extra_shape:
                raise ArgumentError("Cannot set extra_shape when there is no input")
            if self.input_as_shape:
                raise ArgumentError("An input must be given if input_as_shape is true")
            shape_arg = _raw_arg(self, "shape")
            if shape_arg is not None and shape_arg.HasField("i"):
                raise ArgumentTypeError("Fill 'shape' argument was a scalar, list expected")
        if min(self.shape + self.extra_shape, default=0) < 0:
            raise ArgumentError(
                "shape %s / extra_shape %s must not contain negative "
                "dims" % (self.shape, self.extra_shape)
            )

    def output_shape(self):
        if not self.inputs:
            return tuple(self.shape)
        x = self.input(0)
        if not self.input_as_shape:
            return x.shape + tuple(self.extra_shape)
        if x.ndim != 1 or x.dtype != np.int64:
            raise DTypeError(
                "input 0 ('%s') is %s %s; with input_as_shape=1 it "
                "must be a 1-D int64 tensor of dims" % (self.input_name(0), x.dtype, x.shape)
            )
        if x.size and x.min() < 0:
            raise ShapeError(
                "input 0 ('%s') holds negative dims %s" % (self.input_name(0), x.tolist())
            )
        return tuple(int(v) for v in x) + tuple(self.extra_shape)

    def run(self):
        shape = self.output_shape()
        self.validate(shape)  # before the output is touched: a failure changes nothing
        self.fill(self.output(0, shape, self.dtype))

    def validate(self, shape):
        """Raise if ``shape`` cannot be filled; called before any output is written."""

    def fill(self, out):
        raise NotImplementedError


@register("ConstantFill", inputs=(0, 1), outputs=1, inplace=[(0, 0)])
class ConstantFill(Filler):
    """Every element = ``value``.

    Output type: the ``dtype`` argument (a ``TensorProto.DataType``) when given;
    otherwise inferred from how ``value`` was stored — FLOAT for a float, INT64
    for an int — so ``value=0`` makes an int64 tensor while ``value=0.0``
    makes a float32 one. No value and no dtype: float32 zeros.

    One extension, so float64 nets can be gradient-checked end to end: with a
    shape-source input, no ``dtype`` and a float (or no) ``value``, a float64
    input gives a float64 output. (Caffe2 ran float32 only; its output was
    FLOAT here. This is what makes the ``<y>_autogen_grad`` fill of
    ``AddGradientOperators`` match a float64 loss.)
    """

    def setup(self):
        super().setup()
        value_arg = _raw_arg(self, "value")
        self.follow_input_float = (
            len(self.inputs) == 1
            and not self.args.has("dtype")
            and (value_arg is None or value_arg.HasField("f"))
        )
        if self.args.has("dtype"):
            code = self.args.single("dtype", kind=int)
            if code not in _DTYPES:
                raise ArgumentError(
                    "Unexpected 'dtype' argument value: %d (%s)"
                    % (
                        code,
                        _DataType.DataType.Name(code)
                        if code in _DataType.DataType.values()
                        else "unknown",
                    )
                )
        elif value_arg is None or value_arg.HasField("f"):
            code = _DataType.FLOAT
        elif value_arg.HasField("i"):
            code = _DataType.INT64
        else:
            raise ArgumentTypeError(
                "Argument 'value' is of unexpected type; give a float or int value, or a dtype"
            )
        self.dtype, kind = _DTYPES[code]
        default = "" if kind is str else 0
        self.value = self.args.single("value", default, int if kind is bool else kind)
        if kind is bool:
            self.value = bool(self.value)

    def run(self):
        dtype = self.dtype
        if self.follow_input_float and self.input(0).dtype == np.float64:
            dtype = np.float64
        shape = self.output_shape()
        value = self.value
        if dtype is not object and np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise ArgumentError(
                    "argument 'value' %d is outside the range of %s [%d, %d]"
                    % (value, np.dtype(dtype).name, info.min, info.max)
                )
        self.output(0, shape, dtype).fill(value)

    def fill(self, out):
        out.fill(self.value)


@register("DiagonalFill", inputs=(0, 1), outputs=1, inplace=[(0, 0)])
class DiagonalFill(ConstantFill):
    """``value`` on the diagonal, 0 elsewhere (filler_op.{h,cc} at 042e8ede4)."""

    def validate(self, shape):
        if len(shape) < 2:
            raise ShapeError("output '%s': Input shape must be >= 2D" % self.outputs[0].name)
        if len(shape) > 2 and len(set(shape)) != 1:
            raise ShapeError(
                "output '%s' of shape %s: All dimensions of input must be of equal length"
                % (self.outputs[0].name, shape)
            )

    def run(self):
        shape = self.output_shape()
        self.validate(shape)
        if len(shape) == 2:
            step = shape[1] + 1
        else:  # 1 + d + d² + ... + d^(n−1): from [i, ..., i] to [i+1, ..., i+1]
            step = 1 + sum(shape[0] ** k for k in range(1, len(shape)))
        super().run()
        out = self.outputs[0].value
        flat = out.reshape(-1)
        value = flat[:1].copy()
        flat[...] = 0
        if flat.size:
            flat[::step] = value


def _shape_or_bounds(n_in, n_out):
    """0 inputs, 1 (the shape) or 3 (shape, min, max)"""
    return n_in in (0, 1, 3)


@register("UniformFill", inputs=(0, 3), outputs=1, inplace=[(0, 0)], counts=_shape_or_bounds)
class UniformFill(Filler):
    """i.i.d. uniform in [min, max] (args, or 1-element blobs as inputs 1 and 2).

    With min/max blobs and min > max the output is empty along dim 0.
    """

    bound_kind: type = float

    def setup(self):  # 2 inputs: refused by the schema (NumInputs({0, 1, 3}))
        super().setup()
        self.random = rng.OpRandom(self.def_)
        self.min = self.args.single("min", self.bound_kind(0), self.bound_kind)
        self.max = self.args.single("max", self.bound_kind(1), self.bound_kind)
        if len(self.inputs) == 3:
            for bound in ("min", "max"):
                if self.args.has(bound):  # HasSingleArgumentOfType<T> (filler_op.h, 0cdd09da6)
                    raise ArgumentError(
                        "%s: Cannot set both %s arg and %s input blob"
                        % (self.op_type, bound, bound)
                    )
        elif not self.min < self.max:
            raise ArgumentError(
                "%s: Max value should be bigger than min value (min %g, max %g)"
                % (self.op_type, self.min, self.max)
            )

    def _bound(self, i):
        if self.bound_kind is int:
            value = self.typed_input(i, (np.int32,), "an int32 bound")
        else:
            value = self.float_input(i)
        if value.size != 1:
            raise self.shape_error(i, "one element (the %s bound)" % ("min" if i == 1 else "max"))
        return self.bound_kind(value.reshape(-1)[0])

    def run(self):
        shape = self.output_shape()
        low, high = self.min, self.max
        if len(self.inputs) == 3:
            low, high = self._bound(1), self._bound(2)
            if low > high:
                self.output(0, (0,) + shape[1:], self.dtype)  # empty
                return
        out = self.output(0, shape, self.dtype)
        out[...] = self.draw(low, high, shape)

    def draw(self, low, high, shape):
        return self.random.generator.uniform(low, high, shape)


@register("UniformIntFill", inputs=(0, 3), outputs=1, inplace=[(0, 0)], counts=_shape_or_bounds)
class UniformIntFill(UniformFill):
    """i.i.d. int32, uniform over the integers of [min, max] (both included, as
    ``std::uniform_int_distribution``); min/max are ints (default 0 and 1)."""

    dtype = np.int32
    bound_kind = int

    def draw(self, low, high, shape):
        return self.random.generator.integers(low, high, shape, endpoint=True)


@register("GaussianFill", inputs=(0, 1), outputs=1, inplace=[(0, 0)])
class GaussianFill(Filler):
    """i.i.d. normal(mean, std)."""

    def setup(self):
        super().setup()
        self.random = rng.OpRandom(self.def_)
        self.mean = self.args.single("mean", 0.0, float)
        self.std = self.args.single("std", 1.0, float)
        if self.std < 0:
            raise ArgumentError("argument std is %g; it must be >= 0" % self.std)

    def fill(self, out):
        out[...] = self.random.generator.normal(self.mean, self.std, out.shape)


@register("XavierFill", inputs=(0, 1), outputs=1, inplace=[(0, 0)])
class XavierFill(Filler):
    """Uniform in [−s, s], ``s = sqrt(3 / fan_in)``, ``fan_in = size / dim(0)``.

    For an FC weight (out, in) that is ``sqrt(3 / in)``: unit output variance.
    """

    def setup(self):
        super().setup()
        self.random = rng.OpRandom(self.def_)

    def validate(self, shape):
        if len(shape) < 1:
            raise ShapeError(
                "output '%s' is 0-d; XavierFill needs at least 1 dim "
                "(fan_in = size / dim(0))" % self.outputs[0].name
            )

    def fill(self, out):
        if out.size:
            scale = math.sqrt(3.0 / (out.size // out.shape[0]))
            out[...] = self.random.generator.uniform(-scale, scale, out.shape)


@register("MSRAFill", inputs=(0, 1), outputs=1, inplace=[(0, 0)])
class MSRAFill(Filler):
    """Normal(0, ``sqrt(2 / fan_out)``), ``fan_out = size / dim(1)`` (He et al.)."""

    def setup(self):
        super().setup()
        self.random = rng.OpRandom(self.def_)

    def validate(self, shape):
        if len(shape) < 2:
            raise ShapeError(
                "output '%s' has shape %s; MSRAFill needs at least 2 "
                "dims (fan_out = size / dim(1))" % (self.outputs[0].name, shape)
            )

    def fill(self, out):
        if out.size:
            std = math.sqrt(2.0 / (out.size // out.shape[1]))
            out[...] = self.random.generator.normal(0.0, std, out.shape)


#: GivenTensorFill's ``dtype`` (E6, 8618b33a5) → (element type, how ``values`` is read)
_GIVEN_DTYPES = {
    _DataType.FLOAT: (np.float32, float),
    _DataType.DOUBLE: (np.float64, float),
    _DataType.BOOL: (np.bool_, int),
    _DataType.INT32: (np.int32, int),
    _DataType.INT64: (np.int64, int),
    _DataType.STRING: (object, str),
}


class _GivenTensorFill(Filler):
    """The ``values`` argument, laid out in ``shape`` (counts must match).

    From E6 (8618b33a5, era policy ``given_tensor_fill_dtype``) the float
    ``GivenTensorFill`` reads ``dtype`` (a DataType value or name, as
    ``cast::GetCastDataType``) and fills that type, its ``values`` read in that
    type's field (``ints`` for INT32/INT64/BOOL, ``floats``, ``strings``); the
    other GivenTensor*Fill ops ignore ``dtype``, as there."""

    value_kind = float

    def setup(self):
        super().setup()
        if (
            (self.era is None or eras.get(self.era).given_tensor_fill_dtype)
            and self.op_type == "GivenTensorFill"
            and self.args.has("dtype")
        ):
            code = data_type_argument(self.args, "dtype")
            if code == _DataType.UNDEFINED:
                raise ArgumentError("Cannot have undefined 'dtype' argument")
            if code not in _GIVEN_DTYPES:
                raise ArgumentError("Unexpected 'dtype' argument value: %d" % code)
            self.dtype, self.value_kind = _GIVEN_DTYPES[code]
        values = self.args.repeated("values", kind=self.value_kind)
        try:
            self.values = np.array(values, dtype=self.dtype)
        except OverflowError as exc:
            raise ArgumentError(
                "argument 'values' holds a value outside the range of %s: %s"
                % (np.dtype(self.dtype).name, exc)
            ) from exc

    def validate(self, shape):
        size = math.prod(shape)
        if self.values.size != size:
            raise ArgumentError(
                "output '%s': argument 'values' has %d values; "
                "expected %d (the size of shape %s)"
                % (self.outputs[0].name, self.values.size, size, shape)
            )

    def fill(self, out):
        out.reshape(-1)[...] = self.values


def _given_fill(op_type, dtype, kind):
    cls = type(
        op_type,
        (_GivenTensorFill,),
        {
            "dtype": dtype,
            "value_kind": kind,
            "__doc__": "``values`` as a %s tensor of ``shape``." % np.dtype(dtype).name,
        },
    )
    return register(op_type, inputs=(0, 1), outputs=1, inplace=[(0, 0)])(cls)


GivenTensorFill = _given_fill("GivenTensorFill", np.float32, float)
GivenTensorDoubleFill = _given_fill("GivenTensorDoubleFill", np.float64, float)
GivenTensorIntFill = _given_fill("GivenTensorIntFill", np.int32, int)
GivenTensorInt64Fill = _given_fill("GivenTensorInt64Fill", np.int64, int)
GivenTensorBoolFill = _given_fill("GivenTensorBoolFill", np.bool_, int)
GivenTensorStringFill = _given_fill("GivenTensorStringFill", object, str)

for _op_type in (
    "ConstantFill",
    "DiagonalFill",
    "UniformFill",
    "UniformIntFill",
    "GaussianFill",
    "XavierFill",
    "MSRAFill",
    "GivenTensorFill",
    "GivenTensorDoubleFill",
    "GivenTensorIntFill",
    "GivenTensorInt64Fill",
    "GivenTensorBoolFill",
    "GivenTensorStringFill",
):
    register_gradient(_op_type)(NoGradient)
