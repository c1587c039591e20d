"""`make demo` end to end: both models learn, gradients check, files appear."""

import os
import shutil

from caffe2rnn.__main__ import main


def test_demo_trains_checks_gradients_and_writes_report(tmp_path, capsys):
    out = tmp_path / "demo-out"
    assert main(["demo", "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "Result: OK" in report
    assert "| lstm | 6 |" in report and "| attention | 15 |" in report
    diagrams = sorted(os.listdir(out / "diagrams"))
    extension = ".svg" if shutil.which("dot") else ".dot"
    assert diagrams == sorted(
        "lstm_%s%s" % (view, extension)
        for view in [
            "net",
            "ssa",
            "scratches",
            "backward",
            "recurrent",
            "timeline",
            "unroll",
            "backward_timeline",
        ]
    )
    assert "loss" in capsys.readouterr().out
