"""Every drawn figure (``fig_<name>.svg``) on a page opens full size on a click.

The Graphviz views are written with ``:target: ..._full.svg``; docs/conf.py's
``link_figures_to_full_size`` gives each ``fig_<name>.svg`` image the same link,
to the ``fig_<name>_full.svg`` that docs/make_diagrams.py writes. These tests
run that hook in a two-page Sphinx project (seconds, not the site's build) and
check the full-size file is the page's drawing, larger.
"""

import os
import re
import sys
import textwrap

import pytest
from small_site import build_html, conf_parts  # tests/docs/small_site.py (on sys.path)

from caffe2rnn.viz.figures import FIGURES
from caffe2rnn.viz.figures.svg import FULL_SCALE

pytest.importorskip("sphinx")

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
HOOK = ("FIGURE_URI", "link_figures_to_full_size", "STEP_TITLE", "drop_step_from_titles", "setup")
HOOK += (
    "CALLED",
    "ANSWER_FOLD",
    "CHECK_FOLD",
    "called",
    "predict_pairs",
    "predict_folds_on_the_site",
)


def hook_source():
    """docs/conf.py's imports and its page hooks (figures, titles, predict folds: its
    ``setup`` connects all three), without the rest (which builds diagrams)."""
    return "\n\n".join(conf_parts(HOOK)) + "\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = tmp_path_factory.mktemp("figure_links")
    (src / "conf.py").write_text(hook_source() + 'html_static_path = ["_static"]\n', "utf-8")
    diagrams = src / "_static" / "diagrams"
    diagrams.mkdir(parents=True)
    figure = FIGURES["fig_gru_cell"]()
    figure.save(str(diagrams / "fig_gru_cell.svg"))
    figure.full_size().save(str(diagrams / "fig_gru_cell_full.svg"))
    (diagrams / "lstm_net.svg").write_text(figure.svg, encoding="utf-8")
    (diagrams / "lstm_net_full.svg").write_text(figure.svg, encoding="utf-8")
    (src / "concepts").mkdir()
    (src / "index.rst").write_text(
        textwrap.dedent(
            """\
            Top
            ===

            .. image:: _static/diagrams/fig_gru_cell.svg

            .. image:: _static/diagrams/lstm_net.svg
               :target: _static/diagrams/lstm_net_full.svg

            .. image:: _static/diagrams/fig_gru_cell.svg
               :target: _static/diagrams/fig_gru_cell.svg

            .. toctree::

               concepts/page
            """
        ),
        encoding="utf-8",
    )
    (src / "concepts" / "page.rst").write_text(
        "Page\n====\n\n.. image:: ../_static/diagrams/fig_gru_cell.svg\n", encoding="utf-8"
    )
    out = src / "_build"
    build_html(src, out)
    return out


def _images(page):
    """(link href or None, img src) of every <img> of a built page."""
    found = []
    pattern = r'(<a [^>]*href="([^"]+)"[^>]*>\s*)?<img [^>]*src="([^"]+)"'
    for match in re.finditer(pattern, page):
        found.append((match.group(2), match.group(3)))
    return found


def test_a_figure_on_a_top_level_page_links_to_its_full_size_file(built):
    images = _images((built / "index.html").read_text(encoding="utf-8"))
    # a figure without a link, and one whose :target: is its own page-size file
    assert images.count(("_static/diagrams/fig_gru_cell_full.svg", "_images/fig_gru_cell.svg")) == 2
    # a view's own :target: is kept, not wrapped twice
    assert ("_static/diagrams/lstm_net_full.svg", "_images/lstm_net.svg") in images
    assert len(images) == 3


def test_a_figure_on_a_nested_page_links_relative_to_that_page(built):
    images = _images((built / "concepts" / "page.html").read_text(encoding="utf-8"))
    assert images == [("../_static/diagrams/fig_gru_cell_full.svg", "../_images/fig_gru_cell.svg")]
    assert (built / "_static" / "diagrams" / "fig_gru_cell_full.svg").is_file()


def test_the_full_size_file_is_the_same_drawing_larger():
    for name, draw in FIGURES.items():
        figure = draw()
        full = figure.full_size()
        assert full.name == name + "_full"
        size = re.compile(r'<svg [^>]*?width="([0-9.]+)" height="([0-9.]+)" viewBox="([^"]+)"')
        w, h, box = size.search(figure.svg).groups()
        fw, fh, fbox = size.search(full.svg).groups()
        assert fbox == box and float(fw) == float(w) * FULL_SCALE
        assert float(fh) == pytest.approx(float(h) * FULL_SCALE)
        assert full.svg[full.svg.index("viewBox") :] == figure.svg[figure.svg.index("viewBox") :]


def test_make_diagrams_writes_each_figure_and_its_full_size_file(tmp_path):
    sys.path.insert(0, DOCS)
    try:
        import make_diagrams
    finally:
        sys.path.remove(DOCS)
    make_diagrams.write_figures(str(tmp_path))
    for name in FIGURES:
        assert (tmp_path / (name + ".svg")).is_file()
        assert (tmp_path / (name + "_full.svg")).is_file()
