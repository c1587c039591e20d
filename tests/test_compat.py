"""compat: ``import caffe2...`` resolves to caffe2rnn; seed text runs unmodified.

The seed tests read the original Caffe2 text from the seeds folder (never
copied into this repository): the folder ``$CAFFE2RNN_SEEDS`` names; without it
these tests skip with that reason.
"""

import importlib
import importlib.machinery
import os
import re
import sys
import types

import pytest

import caffe2rnn
from caffe2rnn import compat, control_ops_util, core

SEEDS = os.environ.get("CAFFE2RNN_SEEDS", "")
needs_seeds = pytest.mark.skipif(
    not (SEEDS and os.path.isdir(SEEDS)),
    reason="seed texts not configured: set CAFFE2RNN_SEEDS to their folder",
)


@pytest.fixture
def installed():
    compat.install()
    yield
    compat.uninstall()


def seed_example(file_prefix, number):
    """Example ``number`` of a seed file, without the scrape's header lines."""
    name = next(f for f in os.listdir(SEEDS) if f.startswith(file_prefix))
    with open(os.path.join(SEEDS, name), encoding="utf-8") as handle:
        text = handle.read()
    parts = re.split(r"^(?:示例#|Пример #)(\d+)\n0\n", text, flags=re.M)
    examples = dict(zip(parts[1::2], parts[2::2]))
    return examples[str(number)]


def test_caffe2_names_are_the_caffe2rnn_modules(installed):
    import caffe2.python.core
    from caffe2.proto import caffe2_pb2
    from caffe2.python import brew, cnn, gradient_checker, model_helper, scope, utils, workspace
    from caffe2.python import control_ops_util as cou
    from caffe2.python import core as c2core

    assert c2core is caffe2rnn.core is caffe2.python.core
    assert cou is control_ops_util
    assert (brew.__name__, cnn.__name__, model_helper.__name__) == (
        "caffe2rnn.brew",
        "caffe2rnn.cnn",
        "caffe2rnn.model_helper",
    )
    assert (scope.__name__, utils.__name__, workspace.__name__) == (
        "caffe2rnn.scope",
        "caffe2rnn.utils",
        "caffe2rnn.workspace",
    )
    assert gradient_checker.__name__ == "caffe2rnn.gradient_checker"
    assert caffe2_pb2 is caffe2rnn.proto.caffe2_pb2
    from caffe2.python.scope import CurrentNameScope

    assert CurrentNameScope is caffe2rnn.scope.CurrentNameScope


def test_mapping_is_by_rule_for_modules_written_later(installed, monkeypatch):
    """A caffe2rnn module the finder has never heard of maps too."""
    later = types.ModuleType("caffe2rnn.written_later")
    later.__spec__ = importlib.machinery.ModuleSpec("caffe2rnn.written_later", None)
    later.VALUE = 42
    monkeypatch.setitem(sys.modules, "caffe2rnn.written_later", later)
    from caffe2.python.written_later import VALUE

    assert VALUE == 42
    assert sys.modules["caffe2.python.written_later"] is later


def test_missing_modules_still_fail(installed):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("caffe2.python.no_such_module")
    with pytest.raises(ImportError):
        from caffe2.python import no_such_module  # noqa: F401


def test_future_utils_and_uninstall():
    compat.install()
    assert compat.install() is compat.install()  # idempotent
    from future.utils import viewitems, viewkeys, viewvalues

    d = {"a": 1}
    assert list(viewitems(d)) == [("a", 1)] and list(viewkeys(d)) == ["a"]
    assert list(viewvalues(d)) == [1]
    compat.uninstall()
    assert not any(name == "caffe2" or name.startswith("caffe2.") for name in sys.modules)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("caffe2.python.core")
    compat.uninstall()  # harmless twice


def test_py2_namespace_map_returns_a_list():
    namespace = compat.py2_namespace(extra=1)
    exec("result = map(str, [1, 2])\nagain = list(result)", namespace)
    assert namespace["result"] == ["1", "2"] and namespace["again"] == ["1", "2"]
    assert namespace["extra"] == 1
    exec("items = list(viewitems({'k': 2}))", namespace)
    assert namespace["items"] == [("k", 2)]


def lexical_net():
    net = core.Net("then_net")
    net.Proto().external_input.extend(["x", "declared_only"])
    h = net.Relu("x", "h")
    net.Sum([h, "outer_w"], "y")
    net.Proto().external_output.append("declared_out")
    return net


@needs_seeds
@pytest.mark.parametrize("example, variant", [(1, 1), (2, 2), (3, 2)])
def test_seed_001_get_external_blob_names_matches(installed, example, variant):
    namespace = compat.py2_namespace()
    exec("from caffe2.python import core\n" + seed_example("001_", example), namespace)
    seed_function = namespace["get_external_blob_names"]
    scope = {"x", "outer_w", "y", "h"}
    expected = control_ops_util.get_external_blob_names(lexical_net(), scope, variant=variant)
    assert seed_function(lexical_net(), scope) == expected


@needs_seeds
def test_seed_000_recurrent_net_v3_definition_resolves(installed):
    namespace = compat.py2_namespace()
    exec(
        "from caffe2.python import core, workspace\n"
        "from caffe2.python.scope import CurrentNameScope\n"
        "from future.utils import viewitems, viewkeys\n" + seed_example("000_", 2),
        namespace,
    )
    recurrent_net = namespace["recurrent_net"]
    assert recurrent_net.__code__.co_varnames[:5] == (
        "net",
        "cell_net",
        "inputs",
        "initial_cell_inputs",
        "links",
    )
    globals_used = set(recurrent_net.__code__.co_names) & {
        "core",
        "CurrentNameScope",
        "viewitems",
        "viewkeys",
    }
    assert globals_used == {"core", "CurrentNameScope", "viewitems", "viewkeys"}
    for name in globals_used:
        assert name in namespace
    module_core = namespace["core"]
    for attribute in ["BlobReference", "GradientRegistry", "Net", "get_ssa", "get_undefined_blobs"]:
        assert hasattr(module_core, attribute)
