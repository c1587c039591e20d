"""The 2017 libraries compat provides: one-element arrays as scalars, future.utils."""

import os
import subprocess
import sys

from caffe2rnn import compat


def test_one_element_arrays_convert_to_scalars_as_in_numpy_1_13():
    """Run in a fresh interpreter: the installation changes numpy.random."""
    program = (
        "import numpy as np\n"
        "from caffe2rnn.compat import environment2017\n"
        "environment2017.install_numpy_aliases()\n"
        "print(int(np.random.choice(3, 1)) in (0, 1, 2))\n"  # Caffe2 E4's recurrent_network_test
        "print(float(np.random.randint(5, 6, size=(1, 1))))\n"
        "try:\n"
        "    int(np.random.choice(3, 2))\n"
        "except TypeError as e:\n"
        "    print('TypeError', e)\n"
        "print(type(np.random.choice(3)).__name__, np.float is float)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "True",
        "5.0",
        "TypeError only size-1 arrays can be converted to Python scalars",
        "int True",  # no size: a scalar, left alone
    ]


def test_future_utils_bytes_to_native_str():
    compat.install()
    from future.utils import bytes_to_native_str

    assert bytes_to_native_str(b"caffe2") == "caffe2"


def test_python2_itertools_names_for_2017_programs(tmp_path):
    """A program run through compat imports ``izip`` as Caffe2 0cdd09da6's
    seq2seq/translate.py did; the names are Python 3's lazy iterators."""
    program = tmp_path / "py2_itertools.py"
    program.write_text(
        "from itertools import izip, imap, ifilter, ifilterfalse, izip_longest\n"
        "print(list(izip('ab', [1, 2])), list(imap(abs, [-1, 2])))\n"
        "print(list(ifilter(None, [0, 3])), list(ifilterfalse(None, [0, 3])))\n"
        "print(list(izip_longest('a', [1, 2])), type(izip([], [])).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "caffe2rnn.compat", str(program)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == [
        "[('a', 1), ('b', 2)] [1, 2]",
        "[3] [0]",
        "[('a', 1), (None, 2)] zip",
    ]


def test_hypothesis_draws_the_same_on_a_ci_machine():
    """Hypothesis 6 loads a derandomized "ci" profile when CI is set; Hypothesis
    3 had none, so the 2017 API starts from the plain default either way."""
    code = (
        "import hypothesis\n"
        "from caffe2rnn.compat import environment2017\n"
        "environment2017.install_hypothesis3_api()\n"
        "print(hypothesis.settings.default.derandomize)\n"
    )
    environment = dict(os.environ, CI="1")
    run = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "False"
