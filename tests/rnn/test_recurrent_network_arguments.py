"""RecurrentNetwork(Gradient) arguments: what Caffe2 accepted runs with its result;
what it refused (or where it would have read out of range or memory it never
wrote) is a clear error, before anything runs.

One minimal case per kind of argument, plus the reader itself and
``prepared_backward_step_net``. Every refusal, with its reason, is listed in
``test_refusal_audit.py``.
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
#
# Caffe2 refused an index only where it read out of range; the rest it
# accepted, and so does caffe2rnn, with Caffe2's result
# (tests/rnn/test_refusal_audit.py lists every refusal and its reason).


def mul_forward(f):
    """h_t = x_t * h_{t-1}: the (T + 1)-row states tensor."""
    rows = [f["h0"]]
    for t in range(T):
        rows.append(f["input"][t] * rows[-1])
    return np.stack(rows)


def test_forward_op_never_reads_outputs_with_grads_or_param():
    """Out-of-range or overlapping indices run forward (Caffe2's forward op
    never read them); making the gradient refuses them: Caffe2's maker read
    GO(j) and GI(i) out of range."""
    f = feeds()
    for name, values in (("outputs_with_grads", [7]), ("param", [5]), ("param", [1])):
        o = set_arg(mul_cell_op(), name, values)
        ws = run_forward(o, f)
        np.testing.assert_allclose(ws.fetch("hidden_all"), mul_forward(f)[1:], rtol=1e-12)
    with pytest.raises(errors.GradientError, match="'outputs_with_grads' holds 7; the op has 3"):
        gradient_op(set_arg(mul_cell_op(), "outputs_with_grads", [7]))
    with pytest.raises(errors.GradientError, match="'param' holds 5; the op has 2 inputs"):
        gradient_op(set_arg(mul_cell_op(), "param", [5]))


def gradient_with(o, f, grads):
    ws = run_forward(o, f)
    return run_backward(o, ws, grads)


def test_outputs_with_grads_naming_no_alias_of_a_state_take_no_gradient():
    """Caffe2's gradient op matched each index with the aliases of the states;
    an alias viewing the input, not a state, takes no gradient. An index naming
    no forward output at all (7, -1) is refused, naming the argument: the maker
    that writes this op read GO(j) with ``g_output_.at(j)`` (std::out_of_range),
    and Caffe2's op would have dropped that gradient silently."""
    f = feeds()
    go_all = np.ones((T, N, D))
    expected = gradient_with(set_arg(mul_cell_op(), "outputs_with_grads", [0]), f, {0: go_all})
    o = mul_cell_op()
    ws = run_forward(o, f)
    for bad in (7, -1):
        g = set_arg(gradient_op(o), "outputs_with_grads", [0, bad])
        ws.feed("hidden_all_grad", go_all)
        ws.feed("hidden_last_grad", np.full((1, N, D), 100.0))
        with pytest.raises(errors.ArgumentError, match="'outputs_with_grads' holds %d" % bad):
            ws.run_operator_once(g)

    o = set_arg(mul_cell_op(), "alias_src", ["hidden", "input"])
    ws = run_forward(o, f)
    np.testing.assert_allclose(ws.fetch("hidden_last"), f["input"][-1:], rtol=0)
    got = run_backward(o, ws, {0: go_all, 1: np.full((1, N, D), 100.0)})
    np.testing.assert_allclose(got["h0"], expected["h0"], rtol=1e-12)


def test_initial_state_id_out_of_range():
    """Caffe2 read ``input(-1)`` of the protobuf: out of range."""
    o = set_arg(mul_cell_op(), "initial_recurrent_state_ids", [-1])
    forward_error(o, errors.ArgumentError, r"'initial_recurrent_state_ids' holds -1; .*0\.\.1")


def test_initial_state_id_minus_one_on_the_gradient_op():
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    g = set_arg(gradient_op(o), "initial_recurrent_state_ids", [-1])
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    with pytest.raises(errors.ArgumentError, match="holds -1"):
        ws.run_operator_once(g)


def test_the_sequence_itself_may_be_the_initial_state():
    """Input 0 as the initial state (id 0): a (T, N, D) h0 fills T rows. (The
    gradient op would refuse the alias at offset T: only offsets 1 and -1 take
    a gradient, as in Caffe2's gradient op.)"""
    f = feeds()
    o = set_arg(mul_cell_op(), "initial_recurrent_state_ids", [0])
    set_arg(o, "alias_offset", [T, -1])
    set_arg(o, "link_offset", [T - 1, T, 0])
    ws = run_forward(o, f)
    rows = list(f["input"])
    for t in range(T):
        rows.append(f["input"][t] * rows[t + T - 1])
    np.testing.assert_allclose(ws.fetch("hidden_all"), np.stack(rows[T:]), rtol=1e-12)


def test_link_window_zero_leaves_the_states_unwritten():
    """A window of 0 is accepted (Caffe2 enforced >= 0), but the cell's
    output then goes to a blob of its own: the rows it should fill are never
    written, and reading them is refused."""
    o = set_arg(mul_cell_op(), "link_window", [1, 0, 1])
    forward_error(o, errors.ArgumentError, "row 1 of the 4 rows of 'hidden' is never written")


def test_negative_link_offset():
    o = set_arg(mul_cell_op(), "link_offset", [0, -1, 0])
    forward_error(o, errors.ArgumentError, "'link_offset' is -1 for link 'hidden_t'")
    o = set_arg(mul_cell_op(), "backward_link_offset", [0, 1, -2])
    forward_error(o, errors.ArgumentError, "'backward_link_offset' is -2")
    o = set_arg(mul_cell_op(), "link_window", [1, -1, 1])
    forward_error(o, errors.ArgumentError, "'link_window' is -1 for link 'hidden_t'")


