"""The learner's path uses every glossary term only at or after the step that teaches it.

The path is the ``:numbered:`` toctree of ``docs/index.md`` ("Learn Caffe2's
recurrent networks"): pages under ``docs/`` and notebooks read from
``notebooks/`` (the docs build copies them to ``docs/notebooks``). The terms are
the entries of ``docs/glossary.md``; each ends with

    *Taught in* **step N**, [title](page). *Spelled* form, form, `code form`.

A plain form (``step net``) is looked for in the prose and the code of a step,
as a whole word, with any capitalisation when it is written in lower case
(``GO``, ``E5``, ``RecurrentNetwork`` must match exactly); a form in backticks
(```_tmpstep```) only in code: inline code, code blocks, notebook code cells.
Link targets, image paths and directive options are not read. A step may use
a term it teaches itself.

Run as a script for the table of first uses: ``python tests/docs/test_progression.py``.
"""

import json
import os
import re
from dataclasses import dataclass, field

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
NOTEBOOKS = os.path.join(ROOT, "notebooks")


@dataclass
class Step:
    number: int
    doc: str  # "concepts/netdef" or "notebooks/01_netdef_and_workspace"
    title: str
    path: str  # the file read

    @property
    def exists(self):
        return os.path.exists(self.path)


@dataclass
class Term:
    name: str
    step: int
    target: str  # the page the glossary points to for the step
    forms: list = field(default_factory=list)  # (text, code_only)


def path_steps():
    """The numbered toctree of docs/index.md, in order."""
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as handle:
        index = handle.read()
    blocks = re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
    numbered = [b for b in blocks if re.search(r"^:numbered:", b, re.M)]
    assert len(numbered) == 1, "docs/index.md must have exactly one :numbered: toctree"
    steps = []
    for line in numbered[0].splitlines():
        if not line.strip() or line.startswith(":"):
            continue
        found = re.match(r"^(?:(.*?)\s*<([^>]+)>|(\S+))\s*$", line)
        title, doc = (found.group(1), found.group(2)) if found.group(2) else ("", found.group(3))
        if doc.startswith("notebooks/"):
            path = os.path.join(NOTEBOOKS, doc.split("/", 1)[1] + ".ipynb")
        else:
            path = os.path.join(DOCS, doc + ".md")
        steps.append(Step(len(steps) + 1, doc, title, path))
    return steps


def glossary_terms():
    with open(os.path.join(DOCS, "glossary.md"), encoding="utf-8") as handle:
        text = handle.read()
    block = re.search(r"```\{glossary\}\n(.*?)```", text, re.S).group(1)
    entries, current = [], None
    for line in block.splitlines():
        if line and not line[0].isspace():
            current = [line.strip(), []]
            entries.append(current)
        elif current is not None:
            current[1].append(line.strip())
    terms = []
    for name, lines in entries:
        body = " ".join(lines)
        taught = re.search(r"\*Taught in\* \*\*step (\d+)\*\*, \[[^\]]*\]\(([^)#]+)", body)
        spelled = re.search(r"\*Spelled\* (.*?)\.?\s*$", body)
        assert taught and spelled, "glossary %r: no '*Taught in* **step N**' or '*Spelled*'" % name
        forms = []
        for form in re.split(r",\s*", spelled.group(1)):
            code = form.startswith("`") and form.endswith("`")
            forms.append((form.strip("`"), code))
        terms.append(Term(name, int(taught.group(1)), taught.group(2), forms))
    return terms


# --- what a learner reads on a step: prose and code, apart ------------------------------

