"""``make run NB=04`` (scripts/run_notebook.py): one notebook run without a notebook
server, its cells' output printed; a worked answer runs but its output is left out."""

import base64
import os
import sys

import pytest

pytest.importorskip("nbclient")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_notebook  # noqa: E402 (scripts/ is not a package)


def test_a_run_prints_the_checks_and_hides_the_worked_answers(capsys, tmp_path):
    assert run_notebook.main(["04", "--pictures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "running notebooks/04_recurrent_network_in_numpy.ipynb" in out.replace(os.sep, "/")
    assert "No answer yet: write the body of the step loop" in out  # the learner's cell
    assert "(a worked answer, collapsed on the site: ANSWERS=1 shows it)" in out
    assert "Right: every step's blobs are views" not in out  # the answer's own check
    assert out.rstrip().endswith("every cell ran.")


def test_answers_flag_shows_them(capsys, tmp_path):
    assert run_notebook.main(["4", "--answers", "--pictures", str(tmp_path)]) == 0
    assert "Right: every step's blobs are views" in capsys.readouterr().out


def test_a_name_that_matches_no_notebook_lists_them():
    with pytest.raises(SystemExit, match=r"names no notebook; the notebooks are:\n.*01_netdef"):
        run_notebook.main(["99"])


def test_a_picture_is_saved_and_named_instead_of_its_text_stand_in(tmp_path):
    """A terminal cannot show a plot: the transcript names the file it was saved to,
    not matplotlib's `<Figure size ...>` text."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    cell = {
        "outputs": [
            {"output_type": "stream", "text": "loss 0.1\n"},
            {
                "output_type": "display_data",
                "data": {
                    "image/png": base64.b64encode(png).decode(),
                    "text/plain": "<Figure size 600x260 with 1 Axes>",
                },
            },
            {"output_type": "display_data", "data": {"image/svg+xml": "<svg></svg>"}},
            {"output_type": "execute_result", "data": {"text/plain": "3"}},
        ]
    }
    text = run_notebook.transcript(cell, str(tmp_path / "nb" / "cell7"))
    assert "<Figure size" not in text
    assert text.splitlines()[0] == "loss 0.1" and text.splitlines()[-1] == "3"
    assert (tmp_path / "nb" / "cell7_2.png").read_bytes() == png
    assert (tmp_path / "nb" / "cell7_3.svg").read_text() == "<svg></svg>"
    assert "cell7_2.png]" in text and "cell7_3.svg]" in text
    # without a folder (the old behaviour) the text stand-in is printed
    assert "<Figure size 600x260 with 1 Axes>" in run_notebook.transcript(cell)
