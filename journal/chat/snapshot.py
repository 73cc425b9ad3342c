"""A private, consistent copy of ``time_indexed.db``, made without writing to it (cloudsave-format §6.4).

The memory server may be writing while we read, and reading can itself be a write: a read-write
open rolls a hot ``-journal`` back into the file, and ``immutable=1`` on the live file reads torn,
uncommitted pages. So, in this order:

1. **the backup API from a ``mode=ro`` connection** into a database in memory, in one step: the
   read lock is held only while the pages are copied, so the server's commit waits for that
   alone (it would fail with "database is locked" after about 5 s behind a long read);
2. when that open fails (a hot ``-journal`` left by a crash makes a ``mode=ro`` open fail with
   "attempt to write a readonly database"), or when the db is in WAL mode (where every reader
   writes its read mark into the ``-shm``), **a copy of the db with its ``-journal``, ``-wal`` and
   ``-shm``** into a private temp folder, opened there (read-write: the *copy* is rolled back to
   its committed state). The copy is taken again when a file changed while it was made.

The original is never opened read-write, and nothing is written beside it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from journal import fs
from journal.layout import CHAT_DB

#: The files SQLite keeps beside a db: a rollback journal, or a WAL and its index.
SIDE_SUFFIXES = ("-journal", "-wal", "-shm")

#: How long a ``mode=ro`` open waits for the server's write lock, per attempt, and how many times
#: it tries before it copies the files instead.
BUSY_SECONDS = 0.5
ATTEMPTS = 4


class ChatError(Exception):
    """The chat history cannot be read; the message says which file and why, in one line."""


@dataclass(slots=True)
class Snapshot:
    """A private copy of the db, open.

    Attributes:
        conn: a connection to the copy (never to the original file).
        method: ``backup`` (the backup API from a ``mode=ro`` connection) or ``copy`` (the files
            copied to a private folder and the copy opened there).
        path: the original db.
        why_copied: why the backup API was not used (``copy`` only).
    """

    conn: sqlite3.Connection
    method: str
    path: str
    why_copied: str | None = None


def _check_file(path: str, folder: str | None) -> None:
    """Refuse what is not a regular file inside ``folder`` (a link leading out, a FIFO, a folder)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ChatError(f"{path}: no {CHAT_DB} here (the chat history is kept beside the journal)") from None
    except OSError as exc:
        raise ChatError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if folder is not None and not fs.is_inside(path, folder):
        raise ChatError(f"{path} is a link leading out of the character folder; not read")
    if not stat.S_ISREG(st.st_mode):
        raise ChatError(f"{path} is not a regular file; not read")


def _backup(path: str) -> sqlite3.Connection:
    """The db copied into memory by the backup API, from a ``mode=ro`` connection."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    src = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None)
    try:
        dst = sqlite3.connect(":memory:")
        try:
            src.backup(dst)  # one step: the read lock lasts only as long as the copy
        except BaseException:
            dst.close()
            raise
        return dst
    finally:
        src.close()


def _wal_reason(path: str) -> str | None:
    """Why a ``mode=ro`` connection would write beside the db: a WAL-mode db (its header says so, or
    a ``-wal`` is there) has every reader write its read mark into the ``-shm``."""
    try:
        with fs.open_regular(path) as f:
            header = f.read(20)
    except OSError:
        header = b""
    if (len(header) == 20 and header[18] == 2) or os.path.lexists(path + "-wal"):
        return "the db is in WAL mode: any reader of it writes its read mark into the -shm beside it"
    return None


def _is_busy(exc: sqlite3.Error) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _stamp(path: str) -> tuple[tuple[int, int] | None, ...]:
    """Size and mtime of the db and each file beside it (``None``: not there)."""
    out: list[tuple[int, int] | None] = []
    for suffix in ("", *SIDE_SUFFIXES):
        try:
            st = os.stat(path + suffix)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_size, st.st_mtime_ns))
    return tuple(out)


def _copy(path: str, folder: str | None, into: str) -> sqlite3.Connection:
    """The db and the files beside it copied into ``into`` and the copy opened (and rolled back)."""
    for _ in range(ATTEMPTS):
        before = _stamp(path)
        for suffix in ("", *SIDE_SUFFIXES):
            src = path + suffix
            dst = os.path.join(into, CHAT_DB + suffix)
            if os.path.exists(dst):
                os.remove(dst)
            if not os.path.lexists(src):
                continue
            if suffix:
                _check_file(src, folder)
            shutil.copyfile(src, dst)
        if _stamp(path) == before:
            break
    else:
        raise ChatError(f"{path} kept changing while it was copied; try again")
    conn = sqlite3.connect(os.path.join(into, CHAT_DB))
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # rolls a hot journal back, in the copy
    return conn


@contextmanager
def snapshot(path: str | os.PathLike[str], *, folder: str | os.PathLike[str] | None = None) -> Iterator[Snapshot]:
    """A private copy of the db at ``path``, open for the ``with`` block, then closed and removed.

    Args:
        folder: the character folder the db belongs to: a link leading out of it is refused.

    Raises:
        ChatError: the file is missing, not a regular file, outside ``folder``, not a database, or
            could not be copied consistently.
    """
    p = os.fspath(path)
    where = os.fspath(folder) if folder is not None else None
    _check_file(p, where)
    conn: sqlite3.Connection | None = None
    method, why = "backup", _wal_reason(p)
    for attempt in range(0 if why else ATTEMPTS):
        try:
            conn = _backup(p)
            break
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise ChatError(f"{p}: not a readable SQLite database ({exc})") from None
            why = str(exc)
            if not _is_busy(exc) or attempt == ATTEMPTS - 1:
                break
            time.sleep(BUSY_SECONDS)  # the server holds its write lock: let its commit finish
    scratch = None
    try:
        if conn is None:
            method = "copy"
            scratch = tempfile.mkdtemp(prefix="memory-inspector-chat-")
            try:
                conn = _copy(p, where, scratch)
            except sqlite3.DatabaseError as exc:
                raise ChatError(f"{p}: not a readable SQLite database ({exc})") from None
            except OSError as exc:
                raise ChatError(f"{p}: cannot be copied: {exc.strerror or exc}") from None
        conn.text_factory = bytes  # the rows' text is decoded by the reader, invalid UTF-8 included
        try:
            yield Snapshot(conn, method, p, why if method == "copy" else None)
        finally:
            conn.close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
