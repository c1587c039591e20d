"""The docs site builds with warnings as errors from a clean copy, and renders.

The copy holds exactly the files a fresh clone would (``git ls-files``, plus
untracked files that are not ignored, so uncommitted work is tested too): no
generated protobuf module, no compiled kernels, no docs build or notebook
cache. ``sphinx-build -W`` then executes every notebook (MyST-NB), renders the
diagrams and the API pages. The last test opens the result in headless
Chromium with ``scripts/check_site.py`` (skipped when no Chromium is
installed). About a minute on 2 cores, hence ``slow``.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")
pytest.importorskip("sphinx_book_theme")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = [pytest.mark.slow, pytest.mark.needs_dot]


def clean_clone_files():
    """The files a fresh clone holds (tracked + untracked-not-ignored), relative to ROOT;
    a file deleted in the work tree but not yet in git is left out."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = filter(None, listing.split("\0"))
    return [name for name in names if os.path.isfile(os.path.join(ROOT, name))]


def clean_copy(destination):
    """Copy the files of a fresh clone (:func:`clean_clone_files`)."""
    for relative in clean_clone_files():
        source = os.path.join(ROOT, relative)
        target = os.path.join(destination, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the files of a clean clone")
    copy = tmp_path_factory.mktemp("clean_clone")
    clean_copy(copy)
    assert not (copy / "docs" / "_build").exists()
    environment = dict(os.environ, PYTHONPATH=str(copy))
    environment.pop("CAFFE2RNN_KERNELS", None)
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            # A hang guard, not a time limit: Caffe2's test files run beside
            # this build (tests/caffe2_suites/conftest.py), sharing its cores.
            "-D",
            "nb_execution_timeout=600",
            "-b",
            "html",
            "docs",
            "docs/_build/html",
        ],
        cwd=copy,
        env=environment,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    return copy, build


def test_sphinx_build_succeeds_with_warnings_as_errors(built_site):
    copy, build = built_site
    assert build.returncode == 0, "sphinx-build -W failed:\n%s\n%s" % (
        build.stdout[-3000:],
        build.stderr[-6000:],
    )
    assert (copy / "docs" / "_build" / "html" / "index.html").exists()


def test_every_notebook_is_rendered_with_outputs(built_site):
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    pages = sorted((copy / "docs" / "_build" / "html" / "notebooks").glob("[01]*.html"))
    notebooks = sorted(os.listdir(os.path.join(ROOT, "notebooks")))
    assert [p.name[:2] for p in pages] == [n[:2] for n in notebooks if n.endswith(".ipynb")]
    assert len(pages) >= 14
    for page in pages:
        text = page.read_text()
        assert 'class="output' in text, "%s has no executed outputs" % page.name
        # an error's output (MyST-NB renders it with the ipythontb lexer), or a traceback a
        # cell printed; the prose may quote Caffe2's report "Traceback for operator ..."
        for sign in ("highlight-ipythontb", "Traceback (most recent call last)"):
            assert sign not in text, "%s shows a traceback (%s)" % (page.name, sign)
    notebook5 = (
        copy / "docs" / "_build" / "html" / "notebooks" / "05_recurrent_network_op.html"
    ).read_text()
    # the drawings (the op, its timeline): SVG files, or (page-width figures with their
    # full size) data URIs; the time stepper, inline <svg>, is on concepts/time-stepper.html
    assert len(re.findall(r'<img[^>]+(?:\.svg"|src="data:image/svg\+xml)', notebook5)) >= 2


def test_no_notebook_prints_the_cnn_model_helper_deprecation_banner(built_site):
    """Notebooks build with ModelHelper + brew; 08 and 12, about the 2017 API,
    explain the banner once in their text instead of printing it."""
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    for page in sorted((copy / "docs" / "_build" / "html" / "notebooks").glob("[01]*.html")):
        outputs = "".join(re.findall(r'<div class="cell_output.*?</div>', page.read_text(), re.S))
        assert "DEPRECATE WARNING" not in outputs, page.name


