"""The events of a diagnosis: the reader's records, each with the state the diagnosis gave it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from operator import attrgetter
from typing import Any, overload

from journal.diagnosis.states import EVENT_STATES, EventInfo
from journal.events import EntryKeys, EventSummary
from journal.handlers import entry_ref

_STATE_CODE = {name: i for i, name in enumerate(EVENT_STATES)}

#: bytes.translate table: the applied code → 0, every other state code → 1.
_NOT_APPLIED = bytes([0] + [1] * 255)

_event_id = attrgetter("event_id")
_type = attrgetter("type")
_line = attrgetter("line")
_offset = attrgetter("offset")


class EventList(MutableSequence[EventInfo]):
    """The events of a journal: the reader's :class:`~journal.events.EventSummary` records (the
    kept value), plus one state per event and the reason of the few that have one.

    ``events[i]`` builds an :class:`EventInfo` on demand, so treat it as a snapshot: change a
    state with :meth:`set_state`, not by assigning to the returned object. Slices return plain
    lists. ``append`` / ``extend`` accept :class:`EventInfo` (live tailing) and keep ``index``
    positional.

    Attributes:
        records: one reader record per event, in file order.
        entries: the entry each event touches (:func:`journal.handlers.entry_ref`), one string
            object per entry.
    """

    __slots__ = ("_intern", "_notes", "_states", "entries", "records")

    def __init__(self, items: Iterable[EventInfo] = ()) -> None:
        self.records: list[EventSummary] = []
        self.entries: list[str | None] = []
        self._states = bytearray()
        self._notes: dict[int, tuple[str | None, str | None]] = {}
        self._intern: dict[str, str] = {}  # one string object per entry
        self.extend(items)

    def take_records(self, records: list[EventSummary]) -> None:
        """Append the reader's records, pending, each with its entry worked out once.

        A record keeps its :class:`~journal.events.EntryKeys` only where they say more than its
        entry (an archive event's shard and snapshot id, a merge's ``absorbed_into``); the others'
        keys are dropped, since their entry is in :attr:`entries` (a million copies of a few
        thousand ids would otherwise stay alive, ~140 MB per million events).
        """
        keep = self._intern.setdefault
        entries = self.entries
        for rec in records:
            keys = rec.keys
            ref = entry_ref(rec.type, keys)
            entries.append(None if ref is None else keep(ref, ref))
            if keys.archive_shard_path is None and keys.absorbed_into is None:
                rec.keys = _NO_KEYS
        self.records += records
        self._states += bytearray([_STATE_CODE["pending"]]) * len(records)

    # -- one field of event i, or of every event -----------------------------------------------

    def event_id(self, i: int) -> str:
        return self.records[i].event_id

    def type(self, i: int) -> str:
        return self.records[i].type

    def line(self, i: int) -> int:
        return self.records[i].line

    def offset(self, i: int) -> int:
        return self.records[i].offset

    def event_ids(self) -> list[str]:
        return list(map(_event_id, self.records))

    def types(self) -> list[str]:
        return list(map(_type, self.records))

    def lines(self) -> list[int]:
        return list(map(_line, self.records))

    def offsets(self) -> list[int]:
        return list(map(_offset, self.records))

    # -- Sequence ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.records)

    def _make(self, i: int) -> EventInfo:
        reason, message = self._notes.get(i, (None, None))
        rec = self.records[i]
        return EventInfo(
            i,
            rec.line,
            rec.offset,
            rec.event_id,
            rec.type,
            rec.ts,
            self.entries[i],
            EVENT_STATES[self._states[i]],
            reason,
            message,
        )

    @overload
    def __getitem__(self, i: int) -> EventInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[EventInfo]: ...

    def __getitem__(self, i: int | slice) -> EventInfo | list[EventInfo]:
        n = len(self.records)
        if isinstance(i, slice):
            return [self._make(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("event index out of range")
        return self._make(i)

    def __iter__(self) -> Iterator[EventInfo]:
        for i in range(len(self.records)):
            yield self._make(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventList({len(self)} events)"

    # -- MutableSequence ----------------------------------------------------------------------

    @overload
    def __setitem__(self, i: int, value: EventInfo) -> None: ...

    @overload
    def __setitem__(self, i: slice, value: Iterable[EventInfo]) -> None: ...

    def __setitem__(self, i: int | slice, value: EventInfo | Iterable[EventInfo]) -> None:
        if isinstance(i, slice) or not isinstance(value, EventInfo):
            raise TypeError("EventList supports item assignment of one EventInfo only")
        n = len(self.records)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("event index out of range")
        self.records[j] = _record_of(value)
        self.entries[j] = value.entry
        self.set_state(j, value.state, value.reason, value.message)

    def __delitem__(self, i: int | slice) -> None:
        raise TypeError("events cannot be removed from a diagnosis")

    def insert(self, i: int, value: EventInfo) -> None:
        if i < len(self):
            raise TypeError("events can only be appended: their index is their position")
        self.append(value)

    def append(self, value: EventInfo) -> None:
        self.records.append(_record_of(value))
        self.entries.append(value.entry)
        self._states.append(_STATE_CODE[value.state])
        if value.reason is not None or value.message is not None:
            self._notes[len(self.records) - 1] = (value.reason, value.message)

    # -- states -------------------------------------------------------------------------------

    def state(self, i: int) -> str:
        return EVENT_STATES[self._states[i]]

    def set_state(self, i: int, state: str, reason: str | None = None, message: str | None = None) -> None:
        self._states[i] = _STATE_CODE[state]
        if reason is None and message is None:
            self._notes.pop(i, None)
        else:
            self._notes[i] = (reason, message)

    def fill_states(self, sentinel_index: int) -> None:
        """Everything up to ``sentinel_index`` (inclusive) applied, everything after pending."""
        n = len(self.records)
        upto = max(0, min(n, sentinel_index + 1))
        self._states = bytearray(upto) + bytearray([_STATE_CODE["pending"]]) * (n - upto)
        self._notes.clear()

    def state_counts(self) -> dict[str, int]:
        return {name: self._states.count(code) for name, code in _STATE_CODE.items()}

    def indices(self, state: str) -> list[int]:
        """Indices of the events in ``state``, in order."""
        code = _STATE_CODE[state]
        out: list[int] = []
        find = self._states.find
        i = find(code)
        while i >= 0:
            out.append(i)
            i = find(code, i + 1)
        return out

    def index_of(self, event_id: str) -> int | None:
        """Index of the first event with ``event_id``."""
        try:
            return self.event_ids().index(event_id)
        except ValueError:
            return None

    def iter_json(self) -> Iterator[dict[str, Any]]:
        """``e.to_json()`` of every event, in order."""
        names, notes, states = EVENT_STATES, self._notes, self._states
        for i, rec in enumerate(self.records):
            note = notes.get(i)
            yield {
                "index": i,
                "line": rec.line,
                "event_id": rec.event_id,
                "type": rec.type,
                "state": names[states[i]],
                "reason": None if note is None else note[0],
            }

    def not_applied(self) -> Iterator[EventInfo]:
        """The events whose state is not ``applied``, in order (C-level scan; fast on big journals)."""
        marks = self._states.translate(_NOT_APPLIED)
        i = marks.find(1)
        while i >= 0:
            yield self._make(i)
            i = marks.find(1, i + 1)


_NO_KEYS = EntryKeys()


def _record_of(info: EventInfo) -> EventSummary:
    """The record an :class:`EventInfo` stands for (its entry is kept beside it, not in keys)."""
    return EventSummary(info.event_id, info.type, info.ts, _NO_KEYS, info.line, info.offset)  # type: ignore[arg-type]


def find_events(events: Sequence[EventInfo], text: str, limit: int = 20) -> list[int]:
    """The events ``text`` names, in the one event syntax of every command and the window (Ctrl+G):
    ``#N`` is the event at index N; otherwise the event whose id is ``text``, or else the events
    whose ids start with it (the first ``limit`` of them, in journal order). Surrounding blanks are
    ignored; an empty ``text`` names none.
    """
    text = text.strip()
    if not text:
        return []
    if text.startswith("#") and text[1:].isdigit():
        i = int(text[1:])
        return [i] if 0 <= i < len(events) else []
    ids = events.event_ids() if isinstance(events, EventList) else [e.event_id for e in events]
    try:
        return [ids.index(text)]
    except ValueError:
        pass
    found: list[int] = []
    for i, eid in enumerate(ids):
        if eid.startswith(text):
            found.append(i)
            if len(found) >= limit:
                break
    return found
