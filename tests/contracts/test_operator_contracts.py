"""Every operator caffe2rnn registers, against the C++ of each Caffe2 era.

For each era of :data:`ERAS` whose checkout is given (an environment variable
naming the folder that holds ``caffe2/``, as for the suites: ``make test`` sets
them from ``../shared/caffe2/E4..E7``), :mod:`cpp_reader` reads the operator
contracts of the C++ and :mod:`caffe2rnn_contracts` reads caffe2rnn's, as the
op runs in that era; :func:`contract_check.differences` compares them: schema
(counts, in-place pairs), the arguments read (name, field, default), the
element types registered, the gradient maker's ops. The test fails on

* a difference :data:`contract_differences.KNOWN` does not list;
* a listed row that no longer happens in one of its eras that ran (a fixed
  difference leaves the table with its fix);
* an op caffe2rnn registers that the era's C++ lacks, unless :data:`FIRST_ERA`
  says a later era brought it (caffe2rnn offers it in every era) or it is
  caffe2rnn's own (:data:`CAFFE2RNN_ONLY`) — and an op listed as later that the
  era's C++ already has.

An era is one row of :data:`ERAS`: add its environment variable there, its
caffe2rnn era (:func:`caffe2rnn_contracts.caffe2rnn_era`; an era caffe2rnn does
not have is checked as today's, E6) and its rows in the tables.
"""

import os
import pathlib

import pytest
from caffe2rnn_contracts import all_contracts
from contract_check import differences
from contract_differences import KNOWN
from cpp_reader import Reader

#: era -> the environment variable naming its checkout (the folder holding caffe2/)
ERAS = {
    "E4": "CAFFE2_SOURCE_E4",
    "E5": "CAFFE2_SOURCE",
    "E6": "CAFFE2_SOURCE_E6",
    "E7": "CAFFE2_SOURCE_E7",
}
ORDER = list(ERAS)

#: ops caffe2rnn registers that no era's C++ has: its own
CAFFE2RNN_ONLY = {
    "rnn_history_accumulate_param_gradient": (
        "the per-step parameter-gradient accumulation of the 2016-12 .. 2017-06 C++ loop "
        "(bug B5's swap included), an op so that the historical eras can run it "
        "(caffe2rnn/history/operator_eras.py)"
    ),
    "rnn_history_apply_link_once": (
        "the links as 839f180a2 .. 7686919a9 applied them, once per step workspace (bug B2), "
        "for the historical eras (caffe2rnn/history/operator_eras.py)"
    ),
    "rnn_internal_fc_input_gradient": (
        "FCGradient's dX alone, in backward step nets whose dW/db caffe2rnn forms after the "
        "loop over all timesteps at once (caffe2rnn/operators/fc.py)"
    ),
}

#: era -> the ops its C++ was the first to register (E4's: every other one)
FIRST_ERA = {
    "E5": (
        "ColwiseMax",
        "ColwiseMaxGradient",
        "ElementwiseLinear",
        "ElementwiseLinearGradient",
        "IsMemberOf",
        "L1Distance",
        "L1DistanceGradient",
        "RowwiseMax",
        "RowwiseMaxGradient",
        "Size",
        "SliceGradient",
        "SpatialSoftmaxWithLoss",
        "SpatialSoftmaxWithLossGradient",
        "TopKGradient",
        "WeightedSampleDequeueBlobs",
        "Where",
        "ZeroGradient",
        "rnn_internal_accumulate_gradient_input",
    ),
    "E6": (
        "Abs",
        "AbsGradient",
        "BatchBucketOneHot",
        "LengthsIndicesInGradientSumGradient",
        "LengthsMax",
        "LengthsMaxWithMainInputAndForwardOutputGradient",
        "SparseLengthsIndicesInGradientSumGradient",
        "SparseLengthsIndicesInGradientWeightedSumGradient",
        "SparseLengthsIndicesInGradientWeightedSumWithMainInputGradient",
        "AveragePool1D",
        "AveragePool1DGradient",
        "AveragePool2D",
        "AveragePool2DGradient",
        "AveragePool3D",
        "AveragePool3DGradient",
        "BatchGather",
        "BatchGatherGradient",
        "Conditional",
        "Conv1D",
        "Conv1DGradient",
        "Conv2D",
        "Conv2DGradient",
        "Conv3D",
        "Conv3DGradient",
        "Cos",
        "CosGradient",
        "DiagonalFill",
        "GRUUnit",
        "GRUUnitGradient",
        "GivenTensorDoubleFill",
        "LayerNorm",
        "LayerNormGradient",
        "LogitGradient",
        "MaxPool1D",
        "MaxPool1DGradient",
        "MaxPool2D",
        "MaxPool2DGradient",
        "MaxPool3D",
        "MaxPool3DGradient",
        "Range",
        "RecurrentNetworkBlobFetcher",
        "ReduceBackMax",
        "ReduceBackMaxGradient",
        "ReduceFrontMax",
        "ReduceFrontMaxGradient",
        "RowWiseSparseAdagrad",
        "SequenceMask",
        "Sign",
        "Sin",
        "SinGradient",
        "Swish",
        "SwishGradient",
        "WeightedSigmoidCrossEntropyWithLogits",
        "WeightedSigmoidCrossEntropyWithLogitsGradient",
        "WeightedSumGradient",
        "YellowFin",
        "rnn_internal_apply_link",
        "CreateScope",
        "Do",
        "If",
        "While",
        "PackRNNSequence",
        "UnpackRNNSequence",
    ),
    "E7": (
        "ClipTensorByScaling",
        "HasScope",
        "Lars",
        "Min",
        "MinGradient",
        "ReduceMean",
        "ReduceSum",
        "RowWiseSparseAdam",
        "Sqrt",
    ),
}