def test_the_site_carries_its_own_source_and_links_it_for_notebook_01(built_site):
    """A reader who has only the site can run the notebooks: the site's root holds
    ``caffe2rnn-src.tar.gz`` — exactly the files of a fresh clone (here the clean
    copy has no ``.git``, so docs/conf.py lists them by ``.gitignore``), no build
    output — and "How to read this site", which notebook 01's run line links, links it."""
    import tarfile

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    html = copy / "docs" / "_build" / "html"
    with tarfile.open(html / "caffe2rnn-src.tar.gz") as archive:
        names = set(archive.getnames())
    expected = {"caffe2rnn/" + name for name in clean_clone_files()}
    assert names == expected, (sorted(names - expected)[:10], sorted(expected - names)[:10])
    for needed in ("Makefile", "scripts/run_notebook.py", "notebooks/02_gradients.ipynb"):
        assert "caffe2rnn/" + needed in names
    page = (html / "notebooks" / "01_netdef_and_workspace.html").read_text()
    assert 'href="../how-to-read.html#running-a-notebook"' in page
    assert 'href="caffe2rnn-src.tar.gz"' in (html / "how-to-read.html").read_text()


def _check_site():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import check_site  # scripts/check_site.py

    return check_site


def test_every_embedded_diagram_is_readable_at_the_column_width(built_site, capsys):
    """Each diagram a page or notebook embeds, measured as the theme shows it:
    median label >= 9 px and smallest >= 7 px in the 688 px article column."""
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    check_site = _check_site()
    rows = check_site.diagram_report(str(copy / "docs" / "_build" / "html"))
    with capsys.disabled():  # the table, in the test log
        print()
        check_site.print_report(rows)
    pages = {row[0] for row in rows}
    assert {"concepts/links-and-aliases.html", "notebooks/10_attention.html"} <= pages
    assert len(rows) >= 40, "fewer diagrams than the site embeds: %d" % len(rows)
    failed = ["%s %s: %s" % (row[0], row[1], row[-1]) for row in rows if row[-1]]
    assert not failed, failed


def test_concept_pages_show_the_svg_diagrams(built_site):
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    html = copy / "docs" / "_build" / "html"
    page = (html / "concepts" / "links-and-aliases.html").read_text()
    for name in ("fig_forward_rows.svg",):  # the timeline view was the same picture, dropped
        assert ('src="../_images/%s"' % name) in page
        assert (html / "_images" / name).read_text().lstrip().startswith(("<?xml", "<svg"))


def test_index_links_every_learner_question(built_site):
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    index = (copy / "docs" / "_build" / "html" / "index.html").read_text()
    table = index.split('id="questions-learners-asked-and-where-they-are-answered"')[1]
    assert table.count("<tr") >= 11  # header + the ten questions
    for target in re.findall(r'href="((?:concepts/[^"#]+)|start-here\.html)#([^"]+)"', table):
        page = (copy / "docs" / "_build" / "html" / target[0]).read_text()
        assert 'id="%s"' % target[1] in page, "index links to a missing anchor %s" % (target,)


