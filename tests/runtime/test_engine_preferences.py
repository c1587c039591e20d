"""Engine preferences (Caffe2 042e8ede4: core.SetEnginePref and friends)."""

import pytest

from caffe2rnn import core, errors, workspace
from caffe2rnn.runtime import registry


@pytest.fixture(autouse=True)
def restore_preferences():
    per_op, global_pref = registry.engine_preferences()
    yield
    registry._PER_OP_ENGINE_PREF.clear()
    registry._PER_OP_ENGINE_PREF.update(per_op)
    registry._GLOBAL_ENGINE_PREF.clear()
    registry._GLOBAL_ENGINE_PREF.update(global_pref)


def test_preferences_are_kept_and_read_back():
    assert registry.engine_preferences() == ({}, {1: ["CUDNN"]})  # Caffe2's initial value
    core.SetEnginePref({}, {})  # what Caffe2's E6 test_util.TestCase does first
    assert registry.engine_preferences() == ({}, {})
    core.SetPerOpEnginePref({0: {"FC": ["A", "B"]}})
    core.SetOpEnginePref("Relu", {0: ["C"]})
    core.SetGlobalEnginePref({0: ["D"]})
    assert registry.engine_preferences() == ({0: {"FC": ["A", "B"], "Relu": ["C"]}}, {0: ["D"]})
    assert workspace.C.set_engine_pref is core.SetEnginePref


def test_caffe2s_checks():
    """operator.cc (042e8ede4): the device type must have a registry (CPU only
    here), and a per-op preference must name an operator of it."""
    with pytest.raises(errors.ArgumentError, match="Device type 1 not registered"):
        core.SetGlobalEnginePref({1: ["CUDNN"]})
    with pytest.raises(errors.ArgumentError, match="Operator type NoSuchOp not registered in 0"):
        core.SetOpEnginePref("NoSuchOp", {0: ["E"]})
    with pytest.raises(errors.ArgumentError, match="Operator type NoSuchOp"):
        core.SetEnginePref({0: {"NoSuchOp": ["E"]}}, {})
    # A refused call changes nothing.
    assert registry.engine_preferences() == ({}, {1: ["CUDNN"]})
