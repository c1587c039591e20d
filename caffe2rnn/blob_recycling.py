"""Memonger's blob recycling: rename blobs so that ones whose lives do not
overlap share storage (``C.memonger_*``, Caffe2 042e8ede4).

Caffe2's ``memonger.py`` (``share_grad_blobs``, ``optimize_inference_for_dag``,
``optimize_inference_fast``) moved its recycling passes to C++ in late 2017
(caffe2/core/memonger.cc) and calls them through the bindings; these are those
passes, written from that description. Both take and return a NetDef; nothing
runs.

* :func:`optimize_inference_net` — one pass in op order: a blob whose last
  reader is op *i* is released after op *i*; a blob first written by a later
  op takes the most recently released one (a stack). Released blobs are
  renamed ``__m<k>_shared``. Nets of another type than ``""``/``"simple"``,
  nets with a ``RecurrentNetwork`` and nets that already hold a
  ``__m<k>_shared`` blob come back unchanged.

* :func:`compute_blob_recycling_for_dag` — for a DAG of ops (``op_indices``,
  e.g. the gradient ops), walked depth-first from the ``heads`` (the losses,
  or the inputs): an op runs when all its shareable inputs were produced; a
  shareable blob is released when its last reader ran, and a new output takes
  a released blob if that blob is on the same device and every *token* that
  blob needs is held by the op. Tokens tell branches apart: each head starts
  one, and every op whose outputs feed more than one reader hands its readers
  a new one, so a blob released on one branch is not taken by a parallel
  branch that may run at the same time. Among the released blobs the most
  shared (then the lexicographically smallest) is taken first; with
  ``blob_shapes`` the one whose size fits best. Blobs used in place of others
  are renamed ``<namescope>__m<k>_shared``; recurrent ops get their step nets
  renamed too and ``<blob>.rename`` arguments.

Where C++ iterated hash maps (the order of released blobs within one op, the
numbering of shared names) the order here is the ops' own; the assignment can
differ from Caffe2's in those ties, never in which lifetimes may share.
"""

import heapq

from google.protobuf import text_format

from .errors import EnforceNotMet
from .proto import caffe2_pb2
from .runtime.bindings import blob_name, message


def optimize_inference_net(net, static_blobs):
    """A copy of the NetDef ``net`` with recycled blobs (module docstring)."""
    if net.type not in ("", "simple"):
        return net
    if any(op.type == "RecurrentNetwork" for op in net.op):
        return net
    static = {blob_name(b) for b in static_blobs}
    all_blobs, ranges = set(), {}
    for i, op in enumerate(net.op):
        for name in op.input:
            if name in ranges:
                ranges[name][1] = i
            all_blobs.add(name)
        for name in op.output:
            all_blobs.add(name)
            if name not in static and name not in ranges:
                ranges[name] = [i, i]
    free, mapping, renaming = [], {}, {}
    for i, op in enumerate(net.op):
        released = []
        for name in op.input:
            if name in ranges and ranges[name][1] == i:
                if name not in mapping:
                    mapping[name] = name
                    shared = "__m%d_shared" % len(renaming)
                    if shared in all_blobs:  # memongered before: leave it
                        return net
                    renaming[name] = shared
                if mapping[name] not in released:
                    released.append(mapping[name])
        for name in op.output:
            if free and name in ranges and ranges[name][0] == i:
                mapping[name] = free.pop()
        free.extend(released)
    optimized = caffe2_pb2.NetDef()
    optimized.CopyFrom(net)
    for op in optimized.op:
        for field in (op.input, op.output):
            for j, name in enumerate(field):
                if name in mapping:
                    field[j] = renaming[mapping[name]]
    return optimized


