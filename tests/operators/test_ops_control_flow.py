"""If, While, Do, CreateScope, HasScope against Caffe2 929c33cee's C++ (if_op.h,
while_op.h, do_op.h, create_scope_op.h), and the gradients of If and While
(control_ops_grad) against central finite differences.

Built in era E6: the ops came after E5 (August-September 2017), and they read
their nets from ``Argument.n``, where Caffe2 stored NetDef arguments from
6538f8783 (2017-08-22) on (in E5, ``CreateOperator`` still wrote them as text).
"""

import numpy as np
import pytest

from caffe2rnn import core, eras, workspace
from caffe2rnn.control_ops_util import add_if_op, add_while_op
from caffe2rnn.errors import DTypeError, EnforceNotMet, GradientError, ShapeError
from caffe2rnn.net_builder import NetBuilder, ops
from caffe2rnn.runtime import Workspace


@pytest.fixture(autouse=True)
def era_e6():
    with eras.use("E6"):
        yield


def _net(name, build):
    net = core.Net(name)
    build(net)
    return net


def _if_op(then_net, else_net=None, inputs=("cond",), outputs=()):
    arguments = {"then_net": then_net.Proto()}
    if else_net is not None:
        arguments["else_net"] = else_net.Proto()
    return core.CreateOperator("If", list(inputs), list(outputs), **arguments)


@pytest.fixture
def ws():
    ws = Workspace()
    ws.feed("one", np.array([1.0], np.float32))
    ws.feed("two", np.array([2.0], np.float32))
    ws.feed("y", np.array([0.0], np.float32))
    return ws


@pytest.mark.parametrize("cond, expected", [(True, 1.0), (False, 2.0)])
def test_if_runs_one_branch_in_the_same_workspace(ws, cond, expected):
    ws.feed("cond", np.array([cond]))
    then_net = _net("then", lambda n: n.Copy("one", "y"))
    else_net = _net("else", lambda n: n.Copy("two", "y"))
    ws.run_operator_once(_if_op(then_net, else_net, outputs=["y"]))
    assert ws.fetch("y").tolist() == [expected]


def test_if_without_else_does_nothing_when_false(ws):
    ws.feed("cond", np.array(False))
    ws.run_operator_once(_if_op(_net("then", lambda n: n.Copy("one", "y"))))
    assert ws.fetch("y").tolist() == [0.0]


@pytest.mark.parametrize(
    "cond, error, words",
    [
        (np.array([1.0], np.float32), DTypeError, "expects elements to be bool.*float32"),
        (np.array([True, False]), ShapeError, "single value expected"),
        ("yes", DTypeError, "tensor expected"),
    ],
)
def test_if_condition_is_one_bool(ws, cond, error, words):
    ws.feed("cond", cond)
    with pytest.raises(error, match=words):
        ws.run_operator_once(_if_op(_net("then", lambda n: n.Copy("one", "y"))))


def test_if_needs_a_then_net(ws):
    ws.feed("cond", np.array(True))
    with pytest.raises(EnforceNotMet, match="then_net must be specified in If operator"):
        ws.run_operator_once(core.CreateOperator("If", ["cond"], []))


def test_while_runs_cond_net_before_each_round(ws):
    """i = 0; while (i += 1) <= 4: s += i  ->  s = 10, i = 5."""
    ws.feed("i", np.array([0], np.int32))
    ws.feed("s", np.array([0], np.int32))
    ws.feed("inc", np.array([1], np.int32))
    ws.feed("four", np.array([4], np.int32))
    ws.feed("cond", np.array([False]))
    cond_net = _net("c", lambda n: (n.Add(["i", "inc"], "i"), n.LE(["i", "four"], "cond")))
    loop_net = _net("l", lambda n: n.Add(["s", "i"], "s"))
    ws.run_operator_once(
        core.CreateOperator(
            "While", ["cond"], ["i", "s"], loop_net=loop_net.Proto(), cond_net=cond_net.Proto()
        )
    )
    assert ws.fetch("s").tolist() == [10] and ws.fetch("i").tolist() == [5]


def test_while_needs_a_loop_net(ws):
    ws.feed("cond", np.array(False))
    with pytest.raises(EnforceNotMet, match="loop_net must be specified in While operator"):
        ws.run_operator_once(core.CreateOperator("While", ["cond"], []))


def _do(inputs, outputs, body, inner, idx, **extra):
    return core.CreateOperator(
        "Do", inputs, outputs, net=body.Proto(), inner_blobs=inner, outer_blobs_idx=idx, **extra
    )


def test_do_binds_outer_blobs_and_keeps_its_own_local(ws):
    """Inside, "a" is the outer "one" and "b" the outer "y"; "tmp" stays inside."""
    ws.run_operator_once(core.CreateOperator("CreateScope", [], ["scope"]))
    body = _net("body", lambda n: (n.Add(["a", "a"], "tmp"), n.Add(["tmp", "a"], "b")))
    ws.run_operator_once(_do(["one", "scope"], ["y", "scope"], body, ["a", "b"], [0, 1]))
    assert ws.fetch("y").tolist() == [3.0]
    assert not ws.has_blob("tmp") and not ws.has_blob("a")
    ws.run_operator_once(core.CreateOperator("HasScope", ["scope"], ["has"]))
    assert ws.fetch("has").tolist() == [True]  # the Do's workspace waits for a gradient
    ws.run_operator_once(core.CreateOperator("CreateScope", [], ["scope"]))
    ws.run_operator_once(core.CreateOperator("HasScope", ["scope"], ["has"]))
    assert ws.fetch("has").tolist() == [False]


