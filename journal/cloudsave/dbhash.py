"""How a managed file is hashed for the fingerprint, and the db rule (cloudsave-format §2.2-2.3).

Every file is hashed by its raw bytes, except a ``time_indexed.db`` with the SQLite header: the
server hashes a backup-API *shadow copy* of it, whose bytes depend on the SQLite version doing the
copy. A unit's own db is already the uploader's shadow copy, so its raw SHA-256 is tried first;
only when that does not give the recorded fingerprint is a shadow copy made here, and never by
opening the file read-write (the server's own shadow copy does, which can roll a hot journal back
into the file, §6.4): the db is read through :func:`journal.chat.snapshot` (the backup API from a
``mode=ro`` connection, or a private copy of the db with its ``-journal``), and that copy is backed
up into a private temp file, which is hashed and removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile

from journal import fs
from journal.chat import ChatError, snapshot
from journal.layout import CHAT_DB

#: The 16-byte header that makes the db (:data:`journal.layout.CHAT_DB`) hashed by a shadow copy
#: (§2.2 step 1).
SQLITE_HEADER = b"SQLite format 3\x00"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Lowercase hex SHA-256 of a regular file's bytes (links followed; never a FIFO or a device).

    Raises:
        OSError: not a regular file, or it cannot be read.
    """
    h = hashlib.sha256()
    with fs.open_regular(path) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def is_shadowed(name: str, path: str | os.PathLike[str]) -> bool:
    """Whether the server hashes this file by a shadow copy: named ``time_indexed.db``, at least
    16 bytes, starting with the SQLite header."""
    if name != CHAT_DB:
        return False
    try:
        with fs.open_regular(path) as f:
            return f.read(16) == SQLITE_HEADER
    except OSError:
        return False


def shadow_sha256(path: str | os.PathLike[str]) -> str | None:
    """SHA-256 of a backup-API shadow copy of the db, made without writing to it; ``None`` when no
    consistent copy can be made (the server then hashes the file directly, §2.3)."""
    scratch = tempfile.mkdtemp(prefix="memory-inspector-cloudhash-")
    target = os.path.join(scratch, CHAT_DB)
    try:
        with snapshot(path) as snap:
            dst = sqlite3.connect(target, isolation_level=None)
            try:
                snap.conn.backup(dst)
                ok = dst.execute("PRAGMA quick_check").fetchone()
            finally:
                dst.close()
        if not ok or ok[0] != "ok":
            return None
        return file_sha256(target)
    except (ChatError, sqlite3.Error, OSError):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
