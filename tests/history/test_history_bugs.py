"""Each bug of history.md §4 happens under the buggy version's era the way the
spec predicts, and is gone under the fixing version's era (NumPy reference by
central differences of the cell's recurrence, float64)."""

import numpy as np
import pytest

from caffe2rnn.history import cells
from caffe2rnn.history.bugs import BUGS, timestep0_gradient


def close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=1e-6)


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


@pytest.mark.parametrize("bug_id", sorted(BUGS))
def test_registry_entries_are_complete(bug_id):
    bug = BUGS[bug_id]
    assert bug.commit[:7].isalnum() and len(bug.explanation) > 100
    assert isinstance(bug.cell(), cells.Cell)
