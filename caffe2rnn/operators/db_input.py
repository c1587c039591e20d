"""``CreateDB`` and ``TensorProtosDBInput``: reading training data from a database.

Caffe2's input pipeline for a prepared dataset::

    reader = init_net.CreateDB([], "reader", db="train.minidb", db_type="minidb")
    data, label = net.TensorProtosDBInput([reader], ["data", "label"], batch_size=16)

``CreateDB`` puts a ``DBReader`` in its output blob (Caffe2
caffe2/db/create_db_op.h; arguments ``db``, ``db_type`` — default
``leveldb`` —, ``num_shards`` and ``shard_id``). A reader hands out records
one after the other and starts again at the first when it reaches the end;
with shards, reader ``shard_id`` of ``num_shards`` reads records
``shard_id, shard_id + num_shards, ...``.

``TensorProtosDBInput`` (caffe2/operators/tensor_protos_db_input.h,
0cdd09da6) reads records whose value is a ``TensorProtos`` message, one
``TensorProto`` per output. With ``batch_size`` B > 0 each output is the B
records' tensors stacked (shape ``[B] + dims``); with 0, the tensors of one
record. Every record must hold as many tensors as there are outputs, and the
records of a batch the same shapes and types (Caffe2 checked the count, and
wrote past its buffer on a shape that grew). Caffe2 read ahead on a thread;
here a batch is read when the op runs, which gives the same batches.

``brew.db_input`` / ``model.TensorProtosDBInput`` build these ops
(:mod:`caffe2rnn.helpers.db_input`).
"""

import numpy as np
from google.protobuf.message import DecodeError

from ..errors import ArgumentError, DatabaseError, DTypeError, ShapeError
from ..proto import caffe2_pb2, tensors
from ..runtime import minidb
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient


class DBReader:
    """An open database and a position in it (Caffe2's ``db::DBReader``).

    The records' keys and where their values lie are read when it opens, so
    a truncated or crafted file fails here, naming the file and the record;
    values are read when asked for.
    """

    caffe2_type_name = "caffe2::db::DBReader"

    def __init__(self, db_type, path, num_shards=1, shard_id=0):
        minidb.check_db_type(db_type, path)
        if num_shards < 1 or not 0 <= shard_id < num_shards:
            raise ArgumentError(
                "num_shards must be >= 1 and 0 <= shard_id < num_shards; got %d and %d"
                % (num_shards, shard_id)
            )
        self.db_type, self.path = db_type, path
        self.num_shards, self.shard_id = num_shards, shard_id
        self._cursor = minidb.Cursor(path)  # kept open, as Caffe2 kept its cursor
        self._records = list(self._cursor.entries())  # (key, value offset, length)
        if shard_id > 0 and len(self._records) <= shard_id:
            raise DatabaseError(
                "Db has less rows than shard id: %s has %d records, shard %d"
                % (path, len(self._records), shard_id)
            )
        self._position = shard_id

    def describe(self):
        return "%s '%s'" % (self.db_type, self.path)

    def read(self):
        """The next ``(key, value)``, wrapping around at the end (Caffe2's ``Read``)."""
        if not self._records:
            raise DatabaseError(
                "%s: Cursor is at invalid location! (the db is empty)" % self.describe()
            )
        key, offset, length = self._records[self._position]
        self._position += self.num_shards
        if self._position >= len(self._records):
            self._position = self.shard_id
        return key, self._cursor.value_at(offset, length)

    def records_to_end(self):
        """The records from the current position to the end (what ``Load`` with
        a reader input reads); the reader is then at the end."""
        rest = self._records[self._position :]
        self._position = len(self._records)
        return [(key, self._cursor.value_at(offset, length)) for key, offset, length in rest]


@register("CreateDB", inputs=0, outputs=1)
class CreateDB(Operator):
    """Open the database ``db`` (of ``db_type``) as a DBReader in output 0."""

    def setup(self):
        self.db_type = self.args.single("db_type", "leveldb", str)
        self.db_name = self.args.single("db", "", str)
        if not self.db_name:
            raise ArgumentError("Must specify a db name.")
        self.num_shards = self.args.single("num_shards", 1, int)
        self.shard_id = self.args.single("shard_id", 0, int)

    def run(self):
        self.set_output(0, DBReader(self.db_type, self.db_name, self.num_shards, self.shard_id))


@register("TensorProtosDBInput", inputs=1, outputs=(1, None))
class TensorProtosDBInput(Operator):
    """Batches of the ``TensorProtos`` records of the DBReader input."""

    def setup(self):
        self.batch_size = self.args.single("batch_size", 0, int)
        if self.batch_size < 0:
            raise ArgumentError("argument batch_size is %d; expected >= 0" % self.batch_size)

    def _record(self, reader):
        key, value = reader.read()
        protos = caffe2_pb2.TensorProtos()
        try:
            protos.ParseFromString(value)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise DatabaseError(
                "%s, record '%s': not a TensorProtos (%s)" % (reader.describe(), key, exc)
            ) from None
        if len(protos.protos) != len(self.outputs):  # CAFFE_ENFORCE in Caffe2
            raise ShapeError(
                "%s, record '%s' holds %d tensors; the op has %d outputs"
                % (reader.describe(), key, len(protos.protos), len(self.outputs))
            )
        try:
            return key, [tensors.Caffe2TensorToNumpyArray(p) for p in protos.protos]
        except (ShapeError, DTypeError, ValueError) as exc:
            raise DatabaseError("%s, record '%s': %s" % (reader.describe(), key, exc)) from None

    def run(self):
        reader = self.inputs[0].value
        if not isinstance(reader, DBReader):
            raise DTypeError(
                "input 0 ('%s') must be a DBReader (made by CreateDB)" % self.input_name(0)
            )
        if self.batch_size == 0:
            _, arrays = self._record(reader)
            for i, array in enumerate(arrays):
                self.set_output(i, array)
            return
        batches = None
        for item in range(self.batch_size):
            key, arrays = self._record(reader)
            if batches is None:
                batches = [np.empty((self.batch_size,) + a.shape, a.dtype) for a in arrays]
            for i, (batch, array) in enumerate(zip(batches, arrays)):
                if array.shape != batch.shape[1:] or array.dtype != batch.dtype:
                    raise ShapeError(
                        "%s, record '%s': tensor %d is %s %s; the batch's first record had %s %s"
                        % (
                            reader.describe(),
                            key,
                            i,
                            array.dtype,
                            array.shape,
                            batch.dtype,
                            batch.shape[1:],
                        )
                    )
                batch[item] = array
        for i, batch in enumerate(batches):
            self.set_output(i, batch)


register_gradient("CreateDB")(NoGradient)
register_gradient("TensorProtosDBInput")(NoGradient)
