"""RecurrentNetwork(Gradient) arguments: each bad value is a clear error, before anything runs.

One minimal case per failure class that used to be a silent wrong result (an
out-of-range ``outputs_with_grads`` gave all-zero gradients, an initial state
id of -1 a wrong-shaped h0 gradient, a window of 0 unwritten states, a link
called like a parameter overwrote it, a (2, N, D) initial state an
uninitialised ``_last``), plus the reader itself and
``prepared_backward_step_net``.
"""

import numpy as np
import pytest
from rnn_test_builders import net, op, rnn_op, run_backward, run_forward
from test_recurrent_network_cells import mul_cell_op

from caffe2rnn import errors
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.operators.rnn import prepared_backward_step_net, read_recurrent_arguments
from caffe2rnn.operators.rnn.links import Link
from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument

T, N, D = 3, 2, 3


def feeds(h0_shape=(N, D), seed=0):
    rng = np.random.RandomState(seed)
    return {"input": rng.standard_normal((T, N, D)), "h0": rng.standard_normal(h0_shape)}


def set_arg(o, name, values):
    """Replace (or add) the repeated/single argument ``name`` of ``o``."""
    for a in o.arg:
        if a.name == name:
            if isinstance(values, str):
                a.s = values.encode()
            elif isinstance(values, int):
                a.i = values
            elif values and isinstance(values[0], str):
                a.strings[:] = [v.encode() for v in values]
            else:
                a.ints[:] = values
            return o
    o.arg.add().CopyFrom(MakeArgument(name, values))
    return o


def gradient_op(o):
    g_output = [o.output[j] + "_grad" if j < 2 else None for j in range(len(o.output))]
    return get_gradient_for_op(o, g_output)[0][0]


def snapshot(ws):
    return {name: ws.fetch(name) for name in ("input", "h0") if ws.has_blob(name)}


def assert_unchanged(ws, before):
    for name, value in before.items():
        np.testing.assert_array_equal(ws.fetch(name), value, err_msg=name)


def forward_error(o, error, match, f=None):
    ws = Workspace(name="args")
    for name, value in (f or feeds()).items():
        ws.feed(name, value)
    before = snapshot(ws)
    with pytest.raises(error, match=match):
        ws.run_operator_once(o)
    assert_unchanged(ws, before)


# --- the reader -----------------------------------------------------------------


def test_reader_parses_every_argument_into_one_structure():
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("hidden_grad.rename", "shared"))
    a = read_recurrent_arguments(o)
    assert a.step_net.name == "mul_step" and a.backward_step_net.name == "mul_step_backward"
    assert a.inputs == ("input", "h0") and a.states == ("hidden",)
    assert a.initial_state(a.states[0]) == "h0" and a.sequence_input == "input"
    assert a.links[1] == Link("hidden_t", "hidden", 1, 1)
    assert [l.internal for l in a.backward_links][-1] == "input_t_grad"
    assert [(x.dst, x.offset) for x in a.aliases] == [("hidden_all", 1), ("hidden_last", -1)]
    assert a.outputs_with_grads == (0, 1) and a.timestep == "timestep"
    assert a.renamed("hidden_grad") == "shared" and a.renamed("x") == "x"
    g = read_recurrent_arguments(gradient_op(o))
    # The gradient op's forward inputs leave out the GO inputs and forward outputs.
    assert g.inputs == ("input", "h0") and g.output_gradients == (
        "hidden_all_grad",
        "hidden_last_grad",
    )
    assert g.output_gradient(1) == "hidden_last_grad"


def test_prepared_backward_step_net_is_what_the_gradient_op_runs():
    o = mul_cell_op()
    net_ = prepared_backward_step_net(o)
    types = [x.type for x in net_.op]
    assert types[:6] == ["rnn_internal_apply_link"] * 6
    assert types[6] == "rnn_internal_accumulate_gradient_input"  # hidden_all's gradient
    assert types[7:] == ["Mul", "Mul"]
    assert "timestep" in net_.external_input
    # The op's argument is left as it was.
    assert [x.type for x in read_recurrent_arguments(o).backward_step_net.op] == ["Mul", "Mul"]
    with pytest.raises(errors.ArgumentError, match="forward-only"):
        forward_only = mul_cell_op()
        del forward_only.arg[[a.name for a in forward_only.arg].index("backward_step_net")]
        prepared_backward_step_net(forward_only)


# --- ranges ---------------------------------------------------------------------


def test_outputs_with_grads_out_of_range():
    o = set_arg(mul_cell_op(), "outputs_with_grads", [7])
    forward_error(o, errors.ArgumentError, r"'outputs_with_grads' holds 7; expected .* 0\.\.1")


