"""The Python operator: functions reach the op by token, builders run once per
op created, the workspace can be passed, exceptions become RuntimeErrors with
the function's message, and the gradient op reads [inputs, outputs, output
gradients] (checked against finite differences)."""

import numpy as np
import pytest

from caffe2rnn import core, workspace
from caffe2rnn.errors import ArgumentError, EnforceNotMet, KeyNotFoundError
from caffe2rnn.gradient_checker import assert_gradient_close
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.runtime import Workspace


def cube(inputs, outputs):
    outputs[0].feed(inputs[0].data ** 3)


def cube_grad(inputs, outputs):
    x, _, dy = inputs  # [inputs..., outputs..., output gradients...]
    outputs[0].feed(3 * x.data**2 * dy.data)


def test_outputs_are_tensors_whose_memory_the_function_writes():
    def double(inputs, outputs):
        outputs[0].reshape(inputs[0].shape)  # an empty float32 tensor, resized
        outputs[0].data[...] = inputs[0].data * 2

    ws = Workspace()
    ws.feed("x", np.arange(3, dtype=np.float32))
    ws.run_operator_once(core.CreatePythonOperator(double, ["x"], ["y"]))
    np.testing.assert_array_equal(ws.fetch("y"), [0.0, 2.0, 4.0])


def test_forward_and_reshape_through_the_views():
    ws = Workspace()
    ws.feed("x", np.arange(6, dtype=np.float64).reshape(2, 3))
    ws.run_operator_once(core.CreatePythonOperator(cube, ["x"], ["y"]))
    np.testing.assert_array_equal(ws.fetch("y"), np.arange(6.0).reshape(2, 3) ** 3)


def test_gradient_against_finite_differences():
    op = core.CreatePythonOperator(cube, ["x"], ["y"], grad_f=cube_grad)
    x = np.random.RandomState(0).uniform(-1, 1, (3, 2))
    assert_gradient_close(op, [x], 0)


def test_gradient_maker_selects_output_and_input_gradients():
    net = core.Net("n")
    net.Python(cube, grad_f=cube_grad, grad_output_indices=[1], grad_input_indices=[0])(
        ["a", "b"], ["y1", "y2"]
    )
    grads, g_input = get_gradient_for_op(net.Proto().op[0], ["y1_grad", "y2_grad"])
    (g,) = grads
    assert g.type == "PythonGradient"
    assert list(g.input) == ["a", "b", "y1", "y2", "y2_grad"]
    assert list(g.output) == ["a_grad"]
    assert g_input == ["a_grad", None]
    assert [a.name for a in g.arg if a.name == "token"] == ["token"]


def test_tokens_are_unique_per_registration():
    a = core.CreatePythonOperator(cube, [], [])
    b = core.CreatePythonOperator(cube, [], [])
    tokens = [[x.s for x in op.arg if x.name == "token"][0] for op in (a, b)]
    assert tokens[0] != tokens[1] and tokens[0].startswith(b"cube")


def test_builders_run_once_per_op_created():
    calls = []

    def builder(scale):
        calls.append(scale)

        def f(inputs, outputs):
            outputs[0].feed(inputs[0].data * scale)

        return f

    net = core.Net("built")
    net.Python((builder, [2.0], {}))(["x"], ["y"])
    assert calls == []  # nothing runs while building
    ws = Workspace()
    ws.feed("x", np.ones(2, np.float32))
    ws.create_net(net.Proto())
    assert calls == [2.0]
    ws.run_net("built")
    ws.run_net("built")
    assert calls == [2.0]
    np.testing.assert_array_equal(ws.fetch("y"), [2.0, 2.0])


def test_pass_workspace_gives_the_ops_workspace():
    seen = {}

    def f(inputs, outputs, ws):
        seen["value"] = ws.blobs["hidden"].fetch()

    ws = workspace.C.Workspace()
    net = core.Net("pw")
    net.GivenTensorFill([], ["hidden"], values=[1.0, 2.0], shape=[2])
    net.Python(f, pass_workspace=True)([], [])
    ws.run(net)
    np.testing.assert_array_equal(seen["value"], [1.0, 2.0])


def test_an_exception_is_a_runtime_error_with_its_message_and_nothing_written():
    def boom(inputs, outputs):
        outputs[0].feed(np.zeros(3))
        raise ValueError("This is an intentional exception.")

    ws = Workspace()
    ws.feed("y", np.ones(2, np.float32))
    with pytest.raises(EnforceNotMet, match="ValueError: This is an intentional exception") as info:
        ws.run_operator_once(core.CreatePythonOperator(boom, [], ["y"]))
    assert isinstance(info.value, RuntimeError)
    np.testing.assert_array_equal(ws.fetch("y"), [1.0, 1.0])  # rolled back


def test_unknown_token_and_pickled_builder_are_refused():
    ws = Workspace()
    op = core.CreateOperator("Python", [], [], token="nobody_registered_this")
    with pytest.raises(KeyNotFoundError, match="nobody_registered_this is not available"):
        ws.run_operator_once(op)
    op = caffe2_pb2.OperatorDef(type="Python")
    op.arg.add(name="pickled_builder", s=b"\x80\x04cos\nsystem\n")
    with pytest.raises(ArgumentError, match="does not unpickle"):
        ws.run_operator_once(op)
    with pytest.raises(ArgumentError, match="requires either pickled_builder or token"):
        ws.run_operator_once(core.CreateOperator("Python", [], []))
