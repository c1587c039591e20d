"""Check the built docs site: every diagram readable where it stands, and the pages render.

Run after ``make docs``:

    python scripts/check_site.py [--html docs/_build/html] [--out docs/_build/site-check]
    python scripts/check_site.py --diagrams     # only the label sizes: no browser needed

**Diagrams** (no browser needed; ``make test`` runs it on a fresh build, see
``tests/docs/test_docs_build.py``): every diagram a page embeds — an ``<img>`` of
an SVG file or of an SVG data URI (notebook outputs), an inline ``<svg>`` (the
time stepper's frames) — is measured as the theme shows it: its width on the
page (its intrinsic width, limited to the article column of
:data:`COLUMN_PX` pixels unless it is a full-size drawing behind a click, or
the width the page gives it; :data:`WIDE_COLUMN_PX` on a page without the
contents sidebar), and the size of each of its text labels at that width. A
diagram fails when its median label is under :data:`MEDIAN_PX` or its smallest
under :data:`SMALLEST_PX` (:data:`FIGURE_SMALLEST_PX` for a drawn figure); a
raster image (PNG) in an article fails too, since
its labels cannot be measured. The table of every diagram
is printed; the exit status is 1 on a failure.

For a few pages — the index, concept pages with SVG diagrams, the time stepper,
the bug plots, the glossary and a notebook page — Chromium loads the page
(``--dump-dom``: the DOM after scripts ran) and takes a screenshot. The script
reports each page's ``<title>``, how many SVG images it shows, and for each of
those that the file exists and that Chromium itself parses it as an ``<svg>``
document. It exits 1 if a page has no title, a page that should show diagrams
has none, or an SVG does not load; 2 if no Chromium is installed (Debian:
``apt-get install chromium``). Moving the time stepper and measuring tables
needs a browser that can be driven: ``tests/docs`` does that over DevTools.

Look at the screenshots (PNG, in ``--out``) to see what a reader sees.
"""

import argparse
import base64
import html
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from caffe2rnn.viz.sizing import PAGE_PX  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: The article column of the docs theme at a 1280 px window, in CSS pixels,
#: on a page with its contents sidebar on the right (the page layouts are made
#: for it; tests/docs checks both widths in a real browser) ...
COLUMN_PX = PAGE_PX
#: ... and on a page without one (no sections: the theme drops the sidebar).
WIDE_COLUMN_PX = 960
#: Readable where it stands: the median label at least this many pixels...
MEDIAN_PX = 9.0
#: ... and the smallest at least this many.
SMALLEST_PX = 7.0
#: A drawn figure (``caffe2rnn.viz.figures``: ``fig_<name>.svg``, or one shown by a
#: notebook) is held to more: every label, subscripts included, at least this many
#: pixels where it stands (the round-6 readers asked for 11 px; the figures' smallest
#: size, ``style.NOTE``). The Graphviz views keep the two rules above.
FIGURE_SMALLEST_PX = 10.5
#: How a drawn figure's SVG starts its drawing (``caffe2rnn.viz.figures.svg.Canvas``):
#: a notebook shows one inline, without a file name.
_DRAWN_MARK = '<g font-family="Helvetica, Arial'
#: A page-width time stepper sits in a box with a border and padding (docs CSS).
STEPPER_INSET_PX = 21
#: A notebook's output area is this much narrower than the column (MyST-NB's CSS).
OUTPUT_INSET_PX = 16

