"""Every operator Caffe2's recurrent-model code emits is registered in caffe2rnn.

Caffe2's Python modules that build, train or run recurrent models (:data:`MODULES`:
``rnn_cell``, ``recurrent``, the seq2seq models, the optimizers, ``brew`` and its
helpers, the model helpers, ``char_rnn``...) put operators into nets in three ways:
``net.OpName(...)``, ``core.CreateOperator('OpName', ...)`` and op type names held in
strings (``model_helper``'s list of known ops, ``getattr(net, 'OpName')``). The scan
below reads those modules from a Caffe2 checkout with :mod:`ast`, keeps the names that
were CPU operators at that commit (``REGISTER_CPU_OPERATOR*`` in the checkout's
``caffe2/**/*.cc``) and checks that caffe2rnn's registry has every one, except the few
of :data:`EXCLUDED`, each with its reason. An excluded op that caffe2rnn registers
later fails the table too, so it says only what is true.

Caffe2's sources are not part of this repository: ``$CAFFE2_SOURCE`` names a checkout
of facebookarchive/caffe2 at 0cdd09da6 (E5), ``$CAFFE2_SOURCE_E6`` one at 042e8ede4;
an era whose checkout is not given skips with the reason.
"""

import ast
import glob
import os
import re
from dataclasses import dataclass

import pytest
from caffe2_expectations import ERA_COMMITS, ERA_SOURCES

from caffe2rnn.runtime import registry

ERAS = ("E5", "E6")

#: The modules of ``caffe2/python`` that build or train recurrent models (globs;
#: ``*_test.py`` files are left out). ``gru_cell.py`` and ``modeling/`` exist from E6.
MODULES = (
    "rnn_cell.py",
    "recurrent.py",
    "gru_cell.py",
    "attention.py",
    "crf.py",
    "models/seq2seq/*.py",
    "optimizer.py",
    "memonger.py",
    "data_parallel_model.py",
    "brew.py",
    "helpers/*.py",
    "model_helper.py",
    "cnn.py",
    "modeling/*.py",
    "examples/char_rnn.py",
    "lstm_benchmark.py",
)

#: Receivers whose methods are Caffe2's module functions, not net methods:
#: ``workspace.FeedBlob(...)`` feeds a blob, it does not add a ``FeedBlob`` op.
MODULE_RECEIVERS = frozenset(["workspace", "core", "C", "scope", "utils"])

_REGISTRATION = re.compile(r"REGISTER_CPU_OPERATOR(?:_WITH_ENGINE|_STR)?\(\s*\"?(\w+)")


@dataclass(frozen=True)
class Exclusion:
    """An emitted op caffe2rnn does not register, the eras that emit it, and why."""

    eras: tuple
    reason: str


_COLLECTIVE = (
    "data_parallel_model's collective across devices or processes (Gloo/NCCL common "
    "worlds, caffe2/contrib/gloo); caffe2rnn runs on one CPU device and has no transport"
)
_IMAGE = "an image-model (CNN) helper that no recurrent model uses; not implemented"

EXCLUDED = {
    "Allreduce": Exclusion(("E5", "E6"), _COLLECTIVE),
    "Broadcast": Exclusion(("E5", "E6"), _COLLECTIVE),
    "CreateCommonWorld": Exclusion(("E5", "E6"), _COLLECTIVE),
    "Barrier": Exclusion(("E6",), _COLLECTIVE),
    "CloneCommonWorld": Exclusion(("E6",), _COLLECTIVE),
    "SpatialBN": Exclusion(("E5", "E6"), "helpers/normalization.py's spatial_bn: " + _IMAGE),
    "ConvTranspose": Exclusion(("E5", "E6"), "helpers/conv.py's conv_transpose: " + _IMAGE),
    "DepthSplit": Exclusion(("E5", "E6"), "helpers/conv.py's group_conv_deprecated: " + _IMAGE),
    "VideoInput": Exclusion(
        ("E5", "E6"),
        "helpers/tools.py's video_input: decodes video files with OpenCV/ffmpeg "
        "(caffe2/video); " + _IMAGE,
    ),
}


# -- the scan ---------------------------------------------------------------------------


def cpu_operators(source):
    """Op types registered for CPU in the checkout's C++ sources."""
    names = set()
    pattern = os.path.join(source, "caffe2", "**", "*.cc")
    for path in glob.glob(pattern, recursive=True):
        with open(path, errors="replace") as f:
            names.update(_REGISTRATION.findall(f.read()))
    return names


