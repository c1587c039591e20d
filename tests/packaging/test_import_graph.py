"""The package's layers, read off its import graph.

Every ``import`` in every module counts, inside functions too, and so does
the package ``__init__`` Python runs before a submodule (importing
``caffe2rnn.core.blob`` from outside ``core`` runs ``core/__init__.py``).
Only the root ``caffe2rnn/__init__.py`` — the composition root that imports
the operators and the history so that they register — is left out: nothing
imports it but ``from caffe2rnn import x``, which Python resolves to ``x``.

* No import circle, of any length.
* Layers look down: the foundation (``runtime``, ``core``, ``operators``,
  ``kernels``, and ``recurrent.py``) never imports ``history``, ``viz`` or
  the demo application; history plugs in by registering
  (:mod:`caffe2rnn.runtime.registry`, :func:`caffe2rnn.recurrent.register_era_text`).
"""

import ast
import functools
import os

import pytest

import caffe2rnn

PACKAGE_DIR = os.path.dirname(os.path.abspath(caffe2rnn.__file__))
FOUNDATION = ("caffe2rnn.runtime", "caffe2rnn.core", "caffe2rnn.operators", "caffe2rnn.kernels")
FOUNDATION_MODULES = ("caffe2rnn.recurrent",)
ABOVE = ("caffe2rnn.history", "caffe2rnn.viz", "caffe2rnn.demo")


def modules():
    """module name → file path, for every module of the package."""
    found = {}
    for folder, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3]
            module = relative.replace(os.sep, ".")
            if module.endswith(".__init__"):
                module = module[: -len(".__init__")]
            found[module] = path
    return found


def _imported(module, path, node, known):
    """The package modules one import statement names."""
    is_package = path.endswith("__init__.py")
    package = module if is_package else module.rpartition(".")[0]
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        names = []
        for alias in node.names:
            candidate = base + "." + alias.name
            names.append(candidate if candidate in known else base)
    targets = []
    for name in names:
        while name not in known and "." in name:
            name = name.rpartition(".")[0]
        if name in known and name.split(".")[0] == "caffe2rnn":
            targets.append(name)
    return targets


@functools.cache
def import_graph():
    """module → set of modules it makes Python import (see the module docstring)."""
    known = modules()
    graph = {module: set() for module in known}
    for module, path in known.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(module, path, node, known):
                chain = target.split(".")
                # the target and every package __init__ above it (not the root)
                for k in range(2, len(chain) + 1):
                    parent = ".".join(chain[:k])
                    inside = module == parent or module.startswith(parent + ".")
                    if parent in known and not (inside and parent != target):
                        graph[module].add(parent)
        graph[module].discard(module)
        graph[module].discard("caffe2rnn")
    del graph["caffe2rnn"]
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm, iteratively: the components with more than one module."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_the_checker_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions_and_package_inits():
    graph = import_graph()
    # caffe2rnn/utils.py imports the bindings module at the top, and
    # history/bug_demos.py imports the runtime package (its __init__ runs)
    assert "caffe2rnn._import_c_extension" in graph["caffe2rnn.utils"]
    assert "caffe2rnn.runtime" in graph["caffe2rnn.history.bug_demos"]


def test_no_import_circle():
    circles = strongly_connected(import_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize("layer", FOUNDATION + FOUNDATION_MODULES)
def test_the_foundation_never_imports_what_plugs_in_from_above(layer):
    graph = import_graph()
    upward = sorted(
        (module, target)
        for module, targets in graph.items()
        if module == layer or module.startswith(layer + ".")
        for target in targets
        if any(target == a or target.startswith(a + ".") for a in ABOVE)
    )
    assert not upward, upward
