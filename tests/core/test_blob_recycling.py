"""Memonger's recycling passes (caffe2rnn.blob_recycling, Caffe2's C++
memonger at 042e8ede4): a chain reuses released blobs, parallel branches do
not share, the optimized net computes the same numbers, and the guards."""

import numpy as np

from caffe2rnn import brew, core, workspace
from caffe2rnn.blob_recycling import compute_blob_recycling_for_dag, optimize_inference_net
from caffe2rnn.model_helper import ModelHelper


def blobs_of(netdef):
    return {b for op in netdef.op for b in list(op.input) + list(op.output)}


def last_output(netdef, x):
    """Run ``netdef`` on ``x`` in a fresh workspace; the last op's output."""
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x)
    workspace.RunNetOnce(netdef)
    return workspace.FetchBlob(netdef.op[-1].output[0])


def chain():
    net = core.Net("chain")
    net.Relu("x", "a")
    net.Relu("a", "b")
    net.Relu("b", "c")
    net.Relu("c", "d")
    return net.Proto()


def test_inference_chain_reuses_released_blobs():
    optimized = optimize_inference_net(chain(), static_blobs=["x"])
    ios = [(list(op.input), list(op.output)) for op in optimized.op]
    # a is released after op 1, b takes... c takes a's storage, d takes b's
    # a is released after op 1 and b after op 2; c then takes a's storage, d b's
    assert ios == [
        (["x"], ["__m0_shared"]),
        (["__m0_shared"], ["__m1_shared"]),
        (["__m1_shared"], ["__m0_shared"]),
        (["__m0_shared"], ["__m1_shared"]),
    ]
    np.testing.assert_array_equal(last_output(optimized, np.array([-1.0, 2.0], np.float32)), [0, 2])


def test_inference_leaves_memongered_recurrent_and_dag_nets_alone():
    once = optimize_inference_net(chain(), ["x"])
    assert optimize_inference_net(once, ["x"]) is once  # already has __m0_shared
    dag = chain()
    dag.type = "dag"
    assert optimize_inference_net(dag, ["x"]) is dag


def forked():
    """x -> a; a feeds two branches (b1 -> c1, b2 -> c2); c1 + c2 -> y."""
    net = core.Net("fork")
    net.Relu("x", "a")
    net.Relu("a", "b1")
    net.Relu("b1", "c1")
    net.Sigmoid("a", "b2")
    net.Sigmoid("b2", "c2")
    net.Sum(["c1", "c2"], "y")
    return net.Proto()


def test_dag_recycling_keeps_parallel_branches_apart_and_computes_the_same():
    proto = forked()
    shareable = {"a", "b1", "c1", "b2", "c2", "y"}
    optimized = compute_blob_recycling_for_dag(
        proto, ["x"], list(range(len(proto.op))), shareable, "", set(), {}
    )
    assert len(blobs_of(optimized)) < len(blobs_of(proto))
    by_op = [list(op.output) for op in optimized.op]
    # the two branches may run in parallel: b1/c1 never share with b2/c2
    assert not {by_op[1][0], by_op[2][0]} & {by_op[3][0], by_op[4][0]}
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(last_output(optimized, x), last_output(proto, x))


def test_dag_recycling_of_gradients_with_a_namescope():
    """share_grad_blobs' use: the gradient ops of a model, names under a scope."""
    model = ModelHelper(name="m")
    with core.NameScope("s"):
        h = brew.fc(model, "data", "h", 4, 4)
        h = model.Relu(h, "r")
        out = brew.fc(model, h, "out", 4, 2)
        loss = model.AveragedLoss(model.SquaredL2Distance([out, "label"], "d"), "loss")
    model.AddGradientOperators([loss])
    proto = model.net.Proto()
    param_grads = {str(g) for g in model.param_to_grad.values()}

    def is_grad(b):
        return b.endswith("_grad") and b not in param_grads

    grad_ops = [
        i
        for i, op in enumerate(proto.op)
        if any(map(is_grad, op.input)) or any(map(is_grad, op.output))
    ]
    shareable = {
        b
        for i in grad_ops
        for b in list(proto.op[i].input) + list(proto.op[i].output)
        if is_grad(b)
    }
    optimized = compute_blob_recycling_for_dag(
        proto, ["s/loss"], grad_ops, shareable, "s/", set(), {}
    )
    renamed = {b for b in blobs_of(optimized) if "__m" in b}
    assert renamed and all(b.startswith("s/__m") for b in renamed)
    assert len(blobs_of(optimized)) < len(blobs_of(proto))
    assert param_grads <= blobs_of(optimized)  # parameter gradients keep their names
