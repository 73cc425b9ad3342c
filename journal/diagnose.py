"""Read-only diagnosis of a memory folder: the value shared by ``memory-inspector check`` and the GUI.

This module defines the *values* (what is applied, pending, blocked, orphaned, suspect, damaged)
and :func:`diagnose_character` / :func:`diagnose_path` which compute them. Nothing here writes
inside the folder being diagnosed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Event states, in the order a legend shows them.
EVENT_STATES = ("applied", "pending", "blocked", "orphaned", "suspect")

#: Reasons an event is blocked (replay would stop there).
BLOCK_REASONS = ("no_handler", "view_drift", "corrupt_view", "corrupt_shard", "bad_shard_name", "handler_error")

SEVERITIES = ("info", "warning", "error")

#: The closed set of finding codes (documented in the README).
FINDING_CODES = (
    "journal.absent",
    "sentinel.missing",
    "sentinel.malformed",
    "sentinel.unknown_id",
    "tail.pending",
    "replay.blocked",
    "event.orphaned",
    "event.suspect",
    "line.malformed",
    "line.torn_tail",
    "line.glued",
    "line.invalid_utf8",
    "event.duplicate_id",
    "event.unknown_type",
    "view.corrupt",
    "view.drift",
    "shard.corrupt",
    "shard.bad_name",
    "shard.missing_entry",
    "outbox.pending",
    "outbox.dead_letter",
    "tempfile.leftover",
    "compaction.due",
    "server.running",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnosis finding.

    Attributes:
        code: one of :data:`FINDING_CODES`.
        severity: ``info`` | ``warning`` | ``error``.
        message: one line, for people.
        event_id: the event it is about, if any.
        file: the file it is about, relative to the character folder (or the input root), if any.
        line: 1-based journal line, for line defects.
    """

    code: str
    severity: str
    message: str
    event_id: str | None = None
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "event_id": self.event_id,
            "file": self.file,
        }


@dataclass(slots=True)
class EventInfo:
    """What the diagnosis knows about one event (compact: the payload is not kept).

    Attributes:
        index: 0-based position among the journal's events in file order.
        line: 1-based journal line.
        offset: byte offset of the record (re-read the payload from here when needed).
        event_id, type, ts: as in the record.
        entry: the entry the event touches: ``reflection_id`` for reflection events,
            ``"<entity_key>/<entry_id>"`` for persona events, else ``None``.
        state: one of :data:`EVENT_STATES`.
        reason: for blocked / orphaned / suspect: why (``no_handler``, ``view_drift``, ...,
            ``archive_entry_lost``, ``view_differs``), else ``None``.
        message: the reason in words, when there is one.
    """

    index: int
    line: int
    offset: int
    event_id: str
    type: str
    ts: str
    entry: str | None
    state: str = "pending"
    reason: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "state": self.state,
            "reason": self.reason,
        }


@dataclass(slots=True)
class JournalStats:
    present: bool = False
    lines: int = 0
    events: int = 0
    bytes: int = 0


@dataclass(slots=True)
class SentinelInfo:
    """``state`` ∈ ok / missing / malformed / null / unknown_id; ``index`` of the event it names."""

    state: str = "missing"
    event_id: str | None = None
    index: int | None = None


@dataclass(slots=True)
class OutboxOp:
    op_id: str
    type: str | None
    status: str  # "pending" | "dead_letter"
    attempts: int
    ts: str | None
    line: int


@dataclass(slots=True)
class CharacterDiagnosis:
    """Everything ``check`` reports about one character folder.

    Attributes:
        name: the folder name.
        path: absolute path of the folder that was read (inside a private temp copy for zips).
        journal, sentinel: as in the JSON shape.
        events: one :class:`EventInfo` per event, in file order.
        defects: located journal defects (:class:`journal.reader.Defect`).
        findings: every finding, in a stable order.
        blocked: the blocked event, if replay would stop.
        blocked_message: the reason in words.
        outbox: pending and dead-letter outbox operations.
        views_only: no journal and no shards: a cloud-save export.
    """

    name: str
    path: str
    journal: JournalStats = field(default_factory=JournalStats)
    sentinel: SentinelInfo = field(default_factory=SentinelInfo)
    events: list[EventInfo] = field(default_factory=list)
    defects: list[Any] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    blocked: EventInfo | None = None
    blocked_message: str | None = None
    outbox: list[OutboxOp] = field(default_factory=list)
    views_only: bool = False

    def counts(self) -> dict[str, int]:
        c = dict.fromkeys(EVENT_STATES, 0)
        for e in self.events:
            c[e.state] += 1
        c["defects"] = len(self.defects)
        return c

    def to_json(self, all_events: bool = False) -> dict[str, Any]:
        b = self.blocked
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
            "events": [e.to_json() for e in self.events if all_events or e.state != "applied"],
            "defects": [
                {"line": d.line, "offset": d.offset, "kind": d.kind, "recovered_event_id": d.recovered_event_id}
                for d in self.defects
            ],
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(slots=True)
class Diagnosis:
    """The diagnosis of one input PATH (memory root, character folder, or zip export).

    Attributes:
        path: the PATH as given.
        root: the folder actually read (a private temp folder for a zip).
        characters: one entry per character folder, sorted by name.
        is_zip: the input was a zip export (read-only; replay must refuse it).
    """

    path: str
    root: str
    characters: list[CharacterDiagnosis] = field(default_factory=list)
    is_zip: bool = False

    def to_json(self, all_events: bool = False) -> dict[str, Any]:
        return {"schema": 1, "path": self.path, "characters": [c.to_json(all_events) for c in self.characters]}

    def worst_severity(self) -> str:
        worst = "info"
        for c in self.characters:
            for f in c.findings:
                if SEVERITIES.index(f.severity) > SEVERITIES.index(worst):
                    worst = f.severity
        return worst
