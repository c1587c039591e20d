"""Build a small Sphinx site that a test wrote, with warnings as errors.

Tests of one docs hook (tests/docs/test_figure_links.py, test_run_notebook.py)
write a few pages and the ``conf.py`` under test into a folder and build it
here, rather than the whole site."""

import subprocess
import sys


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
