"""Code asks the era for a policy; it never tests which era it is.

Outside :mod:`caffe2rnn.eras` (the one era vocabulary) and
:mod:`caffe2rnn.history` (the versions, which are eras by another name), no
module compares anything with an era or version name, looks one up in a table
(``ORDER["v3"]``, ``{"E6": ...}``), or compares an era's ``name`` /
``version``. Naming an era to *build under* (``eras.use("E6")``) is using it,
not testing it, and stays allowed.
"""

import ast
import os

import caffe2rnn
from caffe2rnn import eras

PACKAGE_DIR = os.path.dirname(os.path.abspath(caffe2rnn.__file__))
NAMES = frozenset(eras.ERAS) | frozenset(eras.VERSION_NAMES) - {"scratch"}
#: "scratch" is also the word for a forward blob the backward step reads.
ALLOWED = ("eras.py", "history" + os.sep)


def _is_era_name(node):
    return isinstance(node, ast.Constant) and node.value in NAMES


def _is_era_attribute(node):
    return (
        isinstance(node, ast.Attribute)
        and node.attr in ("name", "version")
        and (
            isinstance(node.value, ast.Call)
            and getattr(node.value.func, "attr", None) in ("current", "named", "get", "of")
        )
    )


def era_tests(source, filename="<source>"):
    """``(line, what)`` for every place ``source`` tests an era's name."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_era_name(o) or _is_era_attribute(o) for o in operands):
                found.append((node.lineno, "compares with an era name"))
        elif isinstance(node, ast.Subscript) and _is_era_name(node.slice):
            found.append((node.lineno, "looks up %r in a table" % node.slice.value))
        elif isinstance(node, ast.Dict) and any(
            k is not None and _is_era_name(k) for k in node.keys
        ):
            found.append((node.lineno, "keys a table by era name"))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "get"
            and node.args
            and _is_era_name(node.args[0])
        ):
            found.append((node.lineno, "looks up %r in a table" % node.args[0].value))
    return found


def test_the_checker_sees_each_kind_of_test():
    source = (
        "if eras.current().name == 'E6': pass\n"
        "order = ORDER['v3']\n"
        "table = {'newest': 1}\n"
        "x = table.get('E5')\n"
        "with eras.use('E6'): pass\n"  # using an era is fine
        "if blob_kind == 'scratch': pass\n"  # a blob kind, not the era
    )
    assert [line for line, _ in era_tests(source)] == [1, 2, 3, 4]


def test_no_era_name_is_tested_outside_eras_and_history():
    offenders = []
    for folder, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, PACKAGE_DIR)
            if not name.endswith(".py") or relative.startswith(ALLOWED):
                continue
            with open(path, encoding="utf-8") as handle:
                for line, what in era_tests(handle.read(), path):
                    offenders.append("%s:%d %s" % (relative, line, what))
    assert not offenders, "\n".join(offenders)
