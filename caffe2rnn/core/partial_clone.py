"""``Net.ClonePartial``: the sub-net that computes some blobs from others.

Given blobs to start from (``inputs``) and blobs wanted (``outputs``), keep
only the ops on a path between them, found on the SSA form of the net
(:mod:`caffe2rnn.core.ssa`), so an in-place chain ``e = Sum(e, k)`` is followed
version by version::

    a1, a2 ─Concat→ b1, b2 ─Sum(b1, p1)→ c1 ─┐
                          └─Sum(b2)─────→ c2 ─┴─Sum→ d ─Sum→ e ...

    net.ClonePartial("f", [b1, b2], [d])  →  3 ops: c1, c2, d
        external inputs  b1, b2, p1        (p1: read, made by no kept op)
        renamed          f/c1, f/c2, f/d   (internal blobs get the new prefix)

Blob names in the clone: an input is renamed to what ``inputs`` maps it to
(a list keeps the names); a blob the kept ops read but no kept op writes
(``p1``, a parameter) keeps its name and becomes an external input; every
other blob gets the prefix ``<name>/`` so the clone can live next to the
original in one workspace. The external outputs are exactly ``outputs``
(renamed). Gradient ops are never on the path from inputs to outputs, so a
forward clone of a training net leaves them out.
"""

from collections import OrderedDict

from ..errors import BuildError
from .ssa import get_op_ids_in_path, get_ssa, get_undefined_blobs


def _input_map(inputs):
    """``inputs`` (dict, list of (old, new) pairs, or list of blobs) as old → new."""
    if isinstance(inputs, dict):
        return OrderedDict(inputs)
    inputs = list(inputs)
    if inputs and all(isinstance(i, tuple) and len(i) == 2 for i in inputs):
        return OrderedDict(inputs)
    return OrderedDict(zip(inputs, inputs))


def clone_partial(net, name, inputs, outputs, remap_funcs=None):
    """``(new_net, new_outputs)``: the ops of ``net`` that compute ``outputs`` from ``inputs``.

    ``new_net`` is ``net.Clone(name, ...)`` restricted to those ops (so it is
    renamed uniquely from ``name``); ``new_outputs`` are BlobReferences to the
    outputs in it. Raises :class:`~caffe2rnn.errors.BuildError` if an output
    is not defined by ``net``, or if a kept op would itself produce one of the
    inputs (the inputs must come before the outputs).
    """
    input_map = _input_map(inputs)
    for output in outputs:
        if not net.BlobIsDefined(output):
            raise BuildError(
                "ClonePartial of net '%s': output %s is not defined by the net"
                % (net.Name(), output)
            )
    input_names = OrderedDict((str(k), str(v)) for k, v in input_map.items())
    output_names = [str(o) for o in outputs]
    ssa, blob_versions = get_ssa(net.Proto())
    used_op_ids = get_op_ids_in_path(ssa, blob_versions, input_names, output_names)
    producing_inputs = get_op_ids_in_path(ssa, blob_versions, [], input_names)
    clash = sorted(set(used_op_ids) & set(producing_inputs))
    if clash:
        raise BuildError(
            "Cannot partially clone net '%s': ops %s are needed for the outputs but also "
            "generate the given inputs" % (net.Name(), clash)
        )
    sub_ssa = [ssa[i] for i in used_op_ids]
    # In the order the kept ops first read them (Caffe2 took a set's order).
    undefined = get_undefined_blobs(sub_ssa) - set(input_names)
    undefined_in_order = list(
        OrderedDict.fromkeys(b for op_inputs, _ in sub_ssa for b, _ in op_inputs if b in undefined)
    )
    prefix = (name + "/") if name else ""

    def remap(blob):
        if blob in input_names:
            return input_names[blob]
        return blob if blob in undefined else prefix + blob

    blob_mapping = {blob: remap(blob) for blob in blob_versions}
    new_net = net.Clone(name, blob_mapping, used_op_ids, remap_funcs)
    new_inputs = [blob_mapping[i] for i in input_names] + undefined_in_order
    new_outputs = [blob_mapping[o] for o in output_names]
    proto = new_net.Proto()
    del proto.external_input[:]
    proto.external_input.extend(new_inputs)
    del proto.external_output[:]
    proto.external_output.extend(new_outputs)
    return new_net, [new_net.GetBlobRef(o) for o in new_outputs]
