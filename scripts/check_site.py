"""Open the built docs site in headless Chromium and check that it renders.

Run after ``make docs``:

    python scripts/check_site.py [--html docs/_build/html] [--out docs/_build/site-check]

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
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# (page, how many SVG images it must show at least, screenshot height in pixels:
# tall enough to reach the first diagram)
PAGES = [
    ("index.html", 0, 1800),
    ("concepts/links-and-aliases.html", 2, 2600),
    ("concepts/time-stepper.html", 2, 2400),
    ("concepts/bug-gallery.html", 4, 2400),
    ("glossary.html", 0, 1800),
    ("notebooks/03_recurrent_network_op.html", 3, 5200),
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
    """The ``src`` of every ``<img>`` (or ``<object data>``) that is an SVG."""
    sources = re.findall(r'<img\b[^>]*\bsrc="([^"]+\.svg)"', dom)
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
        svg = os.path.normpath(os.path.join(os.path.dirname(path), source))
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", default=os.path.join(ROOT, "docs", "_build", "html"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "_build", "site-check"))
    args = parser.parse_args(argv)
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
    if problems:
        print("\nFAILED:\n  " + "\n  ".join(problems))
        return 1
    print("\nOK: %d pages rendered in headless Chromium" % len(PAGES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
