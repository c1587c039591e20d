"""Schemas whose counts or in-place rules Caffe2 gave as functions, checked
against those functions transcribed from the C++ (042e8ede4, E6), over a grid of
counts and of in-place pairs: OpSchema::Verify's verdict is the oracle."""

import pytest

from caffe2rnn import core
from caffe2rnn.runtime import registry

GRID = 9


def _never(i, o):
    return False


def _always(n_in, n_out):
    return True


# op type -> (NumInputs/NumOutputs/NumInputsOutputs as one function, AllowInplace, EnforceInplace)
CPP = {
    # free_op.cc: NumInputs(1, INT_MAX).NumOutputs(1, INT_MAX).SameNumberOfOutput()
    #             .EnforceOneToOneInplace()
    "Free": (lambda i, o: i >= 1 and o >= 1 and i == o, _never, lambda i, o: i == o),
    # queue_ops.cc
    "EnqueueBlobs": (
        lambda i, o: i >= 2 and o >= 1 and i == o + 1,
        _never,
        lambda i, o: i == o + 1,
    ),
    "SafeEnqueueBlobs": (
        lambda i, o: i >= 2 and o >= 2 and i == o,
        _never,
        lambda i, o: i == o + 1,
    ),
    # utility_ops.cc
    "WeightedSum": (
        lambda i, o: i > 0 and i % 2 == 0 and o == 1,
        lambda i, o: (i, o) == (0, 0),
        _never,
    ),
    "WeightedSumGradient": (lambda i, o: i > 0 and i % 2 == 1 and o >= 1, _never, _never),
    "ScatterWeightedSum": (
        lambda i, o: i > 3 and (i - 3) % 2 == 0 and o == 1,
        _never,
        lambda i, o: (i, o) == (0, 0),
    ),
    "UnsafeCoalesce": (lambda i, o: i + 1 == o, lambda i, o: i == o, _never),
    # filler_op.cc: NumInputs({0, 1, 3}).NumOutputs(1).AllowInplace({{0, 0}})
    "UniformFill": (lambda i, o: i in (0, 1, 3) and o == 1, lambda i, o: (i, o) == (0, 0), _never),
    "UniformIntFill": (
        lambda i, o: i in (0, 1, 3) and o == 1,
        lambda i, o: (i, o) == (0, 0),
        _never,
    ),
}


def _verify(counts, allowed, enforced, inputs, outputs):
    """OpSchema::Verify (operator_schema.cc): counts, then every (input, output) pair
    sharing a name must be allowed or enforced, then every enforced pair must share one."""
    if not counts(len(inputs), len(outputs)):
        return False
    for i, x in enumerate(inputs):
        for o, y in enumerate(outputs):
            if x == y and not (allowed(i, o) or enforced(i, o)):
                return False
            if x != y and enforced(i, o):
                return False
    return True


def _defs(n_in, n_out):
    """Distinct names, then each single (input, output) pair made to share a name."""
    inputs = ["x%d" % i for i in range(n_in)]
    outputs = ["y%d" % o for o in range(n_out)]
    yield inputs, outputs
    for i in range(n_in):
        for o in range(n_out):
            shared = list(outputs)
            shared[o] = inputs[i]
            yield inputs, shared
    n = min(n_in, n_out)  # the one-to-one / shifted patterns many enforced rules need
    yield inputs, inputs[:n] + outputs[n:]
    yield inputs, inputs[1 : n_out + 1] + outputs[len(inputs[1 : n_out + 1]) :]


@pytest.mark.parametrize("op_type", sorted(CPP))
def test_schema_verdicts_match_the_cpp(op_type):
    counts, allowed, enforced = CPP[op_type]
    schema = registry.schema(op_type)
    for n_in in range(GRID):
        for n_out in range(GRID):
            for inputs, outputs in _defs(n_in, n_out):
                want = _verify(counts, allowed, enforced, inputs, outputs)
                got = schema.verify(core.CreateOperator(op_type, inputs, outputs)) is None
                assert got == want, (op_type, inputs, outputs)


def test_slice_gradient_allows_no_in_place_use():
    """E6's ``OPERATOR_SCHEMA(SliceGradient);``: counts unchecked, in-place never allowed."""
    schema = registry.schema("SliceGradient")
    assert schema.verify(core.CreateOperator("SliceGradient", ["d", "g"], ["dd"])) is None
    problem = schema.verify(core.CreateOperator("SliceGradient", ["d", "g"], ["g"]))
    assert "does not allow input 1 ('g')" in problem
