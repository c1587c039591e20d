"""Build a small Sphinx site that a test wrote, with warnings as errors.

Tests of one docs hook (tests/docs/test_figure_links.py, test_run_notebook.py)
write a few pages and the ``conf.py`` under test into a folder and build it
here, rather than the whole site."""

import ast
import os
import subprocess
import sys

CONF = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "conf.py"
)


def conf_parts(names):
    """docs/conf.py's imports and its top-level definitions and assignments of
    ``names`` (in order), without its module-level build steps (diagrams, the
    source archive): what a small site needs of the real ``conf.py``."""
    with open(CONF, encoding="utf-8") as handle:
        source = handle.read()
    kept = [
        ast.get_source_segment(source, node)
        for node in ast.parse(source).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        or getattr(node, "name", None) in names
        or any(getattr(t, "id", None) in names for t in getattr(node, "targets", []))
    ]
    found = "\n".join(kept)
    missing = [name for name in names if name not in found]
    assert not missing, "not in docs/conf.py: %s" % missing
    return kept


def build_html(src, out):
    """``sphinx -W -q -b html src out``; fails the test with Sphinx's stderr
    when the build does not succeed. Returns ``out``."""
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out
