"""float64, caffe2rnn's one stated extension of Caffe2's element types (runtime/settings.py).

Caffe2 registered most operators for float only: ``Tensor::data<float>()`` of a double tensor
threw "Tensor type mismatch". caffe2rnn's float operators take float64 too (for finite-difference
gradient checks in double precision); ``settings.set_float64(False)`` gives Caffe2's refusal back.
"""

import numpy as np
import pytest

from caffe2rnn import core, errors
from caffe2rnn.runtime import Workspace, settings


@pytest.fixture
def float64_off():
    old = settings.set_float64(False)
    yield
    settings.set_float64(old)


def run(op_type, dtype, **args):
    ws = Workspace()
    ws.feed("x", np.ones((2, 3), dtype))
    ws.feed("w", np.ones((4, 3), dtype))
    ws.feed("b", np.ones(4, dtype))
    inputs = ["x", "w", "b"] if op_type == "FC" else ["x"] * (2 if op_type == "Add" else 1)
    ws.run_operator_once(core.CreateOperator(op_type, inputs, ["y"], **args))
    return ws.fetch("y")


@pytest.mark.parametrize("op_type", ["Tanh", "Sigmoid", "FC", "Softmax"])
def test_float_operators_take_float64_by_default(op_type):
    assert settings.float64_enabled()
    assert run(op_type, np.float64).dtype == np.float64


@pytest.mark.parametrize("op_type", ["Tanh", "Sigmoid", "FC", "Softmax"])
def test_off_they_refuse_it_as_caffe2_did(op_type, float64_off):
    with pytest.raises(errors.DTypeError, match="Caffe2 registered %s for float32 only" % op_type):
        run(op_type, np.float64)
    assert run(op_type, np.float32).dtype == np.float32
    with pytest.raises(errors.DTypeError, match="expected float32$"):
        run(op_type, np.int32)


def test_operators_caffe2_registered_for_double_take_it_either_way(float64_off):
    # Add: BinaryElementwiseOp<NumericTypes, ...>, NumericTypes = int32, int64, float, double
    assert run("Add", np.float64).dtype == np.float64


def test_the_environment_variable(monkeypatch):
    old = settings.float64_enabled()
    try:
        monkeypatch.setenv("CAFFE2RNN_FLOAT64", "0")
        settings.set_float64(None)
        assert not settings.float64_enabled()
        monkeypatch.setenv("CAFFE2RNN_FLOAT64", "1")
        settings.set_float64(None)
        assert settings.float64_enabled()
    finally:
        settings.set_float64(old)
