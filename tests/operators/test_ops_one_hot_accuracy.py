"""OneHot, SegmentOneHot, BatchOneHot, Accuracy, Conditional: forward against
loops written here, refusals naming the blob."""

import numpy as np
import pytest
from ops_testing import gradient_of, random, run1, run_fails

from caffe2rnn import core
from caffe2rnn.errors import ArgumentError, DTypeError, GradientError, ShapeError
from caffe2rnn.runtime import Workspace


def test_one_hot():
    indices = np.array([2, 0, 2], np.int64)
    out = run1("OneHot", {"i": indices, "n": np.array([4], np.int64)})
    expected = np.zeros((3, 4), np.float32)
    for row, k in enumerate(indices):
        expected[row, k] = 1
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        # Caffe2 only DCHECKed the index: a write outside the matrix
        (
            {"i": np.array([4], np.int64), "n": np.array([4], np.int64)},
            ShapeError,
            "'i'.*\\[0, 4\\)",
        ),
        ({"i": np.array([1], np.int32), "n": np.array([4], np.int64)}, DTypeError, "'i'.*int64"),
        ({"i": np.array([1], np.int64), "n": np.array([4, 4], np.int64)}, ShapeError, "'n'"),
        ({"i": np.array([[1]], np.int64), "n": np.array([4], np.int64)}, ShapeError, "'i'"),
        ({"i": np.array([0], np.int64), "n": np.array([-1], np.int64)}, ArgumentError, "'n'"),
    ],
)
def test_one_hot_refusals(inputs, error, match):
    run_fails("OneHot", inputs, error, match)


def test_segment_one_hot():
    lengths = np.array([2, 0, 1], np.int32)
    indices = np.array([1, 3, 0], np.int64)
    out = run1("SegmentOneHot", {"l": lengths, "i": indices, "n": np.array([4], np.int64)})
    np.testing.assert_array_equal(out, [[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])
    run_fails(
        "SegmentOneHot",
        {"l": np.array([3], np.int32), "i": indices[:2], "n": np.array([4], np.int64)},
        ShapeError,
        "'i'.*at least 3",
    )


def test_batch_one_hot():
    x = np.array([[2, 3], [4, 1], [2, 5]], np.int32)
    lengths = np.array([2, 3], np.int32)
    values = np.array([2, 4, 1, 3, 5], np.int32)
    out = run1("BatchOneHot", {"x": x, "l": lengths, "v": values})
    np.testing.assert_array_equal(out, [[1, 0, 0, 1, 0], [0, 1, 1, 0, 0], [1, 0, 0, 0, 1]])
    assert out.dtype == np.int32
    run_fails("BatchOneHot", {"x": x, "l": lengths, "v": values[:4]}, ShapeError, "'v'")


def test_one_hots_have_no_gradient():
    ops, g_input = gradient_of("OneHot", ["i", "n"], ["o"])
    assert ops == [] and g_input == [None, None]


# --- Accuracy ------------------------------------------------------------------------------
@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_accuracy_counts_labels_in_the_top_k(top_k):
    scores = np.array(
        [[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.9, 0.05, 0.05], [0.2, 0.2, 0.6]], np.float32
    )
    labels = np.array([2, 1, 0, 1], np.int32)
    correct = 0
    for row, label in zip(scores, labels):
        # a stable sort by descending score; ties keep the lower index first
        ranking = sorted(range(len(row)), key=lambda j: (-row[j], j))
        correct += label in ranking[:top_k]
    out = run1("Accuracy", {"p": scores, "l": labels}, top_k=top_k)
    assert out.shape == () and out.dtype == np.float32
    assert out == np.float32(correct / len(labels))


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        ({"p": random((2, 3)), "l": np.array([0, 3], np.int32)}, ShapeError, "'l'.*\\[0, 3\\)"),
        ({"p": random((2, 3)), "l": np.array([0], np.int32)}, ShapeError, "'l'"),
        ({"p": random((2, 3)), "l": np.array([0, 1], np.int64)}, DTypeError, "'l'.*int32"),
        ({"p": random((2, 3, 1)), "l": np.array([0, 1], np.int32)}, ShapeError, "'p'"),
    ],
)
def test_accuracy_refusals(inputs, error, match):
    run_fails("Accuracy", inputs, error, match)


def test_accuracy_should_not_be_differentiated():
    with pytest.raises(GradientError):
        gradient_of("Accuracy", ["p", "l"], ["a"])


# --- Conditional ---------------------------------------------------------------------------
def test_conditional_picks_rows():
    cond = np.array([True, False, True])
    t, f = random((3, 2), 1), random((3, 2), 2)
    np.testing.assert_array_equal(
        run1("Conditional", {"c": cond, "t": t, "f": f}), np.where(cond[:, None], t, f)
    )


def test_conditional_copies_bytes_of_a_same_sized_type():
    t = np.array([1.0, 2.0], np.float32)
    f = np.array([1, 2], np.int32)
    out = run1("Conditional", {"c": np.array([False, True]), "t": t, "f": f})
    assert out.dtype == np.float32
    assert out.view(np.int32)[0] == 1 and out[1] == 2.0


@pytest.mark.parametrize(
    "inputs, error, match",
    [
        ({"c": np.array([True]), "t": random((2,)), "f": random((2,))}, ShapeError, "'t'"),
        ({"c": np.array([True, False]), "t": random((2,)), "f": random((2, 1))}, ShapeError, "'f'"),
        (
            {"c": np.array([1, 0], np.int32), "t": random((2,)), "f": random((2,))},
            DTypeError,
            "'c'",
        ),
        ({"c": np.array([True, False]), "t": random((2,)), "f": np.zeros(2)}, DTypeError, "'f'"),
    ],
)
def test_conditional_refusals(inputs, error, match):
    run_fails("Conditional", inputs, error, match)


