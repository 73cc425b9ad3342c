"""The reconciler: replays unapplied events through the handlers, with compare-and-freeze.

Also: ``reconcile_all`` / ``areconcile_all`` for a memory root, the startup sequence helper, and
``dry_run`` (replay into a scratch copy and diff it against the original).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import fs
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event
from journal.handlers import (
    FolderStore,
    HandlerRegistry,
    Store,
    block_reason,
    default_registry,
    entry_ref,
    run_handler,
)
from journal.log import EventLog, check_character_name
from journal.reader import read_journal
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name, load_shard
from journal.views import PERSONA, REFLECTIONS, parse_json_bytes

log = logging.getLogger(__name__)

#: How many times a frozen round re-reads the journal before it gives up (newest upstream value).
_MAX_FROZEN_RESCANS = 8


@dataclass(frozen=True, slots=True)
class ReplayStop:
    """Where and why a round stopped before the end of the journal.

    Attributes:
        reason: ``no_handler`` | ``handler_error`` | ``view_drift`` | ``corrupt_view`` |
            ``corrupt_shard`` | ``bad_shard_name`` | ``sentinel_write``.
    """

    event_id: str
    index: int
    type: str
    reason: str
    message: str


@dataclass(slots=True)
class ReplayReport:
    """The outcome of one reconciliation round of one character (a value for the CLI and GUI).

    Attributes:
        character: the folder name.
        sentinel_before: the sentinel id read at the start (``None`` for missing/null/malformed).
        sentinel_after: the sentinel id on disk at the end.
        tail: events that were pending when the round started.
        applied: ids of the events whose handler returned, in order (repeats possible when frozen).
        changed: how many of those reported a change.
        stopped: where replay stopped, if it did.
        frozen: a concurrent writer moved the sentinel; the round froze it.
        rescans: probes used by the frozen pass.
        left_behind: events still after this round's own last-applied position when the probe
            bound was hit.
        cancelled: the caller asked to stop between events.
        until_reached: replay stopped on purpose at the requested event.
        temp_files_removed: leftover temp files of interrupted atomic writes removed before the
            round (relative to the character folder).
    """

    character: str
    sentinel_before: str | None = None
    sentinel_after: str | None = None
    tail: int = 0
    applied: list[str] = field(default_factory=list)
    changed: int = 0
    stopped: ReplayStop | None = None
    frozen: bool = False
    rescans: int = 0
    left_behind: int = 0
    cancelled: bool = False
    until_reached: bool = False
    temp_files_removed: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Nothing stopped the round and nothing was left behind or cancelled."""
        return self.stopped is None and not self.cancelled and self.left_behind == 0


@dataclass
class ReconcileHooks:
    """Test seams: called outside the lock, so a test can interleave a live writer exactly."""

    before_event: Callable[[Event], None] | None = None
    after_event: Callable[[Event], None] | None = None
    before_probe: Callable[[int], None] | None = None


