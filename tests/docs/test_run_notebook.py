"""``make run NB=04`` (scripts/run_notebook.py): one notebook run without a notebook
server, its cells' output printed; a worked answer runs but its output is left out."""

import os
import sys

import pytest

pytest.importorskip("nbclient")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_notebook  # noqa: E402 (scripts/ is not a package)


def test_a_run_prints_the_checks_and_hides_the_worked_answers(capsys):
    assert run_notebook.main(["04"]) == 0
    out = capsys.readouterr().out
    assert "running notebooks/04_recurrent_network_in_numpy.ipynb" in out.replace(os.sep, "/")
    assert "No answer yet: write the body of the step loop" in out  # the learner's cell
    assert "(a worked answer, collapsed on the site: ANSWERS=1 shows it)" in out
    assert "Right: every step's blobs are views" not in out  # the answer's own check
    assert out.rstrip().endswith("every cell ran.")


def test_answers_flag_shows_them(capsys):
    assert run_notebook.main(["4", "--answers"]) == 0
    assert "Right: every step's blobs are views" in capsys.readouterr().out


def test_a_name_that_matches_no_notebook_lists_them():
    with pytest.raises(SystemExit, match=r"names no notebook; the notebooks are:\n.*01_netdef"):
        run_notebook.main(["99"])
