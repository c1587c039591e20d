"""The pages of the learner's path read cleanly: checks on their Markdown.

* **One line of provenance** at each page's foot (a ``{container} c2r-facts``
  block naming the Caffe2 commit the page's facts are true at), and the commits
  behind single facts in footnotes (``[^name]``) or tables, not in the running
  text. The eight commits that *name* an era (E0 … E7) may appear anywhere: they
  are what the facts line refers to. On the core path (steps 1-21) the facts line
  reads "Facts on this page: Caffe2 at `0cdd09da6` (June 2017)": a commit and its
  month in words, no era codes (those start with the history, step 22).
* **Code fits the column**: every line of a code block or code cell is at most
  76 characters (the article column of the site at 1280 px holds about 78 of
  its monospace characters; a longer line is cut behind a scroll bar).
* **Asides are folded on the core path** (steps 1-21): a fold's one-line summary
  is all a reader sees until they open it.
* **Every concept page of the core path asks a prediction**, each with its own
  "Check your prediction" fold after it.
* **A deliberate difference is a badge**: one line (``{container} c2r-badge``
  holding a ``{ref}`` of at most 15 words) that links to its section of
  ``concepts/differences.md``, the one page that tells every difference in full;
  every section there is linked by a badge, and no "caffe2rnn differs" box is left
  on a page. A page that gathers its badges does so in ONE box at its foot, just
  above the facts line ("Where caffe2rnn differs from Caffe2 on this page",
  CONTRIBUTING.md), and the reading line keeps only a linked "≠" to it; steps 1-7
  do (round 13: both cold readers of round 12 read the badges as load).
* **Eras stay out of the reading line of steps 1-7**: the word and its codes live
  in footnotes, folds and the glossary (step 1 defines the word in a footnote).
* **The title a reader sees is one title**: the sidebar takes each page's own
  H1 (the path's toctree gives no titles of its own), so "Next" / "Previous"
  and the sidebar cannot disagree.
"""

import calendar
import datetime
import json
import os
import re

import pytest
from test_progression import DOCS, FENCE, FRONT_MATTER, NOTEBOOKS, path_steps

from caffe2rnn import eras

#: The eras' commits (caffe2rnn.eras and the glossary's table).
ERA_COMMITS = {
    "3b190c4df",
    "3913181a4",
    "73f75a980",
    "89ea32b11",
    "c2913bcac",
    "0cdd09da6",
    "042e8ede4",
    "929c33cee",
}
CODE_COLUMN = 76
#: The last step of the core path; the history steps after it may show their asides open.
CORE_PATH_LAST_STEP = 21
HASH = re.compile(r"`([0-9a-f]{7,10})`")


def markdown_steps():
    return [s for s in path_steps() if s.path.endswith(".md") and s.exists]


def page_ids():
    return [s.doc for s in markdown_steps()]


def read(step):
    with open(step.path, encoding="utf-8") as handle:
        return handle.read()


def running_text(text):
    """The page without front matter, code, tables, footnote definitions and the
    facts line: what a reader reads as paragraphs and lists."""
    text = FRONT_MATTER.sub("", text)
    text = re.sub(r"^```\{container\} c2r-facts\n.*?^```[ \t]*$", "", text, flags=re.M | re.S)

    def fence(match):
        info = match.group(2).strip()
        if info.startswith("{") and not info.startswith(("{code-cell}", "{image}")):
            return running_text(match.group(3))  # an admonition's text is text
        return ""

    text = FENCE.sub(fence, text)
    kept, in_footnote = [], False
    for line in text.splitlines():
        if re.match(r"^\[\^[^\]]+\]:", line):
            in_footnote = True
            continue
        if in_footnote and (line.startswith("    ") or not line.strip()):
            continue
        in_footnote = False
        if line.lstrip().startswith("|"):
            continue
        kept.append(line)
    return "\n".join(kept)


def code_lines(text):
    """(first line number, line) of every code block and code cell."""
    found = []
    for match in FENCE.finditer(text):
        info = match.group(2).strip()
        if info.startswith("{") and not info.startswith("{code-cell}"):
            inner = code_lines(match.group(3))
            start = text[: match.start(3)].count("\n")
            found.extend((start + n, line) for n, line in inner)
            continue
        start = text[: match.start(3)].count("\n") + 1
        for offset, line in enumerate(match.group(3).splitlines()):
            found.append((start + offset, line))
    return found


