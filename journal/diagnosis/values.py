"""The values of a diagnosis: findings, one character's diagnosis, and the diagnosis of a PATH."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from journal.diagnosis.eventlist import EventList
from journal.diagnosis.states import EVENT_STATES, EventInfo
from journal.errors import SeveralCharactersError
from journal.finding import SEVERITIES, Advice, Finding
from journal.outbox import OutboxOp
from journal.reader import is_damaged_line
from journal.runtime import LauncherLock
from journal.sentinel import SentinelInfo
from journal.serverrules import SentinelAfter

if TYPE_CHECKING:
    from journal.engine import TailDecisions
    from journal.inputs import TempRoot
    from journal.servermigrations import ArchiveMigration
    from journal.serverpersona import PersonaEnsurePrediction
    from journal.serverrules import Undecodable

#: The version of the diagnosis document (:meth:`Diagnosis.to_json`, ``check --json``).
DIAGNOSIS_SCHEMA = 1

#: At most this many findings of one code per character; the rest are summed up in one more.
MAX_FINDINGS_PER_CODE = 100


def is_server_start_finding(finding: Finding) -> bool:
    """A finding about what the memory server's next start does to the folder (``server.running``
    says whether it runs *now*, so guarded replay must wait: it is not about its start)."""
    return finding.code.startswith("server.") and finding.code != "server.running"


@dataclass(slots=True)
class JournalStats:
    """The journal as read: whether it is there, its size, and why it could not be read.

    Attributes:
        unreadable: ``None``, or why the file is there but was not read (a FIFO, a link leading
            out, no permission): nothing about its events is known then.
    """

    present: bool = False
    lines: int = 0
    events: int = 0
    bytes: int = 0
    unreadable: str | None = None


#: The launcher-lock probe's value (:class:`journal.runtime.LauncherLock`; ``lock_path`` is its path).
ServerStatus = LauncherLock


@dataclass(frozen=True, slots=True)
class ArchiveOrphan:
    """An archive event at or before the sentinel whose entry is in neither its view nor any
    shard its archive events name (the design record's cross-file archive recovery window).

    Attributes:
        index: the event's index.
        event_id: the event's id.
        archive: ``reflection_archive`` or ``persona_archive``.
        shard: the basename the event names (not necessarily valid).
        entry_id: the archived entry.
        problem: ``None`` when the entry is lost and a repair can put it back into the shard
            (the event is ``orphaned``, ``archive_entry_lost``); else why that cannot be known or
            done: ``corrupt_view`` (the view cannot be read), ``bad_shard_name``, ``corrupt_shard``.
        message: the problem in words (empty for a lost entry).
    """

    index: int
    event_id: str
    archive: str
    shard: str
    entry_id: str
    problem: str | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class EntryChange:
    """One view entry a predicted replay changes.

    Attributes:
        file: ``reflections.json`` or ``persona.json``.
        entry: ``<reflection id>`` or ``<entity_key>/<entry_id>``.
        fields: ``(name, before, after)`` for each field that changes; ``before``/``after`` are
            shown only for numbers, booleans and null (``...`` otherwise: text stays private).
        removed: the entry leaves the view (an archive).
        added: the entry was not in the view.
    """

    file: str
    entry: str
    fields: tuple[tuple[str, Any, Any], ...] = ()
    removed: bool = False
    added: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "entry": self.entry,
            "removed": self.removed,
            "added": self.added,
            "fields": [{"name": n, "before": _shown(b), "after": _shown(a)} for n, b, a in self.fields],
        }


def is_shown(value: Any) -> bool:
    """Whether a changed field's value may be shown: numbers, booleans and null. Text stays private
    (the one rule of ``server_start.changes``, the human output and the window's panel)."""
    return value is None or isinstance(value, (bool, int, float))


def _shown(value: Any) -> Any:
    return value if is_shown(value) else "..."


@dataclass(frozen=True, slots=True)
class ServerStop:
    """Where the server's replay stops: the record (``index`` ``None`` for a record our reader does
    not replay), its type, our block reason, and the reason in words."""

    index: int | None
    line: int
    event_id: str
    type: str
    reason: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
        }


@dataclass(slots=True)
class ServerStart:
    """What the memory server's next start does to one character folder (memory-format §9), step
    by step: persona ensure, reconcile with the server's reader and sentinel rules, then outbox.

    Attributes:
        reconciled: whether its ``characters.json`` lists the character (``None``: not known).
        characters_file: the ``characters.json`` read, if any.
        sentinel: the sentinel as the server's reader finds it (``index``: our index of its event).
        persona: persona ensure's action (``keep``/``create``/``replace``/``unknown``, or ``skip``
            for a character it does not reconcile) and words.
        replays: how many records the server's reconcile runs, from the record after its sentinel.
        applied: how many of them it applies (passed shards included), before it stops.
        stop: where it stops, if it does.
        passed: archive events it moves past although their shard is corrupt (our replay pauses).
        changes: entries its replay changes (at most 100), and ``changes_total``.
        writes: files it writes: ``(path, outside)``; paths inside the folder are relative.
        stray: the shard writes whose payload basename is not a shard basename: ``(path, place)``,
            ``place`` from :func:`journal.serverrules.shard_write_place`.
        persona_events: how many ``persona.*`` records its replay runs.
        start_index: our index of the first event its replay reaches (``None``: none, or not known).
        hidden_lines: lines whose event its reader cannot see (glued onto a torn fragment).
        ours_past_stop: records after where it stops that our guarded replay already applied (the
            applied set): unapplied by the server's start, but their effect is in the views.
        unapplied: records its start leaves unapplied; its next live write orphans them (§9.6).
        outbox: pending outbox operations it starts in the background (not awaited).
        notes: the server's side of each deliberate difference that applies to this folder.
        advice: what a person can do instead, where its start leaves something our guarded
            replay can do (each surface words it).
        persona_ensure: persona ensure's prediction in full (:mod:`journal.serverpersona`), when it
            runs.
        deletes: files it deletes, relative to the folder: the temp files older than 24 h in a
            folder it writes into (memory-format §4.5 correction).
        evidence_seeds: after reconcile, how many live writes its one-shot evidence migration makes
            (``None``: it does not run, its marker is in ``persona.json``; memory-format §9.8.7).
        migration_orphans: records reconcile left unapplied that those writes orphan (each moves
            the sentinel to the journal end) during the same start.
        migration_glues: the journal ends in a torn line, so the migration's first append is glued
            onto it and lost, and the sentinel then names an event its reader cannot see.
        archive: its archive migration of a flat ``reflections_archive.json`` into shards, when it
            runs at this start.
        sentinel_after: what ``events_applied.json`` names once the start is done
            (:class:`journal.serverrules.SentinelAfter`: untouched, the last record its replay
            processed, or a live write's new event).
        raises: where its reconcile of the character raises on bytes that are not UTF-8 (the
            journal or the sentinel, memory-format §9.8.1-2): it then replays nothing, at this
            start and every later one (``None``: it does not).
    """

    reconciled: bool | None = None
    characters_file: str | None = None
    sentinel: SentinelInfo = field(default_factory=SentinelInfo)
    persona: tuple[str, str] = ("keep", "")
    replays: int = 0
    applied: int = 0
    stop: ServerStop | None = None
    passed: list[int] = field(default_factory=list)
    changes: list[EntryChange] = field(default_factory=list)
    changes_total: int = 0
    writes: list[tuple[str, bool]] = field(default_factory=list)
    unapplied: int = 0
    outbox: int = 0
    notes: list[str] = field(default_factory=list)
    advice: list[Advice] = field(default_factory=list)
    stray: list[tuple[str, str]] = field(default_factory=list)
    persona_events: int = 0
    start_index: int | None = None
    hidden_lines: frozenset[int] = frozenset()
    ours_past_stop: int = 0
    raises: Undecodable | None = None
    sentinel_after: SentinelAfter = field(default_factory=SentinelAfter)
    deletes: list[str] = field(default_factory=list)
    persona_ensure: PersonaEnsurePrediction | None = None
    evidence_seeds: int | None = None
    migration_orphans: int = 0
    migration_glues: bool = False
    archive: ArchiveMigration | None = None

    def applies(self, index: int, line: int) -> bool:
        """Whether its replay applies our event ``index`` (on journal ``line``): at or after where
        it starts, before where it stops, and visible to its reader."""
        if self.reconciled is False or self.start_index is None or index < self.start_index:
            return False
        if self.stop is not None and line >= self.stop.line:
            return False
        return line not in self.hidden_lines

    def summary(self) -> str:
        """One line: what the next start does (the human output and the window lead with it)."""
        if self.reconciled is False:
            return "the memory server does not reconcile this character (not in its characters.json)"
        if self.sentinel.state == "unknown":
            return (
                "what the memory server's next start does cannot be predicted: its read of events_applied.json "
                "(not a regular file) may block or find anything"
            )
        parts = []
        if self.raises is not None:
            where = f" (line {self.raises.line})" if self.raises.line is not None else ""
            parts.append(
                f"replays nothing: its read of {self.raises.file} raises on a byte that is not UTF-8 at offset "
                f"{self.raises.offset}{where}, at every start"
            )
        if self.persona[0] == "replace":
            parts.append("replaces persona.json with a fresh persona")
        elif self.persona[0] == "rewrite":
            parts.append("rewrites persona.json (persona ensure)")
        elif self.persona[0] == "create":
            parts.append("creates persona.json")
        if self.raises is not None:
            pass
        elif self.replays == 0:
            parts.append("replays nothing")
        else:
            full = self.sentinel.state != "ok"
            what = f"replays {self.replays} event{'s' if self.replays != 1 else ''}"
            parts.append(what + (" from the start of the journal" if full else ""))
            if self.stop is not None:
                where = f"#{self.stop.index}" if self.stop.index is not None else f"line {self.stop.line}"
                parts.append(f"stops at {where} ({self.stop.reason}) after applying {self.applied}")
        if self.changes_total:
            parts.append(f"changes {self.changes_total} entr{'ies' if self.changes_total != 1 else 'y'}")
        if any(out for _, out in self.writes):
            parts.append("writes outside the folder")
        if self.outbox:
            parts.append(f"then runs {self.outbox} outbox operation{'s' if self.outbox != 1 else ''}")
        return "the memory server's next start " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "reconciled": self.reconciled,
            "characters_file": self.characters_file,
            "sentinel": {
                "state": self.sentinel.state,
                "event_id": self.sentinel.event_id,
                "index": self.sentinel.index,
            },
            "persona_ensure": {
                "action": self.persona[0],
                "message": self.persona[1],
                "changes": [] if self.persona_ensure is None else list(self.persona_ensure.changes),
                "missing_inputs": [] if self.persona_ensure is None else list(self.persona_ensure.missing_inputs),
                "may_rewrite": self.persona_ensure is not None and self.persona_ensure.may_rewrite,
            },
            "replay": {
                "events": self.replays,
                "applied": self.applied,
                "stops": None if self.stop is None else self.stop.to_json(),
                "passed_corrupt_shards": list(self.passed),
                "stray_shard_writes": [{"path": p, "place": w} for p, w in self.stray],
            },
            "changes": [c.to_json() for c in self.changes],
            "changes_total": self.changes_total,
            "writes": [{"path": p, "outside": o} for p, o in self.writes],
            "deletes": list(self.deletes),
            "left_unapplied": self.unapplied,
            "outbox_pending": self.outbox,
            "notes": list(self.notes),
            "advice": [a.to_json() for a in self.advice],
            "summary": self.summary(),
            "sentinel_after": {"by": self.sentinel_after.by, "event_id": self.sentinel_after.event_id},
            "reconcile_raises": None
            if self.raises is None
            else {"file": self.raises.file, "offset": self.raises.offset, "line": self.raises.line},
            "after_reconcile": {
                "evidence_migration": None
                if self.evidence_seeds is None
                else {"seeds": self.evidence_seeds, "orphans": self.migration_orphans, "glues": self.migration_glues},
                "archive_migration": None
                if self.archive is None
                else {
                    "dates": None if self.archive.dates is None else list(self.archive.dates),
                    "undated": self.archive.undated,
                },
            },
        }


