"""``make run STEP=9`` / ``make run NB=04`` (scripts/run_notebook.py): one notebook run
without a notebook server, its cells' output printed; a worked answer runs but its output
is left out. Predictions given on the command line (``PRED=``) or in a file
(``ANSWERS_FILE=``) take the place of the ``predicted_x = None`` line, and the run ends
with which were wrong."""

import ast
import base64
import contextlib
import glob
import json
import os
import re
import subprocess
import sys

import pytest
from small_site import build_html  # tests/docs/small_site.py (on sys.path)

pytest.importorskip("nbclient")
import nbformat  # noqa: E402 (after the skip)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_notebook  # noqa: E402 (scripts/ is not a package)


def test_a_run_prints_the_checks_and_hides_the_worked_answers(capsys, tmp_path):
    assert run_notebook.main(["04", "--pictures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "running step 9, notebooks/04_recurrent_network_in_numpy.ipynb" in out.replace(
        os.sep, "/"
    )
    assert "No answer yet: write the body of the step loop" in out  # the learner's cell
    assert "(a worked answer, collapsed on the site: ANSWERS=1 shows it)" in out
    assert "Right: every step's blobs are views" not in out  # the answer's own check
    assert "every cell ran." in out
    notebook = nbformat.read(run_notebook.find_notebook("04"), as_version=4)
    names = ", ".join(run_notebook.predict_cells(notebook))
    if names:  # the end of the run: none was given
        assert re.search(r"not given: +%s\n" % names, out[out.index("every cell ran.") :])


def test_answers_flag_shows_them_and_a_step_names_its_notebook(capsys, tmp_path):
    assert run_notebook.main(["--step", "9", "--answers", "--pictures", str(tmp_path)]) == 0
    out = capsys.readouterr().out.replace(os.sep, "/")
    assert "running step 9, notebooks/04_recurrent_network_in_numpy.ipynb" in out
    assert "Right: every step's blobs are views" in out


def test_a_name_that_matches_no_notebook_lists_them():
    with pytest.raises(SystemExit, match=r"names no notebook; the notebooks are:\n.*01_netdef"):
        run_notebook.main(["99"])


def test_a_picture_is_saved_and_named_instead_of_its_text_stand_in(tmp_path):
    """A terminal cannot show a plot: the transcript names the file it was saved to,
    not matplotlib's `<Figure size ...>` text."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    cell = {
        "outputs": [
            {"output_type": "stream", "text": "loss 0.1\n"},
            {
                "output_type": "display_data",
                "data": {
                    "image/png": base64.b64encode(png).decode(),
                    "text/plain": "<Figure size 600x260 with 1 Axes>",
                },
            },
            {"output_type": "display_data", "data": {"image/svg+xml": "<svg></svg>"}},
            {"output_type": "execute_result", "data": {"text/plain": "3"}},
        ]
    }
    text = run_notebook.transcript(cell, str(tmp_path / "nb" / "cell7"))
    assert "<Figure size" not in text
    assert text.splitlines()[0] == "loss 0.1" and text.splitlines()[-1] == "3"
    assert (tmp_path / "nb" / "cell7_2.png").read_bytes() == png
    assert (tmp_path / "nb" / "cell7_3.svg").read_text() == "<svg></svg>"
    assert "cell7_2.png]" in text and "cell7_3.svg]" in text
    # without a folder (the old behaviour) the text stand-in is printed
    assert "<Figure size 600x260 with 1 Axes>" in run_notebook.transcript(cell)


# --- steps --------------------------------------------------------------------------


def test_steps_are_the_numbered_toctree_of_the_index():
    """Step n is the n-th entry of docs/index.md's numbered toctree (the sidebar's n.)."""
    steps = run_notebook.path_steps()
    with open(os.path.join(ROOT, "docs", "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    numbered = index[index.index(":numbered:") : index.index("```", index.index(":numbered:"))]
    assert steps == [line for line in numbered.splitlines()[1:] if line and ":" not in line]
    for n, doc in enumerate(steps, 1):
        if doc.startswith("notebooks/"):
            path = run_notebook.notebook_of_step(str(n), steps)
            assert os.path.basename(path) == doc.split("/")[1] + ".ipynb"
            assert run_notebook.step_of(path, steps) == n


def test_each_path_notebook_is_titled_by_its_step():
    """A path notebook's heading is "# Step n · Title" with n its place in the numbered
    toctree (docs/conf.py drops the prefix on the site, where the toctree numbers it);
    a notebook off the path names no step."""
    steps = run_notebook.path_steps()
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))):
        heading = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
        step = run_notebook.step_of(path, steps)
        if step is None:
            assert not heading.startswith("# Step"), path
        else:
            assert re.match(r"# Step %d · [A-Za-z_]" % step, heading), (path, heading)


def test_a_step_without_a_notebook_says_which_steps_have_one():
    steps = run_notebook.path_steps()
    with_notebooks = [str(n) for n, d in enumerate(steps, 1) if d.startswith("notebooks/")]
    page = next(n for n, d in enumerate(steps, 1) if not d.startswith("notebooks/"))
    listed = ", ".join(with_notebooks)
    with pytest.raises(
        SystemExit,
        match=r"step %d is a page, not a notebook \(docs/%s\.md\)"
        % (page, re.escape(steps[page - 1])),
    ) as raised:
        run_notebook.main(["--step", str(page)])
    assert listed in str(raised.value)
    for bad in (str(len(steps) + 1), "0", "nine"):
        with pytest.raises(SystemExit, match="the path has no step .*" + re.escape(listed)):
            run_notebook.main(["--step", bad])


def test_a_step_and_a_file_together_or_neither_are_refused(capsys):
    for argv in ([], ["04", "--step", "9"]):
        with pytest.raises(SystemExit):
            run_notebook.main(argv)
        assert "say which notebook" in capsys.readouterr().err


# --- predictions on the command line ----------------------------------------------
#
# The runs use notebook 13 (kernels, off the path: NB=13) and its one prediction, with
# the answer read from its worked answer, so that they do not depend on a path notebook's
# exercises; the steps are tested above.


def _worked_answer(notebook, name):
    """The argument of the check call in the worked answer (tag hide-cell) that follows
    the cell of prediction ``name``: the notebook's own answer, not one typed here."""
    index = run_notebook.predict_cells(notebook)[name]
    for cell in notebook.cells[index + 1 :]:
        if "hide-cell" in cell.metadata.get("tags", []):
            call = ast.parse(cell.source).body[-1].value
            return ast.get_source_segment(cell.source, call.args[0])
    raise AssertionError("no worked answer after %s" % name)