def _cpp_multi_class_accuracy(x, labels):
    """MultiClassAccuracyOp<float, CPUContext>::RunOnDevice (042e8ede4), loop for loop."""
    n, d = x.shape
    accuracies, amounts = np.zeros(d, np.float32), np.zeros(d, np.int32)
    for i in range(n):
        maxval, maxid = np.finfo(np.float32).min, 0
        for j in range(d):
            if x[i, j] > maxval:
                maxval, maxid = x[i, j], j
        if maxid == labels[i]:
            accuracies[labels[i]] += 1
        amounts[labels[i]] += 1
    for i in range(d):
        if amounts[i]:
            accuracies[i] /= np.float32(amounts[i])
    return accuracies, amounts


def test_multi_class_accuracy_as_the_cpp_scan():
    lowest = np.finfo(np.float32).min
    x = np.array(
        [
            [0.1, 0.7, 0.7, 0.2],  # ties: the first
            [np.nan, 0.2, 0.1, 0.0],  # NaN never taken
            [-np.inf, lowest, -np.inf, lowest],  # nothing above lowest(): 0
            [np.nan, np.nan, np.nan, np.nan],
            [0.3, 0.2, 0.9, 0.9],
            [1.0, 2.0, 3.0, 4.0],
        ],
        np.float32,
    )
    labels = np.array([1, 1, 0, 2, 2, 3], np.int32)
    ws = Workspace()
    ws.feed("x", x)
    ws.feed("l", labels)
    ws.run_operator_once(core.CreateOperator("MultiClassAccuracy", ["x", "l"], ["acc", "n"]))
    want_acc, want_n = _cpp_multi_class_accuracy(x, labels)
    np.testing.assert_array_equal(ws.fetch("acc"), want_acc)
    np.testing.assert_array_equal(ws.fetch("n"), want_n)


# --- BatchBucketOneHot (one_hot_ops.cc at 042e8ede4 and 929c33cee) ------------------------
def _bucket_loop(x, lengths, boundaries):
    """Right-inclusive buckets: the count of a column's boundaries below the value."""
    rows = []
    for row in x:
        out, b = [], 0
        for j, n in enumerate(lengths):
            hot = [0.0] * (n + 1)
            hot[sum(1 for v in boundaries[b : b + n] if v < row[j])] = 1.0
            out += hot
            b += n
        rows.append(out)
    return np.array(rows, np.float32).reshape(len(x), int(sum(lengths)) + len(lengths))


def test_batch_bucket_one_hot_docstring_example():
    x = np.array([[2, 3], [4, 1], [2, 5]], np.float32)
    lengths = np.array([2, 3], np.int32)
    boundaries = np.array([0.1, 2.5, 1, 3.1, 4.5], np.float32)
    out = run1("BatchBucketOneHot", {"x": x, "l": lengths, "b": boundaries})
    expected = [[0, 1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 1]]
    np.testing.assert_array_equal(out, np.array(expected, np.float32))
    np.testing.assert_array_equal(out, _bucket_loop(x, lengths, boundaries))


def test_batch_bucket_one_hot_random_and_on_a_boundary():
    x = random((5, 3), 2, low=-3, high=3)
    x[0, 0] = 0.5  # equal to a boundary: the bucket that ends there (right-inclusive)
    lengths = np.array([1, 3, 2], np.int32)
    boundaries = np.array([0.5, -1, 0, 1, -2, 2], np.float32)
    out = run1("BatchBucketOneHot", {"x": x, "l": lengths, "b": boundaries})
    np.testing.assert_array_equal(out, _bucket_loop(x, lengths, boundaries))
    assert out[0, 0] == 1.0


def test_batch_bucket_one_hot_unsorted_boundaries_follow_lower_bound():
    """std::lower_bound on [3, 1, 2] for 1.5: middle 1 (1 < 1.5) → first 2; 2 >= 1.5 → 2."""
    out = run1(
        "BatchBucketOneHot",
        {
            "x": np.array([[1.5]], np.float32),
            "l": np.array([3], np.int32),
            "b": np.array([3, 1, 2], np.float32),
        },
    )
    np.testing.assert_array_equal(out, [[0, 0, 1, 0]])


@pytest.mark.parametrize(
    "feed, error, match",
    [
        ({"x": np.array(1, np.float32)}, ShapeError, "'x'.*at least 1 dimension"),
        ({"l": np.array([2], np.int32)}, ShapeError, "'l'.*2 lengths"),
        ({"b": np.zeros(4, np.float32)}, ShapeError, "'b'.*sum of length"),
        ({"l": np.array([0, 5], np.int32)}, ArgumentError, "'l'.*length of 0"),
        ({"l": np.array([2, 3], np.int64)}, DTypeError, "'l'"),
        ({"x": np.zeros((1, 2), np.int32)}, DTypeError, "'x'"),
    ],
)
def test_batch_bucket_one_hot_refusals(feed, error, match):
    inputs = {
        "x": np.zeros((1, 2), np.float32),
        "l": np.array([2, 3], np.int32),
        "b": np.arange(5, dtype=np.float32),
    }
    inputs.update(feed)
    run_fails("BatchBucketOneHot", inputs, error, match)


def test_batch_bucket_one_hot_has_no_gradient_maker():
    """NO_GRADIENT(BucketBatchOneHot) named another type: no maker for this one."""
    with pytest.raises(GradientError, match="BatchBucketOneHot"):
        gradient_of("BatchBucketOneHot", ["x", "l", "b"], ["y"])
