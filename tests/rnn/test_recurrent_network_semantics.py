"""RecurrentNetwork mechanics: views, workspaces, net edits, reruns, errors."""

import numpy as np
import pytest
from rnn_test_builders import net, op, rnn_op, run_backward, run_forward
from test_recurrent_network_cells import HIDDEN_ALIASES, MUL_LINKS, mul_cell_op, two_state_op

from caffe2rnn import errors, workspace
from caffe2rnn.operators.rnn import ScratchWorkspaces
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.recurrent import retrieve_step_blobs
from caffe2rnn.runtime import Workspace
from caffe2rnn.utils import MakeArgument

N, D = 2, 3


def mul_forward_only(**extra):
    step = net(
        "mul_step",
        [op("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"])],
        ["input_t", "hidden_t_prev"],
    )
    return rnn_op(
        ["input", "h0"],
        ["hidden_all", "hidden_last", "step_workspaces"],
        step,
        states=["hidden"],
        initial_ids=[1],
        links=MUL_LINKS,
        aliases=HIDDEN_ALIASES,
        **extra,
    )


def feeds(seq_len, seed=0):
    rng = np.random.RandomState(seed)
    return {"input": rng.standard_normal((seq_len, N, D)), "h0": rng.standard_normal((N, D))}


def two_state_feeds(seq_len=3):
    rng = np.random.RandomState(7)
    return {
        "input": rng.uniform(0.5, 1.2, (seq_len, N, D)),
        "h0": rng.uniform(0.5, 1.2, (N, D)),
        "c0": rng.uniform(0.5, 1.2, (D,)),
        "w": rng.uniform(0.5, 1.2, (1, N, D)),
    }


def two_state_grads(seq_len=3):
    rng = np.random.RandomState(8)
    return {j: rng.standard_normal(((seq_len if j % 2 == 0 else 1), N, D)) for j in range(4)}


def test_links_and_aliases_are_views_of_the_state_tensor():
    ws = run_forward(mul_cell_op(), feeds(4))
    states = ws.blob("hidden").value
    assert states.shape == (5, N, D)
    for name in ("hidden_all", "hidden_last"):
        assert np.shares_memory(ws.blob(name).value, states)
    scratch = ws.blob("step_workspaces").value
    for t, step in enumerate(scratch.step_workspaces):
        for internal, row in (("hidden_t_prev", t), ("hidden_t", t + 1)):
            view = step.get_blob(internal).value
            assert view.shape == (1, N, D) and np.shares_memory(view, states)
            assert (
                view.__array_interface__["data"][0] == states[row:].__array_interface__["data"][0]
            )
        assert step.get_blob("timestep").value.dtype == np.int32
        assert step.get_blob("timestep").value.tolist() == [t]


def test_zero_length_alias_is_an_empty_tensor():
    o = mul_forward_only()
    for a in o.arg:
        if a.name == "alias_offset":
            a.ints[:] = [1, 4]  # 4 = T + 1 rows: nothing left
    ws = run_forward(o, feeds(3))
    assert ws.fetch("hidden_last").shape == (0, N, D)


def test_step_net_gets_link_ops_first_and_control_input():
    ws = run_forward(mul_cell_op(), feeds(2))
    step = ws.blob("step_workspaces").value.step_workspaces[0]
    proto = step.get_net("mul_step").proto
    assert [o.type for o in proto.op] == ["rnn_internal_apply_link"] * 3 + ["Mul"]
    assert [(o.output[0], o.input[1]) for o in proto.op[:3]] == [(l[0], l[1]) for l in MUL_LINKS]
    assert list(proto.op[3].control_input) == ["hidden_t"]
    assert "timestep" in proto.external_input


def test_backward_step_net_layout_and_tmpstep_rename():
    o = two_state_op()
    ws = run_forward(o, two_state_feeds())
    run_backward(o, ws, two_state_grads())
    step0 = ws.blob("step_workspaces").value.step_workspaces[0]
    proto = step0.get_net("two_step_backward").proto
    types = [x.type for x in proto.op]
    assert types[:10] == ["rnn_internal_apply_link"] * 10
    assert types[10:12] == ["rnn_internal_accumulate_gradient_input"] * 2
    assert types[-1] == "Sum" and list(proto.op[-1].input) == ["w_grad", "w_cell_grad_tmpstep"]
    assert any("w_cell_grad_tmpstep" in x.output for x in proto.op[:-1])
    assert not any("w_cell_grad" in list(x.output) for x in proto.op)
    accumulate = proto.op[10]
    assert list(accumulate.input) == ["timestep", "hidden_all_grad", "hidden_grad"]
    assert {a.name for a in accumulate.arg} >= {
        "offset",
        "rnn_dependency.hidden_t_prev_grad",
        "rnn_dependency.hidden_t_grad",
    }