def _kernels_prediction():
    """Notebook 13's prediction: its name, its answer, and a wrong one (each boolean of
    the answer negated) written as an expression the kernel evaluates (no literal)."""
    notebook = nbformat.read(run_notebook.find_notebook("13"), as_version=4)
    (name,) = run_notebook.predict_cells(notebook)
    answer = _worked_answer(notebook, name)
    assert isinstance(ast.literal_eval(answer), tuple)
    return name, answer, "tuple(not b for b in %s)" % answer


def test_predictions_replace_the_assignment_in_their_cell():
    notebook = nbformat.read(run_notebook.find_notebook("11"), as_version=4)
    cells = run_notebook.predict_cells(notebook)
    first, second = list(cells)[:2]
    text = "%s = (1,\n  2)  # a comment\n%s = 'x'" % (first, second)
    pairs = run_notebook.parse_predictions(text, "my_answers.py")
    assert pairs == [(first, "(1,\n  2)"), (second, "'x'")]
    before = [c.source for c in notebook.cells]
    assert run_notebook.put_predictions(notebook, pairs) == dict(pairs)
    changed = [i for i, c in enumerate(notebook.cells) if c.source != before[i]]
    assert changed == sorted([cells[first], cells[second]])
    source = notebook.cells[cells[first]].source
    assert "None" not in source and ast.parse(source)
    assert source.startswith("%s = (  # given to make run\n(1,\n  2)\n)" % first)
    assert notebook.cells[cells[second]].source.startswith("%s = 'x'  # given to make run" % second)
    # the name without predicted_, several assignments in one PRED separated by ;
    notebook = nbformat.read(run_notebook.find_notebook("11"), as_version=4)
    short = first[len("predicted_") :]
    given = run_notebook.put_predictions(
        notebook, run_notebook.parse_predictions("%s=3; %s='y'" % (short, second), "PRED")
    )
    assert given == {first: "3", second: "'y'"}


