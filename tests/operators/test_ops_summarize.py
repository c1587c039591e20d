"""Summarize: [min, max, mean, std] against NumPy, the ``.summary`` file in the
workspace's root folder, NaN as Caffe2's loops treated it, and bad input."""

import numpy as np
import pytest
from ops_testing import random, run1, run_fails

from caffe2rnn import core
from caffe2rnn.errors import DTypeError, FileAccessError, GradientError, ShapeError
from caffe2rnn.operators.gradient_maker import get_gradient_for_op
from caffe2rnn.runtime import Workspace


def expected(x):
    x = np.asarray(x, np.float64).reshape(-1)
    std = np.sqrt(np.sum((x - x.mean()) ** 2) / (x.size - 1)) if x.size > 1 else 0.0
    return [x.min(), x.max(), x.mean(), std]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 4, 5)])
def test_statistics(shape, dtype):
    x = random(shape, 1, dtype, -3.0, 5.0)
    y = run1("Summarize", {"X": x})
    assert y.shape == (4,) and y.dtype == dtype
    np.testing.assert_allclose(y, expected(x), rtol=1e-5)


def test_nan_after_the_first_element_is_skipped_by_min_and_max():
    y = run1("Summarize", {"X": np.array([2.0, np.nan, -1.0], np.float32)})
    assert y[:2].tolist() == [-1.0, 2.0] and np.isnan(y[2:]).all()
    first = run1("Summarize", {"X": np.array([np.nan, 1.0], np.float32)})
    assert np.isnan(first).all()


def test_to_file_appends_a_line_per_run_under_the_root_folder(tmp_path):
    ws = Workspace(root_folder=str(tmp_path))
    ws.feed("model/h", np.array([1.0, 2.0, 4.0], np.float32))
    net = core.Net("watch")
    net.Summarize(["model/h"], [], to_file=1)
    ws.create_net(net.Proto())
    path = tmp_path / "model#h.summary"
    assert path.read_text() == ""  # opened when the operator was created
    ws.run_net("watch")
    ws.feed("model/h", np.array([0.5], np.float32))
    ws.run_net("watch")
    assert path.read_text() == "1 4 2.33333 1.52753\n0.5 0.5 0.5 0\n"
    ws.create_net(net.Proto(), overwrite=True)  # a new operator starts the file again
    assert path.read_text() == ""


def test_to_file_with_an_output_writes_both(tmp_path):
    ws = Workspace(root_folder=str(tmp_path))
    ws.feed("x", np.array([1e-7, 3e8], np.float32))
    ws.run_operator_once(core.CreateOperator("Summarize", ["x"], ["s"], to_file=1))
    assert (tmp_path / "x.summary").read_text() == "1e-07 3e+08 1.5e+08 2.12132e+08\n"
    np.testing.assert_allclose(ws.fetch("s"), expected([1e-7, 3e8]), rtol=1e-6)


def test_an_unwritable_summary_file_is_refused_at_creation(tmp_path):
    ws = Workspace(root_folder=str(tmp_path / "missing"))
    ws.feed("x", np.ones(2, np.float32))
    with pytest.raises(FileAccessError, match="summarize file for tensor x"):
        ws.run_operator_once(core.CreateOperator("Summarize", ["x"], [], to_file=1))


@pytest.mark.parametrize(
    "x, error, match",
    [
        (np.zeros((2, 0), np.float32), ShapeError, "'X'.*at least one element"),
        (np.ones(3, np.int32), DTypeError, "'X'"),
    ],
)
def test_bad_inputs(x, error, match):
    run_fails("Summarize", {"X": x}, error, match)


def test_no_gradient():
    op = core.CreateOperator("Summarize", ["X"], ["S"])
    with pytest.raises(GradientError, match="should not call gradient for operator Summarize"):
        get_gradient_for_op(op, ["S_grad"])
