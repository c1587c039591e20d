"""The command line under bad arguments: one line on stderr, exit status 2, no traceback.

Each case runs ``main()`` in-process (a traceback would be an exception
escaping ``main``); one runs ``python -m caffe2rnn`` for real.
"""

import os
import subprocess
import sys

import pytest

from caffe2rnn import __main__ as cli
from caffe2rnn.__main__ import main
from caffe2rnn.proto import caffe2_pb2
from caffe2rnn.viz import examples


def _fails(capsys, argv):
    """Run main(argv); return its one stderr line after checking exit status 2."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    assert status == 2, (argv, status, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, "expected one line for %s, got:\n%s" % (argv, err)
    assert "Traceback" not in err and out == ""
    return lines[0]


BAD = [
    # argv, words the one line must contain
    (["compare", "--cell", "attention"], ["--cell", "'attention'", "lstm", "sum_mul"]),
    (["compare", "--versions", "v1,zz"], ["--versions", "'zz'", "april", "newest"]),
    (["compare", "--versions", ","], ["--versions", "empty"]),
    (["render", "--cell", "nope"], ["--cell", "'nope'", "attention", "lstm"]),
    (["render", "--version", "v1", "--cell", "attention"], ["version v1", "'attention'"]),
    (["render", "--view", "nope"], ["--view", "unroll", "timeline"]),
    (["render", "--version", "v9"], ["--version", "current", "newest"]),
    (["render", "--view", "unroll", "--steps", "0"], ["--steps", "between 1 and 64", "got 0"]),
    (["render", "--steps", "-1"], ["--steps", "got -1"]),
    (["render", "--steps", "100000"], ["--steps", "between 1 and 64"]),
    (["render", "-T", "three"], ["'three' is not a whole number"]),
    (["render", "--op", "0"], ["--op needs --net"]),
    (["render", "--nested", "half"], ["--nested", "expand", "collapse"]),
    (["demo", "--steps", "0"], ["--steps", "training steps", "got 0"]),
    (["demo", "--steps", "-1"], ["--steps", "got -1"]),
    (["demo", "--steps", "10000000"], ["--steps", "between 1 and 100000"]),
    (["demo", "--steps", "1.5"], ["'1.5' is not a whole number"]),
    (["frobnicate"], ["invalid choice", "render", "demo"]),
    ([], ["required", "COMMAND"]),
]


@pytest.mark.parametrize("argv,words", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_argument_is_one_line_exit_2_with_the_choices(capsys, argv, words):
    line = _fails(capsys, argv)
    for word in words:
        assert word in line, (word, line)


def test_unwritable_output_is_one_line_before_drawing(capsys, tmp_path):
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    line = _fails(capsys, ["render", "--cell", "mul", "-o", str(a_file / "x.svg")])
    assert "-o" in line and "not a directory" in line
    line = _fails(capsys, ["render", "--cell", "mul", "-o", str(tmp_path)])
    assert "is a directory" in line
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        line = _fails(capsys, ["compare", "--cell", "lstm", "-o", str(locked / "t.svg")])
        assert "not writable" in line
    line = _fails(capsys, ["render", "--cell", "mul", "-o", "/proc/caffe2rnn-x.dot"])
    assert "/proc/caffe2rnn-x.dot" in line


def test_bad_net_files_are_one_line(capsys, tmp_path):
    line = _fails(capsys, ["render", "--net", str(tmp_path / "missing.pb")])
    assert "missing.pb" in line and "No such file" in line
    junk = tmp_path / "junk.pbtxt"
    junk.write_text("this is not a net {")
    assert "neither a binary NetDef nor NetDef text" in _fails(
        capsys, ["render", "--net", str(junk)]
    )
    binary = tmp_path / "junk.pb"
    binary.write_bytes(b"\xff\xfe\x00\x01\x02")
    assert "junk.pb" in _fails(capsys, ["render", "--net", str(binary)])
    plain = tmp_path / "plain.pbtxt"
    plain.write_text('name: "p" op { type: "Relu" input: "x" output: "y" }')
    line = _fails(capsys, ["render", "--net", str(plain), "--view", "unroll"])
    assert "no RecurrentNetwork op" in line
    line = _fails(capsys, ["render", "--net", str(plain), "--view", "timeline", "--op", "5"])
    assert "--op 5" in line and "1 ops" in line


def _user_net():
    op = examples.lstm()
    net = caffe2_pb2.NetDef(name="user_rnn")
    net.op.extend([op])
    net.op.add(type="Relu", input=["lstm/hidden_t_all"], output=["out"])
    net.external_input.extend(op.input)
    net.external_output.append("out")
    return net


@pytest.mark.parametrize("encoding", ["binary", "text"])
def test_render_net_draws_a_users_netdef_with_its_step_nets(capsys, tmp_path, encoding):
    net = _user_net()
    path = tmp_path / ("net.pb" if encoding == "binary" else "net.pbtxt")
    if encoding == "binary":
        path.write_bytes(net.SerializeToString())
    else:
        path.write_text(str(net))
    assert main(["render", "--net", str(path), "--nested", "expand"]) == 0
    dot = capsys.readouterr().out
    assert "net 'user_rnn'" in dot
    assert "cluster_op#0/step_net" in dot and "cluster_op#0/backward_step_net" in dot
    assert '"op#0/step_net/op#2"' in dot  # LSTMUnit inside the step net box
    assert "LSTMUnit" in dot and "Relu" in dot
    assert main(["render", "--net", str(path), "--nested", "collapse"]) == 0
    dot = capsys.readouterr().out
    assert "cluster_op#0/step_net" not in dot and "\u25b8 step_net: 3 ops" in dot
    assert main(["render", "--net", str(path), "--view", "unroll", "-T", "2"]) == 0
    assert "cluster_t1" in capsys.readouterr().out


def test_help_shows_defaults_and_no_research_jargon(capsys):
    for argv in (["render", "--help"], ["demo", "--help"], ["compare", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert "seed 0" not in text and "``" not in text and "(default: None)" not in text
        assert "(default: " in text
    assert not hasattr(cli, "VERSION_ALIASES")


def test_python_dash_m_prints_one_line_and_exits_2():
    run = subprocess.run(
        [sys.executable, "-m", "caffe2rnn", "compare", "--cell", "attention"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