def test_a_name_no_cell_assigns_is_named_with_the_notebooks_predictions():
    notebook = nbformat.read(run_notebook.find_notebook("11"), as_version=4)
    names = list(run_notebook.predict_cells(notebook))
    pairs = run_notebook.parse_predictions("predicted_colour = 'red'", "PRED")
    with pytest.raises(
        SystemExit,
        match="assigns predicted_colour; its predictions are: " + re.escape(", ".join(names)),
    ):
        run_notebook.put_predictions(notebook, pairs)
    with pytest.raises(SystemExit, match="predicted_colour"):  # before any kernel starts
        run_notebook.main(["11", "--pred", "predicted_colour = 'red'"])


def test_only_assignments_of_one_name_are_taken(tmp_path):
    """A value is one expression, evaluated by the notebook's kernel in its cell: a
    statement (an import, a loop, a def: the code exercises stay in the notebook) or
    text that is not Python is refused here, before anything runs."""
    for text in (
        "import os",
        "def forward(outer):\n    pass",
        "a, b = 1, 2",
        "predicted_rows += [1]",
        "predicted_rows = x = 1",
        "for i in []: pass",
    ):
        with pytest.raises(SystemExit, match="is not a prediction"):
            run_notebook.parse_predictions(text, "PRED")
    with pytest.raises(SystemExit, match="PRED is not Python assignments"):
        run_notebook.parse_predictions("predicted_rows = [0, 5", "PRED")
    with pytest.raises(SystemExit, match="cannot read the answers file"):
        run_notebook.main(["13", "--answers-file", str(tmp_path / "missing.py")])


def test_a_right_prediction_from_an_answers_file(capsys, tmp_path):
    name, answer, _ = _kernels_prediction()
    answers = tmp_path / "my_answers.py"
    answers.write_text("# my answer\n%s = %s\n" % (name, answer))
    argv = ["13", "--answers-file", str(answers), "--pictures", str(tmp_path)]
    assert run_notebook.main(argv) == 0
    out = capsys.readouterr().out
    assert "%s = %s  # given to make run\n" % (name, answer) in out
    assert "Not quite" not in out and "No prediction yet" not in out
    assert re.search(r"right: +%s\n" % name, out)
    assert out.rstrip().endswith("Every prediction was right.")


