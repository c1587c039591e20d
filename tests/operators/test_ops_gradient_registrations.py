"""Gradient registrations as the C++ made them, and E4's ReluGradient form.

The oracle is the registration macro in each era's C++ (quoted per case):
``SHOULD_NOT_DO_GRADIENT`` registers ThrowInTheTowelIfGradientIsCalled, whose
GetGradientDefs throws "One should not call gradient for operator <type>."."""

import numpy as np
import pytest

from caffe2rnn import core, eras, workspace
from caffe2rnn.errors import EnforceNotMet, GradientError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace


@pytest.mark.parametrize(
    "op_type, inputs, outputs",
    [
        # utility_ops.cc (E4..E7): SHOULD_NOT_DO_GRADIENT(UnsafeCoalesce);
        ("UnsafeCoalesce", ["a"], ["a2", "buf"]),
        # recurrent_network_blob_fetcher_op.cc (E6, E7):
        # SHOULD_NOT_DO_GRADIENT(RecurrentNetworkBlobFetcher);
        ("RecurrentNetworkBlobFetcher", ["ws"], ["names"]),
    ],
)
def test_should_not_do_gradient(op_type, inputs, outputs):
    op = core.CreateOperator(op_type, inputs, outputs)
    with pytest.raises(
        GradientError, match="One should not call gradient for operator %s" % op_type
    ):
        get_gradient_for_op(op, [o + "_grad" for o in outputs])


def test_relu_gradient_takes_x_in_e4_only():
    """relu_op.cc at c2913bcac (E4): GetReluGradient writes ReluGradient({I(0), O(0), GO(0)},
    {GI(0)}); OPERATOR_SCHEMA(ReluGradient).NumInputs(3).AllowInplace({{2, 0}}); the op reads
    Y = Input(1), dY = Input(2) and computes dY * sign(Y). At 0cdd09da6 (E5) and later:
    {O(0), GO(0)} and NumInputs(2)."""
    x = np.array([-1.0, 0.0, 2.0, 3.0], np.float32)
    dy = np.array([5.0, 6.0, 7.0, -8.0], np.float32)
    want = dy * np.sign(np.maximum(x, 0))
    op = core.CreateOperator("Relu", ["x"], ["y"])
    for era, form in (
        ("E4", ["x", "y", "y_grad"]),
        ("E5", ["y", "y_grad"]),
        ("E6", ["y", "y_grad"]),
    ):
        with eras.use(era):
            (g,), _ = get_gradient_for_op(op, ["y_grad"])
        assert list(g.input) == form, era
        ws = Workspace()
        ws.feed("x", x)
        ws.feed("y", np.maximum(x, 0))
        ws.feed("y_grad", dy)
        ws.run_operator_once(g, era=era)
        np.testing.assert_array_equal(ws.fetch("x_grad"), want)
        # in place: dY as dX ({2, 0} at E4, {1, 0} after)
        inplace = core.CreateOperator("ReluGradient", form, ["y_grad"])
        ws.run_operator_once(inplace, era=era)
        np.testing.assert_array_equal(ws.fetch("y_grad"), want)
    e4_op = core.CreateOperator("ReluGradient", ["x", "y", "g"], ["dx"])
    ws = Workspace()
    for name in ("x", "y", "g"):
        ws.feed(name, x)
    with pytest.raises(EnforceNotMet, match="ReluGradient takes 2 inputs, got 3"):
        ws.run_operator_once(e4_op, era="E6")


def test_a_net_differentiated_in_e4_runs_e4_relu_gradient():
    """The gradient ops of an era's form mark the net with the era (eras.mark), so it runs
    them as that era's operators without naming the era again."""
    with eras.use("E4"):
        net = core.Net("relu_e4")
        y = net.Relu(["x"], ["y"])
        loss = net.SumElements([y], ["loss"])
        net.AddGradientOperators([loss])
    assert eras.of(net).name == "E4"
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.array([-1.0, 2.0], np.float32))
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("x_grad"), [0.0, 1.0])


@pytest.mark.parametrize(
    "op_type, inputs, outputs, e4_error",
    [
        # cast_op.cc at c2913bcac: GRADIENT_NOT_IMPLEMENTED_YET(Cast);
        ("Cast", ["x"], ["y"], "should have a gradient but is not implemented yet"),
        # lengths_tile_op.cc: GRADIENT_NOT_IMPLEMENTED_YET(LengthsTile);
        ("LengthsTile", ["x", "l"], ["y"], "should have a gradient but is not implemented yet"),
        # utility_ops.cc: SHOULD_NOT_DO_GRADIENT(Slice);
        ("Slice", ["x"], ["y"], "One should not call gradient for operator Slice"),
        # top_k.cc: no REGISTER_GRADIENT(TopK) before 0cdd09da6
        ("TopK", ["x"], ["v", "i"], "Gradient maker for operator TopK not implemented"),
        # queue_ops.cc: NO_GRADIENT(SafeDequeueBlobsQueue) names no op
        ("SafeDequeueBlobs", ["q"], ["b", "s"], "for operator SafeDequeueBlobs not implemented"),
        ("SafeEnqueueBlobs", ["q", "b"], ["b", "s"], "for operator SafeEnqueueBlobs not"),
    ],
)
def test_e4_gradient_registrations(op_type, inputs, outputs, e4_error):
    op = core.CreateOperator(op_type, inputs, outputs, to=1, from_type=1, k=1, starts=[0], ends=[1])
    grads = [o + "_grad" for o in outputs]
    with eras.use("E4"):
        with pytest.raises(GradientError, match=e4_error):
            get_gradient_for_op(op, grads)
    with eras.use("E6"):
        try:
            get_gradient_for_op(op, grads)
        except GradientError as exc:  # E6's own refusal, never E4's
            assert e4_error not in str(exc)


def test_e4_sparse_to_dense_has_no_gradient_ops():
    """sparse_to_dense_op.cc at c2913bcac: NO_GRADIENT(SparseToDense); from 0cdd09da6 a maker."""
    op = core.CreateOperator("SparseToDense", ["i", "v", "d"], ["y"])
    with eras.use("E4"):
        ops, _ = get_gradient_for_op(op, ["y_grad"])
    assert ops == []
    with eras.use("E6"):
        ops, _ = get_gradient_for_op(op, ["y_grad"])
    assert ops


def test_given_tensor_string_fill_gradient_by_era():
    """given_tensor_fill_op.cc: no gradient registration until NO_GRADIENT at 042e8ede4."""
    op = core.CreateOperator("GivenTensorStringFill", [], ["y"], shape=[1], values=["a"])
    for era in ("E4", "E5"):
        with eras.use(era), pytest.raises(GradientError, match="not implemented"):
            get_gradient_for_op(op, ["y_grad"])
    with eras.use("E6"):
        assert get_gradient_for_op(op, ["y_grad"])[0] == []