@pytest.mark.parametrize("doc", page_ids())
def test_a_page_names_its_commit_at_its_foot(doc):
    """The commit a page's facts are true at, in a grey line at its foot, out of the way of
    the lesson (round 10's cold readers: the line under every title read as noise)."""
    step = next(s for s in markdown_steps() if s.doc == doc)
    text = FRONT_MATTER.sub("", read(step)).rstrip()
    block = re.search(r"```\{container\} c2r-facts\n(.*?)```\Z", text, re.S)
    assert block, "%s: no facts line (```{container} c2r-facts) closing the page" % doc
    assert HASH.search(block.group(1)), "%s: the facts line names no commit" % doc
    assert text.count("{container} c2r-facts") == 1, "%s: more than one facts line" % doc


#: A month and year in words, as a newcomer reads a date: "(June 2017)".
MONTH_YEAR = r"\((%s) (\d{4})\)" % "|".join(calendar.month_name[1:])
#: Era vocabulary: the era codes and the word itself.
ERA_WORDS = re.compile(r"(?<![A-Za-z0-9])(E[0-7]|[Ee]ras?)(?![A-Za-z0-9])")


def month_year(commit):
    """The month and year of an era's commit, in words: ("June", "2017")."""
    (era,) = [e for e in eras.ERAS.values() if e.commit == commit]
    date = datetime.date.fromisoformat(era.date)
    return calendar.month_name[date.month], str(date.year)


def facts_line(step):
    text = FRONT_MATTER.sub("", read(step)).rstrip()
    return re.search(r"```\{container\} c2r-facts\n(.*?)```\Z", text, re.S).group(1)


@pytest.mark.parametrize(
    "doc", [s.doc for s in markdown_steps() if s.number <= CORE_PATH_LAST_STEP]
)
def test_a_core_path_facts_line_names_commit_and_month_without_eras(doc):
    """Steps 1-21 name a commit and its month in words ("Facts on this page: Caffe2 at
    `0cdd09da6` (June 2017)"), and no era: round 12's cold readers counted the era
    codes of every foot line as load. The history, steps 22-25, keeps its era codes."""
    step = next(s for s in markdown_steps() if s.doc == doc)
    line = facts_line(step)
    assert re.match(r"Facts on this page: Caffe2 at `[0-9a-f]{9}` " + MONTH_YEAR, line), (
        "%s: the facts line starts 'Facts on this page: Caffe2 at `<commit>` (<Month> <year>)',"
        " not %r" % (doc, line)
    )
    assert not ERA_WORDS.search(line), "%s: era vocabulary in the facts line: %r" % (doc, line)
    for commit, month, year in re.findall(r"`([0-9a-f]{9})` " + MONTH_YEAR, line):
        assert (month, year) == month_year(commit), "%s: %s is of %s %s, not %s %s" % (
            (doc, commit) + month_year(commit) + (month, year)
        )


@pytest.mark.parametrize("doc", page_ids())
def test_commits_behind_single_facts_are_footnotes(doc):
    step = next(s for s in markdown_steps() if s.doc == doc)
    prose = running_text(read(step))
    stray = sorted({h for h in HASH.findall(prose) if h not in ERA_COMMITS})
    assert not stray, (
        "%s: commit hashes in the running text (move them to a footnote [^n] or a "
        "table): %s" % (doc, ", ".join(stray))
    )


@pytest.mark.parametrize("doc", page_ids())
def test_code_fits_the_column(doc):
    step = next(s for s in markdown_steps() if s.doc == doc)
    long = [
        "line %d (%d characters): %s" % (n, len(line), line)
        for n, line in code_lines(read(step))
        if len(line) > CODE_COLUMN
    ]
    assert not long, "%s: code wider than %d characters:\n%s" % (doc, CODE_COLUMN, "\n".join(long))


