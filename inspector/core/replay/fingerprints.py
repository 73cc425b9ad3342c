"""What a plan depends on (:func:`fingerprint_folder`), compared right before applying
(:func:`fingerprint_changes`, and :func:`backup_fingerprints` for the backup just taken); also the
file hash backups use.

Every watched file but the journal is fingerprinted by its SHA-256: they are small. The journal
may be hundreds of MB, and hashing it whole at every check would cost a read of it each time
(five per guarded replay); it is fingerprinted instead by which file it is, its size and its
modification time, with the SHA-256 of its last :data:`JOURNAL_TAIL_BYTES`
(:func:`journal_fingerprint`). Every writer of a journal either appends to it (the size and the
time change) or replaces it through a new file (compaction, the journal repair, a restore: another
inode), so the identity, the size and the time tell any change of ours or the memory server's; the
hash of the end, where appends land and where the pending events a replay applies are, also
tells an edit in place that kept the size within one tick of the clock. The backup taken before an
apply hashes the journal whole (its manifest), and its copy's size and end are compared with the
plan's. The ``repair_journal`` scope, which rewrites the journal, keeps the whole SHA-256
(``whole_journal=True``): its plan names the journal it expects by that hash.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from journal.appliedset import APPLIED_SET_NAME
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.park import PARKED_NAME
from journal.repair import DAMAGED_NAME
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import VIEW_TYPES

#: Files whose content the plan depends on (besides the shards of both archive folders): the
#: journal, the sentinel, the applied set, the parked events, the fragments a journal repair moved
#: out (which it does not record twice) and the views.
WATCHED_FILES = (JOURNAL_NAME, SENTINEL_NAME, APPLIED_SET_NAME, PARKED_NAME, DAMAGED_NAME, *VIEW_TYPES)

#: How much of the journal's end its fingerprint hashes (10,000 events of a typical journal).
JOURNAL_TAIL_BYTES = 4 << 20

_JOURNAL_PREFIX = "file:"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _sha256_end(path: Path, size: int) -> str:
    """The SHA-256 of the last :data:`JOURNAL_TAIL_BYTES` of the first ``size`` bytes of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        fh.seek(max(0, size - JOURNAL_TAIL_BYTES))
        left = min(size, JOURNAL_TAIL_BYTES)
        while left > 0 and (chunk := fh.read(min(left, 1 << 20))):
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def journal_fingerprint(path: str | os.PathLike[str]) -> str | None:
    """The journal's fingerprint: ``file:<device>:<inode>:<size>:<mtime_ns>:end-sha256:<hex>``, the
    hex being the SHA-256 of its last :data:`JOURNAL_TAIL_BYTES` (``None``: no regular file there)."""
    p = Path(path)
    if not p.is_file() or p.is_symlink():
        return None
    st = os.stat(p)
    end = _sha256_end(p, st.st_size)
    return f"{_JOURNAL_PREFIX}{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:end-sha256:{end}"


def _journal_content(fingerprint: str) -> tuple[int, str] | None:
    """The size and end hash a :func:`journal_fingerprint` says (``None``: not one)."""
    if not fingerprint.startswith(_JOURNAL_PREFIX):
        return None
    fields = fingerprint[len(_JOURNAL_PREFIX) :].split(":")
    if len(fields) != 6 or fields[4] != "end-sha256":
        return None
    return int(fields[2]), fields[5]


def fingerprint_folder(char_dir: str | os.PathLike[str], *, whole_journal: bool = False) -> dict[str, str | None]:
    """What the plan depends on: the journal's :func:`journal_fingerprint` (its whole SHA-256 with
    ``whole_journal``), the SHA-256 of every other watched file and of every shard.

    Returns:
        relative path → ``"sha256:<hex>"`` (the journal: ``"file:…"`` unless ``whole_journal``),
        or ``None`` for a watched file that does not exist. Shards appear only when they exist (a
        new shard is a difference too).
    """
    cd = Path(char_dir)
    out: dict[str, str | None] = {}
    for name in WATCHED_FILES:
        p = cd / name
        if name == JOURNAL_NAME and not whole_journal:
            out[name] = journal_fingerprint(p)
            continue
        out[name] = f"sha256:{_sha256_file(p)}" if p.is_file() and not p.is_symlink() else None
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = cd / archive
        if not folder.is_dir() or folder.is_symlink():
            continue
        for name in sorted(os.listdir(folder)):
            p = folder / name
            if p.is_file() and not p.is_symlink():
                out[f"{archive}/{name}"] = f"sha256:{_sha256_file(p)}"
    return out


def backup_fingerprints(
    planned: Mapping[str, str | None], hashes: Mapping[str, str], files_dir: str | os.PathLike[str]
) -> dict[str, str | None]:
    """The fingerprints a backup vouches for, to compare with the plan's (:func:`fingerprint_changes`):
    each file's SHA-256 from the backup's manifest (``hashes``: relative path → hex), and for a
    journal the plan fingerprinted by :func:`journal_fingerprint`, the plan's own fingerprint when
    the copy in ``files_dir`` has its size and its end hash (another value when not). A copy has
    another inode and time, so only its content is compared: the manifest hashed it whole."""
    out: dict[str, str | None] = {}
    for rel, value in planned.items():
        content = _journal_content(value) if value is not None else None
        if content is None:
            out[rel] = f"sha256:{hashes[rel]}" if rel in hashes else None
            continue
        copy = Path(files_dir) / rel
        if rel not in hashes or not copy.is_file():
            out[rel] = None
            continue
        size = copy.stat().st_size
        same = size == content[0] and _sha256_end(copy, size) == content[1]
        out[rel] = value if same else f"sha256:{hashes[rel]}"
    return out


def fingerprint_changes(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[str]:
    """Relative paths whose fingerprint differs (appeared, vanished or changed)."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))

