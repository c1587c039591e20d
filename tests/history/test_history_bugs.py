"""Each bug B1..B10 happens under the buggy version's era the way the record
predicts, and is gone under the fixing version's era (NumPy reference by
central differences of the cell's recurrence, float64)."""

import numpy as np
import pytest

from caffe2rnn.errors import EnforceNotMet
from caffe2rnn.history import cells
from caffe2rnn.history.bug_demos import b5_batch_sizes
from caffe2rnn.history.bugs import BUGS, timestep0_gradient


def close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_b1_scratch_era_leaves_initial_state_gradients_as_placeholders():
    outcome = BUGS["B1"].run()
    reference = outcome["reference"]
    for label in ("scratch", "s2", "v1"):  # the input gradient was always right
        assert close(outcome[label][1], reference["input"]), label
    assert outcome["scratch"][0].shape == (1,)  # 3b190c4df: one element
    assert outcome["s2"][0].shape == (cells.T, cells.N, cells.D)  # like the sequence
    assert close(outcome["v1"][0], reference["h0"])  # 66ad84303


def test_b2_links_applied_once_reuse_the_first_runs_views():
    outcome = BUGS["B2"].run()
    got, ref = outcome[("stale", "smaller")]
    assert got.shape == ref.shape and not close(got, ref)
    for key in [("stale", "longer"), ("E2", "smaller"), ("E2", "longer")]:
        got, ref = outcome[key]
        assert close(got, ref), key


def test_b3_recurrent_gradient_lost_before_the_sum_first_fix():
    result = BUGS["B3"].run()
    buggy, ref = result.buggy[0]["input"], result.reference["input"]
    # The last step's gradient needs no recurrent part: right.
    assert close(buggy[-1], ref[-1])
    # Earlier steps lost it (and read uninitialised rows): wrong.
    assert not close(buggy[:-1], ref[:-1])
    assert close(result.fixed[0]["input"], ref)


def test_b4_reference_gradient_is_accumulated_garbage_before_the_alias():
    result = BUGS["B4"].run()
    first, second = result.buggy[0]["w"], result.buggy[1]["w"]
    assert not close(first, result.reference["w"])
    # C++ 73f75a980: each of the T steps adds the unwritten w_grad into _acc,
    # and the swap returns the sum: run 2 = T x run 1.
    with np.errstate(all="ignore"):
        assert np.allclose(second, cells.T * first, equal_nan=True)
    # Fixed by the Alias (april): right on the first run (B5 spoils the second).
    assert close(result.fixed[0]["w"], result.reference["w"])


def test_b5_second_run_doubles_timestep_zero_gradient():
    result = BUGS["B5"].run()
    first, second = result.buggy[0]["w"], result.buggy[1]["w"]
    assert close(first, result.reference["w"])
    assert not close(second, first)
    values = cells.pass_through_reference().values(np.random.default_rng(0))
    assert close(second, 2 * timestep0_gradient(values))
    # v3's param_grads: every run is right.
    for run in result.fixed:
        assert close(run["w"], result.reference["w"])
        assert close(run["input"], result.reference["input"])


def test_b7_linked_gradient_overwritten_by_the_inner_consumer():
    result = BUGS["B7"].run()
    assert np.all(result.buggy[0]["input"] == 0)
    assert not close(result.reference["input"], 0)
    assert close(result.fixed[0]["input"], result.reference["input"])


def test_b9_forward_only_crashes_v3_and_works_in_the_newest_text():
    outcome = BUGS["B9"].run()
    assert isinstance(outcome["v3"], UnboundLocalError)
    assert "backward_mapping" in str(outcome["v3"])
    output, reference = outcome["newest"]
    assert close(output, reference)


def test_b5_shows_with_a_smaller_batch_only_while_memory_is_kept_on_shrink():
    outcome = b5_batch_sizes()
    got, ref = outcome[(True, "smaller")]
    assert not close(got, ref)  # 8e01e4c8b: "not larger" batch -> doubled
    for key in [(True, "larger"), (False, "smaller"), (False, "larger")]:
        got, ref = outcome[key]
        assert close(got, ref), key  # reallocated: right ("OPTION B")


def test_b6_recompute_list_dropped_costs_memory_not_numbers():
    outcome = BUGS["B6"].run()
    asked, dropped = outcome["asked"], outcome["dropped"]
    assert asked["argument"] == ["lstm/gates_t"] and dropped["argument"] == []
    assert asked["backward_ops"] == ["FC", "Sum"]  # gates_t recomputed first
    assert (asked["per_step_copies"], asked["shared_copy"]) == (0, True)
    assert (dropped["per_step_copies"], dropped["shared_copy"]) == (cells.T, False)
    for blob, grad in asked["gradients"].items():
        np.testing.assert_allclose(grad, dropped["gradients"][blob], rtol=1e-12)


def test_b8_unguarded_rewrite_doubles_the_gradient_where_relu_is_active():
    outcome = BUGS["B8"].run()
    guarded, unguarded, active = outcome["guarded"], outcome["unguarded"], outcome["active"]
    assert close(guarded, outcome["reference"])
    assert active[-1].any()
    np.testing.assert_allclose(unguarded[-1][active[-1]], 2 * guarded[-1][active[-1]])
    assert not close(unguarded, outcome["reference"])


def test_b10_evaluation_op_deletes_the_training_ops_step_workspaces():
    outcome = BUGS["B10"].run()
    assert isinstance(outcome["v3"], EnforceNotMet)
    assert "holds 2 step workspaces for %d timesteps" % cells.T in str(outcome["v3"])
    got, ref = outcome["newest"]
    assert close(got, ref)


def test_one_zeroed_states_gradient_row_spoils_the_second_run():
    outcome = BUGS["tail_rows"].run()
    first, second = outcome["caffe2"]
    assert close(first, outcome["reference"])
    assert not close(second, outcome["reference"])
    for run in outcome["option"]:
        assert close(run, outcome["reference"])


@pytest.mark.parametrize("bug_id", sorted(BUGS))
def test_registry_entries_are_complete(bug_id):
    bug = BUGS[bug_id]
    assert len(bug.commit) > 6 and len(bug.explanation) > 100
    assert bug.cell is None or isinstance(bug.cell(), cells.Cell)
    assert bug.cell is not None or bug.runner is not None