def scanned_modules(source):
    """The paths (relative to caffe2/python) of :data:`MODULES` in the checkout."""
    python = os.path.join(source, "caffe2", "python")
    found = set()
    for pattern in MODULES:
        for path in glob.glob(os.path.join(python, pattern)):
            if not path.endswith("_test.py"):
                found.add(os.path.relpath(path, python))
    return sorted(found)


def names_in(tree):
    """Capitalised names a module may emit as op types: ``x.Name(...)`` calls (not on
    the module-function receivers), ``CreateOperator('Name', ...)`` and whole string
    literals that look like an op type."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in MODULE_RECEIVERS):
                names.add(node.func.attr)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # covers CreateOperator('Name', ...) and lists of types
    return {n for n in names if re.fullmatch(r"[A-Z][A-Za-z0-9]*", n)}


def emitted_operators(source):
    """``{op type: [module, ...]}`` of the CPU operators :data:`MODULES` emit."""
    operators = cpu_operators(source)
    emitted = {}
    for module in scanned_modules(source):
        with open(os.path.join(source, "caffe2", "python", module)) as f:
            tree = ast.parse(f.read(), filename=module)
        for name in names_in(tree) & operators:
            emitted.setdefault(name, []).append(module)
    return emitted


def checkout(era):
    variable = ERA_SOURCES[era]
    source = os.environ.get(variable)
    if not source:
        pytest.skip(
            "set %s to a checkout of facebookarchive/caffe2 at %s to scan the operators "
            "its %s model code emits" % (variable, ERA_COMMITS[era], era)
        )
    return source


# -- the checks -------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_every_emitted_operator_is_registered(era):
    emitted = emitted_operators(checkout(era))
    assert len(emitted) > 50, "the scan found only %s" % sorted(emitted)
    gaps = sorted(
        (op, modules)
        for op, modules in emitted.items()
        if not registry.is_registered(op) and op not in EXCLUDED
    )
    assert not gaps, "%d operators Caffe2's %s model code emits are not registered:\n%s" % (
        len(gaps),
        era,
        "\n".join("  %s (%s)" % (op, ", ".join(sorted(modules))) for op, modules in gaps),
    )


@pytest.mark.parametrize("era", ERAS)
def test_every_exclusion_is_emitted_in_its_eras(era):
    emitted = emitted_operators(checkout(era))
    listed = {op for op, row in EXCLUDED.items() if era in row.eras}
    assert listed <= set(emitted), "excluded for %s but not emitted there: %s" % (
        era,
        sorted(listed - set(emitted)),
    )
    unlisted = {op for op in EXCLUDED if op in emitted and era not in EXCLUDED[op].eras}
    assert not unlisted, "emitted in %s too: %s" % (era, sorted(unlisted))


def test_no_excluded_operator_is_registered():
    registered = sorted(op for op in EXCLUDED if registry.is_registered(op))
    assert not registered, "registered now; remove from EXCLUDED: %s" % registered


def test_scan_reads_the_three_ways_an_op_is_emitted(tmp_path):
    """The scan on a made-up checkout: what counts as emitting, what does not."""
    operators = tmp_path / "caffe2" / "operators"
    operators.mkdir(parents=True)
    (operators / "ops.cc").write_text(
        "REGISTER_CPU_OPERATOR(Called, A);\n"
        "REGISTER_CPU_OPERATOR_WITH_ENGINE(Created, CUDNN, B);\n"
        'REGISTER_CPU_OPERATOR_STR("Listed", C);\n'
        "REGISTER_CPU_OPERATOR(FeedBlob, D);\n"
        "REGISTER_CPU_OPERATOR(OnlyInATest, E);\n"
        "REGISTER_CPU_OPERATOR(NeverNamed, F);\n"
    )
    python = tmp_path / "caffe2" / "python"
    (python / "helpers").mkdir(parents=True)
    (python / "rnn_cell.py").write_text(
        "def f(model, workspace):\n"
        "    model.net.Called(['x'], 'y')\n"
        "    core.CreateOperator('Created', [], [])\n"
        "    workspace.FeedBlob('x', 1)\n"
        "    model.net.NotAnOperator()\n"
    )
    (python / "helpers" / "known.py").write_text("KNOWN = ['Listed', 'lowercase']\n")
    (python / "helpers" / "known_test.py").write_text("net.OnlyInATest()\n")
    (python / "unrelated.py").write_text("net.NeverNamed()\n")
    assert emitted_operators(str(tmp_path)) == {
        "Called": ["rnn_cell.py"],
        "Created": ["rnn_cell.py"],
        "Listed": ["helpers/known.py"],
    }
