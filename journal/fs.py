"""The only module of the journal package that changes the filesystem; also :func:`open_regular`,
with which the readers open a memory folder's files.

Every effect (open-for-write, write, fsync, close, replace, directory fsync, unlink, mkdir,
truncate) goes through :func:`_call`, which offers it to an optional *fault hook* first and after.
Tests use the hook to count calls, inject ``OSError`` at the Nth call, shorten a write, or kill the
process with ``os._exit`` before or after a chosen call (torn writes included). Production code
never sets a hook.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from journal.codec import dumps_view

#: Name prefix of our temp files; the memory server's newest writer uses the same shape, so an
#: inspector recognises litter from either.
TEMP_PREFIX = ".nkatmp"
TEMP_SUFFIX = ".tmp"


@dataclass(frozen=True, slots=True)
class FsCall:
    """One filesystem effect as offered to the fault hook.

    Attributes:
        op: ``open`` | ``write`` | ``fsync`` | ``close`` | ``replace`` | ``fsync_dir`` | ``unlink`` |
            ``mkdir`` | ``truncate``.
        phase: ``before`` or ``after``.
        path: the file or folder the call acts on (for ``replace``: the destination).
        fd: the file descriptor for ``write``/``fsync``/``close``/``truncate``, else -1.
        data: the bytes a ``write`` is about to write (``before`` only), else ``b""``.
    """

    op: str
    phase: str
    path: str
    fd: int = -1
    data: bytes = b""


#: A hook may raise (the call then fails with that error), call ``os._exit`` (a crash), or, for a
#: ``write`` in phase ``before``, return an int ``n``: only the first ``n`` bytes are written by that
#: system call (a short write, which the caller must continue).
FaultHook = Callable[[FsCall], "int | None"]

_hook: FaultHook | None = None


def set_fault_hook(hook: FaultHook | None) -> FaultHook | None:
    """Install ``hook`` (or remove it with ``None``); return the previous one. For tests only."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def _offer(call: FsCall) -> int | None:
    hook = _hook
    return hook(call) if hook is not None else None


def _call(op: str, path: str, fn: Callable[[], Any], fd: int = -1) -> Any:
    _offer(FsCall(op, "before", path, fd))
    result = fn()
    _offer(FsCall(op, "after", path, fd))
    return result


def _write_all(fd: int, data: bytes, path: str) -> None:
    """Write every byte of ``data``, continuing after short writes."""
    view = memoryview(data)
    while view:
        limit = _offer(FsCall("write", "before", path, fd, bytes(view)))
        chunk = view if limit is None else view[: max(0, int(limit))]
        written = os.write(fd, chunk) if len(chunk) else 0
        _offer(FsCall("write", "after", path, fd))
        if written == 0:
            raise OSError(errno.EIO, "write made no progress", path)
        view = view[written:]


def _open(path: str, flags: int, mode: int = 0o644) -> int:
    fd: int = _call("open", path, lambda: os.open(path, flags | getattr(os, "O_CLOEXEC", 0), mode))
    return fd


def _fsync(fd: int, path: str) -> None:
    _call("fsync", path, lambda: os.fsync(fd), fd)


def _close(fd: int, path: str) -> None:
    try:
        _offer(FsCall("close", "before", path, fd))
    except BaseException:
        # close(2) releases the descriptor even when it reports an error; an injected failure
        # must not leak it either.
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    os.close(fd)
    _offer(FsCall("close", "after", path, fd))


#: Opening for reading never waits: without O_NONBLOCK, opening a FIFO waits for a writer forever.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """What :func:`open_regular` raises for a FIFO, socket or device (``errno.EINVAL``)."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading, if it is a regular file (links followed); the caller closes it.

    How the readers of views, the sentinel, shards, the outbox and the journal open them
    (:mod:`journal.views`, :mod:`journal.shards`, :mod:`journal.outbox`, :mod:`journal.reader`).
    The open never blocks (a FIFO opened for reading would otherwise wait for a writer
    forever, and a device may never end), and the file is checked with ``fstat`` on the descriptor
    itself, so nothing can swap it in between. A regular file is then read exactly as by
    ``open(path, "rb")``. This is a read: it is not offered to the fault hook.

    Raises:
        FileNotFoundError: nothing is there.
        IsADirectoryError: a folder is there.
        OSError: anything else that is not a regular file (a FIFO, socket, device), with
            ``errno.EINVAL`` and a message saying what it is; or the open itself failed.
    """
    p = os.fspath(path)
    fd = os.open(p, _READ_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), p)  # as open() says it
            kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), "a special file")
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind}); not read", p)
        if _READ_FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)  # no effect on a regular file; as plain open() leaves it
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it, once both are resolved: links followed
    (of a path that does not exist yet, its existing part), ``..`` and case folded as the
    platform's paths are (:func:`os.path.normcase`). The one answer of export, bundle, restore,
    backups and the readers' "a link leaving the memory root" to "is this inside that folder";
    where the *server* writes is the server model's rule (:mod:`journal.serverrules`).

    Paths on different drives are not inside one another. This is a read: nothing is offered to
    the fault hook.
    """
    p = os.path.normcase(os.path.realpath(os.fspath(path)))
    f = os.path.normcase(os.path.realpath(os.fspath(folder)))
    try:
        return os.path.commonpath([p, f]) == f
    except ValueError:  # different drives, or one relative and one absolute
        return False


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a folder so that a create, rename or delete inside it is durable."""
    p = os.fspath(path)

    def run() -> None:
        dfd = os.open(p, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    _call("fsync_dir", p, run)


def ensure_dir(path: str | os.PathLike[str]) -> None:
    """Create ``path`` (and missing parents) durably: each new folder's parent is fsynced."""
    p = Path(path)
    if p.is_dir():
        return
    missing: list[Path] = []
    cur = p
    while not cur.exists():
        missing.append(cur)
        cur = cur.parent
    for folder in reversed(missing):
        try:
            _call("mkdir", str(folder), lambda f=folder: os.mkdir(f))  # type: ignore[misc]
        except FileExistsError:
            continue
        fsync_dir(folder.parent)


