"""Caffe2's own RNN programs, run unchanged through ``python -m caffe2rnn.compat``.

``caffe2/python/examples/char_rnn.py`` and ``caffe2/python/lstm_benchmark.py``
(Caffe2 0cdd09da6) are read from ``$CAFFE2_SOURCE``, a checkout of
facebookarchive/caffe2; without it these tests skip. Each runs in a
subprocess, as a user would start it, with small arguments.
"""

import collections
import contextlib
import math
import os
import queue
import re
import subprocess
import sys
import threading
import time

import pytest

from caffe2rnn import compat

SOURCE = os.environ.get("CAFFE2_SOURCE")


def caffe2_program(relative):
    if not SOURCE:
        pytest.skip(
            "set CAFFE2_SOURCE to a checkout of facebookarchive/caffe2 (e.g. at 0cdd09da6) "
            "to run Caffe2's own programs"
        )
    path = os.path.join(SOURCE, relative)
    if not os.path.isfile(path):
        pytest.skip("%s is not in CAFFE2_SOURCE=%s" % (relative, SOURCE))
    return path


def _command(path, *arguments):
    return [sys.executable, "-m", "caffe2rnn.compat", path, *arguments]


def _environment():
    return dict(os.environ, PYTHONUNBUFFERED="1")


def test_run_program_runs_caffe2_code_with_its_arguments(tmp_path, capsys):
    """No checkout needed: a small program in Caffe2's style, through run_program."""
    program = tmp_path / "prog.py"
    program.write_text(
        "import sys\n"
        "import numpy as np\n"
        "from caffe2.python import core, workspace\n"
        "net = core.Net('double')\n"
        "net.Scale('x', 'y', scale=2.0)\n"
        "workspace.FeedBlob('x', np.array([float(sys.argv[1])], dtype=np.float32))\n"
        "workspace.RunNetOnce(net)\n"
        "if __name__ == '__main__':\n"
        "    print('y =', workspace.FetchBlob('y')[0], 'argv0 =', sys.argv[0])\n"
    )
    saved = sys.argv[:]
    compat.run_program(str(program), ["21"])
    assert sys.argv == saved
    assert capsys.readouterr().out == "y = 42.0 argv0 = %s\n" % program


def test_compat_command_line_errors(tmp_path):
    run = subprocess.run(
        _command(str(tmp_path / "absent.py")), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2
    assert run.stderr == "caffe2rnn.compat: %s: no such file\n" % (tmp_path / "absent.py")


def test_compat_seed_fixes_the_random_fillers(tmp_path):
    """``--seed N`` reseeds the fillers' shared stream (Caffe2 seeded from the clock)."""
    program = tmp_path / "fill.py"
    program.write_text(
        "from caffe2.python import core, workspace\n"
        "net = core.Net('init')\n"
        "net.GaussianFill([], 'w', shape=[3])\n"
        "workspace.RunNetOnce(net)\n"
        "print(repr(workspace.FetchBlob('w').tolist()))\n"
    )

    def draws(*options):
        command = [sys.executable, "-m", "caffe2rnn.compat", *options, str(program)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stdout

    assert draws("--seed", "7") == draws("--seed", "7")
    assert draws("--seed", "7") != draws("--seed", "8")
    assert draws() != draws()  # unseeded, as Caffe2 was


def _lines_until(process, done, deadline_seconds):
    """Lines a running process prints, until ``done(lines)`` or the deadline."""
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in process.stdout], daemon=True).start()
    seen, deadline = [], time.monotonic() + deadline_seconds
    while not done(seen) and time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(queue.Empty):
            seen.append(lines.get(timeout=0.5).rstrip("\n"))
    return seen


def test_char_rnn_example_trains_and_samples(tmp_path):
    """char_rnn.py trains forever; we read three reports, then stop it."""
    path = caffe2_program("caffe2/python/examples/char_rnn.py")
    words = ("the", "cat", "sat", "on", "a", "mat", "and", "saw", "one", "red", "bird", "fly")
    text = " ".join(words[(i * 7 + i // 3) % len(words)] for i in range(1500)) + "."
    data = tmp_path / "train.txt"
    data.write_text(text)  # one line, so each printed sample is one line
    seq_length = 10
    arguments = ["--train_data", str(data), "--seq_length", str(seq_length)]
    arguments += ["--batch_size", "4", "--hidden_size", "24", "--iters_to_report", "40"]
    process = subprocess.Popen(
        _command(path, *arguments),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=_environment(),
    )
    try:
        lines = _lines_until(
            process, lambda seen: sum("Smooth loss" in x for x in seen) == 3, deadline_seconds=300
        )
    finally:
        process.kill()
        process.wait()
    output = "\n".join(lines)
    assert sum("Smooth loss" in x for x in lines) == 3, output[-3000:]
    vocab = len(set(text))
    assert "Input has %d characters. Total input size: %d" % (vocab, len(text)) in output
    assert re.findall(r"-{10} Iteration (\d+) -{10}", output) == ["40", "80", "120"]
    samples = [x for x in lines if len(x) == 501]
    assert len(samples) == 3 and all(set(s) <= set(text) for s in samples)
    losses = [float(x) for x in re.findall(r"Loss since last report: ([\d.]+)", output)]
    # the loss is summed over the sequence: a uniform guess scores seq_length·log(V)
    assert losses[0] < seq_length * math.log(vocab)
    assert losses[-1] < losses[0]
    # ... and below what character frequencies alone give: it learned context
    counts = collections.Counter(text)
    entropy = -sum(c / len(text) * math.log(c / len(text)) for c in counts.values())
    assert losses[-1] < seq_length * entropy


BENCHMARK = ["--hidden_dim", "8", "--input_dim", "4", "--batch_size", "3", "--seq_length", "5"]
BENCHMARK += ["--data_size", "300", "--iters_to_report", "5"]


@pytest.mark.parametrize(
    "variant",
    [
        [],
        ["--forward_only"],
        ["--memory_optimization", "--num_layers", "2"],
        ["--fixed_shape", "--implementation", "static_dag"],
    ],
    ids=["own", "forward_only", "memory_optimization-2-layers", "static_dag"],
)
def test_lstm_benchmark_runs(tmp_path, variant):
    path = caffe2_program("caffe2/python/lstm_benchmark.py")
    run = subprocess.run(
        _command(path, *BENCHMARK, *variant),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_environment(),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Generating data 0/20" in run.stdout
    iterations = re.findall(r"Iter: (\d+) / 20\. Entries Per Second: [\d.]+k\.", run.stderr)
    assert iterations == ["1", "6", "11", "16"]
    assert "Done. Total EPS excluding 1st iteration" in run.stderr
    if "static_dag" in variant:
        assert "Using static RNN of size 5" in run.stdout
        assert "Using DAG net type" in run.stdout


def test_lstm_benchmark_cudnn_is_a_clear_error(tmp_path):
    path = caffe2_program("caffe2/python/lstm_benchmark.py")
    run = subprocess.run(
        _command(path, *BENCHMARK, "--implementation", "cudnn"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_environment(),
        timeout=300,
    )
    assert run.returncode != 0
    assert "cudnn_LSTM needs Caffe2's CUDA 'Recurrent' op" in run.stderr
