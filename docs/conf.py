"""Sphinx configuration of the caffe2rnn documentation site.

Build with ``make docs`` (or ``python -m sphinx -W -b html docs docs/_build/html``).
The build

* renders the notebooks of ``../notebooks`` with their outputs: MyST-NB runs each one
  (``nb_execution_mode = "cache"``: only notebooks whose code changed run again; the
  cache lives in ``docs/_build/.jupyter_cache``);
* writes the diagrams of every ``caffe2rnn.viz`` view as SVG with
  ``docs/make_diagrams.py`` into ``docs/_static/diagrams``, and the time stepper
  (a kernel-free HTML widget) into ``docs/_static/stepper`` (build outputs, never
  committed); each drawn figure ``fig_<name>.svg`` on a page is linked to its
  ``fig_<name>_full.svg`` (:func:`link_figures_to_full_size`), as the views'
  ``:target:`` links theirs;
* shows each notebook predict as the pages do: the check's feedback, then the
  answer in a fold "Check your prediction", then the checker's source in a
  collapsed fold "How this check works" (:func:`predict_folds_on_the_site`);
* documents the API from the docstrings (autodoc + napoleon);
* has the notebooks' plots drawn as SVG with their text kept as text
  (:func:`plots_as_svg`), so ``scripts/check_site.py`` can measure every label;
* puts this checkout's source on the site as ``caffe2rnn-src.tar.gz``
  (:func:`write_source_archive`), the download the notebooks' "Run this
  notebook" note links, so a reader who has only the site can run them;
* typesets math with a MathJax that ships with the build (the
  ``sphinx-mathjax-offline`` package of requirements-dev.txt copies MathJax 3
  into ``_static/mathjax``), so the site read offline shows formulas, not
  ``\\(t\\)`` (tests/docs/test_docs_build.py opens pages in Chromium with the
  network off and checks).
"""

import filecmp
import os
import posixpath
import re
import shutil
import subprocess
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)
sys.path.insert(0, ROOT)
# The notebook kernels are separate processes: they find caffe2rnn through PYTHONPATH
# even when the package is not installed.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [ROOT, os.environ.get("PYTHONPATH")] if p)

project = "caffe2rnn"
author = "caffe2rnn contributors"
copyright = "2026, the caffe2rnn authors (Caffe2 itself: Facebook, 2017)"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    # MathJax 3 from the package, copied into the build: no CDN (mathjax_path is its).
    "sphinx-mathjax-offline",
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]
myst_enable_extensions = ["colon_fence", "dollarmath", "substitution"]
myst_heading_anchors = 3

nb_execution_mode = "cache"
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# sphinx-book-theme (on pydata-sphinx-theme): a readable text column, a page outline,
# light/dark modes and, on notebook pages, a button to download the .ipynb.
html_theme = "sphinx_book_theme"
html_title = "caffe2rnn"
html_static_path = ["_static"]
html_theme_options = {
    "use_download_button": True,
    "use_fullscreen_button": True,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
# Tables wrap inside the column; every SVG diagram opens full size in a
# pan/zoom viewer (a big one drawn to the column's width has unreadable text).
html_css_files = ["caffe2rnn.css"]
html_js_files = ["caffe2rnn-zoom.js"]


def copy_notebooks():
    """Mirror ../notebooks/*.ipynb into docs/notebooks/ (a build artefact).

    Files are copied only when they changed, so Sphinx and the execution cache
    see an unchanged notebook as unchanged.
    """
    source = os.path.join(ROOT, "notebooks")
    target = os.path.join(DOCS, "notebooks")
    os.makedirs(target, exist_ok=True)
    wanted = sorted(f for f in os.listdir(source) if f.endswith(".ipynb"))
    for name in os.listdir(target):
        if name not in wanted:
            os.remove(os.path.join(target, name))
    for name in wanted:
        src, dst = os.path.join(source, name), os.path.join(target, name)
        if not (os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False)):
            shutil.copyfile(src, dst)


