"""Where handlers read and write a character folder: the :class:`Store` contract and its two backends.

Handlers reach files only through a :class:`Store`, so the same code runs against the real folder
(:class:`FolderStore`), a scratch copy (``FolderStore(durable=False)``) or an in-memory overlay
that never writes to disk (:class:`MemoryStore`).

A store never reads or writes a view, archive folder or shard that resolves outside the character
folder it was given (a symbolic link pointing elsewhere is refused like a corrupt file). That rule
is :class:`Confinement`, which the live writers and the diagnosis use too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Protocol

from journal import fs
from journal.codec import dumps_view
from journal.errors import ShardCorruptError, ViewCorruptError
from journal.events import SENTINEL_NAME, Clock
from journal.shards import load_shard, validate_shard_name
from journal.views import SentinelRead, check_view_type, load_view, read_sentinel, save_view, write_sentinel


class Store(Protocol):
    """Where handlers and the reconciler read and write one character folder's files.

    Contract for implementations: ``load_view`` of a missing file gives an empty ``expected()``;
    a file that is not JSON or has the wrong top-level type raises ``ViewCorruptError``.
    ``load_shard`` gives ``None`` for a missing shard and raises ``BadShardNameError`` /
    ``ShardCorruptError``. Nothing outside ``char_dir`` is ever read or written.
    """

    char_dir: Path

    def view_exists(self, name: str) -> bool: ...

    def load_view(self, name: str, expected: type) -> Any: ...

    def save_view(self, name: str, obj: Any) -> None: ...

    def load_shard(self, archive: str, basename: str) -> list[Any] | None: ...

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None: ...

    def read_sentinel(self) -> SentinelRead: ...

    def write_sentinel(self, event_id: str | None) -> None: ...


def _plain(path: Path) -> bool:
    """Whether ``path`` is missing or not a link, so it stays where its parent is (POSIX only:
    Windows junctions are not reported as links, so there every path is resolved)."""
    if os.name == "nt":
        return False
    try:
        return not stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _plain_name(name: str) -> bool:
    return os.path.basename(name) == name and name not in ("", ".", "..")


class Confinement:
    """Where the views, archive folders and shards of one character folder may be: the one home
    of "inside the character folder", used by the stores (replay), the live writers of
    :class:`~journal.log.EventLog` and the diagnosis, so all three refuse the same paths.

    The character folder itself is trusted (it may be a link: it is the folder given). A file or
    archive folder inside it that is not a link stays inside; a link is resolved and must land
    inside the folder too. Nothing is created or read.

    Attributes:
        char_dir: the character folder, as given.
    """

    def __init__(self, char_dir: str | os.PathLike[str]) -> None:
        self.char_dir = Path(char_dir)
        self._real: str | None = None

    @property
    def _root(self) -> str:
        # Resolved on first need (a link met), not per store or write: most paths are plain.
        if self._real is None:
            self._real = os.path.realpath(self.char_dir)
        return self._real

    def view_path(self, name: str) -> Path:
        """The path of view ``name``.

        Raises:
            ViewCorruptError: ``name`` is not a plain file name (``..``, an absolute path, a
                separator), or the file is a link resolving outside the character folder.
        """
        if not isinstance(name, str) or not _plain_name(name):
            raise ViewCorruptError(f"{name!r} is not a file name inside the character folder")
        path = self.char_dir / name
        if not _plain(path) and not fs.is_inside(path, self._root):
            raise ViewCorruptError(
                f"{name} resolves outside the character folder ({os.path.realpath(path)}); refusing to use it"
            )
        return path

    def archive_path(self, archive: str) -> Path:
        """The path of archive folder ``archive``.

        Raises:
            ShardCorruptError: ``archive`` is not a plain folder name, or the folder is a link
                resolving outside the character folder.
        """
        if not isinstance(archive, str) or not _plain_name(archive):
            raise ShardCorruptError(f"{archive!r} is not a folder name inside the character folder")
        path = self.char_dir / archive
        if not _plain(path) and not fs.is_inside(path, self._root):
            raise ShardCorruptError(
                f"{archive}/ resolves outside the character folder ({os.path.realpath(path)}); "
                "refusing to read or write through it"
            )
        return path

    def shard_path(self, archive: str, basename: object) -> Path:
        """The path of shard ``basename`` in archive folder ``archive``.

        Raises:
            BadShardNameError: ``basename`` is not a shard basename (checked first).
            ShardCorruptError: as :meth:`archive_path`, or the shard is a link resolving outside
                the character folder.
        """
        name = validate_shard_name(basename)  # first: a hostile basename is named as such
        path = self.archive_path(archive) / name
        if not _plain(path) and not fs.is_inside(path, self._root):
            raise ShardCorruptError(
                f"{archive}/{name} resolves outside the character folder ({os.path.realpath(path)}); "
                "refusing to read or write through it"
            )
        return path


class FolderStore(Confinement):
    """The real files of one character folder; every write goes through :mod:`journal.fs`.

    Views are read with :func:`journal.views.load_view` on every load and written as
    :func:`journal.codec.dumps_view` of the object saved.

    Args:
        char_dir: the character folder.
        durable: ``False`` skips fsync (scratch copies only).
        clock: gives the ``ts`` of the sentinel it writes (default, ``None``:
            :func:`journal.events.now_iso`).
    """

    def __init__(
        self, char_dir: str | os.PathLike[str], *, durable: bool = True, clock: Clock | None = None
    ) -> None:
        super().__init__(char_dir)
        self.durable = durable
        self.clock = clock

    def view_exists(self, name: str) -> bool:
        return self.view_path(name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        return load_view(self.view_path(name), expected)

    def save_view(self, name: str, obj: Any) -> None:
        save_view(self.view_path(name), obj, durable=self.durable)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        return load_shard(self.shard_path(archive, basename))

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        path = self.shard_path(archive, basename)
        data = dumps_view(entries)  # what it cannot encode is refused before anything is created
        if self.durable:
            fs.ensure_dir(path.parent)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        fs.atomic_write_bytes(path, data, durable=self.durable)

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        self.view_path(SENTINEL_NAME)  # a link leading out of the folder is refused, as a view is
        write_sentinel(self.char_dir, event_id, durable=self.durable, clock=self.clock)


_MISSING = object()


class MemoryStore(Confinement):
    """An overlay over a character folder that reads lazily and keeps every write in memory.

    It never writes to disk, so it is safe on any folder (exports, read-only media). Used for
    diagnosis checks ("would this handler change anything?") and fast dry runs. It refuses the
    same out-of-folder paths as :class:`FolderStore`, so both stop at the same events.

    Attributes:
        written: names of views / ``archive/basename`` shards / ``events_applied.json`` written.
    """

    def __init__(self, char_dir: str | os.PathLike[str]) -> None:
        super().__init__(char_dir)
        self._views: dict[str, Any] = {}
        self._shards: dict[tuple[str, str], Any] = {}
        self._sentinel: SentinelRead | None = None
        self.written: set[str] = set()

    def view_exists(self, name: str) -> bool:
        if name in self._views:
            return self._views[name] is not _MISSING
        return self.view_path(name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        if name not in self._views:
            # A corrupt view raises on every call, as on disk; nothing is cached.
            self._views[name] = load_view(self.view_path(name), object, missing=_MISSING)
        obj = self._views[name]
        return expected() if obj is _MISSING else check_view_type(name, obj, expected)

    def save_view(self, name: str, obj: Any) -> None:
        self.view_path(name)
        dumps_view(obj)  # raises what a real save of it would raise
        self._views[name] = obj
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        key = (archive, basename)
        if key not in self._shards:
            self._shards[key] = load_shard(self.shard_path(archive, basename))
        value: list[Any] | None = self._shards[key]
        return value

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        self.shard_path(archive, basename)
        dumps_view(entries)  # raises what a real save of it would raise
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def read_sentinel(self) -> SentinelRead:
        if self._sentinel is None:
            self._sentinel = read_sentinel(self.char_dir)
        return self._sentinel

    def write_sentinel(self, event_id: str | None) -> None:
        self._sentinel = SentinelRead("ok", event_id) if event_id is not None else SentinelRead("null")
        self.written.add(SENTINEL_NAME)

    def view(self, name: str) -> Any:
        """The in-memory value of a view (after writes), or ``None`` if never loaded."""
        value = self._views.get(name)
        return None if value is _MISSING else value

    def shard(self, archive: str, basename: str) -> Any:
        return self._shards.get((archive, basename))

    def discard(self) -> None:
        """Forget every load and write; the next read comes from disk again."""
        self._views.clear()
        self._shards.clear()
        self._sentinel = None
        self.written.clear()
