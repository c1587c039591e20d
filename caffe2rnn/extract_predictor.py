"""``model_helper.ExtractPredictorNet``: cut an inference net out of a training net.

A trained model is deployed as a *predictor*: only the ops from the inputs to
the outputs, without loss, gradient or optimizer ops, plus the list of
parameter blobs to ship with it. A RecurrentNetwork op needs care: its step
net (a NetDef in an argument) must move to the predictor's device too, and
its backward step net is dropped.

Caffe2 defined this in ``model_helper.py``; ``caffe2rnn.model_helper``
re-exports it.
"""

import logging

from . import core, eras, proto
from .errors import ModelError
from .proto import caffe2_pb2

logger = logging.getLogger(__name__)


def _set_device(op, device):
    if device is not None:
        op.device_option.device_type = device.device_type
        op.device_option.cuda_gpu_id = device.cuda_gpu_id


def _prepare_recurrent_op(op, device, orig_external_inputs, external_inputs):
    """A RecurrentNetwork op for inference: step net on ``device``, no backward net.

    The step net's own external inputs that are external inputs of the
    training net (``seq_lengths``, parameters...) become inputs of the
    predictor net too.
    """
    for arg in op.arg:
        if arg.name == "backward_step_net":
            arg.ClearField("n")
            arg.s = b""
        elif arg.name == "step_net":
            step = arg.n if arg.HasField("n") else proto.parse_text(caffe2_pb2.NetDef, arg.s)
            for step_op in step.op:
                _set_device(step_op, device)
            external_inputs.extend(b for b in step.external_input if b in orig_external_inputs)
            if not arg.HasField("n"):
                arg.s = str(step).encode("utf-8")


def ExtractPredictorNet(
    net_proto, input_blobs, output_blobs, device=None, renames=None, disabled_inputs=None
):
    """A net for inference cut out of a training net: ``(predict_net, export_blobs)``.

    Keeps the ops from the first one reading an ``input_blobs`` blob (not
    counting StopGradient) to the last one writing an ``output_blobs`` blob,
    and of those only the ones whose inputs are known: external inputs of
    ``net_proto``, ``input_blobs`` (minus ``disabled_inputs``) or outputs of
    kept ops. So gradient and optimizer ops drop out. Every kept op (and, for
    a RecurrentNetwork, every op of its step net) is put on ``device`` if
    given; a RecurrentNetwork's ``backward_step_net`` becomes ``''``.
    ``renames`` ({old: new}) renames blobs in the result.

    ``export_blobs`` lists the predictor's external inputs that are not
    ``input_blobs``: the parameters a deployment must ship with the net.

    Caffe2 E5 (0cdd09da6) edited the ops of ``net_proto`` in place while doing
    this, so the training net lost its backward step nets; here the ops are
    copied and ``net_proto`` is left as it was. An op with ``is_test=0`` is an
    error: the net was built for training.

    ``net_proto`` may also be the ``core.Net`` itself: the predictor net then
    carries the era the training net was marked with (:mod:`caffe2rnn.eras`),
    so a historical recurrent op keeps running with its era's operators.
    """
    era = None
    if isinstance(net_proto, core.Net):
        era, net_proto = eras.of(net_proto), net_proto.Proto()
    predict_net = core.Net(net_proto.name + "_predict")
    if era is not None:
        eras.mark(predict_net, era)
    predict_proto = predict_net.Proto()
    orig_external_inputs = set(net_proto.external_input)
    orig_external_outputs = set(net_proto.external_output)
    inputs = [str(b) for b in input_blobs]
    outputs = {str(b) for b in output_blobs}
    known = orig_external_inputs | set(inputs)
    if disabled_inputs is not None:
        known -= {str(b) for b in disabled_inputs}
    renames = renames or {}
    external_inputs = list(inputs)
    external_outputs = sorted(outputs)

    ops = list(net_proto.op)
    readers = [
        j for j, op in enumerate(ops) if set(inputs) & set(op.input) and op.type != "StopGradient"
    ]
    if not readers:
        raise ModelError("No ops with input=%s" % sorted(inputs))
    writers = [j for j, op in enumerate(ops) if outputs & set(op.output)]
    if not writers:
        raise ModelError("No ops with output=%s" % sorted(outputs))

    for original in ops[min(readers) : max(writers) + 1]:
        if not known.issuperset(original.input):
            logger.debug("Op %s had unknown inputs: %s", original.type, set(original.input) - known)
            continue
        for arg in original.arg:
            if arg.name == "is_test" and arg.i == 0:
                raise ModelError(
                    "An operator had is_test=0, did you try to extract a predictor from a "
                    "train model (instead of test model)? Op was: %s %s"
                    % (original.type, list(original.output))
                )
        op = predict_proto.op.add()
        op.CopyFrom(original)
        if op.type == "RecurrentNetwork":
            _prepare_recurrent_op(op, device, orig_external_inputs, external_inputs)
        _set_device(op, device)
        known.update(op.output)
        external_inputs.extend(b for b in op.input if b in orig_external_inputs)
        external_outputs.extend(b for b in op.output if b in orig_external_outputs)

    def renamed(names):
        return [renames.get(b, b) for b in dict.fromkeys(names)]

    predict_proto.external_input.extend(renamed(external_inputs))
    predict_proto.external_output.extend(renamed(external_outputs))
    for op in predict_proto.op:
        op.input[:] = [renames.get(b, b) for b in op.input]
        op.output[:] = [renames.get(b, b) for b in op.output]
    renamed_inputs = set(renamed(inputs))
    export_blobs = [b for b in predict_proto.external_input if b not in renamed_inputs]
    return predict_net, export_blobs