class _DagRecycler:
    """The state of one :func:`compute_blob_recycling_for_dag` pass."""

    def __init__(self, net, shareable, dont_share, blob_shapes):
        self.net = net
        self.shareable, self.dont_share, self.shapes = shareable, dont_share, blob_shapes
        n = len(net.op)
        self.in_degree = [0] * n  # shareable inputs an op waits for
        self.arrived = [0] * n
        self.visited = [False] * n
        self.deposit = [set() for _ in range(n)]  # tokens left by finished parents
        self.readers = {}  # blob -> indices of the ops reading it (per occurrence)
        self.reads_done = {}
        self.share_counts = {}
        self.sizes = {}
        self.needs = {}  # blob -> tokens an op taking it must hold
        self.device = {}  # blob -> (device type, gpu id) of its producer
        self.mapping = {}
        self.done_outputs = set()
        self.next_token = 1

    def actual(self, name):
        return self.mapping.get(name, name)

    def size(self, name):
        shape = self.shapes.get(name)
        if shape is None:
            return 0
        out = 1
        for d in shape:
            out *= int(d)
        return out

    def usable(self, name, tokens, device):
        return self.device.get(name, (0, 0)) == device and self.needs.get(name, set()) <= tokens

    def take_free(self, output, tokens, free):
        """The released blob ``output`` will use, removed from ``free`` (or "")."""
        device = self.device.get(output, (0, 0))
        if not self.shapes:
            skipped, found = [], ""
            while free:
                candidate = heapq.heappop(free)
                if self.usable(candidate[1], tokens, device):
                    found = candidate[1]
                    break
                skipped.append(candidate)
            for candidate in skipped:
                heapq.heappush(free, candidate)
            return found
        wanted, best, best_at = self.size(output), -1, -1
        for k, (_, name) in enumerate(free):  # the size that fits best
            if self.usable(name, tokens, device):
                size = self.sizes[name]
                if size >= best and (best < wanted or best >= size):
                    best, best_at = size, k
        if best_at < 0:
            return ""
        name = free.pop(best_at)[1]
        heapq.heapify(free)
        return name

    def visit(self, start, free, tokens):
        """Process ``start`` and, depth first, every op it makes ready."""
        stack = [self._process(start, free, tokens)]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
            else:
                stack.append(self._process(*child))

    def _process(self, index, free, tokens):
        """One op; yields ``(child, free, tokens)`` for each child made ready."""
        tokens |= self.deposit[index]
        self.deposit[index] = set()
        if self.visited[index]:
            raise EnforceNotMet("memonger: op %d reached twice" % index)
        self.visited[index] = True
        op = self.net.op[index]
        for name in list(op.input) + list(op.output):
            self.needs.setdefault(self.actual(name), set()).update(tokens)
            if self.actual(name) != name:
                self.needs.setdefault(name, set()).update(tokens)
        released, released_names = [], set()
        for name in op.input:
            if name in self.shareable:
                self.reads_done[name] = self.reads_done.get(name, 0) + 1
                if self.reads_done[name] == len(self.readers.get(name, ())):
                    actual = self.actual(name)
                    if actual not in self.dont_share and actual not in released_names:
                        released.append((-self.share_counts.get(actual, 0), actual))
                        released_names.add(actual)
        for name in op.output:
            if (
                name in self.shareable
                and name not in self.done_outputs
                and name not in released_names
            ):
                taken = self.take_free(name, tokens, free)
                if taken:
                    self.needs.setdefault(taken, set()).update(tokens)
                    self.share_counts[taken] = self.share_counts.get(taken, 0) + 1
                    self.mapping[name] = taken
                self.done_outputs.add(name)
        in_pool = {name for _, name in free}
        for entry in released:
            if entry[1] not in in_pool:
                heapq.heappush(free, entry)
                if self.shapes and entry[1] not in self.sizes:
                    self.sizes[entry[1]] = self.size(entry[1])
        branches = sum(len(self.readers.get(name, ())) for name in op.output)
        for name in op.output:
            for child in self.readers.get(name, ()):
                self.arrived[child] += 1
                if self.arrived[child] == self.in_degree[child]:
                    child_tokens = set(tokens)
                    if branches > 1:
                        child_tokens.add(self.next_token)
                        self.next_token += 1
                    yield child, free, child_tokens
                elif not self.visited[child]:
                    self.deposit[child].update(tokens)

    # -- renaming -------------------------------------------------------------------
    def rename(self, netdef, namescope, produced):
        renamed, used = {}, 0
        for target in self.mapping.values():
            if target in renamed:
                continue
            if target in produced:
                renamed[target] = "%s__m%d_shared" % (namescope, used)
                used += 1
            else:
                renamed[target] = target
        for name, target in renamed.items():
            self.mapping.setdefault(name, target)
        for name, target in list(self.mapping.items()):  # one pass, as in Caffe2
            if target in renamed and renamed[target] != target:
                renamed[name] = renamed[target]
                self.mapping[name] = renamed[name]
        optimized = caffe2_pb2.NetDef()
        optimized.CopyFrom(netdef)
        self._apply(optimized)
        return optimized

    def _apply(self, netdef):
        for op in netdef.op:
            if op.type.startswith("RecurrentNetwork"):
                self._apply_recurrent(op)
            for field in (op.input, op.output):
                for j, name in enumerate(field):
                    field[j] = self.actual(name)

    def _apply_recurrent(self, op):
        for arg in op.arg:
            if arg.name not in ("step_net", "backward_step_net"):
                continue
            if arg.HasField("n"):
                self._apply(arg.n)
            else:
                step = caffe2_pb2.NetDef()
                text_format.Parse(arg.s.decode("utf-8"), step)
                self._apply(step)
                arg.s = text_format.MessageToString(step).encode("utf-8")
        for name in list(op.input) + list(op.output):
            if self.actual(name) != name:
                op.arg.add(name=name + ".rename", s=self.actual(name).encode("utf-8"))


