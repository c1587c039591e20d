"""The known differences between Caffe2's C++ operator contracts and caffe2rnn's.

:mod:`test_operator_contracts` compares, era by era, what the C++ of each checkout says
about every operator caffe2rnn registers (:mod:`cpp_reader`) with what caffe2rnn's code
says (:mod:`caffe2rnn_contracts`), and fails on any difference (:mod:`contract_check`)
this table does not list, and on a row that no longer matches anything in an era it
lists. A row: the op types, the aspects (``schema``, ``types``, ``gradient``, ``arg
<name>``), the eras, the exact detail sentence, and why it stays. Where a difference
was a fault, it was fixed instead (issue 34), with a test against the C++.

Most rows are one of a few kinds, named once below:

* the reader's view: the C++ reads or checks something through code the regex reader does
  not follow (free functions, tags, base-class constructors), or caffe2rnn checks it in a
  helper its scan does not follow — the same contract, seen from two sides;
* a superset: caffe2rnn's op is a later era's, and accepts every def the earlier C++
  accepted (the later era's optional inputs, outputs, arguments are taken in every era);
* E7: what Caffe2 929c33cee added after E6 outside its RNN code, which caffe2rnn's
  operators run as E6 had them;
* deliberate: a documented difference (the reason says where).

Regenerate a row's detail by running the test: a new difference prints its sentence.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    """One listed difference: ``detail`` for each of ``aspects`` of each of ``ops`` in
    each of ``eras``."""

    ops: tuple
    aspects: tuple
    eras: tuple
    detail: str
    reason: str


TYPES_OTHER_INPUTS = (
    "the same types: the C++ registration names the op's main element type; the extra types are "
    "those caffe2rnn checks on its other inputs (int32 labels, lengths, indices, segment ids; "
    "int64 shapes and iteration counters; the bool dropout mask), which the C++ read with "
    "data<int>()/data<int64_t>()/data<bool>() on inputs named by tags the reader does not "
    "attribute to a type"
)
TYPES_HELPER = (
    "checked in both, out of the reader's sight: caffe2rnn checks these inputs in a helper the "
    "scan does not follow (unary_math's _same_size_pair for the generated gradient classes, the "
    "recurrent op's tensor checks); float32, or float64 (the stated extension), as the C++'s "
    "data<float>()"
)
TYPES_UNTEMPLATED = (
    "the same types: the C++ class is templated on the context only and reads the data through "
    "data<T>() calls on inputs named by tags (or dispatches on another input), so the reader "
    "finds no registered element type; caffe2rnn's checks name them directly (float64 on float "
    "data is the stated extension)"
)
READER_FILLERS = (
    "the fillers' element type is the output's (FillerOp<float>...): the C++ reads no typed input"
    " but the optional shape input (data<TIndex>(): int64, as caffe2rnn checks) — the reader sees"
    " caffe2rnn's int64 shape check, not the output type it writes, which "
    "tests/operators/test_ops_fill.py checks against the C++"
)
E7 = (
    "new in E7 (929c33cee, 2018-03) and outside what caffe2rnn's E7 era takes up (its RNN "
    "changes: docs/concepts/history-e7.md): caffe2rnn runs the op as E6 (042e8ede4) had it"
)
SEQ_LENGTHS_ARG = (
    "read in both: caffe2rnn reads E7's sequence_lengths flag in a helper the scan does not "
    "follow (caffe2rnn/operators/lstm_unit.py: seq_lengths_flag, as GetFlagArgument), from era "
    "E7 only (era policy optional_sequence_lengths)"
)
SEQ_LENGTHS_SCHEMA = (
    "the same refusal at another moment: the schema is E7's (sequence_lengths=0 drops the "
    "seq_lengths input), and in an era before E7 the op refuses the shorter form when it is "
    "created (caffe2rnn/operators/gru_unit.py, era policy optional_sequence_lengths), where "
    "the E6 C++'s NumInputs(4) refused it"
)
CONTROL_FLOW = (
    "read and checked in both, out of the reader's sight: the C++ checks the condition in "
    "RunOnDevice (CAFFE_ENFORCE that it is a bool tensor, then data<bool>()) and reads the nets "
    "with GetSingleArgument<NetDef>; caffe2rnn reads the nets through its _net_argument helper "
    "and checks the bool in run (caffe2rnn/operators/control_flow.py)"
)
FP16 = (
    "float16_compute (E6 FC, E7 conv/pool) picks half-precision GEMMs on CUDA; caffe2rnn runs on "
    "the CPU, where the C++ ignored it too"
)
NO_SCHEMA = (
    "the C++ had no (or an empty) schema here, so any count passed creation and a missing input "
    "failed at run (Input(i) out of range); caffe2rnn's schema states the counts the op reads and"
    " refuses others at creation (a stricter, earlier refusal)"
)
RNN_ARGS = (
    "read in both: the C++ reads the link, alias, param and step-net arguments in free functions "
    "(detail::extractLinks, constructParams, extractNetDef...) given the names as parameters, "
    "which the reader does not follow; caffe2rnn's caffe2rnn_* arguments are its own options "
    "(operators/rnn/arguments.py). tests/rnn/test_refusal_audit.py checks each argument's use "
    "against the C++"
)
RNN_NETDEF = (
    "the C++ reads step nets as strings (GetSingleArgument<string>) and, from E6, through "
    "extractNetDef (field n or s), which the reader does not follow; caffe2rnn takes both fields "
    "in every era (a NetDef argument where E4/E5 wanted its text: an accepted superset)"
)
IMAGE = (
    "ImageInput is created, not run, in caffe2rnn (operators/image_input.py: no JPEG decoding): "
    "it reads the arguments that decide its outputs' count and layout and ignores the "
    "decoding/augmentation options, which only the run used"
)


E7_SCHEMA_EARLIER = (
    "the same refusal at another moment: the schema is E7's (929c33cee: Pow's tensor of "
    "exponents, the lengths input of ReduceFront/Back*, and their gradients' lengths), and in an "
    "era before E7 the op refuses the extra input when it is created (era policies "
    "pow_tensor_exponent and reduce_front_back_lengths: caffe2rnn/operators/unary_math.py, "
    "reduction.py), where that era's C++ schema refused it"
)


def _superset(later):
    return (
        "caffe2rnn's schema is the later era's, a superset of this era's: every def the "
        "earlier C++ accepted is accepted and runs as it did; the extra counts are the "
        "later era's optional inputs/outputs (%s), taken in every era" % later
    )


KNOWN = (
    Known(
        ops=("AbsGradient", "CosGradient", "SinGradient"),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float; caffe2rnn any (unchecked)",
        reason=TYPES_HELPER,
    ),
    Known(
        ops=(
            "Accuracy",
            "LabelCrossEntropy",
            "LabelCrossEntropyGradient",
            "MultiClassAccuracy",
            "SoftmaxWithLoss",
            "SoftmaxWithLossGradient",
        ),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ float; caffe2rnn float, int32",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=(
            "Adagrad",
            "Adam",
            "Ftrl",
            "MomentumSGD",
            "MomentumSGDUpdate",
            "RmsProp",
            "SparseFtrl",
            "UniformFill",
        ),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ float; caffe2rnn float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("And", "EQ", "GE", "GT", "LE", "LT", "Or", "Xor"),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ bool; caffe2rnn any (unchecked)",
        reason=(
            "bool is the output's type (FixedType<bool>); the input types come from the "
            "TensorTypes list in the registration macro, which caffe2rnn checks through "
            "comparison.py's BINARY table (int32/int64/float/double; bool for the logic ops) out "
            "of the scan's sight"
        ),
    ),
    Known(
        ops=(
            "AtomicFetchAdd",
            "LengthsRangeFill",
            "LengthsTile",
            "LengthsToRanges",
            "LengthsToSegmentIds",
            "LengthsToShape",
            "Split",
        ),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn int32",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("AtomicIter", "Checkpoint", "Iter", "OneHot", "Snapshot"),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn int64",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=(
            "AveragePool",
            "AveragePool1D",
            "AveragePool1DGradient",
            "AveragePool2D",
            "AveragePool2DGradient",
            "AveragePool3D",
            "AveragePool3DGradient",
            "AveragePoolGradient",
            "Conv",
            "Conv1D",
            "Conv1DGradient",
            "Conv2D",
            "Conv2DGradient",
            "Conv3D",
            "Conv3DGradient",
            "ConvGradient",
            "LpPool",
            "LpPoolGradient",
            "MaxPool",
            "MaxPool1D",
            "MaxPool1DGradient",
            "MaxPool2D",
            "MaxPool2DGradient",
            "MaxPool3D",
            "MaxPool3DGradient",
            "MaxPoolGradient",
            "PadImage",
            "PadImageGradient",
        ),
        aspects=("arg float16_compute",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=FP16,
    ),
    Known(
        ops=("AveragedLoss", "AveragedLossGradient"),
        aspects=("arg average",),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=(
            "AveragedLoss calls SumElementsOp's three-argument constructor with average=true, "
            "which does not read 'average'; the reader credits it the base's other constructor. "
            "AveragedLoss always averages, in both"
        ),
    ),
    Known(
        ops=("BatchGather",),
        aspects=("gradient",),
        eras=("E6", "E7"),
        detail=(
            "ops: C++ BatchGatherGradient(?I(Op::DATA),?I(Op::INDICES),GO(0) -> GI(0)); caffe2rnn"
            " BatchGatherGradient(I(0),I(1),GO(0) -> GI(0))"
        ),
        reason=(
            "the same ops: the C++ names the inputs by tags, I(Op::DATA) = I(0), I(Op::INDICES) ="
            " I(1) (INPUT_TAGS(DATA, INDICES)), which the reader leaves unresolved"
        ),
    ),
    Known(
        ops=("BatchGatherGradient",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ int32, int64; caffe2rnn double, float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("BatchMatMul",),
        aspects=("arg broadcast", "arg use_scratch"),
        eras=("E4", "E5"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "E6's N-D broadcasting BatchMatMul (era policy batch_matmul_broadcast): caffe2rnn "
            "reads these arguments only from E6 (the scan sees the read, not the era test); "
            "E4/E5's 3-D BatchMatMul ignores them as the C++ did"
        ),
    ),
    Known(
        ops=("BatchToSpace", "DivGradient", "SpaceToBatch"),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn double, float",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("ClipTensorByScaling",),
        aspects=("types",),
        eras=("E7",),
        detail="C++ any (unchecked); caffe2rnn double, float",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("Cast",),
        aspects=("arg from_type", "arg to"),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "the C++ reads to/from_type through cast::GetCastDataType(helper, name), a free "
            "function the reader does not follow; caffe2rnn reads them as it did (a DataType "
            "value or its name)"
        ),
    ),
    Known(
        ops=("Cast",),
        aspects=("gradient",),
        eras=("E6", "E7"),
        detail=(
            "caffe2rnn's maker fails on 1 inputs, 1 outputs: GradientError: Argument 'from_type' "
            "of type int or string is required to get the gradient of CastOp"
        ),
        reason=(
            "the same refusal: E6's GetCastGradient CAFFE_ENFORCEs 'from_type' (\"Argument "
            "'from_type' of type int or string is required to get the gradient of CastOp\"); the "
            "probe op has no arguments"
        ),
    ),
    Known(
        ops=(
            "CheckCounterDone",
            "CountDown",
            "CountUp",
            "CreateCounter",
            "ResetCounter",
            "RetrieveCount",
        ),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ int64; caffe2rnn any (unchecked)",
        reason=(
            "the C++ counter is CounterOp<int64_t>: int64 is the count's type, not an input's; "
            "caffe2rnn's counter blob holds a Python counter object, so there is no tensor type "
            "to check"
        ),
    ),
    Known(
        ops=("Checkpoint", "Snapshot"),
        aspects=("arg absolute_path", "arg blob_name_overrides", "arg db_type", "arg strip_prefix"),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "the C++ Checkpoint reads these in the Save op it builds at each checkpoint (at run "
            "time), which the reader does not follow; caffe2rnn reads them then too"
        ),
    ),
    Known(
        ops=("Col2Im", "Im2Col"),
        aspects=("gradient",),
        eras=("E6", "E7"),
        detail="registration: C++ maker; caffe2rnn none registered",
        reason=(
            "deliberately not registered: E6's makers fed the forward *output* where the gradient"
            " belongs (GetIm2ColGradient: Col2Im({O(0), I(0)}); GetCol2ImGradient: "
            "Im2Col({O(0)}), im2col_op.cc at 042e8ede4), so they computed no gradient; caffe2rnn "
            'refuses the request ("not implemented", as E5) rather than train on a wrong one'
        ),
    ),
    Known(
        ops=("ColwiseMaxGradient",),
        aspects=("schema",),
        eras=("E5",),
        detail="in-place allowed: C++ 0->0, 1->0, 2->0; caffe2rnn none",
        reason=(
            "E5 registered ColwiseMaxGradient with no OPERATOR_SCHEMA (only RowwiseMaxGradient "
            "had one), so nothing was checked; caffe2rnn uses E6's (no in-place)"
        ),
    ),
    Known(
        ops=("ColwiseMaxGradient",),
        aspects=("schema",),
        eras=("E5", "E6", "E7"),
        detail="counts: C++ inputs 0+, outputs 0+; caffe2rnn inputs 3, outputs 1",
        reason=NO_SCHEMA,
    ),
    Known(
        ops=("Conditional",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn bool",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("ConstantFill",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn double, int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("Conv1DGradient", "Conv2DGradient", "Conv3DGradient"),
        aspects=("schema",),
        eras=("E6", "E7"),
        detail="counts: C++ inputs 2-3, outputs 1-3; caffe2rnn inputs 3, outputs 1-3",
        reason=(
            "ConvGradient reads X, W and dY (Input(0..2), conv_op_impl.h) however its schema read"
            " NumInputs(2, 3); caffe2rnn's schema asks for the three it reads"
        ),
    ),
    Known(
        ops=("ConvGradient",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 2-3, outputs 2-3; caffe2rnn inputs 3, outputs 1-3",
        reason=(
            "ConvGradient reads X, W and dY (Input(0..2)) however its schema read NumInputs(2, "
            "3); E4's NumOutputs(2, 3) is E5's no_bias form (1 output) made stricter: caffe2rnn "
            "takes every era's outputs and the three inputs it reads"
        ),
    ),
    Known(
        ops=("ConvGradient",),
        aspects=("schema",),
        eras=("E5", "E6", "E7"),
        detail="counts: C++ inputs 2-3, outputs 1-3; caffe2rnn inputs 3, outputs 1-3",
        reason=(
            "ConvGradient reads X, W and dY (Input(0..2), conv_op_impl.h) however its schema read"
            " NumInputs(2, 3); caffe2rnn's schema asks for the three it reads"
        ),
    ),
    Known(
        ops=("DiagonalFill",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn double, int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("Dropout",),
        aspects=("schema",),
        eras=("E4", "E5"),
        detail="counts: C++ inputs 1, outputs 2; caffe2rnn inputs 1, outputs 1-2",
        reason=_superset("E6's is_test Dropout without the mask output"),
    ),
    Known(
        ops=("DropoutGrad",),
        aspects=("schema",),
        eras=("E4", "E5"),
        detail="counts: C++ inputs 2, outputs 1; caffe2rnn inputs 1-2, outputs 1",
        reason=_superset("E6's is_test DropoutGrad without the mask input"),
    ),
    Known(
        ops=("DropoutGrad",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ float; caffe2rnn bool, float",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("FC", "FCGradient"),
        aspects=("arg float16_compute",),
        eras=("E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=FP16,
    ),
    Known(
        ops=("FC", "FCGradient", "WeightedSum"),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn double, float",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("FindDuplicateElements",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ double, float, int32, int64, string; caffe2rnn any (unchecked)",
        reason=(
            "checked in both: caffe2rnn refuses all but float32, float64, int32, int64 and "
            "strings (typed_input with a set expression the scan does not evaluate; strings as "
            "object arrays, not a dtype it names)"
        ),
    ),
    Known(
        ops=("Ftrl",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 3, outputs 2; caffe2rnn inputs 3-4, outputs 2",
        reason=_superset("E5's optional alpha input"),
    ),
    Known(
        ops=("GRUUnit", "GRUUnitGradient", "LSTMUnit", "LSTMUnitGradient"),
        aspects=("arg sequence_lengths",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=SEQ_LENGTHS_ARG,
    ),
    Known(
        ops=("GRUUnit",),
        aspects=("schema",),
        eras=("E6",),
        detail="counts: C++ inputs 4, outputs 1; caffe2rnn inputs 3-4, outputs 1",
        reason=SEQ_LENGTHS_SCHEMA,
    ),
    Known(
        ops=("GRUUnitGradient",),
        aspects=("schema",),
        eras=("E6",),
        detail="counts: C++ inputs 6, outputs 2; caffe2rnn inputs 5-6, outputs 2",
        reason=SEQ_LENGTHS_SCHEMA,
    ),
    Known(
        ops=("If", "While"),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn bool",
        reason=CONTROL_FLOW,
    ),
    Known(
        ops=("If",),
        aspects=("arg then_net", "arg else_net"),
        eras=("E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=CONTROL_FLOW,
    ),
    Known(
        ops=("While",),
        aspects=("arg loop_net", "arg cond_net"),
        eras=("E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=CONTROL_FLOW,
    ),
    Known(
        ops=("Do",),
        aspects=("arg net",),
        eras=("E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=CONTROL_FLOW,
    ),
    Known(
        ops=("Do",),
        aspects=("arg copy_external_blobs",),
        eras=("E6",),
        detail="read by caffe2rnn, not by the C++",
        reason=_superset("E7's copy_external_blobs argument, default false as in E7"),
    ),
    Known(
        ops=("GaussianFill", "GivenTensorFill", "LearningRate", "MSRAFill", "XavierFill"),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ float; caffe2rnn int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("GivenTensorFill",),
        aspects=("arg dtype",),
        eras=("E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "read in both: GivenTensorFillOp<float> reads dtype through its ArgumentHelper "
            "(helper.HasArgument, cast::GetCastDataType), reads the reader leaves out as "
            "shape-inference code; caffe2rnn reads it from E6 (era policy "
            "given_tensor_fill_dtype; tests/operators/test_ops_fill.py against the C++)"
        ),
    ),
    Known(
        ops=("GivenTensorBoolFill",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ bool; caffe2rnn int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("GivenTensorDoubleFill",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ double; caffe2rnn int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("GivenTensorIntFill",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ int32; caffe2rnn int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("GivenTensorStringFill",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ string; caffe2rnn int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("ImageInput",),
        aspects=(
            "arg bounding_height",
            "arg bounding_width",
            "arg bounding_xmin",
            "arg bounding_ymin",
            "arg output_type",
        ),
        eras=("E5", "E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=IMAGE,
    ),
    Known(
        ops=("ImageInput",),
        aspects=(
            "arg color",
            "arg db_type",
            "arg decode_threads",
            "arg is_test",
            "arg mirror",
            "arg use_gpu_transform",
            "arg warp",
        ),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=IMAGE,
    ),
    Known(
        ops=("ImageInput",),
        aspects=(
            "arg color_jitter",
            "arg color_lighting",
            "arg color_lighting_std",
            "arg img_brightness",
            "arg img_contrast",
            "arg img_saturation",
            "arg label_type",
            "arg output_sizes",
            "arg random_scale",
            "arg scale_jitter_type",
        ),
        eras=("E6", "E7"),
        detail="read by the C++, not by caffe2rnn",
        reason=IMAGE,
    ),
    Known(
        ops=("ImageInput",),
        aspects=("arg mean_per_channel", "arg minsize", "arg num_labels", "arg std_per_channel"),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "E4's ImageInput arguments differ (no per-channel mean/std, minsize, num_labels); "
            "caffe2rnn's ImageInput is E5/E6's, created but not run (operators/image_input.py)"
        ),
    ),
    Known(
        ops=("ImageInput",),
        aspects=("arg multiple_label",),
        eras=("E4", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "only E5's ImageInput read multiple_label (E6 replaced it with label_type); caffe2rnn"
            " reads it in every era to count a def's label outputs, a def it only creates"
        ),
    ),
    Known(
        ops=("ImageInput", "TensorProtosDBInput"),
        aspects=("arg no_prefetch",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=E7,
    ),
    Known(
        ops=("ImageInput",),
        aspects=("schema",),
        eras=("E6", "E7"),
        detail="counts: C++ inputs 0-1, outputs 2+; caffe2rnn inputs 0-1, outputs 2",
        reason=(
            "E6 lets ImageInput write extra outputs (output_sizes, additional label types); "
            "caffe2rnn's ImageInput is created, not run, with the data and label outputs only"
        ),
    ),
    Known(
        ops=("IsMemberOf",),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ bool, int32, int64, string; caffe2rnn bool, int32, int64",
        reason=(
            "the C++ also registered IsMemberOf for std::string; caffe2rnn holds strings as "
            "object arrays of str, which its per-type value sets handle out of the scan's sight "
            "(tests/operators/test_ops_math_more.py)"
        ),
    ),
    Known(
        ops=("LRN",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 1, outputs 2; caffe2rnn inputs 1, outputs 1-2",
        reason=_superset("E5's LRN without the scale output"),
    ),
    Known(
        ops=("LRNGradient",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 4, outputs 1; caffe2rnn inputs 3-4, outputs 1",
        reason=_superset("E6's 3-input LRNGradient"),
    ),
    Known(
        ops=("LRNGradient",),
        aspects=("schema",),
        eras=("E6", "E7"),
        detail="counts: C++ inputs 3, outputs 1; caffe2rnn inputs 3-4, outputs 1",
        reason=(
            "E6's LRNGradient takes X, Y, dY (3 inputs); caffe2rnn also accepts E5's 4-input form"
            " (X, Y, scale, dY), reading dY last either way"
        ),
    ),
    Known(
        ops=("LSTMUnit", "LSTMUnitGradient"),
        aspects=("arg drop_states",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "drop_states came with E5's LSTMUnit; caffe2rnn reads it in every era (default 0, as "
            "E4 behaved)"
        ),
    ),
    Known(
        ops=("LSTMUnit",),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="counts: C++ inputs 5, outputs 2; caffe2rnn inputs 4-5, outputs 2",
        reason=_superset(
            "E0/E1's LSTMUnit without the hidden-state input, era policy "
            "lstm_unit_has_hidden_input, and E7's"
        ),
    ),
    Known(
        ops=("LSTMUnit", "LSTMUnitGradient"),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ int32; caffe2rnn double, float, int32",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("LSTMUnitGradient",),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="counts: C++ inputs 9, outputs 3; caffe2rnn inputs 8-9, outputs 2-3",
        reason=_superset("E0/E1's LSTMUnitGradient forms"),
    ),
    Known(
        ops=("LSTMUnitGradient",),
        aspects=("schema",),
        eras=("E7",),
        detail="counts: C++ inputs 8-9, outputs 3; caffe2rnn inputs 8-9, outputs 2-3",
        reason=_superset("E0/E1's LSTMUnitGradient without the hidden-state gradient"),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 1, outputs 1; caffe2rnn inputs 3-5, outputs 2-3",
        reason=(
            "E4's LastNWindowCollector was another op (one input, the collector's state inside "
            "the op); caffe2rnn implements E5/E6's in-place ring buffer in every era"
        ),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E4",),
        detail="in-place allowed: C++ none; caffe2rnn 0->0, 1->1, 4->2",
        reason=(
            "E4's LastNWindowCollector was another op (one input, the collector's state inside "
            "the op); caffe2rnn implements E5/E6's in-place ring buffer in every era"
        ),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E4",),
        detail="in-place enforced: C++ none; caffe2rnn 0->0, 1->1, 4->2",
        reason=(
            "E4's LastNWindowCollector was another op (one input, the collector's state inside "
            "the op); caffe2rnn implements E5/E6's in-place ring buffer in every era"
        ),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E5",),
        detail="counts: C++ inputs 3, outputs 2; caffe2rnn inputs 3-5, outputs 2-3",
        reason=_superset("E6's mutex input and num_visited input/output"),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E5",),
        detail="in-place allowed: C++ 0->0, 1->1, 2->2; caffe2rnn 0->0, 1->1, 4->2",
        reason=_superset("E6's mutex input and num_visited input/output"),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("schema",),
        eras=("E5",),
        detail="in-place enforced: C++ 0->0, 1->1, 2->2; caffe2rnn 0->0, 1->1, 4->2",
        reason=_superset("E6's mutex input and num_visited input/output"),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("types",),
        eras=("E4",),
        detail="C++ float; caffe2rnn int32, int64",
        reason=(
            "E4's LastNWindowCollector was another op (LastNWindowCollectorOp<float>); caffe2rnn "
            "implements E5/E6's, untyped, in every era"
        ),
    ),
    Known(
        ops=("LastNWindowCollector",),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn int32, int64",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("LayerNorm", "LayerNormGradient", "RecurrentNetwork", "WeightedSumGradient"),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn double, float",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("LearningRate",),
        aspects=(
            "arg active_first",
            "arg active_period",
            "arg end_multiplier",
            "arg inactive_period",
        ),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=E7,
    ),
    Known(
        ops=(
            "LengthsMean",
            "LengthsSum",
            "SortedSegmentMean",
            "SortedSegmentSum",
            "SparseSortedSegmentMean",
            "SparseSortedSegmentSum",
            "SparseUnsortedSegmentMean",
            "SparseUnsortedSegmentSum",
            "UnsortedSegmentMean",
            "UnsortedSegmentSum",
        ),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float, int32, int64; caffe2rnn float, int32",
        reason=(
            "float data with int32 or int64 indices/lengths in both: the int64 is the index type "
            "E6 added for the sparse ops (era policy sparse_int32_indices) and the "
            "lengths/segments the others take, read out of the scan's sight"
        ),
    ),
    Known(
        ops=(
            "LengthsMeanGradient",
            "LengthsSumGradient",
            "SparseLengthsMeanGradient",
            "SparseLengthsSumGradient",
            "SparseLengthsWeightedSumGradient",
        ),
        aspects=("schema",),
        eras=("E6", "E7"),
        detail="counts: the C++ schema is not readable here",
        reason=(
            "the C++ count is ReducerGradient::originalInputs().size() + a constant of a reducer "
            "alias the reader cannot resolve; tests/operators/test_ops_segments.py and "
            "test_ops_lengths_reducers.py check these ops' inputs"
        ),
    ),
    Known(
        ops=("SparseLengthsWeightedSumWithMainInputGradient",),
        aspects=("schema",),
        eras=("E4", "E5", "E6", "E7"),
        detail="counts: the C++ schema is not readable here",
        reason=(
            "the C++ count is WithMainInputBackwardOp::kNumInputs, originalInputs().size() + 3 + "
            "the SparseFused flag of a template alias the reader cannot resolve (5 inputs, 1 or "
            "more outputs); tests/operators/test_ops_lengths_reducers.py checks the op's inputs"
        ),
    ),
    Known(
        ops=(
            "LengthsMax",
            "SparseLengthsIndicesInGradientWeightedSumWithMainInputGradient",
            "SparseLengthsWeightedSumWithMainInputGradient",
        ),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float, int32, int64; caffe2rnn float, int32",
        reason=(
            "the same types: float data and int32 lengths in both; the int64 is the INDICES type "
            "of the templates' DispatchHelper<TensorTypes<int32_t, int64_t>>, which the "
            "WithMainInput gradients take in caffe2rnn too (lengths_reducers._indices, out of "
            "the scan's sight; era policy sparse_int32_indices) and LengthsMax, not sparse, "
            "never dispatches on"
        ),
    ),
    Known(
        ops=("SpatialSoftmaxWithLoss", "SpatialSoftmaxWithLossGradient"),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ float; caffe2rnn float, int32",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("BatchBucketOneHot",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn float, int32",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("Load",),
        aspects=("arg dbs",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=E7,
    ),
    Known(
        ops=("Load",),
        aspects=("arg source_blob_names",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "source_blob_names came with E5's Load (E4 did not read it); caffe2rnn reads it in "
            "every era (an E4 def never set it)"
        ),
    ),
    Known(
        ops=("Load",),
        aspects=("schema",),
        eras=("E7",),
        detail="counts: C++ inputs 0+, outputs 0+; caffe2rnn inputs 0-1, outputs 0+",
        reason=E7,
    ),
    Known(
        ops=("MatMul",),
        aspects=("arg axis_a", "arg axis_b"),
        eras=("E4", "E5"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "MatMul's axis_a/axis_b came with c5307e6f9 (E6); caffe2rnn reads them in every era "
            "(default 1: E4/E5's 2-D MatMul is unchanged); era policy matmul_axes decides the "
            "gradient's form"
        ),
    ),
    Known(
        ops=("MatMul",),
        aspects=("schema",),
        eras=("E4", "E5"),
        detail="counts: C++ inputs 2, outputs 1; caffe2rnn inputs 2-3, outputs 1",
        reason=_superset("E6's optional third input giving Y's shape"),
    ),
    Known(
        ops=("Not",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn bool",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("PackSegments",),
        aspects=("arg return_presence_mask",),
        eras=("E4", "E5"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "return_presence_mask (05a0c35a0, E6) is accepted in every era, as documented in "
            "operators/sequence.py: an E4/E5 def never set it"
        ),
    ),
    Known(
        ops=("PackSegments",),
        aspects=("schema",),
        eras=("E4", "E5"),
        detail="counts: C++ inputs 2, outputs 1; caffe2rnn inputs 2, outputs 1-2",
        reason=_superset("E6's presence-mask output"),
    ),
    Known(
        ops=("PackSegments",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ int32, int64; caffe2rnn float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("Pow",),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="counts: C++ inputs 1, outputs 1; caffe2rnn inputs 1-2, outputs 1",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=("Pow",),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="in-place allowed: C++ 0->0; caffe2rnn 0->0, 1->0",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=("Python", "PythonGradient"),
        aspects=("arg forced_cpu_outputs",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=E7,
    ),
    Known(
        ops=("Python", "PythonGradient"),
        aspects=("arg pass_workspace",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "pass_workspace came with E5's Python op; caffe2rnn reads it in every era (an E4 def "
            "never set it)"
        ),
    ),
    Known(
        ops=("Python",),
        aspects=("gradient",),
        eras=("E7",),
        detail="caffe2rnn writes PythonGradient( -> ), which the C++ maker never writes",
        reason=E7,
    ),
    Known(
        ops=("RecurrentNetwork", "RecurrentNetworkGradient"),
        aspects=(
            "arg backward_link_external",
            "arg backward_link_internal",
            "arg backward_link_offset",
            "arg backward_link_window",
            "arg caffe2rnn_batch_param_gradients",
            "arg link_external",
            "arg link_internal",
            "arg link_offset",
            "arg link_window",
            "arg num_workspaces",
            "arg rnn_executor.num_threads",
        ),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_ARGS,
    ),
    Known(
        ops=("RecurrentNetwork",),
        aspects=("arg backward_step_net",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "E4's forward RecurrentNetworkOp did not read backward_step_net (its gradient op "
            "did); caffe2rnn's forward op reads it in every era, as from E5"
        ),
    ),
    Known(
        ops=("RecurrentNetwork",),
        aspects=("arg backward_step_net",),
        eras=("E5", "E6", "E7"),
        detail="field: C++ s; caffe2rnn n/s",
        reason=RNN_NETDEF,
    ),
    Known(
        ops=("RecurrentNetwork", "RecurrentNetworkGradient"),
        aspects=("arg enable_rnn_executor",),
        eras=("E4", "E5"),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "enable_rnn_executor came with E6's executor; caffe2rnn reads it in every era and "
            "runs the step nets the same way without it"
        ),
    ),
    Known(
        ops=("RecurrentNetwork",),
        aspects=("arg outputs_with_grads", "arg param", "arg param_grads"),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_ARGS,
    ),
    Known(
        ops=("RecurrentNetwork",),
        aspects=("arg step_net",),
        eras=("E4", "E5"),
        detail="field: C++ s; caffe2rnn n/s",
        reason=RNN_NETDEF,
    ),
    Known(
        ops=("RecurrentNetwork",),
        aspects=("arg step_net",),
        eras=("E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_NETDEF,
    ),
    Known(
        ops=("RecurrentNetworkGradient",),
        aspects=(
            "arg alias_dst",
            "arg caffe2rnn_zero_tail_rows",
            "arg recompute_blobs_on_backward",
            "arg step_net",
        ),
        eras=("E4", "E5", "E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_ARGS,
    ),
    Known(
        ops=("RecurrentNetworkGradient",),
        aspects=("arg backward_step_net",),
        eras=("E4", "E5"),
        detail="field: C++ s; caffe2rnn n/s",
        reason=RNN_NETDEF,
    ),
    Known(
        ops=("RecurrentNetworkGradient",),
        aspects=("arg backward_step_net",),
        eras=("E6", "E7"),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_NETDEF,
    ),
    Known(
        ops=("RecurrentNetworkGradient",),
        aspects=("arg param_grads",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=RNN_ARGS,
    ),
    Known(
        ops=("RecurrentNetworkGradient",),
        aspects=("types",),
        eras=("E4", "E5"),
        detail="C++ float; caffe2rnn any (unchecked)",
        reason=TYPES_HELPER,
    ),
    Known(
        ops=("ReduceBackMax", "ReduceFrontMax"),
        aspects=("schema",),
        eras=("E6",),
        detail="counts: C++ inputs 1, outputs 1; caffe2rnn inputs 1-2, outputs 1",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=("ReduceBackMaxGradient", "ReduceFrontMaxGradient"),
        aspects=("schema",),
        eras=("E6",),
        detail="counts: C++ inputs 3, outputs 1; caffe2rnn inputs 3-4, outputs 1",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=("ReduceBackMean", "ReduceBackSum", "ReduceFrontMean", "ReduceFrontSum"),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="counts: C++ inputs 1, outputs 1; caffe2rnn inputs 1-2, outputs 1",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=(
            "ReduceBackMeanGradient",
            "ReduceBackSumGradient",
            "ReduceFrontMeanGradient",
            "ReduceFrontSumGradient",
        ),
        aspects=("schema",),
        eras=("E4", "E5", "E6"),
        detail="counts: C++ inputs 2, outputs 1; caffe2rnn inputs 2-3, outputs 1",
        reason=E7_SCHEMA_EARLIER,
    ),
    Known(
        ops=(
            "ReduceBackMax",
            "ReduceBackMaxGradient",
            "ReduceFrontMax",
            "ReduceFrontMaxGradient",
        ),
        aspects=("types",),
        eras=("E7",),
        detail="C++ float; caffe2rnn float, int32",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("Reshape",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ float, int32, int64; caffe2rnn int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("ScatterAssign",),
        aspects=("types",),
        eras=("E4", "E5"),
        detail="C++ float; caffe2rnn int32, int64",
        reason=(
            "E4/E5's ScatterAssign was registered for float data only; caffe2rnn's checks name "
            "the int32/int64 index types (data<Index>()), and it takes E6's data types in every "
            "era"
        ),
    ),
    Known(
        ops=("ScatterAssign",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn int32, int64",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("SegmentOneHot", "Unique"),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ any (unchecked); caffe2rnn int32, int64",
        reason=TYPES_UNTEMPLATED,
    ),
    Known(
        ops=("SequenceMask",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float; caffe2rnn float, int32",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("Slice",),
        aspects=("arg ends", "arg starts"),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "E4's Slice took starts/ends as inputs only; caffe2rnn reads E5's arguments in every "
            "era (an E4 def never set them)"
        ),
    ),
    Known(
        ops=("Slice",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 3, outputs 1; caffe2rnn inputs 1-3, outputs 1",
        reason=_superset("E5's Slice with starts/ends as arguments"),
    ),
    Known(
        ops=("SliceGradient",),
        aspects=("schema",),
        eras=("E5",),
        detail=(
            "in-place allowed: C++ 0->0, 1->0, 2->0, 3->0, 4->0, 5->0, 6->0, 7->0...; caffe2rnn "
            "none"
        ),
        reason=(
            "E5 registered SliceGradient with no OPERATOR_SCHEMA, so nothing was checked; "
            "caffe2rnn uses E6's empty schema (no in-place)"
        ),
    ),
    Known(
        ops=("SliceGradient",),
        aspects=("schema",),
        eras=("E5", "E6", "E7"),
        detail="counts: C++ inputs 0+, outputs 0+; caffe2rnn inputs 2+, outputs 1",
        reason=NO_SCHEMA,
    ),
    Known(
        ops=("Snapshot",),
        aspects=("schema",),
        eras=("E4", "E5", "E6", "E7"),
        detail="counts: C++ inputs 0+, outputs 0+; caffe2rnn inputs 1+, outputs 0",
        reason=NO_SCHEMA,
    ),
    Known(
        ops=("SoftmaxWithLoss", "SoftmaxWithLossGradient"),
        aspects=("arg axis",),
        eras=("E4",),
        detail="read by caffe2rnn, not by the C++",
        reason=(
            "E4's SoftmaxWithLoss had no axis (it flattened after dim 0, E5's default axis=1); "
            "caffe2rnn reads axis in every era"
        ),
    ),
    Known(
        ops=("SoftmaxWithLoss", "SoftmaxWithLossGradient"),
        aspects=("arg spatial",),
        eras=("E4",),
        detail="read by the C++, not by caffe2rnn",
        reason=(
            "E4's spatial mode (NCHW per-pixel softmax, spatial=1) is not implemented: caffe2rnn "
            "implements E5/E6's op, which dropped it"
        ),
    ),
    Known(
        ops=("SoftmaxWithLossGradient",),
        aspects=("schema",),
        eras=("E4", "E5", "E6", "E7"),
        detail="counts: C++ inputs 0+, outputs 1; caffe2rnn inputs 4-5, outputs 1",
        reason=NO_SCHEMA,
    ),
    Known(
        ops=("SparseFtrl",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 4, outputs 2; caffe2rnn inputs 4-5, outputs 2",
        reason=_superset("E5's optional alpha input"),
    ),
    Known(
        ops=("SparseLengthsMean", "SparseLengthsSum", "SparseLengthsWeightedSum"),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float, float16; caffe2rnn float, int32",
        reason=(
            "E6 registered the SparseLengths ops for float16 data too (Caffe2's float16 type, not"
            " NumPy's); caffe2rnn takes float data (and its int32 lengths, the other type listed "
            "here)"
        ),
    ),
    Known(
        ops=("SparseToDense",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ int32, int64; caffe2rnn double, float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("Sum",),
        aspects=("types",),
        eras=("E4",),
        detail="C++ float; caffe2rnn float, int32",
        reason=(
            "E4's Sum was registered for float only; caffe2rnn takes E5's int32 as well in every "
            "era"
        ),
    ),
    Known(
        ops=("Tile", "TileGradient"),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 1, outputs 1; caffe2rnn inputs 1-3, outputs 1",
        reason=_superset("E5's tiles/axis inputs"),
    ),
    Known(
        ops=("Tile",),
        aspects=("types",),
        eras=("E4",),
        detail="C++ float; caffe2rnn any (unchecked)",
        reason=(
            "E4's Tile was registered for float only; caffe2rnn tiles any element type with "
            "NumPy, as E5/E6's untyped TileOp did"
        ),
    ),
    Known(
        ops=("TopK",),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 1, outputs 2; caffe2rnn inputs 1, outputs 2-3",
        reason=_superset("E5's flatten_indices output"),
    ),
    Known(
        ops=("TopKGradient",),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ float; caffe2rnn float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("UniformFill", "UniformIntFill"),
        aspects=("schema",),
        eras=("E4",),
        detail="counts: C++ inputs 0-1, outputs 1; caffe2rnn inputs {0,1,3}, outputs 1",
        reason=_superset("E5's min/max blobs, NumInputs({0, 1, 3})"),
    ),
    Known(
        ops=("UniformIntFill",),
        aspects=("types",),
        eras=("E4", "E5", "E6", "E7"),
        detail="C++ int32; caffe2rnn double, float, int32, int64",
        reason=READER_FILLERS,
    ),
    Known(
        ops=("WeightedSampleDequeueBlobs",),
        aspects=("arg table_idx_blob",),
        eras=("E7",),
        detail="read by the C++, not by caffe2rnn",
        reason=E7,
    ),
    Known(
        ops=("Where",),
        aspects=("types",),
        eras=("E5",),
        detail=(
            "C++ double, float, int32, int64, string; caffe2rnn bool, double, float, int32, int64"
        ),
        reason=(
            "the same types: the C++ lists std::string, which caffe2rnn holds as object arrays "
            "(not a dtype the scan names); bool is the condition's type (data<bool>()), and E5 "
            "registered Where without bool data, which caffe2rnn takes in every era"
        ),
    ),
    Known(
        ops=("Where",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail=(
            "C++ bool, double, float, int32, int64, string; caffe2rnn bool, double, float, int32,"
            " int64"
        ),
        reason=(
            "the same types: the C++ lists std::string, which caffe2rnn holds as object arrays of"
            " str (not a dtype the scan names)"
        ),
    ),
    Known(
        ops=("YellowFin",),
        aspects=("types",),
        eras=("E6", "E7"),
        detail="C++ float; caffe2rnn float, int32, int64",
        reason=TYPES_OTHER_INPUTS,
    ),
    Known(
        ops=("rnn_internal_accumulate_gradient_input",),
        aspects=("schema",),
        eras=("E5",),
        detail="counts: C++ inputs 2, outputs 1; caffe2rnn inputs 3, outputs 1+",
        reason=(
            "the op is internal to the recurrent gradient op, which prepends it to its own "
            "backward step net: caffe2rnn writes E6's form (the gradient as input 2, in place) in"
            " every era; E5's two-input form added into the same blob"
        ),
    ),
    Known(
        ops=("rnn_internal_accumulate_gradient_input",),
        aspects=("schema",),
        eras=("E5",),
        detail="in-place allowed: C++ none; caffe2rnn 2->0",
        reason=(
            "the op is internal to the recurrent gradient op, which prepends it to its own "
            "backward step net: caffe2rnn writes E6's form (the gradient as input 2, in place) in"
            " every era; E5's two-input form added into the same blob"
        ),
    ),
    Known(
        ops=("rnn_internal_accumulate_gradient_input",),
        aspects=("schema",),
        eras=("E5",),
        detail="in-place enforced: C++ none; caffe2rnn 2->0",
        reason=(
            "the op is internal to the recurrent gradient op, which prepends it to its own "
            "backward step net: caffe2rnn writes E6's form (the gradient as input 2, in place) in"
            " every era; E5's two-input form added into the same blob"
        ),
    ),
    Known(
        ops=("rnn_internal_accumulate_gradient_input",),
        aspects=("types",),
        eras=("E5", "E6", "E7"),
        detail="C++ float; caffe2rnn any (unchecked)",
        reason=TYPES_HELPER,
    ),
)
