"""The dry run: replay a character folder into a scratch copy, and what it would change, per file;
and the same value predicted from the diagnosis's own pass, without a copy (:func:`predict_run`).

The real :class:`~journal.reconcile.Reconciler` runs on the copy, so the dry run stops where a
real replay stops, for the same reason. The copy holds the views, the shards and the small files;
the journal is linked, never copied (replay only reads it).

:func:`predict_run` takes the decisions of the tail-decision engine (:mod:`journal.engine`) as the
diagnosis ran it on its in-memory overlay of the folder, and what the handlers saved there, and
writes nothing: the views' bytes are :func:`journal.codec.dumps_view` of the views as the handlers
leave them, the sentinel's and the applied set's those of their one writers
(:func:`journal.views.sentinel_bytes`, :func:`journal.appliedset.applied_set_bytes`). Where it
cannot be sure of the bytes (a link, a file that is not a regular one, handlers other than the
production ones, an overlay it cannot put back) it says so, and the caller runs :func:`dry_run`:
a test holds the two equal on every fixture case.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journal import fs
from journal.appliedset import APPLIED_SET_NAME, applied_set_bytes, read_applied_set, record_step
from journal.codec import dumps_view, loads_exact
from journal.engine import settles_record
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Clock, now_iso
from journal.handlers import HandlerRegistry, default_registry
from journal.log import EventLog
from journal.outbox import OUTBOX_NAME
from journal.park import PARKED_NAME, ParkRecord, record_park
from journal.reconcile import Reconciler
from journal.replayreport import ReplayReport, ReplayStop
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name, shard_entry_ids
from journal.stores import FolderStore
from journal.views import FACTS, PERSONA, REFLECTIONS, parse_sentinel, sentinel_bytes

if TYPE_CHECKING:
    from journal.diagnosis.pending import TailRun


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


_SKIP_COPY_PREFIXES = ("time_indexed", OUTBOX_NAME)


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
        journal = _journal_to_link(Path(entry.path), root) if entry.name == JOURNAL_NAME else None
        if journal is not None:
            try:
                os.symlink(journal, dst / entry.name)
                continue
            except OSError:  # no symlinks here (e.g. Windows without the privilege): copy it
                pass
        _copy_entry(Path(entry.path), dst / entry.name, root, entry.name in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE))


def _journal_to_link(path: Path, root: str) -> str | None:
    """What the copy links to instead of copying the journal (replay only reads it, and it may be
    hundreds of MB): a regular file, or what a link inside the folder leads to. Anything else
    (``None``) is copied as :func:`_copy_entry` copies it, so the scratch replay refuses what the
    real one refuses."""
    real = os.path.realpath(path)
    if not fs.is_inside(real, root):
        return None
    try:
        return real if stat.S_ISREG(os.stat(real).st_mode) else None
    except OSError:
        return None


def _copy_entry(path: Path, target: Path, root: str, is_archive: bool) -> None:
    if path.is_symlink():
        real = os.path.realpath(path)
        if not fs.is_inside(real, root):
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


# -- the same value from the diagnosis's own pass -------------------------------------------------------


def predict_run(run: TailRun, *, until: str | None = None, clock: Clock | None = None) -> DryRun | None:
    """What a replay of the tail writes, from the engine's pass over it as the diagnosis ran it
    (:class:`journal.diagnosis.pending.TailRun`; its :meth:`~journal.diagnosis.pending.TailRun.again`
    with ``park`` for a park): the :class:`DryRun` that :func:`dry_run` with the same ``until`` /
    ``park`` gives, without a scratch copy.

    ``until`` bounds the run as the reconciler's ``until``: when the pass already ends there (the
    journal's last event, as the guarded replay bounds a run) nothing runs again; else the pass is
    run again up to it. The real folder is only read: the replay files' bytes as they are, and the
    applied set. ``clock`` gives the ``ts`` a run writes, as for :func:`dry_run`.

    Returns:
        The prediction, or ``None`` where it could not be exact: handlers other than the
        production ones, a replay file that is a link or not a regular file (or an archive folder
        that is not a plain folder), or an overlay the handlers left in a shape
        :meth:`journal.diagnosis.folder.ProjectionStore.views_after` cannot put back. Then run
        :func:`dry_run`, the exact path.
    """
    from journal.diagnosis.folder import ProjectionError

    cd = run.char_dir
    if not _production(run.registry) or not _plain_replay_files(cd):
        return None
    until_reached = run.decisions.until_reached
    if until is not None and until != run.until:
        last = run.decisions.decisions[-1] if run.decisions.decisions else None
        if run.until is None and (last is None or last.event_id == until):  # the pass already ends there
            until_reached = last is not None and last.kind in ("applies", "already", "parked")
        else:
            run = run.again(until=until)
            until_reached = run.decisions.until_reached
    store = run.store
    if store is None:
        return None
    decided = run.decisions
    try:
        written = {name: dumps_view(obj) for name, obj in store.views_after().items()}
        for (archive, basename), entries in store.shards_after().items():
            written[f"{archive}/{basename}"] = dumps_view(entries)
    except (ProjectionError, TypeError, ValueError, RecursionError):  # what dumps_view may raise, too
        return None
    before = replay_files(cd)
    after = {**before, **written}
    now = clock or now_iso
    on_disk = run.sentinel
    if decided.moves_sentinel:
        after[SENTINEL_NAME] = sentinel_bytes(decided.sentinel_after, now())
        on_disk = parse_sentinel(after[SENTINEL_NAME])
    report = _report_of(run, on_disk.event_id)
    report.until_reached = until_reached
    # The end of the round (Reconciler._commit), by the reconciler's own rules.
    aset = read_applied_set(cd, run.sentinel)
    path = cd / APPLIED_SET_NAME
    exists = os.path.lexists(path)
    record_before = (exists, aset.state, aset.after, aset.applied)
    record_after = record_before
    record_bytes = path.read_bytes() if exists and path.is_file() and not path.is_symlink() else None
    if settles_record(aset.state != "missing", decided.has_record, bool(report.held)):
        beyond = list(decided.applied_beyond)
        report.applied_beyond = beyond
        step = record_step(aset, on_disk, beyond)
        if step == "remove":
            record_after, record_bytes = (False, "missing", None, ()), None
        elif step == "write":
            record_bytes = applied_set_bytes(on_disk, beyond, None if clock is None else clock())
            record_after = (True, "ok", on_disk.event_id, tuple(beyond))
    return DryRun(report, diff_files(before, after), after, record_after != record_before, record_bytes)


def _report_of(run: TailRun, sentinel_after: str | None) -> ReplayReport:
    """The reconciler's report of a quiet round (no other writer, no probe finding more) that takes
    the pass's decisions."""
    decided = run.decisions
    report = ReplayReport(run.char_dir.name)
    report.sentinel_before = run.sentinel.event_id
    report.sentinel_after = sentinel_after
    report.tail = len(run.events) - (run.sindex + 1)
    for d in decided.decisions:
        if d.kind == "applies":
            report.applied.append(d.event_id)
            report.changed += d.changed
        elif d.kind == "already":
            report.skipped.append(d.event_id)
        elif d.kind == "parked":
            report.parked.append(d.event_id)
        else:
            if d.kind == "blocked":
                stop = ReplayStop(d.event_id, d.index, d.type, d.reason or "handler_error", d.message or "")
                report.blocks.append(stop)
                report.stopped = report.stopped or stop
            report.held.append(d.event_id)
    report.held_entries = sorted(decided.held_entries)
    report.held_everything = decided.held_everything
    report.until_reached = decided.until_reached
    report.temp_files_removed = leftover_temp_files(run.char_dir)
    return report