# (page, how many SVG images it must show at least, screenshot height in pixels:
# tall enough to reach the first diagram)
PAGES = [
    ("index.html", 0, 1800),
    ("start-here.html", 2, 4200),
    ("concepts/models.html", 1, 2400),
    ("concepts/recurrent-net.html", 1, 4200),
    ("concepts/recurrent-op.html", 1, 3400),
    ("concepts/recurrent-gradient.html", 1, 3000),
    ("concepts/recurrent-gradient-plumbing.html", 2, 2400),
    ("concepts/links-and-aliases.html", 1, 3600),
    # the stepper is inline SVG; its two other drawings are links to full-size files
    ("concepts/time-stepper.html", 0, 4400),
    ("concepts/cells.html", 2, 2400),
    ("concepts/history.html", 2, 2400),
    ("concepts/bug-gallery.html", 4, 2400),
    ("glossary.html", 1, 3600),
    ("notebooks/05_recurrent_network_op.html", 1, 7000),
    ("notebooks/10_attention.html", 2, 9000),
]


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, profile, *args, timeout=120):
    """Run headless Chromium once; return its stdout.

    ``--no-sandbox`` because CI containers run as root, where Chromium's
    sandbox refuses to start; a private profile directory keeps runs apart.
    """
    command = [
        browser,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--hide-scrollbars",
        "--user-data-dir=" + profile,
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(
            "%s failed (%d): %s" % (" ".join(command), done.returncode, done.stderr.strip()[-2000:])
        )
    return done.stdout


def svg_sources(dom):
    """The ``src`` of every ``<img>`` (or ``<object data>``) that is an SVG: a
    file, or a data URI (a notebook's page-width drawings; not their full size)."""
    dom = re.sub(r'<details class="c2r-full">.*?</details>', "", dom, flags=re.S)
    sources = re.findall(r'<img\b[^>]*\bsrc="([^"]+\.svg|data:image/svg\+xml[^"]+)"', dom)
    sources += re.findall(r'<object\b[^>]*\bdata="([^"]+\.svg)"', dom)
    return [html.unescape(s) for s in sources]


def check_page(browser, profile, html_dir, page, min_svgs, height, out_dir):
    """Load one page; return (report lines, problems)."""
    path = os.path.join(html_dir, page)
    if not os.path.exists(path):
        return [], ["%s: not built (%s missing)" % (page, path)]
    url = "file://" + os.path.abspath(path)
    dom = chromium(browser, profile, "--virtual-time-budget=5000", "--dump-dom", url)
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    title = html.unescape(title.group(1)).strip() if title else ""
    shot = os.path.join(out_dir, page.replace("/", "_").replace(".html", ".png"))
    chromium(browser, profile, "--window-size=1280,%d" % height, "--screenshot=" + shot, url)

    problems = []
    if not title:
        problems.append("%s: no <title>" % page)
    sources = svg_sources(dom)
    if len(sources) < min_svgs:
        problems.append("%s: %d SVG images, expected at least %d" % (page, len(sources), min_svgs))
    lines = [
        "%s" % page,
        "    title      : %s" % title,
        "    SVG images : %d" % len(sources),
        "    screenshot : %s" % shot,
    ]
    for source in sources:
        if source.startswith("data:"):  # inline: it must parse as SVG
            text = base64.b64decode(source.split(",", 1)[1])
            ok = ET.fromstring(text).tag.endswith("svg")
            lines.append(
                "      %-8s notebook output (%d bytes)" % ("ok" if ok else "BROKEN", len(text))
            )
            if not ok:
                problems.append("%s: a notebook output is not an SVG" % page)
            continue
        svg = os.path.abspath(os.path.join(os.path.dirname(path), source))  # a file:// URL
        if not os.path.exists(svg):
            problems.append("%s: SVG %s missing" % (page, source))
            continue
        # Chromium opening the SVG document itself: its DOM must be an <svg>.
        parsed = chromium(browser, profile, "--dump-dom", "file://" + svg)
        ok = re.search(r"<svg\b", parsed) is not None and "parsererror" not in parsed
        if not ok:
            problems.append("%s: Chromium did not parse %s as SVG" % (page, source))
        lines.append(
            "      %-8s %s (%d bytes)"
            % ("ok" if ok else "BROKEN", os.path.basename(source), os.path.getsize(svg))
        )
    return lines, problems


# -- diagrams: label sizes at the width they are shown -----------------------------------

_PX_PER = {"pt": 4 / 3, "px": 1.0, "": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 9.6 / 2.54}
_LENGTH = re.compile(r"\s*([\d.]+)\s*([a-z]*)")
_SCALE = re.compile(r"scale\(\s*([-\d.e]+)(?:[\s,]+([-\d.e]+))?\s*\)")
_FONT = re.compile(r"font(?:-size)?\s*:\s*(?:[a-z]+\s+)*([\d.]+)(px|pt)?")


def svg_labels(svg_text):
    """(intrinsic width in CSS px, viewBox width, [label font sizes in user units])."""
    root = ET.fromstring(svg_text)
    number, unit = _LENGTH.match(root.get("width", "0")).groups()
    intrinsic = float(number) * _PX_PER.get(unit, 1.0)
    view_box = root.get("viewBox")
    view_width = float(view_box.split()[2]) if view_box else intrinsic
    sizes = []

    def walk(element, scale):
        for found in _SCALE.finditer(element.get("transform") or ""):
            scale *= abs(float(found.group(1)))
        if element.tag.rsplit("}", 1)[-1] == "text" and "".join(element.itertext()).strip():
            size = element.get("font-size")
            if size is None:
                found = _FONT.search(element.get("style") or "")
                size = found and found.group(1)
            if size is not None:
                sizes.append(float(size) * scale)
        for child in element:
            walk(child, scale)

    walk(root, 1.0)
    return intrinsic, view_width, sizes


def _article(page_html):
    start = page_html.find('<article class="bd-article"')
    end = page_html.find("</article>", start)
    return page_html[start:end] if start >= 0 else ""


def _inside(text, position, opening, closing):
    """Whether ``position`` lies inside an element opened by ``opening`` (a regex).

    Other elements of the same tag (a collapsed notebook cell is a ``<details>`` too) open
    and close in between; each ``closing`` closes the innermost one, whichever it is."""
    tag = re.match(r"<(\w+)", opening).group(1)
    stack = []
    for found in re.finditer(r"<%s\b[^>]*>|%s" % (tag, closing), text[:position]):
        if re.match(closing, found.group(0)):
            if stack:
                stack.pop()
        else:
            stack.append(bool(re.match(opening, found.group(0))))
    return any(stack)


def column_px(page_html):
    """The article column of a built page: narrower when the theme shows the
    page's contents on the right."""
    return COLUMN_PX if 'class="bd-sidebar-secondary' in page_html else WIDE_COLUMN_PX


def _in_output(article, position):
    """Whether ``position`` is in a notebook cell's output (not its input)."""
    before = article[:position]
    output = before.rfind('<div class="cell_output')
    if output < 0:
        return False
    # inside it while that output's <div> is still open: a figure after the cell (or
    # in a later cell's input) is not in its output
    depth = 0
    for tag in re.finditer(r"<div\b|</div>", before[output:]):
        depth += -1 if tag.group(0) == "</div>" else 1
        if depth == 0:
            return False
    return True


def page_diagrams(page_html, page_dir):
    """Every diagram of one built page: dicts with ``name``, ``svg`` (text or
    None for a raster image), ``shown`` (a rule: ``"column"``, ``"natural"``,
    ``"stepper"`` or a width in px), ``column`` (the page's column, px) and
    ``full`` (a full-size drawing behind a click)."""
    article = _article(page_html)
    column = column_px(page_html)
    found = []
    for match in re.finditer(r"<img\b[^>]*>", article):
        tag = match.group(0)
        width = column - (OUTPUT_INSET_PX if _in_output(article, match.start()) else 0)
        source = html.unescape(re.search(r'\bsrc="([^"]*)"', tag).group(1))
        full = _inside(article, match.start(), r'<details class="c2r-full"', r"</details>")
        style = re.search(r"(?<![-\w])width:\s*([\d.]+)%", tag)
        shown = "natural" if full else (width * float(style.group(1)) / 100 if style else
                                        "column")  # fmt: skip
        if source.startswith("data:image/svg+xml;base64,"):
            svg = base64.b64decode(source.split(",", 1)[1]).decode("utf-8")
            name = "notebook output" + (" (full size, behind a click)" if full else "")
        elif source.endswith(".svg"):
            with open(os.path.join(page_dir, source), encoding="utf-8") as handle:
                svg = handle.read()
            name = os.path.basename(source)
        elif "_images/" in source or source.startswith("data:image/"):
            svg, name = None, os.path.basename(source.split("?")[0])[:40]  # a raster figure
        else:
            continue  # the theme's own icons
        found.append({"name": name, "svg": svg, "shown": shown, "full": full, "column": width})
    for match in re.finditer(r"<svg\b.*?</svg>", article, re.S):
        stepper = re.findall(r'<div class="c2r-stepper( c2r-page)?"', article[: match.start()])
        shown = "stepper" if stepper and stepper[-1] else "natural" if stepper else "column"
        width = column - (OUTPUT_INSET_PX if _in_output(article, match.start()) else 0)
        found.append({"name": "stepper frame" if stepper else "inline SVG", "svg": match.group(0),
                      "shown": shown, "full": False, "column": width})  # fmt: skip
    return found


def measure(diagram):
    """(intrinsic px, shown px, median label px, smallest label px) of one diagram."""
    intrinsic, view_width, sizes = svg_labels(diagram["svg"])
    rule, column = diagram["shown"], diagram.get("column", COLUMN_PX)
    if rule == "column":
        shown = min(intrinsic, column)
    elif rule == "stepper":
        shown = min(intrinsic, column - STEPPER_INSET_PX)
    elif rule == "natural":
        shown = intrinsic
    else:
        shown = float(rule)
    px = [size * shown / view_width for size in sizes]
    if not px:
        return intrinsic, shown, 0.0, 0.0
    return intrinsic, shown, statistics.median(px), min(px)


def is_drawn_figure(diagram):
    """Is ``diagram`` one of the drawn figures (by its file name, or by how its SVG is made)?"""
    name, svg = diagram.get("name") or "", diagram.get("svg") or ""
    return name.startswith("fig_") or _DRAWN_MARK in svg


def smallest_allowed(diagram):
    """The smallest label, in px where shown, ``diagram`` may have."""
    return FIGURE_SMALLEST_PX if is_drawn_figure(diagram) else SMALLEST_PX


def diagram_report(html_dir):
    """Rows (page, diagram, intrinsic px, shown px, median px, smallest px, problem or "")
    for every diagram of the built site."""
    rows = []
    for directory, _, files in sorted(os.walk(html_dir)):
        relative = os.path.relpath(directory, html_dir)
        if relative.split(os.sep)[0] in ("_static", "_sources", "_images"):
            continue
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            page = os.path.normpath(os.path.join(relative, name))
            for diagram in page_diagrams(text, directory):
                if diagram["svg"] is None:
                    rows.append(
                        (page, diagram["name"], 0, 0, 0, 0, "raster: labels not measurable")
                    )
                    continue
                intrinsic, shown, median, smallest = measure(diagram)
                problem = ""
                floor = smallest_allowed(diagram)
                if median < MEDIAN_PX or smallest < floor - 0.05:
                    problem = "labels too small (median %.1f px, smallest %.1f px < %g)" % (
                        median, smallest, floor)  # fmt: skip
                if not median:
                    problem = "no text labels"
                rows.append((page, diagram["name"], intrinsic, shown, median, smallest, problem))
    return rows


def print_report(rows, out=sys.stdout):
    print("diagrams in the article column (%d px; %d px on pages without a contents sidebar),"
          " median label >= %g px, smallest >= %g px (drawn figures fig_*: >= %g px):"
          % (COLUMN_PX, WIDE_COLUMN_PX, MEDIAN_PX, SMALLEST_PX, FIGURE_SMALLEST_PX),
          file=out)  # fmt: skip
    print("%-42s %-36s %9s %6s %7s %8s" % ("page", "diagram", "intrinsic", "shown", "median",
                                           "smallest"), file=out)  # fmt: skip
    for page, name, intrinsic, shown, median, smallest, problem in rows:
        print("%-42s %-36s %7.0fpx %4.0fpx %5.1fpx %6.1fpx %s" % (
            page[:42], name[:36], intrinsic, shown, median, smallest,
            "FAIL: " + problem if problem else "ok"), file=out)  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", default=os.path.join(ROOT, "docs", "_build", "html"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "_build", "site-check"))
    parser.add_argument(
        "--diagrams", action="store_true", help="only measure the diagrams' labels (no browser)"
    )
    args = parser.parse_args(argv)
    rows = diagram_report(args.html)
    print_report(rows)
    failed = [row for row in rows if row[-1]]
    if args.diagrams:
        print("\n%s: %d diagrams, %d below the thresholds"
              % ("FAILED" if failed else "OK", len(rows), len(failed)))  # fmt: skip
        return 1 if failed else 0
    browser = find_browser()
    if browser is None:
        print(
            "check_site: no Chromium found (tried %s); Debian/Ubuntu: "
            "apt-get install chromium" % ", ".join(BROWSERS),
            file=sys.stderr,
        )
        return 2
    os.makedirs(args.out, exist_ok=True)
    version = subprocess.run([browser, "--version"], capture_output=True, text=True)
    print("browser: %s (%s)" % (browser, version.stdout.strip()))
    problems = []
    with tempfile.TemporaryDirectory(prefix="check-site-") as profile:
        for page, min_svgs, height in PAGES:
            lines, page_problems = check_page(
                browser, profile, args.html, page, min_svgs, height, args.out
            )
            print("\n".join(lines))
            problems += page_problems
    problems += ["%s: %s: %s" % (row[0], row[1], row[-1]) for row in failed]
    if problems:
        print("\nFAILED:\n  " + "\n  ".join(problems))
        return 1
    print("\nOK: %d pages rendered in headless Chromium" % len(PAGES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