def test_a_wrong_prediction_is_named_at_the_end_with_how_to_see_the_answer(capsys, tmp_path):
    """The wrong answer is no literal: the kernel evaluates it in its cell. The run's
    fresh kernel gives no second try, so the end of the run says which prediction was
    wrong and how to see its answer: the same command with REVEAL=1."""
    name, _, wrong = _kernels_prediction()
    pred = "%s=%s" % (name, wrong)
    assert run_notebook.main(["13", "--pred", pred, "--pictures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Not quite" in out and "Hint:" in out and "The answer:" not in out
    summary = out[out.index("every cell ran.") :]
    assert re.search(r"wrong: +%s\n" % name, summary)
    assert "make run NB=13 PRED='%s' REVEAL=1" % pred in summary
    assert 'reveal("%s")' % name in summary
    assert max(len(line) for line in summary.splitlines() if "make run" not in line) <= 78


def test_reveal_gives_the_answer_at_the_first_wrong_try(capsys, tmp_path):
    name, _, wrong = _kernels_prediction()
    argv = ["13", "--pred", "%s=%s" % (name, wrong), "--reveal", "--pictures", str(tmp_path)]
    assert run_notebook.main(argv) == 0
    out = capsys.readouterr().out
    assert "The answer:" in out and "Hint:" not in out
    summary = out[out.index("every cell ran.") :]
    assert re.search(r"wrong: +%s\n" % name, summary)
    assert "answer and why are above" in summary and "run again" not in summary


def test_the_summary_sorts_the_first_verdict_of_each_prediction():
    """The learner's check comes before the worked answer's: the first verdict of an
    exercise is the learner's. A code exercise (forward) is named only when wrong."""
    summary = {
        "given": {
            "predicted_a": True,
            "predicted_b": True,
            "predicted_c": False,
            "predicted_d": True,
        },
        "first": {"predicted_a": True, "predicted_b": False, "forward": False, "backward": True},
    }
    lines = run_notebook.summarise(summary, "make run STEP=13 PRED=...", revealed=False)
    text = "\n".join(lines)
    assert re.search(r"right: +predicted_a\n", text)
    assert re.search(r"wrong: +predicted_b\n", text)
    assert re.search(r"not given: +predicted_c\n", text)
    assert re.search(r"not checked: +predicted_d\n", text)
    assert re.search(r"code, wrong: +forward\n", text) and "backward" not in text
    assert "make run STEP=13 PRED=... REVEAL=1" in text
    assert "  make run STEP=13 PRED='predicted_c=...'\n" in text and "Every prediction" not in text
    right = {"given": {"predicted_a": True}, "first": {"predicted_a": True}}
    assert run_notebook.summarise(right, "make run NB=04", revealed=False)[-1] == (
        "Every prediction was right."
    )
    # the predictions right, the exercise's code not: the last line says both
    code_wrong = {"given": {"predicted_a": True}, "first": {"predicted_a": True, "forward": False}}
    assert run_notebook.summarise(code_wrong, "make run NB=04", revealed=False)[-1] == (
        "Every prediction was right; the exercise code above was not."
    )


def test_the_summary_cell_prints_json_the_run_reads():
    summary = {"given": {"predicted_a": True}, "first": {}}
    text = "%s\n%s\n" % (run_notebook.SUMMARY_MARK, json.dumps(summary))
    cell = {"outputs": [{"output_type": "stream", "text": text}]}
    assert run_notebook.read_summary(cell) == summary
    assert run_notebook.read_summary({"outputs": []}) is None
    assert "predicted_a" in run_notebook.summary_source(["predicted_a"])


def test_the_site_shows_a_notebook_title_without_its_step(tmp_path):
    """docs/conf.py's drop_step_from_titles, in a three-page Sphinx project: the numbered
    toctree says "2." before the title, so "Step 2 · " is dropped from it (sidebar, links,
    heading), on a notebooks/ page only; elsewhere the heading is left as written."""
    pytest.importorskip("sphinx")
    with open(os.path.join(ROOT, "docs", "conf.py"), encoding="utf-8") as handle:
        source = handle.read()
    kept = [
        ast.get_source_segment(source, node)
        for node in ast.parse(source).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        or getattr(node, "name", None) == "drop_step_from_titles"
        or any(getattr(t, "id", None) == "STEP_TITLE" for t in getattr(node, "targets", []))
    ]
    setup = (
        'def setup(app):\n    app.connect("doctree-read", drop_step_from_titles, priority=400)\n'
    )
    (tmp_path / "conf.py").write_text("\n\n".join(kept) + "\n\n" + setup, encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    toctree = ".. toctree::\n   :numbered: 1\n\n   page\n   notebooks/nb\n   other\n"
    (tmp_path / "index.rst").write_text("Top\n===\n\n" + toctree, encoding="utf-8")
    (tmp_path / "page.rst").write_text("A page\n======\n", encoding="utf-8")
    (tmp_path / "notebooks" / "nb.rst").write_text(
        "Step 2 · A notebook\n===================\n\nText.\n", encoding="utf-8"
    )
    (tmp_path / "other.rst").write_text("Step 3 · Not a notebook\n=======================\n")
    out = tmp_path / "_build"
    build_html(tmp_path, out)
    index = (out / "index.html").read_text(encoding="utf-8")
    page = (out / "notebooks" / "nb.html").read_text(encoding="utf-8")
    assert "2. A notebook</a>" in index and "Step 2" not in index
    assert re.search(r'<h1><span class="section-number">2\. </span>A notebook', page)
    assert "<title>2. A notebook" in page and "Step 2" not in page
    assert "3. Step 3 · Not a notebook</a>" in index


def test_a_run_ends_with_the_page_that_shows_its_pictures_in_order(capsys, tmp_path):
    """A terminal shows a picture as a file name: the run writes run-out/<notebook>/index.html
    (each picture under its cell, in the notebook's order) and its last line says to open it."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><!-- %s --></svg>'
    show = "from IPython.display import SVG, display\ndisplay(SVG(%r))"
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(show % (svg % "first")),
            nbformat.v4.new_code_cell('print("no picture here")'),
            nbformat.v4.new_code_cell(show % (svg % "second")),
        ]
    )
    path = tmp_path / "99_pictures.ipynb"
    nbformat.write(notebook, str(path))
    pictures = tmp_path / "run-out"
    assert run_notebook.main([str(path), "--pictures", str(pictures)]) == 0
    out = capsys.readouterr().out
    page = pictures / "99_pictures" / "index.html"
    last = out.rstrip().splitlines()[-1]
    assert last == "Pictures (2, in order): open %s in a browser." % os.path.relpath(page)
    text = page.read_text(encoding="utf-8")
    shown = re.findall(r'<img src="([^"]+)"', text)
    assert shown == ["cell1_1.svg", "cell3_1.svg"]
    assert "second" in (page.parent / shown[1]).read_text()
    assert text.index("[1]") < text.index("[3]") and "[2]" not in text
    # a run that draws nothing leaves no page of an earlier run behind
    notebook.cells = notebook.cells[1:2]
    nbformat.write(notebook, str(path))
    assert run_notebook.main([str(path), "--pictures", str(pictures)]) == 0
    assert "in a browser" not in capsys.readouterr().out
    assert not page.exists() and not list(page.parent.glob("cell*"))


# --- starting the kernel ---------------------------------------------------------------


class _KernelManager:
    """Stands in for jupyter_client's kernel manager: it only says whether it started."""

    def __init__(self):
        self.has_kernel = False
        self.shut_down = False

    def shutdown_kernel(self, now=False):
        self.shut_down = True


class _FlakyClient:
    """Stands in for nbclient's NotebookClient: the first ``deaths`` kernels it starts
    end before they answer, with ``error``, and nbclient then leaves no kernel behind
    (its cleanup sets km and kc to None). Nothing runs and nothing sleeps."""

    def __init__(self, deaths=1, error=None):
        import logging

        self.log = logging.getLogger("test_run_notebook.flaky")
        self.km = self.kc = None
        self.deaths = deaths
        self.error = error or run_notebook.KERNEL_DIED
        self.started = []  # the kwargs of each kernel start
        self.ready = 0  # kernels that answered
        self.cells = []

    def create_kernel_manager(self):
        return _KernelManager()

    def start_new_kernel(self, **kwargs):
        self.started.append(kwargs)
        self.km.has_kernel = True

    def start_new_kernel_client(self):
        if len(self.started) <= self.deaths:
            self.km = self.kc = None
            raise RuntimeError(self.error)
        self.ready += 1
        self.kc = "a kernel client"

    # what execute() uses once the kernel is up
    def reset_execution_trackers(self):
        pass

    def setup_kernel(self, **kwargs):
        assert self.kc is not None, "setup_kernel would start a kernel of its own"
        return contextlib.nullcontext()

    def execute_cell(self, cell, index):
        self.cells.append(index)


def test_a_kernel_that_dies_before_answering_is_started_once_more(capsys):
    """On a loaded machine a kernel can die before it answers (REVIEW_Z: the first
    ``make run STEP=20`` failed so, a retry worked): the run starts one more kernel,
    says so in one line on stdout, and runs every cell in it."""
    client = _FlakyClient(deaths=1)
    cells = [nbformat.v4.new_code_cell(str(n)) for n in (1, 2)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    last = nbformat.v4.new_code_cell("3")
    assert run_notebook.execute(client, notebook, None, last) is None
    captured = capsys.readouterr()
    assert captured.out == run_notebook.KERNEL_RETRY + "\n" and captured.err == ""
    assert len(client.started) == 2 and client.ready == 1
    assert all(kwargs == {"stderr": subprocess.DEVNULL} for kwargs in client.started)
    assert client.cells == [0, 1, 2]


def test_a_kernel_that_starts_prints_nothing_and_a_second_death_is_raised(capsys):
    healthy = _FlakyClient(deaths=0)
    run_notebook.start_kernel(healthy)
    assert capsys.readouterr().out == "" and healthy.ready == 1 and len(healthy.started) == 1
    twice = _FlakyClient(deaths=2)
    with pytest.raises(RuntimeError, match=run_notebook.KERNEL_DIED):
        run_notebook.start_kernel(twice)
    assert capsys.readouterr().out == run_notebook.KERNEL_RETRY + "\n"  # once, not twice
    assert len(twice.started) == 2
    other = _FlakyClient(deaths=1, error="Kernel didn't respond in 180 seconds")
    with pytest.raises(RuntimeError, match="didn't respond"):
        run_notebook.start_kernel(other)
    assert capsys.readouterr().out == "" and len(other.started) == 1  # only that death


def test_the_run_gives_the_kernel_longer_than_nbclient_s_default_to_start(monkeypatch, tmp_path):
    import nbclient

    made = []

    def record(client, notebook, first=None, last=None):
        made.append(client)

    monkeypatch.setattr(run_notebook, "execute", record)
    run_notebook.main(["01", "--pictures", str(tmp_path)])
    default = nbclient.NotebookClient.startup_timeout.default_value
    assert made and made[0].startup_timeout == run_notebook.KERNEL_START_TIMEOUT > default
