"""How long the core path is: the words and code cells docs/index.md states.

conf.py counts them at every build (``myst_substitutions`` ``path_words`` and
``path_code_cells``), so the index never states a number typed in by hand and left
stale; tests/docs/test_pages.py checks the counting rules.
"""

import json
import os
import re

#: The last step of the core path (steps 22-25, the history, are optional).
CORE_PATH_STEPS = 21
#: A fence's first line: its marker and what follows it ("```{code-cell}", ":::{tip}").
FENCE = re.compile(r"^(`{3,}|:{3,})(.*)$")
#: Fenced directives whose body a reader reads as text.
PROSE_DIRECTIVES = {"admonition", "note", "tip", "warning", "important", "hint", "seealso"}
PROSE_DIRECTIVES |= {"figure"}  # its caption


def prose_lines(text):
    """The lines of MyST text a reader reads as prose: outside code fences and other
    directives, or inside a directive of PROSE_DIRECTIVES (its ``:option:`` lines left
    out)."""
    stack = []  # (marker, holds prose) of each open fence
    for line in text.splitlines():
        found = FENCE.match(line)
        if found:
            marker, info = found.group(1), found.group(2).strip()
            if stack and marker == stack[-1][0] and not info:
                stack.pop()
                continue
            if not stack or stack[-1][1]:
                name = re.match(r"\{([\w-]+)\}", info)
                stack.append((marker, bool(name) and name.group(1) in PROSE_DIRECTIVES))
                continue
        if all(holds for _, holds in stack) and not (stack and re.match(r"^:[\w-]+:", line)):
            yield line


def path_length(docs_dir):
    """The core path's length as docs/index.md states it: words of prose (Markdown
    pages and notebook Markdown cells, folds and footnotes included; code, HTML tags
    and directives' options left out) and code cells, of steps 1 to CORE_PATH_STEPS.
    Counted from the sources at every build, so the number never goes stale."""
    with open(os.path.join(docs_dir, "index.md"), encoding="utf-8") as handle:
        blocks = re.findall(r"```\{toctree\}\n(.*?)```", handle.read(), re.S)
    toctree = next(block for block in blocks if ":numbered:" in block)
    docs = [line.strip() for line in toctree.splitlines() if line.strip() and line[0] != ":"]
    words = cells = 0
    for doc in docs[:CORE_PATH_STEPS]:
        if doc.startswith("notebooks/"):
            path = os.path.join(os.path.dirname(docs_dir), doc + ".ipynb")
            with open(path, encoding="utf-8") as handle:
                notebook = json.load(handle)["cells"]
            texts = ["".join(c["source"]) for c in notebook if c["cell_type"] == "markdown"]
            cells += sum(cell["cell_type"] == "code" for cell in notebook)
        else:
            with open(os.path.join(docs_dir, doc + ".md"), encoding="utf-8") as handle:
                texts = [handle.read()]
            cells += len(re.findall(r"^`{3,}\{code-cell\}", texts[0], re.M))
        for text in texts:
            prose = re.sub(r"<[^>]+>", " ", "\n".join(prose_lines(text)))
            words += len(re.findall(r"[^\W_]\S*|`[^`]+`", prose))
    return words, cells
