"""``minidb``: Caffe2's simplest database, a file of (key, value) records.

Caffe2's ``Save``/``Load`` operators write and read *databases* through one
interface (``caffe2/core/db.h``); ``db_type`` picks the backend. ``minidb``
(``caffe2/core/db.cc`` at 0cdd09da6) is a plain file, one record after
another, each::

    int32 key_len   int32 value_len   key bytes   value bytes

(native byte order: little-endian on every machine Caffe2 ran on; both
lengths must be > 0). A checkpoint written by ``Save`` holds one record per
blob (per chunk of a large tensor, :mod:`caffe2rnn.runtime.serialization`):
the key is the blob's name, the value a serialized ``BlobProto``. This module
reads and writes exactly that layout, so a file written here loads in Caffe2
and the other way round.

Reading is careful, because a file is data from elsewhere: each length is
checked against what is left of the file *before* anything is read or
allocated, and a short, empty or crafted file is a
:class:`~caffe2rnn.errors.DatabaseError` naming the file and the record —
never a huge allocation, a hang or a crash. Nothing in a record is executed.

Writing goes to a temporary file in the same folder, renamed over the target
when complete (Caffe2 wrote in place): an interrupted ``Save`` leaves the
previous checkpoint intact.

Caffe2's other key-value backends (``leveldb``, ``lmdb``, ``rocksdb``)
needed their libraries. A Caffe2 program that asks for one of them gets the
same records, kept in this layout: it reads back what it wrote, and only a
database written by Caffe2 itself with such a library cannot be read here (an
error names the file). Any other ``db_type`` is an error.
"""

import contextlib
import os
import struct
import tempfile

from ..errors import DatabaseError

MINIDB = "minidb"
#: The db types stored in the minidb layout (see the module docstring).
DB_TYPES = frozenset([MINIDB, "leveldb", "lmdb", "rocksdb"])
_HEADER = struct.Struct("<ii")
_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once: new files get 0666 & ~umask, as fopen gave them


def check_db_type(db_type, db_name):
    """Refuse a backend not in :data:`DB_TYPES` (Caffe2: ``Cannot open db``)."""
    if db_type not in DB_TYPES:
        raise DatabaseError(
            "Cannot open db: %s (db_type '%s' is not available; caffe2rnn has %s)"
            % (db_name, db_type, ", ".join(sorted(DB_TYPES)))
        )


def exists(db_type, path):
    """True if ``path`` is a readable database of ``db_type`` (``DBExists``)."""
    return db_type in DB_TYPES and os.path.isfile(path) and os.access(path, os.R_OK)


class Cursor:
    """Reads the records of a minidb file in order: ``for key, value in cursor``.

    ``key`` is a ``str`` (Caffe2's keys were byte strings; names are UTF-8),
    ``value`` the raw bytes. Errors name the file and the record's index.
    """

    def __init__(self, path):
        self.path = path
        try:
            self._file = open(path, "rb")  # noqa: SIM115 - closed by close()/the generator
        except OSError as exc:
            raise DatabaseError("Cannot open file: %s (%s)" % (path, exc.strerror)) from None
        self._size = os.fstat(self._file.fileno()).st_size
        self.index = 0  # records read so far

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fail(self, what):
        return DatabaseError("minidb '%s', record %d: %s" % (self.path, self.index, what))

    def __iter__(self):
        """``(key, value bytes)`` of each record, in order."""
        for key, _, value_len in self._headers():
            value = self._file.read(value_len)
            if len(value) != value_len:
                raise self._fail("the file changed while it was read")
            yield key, value
            self.index += 1

    def entries(self):
        """``(key, offset of the value, value length)`` of each record; the
        values are skipped (read them with :meth:`value_at`)."""
        for key, offset, value_len in self._headers():
            self._file.seek(value_len, os.SEEK_CUR)
            yield key, offset, value_len
            self.index += 1

    def value_at(self, offset, length):
        self._file.seek(offset)
        value = self._file.read(length)
        if len(value) != length:
            raise DatabaseError("minidb '%s': the file changed while it was read" % self.path)
        return value

    def _headers(self):
        """Check each record's header against the file; leave the file at its value."""
        f = self._file
        while True:
            start = f.tell()
            header = f.read(_HEADER.size)
            if not header:
                return  # a clean end of file
            if len(header) < _HEADER.size:
                raise self._fail(
                    "the file ends inside a record header (%d of 8 bytes at offset %d); "
                    "the file is truncated" % (len(header), start)
                )
            key_len, value_len = _HEADER.unpack(header)
            if key_len <= 0 or value_len <= 0:  # CAFFE_ENFORCE_GT(key_len_, 0) and value_len_
                raise self._fail(
                    "key length %d and value length %d must both be > 0 (offset %d): "
                    "not a minidb record" % (key_len, value_len, start)
                )
            left = self._size - start - _HEADER.size
            if key_len + value_len > left:
                raise self._fail(
                    "the record needs %d bytes but only %d are left: the file is "
                    "truncated" % (key_len + value_len, left)
                )
            raw_key = f.read(key_len)
            if len(raw_key) != key_len:
                raise self._fail("the file changed while it was read")
            try:
                key = raw_key.decode("utf-8")
            except UnicodeDecodeError:
                raise self._fail("the key %r is not UTF-8 text" % raw_key[:64]) from None
            yield key, f.tell(), value_len


def write(path, records):
    """Write ``records`` (``(key, value bytes)`` pairs) as a new minidb file at
    ``path``, replacing any file there only once all are written."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=folder)
    except OSError as exc:
        raise DatabaseError("Cannot open db for writing: %s (%s)" % (path, exc.strerror)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            for key, value in records:
                raw_key = key.encode("utf-8")
                f.write(_HEADER.pack(len(raw_key), len(value)))
                f.write(raw_key)
                f.write(value)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise DatabaseError("Cannot write db: %s (%s)" % (path, exc.strerror)) from None
        raise