def _sweep_temp_files(char_dir: Path, durable: bool) -> list[str]:
    """Best effort: a leftover temp file is harmless to replay, so a failure to remove one is
    logged and the round goes on (the next round retries)."""
    removed: list[str] = []
    for sub in ("", REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        try:
            removed += [f"{sub}/{n}" if sub else n for n in fs.sweep_temp_files(char_dir / sub, durable=durable)]
        except OSError as exc:
            log.warning("%s: could not remove leftover temp files: %s", char_dir / sub, exc)
    return removed


def _after(events: list[Event], event_id: str | None) -> list[Event]:
    """Events after ``event_id`` (the first match wins); the whole body when absent or unknown."""
    if event_id is not None:
        for i, ev in enumerate(events):
            if ev.event_id == event_id:
                return events[i + 1 :]
    return events


class Reconciler:
    """Replays each character's unapplied events in file order (design record: Startup recovery).

    Args:
        event_log: gives the folders and the per-character locks shared with live writers.
        registry: event type → handler (default: the five production handlers).
        store_factory: builds the store for a character folder (default: the durable folder).
        hooks: test seams.
    """

    def __init__(
        self,
        event_log: EventLog,
        registry: HandlerRegistry | None = None,
        *,
        store_factory: Callable[[Path], Store] | None = None,
        hooks: ReconcileHooks | None = None,
    ) -> None:
        self.event_log = event_log
        self.registry = registry if registry is not None else default_registry()
        self.store_factory = store_factory or (lambda cd: FolderStore(cd))
        self.hooks = hooks or ReconcileHooks()

    def reconcile(
        self,
        character: str,
        *,
        until: str | None = None,
        should_continue: Callable[[], bool] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ReplayReport:
        """Replay the events after the sentinel, stopping at the first one that cannot be applied.

        Before each handler runs, the on-disk sentinel is compared with the value this round
        expects (compare-before-apply). On a mismatch nothing is applied or written; the sentinel
        is frozen for the rest of the round, and the journal is re-read from this round's own
        last-applied position to the end and replayed in order, re-probing after each drain until
        a probe comes back empty or ``_MAX_FROZEN_RESCANS`` probes were used.

        Args:
            until: stop (successfully) after applying this event id.
            should_continue: polled between events; returning False cancels the round. Every
                completed step is the reconciler's own, so a cancelled folder is consistent.
            on_progress: ``(done, total)`` after each event.
        """
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        journal = cd / JOURNAL_NAME
        report = ReplayReport(character)
        lock = self.event_log.lock(character)
        if isinstance(store, FolderStore):
            # Crash recovery includes the temp files of interrupted atomic writes: nothing else
            # removes them. Under the lock, no atomic write of this process is in flight.
            with lock:
                report.temp_files_removed = _sweep_temp_files(cd, store.durable)
        start = store.read_sentinel()
        expected: str | None = start.event_id
        report.sentinel_before = expected
        own_last: str | None = expected
        events = read_journal(journal).events
        index_of = {ev.event_id: i for i, ev in enumerate(events)}
        tail = _after(events, expected)
        report.tail = len(tail)

        queue = list(tail)
        frozen = False
        done = 0
        while True:
            outcome = "drained"
            for ev in queue:
                if should_continue is not None and not should_continue():
                    report.cancelled = True
                    outcome = "cancelled"
                    break
                if self.hooks.before_event:
                    self.hooks.before_event(ev)
                with lock:
                    if not frozen and store.read_sentinel().event_id != expected:
                        # Another writer moved the sentinel: apply nothing, write nothing.
                        outcome = "conflict"
                        break
                    stop = self._apply(store, ev, index_of.get(ev.event_id, -1), report)
                    if stop is None and not frozen:
                        try:
                            store.write_sentinel(ev.event_id)
                        except OSError as exc:
                            report.applied.pop()
                            stop = ReplayStop(
                                ev.event_id,
                                index_of.get(ev.event_id, -1),
                                ev.type,
                                "sentinel_write",
                                f"the handler succeeded but the sentinel write failed: {exc}",
                            )
                if stop is not None:
                    report.stopped = stop
                    outcome = "stopped"
                    break
                own_last = ev.event_id
                if not frozen:
                    expected = ev.event_id
                done += 1
                if on_progress:
                    on_progress(done, max(done, report.tail))
                if self.hooks.after_event:
                    self.hooks.after_event(ev)
                if until is not None and ev.event_id == until:
                    report.until_reached = True
                    outcome = "until"
                    break
            if outcome in ("stopped", "cancelled", "until"):
                break
            if outcome == "conflict" and not frozen:
                frozen = report.frozen = True
                log.info("%s: the sentinel was moved by another writer; frozen for the rest of the round", character)
            elif not frozen:
                break  # drained the tail normally
            # Frozen: probe from this round's own last-applied position to the end of the file.
            if report.rescans >= _MAX_FROZEN_RESCANS:
                report.left_behind = len(_after(read_journal(journal).events, own_last))
                if report.left_behind:
                    log.warning(
                        "%s: frozen replay used all %d probes; %d events are left behind the sentinel "
                        "and no later boot replays them",
                        character,
                        _MAX_FROZEN_RESCANS,
                        report.left_behind,
                    )
                break
            if self.hooks.before_probe:
                self.hooks.before_probe(report.rescans + 1)
            report.rescans += 1
            events = read_journal(journal).events
            index_of = {ev.event_id: i for i, ev in enumerate(events)}
            queue = _after(events, own_last)
            if not queue:
                break
        report.sentinel_after = store.read_sentinel().event_id
        return report

    def _apply(self, store: Store, ev: Event, index: int, report: ReplayReport) -> ReplayStop | None:
        handler = self.registry.get(ev.type)
        if handler is None:
            what = repr(ev.type) if ev.type else "(missing type)"
            return ReplayStop(ev.event_id, index, ev.type, "no_handler", f"no replay handler is registered for {what}")
        try:
            changed = run_handler(handler, store, ev.payload)
        except Exception as exc:
            reason, message = block_reason(exc)
            return ReplayStop(ev.event_id, index, ev.type, reason, message)
        report.applied.append(ev.event_id)
        if changed:
            report.changed += 1
        return None

    def repair(self, character: str, event_ids: Iterable[str]) -> ReplayReport:
        """Re-apply the handlers of the given events (orphaned archive events) in journal order,
        without reading or moving the sentinel. Stops at the first failure."""
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        wanted = set(event_ids)
        events = read_journal(cd / JOURNAL_NAME).events
        report = ReplayReport(character)
        report.sentinel_before = report.sentinel_after = store.read_sentinel().event_id
        todo = [(i, ev) for i, ev in enumerate(events) if ev.event_id in wanted]
        report.tail = len(todo)
        with self.event_log.lock(character):
            for i, ev in todo:
                stop = self._apply(store, ev, i, report)
                if stop is not None:
                    report.stopped = stop
                    break
        return report

    async def areconcile(self, character: str, **kwargs: Any) -> ReplayReport:
        """Async twin of :meth:`reconcile`, run in a worker thread."""
        return await asyncio.to_thread(self.reconcile, character, **kwargs)

    def characters(self) -> list[str]:
        """Character folders under the root (dot-folders, files and invalid names ignored)."""
        try:
            entries = sorted(os.scandir(self.event_log.root), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        names = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                check_character_name(entry.name)
            except ValueError:
                continue
            names.append(entry.name)
        return names

    def reconcile_all(self, characters: Iterable[str] | None = None) -> dict[str, ReplayReport]:
        """Reconcile every character (or the given ones), one after another."""
        return {c: self.reconcile(c) for c in (self.characters() if characters is None else characters)}

    async def areconcile_all(self, characters: Iterable[str] | None = None) -> dict[str, ReplayReport]:
        """Reconcile every character concurrently and wait for all of them to finish."""
        names = list(self.characters() if characters is None else characters)
        reports = await asyncio.gather(*(self.areconcile(c) for c in names))
        return dict(zip(names, reports, strict=True))


async def startup_sequence(
    reconciler: Reconciler,
    resume_outbox: Callable[[], Awaitable[Any] | Any],
    characters: Iterable[str] | None = None,
) -> tuple[dict[str, ReplayReport], Any]:
    """Run the startup order of the design record: reconcile everything, *then* resume the outbox.

    The order is load-bearing: outbox operations are background writers that load a whole view
    outside the journal lock; running them while replay repairs that view lets one save a
    pre-replay snapshot over a completed repair, with the sentinel already past the event —
    silent, permanent loss. Reconciliation is awaited to completion first, so they never overlap.
    ``resume_outbox`` is called only afterwards; its result (e.g. the spawned tasks) is returned
    and not awaited, as upstream does.
    """
    reports = await reconciler.areconcile_all(characters)
    resumed = resume_outbox()
    return reports, resumed


# -- dry run ------------------------------------------------------------------------------------


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
    """

    report: ReplayReport
    diff: FolderDiff
    predicted: dict[str, bytes] = field(default_factory=dict)


_SKIP_COPY_PREFIXES = ("time_indexed", "outbox.ndjson")


def _copy_for_replay(src: Path, dst: Path) -> None:
    """Copy the files replay can read or write (regular files only; links are never followed)."""
    dst.mkdir(parents=True)
    for entry in os.scandir(src):
        if entry.is_symlink() or entry.name.startswith(_SKIP_COPY_PREFIXES):
            continue
        if entry.is_dir(follow_symlinks=False) and entry.name in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
            (dst / entry.name).mkdir()
            for sub in os.scandir(entry.path):
                if sub.is_file(follow_symlinks=False):
                    shutil.copyfile(sub.path, dst / entry.name / sub.name)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, dst / entry.name)


def _tracked_files(char_dir: Path) -> dict[str, bytes]:
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
        obj = parse_json_bytes(data)
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


def _sentinel_id(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        obj = parse_json_bytes(data)
    except ValueError:
        return None
    value = obj.get("last_applied_event_id") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


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
                fields = tuple(
                    FieldChange(f, old[key].get(f), new[key].get(f))
                    for f in sorted(set(old[key]) | set(new[key]))
                    if old[key].get(f) != new[key].get(f)
                )
                diff.entries.append(EntryChange(name, key, "changed", fields))
    for rel in diff.files_changed:
        if "/" not in rel:
            continue
        try:
            old_ids = {e.get("id") for e in (parse_json_bytes(before[rel]) if rel in before else [])}
            new_entries = parse_json_bytes(after[rel]) if rel in after else []
        except (ValueError, AttributeError):
            continue
        for e in new_entries if isinstance(new_entries, list) else []:
            if isinstance(e, dict) and e.get("id") not in old_ids:
                diff.shard_entries_added.append(ShardEntryAdded(rel, str(e.get("id"))))
    diff.sentinel_before = _sentinel_id(before.get(SENTINEL_NAME))
    diff.sentinel_after = _sentinel_id(after.get(SENTINEL_NAME))
    return diff


def dry_run(
    char_dir: str | os.PathLike[str],
    registry: HandlerRegistry | None = None,
    *,
    until: str | None = None,
    repair: Iterable[str] | None = None,
) -> DryRun:
    """Replay a character folder into a scratch copy; return the report and a per-file diff.

    The original folder is only read (regular files; links are not followed), never written.
    With ``repair``, the given events' handlers are re-applied instead (orphan repair), without
    moving the sentinel.
    """
    src = Path(char_dir)
    with tempfile.TemporaryDirectory(prefix="memory-inspector-dry-") as tmp:
        scratch_root = Path(tmp) / "root"
        scratch = scratch_root / src.name
        scratch_root.mkdir()
        _copy_for_replay(src, scratch)
        before = _tracked_files(scratch)
        reconciler = Reconciler(
            EventLog(scratch_root), registry, store_factory=lambda cd: FolderStore(cd, durable=False)
        )
        if repair is not None:
            report = reconciler.repair(src.name, repair)
        else:
            report = reconciler.reconcile(src.name, until=until)
        after = _tracked_files(scratch)
    return DryRun(report, diff_files(before, after), after)


def touched_entries(events: Iterable[Event]) -> dict[str, list[str]]:
    """Entry key → ids of the events that touch it, in order (provenance)."""
    out: dict[str, list[str]] = {}
    for ev in events:
        ref = entry_ref(ev.type, ev.payload)
        if ref is not None:
            out.setdefault(ref, []).append(ev.event_id)
    return out


def shard_has_entry(char_dir: Path, archive: str, basename: Any, entry_id: str) -> bool | None:
    """Whether the named shard holds ``entry_id`` (``None``: missing shard, bad name or corrupt)."""
    if not is_shard_name(basename):
        return None
    try:
        entries = load_shard(char_dir / archive / basename)
    except Exception:
        return None
    if entries is None:
        return None
    return any(isinstance(e, dict) and e.get("id") == entry_id for e in entries)
