"""The value of a comparison of two exports of one character: pure data, shown by the CLI and the
window alike (the ``--json`` shape, schema 2, is :meth:`Comparison.to_json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from inspector.core.compare.tree import ValueChange
from journal.dryrun import FieldChange

#: Schema 2 (issue 25): ``status``, ``problems``, ``files``, ``states`` and the journal's
#: ``changed`` and ``damage_only_*``; ``identical`` compares every file by content.
COMPARE_SCHEMA = 2

#: What a comparison found: both read and equal, they differ, or a side could not be read.
STATUSES = ("identical", "different", "unreadable")


class EventRef(NamedTuple):
    """An event of one side: its 0-based index among that journal's events, id, type and line.

    A named tuple, not a frozen dataclass: a comparison may list 100,000s of them, and a tuple is
    made in C."""

    index: int
    event_id: str
    type: str
    line: int

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "event_id": self.event_id, "type": self.type, "line": self.line}


@dataclass(frozen=True, slots=True)
class DamageRef:
    """A located journal defect of one side (:class:`journal.reader.Defect`, without its text)."""

    line: int
    kind: str
    recovered_event_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "recovered_event_id": self.recovered_event_id}


@dataclass(slots=True)
class JournalSide:
    """One side's journal: whether it exists, its event count, its damage, and its sentinel.

    Attributes:
        sentinel_state: as :class:`journal.sentinel.SentinelInfo` (``ok``, ``missing``, …).
        sentinel_event_id, sentinel_index: the event it names and its index, if found.
        error: why the journal could not be read.
    """

    present: bool = False
    events: int = 0
    lines: int = 0
    damage: list[DamageRef] = field(default_factory=list)
    sentinel_state: str = "missing"
    sentinel_event_id: str | None = None
    sentinel_index: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "present": self.present,
            "events": self.events,
            "lines": self.lines,
            "error": self.error,
            "damage": [d.to_json() for d in self.damage],
            "sentinel": {
                "state": self.sentinel_state,
                "event_id": self.sentinel_event_id,
                "index": self.sentinel_index,
            },
        }


@dataclass(frozen=True, slots=True)
class EventChange:
    """An event both sides hold (the same id) whose record differs: its type, ts or payload.

    Attributes:
        index_a, index_b: its index on each side (equal inside the common prefix).
        type: its type on A's side.
        changes: the first differences, at field paths (``type``, ``ts``, ``payload.<field>``).
        total: how many differences there are in all.
    """

    event_id: str
    index_a: int
    index_b: int
    type: str
    changes: tuple[ValueChange, ...]
    total: int

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "index_a": self.index_a,
            "index_b": self.index_b,
            "type": self.type,
            "changes": [c.to_json() for c in self.changes],
            "total": self.total,
        }


@dataclass(slots=True)
class JournalDiff:
    """The two journals side by side, record by record.

    Attributes:
        common_prefix: how many events, from the first, have the same ids in the same order.
        diverges_at: the first index where they differ (``None``: one is a prefix of the other,
            or they are equal).
        only_a, only_b: events whose id the other side does not hold, in order.
        changed: events both hold whose type, ts or payload differs, in A's order.
        damage_only_a, damage_only_b: damaged lines of one side that the other does not have the
            same (the same kind, the same content, after as many events): damage is content.
    """

    a: JournalSide = field(default_factory=JournalSide)
    b: JournalSide = field(default_factory=JournalSide)
    common_prefix: int = 0
    diverges_at: int | None = None
    only_a: list[EventRef] = field(default_factory=list)
    only_b: list[EventRef] = field(default_factory=list)
    changed: list[EventChange] = field(default_factory=list)
    damage_only_a: list[DamageRef] = field(default_factory=list)
    damage_only_b: list[DamageRef] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return (
            self.a.present == self.b.present
            and self.a.events == self.b.events == self.common_prefix
            and not (self.only_a or self.only_b or self.changed or self.damage_only_a or self.damage_only_b)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "common_prefix": self.common_prefix,
            "diverges_at": self.diverges_at,
            "only_a": [e.to_json() for e in self.only_a],
            "only_b": [e.to_json() for e in self.only_b],
            "changed": [e.to_json() for e in self.changed],
            "damage_only_a": [d.to_json() for d in self.damage_only_a],
            "damage_only_b": [d.to_json() for d in self.damage_only_b],
        }


@dataclass(frozen=True, slots=True)
class FileDiff:
    """A file (relative to the character folder) that differs.

    Attributes:
        change: ``added`` (only in B), ``removed`` (only in A) or ``changed``.
        rule: how it was compared: ``value`` (parsed JSON), ``lines`` (each line's parsed value),
            ``bytes``.
        changes: for ``value`` / ``lines``: the first differences, at field paths (a line file's
            paths start with the line's position among its non-blank lines, ``[3].status``).
        total: how many differences there are in all.
        note: why it was compared as it was, when that is not its rule (a side is not JSON, a link).
    """

    file: str
    change: str
    rule: str
    changes: tuple[ValueChange, ...] = ()
    total: int = 0
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "change": self.change,
            "rule": self.rule,
            "changes": [c.to_json() for c in self.changes],
            "total": self.total,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class InputProblem:
    """Why a side could not be read whole: a file it cannot read, or input it refused (a zip
    member, a link leading out of the folder, a special file). Either makes the comparison
    ``unreadable`` (exit 2): what was not read cannot be called equal.

    Attributes:
        side: ``a`` or ``b``.
        file: the file, relative to the character folder or the input (``None``: the input).
        code: the diagnosis's finding code (``input.refused``, ``journal.absent``) or ``unreadable``.
    """

    side: str
    file: str | None
    message: str
    code: str = "unreadable"

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "file": self.file, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ParkRef:
    """An event a person parked on one side (``events_parked.ndjson``) and the state its diagnosis
    gives it (``index``/``state`` ``None``: the journal does not hold it)."""

    event_id: str
    index: int | None
    state: str | None
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "index": self.index, "state": self.state, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class StateChange:
    """An event both sides hold whose diagnosis gives it another state or reason."""

    event_id: str
    index_a: int
    state_a: str
    reason_a: str | None
    index_b: int
    state_b: str
    reason_b: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "a": {"index": self.index_a, "state": self.state_a, "reason": self.reason_a},
            "b": {"index": self.index_b, "state": self.state_b, "reason": self.reason_b},
        }


@dataclass(frozen=True, slots=True)
class SideStates:
    """One side's event states as its diagnosis gives them: the counts, the blocked event, the
    parked events."""

    counts: dict[str, int] = field(default_factory=dict)
    blocked: EventRef | None = None
    blocked_reason: str | None = None
    parked: tuple[ParkRef, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "blocked": None if self.blocked is None else {**self.blocked.to_json(), "reason": self.blocked_reason},
            "parked": [p.to_json() for p in self.parked],
        }


@dataclass(slots=True)
class StatesDiff:
    """Both sides' event states and park decisions, and the events whose state differs."""

    a: SideStates = field(default_factory=SideStates)
    b: SideStates = field(default_factory=SideStates)
    changes: list[StateChange] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.to_json(), "b": self.b.to_json(), "changes": [c.to_json() for c in self.changes]}


@dataclass(frozen=True, slots=True)
class EntryDiff:
    """One view entry that differs.

    Attributes:
        view: ``reflections``, ``persona`` or ``facts``.
        entry: the entry id (``<entity_key>/<id>`` for persona entries).
        change: ``added`` | ``removed`` | ``changed`` | ``archived`` (removed from the view in B
            and found in a shard of B it was not in on A's side) | ``unarchived``.
        fields: for ``changed``: each field's before → after.
        shard: for ``archived``/``unarchived``: the shard file (``reflection_archive/<name>``).
    """

    view: str
    entry: str
    change: str
    fields: tuple[FieldChange, ...] = ()
    shard: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "entry": self.entry,
            "change": self.change,
            "shard": self.shard,
            "fields": [{"name": f.field, "before": f.before, "after": f.after} for f in self.fields],
        }