@pytest.mark.parametrize(
    "inputs, outputs, inner, idx, words",
    [
        (["one", "s"], ["y", "one"], ["a"], [0], "Expected same input/output workspace"),
        (["one", "one", "s"], ["y", "s"], ["a", "b", "c"], [0, 1, 2], "Duplicate input blobs"),
        (["one", "s"], ["y", "s"], ["a"], [0, 1], "different inner/outer blobs lengths"),
        (["one", "s"], ["y", "s"], ["a", "a"], [0, 1], "redefinition of inner blob a"),
        (["one", "s"], ["y", "s"], ["a", "b"], [0, 2], r"out of bounds \[0, 1\]"),
        (["one", "s"], ["y", "s"], ["a"], [0], "Not all outer names are used"),
    ],
)
def test_do_refuses_bad_bindings_as_caffe2_did(ws, inputs, outputs, inner, idx, words):
    ws.run_operator_once(core.CreateOperator("CreateScope", [], ["s"]))
    body = _net("body", lambda n: n.Copy("a", "b"))
    before = ws.blobs()
    with pytest.raises(EnforceNotMet, match=words):
        ws.run_operator_once(_do(inputs, outputs, body, inner, idx))
    assert ws.blobs() == before


def test_has_scope_needs_a_workspace_stack(ws):
    with pytest.raises(DTypeError, match="blob 'one'.*not a workspace stack"):
        ws.run_operator_once(core.CreateOperator("HasScope", ["one"], ["has"]))


@pytest.mark.parametrize("op_type, inputs", [("CreateScope", []), ("HasScope", ["scope"])])
def test_scope_ops_have_no_gradient(op_type, inputs):
    op = core.CreateOperator(op_type, inputs, ["x"])
    with pytest.raises(Exception, match="should not call gradient"):
        core.GradientRegistry.GetGradientForOp(op, ["x_grad"])


def test_if_net_blocks_keep_their_locals_local():
    """Control_Ops' rule: a blob first written in a block is gone after it."""
    with NetBuilder(_use_control_ops=True) as nb:
        ops.Const(1.5, blob_out="x")
        ops.Const(0.0, blob_out="y")
        with ops.IfNet(ops.GT(["x", ops.Const(0.0)])):
            ops.Copy("x", "local_blob")
            ops.Add(["local_blob", "local_blob"], "y")
    workspace.ResetWorkspace()
    workspace.RunNetOnce(nb.get()[0])
    assert workspace.FetchBlob("y") == 3.0 and not workspace.HasBlob("local_blob")


# --- gradients against finite differences ------------------------------------------------


def _finite_difference(build, x0, eps):
    """d(loss)/dx by central differences, running the forward net only."""
    grads = np.zeros_like(x0)
    for k in range(x0.size):
        values = []
        for sign in (1, -1):
            x = x0.copy()
            x.flat[k] += sign * eps
            workspace.ResetWorkspace()
            workspace.FeedBlob("x", x)
            workspace.RunNetOnce(build())
            values.append(float(workspace.FetchBlob("loss").sum()))
        grads.flat[k] = (values[0] - values[1]) / (2 * eps)
    return grads


def _gradient(build, x0):
    net = build()
    net.AddGradientOperators(["loss"])
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x0)
    workspace.RunNetOnce(net)
    return workspace.FetchBlob("x_grad")


@pytest.mark.parametrize("threshold", [-5.0, 5.0], ids=["then", "else"])
def test_if_gradient_matches_finite_differences(threshold):
    """loss = sum(x*x*w) when sum(x) > threshold, else sum(x*3)."""

    def build():
        with NetBuilder(_use_control_ops=True, initial_scope=["x"]) as nb:
            ops.Const(np.array([0.5, -2.0, 1.5], np.float32), blob_out="w")
            ops.Const(threshold, blob_out="threshold")
            ops.Const(np.zeros(3, np.float32), blob_out="z")
            ops.SumElements(["x"], "s")
            with ops.IfNet(ops.GT(["s", "threshold"])):
                ops.Mul(["x", "x"], "xx")
                ops.Mul(["xx", "w"], "z")
            with ops.Else():
                ops.Scale("x", "z", scale=3.0)
            ops.SumElements(["z"], "loss")
        return nb.get()[0]

    x0 = np.array([0.3, -0.7, 1.1], np.float32)
    expected = 2 * x0 * np.array([0.5, -2.0, 1.5]) if threshold < 0 else np.full(3, 3.0)
    np.testing.assert_allclose(_gradient(build, x0), expected, rtol=1e-6)
    fd = _finite_difference(build, x0, eps=1e-2)
    np.testing.assert_allclose(_gradient(build, x0), fd, rtol=1e-3)


