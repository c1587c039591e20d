"""Each version's seed text, executed against caffe2rnn.compat with only the
py2 shims, builds the same RecurrentNetwork op as caffe2rnn.history.<version>.

Seeds are read from the folder $CAFFE2RNN_SEEDS names; without it these skip.
"""

import pytest
import seed_texts as seeds
from deflatten import deflatten

from caffe2rnn import core, workspace
from caffe2rnn.history import VERSIONS, cells, era
from caffe2rnn.history.bug_demos import mul_cell, relu_cell
from caffe2rnn.history.compare import op_values

needs_seeds = pytest.mark.skipif(not seeds.available(), reason=seeds.skip_reason())


def build(version, recurrent_net, cell=cells.lstm, **kwargs):
    workspace.ResetWorkspace()
    core.Net.reset_names()
    with era(version):
        net, _ = cell().build(recurrent_net, **kwargs)
    ops = [op for op in net.Proto().op if op.type == "RecurrentNetwork"]
    assert len(ops) == 1
    return op_values(ops[0])


CASES = [
    ("v1", {}),
    ("april", {}),
    ("v2", {}),
    ("v2", {"recompute_blobs_on_backward": ["lstm/gates_t"]}),
    ("v3", {}),
    ("v3", {"recompute_blobs_on_backward": ["lstm/gates_t"]}),
    ("newest", {}),
    ("newest", {"forward_only": True}),
]


@needs_seeds
@pytest.mark.parametrize("version,kwargs", CASES)
def test_seed_text_builds_the_same_op(version, kwargs):
    seed_function = seeds.seed_recurrent_net(version)
    if version == "v1":
        # The v1 counter names the step-workspaces blob; start both at 0.
        seed_function.__globals__["_workspace_seq"] = 0
        VERSIONS["v1"]._workspace_seq = 0
    expected = build(version, seed_function, **kwargs)
    ours = build(version, VERSIONS[version].recurrent_net, **kwargs)
    assert list(ours) == list(expected)  # same arguments, same order
    for name in expected:
        assert ours[name] == expected[name], name
    if version == "v1":
        assert expected["outputs"][-1] == "lstm/step_workspaces_0"


#: every example cell (the scratch era's are in test_history_scratch_era.py)
EXAMPLE_CELLS = dict(cells.HISTORICAL, mul_cell=mul_cell, relu_cell=relu_cell)


@needs_seeds
@pytest.mark.parametrize("cell_name", sorted(EXAMPLE_CELLS))
@pytest.mark.parametrize("version", list(VERSIONS))
def test_seed_text_builds_the_same_op_on_every_example_cell(version, cell_name):
    seed_function = seeds.seed_recurrent_net(version)
    if version == "v1":
        seed_function.__globals__["_workspace_seq"] = 0
        VERSIONS["v1"]._workspace_seq = 0
    cell = EXAMPLE_CELLS[cell_name]
    expected = build(version, seed_function, cell)
    ours = build(version, VERSIONS[version].recurrent_net, cell)
    assert list(ours) == list(expected)
    for name in expected:
        assert ours[name] == expected[name], name


@needs_seeds
def test_v3_seed_and_module_both_raise_b9():
    seed_function = seeds.seed_recurrent_net("v3")
    for function in (seed_function, VERSIONS["v3"].recurrent_net):
        with pytest.raises(UnboundLocalError):
            build("v3", function, forward_only=True)


@needs_seeds
def test_deflattened_seed_002_compiles_and_keeps_the_function_whole():
    source = seeds.source("april")
    compile(source, "<seed 002>", "exec")
    lines = source.splitlines()
    assert lines[0].startswith("def recurrent_net(")
    assert lines[-1].replace(" ", "") == "returnresults[:-1]"
    assert not any(line.strip() == "inputs or initial_cell_inputs" for line in lines)
    assert "    for reference in references:" in lines


def test_deflatten_rebuilds_blocks_and_comment_ends():
    flat = (
        "def f(xs, flag=None): # Sum things up total = 0 for x in xs: "
        "total += x # not this one if flag is not None: total = -total "
        "def g(y): return y * 2 return g(total) if xs else 0"
    )
    namespace = {}
    exec(deflatten(flat), namespace)
    assert namespace["f"]([1, 2, 3]) == 12
    assert namespace["f"]([1, 2], flag=True) == -6
    assert namespace["f"]([]) == 0
