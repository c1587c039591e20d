"""scripts/check_site.py's reading of a built page, on small hand-written HTML
(the whole site is checked by test_docs_build.py, which builds it)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import check_site  # noqa: E402  scripts/check_site.py

CELL = (
    '<div class="cell"><div class="cell_input"><pre>code</pre></div>'
    '<div class="cell_output"><div class="output"><pre>%s</pre></div></div></div>'
)


def test_a_figure_inside_a_cells_output_is_in_its_output():
    page = CELL % "<svg>IN</svg>"
    assert check_site._in_output(page, page.index("<svg>IN"))


def test_a_figure_after_a_cell_is_not_in_its_output():
    """A raw-HTML figure that follows a cell (as the time stepper follows an answer
    fold's code cell) is shown at the column's width, not an output's."""
    page = "<details>" + CELL % "text" + '</details><div class="stepper"><svg>AFTER</svg></div>'
    assert not check_site._in_output(page, page.index("<svg>AFTER"))


def test_a_figure_in_a_cells_input_or_before_any_cell_is_not_in_an_output():
    page = '<p><svg>FIRST</svg></p><div class="cell"><div class="cell_input"><svg>IN</svg></div>'
    assert not check_site._in_output(page, page.index("<svg>FIRST"))
    assert not check_site._in_output(page, page.index("<svg>IN"))