def leftover_temp_files(char_dir: str | os.PathLike[str]) -> list[str]:
    """The temp files of interrupted atomic writes a replay removes before it replays, relative to
    the character folder (what :func:`journal.fs.sweep_temp_files` takes, in the folder and both
    archive folders)."""
    cd = Path(char_dir)
    out = []
    for sub in ("", REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = cd / sub if sub else cd
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            p = folder / name
            if fs.is_temp_name(name) and p.is_file() and not p.is_symlink():
                out.append(f"{sub}/{name}" if sub else name)
    return out


def _production(registry: HandlerRegistry) -> bool:
    """Whether ``registry`` holds exactly the production handlers (the ones whose effects
    :class:`~journal.diagnosis.folder.ProjectionStore` can put back into whole views)."""
    builtin = default_registry()
    return registry.names() == builtin.names() and all(registry.get(n) is builtin.get(n) for n in builtin.names())


def _plain_replay_files(cd: Path) -> bool:
    """Whether every file a replay reads or writes, besides the journal, is missing or a regular
    file readable here (an archive folder: missing or a plain folder of such shards), so that
    the diagnosis's reading of them is the reconciler's."""
    for name in (REFLECTIONS, PERSONA, FACTS, SENTINEL_NAME, APPLIED_SET_NAME, PARKED_NAME):
        if not _plain(cd / name, stat.S_ISREG):
            return False
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = cd / archive
        if not _plain(folder, stat.S_ISDIR):
            return False
        if not os.path.lexists(folder):
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            return False
        if not all(_plain(folder / n, stat.S_ISREG) for n in names if is_shard_name(n)):
            return False
    return True


def _plain(path: Path, kind: Any) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return bool(kind(st.st_mode)) and os.access(path, os.R_OK | (os.X_OK if stat.S_ISDIR(st.st_mode) else 0))
