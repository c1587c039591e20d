"""Run one of the path's notebooks in a terminal and print what each cell printed.

``make run NB=04`` (or ``.venv/bin/python scripts/run_notebook.py 04``) runs
``notebooks/04_*.ipynb`` from the top, as it is on disk — with the answers you wrote
into it in JupyterLab, VS Code or any editor — in this checkout's environment, and
prints a transcript: each code cell's first line, then its printed output, its
result and, for a cell that fails, the error. The notebook file is not changed.
A cell that holds an exercise's worked answer (collapsed on the site: tag
``hide-cell``) runs too — later cells may use what it defines — but its output is
left out, so the answer does not sit under your own attempt; ``--answers`` shows it.
This is the way to check an exercise without a notebook server (``make lab`` opens
JupyterLab for the same notebooks).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_notebook(name: str) -> str:
    """The notebook a short name means: ``04``, ``4``, ``04_recurrent…`` or a path."""
    if os.path.exists(name):
        return name
    if name.isdigit():
        name = "%02d" % int(name)
    matches = sorted(glob.glob(os.path.join(ROOT, "notebooks", name + "*.ipynb")))
    if len(matches) != 1:
        every = glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))
        found = "\n  ".join(sorted(os.path.basename(p) for p in every))
        named = "%d notebooks" % len(matches) if matches else "no notebook"
        message = "run_notebook: %r names %s; the notebooks are:\n  %s"
        raise SystemExit(message % (name, named, found))
    return matches[0]


def transcript(cell) -> str:
    """What a reader would see under one executed code cell, as plain text."""
    lines = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            lines.append(output.get("text", "").rstrip("\n"))
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            if "text/plain" in data:
                lines.append(data["text/plain"].rstrip("\n"))
            elif data:
                lines.append("[%s]" % ", ".join(sorted(data)))
        elif kind == "error":
            lines.append("%s: %s" % (output.get("ename"), output.get("evalue")))
    return "\n".join(line for line in lines if line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", help="04, 4, 04_recurrent_network_in_numpy or a path")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    parser.add_argument(
        "--answers", action="store_true", help="also print the worked answers' output"
    )
    args = parser.parse_args(argv)
    path = find_notebook(args.notebook)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=args.timeout,
        kernel_name="python3",
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    )
    print("running %s" % os.path.relpath(path))
    failed = None
    try:
        # the kernel's own log lines (connection warnings) are not the notebook's output
        client.execute(stderr=subprocess.DEVNULL)
    except CellExecutionError as error:
        failed = error
    number = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        number += 1
        first = (cell.source.strip().splitlines() or [""])[0]
        answer = "hide-cell" in cell.metadata.get("tags", [])
        raised = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        if answer and not args.answers and not raised:
            print("\n[%d] (a worked answer, collapsed on the site: ANSWERS=1 shows it)" % number)
            continue
        print("\n[%d] %s" % (number, first))
        text = transcript(cell)
        if text:
            print("    " + text.replace("\n", "\n    "))
        if failed is not None and raised:
            break
    if failed is not None:
        print("\nstopped at the cell above: it raised (cells after it did not run).")
        return 1
    print("\nevery cell ran.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