def test_site_renders_in_headless_chromium(built_site):
    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("no Chromium installed (apt-get install chromium)")
    check = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "scripts", "check_site.py"),
            "--html",
            str(copy / "docs" / "_build" / "html"),
            "--out",
            str(copy / "site-check"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "One step net, run T times" in check.stdout


def _browser_or_skip():
    from browser import missing_reason  # tests/docs/browser.py (on sys.path)

    reason = missing_reason()
    if reason:
        pytest.skip(reason)


TABLE_OVERFLOW = """
(function () {
  var column = document.querySelector('.bd-article') || document.body;
  var limit = column.getBoundingClientRect().right + 1;
  var bad = [];
  document.querySelectorAll('.bd-article table').forEach(function (table) {
    var box = table.getBoundingClientRect();
    var holder = table.parentElement;
    if (box.width === 0) { return; }
    if (box.right > limit || table.scrollWidth > holder.clientWidth + 1) {
      bad.push((table.innerText || '').slice(0, 60).replace(/\\s+/g, ' ')
               + ' (' + Math.round(box.width) + 'px in ' + holder.clientWidth + 'px)');
    }
  });
  return bad;
})()
"""


def test_no_table_on_the_site_overflows_its_container(built_site):
    from browser import Browser

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    _browser_or_skip()
    html = copy / "docs" / "_build" / "html"
    pages = sorted(
        p
        for p in html.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts and p.name != "genindex.html"
    )
    overflowing = {}
    with Browser(width=1280, height=900) as browser:
        for page in pages:
            browser.open(str(page))
            bad = browser.evaluate(TABLE_OVERFLOW)
            if bad:
                overflowing[str(page.relative_to(html))] = bad
    assert not overflowing, overflowing


def test_the_time_stepper_page_moves_in_a_real_browser(built_site):
    from browser import Browser

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    _browser_or_skip()
    page = copy / "docs" / "_build" / "html" / "concepts" / "time-stepper.html"
    rows = (
        "Array.from(document.querySelectorAll('.c2r-frame:not([hidden]) g[id^=\"a_hl_\"]'))"
        ".map(function (g) { return g.id; }).sort()"
    )
    with Browser() as browser:
        browser.open(str(page))
        assert browser.evaluate("document.querySelectorAll('.c2r-stepper').length") == 1
        browser.click(".c2r-stepper input[type=range]")
        browser.press("Home", "Home", 36)
        first = browser.evaluate(rows)
        browser.press("ArrowRight", "ArrowRight", 39)
        second = browser.evaluate(rows)
        assert first and second and first != second
        browser.click(".c2r-stepper input[value=backward]")
        backward = browser.evaluate(rows)
        assert backward and backward != second
        caption = browser.evaluate("document.querySelector('.c2r-caption').textContent")
        assert caption.startswith("backward pass, timestep t = ")


COLUMN_AND_DIAGRAMS = """
(function () {
  var article = document.querySelector('.bd-article');
  var style = getComputedStyle(article);
  var column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  var shown = [];
  article.querySelectorAll('img').forEach(function (img) {
    var src = img.getAttribute('src') || '';
    if (!/\\.svg$|^data:image\\/svg/.test(src) || img.closest('.c2r-full')) { return; }
    shown.push(img.getBoundingClientRect().width);
  });
  article.querySelectorAll('.c2r-frame:not([hidden]) svg').forEach(function (svg) {
    shown.push(svg.getBoundingClientRect().width);
  });
  return [column, shown];
})()
"""


def test_the_check_measures_what_a_browser_shows(built_site):
    """The theme's column is the check's (688 px beside a contents sidebar, 960
    without), and every diagram is shown as wide as the check assumes (so its
    label sizes are the reader's)."""
    from browser import Browser

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    _browser_or_skip()
    check_site = _check_site()
    html = copy / "docs" / "_build" / "html"
    pages = [
        "concepts/recurrent-op.html",
        "concepts/links-and-aliases.html",
        "concepts/time-stepper.html",
        "notebooks/10_attention.html",
    ]
    with Browser(width=1280, height=900) as browser:
        for page in pages:
            browser.open(str(html / page))
            column, shown = browser.evaluate(COLUMN_AND_DIAGRAMS)
            assert abs(column - check_site.column_px((html / page).read_text())) <= 1, (
                page,
                column,
            )
            diagrams = check_site.page_diagrams(
                (html / page).read_text(), str((html / page).parent)
            )
            expected = [check_site.measure(d)[1] for d in diagrams if not d["full"]]
            if page.endswith("time-stepper.html"):  # one stepper frame is visible
                frames = [d for d in diagrams if d["name"] == "stepper frame"]
                expected = [check_site.measure(d)[1] for d in diagrams
                            if not d["full"] and d["name"] != "stepper frame"]  # fmt: skip
                expected.append(check_site.measure(frames[0])[1])
            assert len(shown) == len(expected), (page, shown, expected)
            for got, want in zip(shown, expected):
                assert abs(got - want) <= 2, (page, got, want)


def test_every_diagram_opens_full_size(built_site):
    from browser import Browser

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    _browser_or_skip()
    page = copy / "docs" / "_build" / "html" / "concepts" / "links-and-aliases.html"
    with Browser() as browser:
        browser.open(str(page))
        total = browser.evaluate(
            "document.querySelectorAll('.bd-article img[src$=\".svg\"]').length"
        )
        zoomable = browser.evaluate("document.querySelectorAll('img.c2r-zoomable').length")
        assert total >= 1 and zoomable == total
        # every diagram links its full-size drawing: a view (the timeline) and a
        # drawn figure (fig_forward_rows, linked by docs/conf.py) alike
        assert (
            browser.evaluate(
                "document.querySelectorAll('.bd-article a[href$=\"_full.svg\"] img').length"
            )
            == total
        )
        browser.click('a[href$="_full.svg"] img.c2r-zoomable')
        # The full-size SVG loads after the click: wait for it (a loaded
        # machine takes a moment), then it must be shown unscaled.
        deadline = time.monotonic() + 10
        while True:
            shown = browser.evaluate(
                "(function(){var v=document.querySelector('.c2r-viewer img');"
                "return v ? [v.style.transform, v.naturalWidth] : null;})()"
            )
            if shown is None or shown[1] > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert shown is not None and "scale(1)" in shown[0] and shown[1] > 0
        opened = browser.evaluate("document.querySelector('.c2r-viewer img').src")
        assert opened.endswith("_full.svg")  # the page shows the page layout; a click, full size
        browser.press("Escape", "Escape", 27)
        assert browser.evaluate("document.querySelector('.c2r-viewer')") is None
        # a notebook's figure: a click opens the drawing in its "full size" box
        browser.open(str(copy / "docs" / "_build" / "html" / "notebooks" / "10_attention.html"))
        browser.click(".c2r-figure img.c2r-diagram")
        full = browser.evaluate("document.querySelector('.c2r-figure .c2r-full img').src")
        assert browser.evaluate("document.querySelector('.c2r-viewer img').src") == full


MATH_STATE = r"""
(function () {
  var article = document.querySelector('.bd-article');
  var typeset = article.querySelectorAll('mjx-container').length;
  var errors = article.querySelectorAll('mjx-merror').length;
  var text = article.innerText;
  var raw = (text.match(/\\\(|\\\[|\$\$/g) || []).length;
  var script = Array.from(document.scripts).map(function (s) { return s.src; })
      .filter(function (src) { return /mathjax/i.test(src); });
  return [typeset, errors, raw, script, !!(window.MathJax && MathJax.startup)];
})()
"""


def test_math_is_typeset_offline_in_a_real_browser(built_site):
    """Issue 31: the site read offline shows formulas, not raw TeX. MathJax is
    bundled into the build (sphinx-mathjax-offline); Chromium opens the pages with
    the network switched off and every formula must be typeset, none left raw."""
    from browser import Browser

    copy, build = built_site
    assert build.returncode == 0, build.stderr[-3000:]
    html = copy / "docs" / "_build" / "html"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()
    for page in html.rglob("*.html"):
        text = page.read_text(errors="replace")
        assert not re.search(r"<script[^>]+src=\"https?://[^\"]*mathjax", text, re.I), page
    _browser_or_skip()
    pages = ["concepts/cells.html", "start-here.html", "concepts/recurrent-gradient.html"]
    with Browser(offline=True) as browser:
        for page in pages:
            browser.open(str(html / page))
            deadline = time.monotonic() + 30
            while True:  # MathJax typesets after the load event
                typeset, errors, raw, scripts, started = browser.evaluate(MATH_STATE)
                if (typeset and not raw) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert scripts and all(s.startswith("file://") for s in scripts), (page, scripts)
            assert started, "%s: MathJax did not start offline" % page
            assert typeset >= 3 and raw == 0 and errors == 0, (page, typeset, raw, errors)
