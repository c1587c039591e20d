"""Every kernel on both paths: bit-identical results, views, clear errors."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caffe2rnn import errors, kernels
from caffe2rnn.kernels import checked

PY = kernels.implementation("python")
CY = pytest.importorskip("caffe2rnn._ext.inplace_add") and kernels.implementation("cython")
DTYPES = st.sampled_from([np.float32, np.float64])
FAST = settings(max_examples=25, deadline=None)


def arrays(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@FAST
@given(
    rows=st.integers(1, 9),
    n=st.integers(1, 4),
    d=st.integers(1, 5),
    data=st.data(),
    seed=st.integers(0, 99),
)
def test_views_are_identical_and_share_memory(rows, n, d, data, seed):
    src = arrays(np.random.RandomState(seed), (rows, n, d), np.float32)
    offset = data.draw(st.integers(-rows, rows))
    start = data.draw(st.integers(0, rows))
    window = data.draw(st.integers(0, rows - start))
    for path in (PY, CY):
        alias = path.offset_alias(src, checked.offset_alias_start(src, offset, "a"))
        link = path.link_view(src, start, window)
        np.testing.assert_array_equal(alias, src[offset:] if offset else src)
        np.testing.assert_array_equal(link, src[start : start + window])
        for view in (alias, link):
            assert view.size == 0 or np.shares_memory(view, src)
    link = CY.link_view(src, start, window)
    if window:
        link[...] = 7  # writes through the view land in the source
        assert np.all(src[start : start + window] == 7)


@FAST
@given(dtype=DTYPES, n=st.integers(1, 16), d=st.integers(1, 40), seed=st.integers(0, 99))
def test_repeat_copy(dtype, n, d, seed):
    src = arrays(np.random.RandomState(seed), (d,), dtype)
    out = [np.full((n, d), np.nan, dtype) for _ in range(2)]
    PY.repeat_copy(src, out[0])
    CY.repeat_copy(src, out[1])
    np.testing.assert_array_equal(out[0], np.tile(src, (n, 1)))
    np.testing.assert_array_equal(out[1], out[0])


@FAST
@given(
    dtype=DTYPES,
    rows=st.integers(1, 8),
    n=st.integers(1, 6),
    d=st.integers(1, 20),
    data=st.data(),
    seed=st.integers(0, 99),
)
def test_accumulate_input_gradient(dtype, rows, n, d, data, seed):
    rng = np.random.RandomState(seed)
    g, og = arrays(rng, (rows + 1, n, d), dtype), arrays(rng, (rows, n, d), dtype)
    t = data.draw(st.integers(0, rows - 1))
    offset = data.draw(st.integers(0, rows - t))
    out = [g.copy(), g.copy()]
    PY.accumulate_input_gradient(out[0], og, t, offset)
    CY.accumulate_input_gradient(out[1], og, t, offset)
    expected = g.copy()
    expected[t + offset] += og[t]
    np.testing.assert_array_equal(out[0], expected)
    np.testing.assert_array_equal(out[1], out[0])


@FAST
@given(
    dtype=DTYPES,
    batch=st.integers(0, 40),
    d=st.integers(1, 12),
    extra=st.integers(0, 3),
    seed=st.integers(0, 99),
)
def test_add_striped_batch_same_order(dtype, batch, d, extra, seed):
    rng = np.random.RandomState(seed)
    first = arrays(rng, (max(batch, 1), d + extra), dtype)
    y0 = arrays(rng, (d,), dtype)
    out = [y0.copy(), y0.copy()]
    PY.add_striped_batch(first, out[0], d + extra, batch)
    CY.add_striped_batch(first, out[1], d + extra, batch)
    expected = y0.copy()
    for j in range(batch):
        expected += first[j, :d]
    np.testing.assert_array_equal(out[0], expected)
    np.testing.assert_array_equal(out[1], out[0])


@FAST
@given(
    dtype=DTYPES, shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), seed=st.integers(0, 99)
)
def test_inplace_add(dtype, shape, seed):
    rng = np.random.RandomState(seed)
    dst, src = arrays(rng, shape, dtype), arrays(rng, shape, dtype)
    out = [dst.copy(), dst.copy()]
    PY.inplace_add(out[0], src)
    CY.inplace_add(out[1], src)
    np.testing.assert_array_equal(out[0], dst + src)
    np.testing.assert_array_equal(out[1], out[0])


# --- errors, on both paths ------------------------------------------------------
def test_checked_entry_points_reject_bad_offsets_windows_and_shapes(kernel_path):
    a = np.zeros((3, 2, 2), np.float32)
    with pytest.raises(errors.ArgumentError, match="Invalid offset -4"):
        checked.offset_alias(a, -4, "alias 'h_last' of 'h'")
    with pytest.raises(errors.ArgumentError, match="Invalid number of timesteps"):
        checked.offset_alias(a, 4, "alias")
    assert checked.offset_alias(a, 3).shape == (0, 2, 2)
    with pytest.raises(errors.ShapeError, match="link 'x_t' -> 'x'.*rows \\[2, 4\\)"):
        checked.link_view(a, 1, 1, 2, "link 'x_t' -> 'x'")
    with pytest.raises(errors.ShapeError, match="destination address over bounds"):
        checked.accumulate_input_gradient(a, a, 2, 1)
    with pytest.raises(errors.ShapeError, match="source address out of bounds"):
        checked.accumulate_input_gradient(np.zeros((4, 2, 2), np.float32), a, 3, 0)
    with pytest.raises(errors.DTypeError, match="float32 or float64"):
        checked.inplace_add(a, a.astype(np.float64))
    with pytest.raises(errors.ShapeError, match="different numbers of elements"):
        checked.inplace_add(a, a[:2])
    with pytest.raises(errors.ShapeError, match="stripes"):
        checked.add_striped_batch(a, np.zeros(2, np.float32), 2, 7)
    with pytest.raises(errors.ShapeError, match="cannot repeat"):
        checked.repeat_copy(np.zeros(3, np.float32), np.zeros((2, 2), np.float32))
    with pytest.raises(errors.EnforceNotMet, match="C-contiguous"):
        checked.inplace_add(np.zeros((2, 2), np.float32).T, np.zeros((2, 2), np.float32))


def test_use_switches_path_and_restores_it():
    before = kernels.active()
    with kernels.use("python"):
        assert kernels.active() == "python"
        assert kernels.current() is PY
    assert kernels.active() == before


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code, kernels_env):
    env = dict(os.environ, CAFFE2RNN_KERNELS=kernels_env, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "value,expected", [("python", "python"), ("cython", "cython"), ("", "cython")]
)
def test_environment_variable_selects_the_path(value, expected):
    out = run_python("from caffe2rnn import kernels; print(kernels.active())", value)
    assert out.stdout.strip() == expected and out.stderr == ""


def test_auto_falls_back_to_python_with_a_one_line_notice():
    code = (
        "import sys; sys.modules['caffe2rnn._ext.inplace_add'] = None\n"
        "from caffe2rnn import kernels; print(kernels.active()); kernels.active()"
    )
    out = run_python(code, "auto")
    assert out.stdout.strip() == "python"
    assert len(out.stderr.splitlines()) == 1 and "pure-Python kernels" in out.stderr
    forced = run_python(code.replace("print(kernels.active()); ", ""), "cython")
    assert forced.returncode != 0 and "build_ext --inplace" in forced.stderr


def test_bad_environment_value_is_a_clear_error():
    out = run_python("from caffe2rnn import kernels; kernels.active()", "fortran")
    assert out.returncode != 0 and "expected python, cython or auto" in out.stderr