def test_backward_intermediates_live_in_the_shared_workspace():
    o = two_state_op()
    ws = run_forward(o, two_state_feeds())
    run_backward(o, ws, two_state_grads())
    scratch = ws.blob("step_workspaces").value
    shared = scratch.shared_blobs_ws
    assert shared.parent is ws
    assert "u_t_grad" in shared.local_blobs() and "cell_t_grad_total" in shared.local_blobs()
    for step in scratch.step_workspaces:
        assert step.parent is shared
        assert "u_t" in step.local_blobs() and "u_t_grad" not in step.local_blobs()


def test_recompute_blobs_are_created_in_the_shared_workspace():
    o = mul_forward_only(recompute_blobs_on_backward=["hidden_t"])
    ws = run_forward(o, feeds(3))
    scratch = ws.blob("step_workspaces").value
    assert "hidden_t" in scratch.shared_blobs_ws.local_blobs()
    assert all("hidden_t" not in s.local_blobs() for s in scratch.step_workspaces)


@pytest.mark.parametrize("num_workspaces", [None, 1, 3])
def test_forward_only_cycles_over_num_workspaces(num_workspaces):
    extra = {} if num_workspaces is None else {"num_workspaces": num_workspaces}
    limit = num_workspaces or 2
    o = mul_forward_only(**extra)
    ws = Workspace()
    for seq_len in (1, 5, 40):
        f = feeds(seq_len)
        run_forward(o, f, ws)
        scratch = ws.blob("step_workspaces").value
        assert len(scratch.step_workspaces) == limit
        expected = f["h0"] * np.cumprod(f["input"], axis=0)
        np.testing.assert_allclose(ws.fetch("hidden_all"), expected, rtol=1e-12)


def test_with_backward_pass_one_step_workspace_per_timestep_never_shrinking():
    ws = Workspace()
    for seq_len, expected in ((4, 4), (2, 4), (6, 6)):
        run_forward(mul_cell_op(), feeds(seq_len), ws)
        assert len(ws.blob("step_workspaces").value.step_workspaces) == expected


def test_rerunning_gives_identical_numbers_even_after_another_length():
    o = two_state_op()
    fresh = run_forward(o, two_state_feeds(4))
    expected_out = fresh.fetch("hidden_all")
    expected = run_backward(o, fresh, two_state_grads(4))
    ws = Workspace()
    for seq_len in (4, 2, 4, 4):
        run_forward(o, two_state_feeds(seq_len), ws)
        grads = run_backward(o, ws, two_state_grads(seq_len))
    np.testing.assert_array_equal(ws.fetch("hidden_all"), expected_out)
    for name, value in expected.items():
        np.testing.assert_array_equal(grads[name], value, err_msg=name)


def test_states_gradient_last_row_is_zeroed_and_initial_gradient_is_shared():
    o = mul_cell_op()
    ws = run_forward(o, feeds(3))
    ws.feed("hidden_grad", np.full((4, N, D), np.nan))  # garbage from "a previous run"
    grads = run_backward(o, ws, {0: np.ones((3, N, D)), 1: np.zeros((1, N, D))})
    assert np.all(np.isfinite(grads["h0"])) and np.all(np.isfinite(grads["input"]))
    h0_grad = ws.blob("h0_grad").value
    assert np.shares_memory(h0_grad, ws.blob("hidden_grad").value)


def test_one_dimensional_initial_state_gradient_sums_the_batch():
    o = mul_cell_op()
    f = feeds(3)
    f["h0"] = f["h0"][0]
    ws = run_forward(o, f)
    run_backward(o, ws, {0: np.ones((3, N, D)), 1: np.ones((1, N, D))})
    states_grad = ws.blob("hidden_grad").value
    np.testing.assert_array_equal(ws.fetch("h0_grad"), states_grad[0, 0] + states_grad[0, 1])