@dataclass(frozen=True, slots=True)
class ViewProblem:
    """A view one side cannot parse (so its entries are not compared; its bytes are, as a file)."""

    side: str
    file: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "file": self.file, "message": self.message}


@dataclass(frozen=True, slots=True)
class OutboxDiff:
    """Outbox operations: pending on B's side only (added), pending on A's and not on B's
    (finished, or dead-lettered), and dead letters new on B's side."""

    added: tuple[str, ...] = ()
    finished: tuple[str, ...] = ()
    dead_lettered: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return not (self.added or self.finished or self.dead_lettered)

    def to_json(self) -> dict[str, Any]:
        return {"added": list(self.added), "finished": list(self.finished), "dead_lettered": list(self.dead_lettered)}


@dataclass(slots=True)
class Comparison:
    """Everything ``memory-inspector diff`` reports about two exports of one character.

    Whether they are identical is decided by the files alone: the journal record by record
    (:attr:`journal`) and every other file by its rule (:attr:`files`). The entries, the outbox
    and the states say what the differences mean.

    Attributes:
        a, b: the inputs as given.
        character: the character compared.
        problems: what a side could not read or refused (then the status is ``unreadable``).
        files: every file but the journal that differs.
        states: each side's event states and park decisions, from its diagnosis.
    """

    a: str
    b: str
    character: str
    journal: JournalDiff = field(default_factory=JournalDiff)
    entries: list[EntryDiff] = field(default_factory=list)
    view_problems: list[ViewProblem] = field(default_factory=list)
    outbox: OutboxDiff = field(default_factory=OutboxDiff)
    problems: list[InputProblem] = field(default_factory=list)
    files: list[FileDiff] = field(default_factory=list)
    states: StatesDiff = field(default_factory=StatesDiff)

    @property
    def identical(self) -> bool:
        """Both sides were read whole and every file holds the same content."""
        return not self.problems and self.journal.identical and not self.files

    @property
    def status(self) -> str:
        """One of :data:`STATUSES` (the exit code is its position)."""
        if self.problems:
            return "unreadable"
        return "identical" if self.identical else "different"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": COMPARE_SCHEMA,
            "a": self.a,
            "b": self.b,
            "character": self.character,
            "identical": self.identical,
            "status": self.status,
            "problems": [p.to_json() for p in self.problems],
            "journal": self.journal.to_json(),
            "files": [f.to_json() for f in self.files],
            "states": self.states.to_json(),
            "views": {
                "entries": [e.to_json() for e in self.entries],
                "problems": [p.to_json() for p in self.view_problems],
            },
            "outbox": self.outbox.to_json(),
        }
