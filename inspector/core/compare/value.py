"""The value of a comparison of two exports of one character: pure data, shown by the CLI and the
window alike (the ``--json`` shape, schema 1, is :meth:`Comparison.to_json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from journal.dryrun import FieldChange

COMPARE_SCHEMA = 1


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


@dataclass(slots=True)
class JournalDiff:
    """The two journals side by side.

    Attributes:
        common_prefix: how many events, from the first, have the same ids in the same order.
        diverges_at: the first index where they differ (``None``: one is a prefix of the other,
            or they are equal).
        only_a, only_b: events whose id the other side does not hold, in order.
    """

    a: JournalSide = field(default_factory=JournalSide)
    b: JournalSide = field(default_factory=JournalSide)
    common_prefix: int = 0
    diverges_at: int | None = None
    only_a: list[EventRef] = field(default_factory=list)
    only_b: list[EventRef] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return (
            self.a.events == self.b.events == self.common_prefix
            and not self.only_a
            and not self.only_b
            and [d.to_json() for d in self.a.damage] == [d.to_json() for d in self.b.damage]
            and (self.a.sentinel_state, self.a.sentinel_event_id) == (self.b.sentinel_state, self.b.sentinel_event_id)
            and self.a.present == self.b.present
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "common_prefix": self.common_prefix,
            "diverges_at": self.diverges_at,
            "only_a": [e.to_json() for e in self.only_a],
            "only_b": [e.to_json() for e in self.only_b],
        }


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
    """A view one side cannot read (so its entries are not compared)."""

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

    Attributes:
        a, b: the inputs as given.
        character: the character compared.
    """

    a: str
    b: str
    character: str
    journal: JournalDiff = field(default_factory=JournalDiff)
    entries: list[EntryDiff] = field(default_factory=list)
    view_problems: list[ViewProblem] = field(default_factory=list)
    outbox: OutboxDiff = field(default_factory=OutboxDiff)

    @property
    def identical(self) -> bool:
        return self.journal.identical and not self.entries and not self.view_problems and self.outbox.identical

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": COMPARE_SCHEMA,
            "a": self.a,
            "b": self.b,
            "character": self.character,
            "identical": self.identical,
            "journal": self.journal.to_json(),
            "views": {
                "entries": [e.to_json() for e in self.entries],
                "problems": [p.to_json() for p in self.view_problems],
            },
            "outbox": self.outbox.to_json(),
        }