def test_memonger_rename_of_the_states_gradient():
    plain, renamed = mul_cell_op(), mul_cell_op()
    renamed.arg.add().CopyFrom(MakeArgument("hidden_grad.rename", "hidden_grad_shared"))
    g = {0: np.ones((3, N, D)), 1: np.ones((1, N, D))}
    expected = run_backward(plain, run_forward(plain, feeds(3)), g)
    ws = run_forward(renamed, feeds(3))
    got = run_backward(renamed, ws, g)
    assert ws.has_blob("hidden_grad_shared") and not ws.has_blob("hidden_grad")
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])


def test_enable_rnn_executor_is_accepted_and_runs_in_order():
    f = feeds(7)
    base = run_forward(mul_forward_only(), f).fetch("hidden_all")
    with_executor = run_forward(mul_forward_only(enable_rnn_executor=1), f)
    np.testing.assert_array_equal(with_executor.fetch("hidden_all"), base)
    # Caffe2 042e8ede4: forward-only with the executor keeps 4 step
    # workspaces (up to 4 timesteps in flight), without it 2.
    assert len(with_executor.blob("step_workspaces").value.step_workspaces) == 4
    explicit = run_forward(mul_forward_only(enable_rnn_executor=1, num_workspaces=3), f)
    assert len(explicit.blob("step_workspaces").value.step_workspaces) == 3


def test_blob_fetcher_and_retrieve_step_blobs():
    o = mul_cell_op()
    for name, value in feeds(2).items():
        workspace.FeedBlob(name, value)
    netdef = caffe2_pb2.NetDef()
    netdef.op.extend([o])
    workspace.RunNetOnce(netdef)
    names = retrieve_step_blobs(netdef, "probe")
    assert "probe_hidden_t1" in names and "probe_timestep0" in names
    np.testing.assert_array_equal(
        workspace.FetchBlob("probe_hidden_t1"), workspace.FetchBlob("hidden_all")[1:2]
    )
    assert ScratchWorkspaces.caffe2_type_name in workspace.FetchBlob("step_workspaces").decode()


# --- errors ------------------------------------------------------------------
def test_bad_step_net_text_names_the_argument():
    o = mul_forward_only()
    for a in o.arg:
        if a.name == "step_net":
            a.s = b"op { type: 'Mul' "
    with pytest.raises(errors.ProtoParseError, match="step_net"):
        run_forward(o, feeds(2))


def test_initial_state_with_the_wrong_batch_names_the_blob():
    f = feeds(2)
    f["h0"] = np.zeros((N + 1, D))
    with pytest.raises(errors.ShapeError, match="'h0'.*batch dimension of 2"):
        run_forward(mul_forward_only(), f)


def test_alias_offset_before_the_first_row_is_invalid():
    o = mul_forward_only()
    for a in o.arg:
        if a.name == "alias_offset":
            a.ints[:] = [1, -5]  # T + 1 = 3 rows
    with pytest.raises(errors.ArgumentError, match="'hidden_last'.*Invalid offset -5"):
        run_forward(o, feeds(2))


def test_link_window_past_the_end_names_the_link():
    o = mul_forward_only()
    for a in o.arg:
        if a.name == "link_window":
            a.ints[:] = [1, 2, 1]  # hidden_t would span rows t + 1, t + 2
    with pytest.raises(errors.ShapeError, match="timestep 1.*link 'hidden_t' -> 'hidden'"):
        run_forward(o, feeds(2))


def test_mismatched_state_arguments():
    o = mul_forward_only()
    for a in o.arg:
        if a.name == "initial_recurrent_state_ids":
            a.ints.append(0)
    with pytest.raises(
        errors.ArgumentError,
        match="recurrent_states, initial_recurrent_state_ids must have equal lengths",
    ):
        run_forward(o, feeds(2))


def test_gradient_after_a_forward_only_run_is_a_clear_error():
    o = mul_cell_op()
    ws = run_forward(mul_forward_only(), feeds(3))
    with pytest.raises(errors.EnforceNotMet, match="holds 2 step workspaces for 3"):
        run_backward(o, ws, {0: np.ones((3, N, D)), 1: np.ones((1, N, D))})


def test_backward_step_net_must_not_share_the_step_net_name():
    o = mul_cell_op()
    for a in o.arg:
        if a.name == "backward_step_net":
            a.s = a.s.replace(b"mul_step_backward", b"mul_step")
    ws = run_forward(o, feeds(2))
    with pytest.raises(errors.ArgumentError, match="different names"):
        run_backward(o, ws, {0: np.ones((2, N, D)), 1: np.ones((1, N, D))})