def _checkout(era):
    folder = os.environ.get(ERAS[era], "")
    if not folder or not (pathlib.Path(folder) / "caffe2" / "operators").is_dir():
        pytest.skip(
            "set %s to a Caffe2 checkout (the folder holding caffe2/) of %s" % (ERAS[era], era)
        )
    return folder


def _first_era(op):
    for era, ops in FIRST_ERA.items():
        if op in ops:
            return era
    return ORDER[0]


@pytest.fixture(scope="module", params=ORDER)
def era_contracts(request):
    """``(era, C++ reader, caffe2rnn contracts as the ops run in the era)``."""
    era = request.param
    return era, Reader(_checkout(era)), all_contracts(era)


def _listed(era, diff):
    return any(
        era in row.eras
        and diff.op_type in row.ops
        and diff.aspect in row.aspects
        and diff.detail == row.detail
        for row in KNOWN
    )


def test_every_difference_is_fixed_or_listed(era_contracts):
    era, reader, ours = era_contracts
    new, seen = [], set()
    for op, contract in sorted(ours.items()):
        cpp = reader.contracts.get(op)
        if cpp is None:
            continue
        for diff in differences(cpp, contract):
            seen.add((diff.op_type, diff.aspect, diff.detail))
            if not _listed(era, diff):
                new.append(diff)
    stale = [
        (row.ops, op, aspect)
        for row in KNOWN
        if era in row.eras
        for op in row.ops
        for aspect in row.aspects
        if (op, aspect, row.detail) not in seen
    ]
    message = []
    if new:
        message.append(
            "%d difference(s) of caffe2rnn from the %s C++ that contract_differences.KNOWN "
            "does not list (fix them, or list them with the reason):\n  %s"
            % (len(new), era, "\n  ".join(map(str, new)))
        )
    if stale:
        message.append(
            "%d listed difference(s) no longer seen in %s (remove the era from the row, or the "
            "row):\n  %s" % (len(stale), era, "\n  ".join(map(str, stale)))
        )
    assert not message, "\n".join(message)


def test_every_op_is_the_eras_or_a_later_eras_or_caffe2rnns(era_contracts):
    era, reader, ours = era_contracts
    problems = []
    for op in sorted(ours):
        present = op in reader.contracts
        if op in CAFFE2RNN_ONLY:
            if present:
                problems.append("%s: listed as caffe2rnn's own, but the %s C++ has it" % (op, era))
            continue
        first = _first_era(op)
        if present and ORDER.index(first) > ORDER.index(era):
            problems.append("%s: FIRST_ERA says %s, but the %s C++ has it" % (op, first, era))
        if not present and ORDER.index(first) <= ORDER.index(era):
            problems.append(
                "%s: caffe2rnn registers it, the %s C++ does not (list it in FIRST_ERA with the "
                "era that brought it, or in CAFFE2RNN_ONLY)" % (op, era)
            )
    assert not problems, "\n".join(problems)


def test_the_table_is_well_formed():
    for row in KNOWN:
        assert row.ops and row.aspects and row.eras and row.detail and row.reason, row
        assert set(row.eras) <= set(ERAS), row
        assert len(set(row.ops)) == len(row.ops), row
        assert all(
            a in ("schema", "types", "gradient", "registration") or a.startswith("arg ")
            for a in row.aspects
        ), row
    keys = [
        (op, a, e, row.detail)
        for row in KNOWN
        for op in row.ops
        for a in row.aspects
        for e in row.eras
    ]
    assert len(keys) == len(set(keys)), "a difference listed twice"
