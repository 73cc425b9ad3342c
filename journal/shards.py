"""Archive shards: naming, validation, choosing a shard, and idempotent append by entry ``id``."""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Iterable
from datetime import date
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import loads_exact
from journal.errors import BadShardNameError, ShardCorruptError
from journal.events import IdSource, new_uuid

REFLECTION_ARCHIVE = "reflection_archive"
PERSONA_ARCHIVE = "persona_archive"
ARCHIVE_FILE_MAX_ENTRIES = 500

#: ASCII digits only: ``\\d`` would also accept other scripts' digits.
SHARD_NAME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9a-f]{8}\.json")
_UUID8_RE = re.compile(r"[0-9a-f]{8}")


def is_shard_name(name: object) -> bool:
    """Whether ``name`` is a valid shard basename (``YYYY-MM-DD_<8 hex>.json``)."""
    return isinstance(name, str) and SHARD_NAME_RE.fullmatch(name) is not None


def validate_shard_name(name: object) -> str:
    """Return ``name`` if it is a valid shard basename.

    Raises:
        BadShardNameError: anything else: path separators, ``..``, absolute paths, other names,
            non-strings. Nothing is written in that case.
    """
    if not is_shard_name(name):
        raise BadShardNameError(
            f"invalid shard basename {name!r}: expected YYYY-MM-DD_<8 lowercase hex>.json"
        )
    assert isinstance(name, str)
    return name


def shard_path(archive_dir: str | os.PathLike[str], name: object) -> Path:
    """The path of shard ``name`` inside ``archive_dir``, after validating the name."""
    return Path(archive_dir) / validate_shard_name(name)


def load_shard(path: str | os.PathLike[str]) -> list[Any] | None:
    """Entries of a shard; ``None`` when the file does not exist.

    Only a regular file is read (links followed); anything else raises at once, never blocks
    (:func:`journal.fs.open_regular`).

    Raises:
        ShardCorruptError: the file is not JSON or not a list.
        OSError: the file exists but cannot be read, or is not a regular file (a folder:
            ``IsADirectoryError``; a FIFO, socket or device: the message says which).
    """
    p = Path(path)
    try:
        with fs.open_regular(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    try:
        obj = loads_exact(data)
    except ValueError as exc:
        raise ShardCorruptError(f"shard {p.name} is not valid JSON: {exc}") from exc
    if not isinstance(obj, list):
        raise ShardCorruptError(f"shard {p.name} has a top-level {type(obj).__name__}, not a list")
    return obj


def list_shards(archive_dir: str | os.PathLike[str]) -> list[str]:
    """Valid shard basenames in ``archive_dir``, sorted; other files are ignored."""
    try:
        names = os.listdir(archive_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if is_shard_name(n))


def choose_shard(
    archive_dir: str | os.PathLike[str], today: date | None = None, *, new_id: IdSource | None = None
) -> str:
    """Pick the shard an append goes to (memory-format §1.3).

    Today's shards in lexical order; the first holding fewer than 500 entries; a corrupt shard
    counts as full. Otherwise a new name with today's date and a fresh uuid8 (the first 8 hex
    digits of a ``new_id()``, default :func:`journal.events.new_uuid`), re-rolled on collision.
    Does not create the file.

    Raises:
        ValueError: ``new_id`` gave something that does not start with 8 lowercase hex digits.
    """
    day = (today or date.today()).isoformat()
    existing = list_shards(archive_dir)
    for name in existing:
        if not name.startswith(day + "_"):
            continue
        try:
            entries = load_shard(Path(archive_dir) / name)
        except (ShardCorruptError, OSError):
            continue
        if entries is None or len(entries) < ARCHIVE_FILE_MAX_ENTRIES:
            return name
    taken = set(existing)
    while True:
        name = f"{day}_{_uuid8(new_id or new_uuid)}.json"
        if name not in taken:
            return name


def _uuid8(new_id: IdSource) -> str:
    """The first 8 hex digits of a fresh id (``new_id()``, canonical or hex)."""
    fresh = new_id()
    digits = fresh.replace("-", "")[:8]
    if _UUID8_RE.fullmatch(digits) is None:
        raise ValueError(f"id source gave {fresh!r}: a shard name needs 8 lowercase hex digits")
    return digits


def ensure_shard(archive_dir: str | os.PathLike[str], name: str) -> bool:
    """Create shard ``name`` as ``[]`` (and its folder) if it does not exist. Returns whether it did."""
    path = shard_path(archive_dir, name)
    if path.exists():
        return False
    fs.ensure_dir(archive_dir)
    fs.atomic_write_json(path, [])
    return True


def shard_entry_ids(entries: Iterable[Any]) -> set[Any]:
    """The ids a shard's entries hold: whether a shard holds an entry is ``entry_id in`` this
    (the one home of that rule; an entry that is not an object, or whose id cannot be a set
    member, holds no id)."""
    ids: set[Any] = set()
    for e in entries:
        if isinstance(e, dict):
            eid = e.get("id")
            if isinstance(eid, Hashable):
                ids.add(eid)
    return ids


def append_entries(archive_dir: str | os.PathLike[str], name: object, entries: Iterable[dict[str, Any]]) -> bool:
    """Append each entry whose ``id`` is not yet in shard ``name``; idempotent.

    Creates the folder and the shard when missing. Returns whether the shard changed.

    Raises:
        BadShardNameError: ``name`` is not a valid basename (nothing written).
        ShardCorruptError: the shard exists but is corrupt (it is never overwritten).
    """
    path = shard_path(archive_dir, name)
    current = load_shard(path)
    existed = current is not None
    current = [] if current is None else current
    ids = shard_entry_ids(current)
    changed = False
    for entry in entries:
        if entry.get("id") in ids:
            continue
        current.append(dict(entry))
        ids.add(entry.get("id"))
        changed = True
    if changed or not existed:
        fs.ensure_dir(archive_dir)
        fs.atomic_write_json(path, current)
    return changed or not existed
