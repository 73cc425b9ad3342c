"""The values of an entry history: the reconstructed entry, one point per event, diffs, moved views."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from journal.codec import same_json

#: Pseudo-fields the history adds to the entry's own: where the entry is (``view``, ``archive``:
#: a shard holds the copy the event carried, ``removed``: it left the view and the event carried
#: no copy), which shard, and the SHA-256 of its text as the events say it is.
PLACEMENT: Final = "placement"
SHARD: Final = "shard"
TEXT_SHA256: Final = "text_sha256"


class _Unknown:
    """The type of :data:`UNKNOWN`."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "unknown"

    def __bool__(self) -> bool:
        return False


#: A field no event has set yet: never guessed, never ``None`` (``None`` is a stored value).
UNKNOWN: Final = _Unknown()


class EntryKey(NamedTuple):
    """A covered entry: a reflection by id (``entity`` ``None``), or a persona entry by entity
    key and id. (A tuple: it keys the dicts of every entry's state.)

    Attributes:
        id: the reflection id or persona entry id.
        entity: the persona section key (``master``, ``neko``, ``@subject/...``), or ``None``.
    """

    id: str
    entity: str | None = None

    @property
    def ref(self) -> str:
        """The diagnosis's name of the entry (:func:`journal.events.entry_ref`)."""
        return self.id if self.entity is None else f"{self.entity}/{self.id}"

    @property
    def family(self) -> str:
        """The prefix of the event types that touch it (``reflection.`` / ``persona.``)."""
        return "reflection." if self.entity is None else "persona."

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "entity": self.entity, "ref": self.ref}


@dataclass(frozen=True, slots=True)
class EntryState:
    """An entry as the events so far set it; a field not in :attr:`fields` is unknown.

    Attributes:
        fields: field name → the value as the events carry it (the handlers' field names, plus
            :data:`TEXT_SHA256`). Treat as read-only.
        placement: ``view`` | ``archive`` | ``removed``, or ``None`` while unknown.
        shard: for ``archive``: the shard basename holding the copy (else ``None``, and the
            :data:`SHARD` pseudo-field is unknown).
    """

    fields: Mapping[str, Any] = field(default_factory=dict)
    placement: str | None = None
    shard: str | None = None

    def get(self, name: str) -> Any:
        """The value of ``name`` (a field, :data:`PLACEMENT` or :data:`SHARD`), or :data:`UNKNOWN`."""
        if name == PLACEMENT:
            return UNKNOWN if self.placement is None else self.placement
        if name == SHARD:
            return self.shard if self.placement == "archive" else UNKNOWN
        return self.fields.get(name, UNKNOWN)

    def known(self) -> dict[str, Any]:
        """Every known value, the pseudo-fields included (the ``fields`` object of the JSON shapes;
        :data:`SHARD` only for an archived copy)."""
        out = dict(self.fields)
        if self.placement is not None:
            out[PLACEMENT] = self.placement
        if self.placement == "archive":
            out[SHARD] = self.shard
        return out

    def changes_to(self, other: EntryState) -> list[FieldChange]:
        """The fields whose value differs in ``other``, sorted by name."""
        a, b = self.known(), other.known()
        out = []
        for name in sorted(a.keys() | b.keys()):
            before, after = a.get(name, UNKNOWN), b.get(name, UNKNOWN)
            # A step copies the entry and replaces only what it sets: most values are the same object.
            if before is not after and not same_value(before, after):
                out.append(FieldChange(name, before, after))
        return out


