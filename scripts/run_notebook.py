"""Run one of the path's notebooks in a terminal and print what each cell printed.

``make run NB=04`` (or ``.venv/bin/python scripts/run_notebook.py 04``) runs
``notebooks/04_*.ipynb`` from the top, as it is on disk — with the answers you wrote
into it in JupyterLab, VS Code or any editor — in this checkout's environment, and
prints a transcript: each code cell's first line, then its printed output, its
result and, for a cell that fails, the error. The notebook file is not changed.
A cell that holds an exercise's worked answer (collapsed on the site: tag
``hide-cell``) runs too — later cells may use what it defines — but its output is
left out, so the answer does not sit under your own attempt; ``--answers`` shows it.
A terminal cannot show a picture: each one a cell draws (a loss curve, a net drawn by
``viz``) is written to ``run-out/<notebook>/`` and the transcript names the file.
This is the way to check an exercise without a notebook server (``make lab`` opens
JupyterLab for the same notebooks).
"""

from __future__ import annotations

import argparse
import base64
import glob
import os
import subprocess
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The pictures a cell can display, in the order a file is chosen for one output.
PICTURES = (("image/png", "png"), ("image/svg+xml", "svg"))


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


def save_picture(data: dict, stem: str) -> str | None:
    """Write an output's picture (PNG, else SVG) to ``stem.<ext>``; its path, or None."""
    for mime, ext in PICTURES:
        if mime in data:
            os.makedirs(os.path.dirname(stem), exist_ok=True)
            path = "%s.%s" % (stem, ext)
            value = data[mime]
            if mime == "image/png":
                with open(path, "wb") as f:
                    f.write(base64.b64decode(value))
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(value if isinstance(value, str) else "".join(value))
            return path
    return None


def transcript(cell, pictures: str | None = None) -> str:
    """What a reader would see under one executed code cell, as plain text.

    With ``pictures`` (a path prefix such as ``run-out/04_x/cell3``), a displayed
    picture is saved there and named in place of its text stand-in
    (``<Figure size 600x260 with 1 Axes>``)."""
    lines = []
    for index, output in enumerate(cell.get("outputs", [])):
        kind = output.get("output_type")
        if kind == "stream":
            lines.append(output.get("text", "").rstrip("\n"))
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            saved = pictures and save_picture(data, "%s_%d" % (pictures, index + 1))
            if saved:
                lines.append("[picture: %s]" % os.path.relpath(saved))
            elif "text/plain" in data:
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
    parser.add_argument(
        "--pictures",
        default=os.path.join(ROOT, "run-out"),
        help="folder for the pictures cells draw (default run-out/)",
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
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.join(args.pictures, stem)
    for old in glob.glob(os.path.join(folder, "cell*_*.*")):  # a previous run's pictures
        os.remove(old)
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
        text = transcript(cell, os.path.join(folder, "cell%d" % number))
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
