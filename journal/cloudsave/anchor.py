"""What lies beside a cloud save under its anchor folder (cloudsave-format §1.1, §5): the
``state/root_state.json`` fence, the catalog's tombstones, and ``cloudsave_backups/``.

Only the anchor :func:`journal.cloudsave.layout.find_cloud` names is read: the opened cloud-save
root's parent, or inside the opened export; never this machine's own N.E.K.O folders, since
support staff open other people's exports. Nothing is written, and the cloud-apply lock is never
taken (taking it could make a server write fail, §5.3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal.cloudsave.layout import BACKUPS_DIR, DOWNLOAD_PREFIX, OPERATION_NAME
from journal.cloudsave.meta import JsonRead, read_json

#: ``root_state.json`` modes that fence cloud-save writes (§5.2).
WRITE_BLOCKING_MODES = frozenset({"bootstrap_importing", "bootstrap_readonly", "deferred_init", "maintenance_readonly"})


@dataclass(slots=True)
class RootState:
    """``<anchor>/state/root_state.json`` as read (``None`` fields: absent)."""

    path: Path
    mode: str | None = None
    last_migration_result: str | None = None
    problem: str | None = None

    @property
    def blocks_writes(self) -> bool:
        return self.mode in WRITE_BLOCKING_MODES


def read_root_state(anchor: Path | None) -> RootState | None:
    """The fence file under ``anchor``, or ``None`` when there is none."""
    if anchor is None:
        return None
    got = read_json(anchor / "state" / "root_state.json")
    if not got.exists:
        return None
    state = RootState(anchor / "state" / "root_state.json", problem=got.problem)
    if isinstance(got.value, dict):
        mode, last = got.value.get("mode"), got.value.get("last_migration_result")
        state.mode = mode if isinstance(mode, str) else None
        state.last_migration_result = last if isinstance(last, str) else None
    elif got.problem is None:
        state.problem = "not a JSON object"
    return state


def tombstoned_names(cloud_root: Path | None) -> dict[str, Any]:
    """``catalog/character_tombstones.json``: each tombstoned name and its entry (§5.1: a dict with
    a ``tombstones`` list or a bare list; the name from ``character_name`` or ``name``)."""
    if cloud_root is None:
        return {}
    doc = read_json(cloud_root / "catalog" / "character_tombstones.json").value
    items = doc.get("tombstones") if isinstance(doc, dict) else doc
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            name = item.get("character_name") or item.get("name")
            if isinstance(name, str) and name:
                out[name] = item
    return out


@dataclass(slots=True)
class DownloadBackup:
    """One ``cloudsave_backups/character-download-<stamp>/<name>/`` and its ``_operation.json``."""

    stamp: str
    path: Path
    operation: JsonRead
    folder: Path | None = None

    def to_json(self) -> dict[str, Any]:
        op = self.operation.value if isinstance(self.operation.value, dict) else {}
        targets = op.get("targets")
        return {
            "stamp": self.stamp,
            "path": str(self.path),
            "operation": op.get("operation"),
            "character_name": op.get("character_name"),
            "targets": len(targets) if isinstance(targets, list) else None,
            "problem": self.operation.problem,
            "folder": None if self.folder is None else str(self.folder),
        }


def download_backups(anchor: Path | None, name: str) -> list[DownloadBackup]:
    """The download backups of character ``name`` under ``anchor``, oldest first (their stamps are
    UTC times, so the names sort by time)."""
    if anchor is None:
        return []
    base = anchor / BACKUPS_DIR
    try:
        stamps = sorted(e.name for e in os.scandir(base) if e.name.startswith(DOWNLOAD_PREFIX) and e.is_dir())
    except OSError:
        return []
    out = []
    for stamp in stamps:
        inner = base / stamp / name
        if not os.path.lexists(inner / OPERATION_NAME):
            continue
        folder = inner / "runtime" / "memory" / name
        out.append(
            DownloadBackup(
                stamp[len(DOWNLOAD_PREFIX) :],
                inner,
                read_json(inner / OPERATION_NAME),
                folder if folder.is_dir() else None,
            )
        )
    return out


@dataclass(slots=True)
class Surroundings:
    """Everything read beside a unit: the fence, its tombstone, its download backups."""

    root_state: RootState | None = None
    tombstone: Any = None
    backups: list[DownloadBackup] = field(default_factory=list)