@dataclass(slots=True)
class CharacterDiagnosis:
    """Everything ``check`` reports about one character folder.

    Attributes:
        name: the folder name.
        path: absolute path of the folder that was read (inside a private temp copy for zips).
        journal, sentinel: as in the JSON shape.
        events: one :class:`EventInfo` per event, in file order (an :class:`EventList`; any
            sequence of :class:`EventInfo` works for values built by hand).
        defects: located journal defects (:class:`journal.reader.Defect`).
        findings: every finding, in a stable order.
        blocked: the blocked event, if replay would stop.
        blocked_message: the reason in words.
        outbox: pending and dead-letter outbox operations.
        views_only: no journal and no shards: a cloud-save export.
        compaction_due: the journal is due for compaction.
        archive_orphans: archive events whose entry is lost, or cannot be found for sure.
        server_start: what the memory server's next start does to the folder (``None``: not
            predicted, e.g. the folder could not be listed).
        blocked_holds: what the blocked event holds, in words (``"every entry"`` when replay stops
            everything after it), when there is a blocked event.
        tail: our replay's decision for every event after the sentinel, and the sentinel and
            applied set a run writes (:func:`journal.engine.decide_tail`; ``None``: the journal was
            not read).
        not_applicable: why no server start is predicted, in words, when none applies (a
            cloud-save unit is not a memory folder); ``server_start`` is then ``None``.
        cloud_unit: for a cloud-save unit, its verification
            (:class:`journal.cloudsave.verify.UnitCheck`: layout, meta, fingerprint, manifest).
    """

    name: str
    path: str
    journal: JournalStats = field(default_factory=JournalStats)
    sentinel: SentinelInfo = field(default_factory=SentinelInfo)
    events: MutableSequence[EventInfo] = field(default_factory=EventList)
    defects: list[Any] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    blocked: EventInfo | None = None
    blocked_message: str | None = None
    outbox: list[OutboxOp] = field(default_factory=list)
    views_only: bool = False
    compaction_due: bool = False
    archive_orphans: list[ArchiveOrphan] = field(default_factory=list)
    server_start: ServerStart | None = None
    blocked_holds: str | None = None
    tail: TailDecisions | None = None
    not_applicable: str | None = None
    cloud_unit: Any = None

    def counts(self) -> dict[str, int]:
        if isinstance(self.events, EventList):
            c = self.events.state_counts()
        else:
            c = dict.fromkeys(EVENT_STATES, 0)
            for e in self.events:
                c[e.state] += 1
        c["defects"] = sum(1 for d in self.defects if is_damaged_line(d))
        return c

    def worst_severity(self) -> str:
        return worst(f.severity for f in self.findings)

    @property
    def health(self) -> str:
        """The character's health: the highest severity among its findings (``error``,
        ``warning``, ``info``), or ``none`` without findings, whatever the counts (a corrupt view
        with no event problem is an ``error`` character). The one home of that rule."""
        return health_of(f.severity for f in self.findings)

    def listed_events(self, all_events: bool = False) -> Iterator[EventInfo]:
        """The events the JSON shape lists, in order: every event not ``applied``, or all."""
        if all_events:
            return iter(self.events)
        if isinstance(self.events, EventList):
            return self.events.not_applied()
        return (e for e in self.events if e.state != "applied")

    def listed_json(self, all_events: bool = False) -> Iterator[dict[str, Any]]:
        """``to_json()`` of each of :meth:`listed_events`."""
        if all_events and isinstance(self.events, EventList):
            return self.events.iter_json()
        return (e.to_json() for e in self.listed_events(all_events))

    def to_json(self, all_events: bool = False, *, with_events: bool = True) -> dict[str, Any]:
        """The character's object of the ``--json`` shape; ``with_events=False`` leaves its
        ``events`` list empty (for writers that add the events themselves, a slice at a time)."""
        b = self.blocked
        events = list(self.listed_json(all_events)) if with_events else []
        return {
            "name": self.name,
            "journal": {
                "present": self.journal.present,
                "lines": self.journal.lines,
                "events": self.journal.events,
                "bytes": self.journal.bytes,
            },
            "sentinel": {
                "state": self.sentinel.state,
                "event_id": self.sentinel.event_id,
                "index": self.sentinel.index,
            },
            "counts": self.counts(),
            "blocked": None
            if b is None
            else {
                "event_id": b.event_id,
                "index": b.index,
                "type": b.type,
                "reason": b.reason,
                "message": self.blocked_message or b.message or "",
            },
            "events": events,
            "defects": [
                {"line": d.line, "offset": d.offset, "kind": d.kind, "recovered_event_id": d.recovered_event_id}
                for d in self.defects
                if is_damaged_line(d)  # an unknown-type record is its event (blocked), not a damaged line
            ],
            "findings": [f.to_json() for f in self.findings],
            "server_start": None if self.server_start is None else self.server_start.to_json(),
            "server_start_not_applicable": self.not_applicable,
            "cloud_unit": None if self.cloud_unit is None else self.cloud_unit.summary_json(),
        }


