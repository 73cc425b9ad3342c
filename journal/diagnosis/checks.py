"""One function per check of a character folder; each reads what the ones before it found.

:func:`journal.diagnosis.character.diagnose_character` runs them in order over one
:class:`Character`, the state of a diagnosis in progress.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from journal import fs
from journal.appliedset import APPLIED_SET_NAME, applied_beyond, read_applied_set
from journal.codec import same_json
from journal.compaction import compaction_reason, first_line_ts
from journal.diagnosis.eventlist import EventList
from journal.diagnosis.findings import DEFECT_FINDINGS, Findings, defect_message
from journal.diagnosis.folder import Folder, ProjectionStore, probe_path
from journal.diagnosis.values import ArchiveOrphan, CharacterDiagnosis, ServerStatus, is_shown
from journal.errors import ViewDriftError
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fs import is_leftover_temp
from journal.handlers import (
    PERSONA_EVIDENCE_KEYS,
    REFLECTION_EVIDENCE_KEYS,
    ArchiveTarget,
    HandlerRegistry,
    archive_target,
    persona_evidence_updated,
    reflection_evidence_updated,
    run_handler,
)
from journal.layout import MANAGED_MEMORY_FILENAMES
from journal.outbox import MEMORY_LIVENESS_MAX_ATTEMPTS, OUTBOX_NAME, OutboxOp, OutboxRead, parse_outbox
from journal.park import PARKED_NAME, ParkedRead, is_parked, read_parked
from journal.reader import Defect, events_at
from journal.recorded import RecordedCharacter
from journal.sentinel import locate_sentinel
from journal.serverrules import CharacterList
from journal.shards import is_shard_name
from journal.views import PERSONA, REFLECTIONS, SentinelRead, read_sentinel


@dataclass(slots=True)
class Character:
    """One character folder while it is being diagnosed.

    Attributes:
        diag: the value being filled in.
        dir: the folder.
        root_real: the resolved memory root (links leading outside it are not followed).
        registry: the handlers replay would use.
        findings: where findings are collected.
        now: the time the compaction age is measured against (``None``: now).
        names: the folder's entries.
        events: the journal's events (the diagnosis's :class:`EventList`).
        defects: the journal's located defects.
        journal_ok: the journal exists and was read.
        sindex: index of the sentinel's event, -1 when replay starts from the first event.
        folder: the views and shards, read once.
        sentinel_read: the sentinel file as read.
        outbox_pending: how many outbox operations are pending.
        characters: the memory server's ``characters.json``, as read.
        tail: what :func:`journal.diagnosis.pending.decide_pending` found (its ``TailResult``).
        parked: ``events_parked.ndjson`` as read (events a person decided to go past).
        applied: the ids the valid applied set names (applied past the sentinel by our replay).
        bom_lines: lines whose event follows a UTF-8 BOM (the memory server's reader skips them).
        recorded: what a support bundle's manifest records of this folder's original (``None``:
            not a bundle's folder).
    """

    diag: CharacterDiagnosis
    dir: Path
    root_real: str
    registry: HandlerRegistry
    findings: Findings
    now: datetime | None
    names: set[str] = field(default_factory=set)
    events: EventList = field(default_factory=EventList)
    defects: list[Defect] = field(default_factory=list)
    journal_ok: bool = False
    sindex: int = -1
    folder: Folder | None = None
    sentinel_read: SentinelRead = field(default_factory=lambda: SentinelRead("missing"))
    outbox_pending: int = 0
    characters: CharacterList = field(default_factory=CharacterList)
    tail: Any = None
    parked: ParkedRead = field(default_factory=ParkedRead)
    applied: frozenset[str] = frozenset()
    bom_lines: list[int] = field(default_factory=list)
    recorded: RecordedCharacter | None = None

    @property
    def journal_path(self) -> Path:
        return self.dir / JOURNAL_NAME


PARKED_MESSAGE = f"parked by a person ({PARKED_NAME}): replay never applies it and goes past it"


def check_leftovers(c: Character) -> None:
    """Temp files a crashed atomic write left in the folder (the archive folders: :meth:`Folder.scan_archives`)."""
    for name in sorted(c.names):
        if is_leftover_temp(name):
            c.findings.add("tempfile.leftover", "info", f"{name} is left over from a crashed atomic write", file=name)


def check_sentinel(c: Character) -> None:
    """Where the sentinel is (its state and the index of its event), and the findings that go with it."""
    add = c.findings.add
    n = len(c.events)
    sprobe = probe_path(c.dir / SENTINEL_NAME, c.root_real)
    if sprobe.kind == "refused":
        add("input.refused", "warning", f"{SENTINEL_NAME} is {sprobe.reason}", file=SENTINEL_NAME)
        sentinel = SentinelRead("refused", message=f"is {sprobe.reason}")
    else:
        sentinel = read_sentinel(c.dir)
    c.sentinel_read = sentinel
    c.parked = read_parked(c.dir)
    if c.parked.state == "refused":
        add(
            "input.refused",
            "warning",
            f"{PARKED_NAME}: {c.parked.message}; guarded replay refuses to run",
            file=PARKED_NAME,
        )
    aset = read_applied_set(c.dir, sentinel)
    c.applied = applied_beyond(aset, sentinel.event_id)
    if aset.state in ("refused", "malformed"):
        add(
            "input.refused",
            "warning",
            f"{APPLIED_SET_NAME} is {aset.state} ({aset.message}): it is ignored, as if missing",
            file=APPLIED_SET_NAME,
        )
    info = c.diag.sentinel = locate_sentinel(sentinel, c.events.index_of)
    c.sindex = -1 if info.index is None else info.index
    if info.state == "missing" and n:
        add(
            "sentinel.missing", "warning", f"no {SENTINEL_NAME}: replay starts from the first event", file=SENTINEL_NAME
        )
    elif info.state == "malformed":
        add(
            "sentinel.malformed",
            "warning",
            f"{SENTINEL_NAME} is unusable ({sentinel.message}): replay starts from the first event",
            file=SENTINEL_NAME,
        )
    elif info.state == "unknown_id":
        add(
            "sentinel.unknown_id",
            "warning" if n else "info",
            f"the sentinel names event {info.event_id}, which is not in the journal "
            "(a restored or compacted folder?): replay starts from the first event",
            event_id=info.event_id,
            file=SENTINEL_NAME,
        )


def check_unhandled_orphans(c: Character) -> None:
    """Events at or before the sentinel whose type has no handler: never applied (the design
    record's known limitation)."""
    events, sindex = c.events, c.sindex
    c.events.fill_states(sindex)
    for eid in sorted(c.parked.ids):
        k = events.index_of(eid)
        if k is not None and k <= sindex:
            events.set_state(k, "applied", "parked", PARKED_MESSAGE)  # gone past, never applied
    if sindex < 0:
        return
    handled = c.registry.names()
    types = events.types()[: sindex + 1]
    if set(types) <= handled:
        return
    for i, etype in enumerate(types):
        if etype in handled:
            continue
        if is_parked(c.parked, events.event_id(i)):
            events.set_state(i, "applied", "parked", PARKED_MESSAGE)
            continue
        what = repr(etype) if etype else "(missing type)"
        message = (
            f"type {what} has no replay handler, yet the sentinel is past it: a live write moved the "
            "sentinel over an unapplied tail (the design record's known limitation); it was never applied"
        )
        events.set_state(i, "orphaned", "no_handler", message)
        c.findings.add("event.orphaned", "error", f"event #{i} ({what}): {message}", event_id=events.event_id(i))


def check_archives(c: Character) -> None:
    """Archive events: bad shard names anywhere; lost entries and missing shard entries at or
    before the sentinel."""
    events, sindex, folder, findings = c.events, c.sindex, c.folder, c.findings
    assert folder is not None
    targets = []
    names_by_entry: dict[tuple[str, Hashable], list[object]] = {}
    for index, keys in events.kept_keys():
        if keys.archive_shard_path is None:
            continue
        target = archive_target(events.type(index), keys)
        if target is None:
            continue
        targets.append((index, target))
        names_by_entry.setdefault((target.archive, target.entry_id), []).append(target.shard)
        if not (isinstance(target.shard, str) and is_shard_name(target.shard)):
            findings.add(
                "shard.bad_name",
                "error",
                f"event #{index} names the shard {target.shard!r}, which is not a shard basename "
                "(YYYY-MM-DD_<8 hex>.json): nothing may be written there",
                event_id=events.event_id(index),
            )
    for index, target in targets:
        if index > sindex:
            continue  # pending: the dry run of the tail says what replay would do
        in_named = folder.shard_holds(target.archive, target.shard, target.entry_id)
        elsewhere = [
            folder.shard_holds(target.archive, other, target.entry_id)
            for other in names_by_entry[(target.archive, target.entry_id)]
            if other != target.shard
        ]
        if in_named is not False or any(r is not False for r in elsewhere):
            # Found in a shard, or a corrupt shard may hold it (shard.corrupt says so); when only
            # that corrupt shard may, a repair cannot be planned.
            held = folder.has_entry(target.view, target.entity_key, target.entry_id) if in_named is None else True
            if not held and not any(elsewhere):
                _orphan(c, index, target, "corrupt_shard", f"shard {target.archive}/{target.shard} is corrupt")
            continue
        eid = events.event_id(index)
        in_view = folder.has_entry(target.view, target.entity_key, target.entry_id)
        if in_view is None:
            _orphan(c, index, target, "corrupt_view", f"{target.view} cannot be read")
        elif in_view is False:
            if isinstance(target.shard, str) and is_shard_name(target.shard):
                _orphan(c, index, target, None, "")
            else:
                _orphan(c, index, target, "bad_shard_name", f"invalid shard basename {target.shard!r}")
        shard_rel = f"{target.archive}/{target.shard}" if isinstance(target.shard, str) else target.archive
        what = target.entry_id if target.entity_key is None else f"{target.entity_key}/{target.entry_id}"
        lost = in_view is False
        findings.add(
            "shard.missing_entry",
            "error" if lost else "warning",
            f"event #{index} archived {what} into {shard_rel}, which does not hold it"
            + ("" if lost else f" (it is still in {target.view})"),
            event_id=eid,
            file=shard_rel if isinstance(target.shard, str) and is_shard_name(target.shard) else None,
        )
        if lost:
            message = (
                f"{what} is in neither {target.view} nor {shard_rel}: the archive stopped between the journal "
                "event and the shard append; only this event's payload still holds the entry"
            )
            events.set_state(index, "orphaned", "archive_entry_lost", message)
            findings.add("event.orphaned", "error", f"event #{index}: {message}", event_id=eid, file=shard_rel)


def _orphan(c: Character, index: int, target: ArchiveTarget, problem: str | None, message: str) -> None:
    c.diag.archive_orphans.append(
        ArchiveOrphan(
            index, c.events.event_id(index), target.archive, str(target.shard), target.entry_id, problem, message
        )
    )


_ABSENT = object()
_SCALARS = (str, int, float, bool, type(None))


def _evidence_already_there(folder: Folder, handler: object, payload: Any) -> bool:
    """A shortcut for the two evidence handlers (most of a journal): True only when running the
    handler could not change anything, because every evidence value of the payload is already on
    the entry it finds (or it finds none). Anything else runs the real handler."""
    if not isinstance(payload, dict):
        return False
    keys: tuple[str, ...]
    if handler is reflection_evidence_updated:
        view, keys = folder.views.get(REFLECTIONS), REFLECTION_EVIDENCE_KEYS
        rid = payload.get("reflection_id")
        if not rid:
            return True
        if not _hashable(rid):
            return False
        matches = folder.reflection_ids.get(rid)
    elif handler is persona_evidence_updated:
        view, keys = folder.views.get(PERSONA), PERSONA_EVIDENCE_KEYS
        key, eid = payload.get("entity_key"), payload.get("entry_id")
        if not key or not eid:
            return True
        if not (isinstance(key, str) and _hashable(eid)):
            return False
        matches = folder.persona_ids.get((key, eid))
    else:
        return False
    if view is None or view.error is not None:
        return False
    if not matches:
        return True
    entry = matches[0]
    for k in keys:
        if k in payload:
            have, want = entry.get(k, _ABSENT), payload[k]
            # Same JSON scalar only (1, 1.0 and True differ; NaN and containers go to the handler).
            if type(have) is not type(want) or type(want) not in _SCALARS or have != want:
                return False
    return True


def _hashable(value: object) -> bool:
    return isinstance(value, Hashable) and not isinstance(value, (list, dict))


def _merge_evidence_there(folder: Folder, payload: Any) -> bool:
    """Whether a ``persona.entry_updated``'s evidence and ``merged_from_ids`` are on its entry
    (the same JSON values), which is what a correction merge leaves: it rewrites the text only."""
    if not isinstance(payload, dict):
        return False
    key, eid = payload.get("entity_key"), payload.get("entry_id")
    if not (isinstance(key, str) and _hashable(eid)):
        return False
    matches = folder.persona_ids.get((key, eid))
    if not matches:
        return True  # no entry: the handler changes nothing, so nothing is missing
    entry = matches[0]
    return all(
        same_json(entry.get(k, _ABSENT), payload[k])
        for k in (*PERSONA_EVIDENCE_KEYS, "merged_from_ids")
        if k in payload
    )


def check_suspects(c: Character) -> None:
    """The last event of each entry, at or before the sentinel: would its handler still change
    something in the folder as it is now?"""
    events, sindex, folder, registry, findings = c.events, c.sindex, c.folder, c.registry, c.findings
    assert folder is not None
    if sindex < 0 or not c.journal_ok:
        return
    last = dict(zip(events.entries, range(len(events)), strict=True))
    last.pop(None, None)
    handled = registry.names()
    candidates = [
        i
        for i in last.values()
        if i <= sindex
        and events.type(i) in handled
        and events.state(i) == "applied"
        and not is_parked(c.parked, events.event_id(i))
    ]
    if not candidates:
        return
    found = events_at(c.journal_path, (events.offset(i) for i in candidates))
    store = ProjectionStore(folder)
    replaced: set[str | None] = set()
    for i in sorted(candidates):
        ev = found.get(events.offset(i))
        etype = events.type(i)
        handler = registry.get(etype)
        if ev is None or ev.event_id != events.event_id(i) or handler is None:
            continue
        payload = ev.payload
        if _evidence_already_there(folder, handler, payload):
            continue
        store.focus(payload)
        eid = events.event_id(i)
        try:
            changed = run_handler(handler, store, payload)
        except ViewDriftError as exc:
            if not _merge_evidence_there(folder, payload):
                # The text does not match, and neither does the merge's evidence: the merge never
                # reached persona.json (a crash before the save, then a live write moved the
                # sentinel past it). A correction merge changes the text only.
                message = (
                    f"its text hash does not match ({exc}), and the merge's evidence is not on the entry either: "
                    "the merge may never have been applied (a crash before persona.json was saved, then a live "
                    "write moved the sentinel past it); a correction merge changes the text only (a heuristic)"
                )
                events.set_state(i, "suspect", "view_differs", message)
                findings.add("event.suspect", "warning", f"event #{i} ({etype}): {message}", event_id=eid, file=PERSONA)
                continue
            # The entry's text moved on after an applied merge: a correction merge rewrites it
            # without an event (memory-format §9.5). Normal, so only info; it matters only if the
            # merge replays again, which check_tail (pending) and the server model (a full replay) say.
            findings.add(
                "view.moved_on",
                "info",
                f"event #{i} ({etype}, {events.entries[i]}): the entry's text changed after this applied merge, "
                "without an event (a correction merge, or a hand edit); normal: nothing replays it unless the "
                "merge event is replayed again",
                event_id=eid,
                file=PERSONA,
            )
            continue
        except Exception:
            continue  # a corrupt view or shard, or a bad name: their own findings say so
        if changed and store.written and store.written <= {REFLECTIONS, PERSONA}:
            # Only views, no shard: its values are not in the view (a download, or a hand edit).
            # One view.replaced finding per character says it, entry by entry (check_replaced).
            events.set_state(i, "suspect", "view_differs", "the view's values differ from this event's (view.replaced)")
            replaced.add(events.entries[i])
            continue
        if changed:
            files = ", ".join(sorted(store.written)) or "the folder"
            message = (
                f"applying it to the folder now would still change {files}: its effect is not visible, or the "
                "entry was changed outside the journal since (a heuristic)"
            )
            events.set_state(i, "suspect", "view_differs", message)
            findings.add(
                "event.suspect",
                "warning",
                f"event #{i} ({etype}, {events.entries[i]}): {message}",
                event_id=eid,
                file=files if store.written else None,
            )

    if replaced:
        check_replaced(c, store, replaced)


#: Text a ``view.replaced`` finding may show of a value besides numbers, booleans and null: the
#: handlers' enumerated fields (never text, memory-format §9.5).
_SHOWN_WORDS = frozenset({"status"})


def _value_words(name: str, value: Any) -> str:
    if is_shown(value) or (name in _SHOWN_WORDS and isinstance(value, str) and len(value) <= 40):
        return json.dumps(value, ensure_ascii=False)
    return "(a value)"


def check_replaced(c: Character, store: ProjectionStore, entries: set[str | None]) -> None:
    """One ``view.replaced`` finding: entries whose last applied event's values are not in the view,
    with no pending event to explain it (issue 26 item 4): its views came from elsewhere (a cloud
    download) while its journal stayed. The cause is named a download only with evidence
    (:func:`download_evidence`)."""
    parts = []
    for name, ref, before, after in store.changed_entries():
        if ref not in entries or after is None:
            continue
        old = before or {}
        fields = [
            f"{k} {_value_words(k, old.get(k))} in the view, {_value_words(k, after.get(k))} by the journal"
            for k in [*old, *(k for k in after if k not in old)]
            if k not in old or k not in after or not same_json(old.get(k), after.get(k))
        ]
        parts.append(f"{name} {ref}: {', '.join(fields) or 'differs'}")
    if not parts:
        return
    evidence = download_evidence(c)
    cause = (
        f"the views were replaced by a cloud download ({evidence})"
        if evidence
        else "views replaced or edited outside the journal"
    )
    shown = "; ".join(parts[:20]) + (f"; … and {len(parts) - 20} more" if len(parts) > 20 else "")
    c.findings.add(
        "view.replaced",
        "warning",
        f"{len(parts)} entr{'y' if len(parts) == 1 else 'ies'} of the views disagree with the last applied event "
        f"of the journal, and no pending event explains it: {cause}; the server's start replays nothing for them "
        f"(journal and views now disagree silently): {shown}",
        file=", ".join(sorted({p.split(" ", 1)[0] for p in parts})),
    )


def download_evidence(c: Character) -> str | None:
    """Evidence that a cloud download replaced this folder's views: a download backup of this
    character, or ``root_state.json``'s ``last_migration_result`` naming a download, under the
    anchor beside the opened memory root (never above the folder that was opened)."""
    from journal.cloudsave.anchor import download_backups, read_root_state  # cloudsave imports the diagnosis

    anchor = c.dir.parent.parent
    opened = Path(c.root_real)
    if not (fs.is_inside(anchor, opened.parent) or fs.is_inside(anchor, opened)):
        return None
    found = []
    backups = download_backups(anchor, c.diag.name)
    if backups:
        found.append("download backups: " + ", ".join(str(b.path) for b in backups))
    state = read_root_state(anchor)
    last = state.last_migration_result if state is not None else None
    if last and "download" in last:
        found.append(f"state/root_state.json last_migration_result {last}")
    return "; ".join(found) or None


def check_defects(c: Character) -> None:
    """One finding per located journal defect."""
    for d in c.defects:
        code, severity = DEFECT_FINDINGS.get(d.kind, ("line.malformed", "warning"))
        c.findings.add(
            code,
            severity,
            defect_message(d),
            event_id=d.recovered_event_id or d.event_id,
            file=JOURNAL_NAME,
            line=d.line,
        )


def check_outbox(c: Character) -> None:
    """Pending and abandoned outbox operations."""
    oprobe = probe_path(c.dir / OUTBOX_NAME, c.root_real)
    if oprobe.kind == "refused":
        c.findings.add("input.refused", "warning", f"{OUTBOX_NAME} is {oprobe.reason}", file=OUTBOX_NAME)
        return
    if oprobe.kind == "missing":
        return
    try:
        if oprobe.kind != "file":
            raise IsADirectoryError(21, "Is a directory")
        with fs.open_regular(c.dir / OUTBOX_NAME) as fh:
            outbox = parse_outbox(fh.read())
    except OSError as exc:
        c.findings.add(
            "outbox.pending", "warning", f"{OUTBOX_NAME} cannot be read: {exc.strerror or exc}", file=OUTBOX_NAME
        )
        return
    c.outbox_pending = len(outbox.pending)
    _outbox_findings(c.diag, outbox, c.findings)


def _outbox_findings(diag: CharacterDiagnosis, outbox: OutboxRead, findings: Findings) -> None:
    diag.outbox = [*outbox.pending, *outbox.dead_letters]

    def summary(ops: list[OutboxOp]) -> str:
        counts: dict[str, int] = {}
        for op in ops:
            counts[op.type or "(no type)"] = counts.get(op.type or "(no type)", 0) + 1
        return ", ".join(f"{t} ×{c}" for t, c in sorted(counts.items()))

    if outbox.pending:
        k = len(outbox.pending)
        doomed = sum(1 for op in outbox.pending if op.attempts >= MEMORY_LIVENESS_MAX_ATTEMPTS)
        extra = (
            f"; {doomed} already failed {MEMORY_LIVENESS_MAX_ATTEMPTS} times and will be abandoned unrun"
            if doomed
            else ""
        )
        findings.add(
            "outbox.pending",
            "info",
            f"{k} outbox operation{'s' if k != 1 else ''} pending ({summary(outbox.pending)}): "
            f"the memory server's next start runs them, in the background{extra}",
            file=OUTBOX_NAME,
        )
    if outbox.dead_letters:
        k = len(outbox.dead_letters)
        findings.add(
            "outbox.dead_letter",
            "warning",
            f"{k} outbox operation{'s' if k != 1 else ''} abandoned after {MEMORY_LIVENESS_MAX_ATTEMPTS} failed "
            f"attempts ({summary(outbox.dead_letters)}): their work was never done",
            file=OUTBOX_NAME,
        )


def check_compaction(c: Character) -> None:
    """Whether the journal is due for compaction (memory-format §4.4)."""
    if not c.journal_ok:
        return
    reason = compaction_reason(c.diag.journal.lines, _first_ts(c), c.now)
    if reason is not None:
        c.diag.compaction_due = True
        c.findings.add(
            "compaction.due",
            "info",
            f"the journal is due for compaction: {reason} (nothing compacts it automatically)",
            file=JOURNAL_NAME,
        )


def _first_ts(c: Character) -> Any:
    """The ``ts`` of the journal's first line (``None``: unreadable)."""
    try:
        with fs.open_regular(c.journal_path) as fh:
            return first_line_ts(fh.readline(1 << 20))
    except OSError:
        return None


def check_absent(c: Character) -> None:
    """No journal: deleted, a views-only export, or a character that never recorded an event."""
    if c.diag.journal.present:
        return
    add, names, folder = c.findings.add, c.names, c.folder
    assert folder is not None
    has_shards = any(folder.archive_dirs.values())
    if SENTINEL_NAME in names:
        add(
            "journal.absent",
            "warning",
            f"no {JOURNAL_NAME}, but {SENTINEL_NAME} exists: the journal was deleted or not copied",
            file=JOURNAL_NAME,
        )
    elif not has_shards and OUTBOX_NAME not in names and names & MANAGED_MEMORY_FILENAMES:
        c.diag.views_only = True
        add(
            "journal.absent",
            "info",
            "views only: no journal, sentinel or shard archives, as in a cloud-save export "
            "(memory-format §6.1); there is nothing to replay",
            file=JOURNAL_NAME,
        )
    else:
        add(
            "journal.absent", "info", f"no {JOURNAL_NAME}: this character has not recorded any event", file=JOURNAL_NAME
        )


def check_server(c: Character, server: ServerStatus) -> None:
    """Whether the memory server holds its launcher lock now."""
    if server.state == "running":
        c.findings.add("server.running", "warning", f"{server.message}; replay must not run now", file=server.lock_path)
    elif server.state == "unknown":
        c.findings.add("server.running", "info", f"whether the memory server is running is unknown: {server.message}")
