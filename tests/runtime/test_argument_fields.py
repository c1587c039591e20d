"""Reading an argument, against Caffe2's ``ArgumentHelper`` (caffe2/utils/proto_utils.cc).

``cpp_get_single`` is ``INSTANTIATE_GET_SINGLE_ARGUMENT`` written again in Python (0cdd09da6;
unchanged at 23bd132c1 and 042e8ede4): absent → the default; the one field of ``T`` must be set
(``f`` for float and double, ``i`` for the integer types and bool, ``s`` for string) or it throws
"does not have the right field: expected field f"; integer types check that the value survives the
conversion. caffe2rnn's reading is compared with it for every field combination, then on operators
Caffe2 code called with an int where a float was read (``UniformFill(min=-1)``,
``PadImage(value=2)``).
"""

import numpy as np
import pytest

from caffe2rnn import core, errors
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace
from caffe2rnn.runtime.arguments import ArgumentHelper

FIELD_OF = {float: "f", int: "i", bool: "i", str: "s"}


class Throws(Exception):
    pass


def cpp_get_single(arg, kind, default):
    """INSTANTIATE_GET_SINGLE_ARGUMENT(T, fieldname, enforce_lossless_conversion)."""
    if arg is None:
        return default
    field = FIELD_OF[kind]
    if not arg.HasField(field):
        raise Throws("expected field " + field)
    value = getattr(arg, field)
    if kind is int and not -(2**63) <= value < 2**63:
        raise Throws("cannot be represented correctly in a target type")
    if kind is str:
        return value.decode()
    return bool(value) if kind is bool else value


def argument(**fields):
    arg = caffe2_pb2.Argument()
    arg.name = "x"
    for field, value in fields.items():
        setattr(arg, field, value)
    return arg


ARGS = [
    None,
    argument(f=0.5),
    argument(i=3),
    argument(i=-1),
    argument(s=b"NCHW"),
    argument(f=2.0, i=3),  # both set: each type reads its own
]


@pytest.mark.parametrize("kind", [float, int, bool, str])
@pytest.mark.parametrize(
    "arg", ARGS, ids=lambda a: "absent" if a is None else str(a).replace("\n", " ")
)
def test_single_argument_reads_one_field_like_the_cpp(kind, arg):
    op = caffe2_pb2.OperatorDef(type="Probe")
    if arg is not None:
        op.arg.add().CopyFrom(arg)
    helper = ArgumentHelper(op)
    default = kind(7) if kind is not str else "d"
    try:
        want = cpp_get_single(arg, kind, default)
    except Throws as exc:
        with pytest.raises(errors.ArgumentTypeError, match="'x'.*" + str(exc)[-1]):
            helper.single("x", default, kind)
        return
    got = helper.single("x", default, kind)
    assert got == want and type(got) is type(want)


def test_an_int_for_a_float_names_the_argument_and_the_field():
    op = core.CreateOperator("UniformFill", [], ["y"], shape=[2], min=-1, max=1.0)
    with pytest.raises(
        errors.ArgumentTypeError,
        match=r"UniformFill: argument 'min' must be a float .*field f.*holds i",
    ):
        Workspace().run_operator_once(op)


@pytest.mark.parametrize(
    "op_type, inputs, outputs, args",
    [
        ("UniformFill", [], ["out"], {"shape": [2], "min": -1, "max": 1.0}),
        ("UniformFill", [], ["out"], {"shape": [2], "min": -1.0, "max": 1}),
        ("PadImage", ["x"], ["out"], {"pad": 1, "value": 2}),
        ("LSTMUnit", ["h", "c", "g", "s", "t"], ["h2", "c2"], {"forget_bias": 1}),
        ("Scale", ["x"], ["out"], {"scale": 2}),
        ("Clip", ["x"], ["out"], {"min": 0, "max": 1.0}),
        ("ConstantFill", [], ["out"], {"shape": [2], "value": 1, "dtype": core.DataType.FLOAT}),
    ],
)
def test_operators_refuse_an_int_where_caffe2_read_a_float(op_type, inputs, outputs, args):
    ws = Workspace()
    for name in inputs:
        ws.feed(name, np.ones((1, 1, 2, 2), np.float32))
    with pytest.raises(errors.ArgumentTypeError, match="must be a float"):
        ws.run_operator_once(core.CreateOperator(op_type, inputs, outputs, **args))
    fixed = {
        k: float(v) if isinstance(v, int) and k not in ("shape", "pad", "dtype") else v
        for k, v in args.items()
    }
    try:  # with floats the argument is read (the op may still refuse its inputs)
        ws.run_operator_once(core.CreateOperator(op_type, inputs, outputs, **fixed))
    except errors.ArgumentTypeError as exc:
        pytest.fail("a float argument was refused: %s" % exc)
    except errors.Caffe2RNNError:
        pass


def test_a_list_in_another_field_is_refused_not_read_empty():
    """Caffe2's GetRepeatedArgument<float> of an ``ints`` list read an empty list (a silent wrong
    answer); caffe2rnn refuses it, naming the argument (a deliberate difference)."""
    op = caffe2_pb2.OperatorDef(type="Probe")
    arg = op.arg.add()
    arg.name = "values"
    arg.ints.extend([1, 2])
    with pytest.raises(errors.ArgumentTypeError, match="'values' must be a list of floats"):
        ArgumentHelper(op).repeated("values", kind=float)