def test_while_gradient_matches_finite_differences():
    """Three rounds of h = tanh(h), h = x at first: dh3/dx is the product of
    1 - tanh(h_k)^2 over each round's own h_k, which the backward reads from
    that round's saved workspace. The body updates h with one in-place op whose
    gradient reads the output (TanhGradient): Caffe2's backward sweep refuses a
    gradient op that reads a version of a blob a later op overwrote, and so
    does this one."""

    def build():
        with NetBuilder(_use_control_ops=True, initial_scope=["x"]) as nb:
            ops.Copy("x", "h")
            ops.Const(0, blob_out="i")
            with ops.WhileNet():
                with ops.Condition():
                    ops.Add(["i", ops.Const(1)], "i")
                    ops.LE(["i", ops.Const(3)])
                ops.Tanh("h", "h")
            # Add passes its output's gradient on under that name ("out_grad"); see
            # the next test for what a gradient named "h_grad" does here.
            ops.Add(["h", ops.Const(np.zeros(2, np.float32))], "out")
            ops.SumElements(["out"], "loss")
        return nb.get()[0]

    x0 = np.array([0.3, -0.8], np.float32)
    h, expected = x0.astype(np.float64), np.ones(2)
    for _ in range(3):
        expected *= 1 - np.tanh(h) ** 2
        h = np.tanh(h)
    np.testing.assert_allclose(_gradient(build, x0), expected, rtol=1e-5)
    fd = _finite_difference(build, x0, eps=1e-2)
    np.testing.assert_allclose(_gradient(build, x0), fd, rtol=1e-3)


def test_while_gradient_refuses_an_incoming_gradient_named_like_its_input():
    """Caffe2's gen_do_gradient binds both the incoming gradient of output h and
    the gradient it computes for input h to the outer "h_grad" when the
    incoming one already has that name, and then asserts "Reusage of outer blob
    name" (929c33cee's control_ops_grad.py does the same on this net)."""
    with NetBuilder(_use_control_ops=True, initial_scope=["x"]) as nb:
        ops.Copy("x", "h")
        ops.Const(0, blob_out="i")
        with ops.WhileNet():
            with ops.Condition():
                ops.Add(["i", ops.Const(1)], "i")
                ops.LE(["i", ops.Const(3)])
            ops.Tanh("h", "h")
        ops.SumElements(["h"], "loss")  # its gradient op writes "h_grad"
    with pytest.raises(GradientError, match="Reusage of outer blob name h_grad in Do op"):
        nb.get()[0].AddGradientOperators(["loss"])


def test_brew_style_helpers_build_if_and_while_over_nets():
    """add_if_op / add_while_op with explicit outer blobs (brew.cond/loop's route)."""
    init = core.Net("init")
    for name, value in (("x", 0.5), ("y", 0.0), ("zero", 0.0), ("one", 1.0)):
        init.ConstantFill([], [name], shape=[1], value=value)
    init.GT(["x", "zero"], "cond")
    main = core.Net("main")
    add_if_op(main, "cond", ["x", "y", "zero", "one"], _net("t", lambda n: n.Copy("one", "y")))
    counter = core.Net("counter")
    counter.ConstantFill([], ["i"], shape=[1], value=0.0)
    counter.ConstantFill([], ["seven"], shape=[1], value=7.0)
    body = _net("b", lambda n: n.Add(["i", "one"], "i"))
    cond = _net("c", lambda n: n.LT(["i", "seven"], "going"))
    add_while_op(counter, "going", ["i", "one", "seven"], body, cond)
    workspace.ResetWorkspace()
    workspace.RunNetOnce(init)
    workspace.RunNetOnce(main)
    workspace.RunNetOnce(counter)
    assert workspace.FetchBlob("y").tolist() == [1.0]
    assert workspace.FetchBlob("i").tolist() == [7.0]


def test_brew_cond_and_loop_over_model_helpers():
    """E7's brew.cond / brew.loop: branches and bodies are model helpers' nets."""
    from caffe2rnn import brew
    from caffe2rnn.model_helper import ModelHelper

    model = ModelHelper(name="outer")
    for name, value in (("x", -1.0), ("y", 0.0), ("zero", 0.0), ("one", 1.0), ("n", 5.0)):
        model.param_init_net.ConstantFill([], [name], shape=[1], value=value)
    model.param_init_net.GT(["x", "zero"], "positive")
    then_model, else_model = ModelHelper(name="then"), ModelHelper(name="else")
    then_model.net.Copy("one", "y")
    else_model.net.Sub(["zero", "one"], "y")
    brew.cond(model, "positive", ["x", "y", "zero", "one"], then_model, else_model)
    body, cond = ModelHelper(name="body"), ModelHelper(name="cond")
    body.net.Add(["y", "one"], "y")
    cond.net.LT(["y", "n"], "more")
    # "more" is not an outer blob: the loop makes it (a False bool) before it runs.
    brew.loop(model, "more", ["y", "one", "n"], body, cond)
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("y").tolist() == [5.0]  # -1 (else), then counted up to 5
    assert [op.type for op in model.net.Proto().op].count("If") == 1