#: Pages off the path whose code is written for the reader (not program output
#: quoted verbatim, as the benchmark tables of performance.md or the plan
#: listings of rnn-executor.md are): they fit the column too.
OTHER_PAGES = [
    "index.md",
    "concepts/recurrent-gradient-plumbing.md",
    "concepts/recurrent-net-gradient-rules.md",
    "glossary.md",
    "caffe2-tests.md",
    "concepts/eras-at-run-time.md",
    "concepts/workspace-api.md",
    "concepts/hardening.md",
]


@pytest.mark.parametrize("page", OTHER_PAGES)
def test_code_fits_the_column_off_the_path_too(page):
    with open(os.path.join(DOCS, page), encoding="utf-8") as handle:
        lines = code_lines(handle.read())
    long = [
        "line %d (%d): %s" % (n, len(line), line) for n, line in lines if len(line) > CODE_COLUMN
    ]
    assert not long, "%s: code wider than %d characters:\n%s" % (page, CODE_COLUMN, "\n".join(long))


#: A fold's summary fits one line of the article column at 1280 px (seen in Chromium).
FOLD_SUMMARY_CHARS = 80
FOLD_OPEN = re.compile(r'^<details class="c2r-fold[^"]*"><summary>(.*?)</summary>$', re.M)


@pytest.mark.parametrize(
    "doc", [s.doc for s in markdown_steps() if s.number <= CORE_PATH_LAST_STEP]
)
def test_fold_summaries_on_the_core_path_fit_one_line(doc):
    step = next(s for s in markdown_steps() if s.doc == doc)
    for summary in FOLD_OPEN.findall(read(step)):
        shown = re.sub(r"<[^>]+>", "", summary)
        assert len(shown) <= FOLD_SUMMARY_CHARS, "%s: fold summary longer than one line: %s" % (
            doc,
            shown,
        )


#: The page that tells every deliberate difference; badges elsewhere link to it.
DIFFERENCES = "concepts/differences.md"
#: A badge: a one-line container whose only content is a {ref} to a difference.
BADGE = re.compile(r"^```\{container\} c2r-badge\n(.*?)\n```[ \t]*$", re.M | re.S)
BADGE_REF = re.compile(r"^\{ref\}`caffe2rnn differs: ([^<`]+?) <(differs-[a-z0-9-]+)>`$")
#: A badge says the difference in this many words at most (after "caffe2rnn differs:").
BADGE_WORDS = 15
#: A difference's anchor on the differences page, and the heading it labels.
DIFFERS_SECTION = re.compile(r"^\((differs-[a-z0-9-]+)\)=\n(?:\n)?(#{2,3} \S.*)$", re.M)


def badges(text):
    """(label, words) of every badge of a page's Markdown; a badge that is not
    exactly one {ref} line to a differs- label gives (None, its text)."""
    found = []
    for body in BADGE.findall(text):
        match = BADGE_REF.match(body.strip())
        found.append((match.group(2), match.group(1)) if match else (None, body))
    return found


def differs_sections(text):
    """The differs- labels of the differences page, each on a section heading."""
    return [label for label, _heading in DIFFERS_SECTION.findall(text)]


def site_pages():
    """Every Markdown page of docs/ (the build's own output excluded)."""
    pages = []
    for root, dirs, files in os.walk(DOCS):
        dirs[:] = [d for d in dirs if not d.startswith(("_build", "."))]
        pages += [os.path.join(root, f) for f in files if f.endswith(".md")]
    return sorted(pages)


def all_badges():
    found = []
    for page in site_pages():
        with open(page, encoding="utf-8") as handle:
            text = handle.read()
        found += [(os.path.relpath(page, DOCS), label, words) for label, words in badges(text)]
    return found


def test_every_badge_links_to_a_section_of_the_differences_page():
    with open(os.path.join(DOCS, DIFFERENCES), encoding="utf-8") as handle:
        sections = set(differs_sections(handle.read()))
    found = [b for b in all_badges() if b[0] != DIFFERENCES]
    assert found, "no caffe2rnn differs badge on any page"
    bad = [(page, words) for page, label, words in found if label is None]
    assert not bad, "badges that are not one {ref}`caffe2rnn differs: ... <differs-...>`: %s" % bad
    missing = [(page, label) for page, label, _ in found if label not in sections]
    assert not missing, "badges whose target is not a section of %s: %s" % (DIFFERENCES, missing)
    long = [(page, words) for page, _, words in found if len(words.split()) > BADGE_WORDS]
    assert not long, "badges longer than %d words: %s" % (BADGE_WORDS, long)


