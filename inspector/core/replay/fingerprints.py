"""What a plan depends on: the SHA-256 of every watched file and shard (:func:`fingerprint_folder`),
compared right before applying (:func:`fingerprint_changes`); also the file hash backups use."""

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


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def fingerprint_folder(char_dir: str | os.PathLike[str]) -> dict[str, str | None]:
    """SHA-256 of every file the plan depends on: journal, sentinel, views and every shard.

    Returns:
        relative path → ``"sha256:<hex>"``, or ``None`` for a watched file that does not exist.
        Shards appear only when they exist (a new shard is a difference too).
    """
    cd = Path(char_dir)
    out: dict[str, str | None] = {}
    for name in WATCHED_FILES:
        p = cd / name
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


def fingerprint_changes(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[str]:
    """Relative paths whose fingerprint differs (appeared, vanished or changed)."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