def compute_blob_recycling_for_dag(
    net, heads, op_indices, shareable_blob_names, namescope, dont_share_blob_names, blob_shapes
):
    """A copy of the NetDef ``net`` with the blobs of the DAG ``op_indices``
    recycled (module docstring)."""
    heads = [blob_name(h) for h in heads]
    shareable = {blob_name(b) for b in shareable_blob_names}
    dont_share = {blob_name(b) for b in dont_share_blob_names}
    shapes = {blob_name(k): list(v) for k, v in dict(blob_shapes).items()}
    namescope = blob_name(namescope)
    recycler = _DagRecycler(net, shareable, dont_share, shapes)
    produced = {name for i in op_indices for name in net.op[i].output}
    head_set, seen = set(heads), {}
    for i in op_indices:
        op = net.op[i]
        for name in op.input:
            if name in shareable or name in head_set:
                if name in produced:
                    if name not in seen:
                        raise EnforceNotMet("Input %s was not output by an op before" % name)
                    recycler.in_degree[i] += seen[name]
                else:
                    recycler.share_counts[name] = 1
                recycler.readers.setdefault(name, []).append(i)
        for name in op.output:
            seen[name] = seen.get(name, 0) + 1
            device = op.device_option
            on_cpu = op.type == "CopyGPUToCPU"  # a CUDA op whose output is on the CPU
            recycler.device[name] = (0, 0) if on_cpu else (device.device_type, device.cuda_gpu_id)
    for head in heads:
        for i in recycler.readers.get(head, ()):
            if not recycler.visited[i]:
                token = recycler.next_token
                recycler.next_token += 1
                recycler.visit(i, [], {token})
    return recycler.rename(net, namescope, produced)


# -- as Caffe2's bindings took them (``workspace.C``): serialized NetDefs --------------


def memonger_compute_blob_recycling_for_dag(
    net_def, input_blobs, op_indices, shareable_blob_names, namescope, dont_share_blob_names,
    blob_shapes,
):  # fmt: skip
    """``C.memonger_compute_blob_recycling_for_dag``: bytes in, bytes out."""
    net = message(net_def, caffe2_pb2.NetDef)
    return compute_blob_recycling_for_dag(
        net, input_blobs, op_indices, shareable_blob_names, namescope, dont_share_blob_names,
        blob_shapes,
    ).SerializeToString()  # fmt: skip


def memonger_optimize_inference_net(net_def, static_blobs):
    """``C.memonger_optimize_inference_net``: bytes in, bytes out."""
    net = message(net_def, caffe2_pb2.NetDef)
    return optimize_inference_net(net, static_blobs).SerializeToString()