def test_every_difference_is_linked_by_a_badge_where_it_is_met():
    with open(os.path.join(DOCS, DIFFERENCES), encoding="utf-8") as handle:
        text = handle.read()
    sections = differs_sections(text)
    assert len(sections) == len(set(sections)) == len(re.findall(r"^\(differs-", text, re.M)), (
        "every differs- label of %s must label a section heading, once" % DIFFERENCES
    )
    linked = {label for page, label, _ in all_badges() if page != DIFFERENCES}
    unlinked = [label for label in sections if label not in linked]
    assert not unlinked, "differences no badge links to: %s" % unlinked


def test_no_caffe2rnn_differs_box_is_left_on_a_page():
    """The differences moved to their page; a box or a differs- label elsewhere
    would tell a difference twice (or move an anchor away from its section)."""
    left = []
    for page in site_pages():
        if os.path.relpath(page, DOCS) == DIFFERENCES:
            continue
        with open(page, encoding="utf-8") as handle:
            text = handle.read()
        if re.search(r"c2r-differs|c2r-fold-differs|^\(differs-", text, re.M):
            left.append(os.path.relpath(page, DOCS))
    assert not left, "caffe2rnn differs boxes or labels outside %s: %s" % (DIFFERENCES, left)


#: The foot box of a page: a label, then an admonition of class c2r-foot-differs
#: holding the page's badges (CONTRIBUTING.md, "Differences on a page").
FOOT_BOX = re.compile(
    r"^\(([a-z0-9-]+)\)=\n(`{4,})\{admonition\} Where caffe2rnn differs from Caffe2 on this "
    r"page\n:class: c2r-foot-differs\n(.*?)^\2[ \t]*$",
    re.M | re.S,
)
#: A "≠" in the reading line: a {ref} to the page's foot box.
MARKER = re.compile(r"\{ref\}`≠ <([a-z0-9-]+)>`")
#: The pages whose badges all live in their foot box: every Markdown page of the path
#: (steps 1-7 since round 13, the rest since round 14).
FOOT_BOX_PAGES = [
    "start-here",
    "concepts/netdef",
    "concepts/gradients",
    "concepts/models",
    "concepts/links-and-aliases",
    "concepts/recurrent-op",
    "concepts/recurrent-gradient",
    "concepts/time-stepper",
    "concepts/recurrent-net",
    "concepts/cells",
]


@pytest.mark.parametrize("doc", page_ids())
def test_a_page_gathers_its_badges_in_one_box_at_its_foot(doc):
    """At most one foot box, right above the facts line, holding at least one badge;
    every "≠" of the page links to it; on FOOT_BOX_PAGES no badge is outside it."""
    step = next(s for s in markdown_steps() if s.doc == doc)
    text = FRONT_MATTER.sub("", read(step)).rstrip()
    boxes = list(FOOT_BOX.finditer(text))
    assert len(boxes) <= 1, "%s: more than one 'Where caffe2rnn differs' box" % doc
    outside = badges(FOOT_BOX.sub("", text))
    markers = MARKER.findall(text)
    if doc in FOOT_BOX_PAGES:
        assert not outside, "%s: badges outside the foot box: %s" % (doc, outside)
    if not boxes:
        assert not markers, "%s: a '≠' with no foot box to link to" % doc
        return
    (box,) = boxes
    assert badges(box.group(3)), "%s: an empty foot box" % doc
    after = text[box.end() :].lstrip()
    assert after.startswith("```{container} c2r-facts"), (
        "%s: the foot box stands right above the facts line" % doc
    )
    assert set(markers) <= {box.group(1)}, "%s: '≠' links elsewhere: %s" % (doc, markers)


@pytest.mark.parametrize("doc", [s.doc for s in markdown_steps() if s.number <= 7])
def test_steps_1_to_7_keep_eras_out_of_their_reading_line(doc):
    step = next(s for s in markdown_steps() if s.doc == doc)
    found = ERA_WORDS.findall(running_text(read(step)))
    assert not found, "%s: era vocabulary in the running text: %s" % (doc, found)


