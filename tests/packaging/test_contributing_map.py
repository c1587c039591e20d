"""CONTRIBUTING.md's map ("Where things live") matches the tree, and modules stay small.

Every module of the package is named in the map — by its path, by its name in
a row that names its folder, or by a ``<family>`` pattern of its folder — and
every file the map names exists. Modules stay under :data:`MAX_LINES` lines
(CONTRIBUTING.md's size rule).
"""

import os
import re

import caffe2rnn

PACKAGE_DIR = os.path.dirname(os.path.abspath(caffe2rnn.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
MAX_LINES = 600


def map_rows():
    """The module cell of every row of the map's tables, as lists of `tokens`."""
    with open(os.path.join(ROOT, "CONTRIBUTING.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("|") and len(cells) == 2 and not set(cells[1]) <= set("-"):
            rows.append(re.findall(r"`([^`]+)`", cells[1]))
    return rows


def _as_path(token):
    """A map token as a path below the repository root, or None (a bare name)."""
    if token.startswith("caffe2rnn/"):
        return token
    if re.fullmatch(r"[a-z_]+/[a-z_/<>]*(\.py)?/?", token) and token.split("/")[0] in os.listdir(
        PACKAGE_DIR
    ):
        return "caffe2rnn/" + token
    return None


def coverage():
    """(files the map names, folders with a ``<pattern>``, {folder: bare names})."""
    files, patterns, named_in_folder = set(), set(), {}
    for tokens in map_rows():
        folders = []
        for token in tokens:
            path = _as_path(token)
            if path is None:
                continue
            if "<" in path:
                patterns.add(path.split("<")[0].rstrip("/"))
            elif path.endswith("/"):
                folders.append(path.rstrip("/"))
            else:
                files.add(path)
        for folder in folders:
            bare = {t[:-3] if t.endswith(".py") else t for t in tokens if _as_path(t) is None}
            named_in_folder.setdefault(folder, set()).update(bare)
    return files, patterns, named_in_folder


def package_modules():
    found = []
    for folder, _, names in os.walk(PACKAGE_DIR):
        if os.path.basename(folder) in ("_ext", "__pycache__"):
            continue
        for name in names:
            if name.endswith(".py") and name != "__init__.py":
                found.append(os.path.relpath(os.path.join(folder, name), ROOT))
    return sorted(found)


def test_the_map_has_rows():
    rows = map_rows()
    assert len(rows) > 20 and ["caffe2rnn/errors.py"] in rows


def test_every_module_is_in_the_map():
    files, patterns, named_in_folder = coverage()
    missing = []
    for module in package_modules():
        folder, name = os.path.split(module)
        if module in files or folder in patterns and not name.startswith("_"):
            continue
        if name[:-3] in named_in_folder.get(folder, ()) or name in named_in_folder.get(folder, ()):
            continue
        missing.append(module)
    assert not missing, "modules CONTRIBUTING.md's map does not name: %s" % missing


def test_every_file_the_map_names_exists():
    files, _, named_in_folder = coverage()
    absent = [f for f in files if not os.path.exists(os.path.join(ROOT, f))]
    for folder, names in named_in_folder.items():
        for name in names:
            if re.fullmatch(r"[a-z_0-9]+", name) and not any(
                os.path.exists(os.path.join(ROOT, folder, name + suffix)) for suffix in (".py", "")
            ):
                absent.append("%s/%s" % (folder, name))
    assert not absent, "CONTRIBUTING.md names files that do not exist: %s" % absent


def test_modules_stay_under_the_size_rule():
    long = {}
    for module in package_modules():
        if module.endswith("caffe2_pb2.py"):
            continue  # generated
        with open(os.path.join(ROOT, module), encoding="utf-8") as handle:
            lines = sum(1 for _ in handle)
        if lines > MAX_LINES:
            long[module] = lines
    assert not long, "over %d lines: %s" % (MAX_LINES, long)
