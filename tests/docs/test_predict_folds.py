"""A notebook predict's folds on the site (docs/conf.py's ``predict_folds_on_the_site``).

MyST-NB folds a ``hide-input`` check cell's source above its output and a ``hide-cell``
answer cell in a fold of its own, both "Show code cell …": opened in page order, the
checker's source came first and the answer only in the next fold. The site shows, for
each predict, the feedback, then the answer's fold "Check your prediction", then the
checker's source in a collapsed fold "How this check works"."""

import glob
import os
import re

import pytest
from small_site import build_html, conf_parts  # tests/docs/small_site.py (on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF = os.path.join(ROOT, "docs", "conf.py")
HOOK = {"CALLED", "ANSWER_FOLD", "CHECK_FOLD", "called", "predict_pairs"}
HOOK |= {"predict_folds_on_the_site"}

nbformat = pytest.importorskip("nbformat")


def hook():
    names = {}
    exec("\n\n".join(conf_parts(HOOK)), names)  # noqa: S102 (our own conf.py)
    return names


def code(source, tags=(), output=None):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
    if output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
        cell.execution_count = 1
    return cell


def small_notebook():
    md = nbformat.v4.new_markdown_cell
    check = "def check_read(prediction):\n    print(SOURCE_OF_THE_CHECKER)\n\n\n"
    return nbformat.v4.new_notebook(
        cells=[
            md("# A notebook\n\n## Predict, then check: a question\n\nWhich one?"),
            code("predicted_read = None"),
            code(check + "check_read(predicted_read)", ["hide-input"], "FEEDBACK_LINE\n"),
            code('check_read("c")  # the answer', ["hide-cell"], "Right: ANSWER_LINE\n"),
            md("## Elsewhere"),
            code("set_up()  # not a predict", ["hide-input"], "SETUP_OUTPUT\n"),
            code("worked_answer()", ["hide-cell"], "WORKED_OUTPUT\n"),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
            "language_info": {"name": "python"},
        },
    )


def test_the_site_shows_the_answer_before_the_checker_source(tmp_path):
    pytest.importorskip("myst_nb")
    setup = (
        'extensions = ["myst_nb"]\nnb_execution_mode = "off"\n'
        'exclude_patterns = ["_build"]\n\n\n'
        "def setup(app):\n    app.add_post_transform(predict_folds_on_the_site())\n"
    )
    (tmp_path / "conf.py").write_text("\n\n".join(conf_parts(HOOK)) + "\n\n" + setup)
    (tmp_path / "index.md").write_text("# Top\n\n```{toctree}\nnb\n```\n")
    nbformat.write(small_notebook(), str(tmp_path / "nb.ipynb"))
    page = (build_html(tmp_path, tmp_path / "_build") / "nb.html").read_text(encoding="utf-8")

    order = [
        "FEEDBACK_LINE",
        "Check your prediction",
        "Right: ANSWER_LINE",
        "How this check works",
        "SOURCE_OF_THE_CHECKER",
    ]
    at = [page.index(text) for text in order]
    assert at == sorted(at), dict(zip(order, at))
    # the answer and the checker each in a closed fold of its own
    folds = re.findall(r"<details([^>]*)>\s*<summary[^>]*>\s*<p[^>]*>([^<]*)</p>", page)
    labels = [label for _, label in folds]
    checker = "How this check works (its code holds the answer)"  # a reader is warned
    assert labels.count("Check your prediction") == labels.count(checker) == 1
    answer = page.index("Check your prediction")
    assert page.index("</details>", answer) > page.index("ANSWER_LINE")
    assert page.index("</details>", answer) < page.index("How this check works")
    assert all(" open" not in attrs for attrs, _ in folds)
    assert page.count('class="cell c2r-check-cell') == 1
    # a hide-input cell that is no predict's check keeps MyST-NB's folds and place
    assert "Show code cell source" in page and "Show code cell content" in page
    assert page.index("SETUP_OUTPUT") < page.index("WORKED_OUTPUT")


def test_every_notebook_predict_is_one_the_site_reorders():
    """Each check cell (``hide-input``, calling its checker with ``predicted_x``) is followed
    at once by its answer cell calling the same checker: the rule the hook finds them by."""
    called = hook()["CALLED"]
    seen = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))):
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            lines = cell.source.strip().splitlines()
            tags = cell.metadata.get("tags", [])
            if "hide-input" not in tags or not re.search(r"\(predicted_\w+\)$", lines[-1]):
                continue
            seen += 1
            name = os.path.basename(path)
            answer = cells[i + 1] if i + 1 < len(cells) else None
            assert answer is not None and "hide-cell" in answer.metadata.get("tags", []), (
                name,
                i,
            )
            first = answer.source.strip().splitlines()[0]
            assert called.match(lines[-1]).group(1) == called.match(first).group(1), (name, i)
    assert seen >= 13, seen  # at least one predict a notebook