def test_num_workspaces_below_one():
    """``num_workspaces`` is not a Caffe2 argument (PyTorch's copy added it)."""
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("num_workspaces", 0))
    forward_error(o, errors.ArgumentError, "'num_workspaces' is 0")


@pytest.mark.parametrize("threads", [-1, 0, 65, 1000])
def test_any_executor_thread_count_runs(threads):
    """Caffe2 kept its default for <= 0 and started as many threads as asked;
    the results do not depend on the count."""
    f = feeds()
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("rnn_executor.num_threads", threads))
    ws = run_forward(o, f)
    np.testing.assert_allclose(ws.fetch("hidden_all"), mul_forward(f)[1:], rtol=1e-12)
    assert read_recurrent_arguments(o).executor_threads == min(max(threads, 0), 64)


# --- names ------------------------------------------------------------------------
#
# A blob the op creates (the timestep, a link view, an alias) named like
# another blob *is* that blob, as with Caffe2's Workspace::CreateBlob, which
# returned an existing blob of the name (its own or a parent workspace's).


def test_a_state_may_be_an_output_of_the_op():
    """Caffe2's hypothesis_test.py (test_elman_recurrent_network) lists the
    state ``hidden`` among the op's outputs: the output is the whole (T + 1)-row
    states tensor."""
    f = feeds()
    o = mul_cell_op()
    o.output[:] = ["hidden_all", "hidden", "hidden_last", "step_workspaces"]
    ws = run_forward(o, f)
    np.testing.assert_allclose(ws.fetch("hidden"), mul_forward(f), rtol=1e-12)
    np.testing.assert_allclose(ws.fetch("hidden_last"), mul_forward(f)[-1:], rtol=1e-12)


def test_timestep_named_like_an_input_overwrites_it():
    """The timestep blob was created in the step workspace, which returned the
    op's input ``h0``: after the run ``h0`` holds the last timestep (int32)."""
    f = feeds()
    ws = run_forward(set_arg(mul_cell_op(), "timestep", "h0"), f)
    np.testing.assert_allclose(ws.fetch("hidden_all"), mul_forward(f)[1:], rtol=1e-12)
    h0 = ws.fetch("h0")
    assert h0.dtype == np.int32 and h0.tolist() == [T - 1]


def test_alias_named_like_an_input_overwrites_it():
    f = feeds()
    ws = run_forward(set_arg(mul_cell_op(), "alias_dst", ["input", "hidden_last"]), f)
    np.testing.assert_allclose(ws.fetch("input"), mul_forward(f)[1:], rtol=1e-12)


def test_alias_must_name_a_blob():
    """Caffe2's applyOffsetAlias wrote through ``ws->GetBlob(dst)``: a null
    pointer when no blob has the name."""
    o = set_arg(mul_cell_op(), "alias_dst", ["hidden_all", "elsewhere"])
    forward_error(o, errors.ArgumentError, "'elsewhere', which is neither an output")


def test_state_named_like_the_sequence_input():
    """The state tensor *is* the input blob, resized to T + 1 rows: step t
    reads x_t = h_t from it, so h_{t+1} = h_t ** 2."""
    f = feeds()
    o = set_arg(mul_cell_op(), "recurrent_states", ["input"])
    set_arg(o, "link_external", ["input", "input", "input"])
    set_arg(o, "alias_src", ["input", "input"])
    ws = run_forward(o, f)
    rows = [f["h0"]]
    for _ in range(T):
        rows.append(rows[-1] * rows[-1])
    np.testing.assert_allclose(ws.fetch("input"), np.stack(rows), rtol=1e-12)


def test_recompute_blob_named_like_an_input_changes_nothing():
    f = feeds()
    o = mul_cell_op()
    o.arg.add().CopyFrom(MakeArgument("recompute_blobs_on_backward", ["h0"]))
    ws = run_forward(o, f)
    np.testing.assert_allclose(ws.fetch("hidden_all"), mul_forward(f)[1:], rtol=1e-12)
    np.testing.assert_array_equal(ws.fetch("h0"), f["h0"])


def test_missing_step_net_is_an_empty_one():
    """Caffe2 parsed the absent argument's default "" (an empty net): no op
    writes the states, and reading them is refused."""
    o = mul_cell_op()
    del o.arg[[a.name for a in o.arg].index("step_net")]
    assert len(read_recurrent_arguments(o).step_net.op) == 0
    forward_error(o, errors.ArgumentError, "row 1 of the 4 rows of 'hidden' is never written")


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
    """Caffe2 wrote output 1 + i per parameter and 1 + P + i per state: more
    outputs are left alone, fewer are read out of range."""
    o = mul_cell_op()
    ws = run_forward(o, feeds())
    ws.feed("hidden_all_grad", np.ones((T, N, D)))
    ws.feed("hidden_last_grad", np.ones((1, N, D)))
    g = gradient_op(o)
    g.output.append("extra_grad")
    ws.run_operator_once(g)
    assert ws.fetch("h0_grad").shape == (N, D)
    g = gradient_op(o)
    del g.output[-1]
    with pytest.raises(errors.ArgumentError, match="ask for 2 outputs .* the op has 1"):
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


def test_link_writing_into_an_input_overwrites_it():
    """The cell's ``hidden_t`` linked into ``input`` row t + 1 writes there (the
    next step then reads it as its x); the state rows it no longer writes are
    never written, and reading them is refused."""
    o = set_arg(mul_cell_op(), "link_external", ["hidden", "input", "input"])
    forward_error(o, errors.ArgumentError, "row 1 of the 4 rows of 'hidden' is never written")


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
