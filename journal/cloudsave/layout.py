"""Where the units of a cloud save are, in every layout a user sends (cloudsave-format §1, §3.2).

* a cloud-save root ``cloudsave/`` (``characters/<name>/``, ``memory/<name>/``, ``manifest.json``…);
* one unit ``cloudsave/characters/<name>/`` (``profile.json``, ``binding.json``, ``meta.json``,
  ``memory/<files>``);
* the legacy layout ``cloudsave/memory/<name>/`` (every upload still writes it; no ``meta.json``);
* a download backup ``cloudsave_backups/character-download-<stamp>/`` (``<name>/_operation.json``
  and the pre-download folder under ``runtime/memory/<name>/``);
* a zip of any of these (extracted by :func:`journal.inputs.extract_zip`, the one extractor).

A character is named as its unit names it: the folder name, Unicode and dots included, never
``memory``. Both layouts present: the server's preference is the sharded unit's ``memory/`` when it
holds at least one managed file, else the legacy folder (§1.4). Nothing here writes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from journal import fs
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.layout import MANAGED_MEMORY_FILENAMES
from journal.outbox import OUTBOX_NAME

UNITS_DIR = "characters"
LEGACY_DIR = "memory"
BACKUPS_DIR = "cloudsave_backups"
DOWNLOAD_PREFIX = "character-download-"
OPERATION_NAME = "_operation.json"
UNIT_FILES = ("profile.json", "binding.json", "meta.json")
#: Files a memory folder has and an upload never exports (§1.3): a folder holding one is no unit.
NOT_EXPORTED = (JOURNAL_NAME, SENTINEL_NAME, OUTBOX_NAME, "cursors.json")
#: What only a cloud-save root holds beside ``characters/`` and ``memory/`` (§1.2).
ROOT_MARKERS = ("manifest.json", "profiles", "catalog", "bindings")


@dataclass(slots=True)
class ManagedFile:
    """A managed name found in a memory folder: ``regular`` is false for a folder, a link, a FIFO…"""

    name: str
    path: Path
    regular: bool


def managed_files(folder: Path | None) -> dict[str, ManagedFile]:
    """The allow-listed names present in ``folder`` (:data:`journal.layout.MANAGED_MEMORY_FILENAMES`,
    the one list), by name; a missing or unreadable folder holds none."""
    out: dict[str, ManagedFile] = {}
    if folder is None:
        return out
    for name in sorted(MANAGED_MEMORY_FILENAMES):
        p = folder / name
        try:
            st = os.lstat(p)
        except OSError:
            continue
        out[name] = ManagedFile(name, p, stat.S_ISREG(st.st_mode))
    return out


@dataclass(slots=True)
class CloudUnit:
    """One character of a cloud save.

    Attributes:
        name: the character, as the unit names it.
        unit_dir: ``characters/<name>/`` when there (``None``: legacy only).
        legacy_dir: ``memory/<name>/`` when there.
        cloud_root: the ``cloudsave/`` folder both hang off (``None``: a unit opened alone).
        backup: for a download backup, its ``character-download-<stamp>/<name>/`` folder.
    """

    name: str
    unit_dir: Path | None = None
    legacy_dir: Path | None = None
    cloud_root: Path | None = None
    backup: Path | None = None

    @property
    def sharded_memory(self) -> Path | None:
        return None if self.unit_dir is None else self.unit_dir / "memory"

    @property
    def memory_dir(self) -> Path | None:
        """The memory folder the server reads (§1.4): the sharded one with a managed file, else legacy."""
        sharded = self.sharded_memory
        if sharded is not None and managed_files(sharded):
            return sharded
        if self.legacy_dir is not None:
            return self.legacy_dir
        return sharded

    @property
    def layout(self) -> str:
        if self.backup is not None:
            return "download backup"
        if self.unit_dir is not None and self.legacy_dir is not None:
            return "both layouts"
        return "unit" if self.unit_dir is not None else "legacy"


@dataclass(slots=True)
class CloudInput:
    """What a cloud-save PATH holds.

    Attributes:
        kind: ``cloudsave`` (a root), ``unit``, ``legacy``, ``backup`` (download backups).
        path: the folder read (a zip's extracted copy for a zip).
        units: its characters, by name.
        anchor: the folder ``root_state.json`` (``state/``) and ``cloudsave_backups/`` are looked
            for in: the opened root's parent, or the opened export itself; ``None``: none may be
            read (never this machine's own N.E.K.O folders).
    """

    kind: str
    path: Path
    units: list[CloudUnit] = field(default_factory=list)
    anchor: Path | None = None


def _is_dir(p: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(p).st_mode)
    except OSError:
        return False


def is_unit(folder: Path) -> bool:
    """``characters/<name>/``: a ``profile.json`` or ``meta.json``, or a ``memory/`` of managed files."""
    if any(os.path.lexists(folder / f) for f in UNIT_FILES[::2]):
        return True
    return _is_dir(folder / "memory") and bool(managed_files(folder / "memory"))


def is_cloud_root(folder: Path) -> bool:
    """``cloudsave/``: its ``characters/`` holds a unit, or it has the root's own files (§1.2)."""
    units = folder / UNITS_DIR
    if _is_dir(units) and any(is_unit(units / n) for n in _names(units)):
        return True
    return _is_dir(folder / LEGACY_DIR) and any(os.path.lexists(folder / m) for m in ROOT_MARKERS)


def _names(folder: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False) and e.name[:1] != ".")
    except OSError:
        return []


def units_of_root(root: Path) -> list[CloudUnit]:
    """Every character of a cloud-save root, sharded and legacy joined by name."""
    by_name: dict[str, CloudUnit] = {}
    for name in _names(root / UNITS_DIR):
        if is_unit(root / UNITS_DIR / name):
            by_name[name] = CloudUnit(name, unit_dir=root / UNITS_DIR / name, cloud_root=root)
    for name in _names(root / LEGACY_DIR):
        unit = by_name.setdefault(name, CloudUnit(name, cloud_root=root))
        unit.legacy_dir = root / LEGACY_DIR / name
    return [by_name[n] for n in sorted(by_name)]


def backup_units(folder: Path) -> list[CloudUnit]:
    """The characters of a download backup ``character-download-<stamp>/``: each ``<name>/`` with
    an ``_operation.json``; its memory folder is the pre-download copy ``runtime/memory/<name>/``."""
    out = []
    for name in _names(folder):
        inner = folder / name
        if os.path.lexists(inner / OPERATION_NAME):
            memory = inner / "runtime" / "memory" / name
            out.append(CloudUnit(name, legacy_dir=memory if _is_dir(memory) else None, backup=inner))
    return out


def find_cloud(path: Path, *, export: Path | None = None, alone: bool = True) -> CloudInput | None:
    """What cloud layout ``path`` is, or ``None`` when it is none.

    Args:
        path: the folder (a zip's copy, where its content starts).
        export: the extracted copy of a zip (``root_state.json`` and the backups are looked for
            only inside it); ``None``: ``path`` was given as a folder.
        alone: also take a folder of managed files and no journal below ``memory/`` (or the whole
            of a zip) for a legacy folder sent alone: what ``memory-inspector cloud`` is told is a
            cloud save. The input resolver does not: such a folder is a views-only character.
    """
    p = path
    parent = p.parent

    def anchor(root: Path) -> Path | None:
        cand = root.parent
        if export is not None:
            return cand if _inside(cand, export) else (root if root == export else None)
        return cand

    if is_cloud_root(p):
        return CloudInput("cloudsave", p, units_of_root(p), anchor(p))
    if p.name == UNITS_DIR and (here := [n for n in _names(p) if is_unit(p / n)]):
        root = p.parent if is_cloud_root(p.parent) else None  # cloudsave/characters/
        if root is not None and (export is None or _inside(root, export)):
            return CloudInput("cloudsave", p, [u for u in units_of_root(root) if u.name in here], anchor(root))
        return CloudInput("cloudsave", p, [CloudUnit(n, unit_dir=p / n) for n in here], None)
    if p.name == "memory" and any(os.path.lexists(parent / f) for f in UNIT_FILES[::2]):
        own = find_cloud(parent, export=export, alone=alone)  # a unit's own memory/ folder
        if own is not None and own.kind == "unit":
            return own
    if parent.name == UNITS_DIR and is_unit(p):
        root = parent.parent
        if is_cloud_root(root) and (export is None or _inside(root, export)):
            units = [u for u in units_of_root(root) if u.name == p.name]
            return CloudInput("unit", p, units, anchor(root))
        return CloudInput("unit", p, [CloudUnit(p.name, unit_dir=p)], None)
    if parent.name == LEGACY_DIR and is_cloud_root(parent.parent) and (export is None or _inside(parent, export)):
        root = parent.parent
        units = [u for u in units_of_root(root) if u.name == p.name]
        return CloudInput("legacy", p, units, anchor(root))
    sent_alone = alone and (parent.name == LEGACY_DIR or export is not None)
    if sent_alone and managed_files(p) and not any(os.path.lexists(p / f) for f in NOT_EXPORTED):
        return CloudInput("legacy", p, [CloudUnit(p.name, legacy_dir=p)], None)  # a legacy folder sent alone
    if is_unit(p) and any(os.path.lexists(p / f) for f in UNIT_FILES[::2]):
        return CloudInput("unit", p, [CloudUnit(p.name, unit_dir=p)], None)  # a unit sent alone
    if p.name.startswith(DOWNLOAD_PREFIX) and (found := backup_units(p)):
        return CloudInput("backup", p, found, None)
    if p.name == BACKUPS_DIR:
        units = [u for n in _names(p) if n.startswith(DOWNLOAD_PREFIX) for u in backup_units(p / n)]
        if units:
            return CloudInput("backup", p, units, anchor(p))
    return None


def _inside(p: Path, folder: Path) -> bool:
    return fs.is_inside(p, folder)
