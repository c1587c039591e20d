"""Every notebook in notebooks/ runs top to bottom without an error, in time.

Each notebook is executed in a fresh Jupyter kernel with nbclient, from the
notebooks/ directory, with the repository on PYTHONPATH (so the package need
not be installed). A cell that raises fails the test with the cell and the
traceback; a notebook slower than its budget fails on the timeout. The
notebooks are committed without outputs, which is checked too.
"""

import glob
import os
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(glob.glob(os.path.join(NOTEBOOK_DIR, "*.ipynb")))
#: The issue's budget is 60 s per notebook on 2 cores; each runs in < 10 s here.
BUDGET_SECONDS = 60


def test_the_twelve_notebooks_exist():
    names = [os.path.basename(p)[:2] for p in NOTEBOOKS]
    assert names == ["%02d" % i for i in range(1, 13)], names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    with_outputs = [
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count)
    ]
    assert not with_outputs, "%s: cells %s have outputs; clear them before committing" % (
        os.path.basename(path),
        with_outputs,
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_ends_with_summary_and_exercises(path):
    notebook = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert "## Summary" in text and "## Exercises" in text, os.path.basename(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_without_errors(path, monkeypatch):
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in [ROOT, os.environ.get("PYTHONPATH")] if p)
    )
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=BUDGET_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": NOTEBOOK_DIR}},
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError (cell + traceback) on any error
    elapsed = time.perf_counter() - start
    assert elapsed < BUDGET_SECONDS, "%s took %.1f s" % (os.path.basename(path), elapsed)
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors
