"""The scratch era (Caffe2 3b190c4df, 3913181a4): its texts build the same ops
as the seed texts, and its operators compute what the era's tests expected.

Seeds are read from the folder $CAFFE2RNN_SEEDS names; without it these skip.
"""

import numpy as np
import pytest
import seed_texts as seeds

from caffe2rnn import compat, core, eras, history, workspace
from caffe2rnn.history import cells, era, s1, scratch
from caffe2rnn.history.bug_demos import mul_cell
from caffe2rnn.history.compare import op_values
from caffe2rnn.recurrent_stages import find_scratches

needs_seeds = pytest.mark.skipif(not seeds.available(), reason=seeds.skip_reason())

#: version -> (seed example of file 001, our function, takes size triples)
SCRATCH = {
    "scratch": (9, scratch.recurrent_net, True),
    "s2": (5, scratch.recurrent_net_s2, False),
}


def seed_function(number):
    compat.install()
    namespace = compat.py2_namespace()
    prelude = "from caffe2.python import core\n"
    exec(
        compile(prelude + seeds.example("001_", number), "<seed 001 #%d>" % number, "exec"),
        namespace,
    )
    return namespace["recurrent_net"]


def scratch_sizes(cell_net):
    """One size per scratch blob: the LSTM's gates are 4 D wide, others D."""
    proto = cell_net.Proto()
    outputs_map = {o: o + "_grad" for o in proto.external_output}
    ops, _ = core.GradientRegistry.GetBackwardPass(proto.op, outputs_map)
    backward = core.Net("sizes")
    backward.Proto().op.extend(ops)
    names = find_scratches(proto, backward.Proto())
    return [4 * cells.D if "gates" in n else cells.D for n in names]


def adapted(function, triples):
    """A scratch-era ``recurrent_net`` behind the 2017-03 signature the cells
    call: sizes for the initial states and the scratches are supplied."""

    def call(
        net,
        cell_net,
        inputs,
        initial_cell_inputs,
        links,
        timestep=None,
        scope=None,
        outputs_with_grads=(0,),
    ):
        assert tuple(outputs_with_grads) == (0,), "only output 0 had a gradient then"
        initial = [tuple(x) + ((cells.D,) if triples else ()) for x in initial_cell_inputs]
        sizes = scratch_sizes(cell_net)
        return function(net, cell_net, inputs, initial, links, sizes, timestep, scope)

    return call


def build(function, cell, version):
    workspace.ResetWorkspace()
    core.Net.reset_names()
    with era(version):  # the seed text runs on its era's gradient rules
        net, _ = cell.build(function)
    ops = [op for op in net.Proto().op if op.type == "RecurrentNetwork"]
    assert len(ops) == 1
    return net, op_values(ops[0])


CELLS = dict(cells.HISTORICAL, mul_cell=mul_cell)


@needs_seeds
@pytest.mark.parametrize("cell_name", sorted(CELLS))
@pytest.mark.parametrize("version", sorted(SCRATCH))
def test_seed_text_builds_the_same_op_on_every_cell(version, cell_name):
    number, ours, triples = SCRATCH[version]
    cell = CELLS[cell_name]()
    seed_net, expected = build(adapted(seed_function(number), triples), cell, version)
    net, got = build(adapted(ours, triples), cell, version)
    assert list(got) == list(expected)  # same arguments, same order
    for name in expected:
        assert got[name] == expected[name], name
    assert eras.of(net).name == ("E0" if version == "scratch" else "E1")
    assert eras.of(seed_net).name == eras.of(net).name  # built inside our era: marked


def test_s1_is_the_scratch_module():
    assert s1 is scratch and eras.get("s1") is eras.get("scratch") is eras.E0
    assert history.recurrent_net("s1") is history.recurrent_net("scratch") is scratch.recurrent_net
    assert history.recurrent_net("s2") is scratch.recurrent_net_s2
    with pytest.raises(ValueError, match="known: v1, april, v2, v3, newest, scratch, s2, s1"):
        history.recurrent_net("s3")


def param_cell():
    """``h = (x * h_prev) * w``: a reference with its own gradient blob."""

    def build(recurrent_net, **kwargs):
        step = core.Net("param_cell")
        step.AddExternalInputs("input_t", "h_prev", "w")
        step.Mul(["input_t", "h_prev"], "q")
        step.Mul(["q", "w"], "h")
        step.AddExternalOutputs(core.BlobReference("h"))
        net = core.Net("param_cell_main")
        args = [net, step, [("input_t", "input")], [("h_prev", "h0")], {"h_prev": "h"}]
        return net, recurrent_net(*args, **kwargs)

    def forward(v):
        h, out = v["h0"][0], []
        for x in v["input"]:
            h = x * h * v["w"][0]
            out.append(h)
        return np.array(out)

    return cells.Cell(
        "param_cell",
        build,
        lambda rng: {
            "input": rng.uniform(0.5, 1.0, (cells.T, cells.N, cells.D)),
            "h0": rng.uniform(0.5, 1.0, (1, cells.N, cells.D)),
            "w": rng.uniform(0.5, 1.5, (1, cells.N, cells.D)),
        },
        forward,
        params=["w"],
    )


@pytest.mark.parametrize("version", sorted(SCRATCH))
def test_scratch_operators_match_numpy_forward_and_gradients(version):
    _, function, triples = SCRATCH[version]
    cell = param_cell()
    values = cell.values(np.random.default_rng(3))
    reference = cell.reference_gradients({k: v.copy() for k, v in values.items()})
    workspace.ResetWorkspace()
    core.Net.reset_names()
    runs = cell.run(adapted(function, triples), {k: v.copy() for k, v in values.items()}, runs=2)
    np.testing.assert_allclose(workspace.FetchBlob("h_all"), cell.forward(values), rtol=1e-12)
    for run in runs:  # the _acc swap returns the sum on every run
        for blob in ("input", "w"):
            np.testing.assert_allclose(run[blob], reference[blob], rtol=1e-6, atol=1e-9)


def test_scratch_tensors_hold_every_steps_intermediate():
    """sum_mul's ``s`` is a scratch: T x N x D, row t = x_t + h_{t-1}."""
    cell = cells.sum_mul()
    values = cell.values(np.random.default_rng(4))
    workspace.ResetWorkspace()
    core.Net.reset_names()
    net, _ = cell.build(adapted(scratch.recurrent_net, True))
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    workspace.RunNetOnce(net)
    h = np.concatenate([values["h0"], cell.forward(values)])
    np.testing.assert_allclose(workspace.FetchBlob("s_states"), values["input"] + h[:-1])
