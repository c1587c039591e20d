"""Plots read the numbers they are given: bug gradient errors, attention, benchmarks."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from caffe2rnn.errors import DrawingError  # noqa: E402
from caffe2rnn.history.bugs import BUGS  # noqa: E402
from caffe2rnn.viz import plots  # noqa: E402


@pytest.fixture(scope="module")
def b3():
    return BUGS["B3"].run()


def test_b3_error_is_right_for_the_last_step_only(b3):
    errors = plots.gradient_errors(b3)["input"]
    buggy, fixed = errors["buggy"][0], errors["fixed"][0]
    T = len(buggy)
    assert np.all(buggy[: T - 1] > 1e-3) and buggy[T - 1] < 1e-6
    assert np.all(fixed < 1e-6)
    # the numbers are max |grad - ref| per timestep, computed here again
    ref = np.asarray(b3.reference["input"], np.float64)
    own = np.abs(np.asarray(b3.buggy[0]["input"], np.float64) - ref).reshape(T, -1).max(axis=1)
    np.testing.assert_array_equal(buggy, own)


def test_b5_shows_only_on_the_second_run():
    errors = plots.gradient_errors(BUGS["B5"].run())["w"]
    run1, run2 = errors["buggy"]
    assert run1.max() < 1e-6 and run2.max() > 1e-3
    assert max(r.max() for r in errors["fixed"]) < 1e-6


def test_plot_bug_draws_one_line_per_version(b3):
    ax = plots.plot_bug("B3", b3)
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["v1 (buggy)", "april (fixed)"]
    assert ax.get_yscale() == "log"
    # the words and the plot agree: the unwritten rows are uninitialised memory,
    # and the plot says what they held in this run
    assert "uninitialised" in ax.get_title(loc="left").replace("\n", " ")
    assert any(t.get_text().startswith("this run:") for t in ax.texts)
    with pytest.raises(DrawingError, match="unknown bug 'B42'"):
        plots.plot_bug("B42")


def _legend_is_off_the_data(ax):
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    return legend.y1 <= ax.get_window_extent(renderer).y0


@pytest.mark.parametrize("bug_id", ["B4", "B5"])
def test_a_second_run_bug_is_bars_run_1_and_run_2_by_buggy_and_fixed(bug_id):
    result = BUGS[bug_id].run()
    ax = plots.plot_bug(bug_id, result)
    assert len(ax.patches) == 4  # run 1, run 2 x buggy, fixed
    assert [t.get_text() for t in ax.get_xticklabels()] == ["run 1", "run 2"]
    verdicts = [t.get_text().split("\n")[0] for t in ax.texts]
    # buggy bars first (run 1, run 2), then fixed
    expected = {
        "B4": ["wrong", "wrong", "right", "wrong"],
        "B5": ["right", "wrong", "right", "right"],
    }
    assert verdicts == expected[bug_id]
    # colour = the verdict, hatch = the version: B4's fixed version, wrong on run 2, is red
    from matplotlib.colors import to_hex

    for bar, verdict, side in zip(ax.patches, verdicts, ["buggy"] * 2 + ["fixed"] * 2):
        colour = plots.VERDICT_COLOURS[verdict].lower()
        assert to_hex(bar.get_edgecolor()) == colour
        assert (bar.get_hatch() or None) == plots.VERSION_HATCH[side]
        if side == "fixed":
            assert to_hex(bar.get_facecolor()) == colour
    # two legend groups: the version (fill), the result (colour)
    version, verdict = [a for a in ax.get_children() if type(a).__name__ == "Legend"]
    assert version.get_title().get_text() == "version (fill)"
    assert [t.get_text() for t in version.get_texts()] == [
        "hatched: %s (buggy)" % BUGS[bug_id].buggy_version,
        "solid: %s (fixed)" % BUGS[bug_id].fixed_version,
    ]
    assert verdict.get_title().get_text() == "result (colour)"
    assert [t.get_text() for t in verdict.get_texts()] == ["green: right", "red: wrong"]
    assert "not drawn" in ax.get_xlabel()  # the input's gradient: right in every run
    assert _legend_is_off_the_data(ax)
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    below = ax.get_window_extent(renderer).y0
    assert all(legend.get_window_extent(renderer).y1 <= below for legend in (version, verdict))


def test_b5s_wrong_bar_says_it_is_twice_timestep_0s_gradient():
    """The log axis hides a factor of 2: the wrong bar says "= 2 g₀", and it is (the
    second run's w gradient against B5's prediction, computed here); the fixed version's
    wrong run in B4 is the same bug, and says the same."""
    from caffe2rnn.history.bugs import timestep0_gradient

    for bug_id, side in (("B5", "buggy"), ("B4", "fixed")):
        bug = BUGS[bug_id]
        result = bug.run()
        g0 = timestep0_gradient(bug.cell().values(np.random.default_rng(0)))
        np.testing.assert_allclose(getattr(result, side)[1]["w"], 2 * g0, rtol=1e-6)
        ax = plots.plot_bug(bug_id, result)
        labels = [t.get_text() for t in ax.texts]
        assert labels[1 if side == "buggy" else 3] == "wrong\n= 2 g₀"
        assert "g₀: w's gradient from timestep 0 alone" in ax.get_xlabel()
    assert plots._what_it_is(bug, np.zeros(3), np.ones(3), None) == "= 0"
    assert plots._what_it_is(bug, np.full(3, 1e300), np.ones(3), None).startswith("garbage")
    assert plots._what_it_is(bug, np.full(3, 2.0), np.ones(3), None).startswith("off by 1")


def test_per_timestep_legends_sit_under_the_axes(b3):
    assert _legend_is_off_the_data(plots.plot_bug("B3", b3))


def test_a_garbage_sized_error_is_drawn_at_the_ceiling(b3):
    """A buggy run that read uninitialised memory may hold 1e300 or inf: the
    log axis must still draw (matplotlib's ticks overflowed), at the ceiling."""
    import copy

    result = copy.deepcopy(b3)
    garbage = np.full_like(np.asarray(b3.reference["input"], np.float64), 1e300)
    garbage[0] = np.inf
    result.buggy[0]["input"] = garbage
    ax = plots.plot_bug("B3", result)
    ax.figure.canvas.draw()  # where the overflow happened
    buggy = next(line for line in ax.get_lines() if "buggy" in line.get_label())
    assert np.all(buggy.get_ydata() == plots.INF_CEILING)
    assert any("garbage" in t.get_text() for t in ax.texts)
    assert any(t.get_text().startswith("this run: garbage") for t in ax.texts)


def test_attention_heatmap_shows_each_weight():
    weights = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    ax = plots.plot_attention(weights[:, None, :])  # (T, N, S): batch item 0
    np.testing.assert_array_equal(ax.get_images()[0].get_array(), weights)
    assert sorted(t.get_text() for t in ax.texts) == sorted("%.2f" % w for w in weights.ravel())
    with pytest.raises(DrawingError, match=r"\(T, S\) or \(T, N, S\)"):
        plots.plot_attention(np.ones(3))


def test_benchmark_bars_in_first_seen_order():
    rows = [
        {"config": "T=8", "impl": "python", "time": 2.0},
        {"config": "T=8", "impl": "cython", "time": 0.5},
        {"config": "T=64", "impl": "python", "time": 16.0},
        {"config": "T=64", "impl": "cython", "time": 3.0},
    ]
    ax = plots.plot_benchmark(rows, title="LSTM forward")
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == [2.0, 16.0, 0.5, 3.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["T=8", "T=64"]
