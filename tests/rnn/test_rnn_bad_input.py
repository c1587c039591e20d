"""Bad input around the recurrent op (issue 34): each case is a clear error, naming what is
wrong, or — where Caffe2 accepted it — a run that leaves nothing half-changed.

* argument indices: a negative or too large index in ``outputs_with_grads`` (and in any gradient
  maker's ``I``/``O``/``GI``/``GO``, the Python op's ``grad_*_indices``, the gradient checker's
  arguments) is refused naming the argument: Caffe2 read them with bounds-checked accessors
  (``g_output_.at(i)``, ``CAFFE_ENFORCE((i >= 0) && (i < def_.input().size()))`` in
  caffe2/core/operator_gradient.h at 042e8ede4), never as Python's count from the end;
* a run that fails after its step nets wrote through a link into an outer blob that is not an
  output of the op (a parameter, ``seq_lengths``) leaves that blob as it was;
* step nets nested too deeply for protobuf say so (Caffe2 parsed every operator with protobuf's
  default recursion limit, 100).
"""

import numpy as np
import pytest
from rnn_test_builders import net, op, rnn_op
from test_recurrent_network_cells import HIDDEN_ALIASES, MUL_BACKWARD_LINKS, MUL_LINKS

from caffe2rnn import core, errors
from caffe2rnn.gradient_checker import gradients
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.proto import MAX_DEPTH, caffe2_pb2, nesting_depth
from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument

T, N, D = 3, 2, 3


# --- argument indices -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-1, 3])
def test_recurrent_network_maker_refuses_outputs_with_grads_out_of_range(bad):
    step = net("s", [op("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"])], ["input_t"])
    o = rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "ws"],
        step,
        step,
        states=["hidden"],
        initial_ids=[1],
        links=MUL_LINKS,
        aliases=HIDDEN_ALIASES,
        outputs_with_grads=[bad],
    )
    with pytest.raises(errors.GradientError, match="'outputs_with_grads' holds %d" % bad):
        get_gradient_for_op(o, ["hidden_all_grad", None, None])


@pytest.mark.parametrize(
    "argument, values",
    [("grad_output_indices", [-1]), ("grad_input_indices", [2]), ("grad_input_indices", [-2])],
)
def test_python_op_gradient_refuses_index_arguments_out_of_range(argument, values):
    o = core.CreateOperator("Python", ["x", "y"], ["z"])
    o.arg.add().CopyFrom(MakeArgument(argument, values))
    with pytest.raises(
        errors.GradientError, match="argument '%s' holds %d" % (argument, values[0])
    ):
        get_gradient_for_op(o, ["z_grad"])


def test_gradient_maker_accessors_are_bounds_checked():
    """A maker reading I(-1) or GO(5) gets an error naming the op and the accessor, as Caffe2's
    CAFFE_ENFORCE / vector::at did, not Python's last element."""
    from caffe2rnn.operators.gradient_maker import GradientMaker

    o = core.CreateOperator("Relu", ["x"], ["y"])
    maker = GradientMaker(o, ["y_grad"])
    for accessor, index in (("I", -1), ("O", 1), ("GO", -1), ("GI", 5)):
        with pytest.raises(
            errors.GradientError, match=r"Relu gradient maker: %s\(%d\)" % (accessor, index)
        ):
            getattr(maker, accessor)(index)
    assert (maker.I(0), maker.O(0), maker.GO(0), maker.GI(0)) == ("x", "y", "y_grad", "x_grad")


@pytest.mark.parametrize(
    "argument, kwargs", [("outputs_with_grads", {"outputs_with_grads": [-1]}), ("input_index", {})]
)
def test_gradient_checker_refuses_indices_out_of_range(argument, kwargs):
    o = core.CreateOperator("Relu", ["x"], ["y"])
    index = 0 if kwargs else -1
    with pytest.raises(errors.ArgumentError, match="argument %s holds -1" % argument):
        gradients(o, [np.ones(3)], index, **kwargs)


