"""Helpers for the operator tests: run one op in a private workspace, read
gradient-maker output as plain Python values."""

import numpy as np

from caffe2rnn import core
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace


def run_op(op_type, inputs, outputs, ws=None, **args):
    """Feed ``inputs`` ({name: array}), run the op once, return the workspace."""
    ws = ws or Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    ws.run_operator_once(core.CreateOperator(op_type, list(inputs), outputs, **args))
    return ws


def run1(op_type, inputs, **args):
    """Run an op with one output named ``out``; return that output."""
    return run_op(op_type, inputs, ["out"], **args).fetch("out")


def check_gradients(op_type, inputs, outputs, indices=None, outputs_with_grads=(0,), **args):
    """Central finite differences (float64) for every input index in ``indices``."""
    names = list(inputs)
    op = core.CreateOperator(op_type, names, outputs, **args)
    arrays = [np.asarray(inputs[n], dtype=np.float64) for n in names]
    for i in range(len(names)) if indices is None else indices:
        assert_gradient_close(op, arrays, i, outputs_with_grads=outputs_with_grads)


def arg_value(arg):
    for field in ("f", "i", "s", "n"):
        if arg.HasField(field):
            value = getattr(arg, field)
            return value.decode() if field == "s" else value
    return list(arg.floats or arg.ints or [s.decode() for s in arg.strings])


def describe(op):
    """``(type, name, inputs, outputs, [(arg, value)...], is_gradient_op)``."""
    return (
        op.type,
        op.name,
        list(op.input),
        list(op.output),
        [(a.name, arg_value(a)) for a in op.arg],
        op.is_gradient_op,
    )


def gradient_of(op_type, inputs, outputs, g_output=None, **args):
    """``([describe(op)...], g_input)`` of the op's gradient maker."""
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    if g_output is None:
        g_output = [o + "_grad" for o in outputs]
    ops, g_input = get_gradient_for_op(op, g_output)
    return [describe(g) for g in ops], g_input


def random(shape, seed=0, dtype=np.float32, low=-1.0, high=1.0):
    return np.asarray(np.random.RandomState(seed).uniform(low, high, shape), dtype=dtype)


def run_fails(op_type, inputs, error, match, outputs=("out",), era=None, **args):
    """Run the op on ``inputs`` ({name: array}) and assert that it raises
    ``error`` with a message matching ``match`` — and leaves its first output,
    which held a sentinel tensor, as it was. ``era``: create the op as that
    era's (None: today's)."""
    import pytest

    ws = Workspace()
    for name, value in inputs.items():
        ws.feed(name, value)
    sentinel = np.array([7.0], np.float32)
    if outputs[0] not in inputs:
        ws.feed(outputs[0], sentinel)
    with pytest.raises(error, match=match):
        op = core.CreateOperator(op_type, list(inputs), list(outputs), **args)
        ws.run_operator_once(op, era=era)
    if outputs[0] not in inputs:
        np.testing.assert_array_equal(ws.fetch(outputs[0]), sentinel)
    return ws