def test_step_17_keeps_eras_out_of_its_reading_line():
    """Round 14: step 17 (cells) moves its era notes to footnotes and "Going further";
    only the foot box's badge may name one."""
    (step,) = [s for s in markdown_steps() if s.doc == "concepts/cells"]
    found = ERA_WORDS.findall(running_text(FOOT_BOX.sub("", read(step))))
    assert not found, "concepts/cells: era vocabulary in the running text: %s" % found


def test_the_sidebar_shows_each_page_s_own_title():
    """The path's toctree names documents only: Sphinx then shows each page's H1
    in the sidebar, in "Next"/"Previous" and in the browser tab alike."""
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    blocks = re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
    titled = [
        line.strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^[^:<\s][^<]*<[^>]+>\s*$", line)
    ]
    assert not titled, "toctree entries with a title of their own: %s" % titled


def test_the_helpers_find_what_they_should():
    text = (
        "# T\n\n```{container} c2r-facts\nat `0cdd09da6`\n```\n\nRan `abcdef123`.[^a]\n\n"
        "| x | `1234567ab` |\n\n```python\n" + "y" * 80 + "\n```\n\n"
        "[^a]: from `fedcba987`\n    and `aaaaaaaaa`\n"
    )
    prose = running_text(text)
    assert HASH.findall(prose) == ["abcdef123"]
    assert [len(line) for _, line in code_lines(text)] == [80]
    page = (
        "x\n\n```{container} c2r-badge\n{ref}`caffe2rnn differs: a b <differs-a>`\n```\n\n"
        "```{container} c2r-badge\nsee {ref}`x <differs-b>`\n```\n"
    )
    assert badges(page) == [("differs-a", "a b"), (None, "see {ref}`x <differs-b>`")]
    sections = "(differs-a)=\n## A\n\ntext\n\n(differs-b)=\ntext\n"
    assert differs_sections(sections) == ["differs-a"]


@pytest.mark.parametrize(
    "doc", [s.doc for s in markdown_steps() if s.number <= CORE_PATH_LAST_STEP]
)
def test_every_concept_page_of_the_core_path_asks_a_prediction(doc):
    """The index promises a predict-then-check on every page of the path: a bold
    "Predict, then check." followed by its "Check your prediction" fold (round 11: step 10
    had lost its only one when its exercise moved to step 17, and no test said so)."""
    step = next(s for s in markdown_steps() if s.doc == doc)
    text = read(step)
    asks = [m.end() for m in re.finditer(r"\*\*Predict, then check\.\*\*", text)]
    assert asks, "%s: no **Predict, then check.** on a page of the core path" % doc
    for at in asks:
        fold = text.find('<details class="c2r-answer"><summary>Check your prediction</summary>', at)
        nxt = text.find("**Predict, then check.**", at)
        assert fold != -1 and (nxt == -1 or fold < nxt), (
            "%s: a prediction without its own 'Check your prediction' fold after it" % doc
        )


# --- step 12 and its reference page -------------------------------------------------------

#: Step 12 is the backward loop; the names of Caffe2's plumbing around it (the backward
#: arguments, ``param_grads``, ``_tmpstep``, the prepared backward step net,
#: ``shared_blobs_ws``) are on a reference page off the path (round 12: four cold readers
#: read a "you can stop here" that later steps contradicted).
GRADIENT_PATH_PAGE = "concepts/recurrent-gradient.md"
GRADIENT_PLUMBING = "concepts/recurrent-gradient-plumbing.md"
#: The steps that use the plumbing's names, by document: each links to the page.
PLUMBING_USERS = [
    "notebooks/06_backward_by_hand",
    "concepts/recurrent-net",
    "notebooks/07_recurrent_net",
    "concepts/history",
]
LINK_TARGET_OF = re.compile(r"\]\(([^)\s]+)\)")
MYST_LABEL = re.compile(r"^\(([A-Za-z0-9_-]+)\)=[ \t]*$", re.M)
HEADING = re.compile(r"^(#{1,3}) (.+?)[ \t]*$", re.M)