# --- a failed run leaves outer blobs as they were ---------------------------------------
def writing_op():
    """h_t = x_t * h_{t-1}; each step also copies x_t through a link into row t of the outer
    blob 'w' (an input, not an output), and Gathers row t of 'table' (fails when t = fail_at)."""
    step = net(
        "writes_through",
        [
            op("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"]),
            op("Copy", ["input_t"], ["w_t"]),
            op("Gather", ["table", "timestep"], ["row"]),
        ],
        ["input_t", "hidden_t_prev", "table"],
    )
    backward = net(
        "writes_through_backward",
        [
            op("Mul", ["hidden_t_grad", "hidden_t_prev"], ["input_t_grad"]),
            op("Mul", ["hidden_t_grad", "input_t"], ["hidden_t_prev_grad"]),
            op("Copy", ["hidden_t_grad"], ["v_t"]),
            op("Gather", ["btable", "timestep"], ["brow"]),
        ],
        ["hidden_t_grad", "hidden_t_prev", "input_t", "btable"],
    )
    return rnn_op(
        ["input", "h0", "w", "table", "btable", "v"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        backward,
        states=["hidden"],
        initial_ids=[1],
        links=list(MUL_LINKS) + [("w_t", "w", 0)],
        backward_links=list(MUL_BACKWARD_LINKS) + [("v_t", "v", 0)],
        aliases=HIDDEN_ALIASES,
        outputs_with_grads=[0],
    )


def test_a_failed_run_leaves_blobs_written_through_links_as_they_were():
    rng = np.random.RandomState(0)
    ws = Workspace(name="bad_input")
    feeds = {
        "input": rng.standard_normal((T, N, D)),
        "h0": rng.standard_normal((N, D)),
        "w": np.full((T, N, D), 7.0),
        "table": np.ones((2, 4)),  # Gather of row 2 fails at the last step
        "btable": np.ones((T, 4)),
        "v": np.full((T, N, D), 5.0),
    }
    for name, value in feeds.items():
        ws.feed(name, value)
    o = writing_op()
    with pytest.raises(errors.ShapeError, match="timestep 2"):
        ws.run_operator_once(o)
    np.testing.assert_array_equal(ws.fetch("w"), feeds["w"])  # rows 0, 1 were written, then undone
    # the same for the gradient op writing through a backward link into 'v'
    ws.feed("table", np.ones((T, 4)))
    ws.run_operator_once(o)
    np.testing.assert_array_equal(ws.fetch("w"), feeds["input"])  # a good run writes through
    ws.feed("btable", np.ones((2, 4)))  # the first backward step, t = 2, writes v[2], then fails
    grad = get_gradient_for_op(o, ["hidden_all_grad", None, None])[0][0]
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    with pytest.raises(errors.ShapeError, match="timestep 2"):
        ws.run_operator_once(grad)
    np.testing.assert_array_equal(ws.fetch("v"), feeds["v"])


# --- nesting ------------------------------------------------------------------------------
def nested_rnn(o, depth):
    """Make ``o`` (in place: a copy would already fail) a RecurrentNetwork whose step net holds
    a Mul and, for depth > 0, another such op."""
    o.type = "RecurrentNetwork"
    o.input.extend(["input", "h0"])
    o.output.extend(["hidden_all", "hidden_last", "ws%d" % depth])
    args = {
        "recurrent_states": ["hidden"],
        "initial_recurrent_state_ids": [1],
        "link_internal": [i for i, _, _ in MUL_LINKS],
        "link_external": [e for _, e, _ in MUL_LINKS],
        "link_offset": [k for _, _, k in MUL_LINKS],
        "alias_src": [s for s, _, _ in HIDDEN_ALIASES],
        "alias_dst": [d for _, d, _ in HIDDEN_ALIASES],
        "alias_offset": [k for _, _, k in HIDDEN_ALIASES],
    }
    for name, values in args.items():
        o.arg.add().CopyFrom(MakeArgument(name, values))
    step = o.arg.add()
    step.name = "step_net"
    step.n.name = "step%d" % depth
    step.n.external_input.extend(["input_t", "hidden_t_prev", "input", "h0"])
    mul = step.n.op.add()
    mul.type, mul.input[:], mul.output[:] = "Mul", ["input_t", "hidden_t_prev"], ["hidden_t"]
    if depth:
        nested_rnn(step.n.op.add(), depth - 1)
    return o


def test_step_nets_nested_too_deeply_say_so():
    deep = nested_rnn(caffe2_pb2.OperatorDef(), 60)
    assert nesting_depth(deep) > MAX_DEPTH
    ws = Workspace(name="deep")
    ws.feed("input", np.ones((2, 1, 2)))
    ws.feed("h0", np.ones((1, 2)))
    with pytest.raises(errors.NestingError, match="nested too deeply: 184 levels") as info:
        ws.run_operator_once(deep)
    assert isinstance(info.value, RecursionError)
    assert sorted(ws.local_blob_names()) == ["h0", "input"]
    shallow = nested_rnn(caffe2_pb2.OperatorDef(), 2)
    ws.run_operator_once(shallow)  # three levels run, nested
    assert ws.fetch("hidden_all").shape == (2, 1, 2)


@pytest.mark.parametrize("reader", [None, "StopGradient"])
def test_recurrent_net_names_a_recurrent_state_no_op_gives_a_gradient(reader):
    """Caffe2's recurrent_net (0cdd09da6) stopped with a bare KeyError when the
    step net never read a recurrent state (or read it only through an op without
    a gradient); caffe2rnn raises a KeyError too, one naming the state and why."""
    from caffe2rnn.recurrent import recurrent_net

    step = core.Net("unread")
    x_t, h_prev = step.AddExternalInputs("input_t", "h_prev")
    h = step.Tanh(x_t, "h")
    if reader:  # h_prev is read, but by an op that has no gradient
        h = step.Add([h, step.StopGradient(h_prev, "h_prev_stopped")], "h_sum")
    step.AddExternalOutputs(h)
    with pytest.raises(errors.KeyNotFoundError, match="'h_prev' gets no gradient") as caught:
        recurrent_net(
            core.Net("main"), step, [("input_t", "x")], [("h_prev", "h0")], {"h_prev": str(h)}
        )
    assert isinstance(caught.value, KeyError)
    assert "Read it in the step net" in str(caught.value)