FENCE = re.compile(r"^(```+|~~~+)([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
ROLE = re.compile(r"\{[a-z:-]+\}`([^`]*)`")
INLINE_CODE = re.compile(r"``(.+?)``|`([^`\n]+)`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def split_markdown(text):
    """(prose, code) of a Markdown/MyST text."""
    text = HTML_COMMENT.sub(" ", FRONT_MATTER.sub("", text))
    code = []

    def fence(match):
        info = match.group(2).strip()
        body = match.group(3)
        if info.startswith("{"):  # a directive: drop its options; code-cell bodies are code
            body = "\n".join(line for line in body.splitlines() if not line.startswith(":"))
            if info.startswith("{code-cell}"):
                code.append(body)
                return "\n"
            inner_prose, inner_code = split_markdown(body)
            code.append(inner_code)
            return "\n" + inner_prose + "\n"
        code.append(body)
        return "\n"

    text = FENCE.sub(fence, text)
    text = ROLE.sub(lambda m: re.sub(r"\s*<[^>]*>$", "", m.group(1)), text)  # {term}`a <b>`
    text = LINK_TARGET.sub("]", text)

    def inline(match):
        code.append(match.group(1) or match.group(2))
        return " "

    prose = INLINE_CODE.sub(inline, text)
    return prose, "\n".join(code)


def read_step(step):
    """(prose, code) of a path step: a Markdown page or a notebook's cells."""
    if step.path.endswith(".ipynb"):
        with open(step.path, encoding="utf-8") as handle:
            notebook = json.load(handle)
        prose, code = [], []
        for cell in notebook["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "markdown":
                p, c = split_markdown(source)
                prose.append(p)
                code.append(c)
            elif cell["cell_type"] == "code":
                code.append(source)
        return "\n".join(prose), "\n".join(code)
    with open(step.path, encoding="utf-8") as handle:
        return split_markdown(handle.read())


def form_pattern(form):
    """A whole-word regular expression for a form; lower-case forms ignore case."""
    left = r"(?<![A-Za-z0-9])" if form[0].isalnum() else ""
    right = r"(?![A-Za-z0-9])" if form[-1].isalnum() else ""
    flags = re.I if form == form.lower() else 0
    words = r"[\s-]+".join(re.escape(w) for w in form.split())
    return re.compile(left + words + right, flags)


def uses(term, prose, code):
    """The forms of ``term`` found in a step's text, with a little context each."""
    found = []
    for form, code_only in term.forms:
        pattern = form_pattern(form)
        for where in [code] if code_only else [prose, code]:
            match = pattern.search(where)
            if match:
                start = max(0, match.start() - 40)
                context = where[start : match.end() + 40].replace("\n", " ")
                found.append("%r in '...%s...'" % (form, context))
                break
    return found


# --- the tests ----------------------------------------------------------------------------


def test_every_step_of_the_path_exists():
    missing = [
        "step %d %s (%s)" % (s.number, s.doc, os.path.relpath(s.path, ROOT))
        for s in path_steps()
        if not s.exists
    ]
    assert not missing, "the path in docs/index.md names files that do not exist: %s" % missing


def test_every_glossary_term_points_at_the_step_that_teaches_it():
    steps = {s.number: s for s in path_steps()}
    problems = []
    for term in glossary_terms():
        step = steps.get(term.step)
        if step is None:
            problems.append("%s: step %d is not on the path" % (term.name, term.step))
            continue
        target = os.path.splitext(term.target)[0]
        if target != step.doc:
            problems.append(
                "%s: 'step %d' links to %s, but step %d is %s"
                % (term.name, term.step, term.target, term.step, step.doc)
            )
            continue
        # A page that teaches a term says it (notebooks are written by their own hands:
        # the order check below still holds them to the glossary).
        if step.exists and step.path.endswith(".md") and not uses(term, *read_step(step)):
            problems.append(
                "%s: step %d (%s) never mentions it (%s)"
                % (term.name, term.step, step.doc, ", ".join(f for f, _ in term.forms))
            )
    assert not problems, "\n".join(problems)


#: Sections that name later steps' terms on purpose, as a preview each row of which
#: links the step that teaches it: {doc: (label, {term: step})}. Round 14: step 12 holds
#: the one table of the three renames that add gradients up (both cold readers of round
#: 13 mixed them up); its `_accum` row points at step 15, which links back to it.
PREVIEW_SECTIONS = {
    "concepts/recurrent-gradient": (
        "three-renames",
        {"_accum rewrite": 15, "recurrent_net": 15},
    ),
}


def preview_section(step):
    """(the text of a step's preview section, the terms it may name early) or ("", {})."""
    if step.doc not in PREVIEW_SECTIONS:
        return "", {}
    label, allowed = PREVIEW_SECTIONS[step.doc]
    with open(step.path, encoding="utf-8") as handle:
        text = handle.read()
    found = re.search(r"^\(%s\)=\n## .*?(?=^## |\Z)" % re.escape(label), text, re.M | re.S)
    assert found, "%s: no section labelled (%s)=" % (step.doc, label)
    return found.group(0), allowed


def test_a_preview_section_links_the_step_of_each_term_it_names_early():
    steps = {s.number: s for s in path_steps()}
    for step in path_steps():
        section, allowed = preview_section(step)
        for name, number in allowed.items():
            target = os.path.basename(steps[number].doc)
            assert "(%s" % target in section or "(../%s" % steps[number].doc in section, (
                "%s: the preview names %r but does not link step %d" % (step.doc, name, number)
            )


def test_no_step_uses_a_term_before_the_step_that_teaches_it():
    terms = glossary_terms()
    early = []
    for step in path_steps():
        if not step.exists:
            continue
        prose, code = read_step(step)
        section, allowed = preview_section(step)
        if section:
            with open(step.path, encoding="utf-8") as handle:
                prose, code = split_markdown(handle.read().replace(section, ""))
            section_prose, section_code = split_markdown(section)
        for term in terms:
            if term.step <= step.number:
                continue
            if section and term.name not in allowed and uses(term, section_prose, section_code):
                early.append(
                    "step %d (%s) names %r in its preview section; only %s may be"
                    % (step.number, step.doc, term.name, sorted(allowed))
                )
            for use in uses(term, prose, code):
                early.append(
                    "step %d (%s) uses %r, taught in step %d: %s"
                    % (step.number, step.doc, term.name, term.step, use)
                )
    assert not early, "\n".join(early)


@pytest.mark.parametrize(
    "form, text, found",
    [
        ("step net", "the Step  net runs", True),
        ("step net", "a step-net blob", True),
        ("link", "unlinked", False),
        ("GO", "let us go", False),
        ("GO", "each GO(i) adds", True),
        ("E5", "1E5 and E5.", True),
        ("_tmpstep", "W_grad_tmpstep", True),
        ("B1", "B10", False),
    ],
)
def test_forms_match_whole_words(form, text, found):
    assert bool(form_pattern(form).search(text)) is found


def test_code_only_forms_are_not_read_in_prose():
    prose, code = split_markdown(
        "Prose about _tmpstep and {term}`alias`.\n\n```python\nx = 'W_grad_tmpstep'\n```\n"
        "Inline `seq_lengths` here; a [link](links-and-aliases.md).\n"
    )
    assert "_tmpstep" in prose and "alias" in prose and "links-and-aliases" not in prose
    assert "W_grad_tmpstep" in code and "seq_lengths" in code and "seq_lengths" not in prose
    term = Term("tmp", 12, "x", [("_tmpstep", True)])
    assert uses(term, prose, "") == []
    assert uses(term, "", code)


if __name__ == "__main__":  # the table of where each term is first used
    terms = glossary_terms()
    steps = [s for s in path_steps() if s.exists]
    texts = {s.number: read_step(s) for s in steps}
    for term in sorted(terms, key=lambda t: t.step):
        first = next((s for s in steps if uses(term, *texts[s.number])), None)
        print(
            "%-28s taught in %2d, first used in %s"
            % (term.name, term.step, "%2d %s" % (first.number, first.doc) if first else "-")
        )