def test_outputs_with_grads_out_of_range_on_the_gradient_op():
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    g = set_arg(gradient_op(o), "outputs_with_grads", [0, 7])
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    with pytest.raises(errors.ArgumentError, match="RecurrentNetworkGradient.*holds 7"):
        ws.run_operator_once(g)


def test_outputs_with_grads_on_an_alias_of_a_non_state():
    o = mul_cell_op()
    set_arg(o, "alias_src", ["hidden", "input"])
    forward_error(o, errors.ArgumentError, "'input', not a recurrent state")


def test_initial_state_id_minus_one():
    o = set_arg(mul_cell_op(), "initial_recurrent_state_ids", [-1])
    forward_error(o, errors.ArgumentError, r"'initial_recurrent_state_ids' holds -1; .*1\.\.1")


def test_initial_state_id_minus_one_on_the_gradient_op():
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    g = set_arg(gradient_op(o), "initial_recurrent_state_ids", [-1])
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    with pytest.raises(errors.ArgumentError, match="holds -1"):
        ws.run_operator_once(g)


def test_param_index_out_of_range_and_shared_with_a_state():
    forward_error(set_arg(mul_cell_op(), "param", [5]), errors.ArgumentError, "'param' holds 5")
    forward_error(
        set_arg(mul_cell_op(), "param", [1]),
        errors.ArgumentError,
        "param' and initial_recurrent_state_ids both list input 1",
    )


def test_link_window_zero():
    o = set_arg(mul_cell_op(), "link_window", [1, 0, 1])
    forward_error(o, errors.ArgumentError, "'link_window' is 0 for link 'hidden_t'")


def test_negative_link_offset():
    o = set_arg(mul_cell_op(), "link_offset", [0, -1, 0])
    forward_error(o, errors.ArgumentError, "'link_offset' is -1 for link 'hidden_t'")
    o = set_arg(mul_cell_op(), "backward_link_offset", [0, 1, -2])
    forward_error(o, errors.ArgumentError, "'backward_link_offset' is -2")


def test_num_workspaces_below_one():
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("num_workspaces", 0))
    forward_error(o, errors.ArgumentError, "'num_workspaces' is 0")


@pytest.mark.parametrize("threads", [-1, 65])
def test_executor_threads_out_of_range(threads):
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("rnn_executor.num_threads", threads))
    forward_error(
        o, errors.ArgumentError, "'rnn_executor.num_threads' is %d; expected 0 .. 64" % threads
    )


# --- names ------------------------------------------------------------------------


def test_timestep_named_like_an_input():
    o = set_arg(mul_cell_op(), "timestep", "h0")
    forward_error(o, errors.ArgumentError, "'timestep' names the timestep blob 'h0'.*an input")


def test_link_view_named_like_an_input_would_overwrite_it():
    """A link called ``h0`` made the op's input ``h0`` a view of a state row."""
    o = mul_cell_op()
    set_arg(o, "link_internal", ["h0", "hidden_t", "input_t"])
    forward_error(o, errors.ArgumentError, "'link_internal' names a link view 'h0'")


def test_alias_named_like_an_input_would_overwrite_it():
    o = set_arg(mul_cell_op(), "alias_dst", ["input", "hidden_last"])
    forward_error(o, errors.ArgumentError, "'alias_dst' names 'input'")


def test_alias_must_be_an_output():
    o = set_arg(mul_cell_op(), "alias_dst", ["hidden_all", "elsewhere"])
    forward_error(o, errors.ArgumentError, "'elsewhere', which is not one of the op's outputs")


def test_state_named_like_an_input():
    o = set_arg(mul_cell_op(), "recurrent_states", ["input"])
    forward_error(
        o,
        errors.ArgumentError,
        "'recurrent_states' names a recurrent state 'input', which is already an input",
    )


def test_recompute_blob_named_like_an_input():
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("recompute_blobs_on_backward", ["h0"]))
    forward_error(o, errors.ArgumentError, "'recompute_blobs_on_backward' names 'h0'")


def test_missing_step_net():
    o = mul_cell_op()
    del o.arg[[a.name for a in o.arg].index("step_net")]
    forward_error(o, errors.ArgumentError, "'step_net' is required")


# --- multi-row initial states ------------------------------------------------------


def test_two_row_initial_state_with_offset_one_links_is_an_error():
    """k = 2 and recurrent_net's links: row T + 1 is never written, so
    ``hidden_last`` would be uninitialised memory (Caffe2 042e8ede4 gave it)."""
    forward_error(
        mul_cell_op(),
        errors.ArgumentError,
        r"row 4 of the 5 rows of 'hidden' is never written before output 'hidden_all' "
        r"\(alias_offset 1\) shows it",
        feeds((2, N, D)),
    )