def prose_of(path):
    """A Markdown page's text, or a notebook's markdown cells joined."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if not path.endswith(".ipynb"):
        return text
    cells = json.loads(text)["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def anchors_of(text):
    """The fragments a page answers to: its (label)= targets and, for headings of
    levels 1-3 (docs/conf.py's myst_heading_anchors), both ids Sphinx writes
    (MyST's GitHub-style slug and docutils' own id)."""
    from docutils.nodes import make_id

    text = FENCE.sub("", FRONT_MATTER.sub("", text))
    found = set(MYST_LABEL.findall(text))
    for _level, title in HEADING.findall(text):
        shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
        found.add(re.sub(r"[^\w\- ]", "", shown.lower().replace(" ", "-")))
        found.add(make_id(shown))
    return found


def test_step_12_ends_where_its_loop_ends_and_sends_the_plumbing_to_its_page():
    steps = {s.doc: s for s in path_steps()}
    assert "concepts/recurrent-gradient" in steps, "step 12's page left the path"
    assert os.path.splitext(GRADIENT_PLUMBING)[0] not in steps, (
        "%s is reference, not a step of the path" % GRADIENT_PLUMBING
    )
    with open(os.path.join(DOCS, GRADIENT_PATH_PAGE), encoding="utf-8") as handle:
        path_page = handle.read()
    for left in ("c2r-stop", "You can stop here", "## Part 2", "## The backward arguments",
                 "## Three workspaces"):  # fmt: skip
        assert left not in path_page, "%s still holds %r" % (GRADIENT_PATH_PAGE, left)
    assert "recurrent-gradient-plumbing.md" in path_page
    with open(os.path.join(DOCS, GRADIENT_PLUMBING), encoding="utf-8") as handle:
        plumbing = FRONT_MATTER.sub("", handle.read()).rstrip()
    # it reads on its own: it says first what it assumes (step 12) and what it answers
    opening = plumbing.split("\n## ", 1)[0]
    assert "](recurrent-gradient.md)" in opening and "assumes" in opening
    assert re.search(r"```\{container\} c2r-facts\n.*`[0-9a-f]{9}`.*\n```\Z", plumbing, re.S)
    stray = sorted({h for h in HASH.findall(running_text(plumbing)) if h not in ERA_COMMITS})
    assert not stray, "%s: commits in the running text: %s" % (GRADIENT_PLUMBING, stray)
    for figure in ("fig_recurrent_gradient_op.svg", "fig_backward_step_net.svg"):
        assert figure in plumbing, "%s lost %s" % (GRADIENT_PLUMBING, figure)
    assert "fig_bptt.svg" in path_page and "fig_bptt.svg" not in plumbing


def test_the_steps_that_use_the_plumbing_s_names_link_to_its_page():
    steps = {s.doc: s for s in path_steps()}
    unlinked = [
        "step %d (%s)" % (steps[doc].number, doc)
        for doc in PLUMBING_USERS
        if os.path.basename(GRADIENT_PLUMBING) not in prose_of(steps[doc].path)
    ]
    assert not unlinked, "no link to %s from %s" % (GRADIENT_PLUMBING, ", ".join(unlinked))


#: Path pages split in two: the step, and the reference page that took part of it. Links
#: into either by a fragment are checked (round 13 moved step 15's SSA versions, the
#: backward links of a state and the ``_accum`` rewrite to a reference page).
SPLIT_PAGES = {
    "step 12": (GRADIENT_PATH_PAGE, GRADIENT_PLUMBING),
    "step 15": ("concepts/recurrent-net.md", "concepts/recurrent-net-gradient-rules.md"),
}


@pytest.mark.parametrize("split", sorted(SPLIT_PAGES))
def test_links_into_a_split_step_and_its_reference_page_name_a_section_they_have(split):
    """The split moved sections between the two pages: a link to one of them by a
    fragment must find that heading or label on the page it names."""
    pages = {}
    for page in SPLIT_PAGES[split]:
        with open(os.path.join(DOCS, page), encoding="utf-8") as handle:
            pages[os.path.basename(page)] = anchors_of(handle.read())
    sources = site_pages() + sorted(
        os.path.join(NOTEBOOKS, f) for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb")
    )
    broken, seen = [], 0
    for source in sources:
        for target in LINK_TARGET_OF.findall(prose_of(source)):
            page, _, fragment = target.partition("#")
            name = os.path.basename(page)
            if name not in pages or not fragment:
                continue
            seen += 1
            if fragment not in pages[name]:
                broken.append("%s: %s" % (os.path.relpath(source, DOCS), target))
    assert seen, "no link with a fragment into %s or its reference page was found" % split
    assert not broken, "links to sections these pages do not have:\n" + "\n".join(broken)


def test_step_15_keeps_what_a_user_needs_and_sends_the_two_rules_to_their_page():
    """Round 13 (both cold readers: step 15 was the costliest page): SSA versions, the
    backward link of a state and the ``_accum`` rewrite live on a reference page off the
    path, which step 15 links to; step 15 shows its op with plain prints."""
    step, rules = SPLIT_PAGES["step 15"]
    steps = {s.doc: s for s in path_steps()}
    assert os.path.splitext(rules)[0] not in steps, "%s is reference, not a step" % rules
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    reference = re.search(r":caption: Reference\n.*?```", index, re.S).group(0)
    assert (
        reference.index("recurrent-gradient-plumbing")
        < reference.index(os.path.splitext(rules)[0])
        < reference.index("glossary")
    )
    with open(os.path.join(DOCS, step), encoding="utf-8") as handle:
        path_page = handle.read()
    for left in ("## SSA versions", "## The backward links of a state",
                 "## The `_accum` rewrite", "mock.patch", "text_format"):  # fmt: skip
        assert left not in path_page, "%s still holds %r" % (step, left)
    assert os.path.basename(rules) in path_page
    # round 14 (cold reader T): each rule is taught on the step in a few sentences, so the
    # reference page is optional; the three renames' table is step 12's, linked by its label
    # (round 15: the site's stage numbers are the plain list's, "(4)", not "(stage 4)")
    # (round 16, reader Z: the backward-link rule is worked on the Elman cell's input_t)
    for rule in ("**Which blob a backward link views (4).**", "**The `_accum` rewrite (5).**"):
        assert rule in path_page, "%s no longer teaches %r" % (step, rule)
    assert "<three-renames>`" in path_page and "| `<param>_grad_tmpstep` |" not in path_page
    with open(os.path.join(DOCS, rules), encoding="utf-8") as handle:
        moved = FRONT_MATTER.sub("", handle.read()).rstrip()
    opening = moved.split("\n## ", 1)[0]
    assert "](recurrent-net.md)" in opening and "assumes" in opening
    for section in ("## SSA versions", "## The backward links of a state",
                    "## The `_accum` rewrite"):  # fmt: skip
        assert section in moved, "%s lost %r" % (rules, section)
    assert re.search(r"```\{container\} c2r-facts\n.*`[0-9a-f]{9}`.*\n```\Z", moved, re.S)


# --- the optional page on k initial rows ---------------------------------------------------

#: Round 13 (both cold readers): an initial state of k > 1 rows (``link_window``, the shifted
#: links and aliases, the gradient's rows) is an edge case that steps 8, 10 and 12 taught three
#: times; it lives on one optional page in the Reference part, which they link to.
K_ROWS_PAGE = "concepts/initial-state-rows.md"


def test_k_initial_rows_are_on_one_optional_page_the_path_links_to():
    steps = {s.doc: s for s in path_steps()}
    assert os.path.splitext(K_ROWS_PAGE)[0] not in steps, "%s is off the path" % K_ROWS_PAGE
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    reference = [
        b for b in re.findall(r"```\{toctree\}\n(.*?)```", index, re.S) if "Reference" in b
    ]
    entries = [line for line in reference[0].splitlines() if line and not line.startswith(":")]
    at = entries.index("concepts/recurrent-gradient-plumbing")
    assert entries[at + 1] == os.path.splitext(K_ROWS_PAGE)[0], entries
    for doc in (
        "concepts/links-and-aliases",
        "concepts/recurrent-op",
        "concepts/recurrent-gradient",
    ):
        text = read(steps[doc])
        assert "initial-state-rows.md" in text, "%s does not link to %s" % (doc, K_ROWS_PAGE)
        for gone in (
            "$T + k$",
            "Going further: an initial state of k rows</summary>",
            "k-row-initial-state",
        ):
            assert gone not in text, "%s still teaches k rows (%r)" % (doc, gone)
    with open(os.path.join(DOCS, K_ROWS_PAGE), encoding="utf-8") as handle:
        page = handle.read()
    for fact in ("link_window", "(backward-k-rows)=", "$T + k$", "initializeRecurrentInput"):
        assert fact in page, "%s lost %r" % (K_ROWS_PAGE, fact)


def test_the_k_rows_page_s_lists_are_the_one_row_lists_moved_and_run_in_the_op(capsys):
    """The page's answer for k = 2 (the predict step 9 asked until round 13): its cell runs
    caffe2rnn's op with the lists it states and asserts the recurrence from h0's row 1; its
    lists are the one-row lists with every link into the state tensor and the positive alias
    moved k - 1 = 1 row on (derived here from caffe2rnn.exercises' one-row lists)."""
    from caffe2rnn.exercises import ALIASES, LINKS, STATES

    with open(os.path.join(DOCS, K_ROWS_PAGE), encoding="utf-8") as handle:
        page = handle.read()
    cells = [
        m.group(3) for m in FENCE.finditer(page) if m.group(2).strip() == "{code-cell} ipython3"
    ]
    assert cells  # the first cell states and runs the lists
    code = re.sub(r"\A(:\w+:.*\n)+", "", cells[0].lstrip("\n"))
    namespace = {}
    exec(compile(code, K_ROWS_PAGE, "exec"), namespace)
    moved_links = [(i, e, o + 1 if e == STATES else o) for i, e, o in LINKS]
    moved_aliases = [(s, d, o + 1 if o > 0 else o) for s, d, o in ALIASES]
    assert namespace["S"] == STATES
    assert namespace["links"] == moved_links and namespace["aliases"] == moved_aliases
    out = capsys.readouterr().out
    assert "hidden_t_all  (4, 2, 3)" in out and "= (T + 2, N, D)" in out, out


def path_length_module():
    import importlib.util

    path = os.path.join(DOCS, "path_length.py")
    spec = importlib.util.spec_from_file_location("path_length", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_index_states_the_path_length_the_build_counts():
    """docs/index.md's "about N words … M code cells" comes from docs/path_length.py at
    build time (a number typed in went stale twice)."""
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    assert "about {{ path_words }} words of prose" in index
    assert "{{ path_code_cells }} code cells" in index
    assert not re.search(r"about [\d,]+ words", index)
    words, cells = path_length_module().path_length(DOCS)
    notebook_cells = 0
    for step in path_steps()[: path_length_module().CORE_PATH_STEPS]:
        if step.path.endswith(".ipynb"):
            with open(step.path, encoding="utf-8") as handle:
                notebook_cells += sum(c["cell_type"] == "code" for c in json.load(handle)["cells"])
    assert cells >= notebook_cells > 0
    assert words > 10 * cells


def test_the_path_length_counts_prose_not_code():
    prose_lines = path_length_module().prose_lines
    text = "\n".join(
        [
            "One two.",
            "```{code-cell} ipython3",
            "x = never_counted()",
            "```",
            ":::{tip}",
            ":class: dropdown",
            "Tip words count.",
            "```python",
            "nor_this()",
            "```",
            ":::",
            "````{toctree}",
            "not/prose",
            "````",
            "Last line.",
        ]
    )
    assert list(prose_lines(text)) == ["One two.", "Tip words count.", "Last line."]


def test_no_backtick_fence_has_a_backtick_in_its_info_string():
    """CommonMark: a backtick fence's info string may not hold a backtick, so
    ```{admonition} The `x` rule`` opens no fence, and its closing ``` opens
    one that swallows the rest of the page as code. Titles with code use a
    colon fence (:::{admonition} ...)."""
    bad = []
    for page in site_pages():
        with open(page, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                match = re.match(r"^\s*(`{3,})(.*)$", line)
                if match and "`" in match.group(2):
                    bad.append("%s:%d: %s" % (os.path.relpath(page, DOCS), number, line.strip()))
    assert not bad, "backtick fences with a backtick in the info string:\n" + "\n".join(bad)