def make_diagrams():
    """Write the viz SVGs; the docs show them, so Graphviz's ``dot`` is required."""
    if shutil.which("dot") is None:
        raise RuntimeError(
            "building the docs needs Graphviz's `dot` program to render the diagrams "
            "(apt-get install graphviz | brew install graphviz | "
            "conda install -c conda-forge graphviz)"
        )
    subprocess.run(
        [
            sys.executable,
            os.path.join(DOCS, "make_diagrams.py"),
            "--out",
            os.path.join(DOCS, "_static", "diagrams"),
            "--stepper-out",
            os.path.join(DOCS, "_static", "stepper"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def plots_as_svg():
    """The notebook kernels draw matplotlib figures as SVG, text as text.

    A PNG plot cannot be checked for readable labels; an SVG with
    ``svg.fonttype: none`` can. Set for the docs build only (through an
    IPython profile and a matplotlibrc under docs/_build), so a notebook run
    elsewhere is untouched.
    """
    settings = os.path.join(DOCS, "_build", "notebook-settings")
    profile = os.path.join(settings, "ipython", "profile_default")
    os.makedirs(profile, exist_ok=True)
    with open(os.path.join(profile, "ipython_kernel_config.py"), "w") as handle:
        handle.write('c.InlineBackend.figure_formats = {"svg"}\n')
    with open(os.path.join(settings, "matplotlibrc"), "w") as handle:
        handle.write("svg.fonttype: none\n")
    os.environ["IPYTHONDIR"] = os.path.join(settings, "ipython")
    os.environ["MATPLOTLIBRC"] = os.path.join(settings, "matplotlibrc")


#: A drawn figure (caffe2rnn.viz.figures) on a page: ``.../_static/diagrams/fig_<name>.svg``.
FIGURE_URI = re.compile(r"(?:^|/)_static/diagrams/(fig_[A-Za-z0-9_]+)\.svg$")


def link_figures_to_full_size(app, doctree):
    """Link each drawn figure's image to its full-size drawing.

    The Graphviz views are written with ``:target: ..._full.svg``; the drawn
    figures ``fig_<name>.svg`` link to ``fig_<name>_full.svg`` here
    (``docs/make_diagrams.py`` writes both, the full one 1.5 times larger), so
    every diagram opens full size on a click, with or without JavaScript
    (``_static/caffe2rnn-zoom.js`` opens the link's SVG in its viewer). A
    figure image without a link gets one; a ``:target:`` naming the page's
    own ``fig_<name>.svg`` is pointed at its ``_full`` file; any other target
    is kept.
    """
    from docutils import nodes

    docname = app.env.docname
    for image in list(doctree.findall(nodes.image)):
        found = FIGURE_URI.search(image.get("uri", ""))
        if found is None:
            continue
        full = "_static/diagrams/%s_full.svg" % found.group(1)
        refuri = posixpath.relpath(full, posixpath.dirname(docname) or ".")
        parent = image.parent
        if isinstance(parent, nodes.reference):
            if FIGURE_URI.search(parent.get("refuri", "")):
                parent["refuri"] = refuri
            continue
        link = nodes.reference("", "", refuri=refuri, classes=["image-reference"])
        image.replace_self(link)
        link += image


#: The source archive's name on the site (the site's root folder).
SOURCE_ARCHIVE = "caffe2rnn-src.tar.gz"
SOURCE_ARCHIVE_DIR = os.path.join(DOCS, "_build", "source-archive")


def source_files():
    """The files a fresh clone of this checkout holds, relative to its root.

    In a git checkout: ``git ls-files`` (tracked, plus untracked files that are not
    ignored, so the archive matches the sources the site was built from). Elsewhere
    (a copy, or an unpacked archive): every file except what ``.gitignore`` names —
    the build outputs (``.venv``, kernels, ``docs/_build`` …).
    """
    try:
        listing = subprocess.run(
            ["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True,
            capture_output=True,
        ).stdout.decode()
        names = [name for name in listing.split("\0") if name]
        return sorted(n for n in names if os.path.isfile(os.path.join(ROOT, n)))
    except (OSError, subprocess.CalledProcessError):
        pass
    import fnmatch

    with open(os.path.join(ROOT, ".gitignore")) as handle:
        patterns = [p.strip() for p in handle if p.strip() and not p.startswith("#")]

    def ignored(relative):
        parts = relative.split("/")
        for pattern in patterns:
            anchored = pattern.strip("/")
            if "/" in anchored:  # a path from the root, or a folder and its contents
                if fnmatch.fnmatch(relative, anchored) or relative.startswith(anchored + "/"):
                    return True
                if fnmatch.fnmatch(relative, anchored + "/*"):
                    return True
            elif any(fnmatch.fnmatch(part, anchored) for part in parts):
                return True
        return relative.startswith(".git/") or relative == ".git"

    def ignores_itself(folder):  # a tool's cache (.mypy_cache, .ruff_cache): "*"
        try:
            with open(os.path.join(folder, ".gitignore")) as handle:
                return "*" in (line.strip() for line in handle)
        except OSError:
            return False

    found = []
    for folder, subfolders, files in os.walk(ROOT):
        relative_folder = os.path.relpath(folder, ROOT).replace(os.sep, "/")
        prefix = "" if relative_folder == "." else relative_folder + "/"
        subfolders[:] = [
            d
            for d in subfolders
            if not ignored(prefix + d) and not ignores_itself(os.path.join(folder, d))
        ]
        found += [prefix + f for f in files if not ignored(prefix + f)]
    return sorted(found)


def write_source_archive():
    """Write ``caffe2rnn-src.tar.gz`` (every file of :func:`source_files` under
    ``caffe2rnn/``) into a folder the build copies to the site's root
    (``html_extra_path``)."""
    import tarfile

    os.makedirs(SOURCE_ARCHIVE_DIR, exist_ok=True)
    target = os.path.join(SOURCE_ARCHIVE_DIR, SOURCE_ARCHIVE)
    with tarfile.open(target + ".part", "w:gz") as archive:
        for name in source_files():
            archive.add(os.path.join(ROOT, name), arcname="caffe2rnn/" + name, recursive=False)
    os.replace(target + ".part", target)


html_extra_path = [SOURCE_ARCHIVE_DIR]


def load_docs_module(name):
    """A module of this folder (docs/), loaded by path: conf.py's helpers that the
    tests import too, without running conf.py's build steps."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(DOCS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_WORDS, _CODE_CELLS = load_docs_module("path_length").path_length(DOCS)
myst_substitutions = {
    "path_words": f"{round(_WORDS, -3):,}",
    "path_code_cells": str(_CODE_CELLS),
}


#: The start of a path notebook's title: "# Step 9 · The forward loop in NumPy".
STEP_TITLE = re.compile(r"Step \d+ · ")


def drop_step_from_titles(app, doctree):
    """Show a path notebook's title without its "Step 9 · ".

    A notebook's heading names its step for a reader who opens the ``.ipynb`` itself
    (JupyterLab, an editor); on the site the numbered toctree of ``index.md`` already
    numbers the page, in the sidebar and before the heading ("9. The forward loop in
    NumPy"), so the prefix would say it twice. Connected before Sphinx collects the
    page's title (priority 400 < 500), so the sidebar, links and ``<title>`` all drop
    it. tests/docs/test_run_notebook.py checks that each heading's step is the one the
    toctree gives."""
    from docutils import nodes

    if not app.env.docname.startswith("notebooks/"):
        return
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        text = title.astext() if title is not None else ""
        match = STEP_TITLE.match(text)
        if match and isinstance(title[0], nodes.Text):
            title[0] = nodes.Text(title[0].astext()[match.end() :])
        return  # the page's title: its first section


#: The function a code line calls first: ``check_read`` of ``check_read("c")  # the answer``.
CALLED = re.compile(r"\s*([A-Za-z_]\w*)\(")

#: The labels of a notebook predict's two folds on the site.
ANSWER_FOLD = ("Check your prediction", "Hide the answer")
CHECK_FOLD = ("How this check works (its code holds the answer)", "Hide how this check works")


def called(cell, line):
    """The name of the function that a code cell's first or last line (``line`` 0 or -1)
    calls, or None (``cell``: MyST-NB's ``cell_code`` container, its source folded or not)."""
    from docutils import nodes

    source = cell.next_node(
        lambda node: (
            isinstance(node, nodes.Element) and node.get("nb_element") == "cell_code_source"
        )
    )
    lines = [text for text in (source.astext() if source else "").splitlines() if text.strip()]
    found = CALLED.match(lines[line]) if lines else None
    return found.group(1) if found else None


def predict_pairs(doctree):
    """Each notebook predict's check cell and answer cell, as MyST-NB parsed them.

    A notebook's predict (CONTRIBUTING.md) is a check cell tagged ``hide-input`` whose last
    line calls its checker with the reader's prediction (``check_read(predicted_read)``),
    followed at once by a ``hide-cell`` cell calling the same checker with the answer
    (``check_read("c")  # the answer``)."""
    from docutils import nodes

    def is_cell(node, mode):
        return (
            isinstance(node, nodes.container)
            and node.get("nb_element") == "cell_code"
            and node.get("hide_mode") == mode
        )

    for check in list(doctree.findall(nodes.container)):
        if not is_cell(check, "input"):
            continue
        answer = check.next_node(descend=False, siblings=True)
        if is_cell(answer, "all") and called(check, -1) and called(check, -1) == called(answer, 0):
            yield check, answer


def predict_folds_on_the_site():
    """The Sphinx post-transform that orders a notebook predict's folds for a reader.

    MyST-NB shows a ``hide-input`` cell's source in a fold above its output and a
    ``hide-cell`` cell in a fold of its own, both labelled "Show code cell …". For a
    predict that puts the checker's source (caffe2rnn's machinery) first, and the answer
    only in the next fold. Here, on every notebook page and with no notebook edited, a
    predict reads: the check's output (the feedback), then the answer's fold labelled
    "Check your prediction" (as a page's ``<details class="c2r-answer">``), then the
    checker's source in a collapsed fold of its own, "How this check works".
    tests/docs/test_predict_folds.py builds a small site and checks the order."""
    from myst_nb.sphinx_ import HideCodeCellNode
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class PredictFolds(SphinxPostTransform):
        default_priority = 200  # after MyST-NB's HideInputCells (199) made the folds
        formats = ("html",)

        def run(self, **kwargs):
            from docutils import nodes

            for check, answer in list(predict_pairs(self.document)):
                source, fold = check[0], answer[0]
                folds = (source, fold)
                if not all(isinstance(node, HideCodeCellNode) for node in folds):
                    continue
                fold["prompt_show"], fold["prompt_hide"] = ANSWER_FOLD
                fold["classes"].append("c2r-nb-answer")
                check.remove(source)
                source["prompt_show"], source["prompt_hide"] = CHECK_FOLD
                source["classes"].append("c2r-check-source")
                # inside a "cell" div, as MyST-NB's fold styles expect
                holder = nodes.container(classes=["cell", "c2r-check-cell"])
                holder += source
                answer.parent.insert(answer.parent.index(answer) + 1, holder)

    return PredictFolds


def setup(app):
    app.connect("doctree-read", drop_step_from_titles, priority=400)
    app.connect("doctree-read", link_figures_to_full_size)
    app.add_post_transform(predict_folds_on_the_site())


copy_notebooks()
write_source_archive()
make_diagrams()
plots_as_svg()
