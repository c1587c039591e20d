"""``Save``, ``Load``, ``DBExists`` and ``Checkpoint``: blobs to and from a database.

::

    Save(["fc_w", "fc_b"], [], db="model.minidb", db_type="minidb")
    Load([], ["fc_w", "fc_b"], db="model.minidb", db_type="minidb")
    Load([], [], db="model.minidb", db_type="minidb", load_all=1)

Arguments, as Caffe2 had them (caffe2/operators/load_save_op.{h,cc} at
0cdd09da6):

* ``db``, ``db_type`` (required; ``minidb`` is the backend here,
  :mod:`caffe2rnn.runtime.minidb`); ``absolute_path`` (default 0: the path is
  relative to the workspace's root folder);
* Save: ``strip_prefix`` (the name after the first occurrence of the prefix is
  stored), or ``blob_name_overrides`` (the stored names, one per input);
* Load: ``add_prefix``, ``strip_prefix`` (applied to the stored names),
  ``keep_device``, ``load_all`` (every blob in the db, outputs ignored),
  ``allow_incomplete`` (missing outputs are not an error),
  ``source_blob_names`` (the stored names to read into the outputs); with one
  input, that input is a ``DBReader`` (``CreateDB``) to read from.
* ``Checkpoint([iter, blobs...])`` is a Save every ``every`` iterations to
  ``db`` formatted with the iteration (``"ckpt_%05d.minidb"``); ``Snapshot``
  is its old name. ``DBExists`` writes a bool scalar (arguments ``db_name``,
  ``db_type``, ``absolute_path``).

The records are Caffe2's (:mod:`caffe2rnn.runtime.serialization`), so
checkpoints move between caffe2rnn and Caffe2. A checkpoint is data: nothing
in it is executed. ``Load`` reads and checks the *whole* selection before it
writes one blob, so a failed load — a truncated or crafted file, a missing
blob — leaves the workspace as it was (Caffe2 could stop half-way); the error
names the file and the blob. ``Save`` checks every input before it writes,
and writes the file whole (a temporary file renamed into place).

Caffe2's refusals kept here: a missing ``db``/``db_type``; a
``blob_name_overrides`` or ``source_blob_names`` list of the wrong length, or
given with ``strip_prefix``; ``source_blob_names`` with ``load_all``; a name
stored twice by one Save, or asked twice by one Load; "Expected to load N
blobs, got M only".
"""

import re

import numpy as np

from ..errors import ArgumentError, DTypeError, EnforceNotMet
from ..runtime import minidb, serialization
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient, ShouldNotDoGradient


def db_path(op, name_arg="db", name=None):
    """The database path: with ``absolute_path`` the name itself, else the
    workspace's root folder, a slash and the name — a string concatenation,
    as Caffe2's ``ws_->RootFolder() + "/" + db_name_``, so even a name that
    starts with "/" lands under the root folder."""
    if name is None:
        name = op.args.single(name_arg, "", str)
    if op.args.single("absolute_path", 0, int):
        return name
    return op.ws.root_folder + "/" + name


def required(op, name):
    value = op.args.single(name, "", str)
    if not value:
        raise ArgumentError(
            "Must specify a %s." % {"db": "db name", "db_type": "db type"}.get(name, name)
        )
    return value


def _after_prefix(name, prefix):
    """``name`` after the first ``prefix`` in it (unchanged if absent, as from
    Caffe2 2017-09; E5's Save took a wrapped-around index there)."""
    pos = name.find(prefix)
    return name if pos < 0 else name[pos + len(prefix) :]


