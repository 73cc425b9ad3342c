"""The dry run: replay a character folder into a scratch copy, and what it would change, per file.

The real :class:`~journal.reconcile.Reconciler` runs on the copy, so the dry run stops where a
real replay stops, for the same reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal.appliedset import APPLIED_SET_NAME, read_applied_set
from journal.codec import loads_exact
from journal.events import SENTINEL_NAME, Clock, now_iso
from journal.handlers import HandlerRegistry
from journal.log import EventLog
from journal.park import ParkRecord, record_park
from journal.reconcile import Reconciler
from journal.replayreport import ReplayReport
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name, shard_entry_ids
from journal.stores import FolderStore
from journal.views import PERSONA, REFLECTIONS


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class EntryChange:
    """One view entry that a replay changes.

    Attributes:
        file: ``reflections.json`` or ``persona.json``.
        entry: the entry key (``ref_x`` or ``<entity_key>/<entry_id>``).
        kind: ``changed`` | ``removed`` | ``added``.
        fields: field-level before/after for ``changed``.
    """

    file: str
    entry: str
    kind: str
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True, slots=True)
class ShardEntryAdded:
    file: str  # e.g. "reflection_archive/2026-05-01_0a1b2c3d.json"
    entry_id: str


@dataclass(slots=True)
class FolderDiff:
    """What a replay changes in a character folder, file by file."""

    entries: list[EntryChange] = field(default_factory=list)
    shard_entries_added: list[ShardEntryAdded] = field(default_factory=list)
    sentinel_before: str | None = None
    sentinel_after: str | None = None
    files_changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.entries or self.shard_entries_added or self.files_changed)


@dataclass(slots=True)
class DryRun:
    """A replay done on a scratch copy: the report, the diff, and the predicted files' contents.

    Attributes:
        predicted: relative path → bytes of each view/shard/sentinel file after the replay.
        applied_set_changed: whether the replay writes or removes ``events_applied_set.json``
            (what it records: the report's ``applied_beyond``).
        applied_set: its bytes after the replay (``None``: there is none).
    """

    report: ReplayReport
    diff: FolderDiff
    predicted: dict[str, bytes] = field(default_factory=dict)
    applied_set_changed: bool = False
    applied_set: bytes | None = None

    @property
    def writes(self) -> bool:
        """Whether the replay writes anything: a view, a shard, the sentinel or the applied set."""
        return bool(self.diff.files_changed) or self.applied_set_changed


_SKIP_COPY_PREFIXES = ("time_indexed", "outbox.ndjson")


def _copy_for_replay(src: Path, dst: Path) -> None:
    """Copy what replay reads or writes: the top-level files and the two archive folders, so that
    the scratch replay meets what the real one meets.

    The original is only read. A link that resolves inside the folder is copied as what it points
    to; a link that resolves outside is recreated pointing at the same (absolute) target, so the
    scratch store refuses it exactly as the real one would (and, like it, never follows it). A
    folder where replay expects a file (``reflections.json/``, a shard) is copied as an empty
    folder, and a file or folder this process cannot read as one it cannot read either, so the
    handler raises there as it would on the original.
    """
    root = os.path.realpath(src)
    dst.mkdir(parents=True)
    for entry in os.scandir(src):
        if entry.name.startswith(_SKIP_COPY_PREFIXES):
            continue
        _copy_entry(Path(entry.path), dst / entry.name, root, entry.name in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE))


def _copy_entry(path: Path, target: Path, root: str, is_archive: bool) -> None:
    if path.is_symlink():
        real = os.path.realpath(path)
        if not (real == root or real.startswith(root + os.sep)):
            try:
                os.symlink(real, target)
            except OSError:  # no symlinks here (e.g. Windows without the privilege): leave it out
                pass
            return
        path = Path(real)
    if path.is_dir():
        target.mkdir()
        if not is_archive:
            return  # only its being a folder matters: replay never reads into it
        try:
            subs = list(os.scandir(path))
        except PermissionError:
            target.chmod(0)
            return
        for sub in subs:
            _copy_entry(Path(sub.path), target / sub.name, root, False)
    elif path.is_file():
        try:
            shutil.copyfile(path, target)
        except PermissionError:
            target.touch()
            target.chmod(0)
    elif path.exists():  # a FIFO, socket or device: replay refuses it, so the copy must hold one too
        os.mkfifo(target)


def replay_files(char_dir: Path) -> dict[str, bytes]:
    """The files a replay can write, relative path → bytes: the views, the sentinel, and the
    well-named shards of both archive folders (links are left out). The applied set is not among
    them: its bytes hold the times of writing; the report's ``applied_beyond`` says what it holds."""
    out: dict[str, bytes] = {}
    for name in (REFLECTIONS, PERSONA, SENTINEL_NAME):
        p = char_dir / name
        if p.is_file() and not p.is_symlink():
            out[name] = p.read_bytes()
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = char_dir / archive
        if folder.is_dir() and not folder.is_symlink():
            for sub in sorted(os.listdir(folder)):
                p = folder / sub
                if is_shard_name(sub) and p.is_file() and not p.is_symlink():
                    out[f"{archive}/{sub}"] = p.read_bytes()
    return out


def _entries_by_key(name: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        obj = loads_exact(data)
    except ValueError:
        return {}
    out: dict[str, Any] = {}
    if name == REFLECTIONS and isinstance(obj, list):
        for e in obj:
            if isinstance(e, dict) and isinstance(e.get("id"), str):
                out.setdefault(e["id"], e)
    elif name == PERSONA and isinstance(obj, dict):
        for key, section in obj.items():
            facts = section.get("facts") if isinstance(section, dict) else None
            for e in facts if isinstance(facts, list) else []:
                if isinstance(e, dict) and isinstance(e.get("id"), str):
                    out.setdefault(f"{key}/{e['id']}", e)
    return out


def sentinel_id(data: bytes | None) -> str | None:
    """The ``last_applied_event_id`` in a sentinel file's bytes; ``None`` if missing or unreadable."""
    if data is None:
        return None
    try:
        obj = loads_exact(data)
    except ValueError:
        return None
    value = obj.get("last_applied_event_id") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def changed_fields(old: dict[str, Any], new: dict[str, Any]) -> tuple[FieldChange, ...]:
    """The fields of an entry whose value differs between two versions of it, by name (a field
    on one side only counts, with ``None`` on the other)."""
    return tuple(
        FieldChange(f, old.get(f), new.get(f)) for f in sorted(set(old) | set(new)) if old.get(f) != new.get(f)
    )


def diff_files(before: dict[str, bytes], after: dict[str, bytes]) -> FolderDiff:
    """Compare two snapshots (relative path → bytes) of a character folder's replay files."""
    diff = FolderDiff()
    diff.files_changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    for name in (REFLECTIONS, PERSONA):
        if before.get(name) == after.get(name):
            continue
        old, new = _entries_by_key(name, before.get(name)), _entries_by_key(name, after.get(name))
        for key in sorted(set(old) | set(new)):
            if key not in new:
                diff.entries.append(EntryChange(name, key, "removed"))
            elif key not in old:
                diff.entries.append(EntryChange(name, key, "added"))
            elif old[key] != new[key]:
                diff.entries.append(EntryChange(name, key, "changed", changed_fields(old[key], new[key])))
    for rel in diff.files_changed:
        if "/" not in rel:
            continue
        try:
            old_shard = loads_exact(before[rel]) if rel in before else []
            old_ids = shard_entry_ids(old_shard if isinstance(old_shard, list) else [])
            new_entries = loads_exact(after[rel]) if rel in after else []
        except (ValueError, AttributeError):
            continue
        added = shard_entry_ids(new_entries if isinstance(new_entries, list) else []) - old_ids
        for e in new_entries if isinstance(new_entries, list) else []:
            if isinstance(e, dict) and e.get("id") in added:
                diff.shard_entries_added.append(ShardEntryAdded(rel, str(e.get("id"))))
    diff.sentinel_before = sentinel_id(before.get(SENTINEL_NAME))
    diff.sentinel_after = sentinel_id(after.get(SENTINEL_NAME))
    return diff


def dry_run(
    char_dir: str | os.PathLike[str],
    registry: HandlerRegistry | None = None,
    *,
    until: str | None = None,
    repair: Iterable[str] | None = None,
    park: str | None = None,
    clock: Clock | None = None,
) -> DryRun:
    """Replay a character folder into a scratch copy; return the report and a per-file diff.

    The original folder is only read (regular files; links are not followed), never written.
    With ``repair``, the given events' handlers are re-applied instead (orphan repair), without
    moving the sentinel. With ``park``, that event is parked in the copy first (what parking it
    would do); nothing checks that it is held. ``clock`` gives the ``ts`` the run writes (the
    sentinel's, the applied set's), as for :class:`~journal.reconcile.Reconciler`.
    """
    src = Path(char_dir)
    with tempfile.TemporaryDirectory(prefix="memory-inspector-dry-") as tmp:
        scratch_root = Path(tmp) / "root"
        scratch = scratch_root / src.name
        scratch_root.mkdir()
        _copy_for_replay(src, scratch)
        before = replay_files(scratch)
        record_before = _record(scratch)
        if park is not None:
            record_park(scratch, ParkRecord(park, "", None, None, "", now_iso(), "dry run", "", "dry run"))
        reconciler = Reconciler(
            EventLog(scratch_root),
            registry,
            store_factory=lambda cd: FolderStore(cd, durable=False, clock=clock),
            clock=clock,
        )
        if repair is not None:
            report = reconciler.repair(src.name, repair)
        else:
            report = reconciler.reconcile(src.name, until=until)
        after = replay_files(scratch)
        record_after = _record(scratch)
        applied_set = scratch / APPLIED_SET_NAME
        record_bytes = applied_set.read_bytes() if applied_set.is_file() and not applied_set.is_symlink() else None
    return DryRun(report, diff_files(before, after), after, record_after != record_before, record_bytes)


def _record(char_dir: Path) -> tuple[bool, str, str | None, tuple[str, ...]]:
    """What the applied set says (its times of writing aside), and whether the file exists."""
    aset = read_applied_set(char_dir)
    return (os.path.lexists(char_dir / APPLIED_SET_NAME), aset.state, aset.after, aset.applied)