def test_two_row_initial_state_written_at_offset_k_matches_numpy():
    """The stateful-convolution layout of Caffe2's test: read rows t, t + 1
    (window 2), write row t + 2; ``_all`` starts at row k."""
    step = net(
        "window_step",
        [
            op("ReduceFrontSum", ["hidden_t_prev"], ["prev_sum"]),
            op("Mul", ["input_t", "prev_sum"], ["hidden_t"], broadcast=1),
        ],
        ["input_t", "hidden_t_prev"],
    )
    o = rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        states=["hidden"],
        initial_ids=[1],
        links=[
            ("hidden_t_prev", "hidden", 0, 2),
            ("hidden_t", "hidden", 2),
            ("input_t", "input", 0),
        ],
        aliases=[("hidden", "hidden_all", 2), ("hidden", "hidden_last", -1)],
    )
    f = feeds((2, N, D))
    ws = run_forward(o, f)
    rows = [f["h0"][0], f["h0"][1]]
    for t in range(T):
        rows.append(f["input"][t] * (rows[t] + rows[t + 1]))
    np.testing.assert_allclose(ws.fetch("hidden_all"), np.stack(rows[2:]), rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("hidden_last"), rows[-1][None], rtol=1e-12)


# --- the gradient op's own layout ---------------------------------------------------


def test_gradient_op_output_count():
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    g = gradient_op(o)
    g.output.append("extra_grad")
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    with pytest.raises(errors.ArgumentError, match="ask for 2 outputs .* the op has 3"):
        ws.run_operator_once(g)


def test_valid_arguments_still_give_the_gradients():
    o = mul_cell_op()
    f = feeds()
    ws = run_forward(o, f)
    grads = run_backward(o, ws, {0: np.ones((T, N, D)), 1: np.zeros((1, N, D))})
    # h_t = x_t * h_{t-1}: d sum(h_1..h_T) / d h0 = sum_t prod_{s<=t} x_s
    x = f["input"]
    expected = sum(np.prod(x[: t + 1], axis=0) for t in range(T))
    np.testing.assert_allclose(grads["h0"], expected, rtol=1e-12)


def test_link_reading_a_row_before_it_is_written():
    """hidden_t_prev at offset 1 reads the row the same step is about to write."""
    o = set_arg(mul_cell_op(), "link_offset", [1, 1, 0])
    forward_error(
        o,
        errors.ArgumentError,
        r"row 1 of the 4 rows of 'hidden' is never written before link 'hidden_t_prev' "
        r"\(offset 1, window 1\) reads it at timestep 0",
    )


def test_row_checks_run_once_per_shape_and_refuse_every_time(monkeypatch):
    """The row checks are a pure function of (T, initial rows): passed once for
    a shape, they are not replayed (O(T) Python per run); a refused shape is
    refused on every run, and a new T is checked again."""
    from caffe2rnn.operators.rnn import arguments

    replays = []
    original = arguments.RowSchedule.check_link_reads
    monkeypatch.setattr(
        arguments.RowSchedule,
        "check_link_reads",
        lambda self: (replays.append(len(self.steps)), original(self))[1],
    )
    ws = Workspace(name="rows")
    for name, value in feeds().items():
        ws.feed(name, value)
    ws.create_net(net("rows", [mul_cell_op()], ["input", "h0"]))
    for _ in range(3):
        ws.run_net("rows")
    assert replays == [T]
    ws.feed("input", np.ones((T + 2, N, D)))
    ws.run_net("rows")
    ws.run_net("rows")
    assert replays == [T, T + 2]

    bad = set_arg(mul_cell_op(), "link_offset", [1, 1, 0])
    ws.create_net(net("bad_rows", [bad], ["input", "h0"]))
    for _ in range(2):  # the same operator instance: a failure is not remembered as a pass
        with pytest.raises(errors.ArgumentError, match="never written before link 'hidden_t_prev'"):
            ws.run_net("bad_rows")


def test_written_link_into_an_input_would_overwrite_it():
    o = set_arg(mul_cell_op(), "link_external", ["hidden", "input", "input"])
    forward_error(o, errors.ArgumentError, "'link_external' is 'input' for link 'hidden_t'")


def test_backward_link_that_leaves_the_states_gradient_unwritten():
    """A backward link renamed away from the blob the backward net writes: the
    rows of hidden_grad before T would be read uninitialised."""
    o = set_arg(
        mul_cell_op(), "backward_link_internal", ["unwritten", "hidden_t_grad", "input_t_grad"]
    )
    ws = run_forward(o, feeds())
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    with pytest.raises(errors.ArgumentError, match="row 2 of the 4 rows of 'hidden_grad' is never"):
        ws.run_operator_once(gradient_op(o))
    assert not ws.has_blob("h0_grad") or ws.blob("h0_grad").value is None
