"""`make demo` end to end, and `python -m caffe2rnn char-rnn` with good and bad input."""

import os
import re
import shutil

import pytest

from caffe2rnn.__main__ import main
from caffe2rnn.demo import datasets
from caffe2rnn.viz.gallery import VIEWS


def test_demo_learns_checks_gradients_and_writes_its_files(tmp_path, capsys):
    out = tmp_path / "demo-out"
    assert main(["demo", "--out", str(out), "--steps", "150"]) == 0
    printed = capsys.readouterr().out
    assert "Char-RNN on 300,000 characters of Python's standard library" in printed
    assert re.search(r"char-rnn +\[#{30}\] 150/150  loss \d\.\d{4}", printed)  # the bar, in a log
    assert printed.count("--- sample after") == 5

    report = (out / "report.md").read_text()
    assert "Result: OK" in report
    assert "| lstm | 6 |" in report and "| attention | 15 |" in report
    assert "Learned: the loss is" in report
    assert report.count("\nafter ") == 5  # the samples, after 30, 60... steps
    extension = ".svg" if shutil.which("dot") else ".dot"
    assert sorted(os.listdir(out / "diagrams")) == sorted(
        "lstm_%s%s" % (v, extension) for v in VIEWS
    )
    assert (out / "samples.txt").read_text().count("=== after") == 5
    assert (out / "loss.png").read_bytes().startswith(b"\x89PNG")
    assert "<svg" in (out / "loss.svg").read_text()

    page = (out / "report.html").read_text()
    # self-contained: every image is inlined, nothing is fetched
    sources = re.findall(r'src="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/") for s in sources)
    assert len(sources) == 1 + (len(VIEWS) if extension == ".svg" else 0)
    assert "<link" not in page and "http" not in page.split("<body>")[0]
    assert 'class="ok">Result: OK' in page


def test_stdlib_corpus_is_deterministic_and_bounded(tmp_path):
    a, b = datasets.stdlib_source(), datasets.stdlib_source()
    assert a == b and len(a.text) == 300_000
    assert sum(n for _, n in a.files) == len(a.text)
    assert os.path.basename(a.files[0][0]) == "textwrap.py"
    with open(a.files[0][0], encoding="utf-8") as f:
        assert a.text.startswith(f.read())
    small = datasets.stdlib_source(max_chars=1000)
    assert small.text == a.text[:1000] and len(small.files) == 1
    (tmp_path / "b.py").write_text("bee\n")
    mine = datasets.stdlib_source(modules=("a", "b"), directory=str(tmp_path))
    assert mine.text == "bee\n"  # a missing module is skipped
    with pytest.raises(FileNotFoundError, match="none of the standard-library modules"):
        datasets.stdlib_source(modules=("a",), directory=str(tmp_path))


def _status(argv):
    """The exit status of ``python -m caffe2rnn ARGV`` (argparse exits, commands return)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def _text_file(tmp_path):
    path = tmp_path / "poem.txt"
    path.write_text("the owl and the pussy-cat went to sea in a beautiful pea-green boat. " * 40)
    return path


def test_char_rnn_command_writes_a_report(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["char-rnn", "--text", str(_text_file(tmp_path)), "--out", str(out)]
    argv += ["--steps", "120", "--hidden", "32", "--batch", "8", "--seq-len", "16"]
    assert main(argv + ["--prime", "the ", "--sample-length", "30"]) == 0
    printed = capsys.readouterr().out
    assert "Final loss" in printed and ": learned" in printed
    assert sorted(os.listdir(out)) == sorted(
        ["loss.png", "loss.svg", "report.html", "report.md", "samples.txt"]
    )
    assert "poem.txt" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--text", "{missing}"], "missing.txt: no such file"),
        (["--text", "{empty}"], "empty.txt is empty"),
        (["--text", "{binary}"], "binary.dat looks binary"),
        (["--text", "{poem}", "--steps", "0"], "--steps must be between 1 and 100000, got 0"),
        (["--text", "{poem}", "--batch", "x"], "argument --batch: 'x' is not a whole number"),
        (["--text", "{poem}", "--temperature", "-1"], "--temperature must be a positive number"),
        (["--text", "{poem}", "--learning-rate", "nan"], "--learning-rate must be a positive"),
        (["--text", "{poem}", "--seed", "-1"], "--seed must be between 0 and 4294967295"),
        (["--text", "{poem}", "--batch", "500"], "needs at least 16001"),
        (["--text", "{poem}", "--prime", "Q"], "'Q' is not in the training text"),
        (["--text", "{poem}", "--out", "{poem}"], "exists and is not a directory"),
        (["--steps", "3"], "the following arguments are required: --text"),
    ],
)
def test_char_rnn_command_bad_input_is_one_line_exit_2(tmp_path, capsys, arguments, message):
    files = dict(
        missing=tmp_path / "missing.txt",
        empty=tmp_path / "empty.txt",
        binary=tmp_path / "binary.dat",
        poem=_text_file(tmp_path),
    )
    files["empty"].write_text("")
    files["binary"].write_bytes(bytes(range(256)))
    argv = ["char-rnn", "--out", str(tmp_path / "out")]
    argv += [a.format(**{k: str(v) for k, v in files.items()}) for a in arguments]
    assert _status(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "char-rnn: " in err and "Traceback" not in err
    assert message in err
    assert out == ""  # nothing printed before the error
    assert not (tmp_path / "out").exists()  # nothing written