def durable_append(path: str | os.PathLike[str], data: bytes, *, keep_lines_apart: bool = True) -> int:
    """Append ``data`` to ``path`` in one write, then flush to disk with fsync.

    If ``keep_lines_apart`` and the file does not end with ``\\n`` (a torn last line), a ``\\n`` is
    written first (in the same write), so the fragment stays an isolated bad line and the new
    record is intact. When the file was empty (just created), its folder is fsynced too. If the
    write fails, the file is truncated back to its old size (best effort) and the error propagates;
    if fsync fails, the error propagates and the caller must not continue.

    Returns:
        The byte offset at which ``data`` starts in the file.
    """
    p = os.fspath(path)
    fd = _open(p, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        prefix = b""
        if keep_lines_apart and size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            prefix = b"\n"
        try:
            _write_all(fd, prefix + data, p)
        except BaseException:
            with contextlib.suppress(OSError):
                _call("truncate", p, lambda: os.ftruncate(fd, size), fd)
            raise
        _fsync(fd, p)
    finally:
        # A failing close after a successful fsync loses nothing; it is still reported.
        _close(fd, p)
    if size == 0:
        fsync_dir(os.path.dirname(p) or ".")
    return size + len(prefix)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    A temp file in the same folder (``.nkatmp<8 hex>.tmp``, created exclusively, mode 0600) is
    written, fsynced and closed, then ``os.replace``-d onto the target, then the folder is fsynced.
    On any failure before the replace the temp file is removed, so no litter is left.
    ``durable=False`` skips both fsyncs: only for scratch copies (dry runs), never for real folders.
    """
    p = os.fspath(path)
    folder = os.path.dirname(p) or "."
    fd = -1
    tmp = ""
    for _ in range(32):
        tmp = os.path.join(folder, f"{TEMP_PREFIX}{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            fd = _open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(17, "could not create a unique temp file", folder)
    try:
        try:
            _write_all(fd, data, tmp)
            if durable:
                _fsync(fd, tmp)
        finally:
            fd_to_close, fd = fd, -1
            _close(fd_to_close, tmp)
        _call("replace", p, lambda: os.replace(tmp, p))
    except BaseException:
        with contextlib.suppress(OSError):
            _call("unlink", tmp, lambda: os.unlink(tmp))
        raise
    if durable:
        fsync_dir(folder)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, durable: bool = True) -> None:
    """:func:`atomic_write_bytes` of :func:`journal.codec.dumps_view` ``(obj)``."""
    atomic_write_bytes(path, dumps_view(obj), durable=durable)


def replace_file(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """``os.replace`` through the hook, then fsync the destination folder."""
    s, d = os.fspath(src), os.fspath(dst)
    _call("replace", d, lambda: os.replace(s, d))
    fsync_dir(os.path.dirname(d) or ".")


def remove_file(path: str | os.PathLike[str]) -> None:
    """Unlink ``path`` through the hook, then fsync its folder."""
    p = os.fspath(path)
    _call("unlink", p, lambda: os.unlink(p))
    fsync_dir(os.path.dirname(p) or ".")


#: The temp-file names of an atomic write (memory-format §4.5): ``.nkatmp`` + 8 hex characters +
#: ``.tmp`` (ours, and the newest server's) or 8 characters of ``[a-z0-9_]`` (mid-2026 servers:
#: ``tempfile.mkstemp``); older servers: ``.<target name>.<random>.tmp``.
_TEMP_NAME_RE = re.compile(r"\.nkatmp[a-z0-9_]{8}\.tmp")
_OLD_TEMP_NAME_RE = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is the temp file of an atomic write, ours or a mid-2026 or newer server's
    (``.nkatmp`` + 8 characters of ``[a-z0-9_]`` + ``.tmp``): the leftovers a sweep removes."""
    return _TEMP_NAME_RE.fullmatch(name) is not None


def is_leftover_temp(name: str) -> bool:
    """Whether ``name`` is left over from a crashed atomic write of any server version: a
    :func:`is_temp_name`, or an older server's ``.<target>.<8 characters>.tmp`` (reported, never
    swept: nothing tells it apart from a user's file with certainty)."""
    return _TEMP_NAME_RE.fullmatch(name) is not None or _OLD_TEMP_NAME_RE.fullmatch(name) is not None


def sweep_temp_files(folder: str | os.PathLike[str], *, durable: bool = True) -> list[str]:
    """Remove our leftover temp files from ``folder`` (not its subfolders); return their names.

    A crash between creating an atomic write's temp file and replacing the target leaves the temp
    file behind, and nothing else ever removes it. Only a caller that knows no atomic write is in
    flight in ``folder`` may sweep it: the reconciler does, holding the character lock, at a time
    when by design no other process writes the folder (startup, or a guarded replay). Regular files
    only; links and other names are left alone. The folder is fsynced once when something was
    removed (``durable``).
    """
    p = os.fspath(folder)
    try:
        names = sorted(os.listdir(p))
    except (FileNotFoundError, NotADirectoryError):
        return []
    removed: list[str] = []
    for name in names:
        path = os.path.join(p, name)
        if not is_temp_name(name) or os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            _call("unlink", path, lambda path=path: os.unlink(path))  # type: ignore[misc]
        except FileNotFoundError:
            continue
        removed.append(name)
    if removed and durable:
        fsync_dir(p)
    return removed