def same_value(a: Any, b: Any) -> bool:
    """JSON identity (:func:`journal.codec.same_json`), with :data:`UNKNOWN` equal to itself only."""
    if a is UNKNOWN or b is UNKNOWN:
        return a is b
    return same_json(a, b)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field, before → after (either may be :data:`UNKNOWN`)."""

    name: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        """``{"name", "before", "after"}``; an unknown side is left out."""
        out: dict[str, Any] = {"name": self.name}
        if self.before is not UNKNOWN:
            out["before"] = self.before
        if self.after is not UNKNOWN:
            out["after"] = self.after
        return out


@dataclass(frozen=True, slots=True)
class Point:
    """An entry after one event that touches it.

    Attributes:
        index: the event's index (0-based position among the journal's events: the x axis).
        event_id, type, ts: as in the record (``ts`` is metadata: it is not monotonic).
        state: the event's state from the diagnosis (:data:`journal.diagnosis.EVENT_STATES`).
        reason: its reason from the diagnosis (``held`` for a pending event held behind another,
            ``parked`` for an applied-state event a person parked, a block reason, ...).
        effect: what the event did to the entry (:data:`journal.history.rules.EFFECTS`).
        entry: the entry after the event.
        changed: the fields whose value the event changed, sorted.
        view_agrees: on the entry's last applied point only: whether the current view agrees
            with it (``None`` elsewhere, or when the view cannot be read).
    """

    index: int
    event_id: str
    type: str
    ts: str
    state: str
    reason: str | None
    effect: str
    entry: EntryState
    changed: tuple[str, ...] = ()
    view_agrees: bool | None = None

    @property
    def noop(self) -> bool:
        """The handler did not run the entry's rule (absent entry, refused, no handler, parked,
        blocked): the entry is as before."""
        return self.effect not in ("changed", "unchanged")

    @property
    def shown_state(self) -> str:
        """The state a legend shows: ``held`` and ``parked`` (issue 9) in place of the
        ``pending`` / ``applied`` they are kinds of, else :attr:`state`."""
        if self.reason in ("held", "parked"):
            return self.reason
        return self.state

    @property
    def applied(self) -> bool:
        """Whether replay has applied the event: at or before the sentinel and run (``applied`` or
        ``suspect``; a parked event never ran, an orphaned one never ran or lost its copy)."""
        return (self.state == "applied" and self.reason != "parked") or self.state == "suspect"

    def value(self, name: str) -> Any:
        return self.entry.get(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "event_id": self.event_id,
            "type": self.type,
            "ts": self.ts,
            "state": self.state,
            "reason": self.reason,
            "shown_state": self.shown_state,
            "effect": self.effect,
            "noop": self.noop,
            "changed": list(self.changed),
            "fields": self.entry.known(),
            "view_agrees": self.view_agrees,
        }


@dataclass(frozen=True, slots=True)
class ViewCheck:
    """The current view against the entry's last applied point.

    Attributes:
        index: the last applied point's event index (``None``: no applied point).
        agrees: whether they agree (``None``: no applied point, or the view cannot be read).
        differences: ``(field, point value, view value)``; a view value of :data:`UNKNOWN` means
            the view's entry lacks the field (or the entry is not in the view).
        message: why ``agrees`` is ``None``, when it is.
    """

    index: int | None = None
    agrees: bool | None = None
    differences: tuple[FieldChange, ...] = ()
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "agrees": self.agrees,
            "differences": [
                {"name": d.name, "point": _json_side(d.before), "view": _json_side(d.after)} for d in self.differences
            ],
            "message": self.message,
        }


def _json_side(value: Any) -> Any:
    return {"unknown": True} if value is UNKNOWN else value


@dataclass(frozen=True, slots=True)
class EntryHistory:
    """Every point of one entry, in journal order, and its current view against the last applied one.

    Attributes:
        key: the entry.
        points: one per event that touches it.
        sentinel_index: the sentinel's event index (``None``: no usable sentinel): a vertical line.
        view: the current view against :attr:`last_applied`.
    """

    key: EntryKey
    points: tuple[Point, ...]
    sentinel_index: int | None
    view: ViewCheck = field(default_factory=ViewCheck)

    @property
    def last_applied(self) -> Point | None:
        for p in reversed(self.points):
            if p.applied:
                return p
        return None

    def at(self, index: int) -> Point | None:
        """The last point at or before event ``index`` (``None``: no event had touched it yet)."""
        found = None
        for p in self.points:
            if p.index > index:
                break
            found = p
        return found

    def series(self, name: str) -> Iterator[tuple[int, Any]]:
        """``(index, value)`` of field ``name`` at every point (a chart's line; may be UNKNOWN)."""
        for p in self.points:
            yield p.index, p.entry.get(name)

    def to_json(self) -> dict[str, Any]:
        last = self.last_applied
        return {
            "entry": self.key.to_json(),
            "sentinel_index": self.sentinel_index,
            "last_applied": None if last is None else last.index,
            "view": self.view.to_json(),
            "points": [p.to_json() for p in self.points],
        }


@dataclass(frozen=True, slots=True)
class EventRef:
    """An event the state or diff is taken at: its index and id."""

    index: int
    event_id: str

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "event_id": self.event_id}


@dataclass(frozen=True, slots=True)
class StateAt:
    """Every covered entry as of one event (after it).

    Attributes:
        at: the event.
        entries: entry → ``(index of its last point at or before it, the entry then)``, for every
            entry some event up to it touches.
    """

    at: EventRef
    entries: Mapping[EntryKey, tuple[int, EntryState]]

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at.to_json(),
            "entries": [
                {"entry": key.to_json(), "point": idx, "fields": state.known()}
                for key, (idx, state) in sorted(self.entries.items(), key=lambda kv: _order(kv[0]))
            ],
        }


def _order(key: EntryKey) -> tuple[int, str, str]:
    return (0 if key.entity is None else 1, key.entity or "", key.id)


@dataclass(frozen=True, slots=True)
class EntryDiff:
    """One entry whose fields differ between two points (``before`` ``None``: no event had
    touched it at the first point)."""

    key: EntryKey
    changes: tuple[FieldChange, ...]

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.key.to_json(), "fields": [c.to_json() for c in self.changes]}


@dataclass(frozen=True, slots=True)
class HistoryDiff:
    """Every covered entry whose fields differ between event ``a`` and event ``b``."""

    a: EventRef
    b: EventRef
    entries: tuple[EntryDiff, ...]

    def to_json(self) -> dict[str, Any]:
        return {"from": self.a.to_json(), "to": self.b.to_json(), "changes": [e.to_json() for e in self.entries]}


@dataclass(frozen=True, slots=True)
class MovedView:
    """An entry whose current view disagrees with its last applied point: a view that moved
    without an event (a correction merge, memory-format §9.5, or a hand edit).

    Attributes:
        key: the entry.
        code, severity: the finding code of that fact (``view.moved_on``, ``info``).
        point: the last applied point.
        differences: as :attr:`ViewCheck.differences`.
        message: one line, for people: the diagnosis's own words when it has a finding on that
            event (``view.moved_on``, ``event.suspect``), else ours.
        finding: that finding's code, if the diagnosis has one.
    """

    key: EntryKey
    code: str
    severity: str
    point: Point
    differences: tuple[FieldChange, ...]
    message: str
    finding: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.key.to_json(),
            "code": self.code,
            "severity": self.severity,
            "index": self.point.index,
            "event_id": self.point.event_id,
            "state": self.point.state,
            "differences": ViewCheck(self.point.index, False, self.differences).to_json()["differences"],
            "message": self.message,
            "finding": self.finding,
        }
