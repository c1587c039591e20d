"""Run one of the path's notebooks in a terminal and print what each cell printed.

``make run STEP=9`` (or ``.venv/bin/python scripts/run_notebook.py --step 9``) runs
the notebook of step 9 of the site's numbered path, ``notebooks/04_*.ipynb``;
``make run NB=04`` (``run_notebook.py 04``) names the same notebook by its file. The
steps are read from the numbered table of contents of ``docs/index.md``, the one the
site's sidebar numbers. The notebook runs from the top, as it is on disk — with the
answers you wrote into it in JupyterLab, VS Code or any editor — in this checkout's
environment, and the script prints a transcript: each code cell's first line, then its
printed output, its result and, for a cell that fails, the error. The notebook file is
not changed.

Predictions without editing the notebook: ``PRED='predicted_rows=[0, 5]'`` (``--pred``;
several assignments separated by ``;``) or ``ANSWERS_FILE=my_answers.py``
(``--answers-file``, a file of such assignments, one a line) put your answer in place
of the ``predicted_rows = None`` line of the cell that holds it, in the copy that runs.
Each value is one Python expression, written as you would write it in that cell: it
is not evaluated here but by the notebook's kernel, in that cell, so it may use what
the cells above it defined (``STATES`` in step 9). Statements (``import``, ``def``,
loops) are refused: the code exercises, the loops you write, stay in the notebook.
A name that no cell of the notebook assigns is refused with the names it has.

``make run`` starts a fresh kernel each time, so the second try that would show a
wrong prediction's answer never comes: the run ends with which predictions were
right, wrong or not given, and ``REVEAL=1`` (``--reveal``) shows the answer and the why
at the first wrong try, as ``caffe2rnn.exercises.reveal`` does in a notebook.

A cell that holds an exercise's worked answer (collapsed on the site: tag
``hide-cell``) runs too — later cells may use what it defines — but its output is
left out, so the answer does not sit under your own attempt; ``--answers`` shows it.
A terminal cannot show a picture: each one a cell draws (a loss curve, a net drawn by
``viz``) is written to ``run-out/<notebook>/`` and the transcript names the file; the
run ends with a line naming ``run-out/<notebook>/index.html``, a page that shows them
all in the notebook's order, each under its cell, to open in a browser.
This is the way to check an exercise without a notebook server (``make lab`` opens
JupyterLab for the same notebooks). On a loaded machine the kernel may take a while to
start, or die before it answers: the run waits up to three minutes for it and, when it
dies, starts one more, once, saying so in one line.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import glob
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import textwrap

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The pictures a cell can display, in the order a file is chosen for one output.
PICTURES = (("image/png", "png"), ("image/svg+xml", "svg"))
#: The page that holds the path's numbered table of contents (the sidebar's numbers).
INDEX = os.path.join(ROOT, "docs", "index.md")
#: A prediction's variable: the learner's cell assigns it ``None``.
PREDICTED = re.compile(r"predicted_\w+\Z")
#: What the last, unprinted cell prints before the summary's JSON.
SUMMARY_MARK = "@@run_notebook summary@@"
#: Characters a line of the summary may take (a notebook's output on the site: 78).
WIDTH = 78
#: Seconds a kernel may take to start and answer (nbclient's default, 60, is short on a
#: loaded machine).
KERNEL_START_TIMEOUT = 180
#: What jupyter_client raises when the kernel's process ends before it answered: on a
#: loaded machine a second start works, so the run tries once more (:func:`start_kernel`).
KERNEL_DIED = "Kernel died before replying to kernel_info"
#: Printed, to stdout, before that one more try.
KERNEL_RETRY = "kernel slow to start; retrying once"


def path_steps(index: str = INDEX) -> list[str]:
    """The documents of the numbered path, in order: step ``n`` is item ``n - 1``
    (``"notebooks/04_recurrent_network_in_numpy"``, ``"concepts/recurrent-op"``).

    Read from the first ``{toctree}`` of ``docs/index.md`` with a ``:numbered:``
    option, the one whose entries the site's sidebar numbers 1, 2, 3 … (none
    without the page: a notebook file still runs by its name)."""
    if not os.path.exists(index):
        return []
    with open(index, encoding="utf-8") as handle:
        text = handle.read()
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, re.S):
        lines = [line.strip() for line in block.splitlines()]
        if any(line.startswith(":numbered:") for line in lines):
            return [line for line in lines if line and not line.startswith(":")]
    raise SystemExit("run_notebook: %s has no numbered toctree" % os.path.relpath(index))


def step_of(path: str, steps: list[str] | None = None) -> int | None:
    """The step number of notebook ``path`` on the numbered path, or None."""
    stem = os.path.splitext(os.path.basename(path))[0]
    steps = path_steps() if steps is None else steps
    entry = "notebooks/" + stem
    return steps.index(entry) + 1 if entry in steps else None


def notebook_of_step(step: str, steps: list[str] | None = None) -> str:
    """The notebook file of step ``step`` (``"9"``): ``notebooks/04_….ipynb``."""
    steps = path_steps() if steps is None else steps
    with_notebooks = [str(n) for n, doc in enumerate(steps, 1) if doc.startswith("notebooks/")]
    listed = ", ".join(with_notebooks)
    if not step.strip().isdigit() or not 1 <= int(step) <= len(steps):
        message = "run_notebook: the path has no step %r; the steps with a notebook are %s."
        raise SystemExit(message % (step, listed))
    doc = steps[int(step) - 1]
    if not doc.startswith("notebooks/"):
        message = (
            "run_notebook: step %s is a page, not a notebook (docs/%s.md); "
            "the steps with a notebook are %s."
        )
        raise SystemExit(message % (int(step), doc, listed))
    return os.path.join(ROOT, doc + ".ipynb")


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


# --- Predictions given on the command line -------------------------------------------


def parse_predictions(text: str, origin: str) -> list[tuple[str, str]]:
    """``name = expression`` assignments (``;`` or new lines between them) as
    ``(name, the expression's source)`` pairs, in order; ``origin`` names where the
    text came from in an error (``PRED``, a file).

    Only assignments of one name to one expression: the expression is not evaluated
    here (the notebook's kernel evaluates it, see :func:`put_predictions`), and a
    statement in its place (an ``import``, a ``def``) is refused."""
    try:
        tree = ast.parse(text, filename=origin)
    except SyntaxError as error:
        raise SystemExit(
            "run_notebook: %s is not Python assignments (name = value): %s, line %s"
            % (origin, error.msg, error.lineno)
        ) from None
    pairs = []
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            code = ast.get_source_segment(text, node) or type(node).__name__
            raise SystemExit(
                "run_notebook: %s holds %r, which is not a prediction (name = value). "
                "Predictions only: a loop or function you write stays in the notebook."
                % (origin, code.splitlines()[0])
            )
        pairs.append((node.targets[0].id, ast.get_source_segment(text, node.value)))
    return pairs


def predict_cells(notebook) -> dict[str, int]:
    """The notebook's predictions: each ``predicted_<x>`` variable that a cell the
    learner answers in (not a worked answer, tag ``hide-cell``) assigns at its top
    level, with that cell's index."""
    found = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or "hide-cell" in cell.metadata.get("tags", []):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython syntax (%magic): no prediction there
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and PREDICTED.match(target.id):
                        found.setdefault(target.id, index)
    return found


def put_predictions(
    notebook, pairs: list[tuple[str, str]], label: str = "this notebook"
) -> dict[str, str]:
    """Put each ``(name, expression)`` of ``pairs`` in place of the assignment of
    ``name`` in the cell that holds it (:func:`predict_cells`), in ``notebook``
    (the copy that runs). ``name`` may leave out ``predicted_``. Returns the
    predictions put, by variable; a name no cell assigns is refused with the
    notebook's prediction names (``label`` names the notebook in that message)."""
    cells = predict_cells(notebook)
    given = {}
    for name, expression in pairs:
        variable = name if name in cells else "predicted_" + name
        if variable not in cells:
            names = ", ".join(sorted(cells, key=cells.get)) or "none"
            raise SystemExit(
                "run_notebook: no cell of %s assigns %s; its predictions are: %s"
                % (label, name, names)
            )
        given[variable] = expression
    for variable, expression in given.items():
        cell = notebook.cells[cells[variable]]
        lines = cell.source.splitlines()
        node = next(
            n
            for n in ast.parse(cell.source).body
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == variable for t in n.targets)
        )
        if "\n" in expression:  # in brackets: any expression may then span lines
            new = ["%s = (  # given to make run" % variable] + expression.splitlines() + [")"]
        else:
            new = ["%s = %s  # given to make run" % (variable, expression)]
        lines[node.lineno - 1 : node.end_lineno] = new
        cell.source = "\n".join(lines)
    return given


def summary_source(names: list[str]) -> str:
    """The last cell the run adds (its output is read, not printed): which predictions
    hold a value, and every exercise's first verdict (the learner's own try, before a
    worked answer's check), as JSON."""
    return (
        "import json as _json\n"
        "from caffe2rnn.exercises.verdicts import verdicts as _verdicts\n"
        "_first = {}\n"
        "for _n, _right in _verdicts():\n"
        "    _first.setdefault(_n, _right)\n"
        "print(%r)\n"
        "print(_json.dumps({'given': {_n: globals().get(_n) is not None for _n in %r},\n"
        "                  'first': _first}))\n" % (SUMMARY_MARK, names)
    )


def reveal_source(names: list[str]) -> str:
    """The first cell the run adds for ``--reveal`` (its output is not printed): every
    exercise gives its answer and its why at the first wrong try."""
    return (
        "import contextlib as _c, io as _io\n"
        "from caffe2rnn.exercises import reveal as _reveal\n"
        "with _c.redirect_stdout(_io.StringIO()):\n"
        "    for _n in %r:\n"
        "        _reveal(_n)\n" % (names,)
    )


def exercise_names(notebook) -> list[str]:
    """What ``caffe2rnn.exercises.reveal`` calls the notebook's exercises: its
    ``predicted_<x>`` variables and, for each code exercise's check
    ``check_<name>(...)``, ``<name>``."""
    names = list(predict_cells(notebook))
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for name in re.findall(r"\bcheck_(\w+)\(", cell.source):
                if name not in names:
                    names.append(name)
    return names


def read_summary(cell) -> dict | None:
    """The JSON the summary cell printed, or None (the run stopped before it)."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if "text" in o)
    if SUMMARY_MARK not in text:
        return None
    return json.loads(text.split(SUMMARY_MARK, 1)[1].strip().splitlines()[0])


def summarise(summary: dict, command: str, revealed: bool = False) -> list[str]:
    """The lines that end a run: which predictions were right, wrong, not given or
    not checked (the run stopped before their check), and how to see the answers
    (``command`` runs this notebook again; ``revealed``: this run had REVEAL=1)."""
    first = summary["first"]
    names = list(summary["given"])
    groups = {"right": [], "wrong": [], "not given": [], "not checked": []}
    for name in names:
        if not summary["given"][name]:
            groups["not given"].append(name)
        elif name not in first:
            groups["not checked"].append(name)
        else:
            groups["right" if first[name] else "wrong"].append(name)
    code = [name for name, right in first.items() if name not in names and not right]
    if code:  # forward, backward, ...: the code exercises
        groups["code, wrong"] = code
    lines = ["", "Your predictions:"]
    for label, group in groups.items():
        if group:
            lines.append("  %-13s %s" % (label + ":", ", ".join(group)))
    bad = groups["wrong"] + code
    if bad and revealed:
        lines.append("REVEAL=1: each wrong one's answer and why are above, under its check.")
    elif bad:
        lines += textwrap.wrap(
            "make run starts a fresh kernel each time, so no second try shows the "
            "answer: to see each wrong one's answer and why, run again with REVEAL=1 "
            '(in a notebook: caffe2rnn.exercises.reveal("%s")).' % bad[0],
            WIDTH,
        )
        lines.append("  %s REVEAL=1" % command)
    if groups["not given"]:
        base = re.match(r"make run \S+", command).group(0)  # without PRED, ANSWERS_FILE
        lines += [
            "To give a prediction without editing the notebook:",
            "  %s PRED='%s=...'" % (base, groups["not given"][0]),
            "(several: separated by ;) or ANSWERS_FILE=my_answers.py, name = value lines.",
        ]
    if names and len(groups["right"]) == len(names):
        # the predictions, not the exercises' code: say so when code was wrong
        lines.append(
            "Every prediction was right; the exercise code above was not."
            if code
            else "Every prediction was right."
        )
    return lines


# --- The transcript --------------------------------------------------------------------


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


def transcript(cell, pictures: str | None = None, saved: list | None = None) -> str:
    """What a reader would see under one executed code cell, as plain text.

    With ``pictures`` (a path prefix such as ``run-out/04_x/cell3``), a displayed
    picture is saved there and named in place of its text stand-in
    (``<Figure size 600x260 with 1 Axes>``); ``saved``, a list, gets each path."""
    lines = []
    for index, output in enumerate(cell.get("outputs", [])):
        kind = output.get("output_type")
        if kind == "stream":
            lines.append(output.get("text", "").rstrip("\n"))
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            path = pictures and save_picture(data, "%s_%d" % (pictures, index + 1))
            if path:
                lines.append("[picture: %s]" % os.path.relpath(path))
                if saved is not None:
                    saved.append(path)
            elif "text/plain" in data:
                lines.append(data["text/plain"].rstrip("\n"))
            elif data:
                lines.append("[%s]" % ", ".join(sorted(data)))
        elif kind == "error":
            lines.append("%s: %s" % (output.get("ename"), output.get("evalue")))
    return "\n".join(line for line in lines if line)


#: The page of a run's pictures, in ``run-out/<notebook>/``.
PICTURE_INDEX = "index.html"


def write_picture_index(folder: str, title: str, shown: list) -> str:
    """Write ``folder/index.html``: the run's pictures in the notebook's order, each
    under its cell's number and first line (``shown``: ``(number, first line,
    [picture paths])`` per cell that drew one). Returns its path."""
    import html

    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8"><title>%s</title>' % html.escape(title),
        "<style>body{font-family:sans-serif;max-width:70rem;margin:1em auto;padding:0 1em}"
        "img{max-width:100%;border:1px solid #ddd;margin:.3em 0 1.5em}"
        "code{background:#f3f3f3;padding:0 .2em}</style></head><body>",
        "<h1>%s</h1>" % html.escape(title),
        "<p>The pictures this run drew, in the notebook's order; [n] is the cell's "
        "number in the run's transcript.</p>",
    ]
    for number, first_line, paths in shown:
        parts.append("<h2>[%d] <code>%s</code></h2>" % (number, html.escape(first_line)))
        for path in paths:
            name = html.escape(os.path.basename(path))
            parts.append('<a href="%s"><img src="%s" alt="%s"></a>' % (name, name, name))
    parts.append("</body></html>")
    target = os.path.join(folder, PICTURE_INDEX)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts) + "\n")
    return target


def start_kernel(client, **kwargs) -> None:
    """Start ``client``'s kernel and its client, as ``client.setup_kernel`` would
    (``kwargs`` go to the kernel's start: ``stderr``), so that ``setup_kernel`` then
    finds them running. When the kernel dies before it answers (:data:`KERNEL_DIED`,
    seen on a loaded machine), print :data:`KERNEL_RETRY` and start a new one, once;
    any other error, or a second death, is raised. nbclient's own log of the failed
    start is kept out of the transcript."""
    log = client.log
    quiet = logging.getLogger("run_notebook.kernel_start")
    quiet.propagate = False
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
    for attempt in (1, 2):
        client.log = quiet
        try:
            if client.km is None:
                client.km = client.create_kernel_manager()
            if not client.km.has_kernel:
                client.start_new_kernel(**kwargs)
            if client.kc is None:
                client.start_new_kernel_client()  # waits for the kernel's answer
            return
        except RuntimeError as error:
            if attempt == 2 or KERNEL_DIED not in str(error):
                raise
            # nbclient has shut the dead kernel down; make sure, and forget it
            if client.km is not None:
                with contextlib.suppress(Exception):
                    client.km.shutdown_kernel(now=True)
            client.km = client.kc = None
            print(KERNEL_RETRY, flush=True)
        finally:
            client.log = log


def execute(client, notebook, first=None, last=None):
    """Run ``first`` (a cell or None), the notebook's cells and ``last`` in one kernel;
    the error of the cell that raised, or None. ``last`` runs even then; the two
    added cells are taken out of ``notebook`` again."""
    cells = list(notebook.cells)
    front = [first] if first is not None else []
    notebook.cells = front + cells + [last]
    failed = None
    client.reset_execution_trackers()
    # the kernel's own log lines (connection warnings) are not the notebook's output
    start_kernel(client, stderr=subprocess.DEVNULL)
    with client.setup_kernel(stderr=subprocess.DEVNULL):
        try:
            for index, cell in enumerate(notebook.cells[:-1]):
                client.execute_cell(cell, index)
        except CellExecutionError as error:
            failed = error
        with contextlib.suppress(CellExecutionError):  # then the summary is not printed
            client.execute_cell(last, len(notebook.cells) - 1)
    notebook.cells = cells
    return failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "notebook", nargs="?", help="a notebook file: 04, 4, 04_recurrent_network_in_numpy, a path"
    )
    parser.add_argument("--step", help="the step of the site's path: 9 runs notebooks/04_*")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    parser.add_argument(
        "--answers", action="store_true", help="also print the worked answers' output"
    )
    parser.add_argument(
        "--pred",
        action="append",
        default=[],
        help="predictions, e.g. 'predicted_rows=[0, 5]; predicted_late=\"zeros\"'",
    )
    parser.add_argument("--answers-file", help="a file of predictions (name = value)")
    parser.add_argument(
        "--reveal", action="store_true", help="a wrong prediction's answer at the first try"
    )
    parser.add_argument(
        "--pictures",
        default=os.path.join(ROOT, "run-out"),
        help="folder for the pictures cells draw (default run-out/)",
    )
    args = parser.parse_args(argv)
    if bool(args.notebook) == bool(args.step):
        parser.error("say which notebook: a step (--step 9, make run STEP=9) or a file (04)")
    path = notebook_of_step(args.step) if args.step else find_notebook(args.notebook)
    notebook = nbformat.read(path, as_version=4)
    pairs = []
    if args.answers_file:
        try:
            with open(args.answers_file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise SystemExit("run_notebook: cannot read the answers file: %s" % error) from None
        pairs += parse_predictions(text, args.answers_file)
    for text in args.pred:
        pairs += parse_predictions(text, "PRED")
    given = put_predictions(notebook, pairs, os.path.relpath(path))
    names = list(predict_cells(notebook))
    first = None
    if args.reveal:
        first = nbformat.v4.new_code_cell(reveal_source(exercise_names(notebook)))
    last = nbformat.v4.new_code_cell(summary_source(names))
    client = NotebookClient(
        notebook,
        timeout=args.timeout,
        startup_timeout=KERNEL_START_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    )
    step = step_of(path)
    label = "step %d, " % step if step else ""
    print("running %s%s" % (label, os.path.relpath(path)))
    for variable, expression in given.items():
        print("  %s = %s" % (variable, " ".join(expression.split())))
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.join(args.pictures, stem)
    for old in glob.glob(os.path.join(folder, "cell*_*.*")):  # a previous run's pictures
        os.remove(old)
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(folder, PICTURE_INDEX))
    shown = []
    failed = execute(client, notebook, first, last)
    number = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        number += 1
        first_line = (cell.source.strip().splitlines() or [""])[0]
        answer = "hide-cell" in cell.metadata.get("tags", [])
        raised = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        if answer and not args.answers and not raised:
            print("\n[%d] (a worked answer, collapsed on the site: ANSWERS=1 shows it)" % number)
            continue
        print("\n[%d] %s" % (number, first_line))
        saved: list[str] = []
        text = transcript(cell, os.path.join(folder, "cell%d" % number), saved)
        if saved:
            shown.append((number, first_line, saved))
        if text:
            print("    " + text.replace("\n", "\n    "))
        if failed is not None and raised:
            break
    summary = read_summary(last)
    if failed is not None:
        print("\nstopped at the cell above: it raised (cells after it did not run).")
    else:
        print("\nevery cell ran.")
    if summary is not None and names:
        command = "make run " + ("STEP=%s" % args.step if args.step else "NB=%s" % args.notebook)
        if args.pred:
            command += " PRED=%s" % shlex.quote("; ".join(args.pred))
        if args.answers_file:
            command += " ANSWERS_FILE=%s" % shlex.quote(args.answers_file)
        print("\n".join(summarise(summary, command, args.reveal)))
    if shown:
        page = write_picture_index(folder, "%s%s: pictures" % (label, stem), shown)
        count = sum(len(paths) for _, _, paths in shown)
        print("\nPictures (%d, in order): open %s in a browser." % (count, os.path.relpath(page)))
    return 1 if failed is not None else 0


if __name__ == "__main__":
    sys.exit(main())