@register("Save", inputs=(1, None), outputs=0)
class Save(Operator):
    """Write the input blobs to the database ``db`` (module docstring)."""

    def setup(self):
        self.read_save_arguments()

    def read_save_arguments(self):
        """SaveOp's constructor: ``db``, ``db_type``, the stored names."""
        required(self, "db")
        self.db_type = required(self, "db_type")
        strip_prefix = self.args.single("strip_prefix", "", str)
        overrides = self.args.repeated("blob_name_overrides", kind=str)
        if overrides and len(overrides) != len(self.inputs):
            raise ArgumentError("Number of blobs and blob_name_overrides mismatch.")
        if overrides and strip_prefix:
            raise ArgumentError("strip_prefix and blob_name_overrides are mutually exclusive.")
        if overrides:
            self.names = list(overrides)
        else:
            self.names = []
            for blob in self.inputs:
                name = _after_prefix(blob.name, strip_prefix) if strip_prefix else blob.name
                if name in self.names:
                    raise ArgumentError("Duplicated input: %s" % name)
                self.names.append(name)

    def records(self):
        """Every record, after checking that every input can be serialized."""
        values = [blob.value for blob in self.inputs]
        for name, value in zip(self.names, values):
            serialization.check_serializable(value, name)
        for name, value in zip(self.names, values):
            yield from serialization.records(value, name)

    def save_to(self, path):
        minidb.check_db_type(self.db_type, path)
        minidb.write(path, self.records())

    def run(self):
        self.save_to(db_path(self))


@register("Checkpoint", inputs=(1, None), outputs=0)
class Checkpoint(Save):
    """``Save`` of every input (the int64 counter, input 0, too) every ``every``
    iterations, to ``db`` formatted with the iteration.

    As Caffe2's ``CheckpointOp`` (load_save_op.h at 0cdd09da6): the op itself
    checks only ``db`` (a pattern is required) and ``every`` (> 0); the Save it
    runs is made at each checkpoint, so its own arguments (``db_type``...) are
    checked only then. The name is C's ``sprintf(pattern, iter)``
    (``FormatString``): ``%d``, ``%05d``, ``%ld``... take the iteration (``%d``
    its low 32 bits, as C read an int64 passed for an int); a pattern without
    a conversion is the name as it is (sprintf ignores the extra value);
    ``%%`` is a percent sign. A second conversion or one of another kind
    (``%s``, ``%f``) made sprintf read a value that was never passed, and a
    name of 1024 bytes or more was a fatal error: both refused, naming ``db``.
    """

    def setup(self):
        self.pattern = self.args.single("db", "", str)
        if not self.pattern:
            raise ArgumentError("Must specify a checkpoint file pattern.")
        self.every = self.args.single("every", 1, int)
        if self.every <= 0:
            raise ArgumentError("Checkpoint interval should be positive (every=%d)." % self.every)

    def run(self):
        it = self.input(0)
        if it.dtype != np.int64 or it.size < 1:
            raise DTypeError(
                "input 0 ('%s') must be the int64 iteration counter" % self.input_name(0)
            )
        iteration = int(it.reshape(-1)[0])
        if iteration % self.every:
            return
        name = format_db_pattern(self.pattern, iteration)
        self.read_save_arguments()  # SaveOp<Context> sub_op(save_op_def_, ws_)
        self.save_to(db_path(self, name=name))


_CONVERSION = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<precision>\d*))?"
    r"(?P<length>hh|h|ll|l|j|z|t|L|q)?(?P<kind>.)",
    re.S,
)


def format_db_pattern(pattern, value):
    """C's ``sprintf(buffer, pattern, value)`` for one int64 ``value`` (Checkpoint)."""
    out, pos, used = [], 0, False
    for m in _CONVERSION.finditer(pattern):
        out.append(pattern[pos : m.start()])
        pos = m.end()
        kind = m.group("kind")
        if kind == "%" and m.group(0) == "%%":
            out.append("%")
            continue
        if kind not in "diuxXo" or used:
            raise ArgumentError(
                "Checkpoint: argument db %r: %s makes sprintf read a value Checkpoint does not "
                "pass (only one integer conversion such as %%05d is allowed)"
                % (pattern, m.group(0))
            )
        used = True
        length = m.group("length") or ""
        v = value
        if length in ("", "h", "hh"):  # an int: the int64's low 32 bits
            v = (v + 2**31) % 2**32 - 2**31
        if kind in "uxXo" and v < 0:
            v += 2**64 if length in ("l", "ll", "j", "z", "t", "q") else 2**32
        spec = "%" + m.group("flags") + m.group("width")
        if m.group("precision") is not None:
            spec += "." + m.group("precision")
        out.append((spec + ("d" if kind in "iu" else kind)) % v)
    out.append(pattern[pos:])
    name = "".join(out)
    if len(name.encode()) + 1 > 1024:
        raise ArgumentError(
            "Checkpoint: FormatString fails: the name for db %r has %d bytes (Caffe2's buffer: "
            "1024)" % (pattern, len(name.encode()))
        )
    return name


