"""The 2017 libraries for Caffe2's test files: NumPy 1.13's list indices read as
tuples (compat.numpy_indexing) and np.delete casting a non-integer index
array, scipy.misc.logsumexp (compat.environment2017)."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

from caffe2rnn.compat import environment2017, numpy_indexing


def test_index2017_reads_a_list_of_slices_as_a_tuple():
    x = np.arange(12).reshape(3, 4)
    index = [slice(0, 2), slice(1, None)]
    np.testing.assert_array_equal(x[numpy_indexing.index2017(index)], x[0:2, 1:])
    # a list of integers stays a fancy index; anything else is unchanged
    assert numpy_indexing.index2017([2, 0]) == [2, 0]
    assert numpy_indexing.index2017(slice(1)) == slice(1)
    assert numpy_indexing.index2017([np.array([0, 1]), np.array([1, 2])]).__class__ is tuple
    assert numpy_indexing.index2017([slice(None)] * 40).__class__ is list  # NumPy's MAXDIMS


def test_transform_wraps_expression_indices_only():
    source = b"x = [[1, 2], [3, 4]]\nslc = [0]\ny = x[0]\nz = x[slc[0]]\nw = x[0:1]\n"
    namespace = {}
    numpy_indexing.install("/nonexistent-root")  # defines the helper
    exec(numpy_indexing.transform(source, "<test>"), namespace)
    assert namespace["z"] == [1, 2] and namespace["w"] == [[1, 2]]


def test_the_finder_loads_test_files_under_the_root_transformed(tmp_path, monkeypatch):
    (tmp_path / "sample_2017_test.py").write_text(
        "import numpy as np\n"
        "x = np.arange(6).reshape(2, 3)\n"
        "slc = [slice(0, 1), slice(1, 3)]\n"
        "y = x[slc]\n"
    )
    (tmp_path / "sample_2017_helper.py").write_text("value = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    numpy_indexing.install(str(tmp_path))
    try:
        module = importlib.import_module("sample_2017_test")
        np.testing.assert_array_equal(module.y, [[1, 2]])
        assert not (tmp_path / "__pycache__").exists()  # nothing written next to the files
        assert importlib.import_module("sample_2017_helper").value == 1  # not a test: untouched
    finally:
        sys.meta_path[:] = [
            f for f in sys.meta_path if not isinstance(f, numpy_indexing.TestFileFinder)
        ]
        sys.modules.pop("sample_2017_test", None)
        sys.modules.pop("sample_2017_helper", None)


def test_np_delete_casts_a_non_integer_index_array_as_numpy_113_did():
    original = getattr(np.delete, "__wrapped__", np.delete)  # another test may have installed it
    delete = environment2017._delete_casting_indices(original)
    x = np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(delete(x, np.array([]), axis=0), x)
    np.testing.assert_array_equal(delete(x, np.array([1.0]), axis=0), x[[0, 2]])
    with pytest.raises(IndexError):
        original(x, np.array([1.0]), axis=0)  # today's NumPy refuses it


def test_np_sum_of_a_generator_is_pythons_sum_as_numpy_113_did():
    original = getattr(np.sum, "__wrapped__", np.sum)
    total = environment2017._sum_of_generators(original)
    assert total(x * 0.5 for x in range(4)) == 3.0
    out = np.zeros(())
    assert total((x for x in range(3)), out=out) is out and out == 3
    np.testing.assert_array_equal(total(np.ones((2, 3)), axis=0), [2, 2, 2])
    with pytest.raises(TypeError):
        original(x for x in range(3))  # today's NumPy refuses it


def test_np_fromstring_binary_mode_copies_bytes_as_numpy_113_did():
    original = getattr(np.fromstring, "__wrapped__", np.fromstring)
    fromstring = environment2017._fromstring_binary_mode(original)
    data = np.array([1.5, -2.0], np.float32).tobytes()
    out = fromstring(data, dtype=np.float32)
    np.testing.assert_array_equal(out, [1.5, -2.0])
    assert out.flags.writeable and out.flags.owndata
    np.testing.assert_array_equal(fromstring(data, dtype="<u1"), list(data))
    np.testing.assert_array_equal(fromstring("1 2", dtype=int, sep=" "), [1, 2])
    with pytest.raises(ValueError):
        original(data, dtype=np.float32)  # today's NumPy refuses it


def test_scipy_misc_logsumexp_is_special_logsumexp():
    scipy_misc = pytest.importorskip("scipy.misc")
    scipy_special = pytest.importorskip("scipy.special")
    environment2017.install_scipy_misc_logsumexp()
    assert scipy_misc.logsumexp is scipy_special.logsumexp


def test_scipy_misc_gets_logsumexp_when_imported_later_and_special_waits_for_it():
    """In a fresh interpreter: installing the 2017 environment imports no SciPy
    special function; importing scipy.misc afterwards finds logsumexp there."""
    pytest.importorskip("scipy.special")
    code = (
        "import sys, warnings\n"
        "from caffe2rnn.compat import environment2017\n"
        "environment2017.install()\n"
        "assert 'scipy.special' not in sys.modules\n"
        "warnings.simplefilter('ignore')\n"
        "from scipy.misc import logsumexp\n"
        "import scipy.special\n"
        "assert logsumexp is scipy.special.logsumexp\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
