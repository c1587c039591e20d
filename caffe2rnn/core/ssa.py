"""SSA view of a net: which *version* of each blob every operator reads/writes.

A NetDef may write the same blob several times (``Sum([g, x] → g)`` after
``FC → g``). Numbering the writes makes the data flow explicit: version 0 is
the value the net was given, version k the value after the k-th write. Caffe2
used this to find blobs a step net reads but never writes
(:func:`get_undefined_blobs`) and intermediate blobs the backward step needs
from the forward step (``recurrent_net``'s ``scratches``)::

    FC([h, w, b] → g)       inputs [(h,0), (w,0), (b,0)]  outputs [(g,1)]
    Sum([g, x] → g)         inputs [(g,1), (x,0)]         outputs [(g,2)]

The ``blob_versions`` dict's insertion order reaches ``recurrent_net``'s
output (the order of ``scratches``), so it is specified exactly: external
inputs first, then (only in nets *without* declared external inputs) other
inputs at their first read, and outputs at their first write.
"""

from ..errors import BlobNotFoundError
from ..proto import caffe2_pb2


def _netdef(net):
    if isinstance(net, caffe2_pb2.NetDef):
        return net
    proto = getattr(type(net), "Proto", None)
    if proto is None:
        raise TypeError("get_ssa takes a core.Net or a NetDef, got %s" % type(net).__name__)
    return net.Proto()


def get_ssa(net, blob_versions=None):
    """Return ``(ssa, blob_versions)`` for a Net or NetDef.

    ``ssa`` has one ``(inputs, outputs)`` pair per op, each a list of
    ``(blob name, version)`` tuples. ``blob_versions`` (the given dict, mutated,
    or a new one) maps each blob to its latest version.
    """
    proto = _netdef(net)
    if blob_versions is None:
        blob_versions = {}
    for name in proto.external_input:
        blob_versions.setdefault(name, 0)
    declares_inputs = len(proto.external_input) > 0
    ssa = []
    for op in proto.op:
        if not declares_inputs:
            for name in op.input:
                blob_versions.setdefault(name, 0)
        inputs = [(name, blob_versions.get(name, 0)) for name in op.input]
        for name in op.output:
            blob_versions[name] = blob_versions.get(name, 0) + 1
        outputs = [(name, blob_versions[name]) for name in op.output]
        ssa.append((inputs, outputs))
    return ssa, blob_versions


def get_undefined_blobs(ssa):
    """The set of blobs some op reads at version 0 (before any op wrote them)."""
    return {name for inputs, _ in ssa for name, version in inputs if version == 0}


def get_output_producers(ssa):
    """Map ``(blob, version)`` → index of the op that wrote that version."""
    producers = {}
    for op_id, (_, outputs) in enumerate(ssa):
        for versioned in outputs:
            producers[versioned] = op_id
    return producers


def _latest(blob_versions, blobs):
    versioned = set()
    for blob in blobs:
        name = str(blob)
        if name not in blob_versions:
            raise BlobNotFoundError(
                "blob '%s' does not appear in the net (not in blob_versions)" % name
            )
        versioned.add((name, blob_versions[name]))
    return versioned


def get_op_ids_in_path(ssa, blob_versions, inputs, outputs):
    """Sorted indices of the ops needed to compute ``outputs`` from ``inputs``.

    Both are taken at their latest versions; the walk goes backwards from the
    outputs through producers and stops at the inputs and at version-0 blobs.
    """
    stop = _latest(blob_versions, inputs)
    producers = get_output_producers(ssa)
    pending = list(_latest(blob_versions, outputs))
    used = set()
    while pending:
        versioned = pending.pop()
        if versioned in stop or versioned not in producers:
            continue
        op_id = producers[versioned]
        if op_id not in used:
            used.add(op_id)
            pending.extend(ssa[op_id][0])
    return sorted(used)