@register("Snapshot", inputs=(1, None), outputs=0)
class Snapshot(Checkpoint):
    """Caffe2's old name of ``Checkpoint``."""


@register("Load", inputs=(0, 1), outputs=(0, None))
class Load(Operator):
    """Read blobs from the database ``db`` (or the DBReader input 0)."""

    def setup(self):
        if not self.inputs:
            required(self, "db")
            self.db_type = required(self, "db_type")
        self.add_prefix = self.args.single("add_prefix", "", str)
        self.strip_prefix = self.args.single("strip_prefix", "", str)
        self.keep_device = bool(self.args.single("keep_device", 0, int))
        self.load_all = bool(self.args.single("load_all", 0, int))
        self.allow_incomplete = self.args.single("allow_incomplete", False, bool)
        sources = self.args.repeated("source_blob_names", kind=str)
        if sources and len(sources) != len(self.outputs):
            raise ArgumentError("Number of output blobs and source_blob_names mismatch.")
        if sources and self.strip_prefix:
            raise ArgumentError("strip_prefix and source_blob_names are mutually exclusive.")
        if sources and self.load_all:
            raise ArgumentError("cannot load_all_ while using source_blob_names.")
        self.wanted = {}  # stored name (after prefixes) -> output index
        if not self.load_all:
            for i, name in enumerate(sources or [b.name for b in self.outputs]):
                if name in self.wanted:
                    raise ArgumentError("Duplicated source blob name: %s" % name)
                self.wanted[name] = i

    def name_of_key(self, key):
        name = serialization.blob_name_of_key(key)
        if self.strip_prefix:
            name = _after_prefix(name, self.strip_prefix)
        return self.add_prefix + name

    def run(self):
        if self.inputs:
            reader = self.inputs[0].value
            if not hasattr(reader, "records_to_end"):
                raise DTypeError(
                    "input 0 ('%s') must be a DBReader (made by CreateDB)" % self.input_name(0)
                )
            where, records = reader.describe(), reader.records_to_end()
            values = self.assemble(where, records)
        else:
            path = db_path(self)
            minidb.check_db_type(self.db_type, path)
            with minidb.Cursor(path) as cursor:
                values = self.assemble("minidb '%s'" % path, cursor)
        # Everything read and checked: now write, all at once.
        for name, value in values.items():
            blob = self.ws.create_blob(name) if self.load_all else self.outputs[self.wanted[name]]
            blob.value = value

    def assemble(self, where, records):
        assembler = serialization.Assembler(where, self.keep_device)
        for key, value in records:
            name = self.name_of_key(key)
            if not self.load_all and name not in self.wanted:
                continue  # a record this op does not load
            assembler.add(name, value)
            if not self.load_all and assembler.loaded == len(self.outputs):
                break  # all read (Caffe2 stopped here too)
        values = assembler.values()
        if not self.load_all and assembler.loaded != len(self.outputs):
            missing = [n for n in self.wanted if n not in values]
            if not (self.allow_incomplete and assembler.loaded < len(self.outputs)):
                raise EnforceNotMet(
                    "%s: Expected to load %d blobs, got %d only; missing: %s"
                    % (where, len(self.outputs), assembler.loaded, ", ".join(missing))
                )
        return values


@register("DBExists", inputs=0, outputs=1)
class DBExists(Operator):
    """A bool scalar: can the database ``db_name`` of ``db_type`` be opened?"""

    def run(self):
        path = db_path(self, "db_name")
        exists = minidb.exists(self.args.single("db_type", "", str), path)
        self.output(0, (), np.bool_)[...] = exists


register_gradient("Load")(NoGradient)
for _op_type in ("Save", "Checkpoint", "Snapshot", "DBExists"):
    register_gradient(_op_type)(ShouldNotDoGradient)