#: The health words, best first (:attr:`CharacterDiagnosis.health`).
HEALTH_LEVELS = ("none", "info", "warning", "error")


def health_of(severities: Iterable[str]) -> str:
    """The highest severity among ``severities``, or ``none`` when there is none."""
    rank = 0
    for s in severities:
        rank = max(rank, HEALTH_LEVELS.index(s))
    return HEALTH_LEVELS[rank]


def worst(severities: Iterable[str]) -> str:
    rank = 0
    for s in severities:
        rank = max(rank, SEVERITIES.index(s))
    return SEVERITIES[rank]


@dataclass(slots=True)
class Diagnosis:
    """The diagnosis of one input PATH (memory root, character folder, or zip export).

    For a zip, :attr:`root` is a private temp folder holding the extracted copy. It stays on disk
    while the value is alive, so a viewer (the GUI keeps the diagnosis it shows open) can read the
    files behind it; call :meth:`close`, or use the value as a context manager, to remove it. It
    is also removed when the value is garbage-collected.

    Attributes:
        path: the PATH as given.
        root: the folder actually read (a private temp folder for a zip).
        characters: one entry per character folder, sorted by name.
        is_zip: the input was a zip export (read-only; replay must refuse it).
        kind: ``root`` (a memory root) or ``character`` (PATH was one character folder).
        memory_root: the folder holding the character folders (inside :attr:`root` for a zip).
        findings: findings about the input as a whole (refused zip members); each is also
            copied into every character's findings, because the JSON shape has no other place.
        server: the launcher-lock probe, shared by all characters.
        characters_file: the memory server's ``characters.json`` the diagnosis read (given, or
            found beside the memory root; :func:`journal.inputs.resolve`), or ``None``: a
            re-diagnosis of one of its characters reads the same one.
        cloud_layout: the cloud-save layout PATH is (``cloudsave``, ``unit``, ``legacy`` or
            ``backup``, :class:`journal.cloudsave.layout.CloudInput`), or ``None``.
    """

    path: str
    root: str
    characters: list[CharacterDiagnosis] = field(default_factory=list)
    is_zip: bool = False
    kind: str = "root"
    memory_root: str | None = None
    findings: list[Finding] = field(default_factory=list)
    server: ServerStatus | None = None
    characters_file: str | None = None
    cloud_layout: str | None = None
    _temp: TempRoot | None = field(default=None, repr=False, compare=False)

    def to_json(self, all_events: bool = False, *, with_events: bool = True) -> dict[str, Any]:
        return {
            "schema": DIAGNOSIS_SCHEMA,
            "path": self.path,
            "characters": [c.to_json(all_events, with_events=with_events) for c in self.characters],
        }

    def only_character(self) -> CharacterDiagnosis:
        """The character PATH holds, for a command that reads one (``history``, ``chat``, ``diff``).

        Raises:
            SeveralCharactersError: it holds several (a PATH holding none was refused already).
        """
        return SeveralCharactersError.only(self.path, self.characters)

    def worst_severity(self) -> str:
        return worst([f.severity for c in self.characters for f in c.findings] + [f.severity for f in self.findings])

    def close(self) -> None:
        """Remove the private temp folder of a zip export (no-op otherwise; idempotent)."""
        if self._temp is not None:
            self._temp.close()

    def __enter__(self) -> Diagnosis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
