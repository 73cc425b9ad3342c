"""The events of a diagnosis: the reader's records, each with the state the diagnosis gave it."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from itertools import accumulate, chain
from operator import attrgetter, itemgetter
from typing import Any, overload

from journal.diagnosis.states import EVENT_STATES, EventInfo
from journal.events import EntryKeys, EventSummary

_STATE_CODE = {name: i for i, name in enumerate(EVENT_STATES)}

#: bytes.translate table: the applied code → 0, every other state code → 1.
_NOT_APPLIED = bytes([0] + [1] * 255)

_event_id = attrgetter("event_id")
_type = attrgetter("type")
_ts = attrgetter("ts")
_line = attrgetter("line")
_offset = attrgetter("offset")


class _Texts:
    """Strings kept packed, one ``str`` per batch: a million ``ts`` strings take ~26 MB this way
    instead of ~88 MB as objects (memory per event). A batch whose strings are all as long (the
    writers' ``ts`` always are) keeps only that length; any other keeps where each string ends."""

    __slots__ = ("_chunks", "_count", "_ends", "_firsts", "_over", "_widths")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._firsts = array("q")  # the index of each chunk's first string
        self._widths = array("q")  # the length of each string of a chunk, or -1: see _ends
        self._ends: dict[int, array[int]] = {}  # by chunk of -1: where each string ends in it
        self._over: dict[int, str] = {}  # strings replaced after they were packed
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def extend(self, texts: list[str]) -> None:
        if not texts:
            return
        joined = "".join(texts)
        width = len(texts[0])
        if len(joined) != width * len(texts) or min(map(len, texts)) != width:  # not all as long
            self._ends[len(self._chunks)] = array("q", accumulate(map(len, texts)))
            width = -1
        self._chunks.append(joined)
        self._firsts.append(self._count)
        self._widths.append(width)
        self._count += len(texts)

    def __getitem__(self, i: int) -> str:
        if self._over and i in self._over:
            return self._over[i]
        if not 0 <= i < self._count:
            raise IndexError("event index out of range")
        k = bisect_right(self._firsts, i) - 1
        j = i - self._firsts[k]
        width = self._widths[k]
        if width >= 0:
            return self._chunks[k][j * width : (j + 1) * width]
        ends = self._ends[k]
        return self._chunks[k][ends[j - 1] if j else 0 : ends[j]]

    def __setitem__(self, i: int, text: str) -> None:
        self._over[i] = text


class _Names:
    """Strings of a few distinct values (event types) kept as one small code each."""

    __slots__ = ("_code", "_codes", "_names")

    def __init__(self) -> None:
        self._names: list[str] = []
        self._code: dict[str, int] = {}
        self._codes = array("H")

    def __len__(self) -> int:
        return len(self._codes)

    def extend(self, names: list[str]) -> None:
        code = self._code
        for name in set(names).difference(code):
            code[name] = len(self._names)
            self._names.append(name)
        if len(self._names) > 0xFFFF and self._codes.typecode == "H":  # a journal of many undeclared types
            self._codes = array("q", self._codes)
        self._codes.extend(map(code.__getitem__, names))

    def __getitem__(self, i: int) -> str:
        return self._names[self._codes[i]]

    def __setitem__(self, i: int, name: str) -> None:
        self.extend([name])
        self._codes[i] = self._codes.pop()

    def __iter__(self) -> Iterator[str]:
        return map(self._names.__getitem__, self._codes)

    def tolist(self) -> list[str]:
        return list(self)


class _Lines:
    """Line numbers kept as runs of consecutive lines (a journal without blank or damaged lines
    is one run): ``(first index, its line)`` of each run."""

    __slots__ = ("_count", "_index", "_line")

    def __init__(self) -> None:
        self._index = array("q")
        self._line = array("q")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def extend(self, lines: list[int]) -> None:
        n = len(lines)
        if not n:
            return
        first = lines[0]
        if lines[-1] - first == n - 1 and lines == list(range(first, first + n)):
            self._start(self._count, first)
        else:
            for j, line in enumerate(lines, self._count):
                self._start(j, line)
        self._count += n

    def _start(self, i: int, line: int) -> None:
        """Event ``i`` (the next one) is on ``line``: a new run unless it follows the last."""
        if not self._index or self._line[-1] + (i - self._index[-1]) != line:
            self._index.append(i)
            self._line.append(line)

    def __getitem__(self, i: int) -> int:
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("event index out of range")
        k = bisect_right(self._index, i) - 1
        return self._line[k] + (i - self._index[k])

    def __setitem__(self, i: int, line: int) -> None:
        if self[i] == line:
            return
        lines = self.tolist()
        lines[i] = line
        self._index, self._line, self._count = array("q"), array("q"), 0
        self.extend(lines)

    def __iter__(self) -> Iterator[int]:
        ends = [*self._index[1:], self._count] if self._index else []
        return chain.from_iterable(
            range(line, line + end - start) for start, line, end in zip(self._index, self._line, ends, strict=True)
        )

    def tolist(self) -> list[int]:
        return list(self)


class EventList(MutableSequence[EventInfo]):
    """The events of a journal, kept by column: one id, type, ``ts``, line and offset per event
    (the reader's :class:`~journal.events.EventSummary` records are not kept), plus one state per
    event and the reason of the few that have one.

    ``events[i]`` builds an :class:`EventInfo` on demand, so treat it as a snapshot: change a
    state with :meth:`set_state`, not by assigning to the returned object. Slices return plain
    lists. ``append`` / ``extend`` accept :class:`EventInfo` (live tailing) and keep ``index``
    positional. :meth:`record` builds the reader's record of one event again.

    Attributes:
        entries: the entry each event touches (:func:`journal.handlers.entry_ref`), one string
            object per entry.
    """

    __slots__ = (
        "_ids",
        "_intern",
        "_keys",
        "_lines",
        "_notes",
        "_offsets",
        "_states",
        "_ts",
        "_types",
        "entries",
    )

    def __init__(self, items: Iterable[EventInfo] = ()) -> None:
        self._ids: list[str] = []
        self._types = _Names()
        self._ts = _Texts()
        self._lines = _Lines()
        self._offsets = array("q")
        self._keys: dict[int, EntryKeys] = {}  # only the keys that say more than the entry
        self.entries: list[str | None] = []
        self._states = bytearray()
        self._notes: dict[int, tuple[str | None, str | None]] = {}
        self._intern: dict[str, str] = {}  # one string object per entry
        self.extend(items)

    def take_records(self, records: list[Any]) -> None:
        """Append the reader's summary records, pending, each with its entry worked out once.

        Only the columns are kept. A record says its entry itself (``entry``: its type's summary
        decoded the fields that name it, :data:`journal.events.SUMMARY_TYPES`; the exact path's
        :class:`~journal.events.EventSummary` asks :func:`journal.handlers.entry_ref`). An event
        of the :data:`~journal.events.KEYED_TYPES` keeps its :class:`~journal.events.EntryKeys`
        where they say more than its entry (an archive event's shard and snapshot id, a merge's
        ``absorbed_into``: :meth:`keys`); the others' keys are dropped, since their entry is in
        :attr:`entries` (a million copies of a few thousand ids would otherwise stay alive).
        """
        n0 = len(self._ids)
        self._ids += map(_event_id, records)
        self._types.extend(list(map(_type, records)))
        self._ts.extend(list(map(_ts, records)))
        self._lines.extend(list(map(_line, records)))
        self._offsets.extend(map(_offset, records))
        self._states += bytes([_STATE_CODE["pending"]]) * len(records)
        keep = self._intern.setdefault
        kept = self._keys
        entries = self.entries
        for i, rec in enumerate(records, n0):
            ref = rec.entry
            entries.append(None if ref is None else keep(ref, ref))
            if rec.keeps:
                keys = rec.keys
                if keys.archive_shard_path is not None or keys.absorbed_into is not None:
                    kept[i] = keys

    # -- one field of event i, or of every event -----------------------------------------------

    def event_id(self, i: int) -> str:
        return self._ids[i]

    def type(self, i: int) -> str:
        return self._types[i]

    def ts(self, i: int) -> str:
        return self._ts[i if i >= 0 else i + len(self._ids)]

    def line(self, i: int) -> int:
        return self._lines[i]

    def offset(self, i: int) -> int:
        return self._offsets[i]

    def keys(self, i: int) -> EntryKeys:
        """The payload keys of event ``i`` that say more than its entry (no keys for most)."""
        return self._keys.get(i if i >= 0 else i + len(self._ids), _NO_KEYS)

    def kept_keys(self) -> list[tuple[int, EntryKeys]]:
        """``(index, keys)`` of every event that keeps its keys (:meth:`keys`), in order."""
        return sorted(self._keys.items(), key=itemgetter(0))

    def record(self, i: int) -> EventSummary:
        """The reader's record of event ``i``, built again from the columns (as the exact path
        builds it: an :class:`~journal.events.EventSummary`)."""
        etype: Any = self._types[i]
        return EventSummary(self._ids[i], etype, self.ts(i), self.keys(i), self._lines[i], self._offsets[i])

    def event_ids(self) -> list[str]:
        return list(self._ids)

    def types(self) -> list[str]:
        return self._types.tolist()

    def lines(self) -> list[int]:
        return self._lines.tolist()

    def offsets(self) -> list[int]:
        return self._offsets.tolist()

    # -- Sequence ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    def _make(self, i: int) -> EventInfo:
        reason, message = self._notes.get(i, (None, None))
        return EventInfo(
            i,
            self._lines[i],
            self._offsets[i],
            self._ids[i],
            self._types[i],
            self._ts[i],
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
        n = len(self._ids)
        if isinstance(i, slice):
            return [self._make(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("event index out of range")
        return self._make(i)

    def __iter__(self) -> Iterator[EventInfo]:
        for i in range(len(self._ids)):
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
        n = len(self._ids)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("event index out of range")
        self._ids[j] = value.event_id
        self._types[j] = value.type
        self._ts[j] = value.ts
        self._lines[j] = value.line
        self._offsets[j] = value.offset
        self._keys.pop(j, None)
        self.entries[j] = value.entry
        self.set_state(j, value.state, value.reason, value.message)

    def __delitem__(self, i: int | slice) -> None:
        raise TypeError("events cannot be removed from a diagnosis")

    def insert(self, i: int, value: EventInfo) -> None:
        if i < len(self):
            raise TypeError("events can only be appended: their index is their position")
        self.append(value)

    def append(self, value: EventInfo) -> None:
        self._ids.append(value.event_id)
        self._types.extend([value.type])
        self._ts.extend([value.ts])
        self._lines.extend([value.line])
        self._offsets.append(value.offset)
        self.entries.append(value.entry)
        self._states.append(_STATE_CODE[value.state])
        if value.reason is not None or value.message is not None:
            self._notes[len(self._ids) - 1] = (value.reason, value.message)

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
        n = len(self._ids)
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
            return self._ids.index(event_id)
        except ValueError:
            return None

    def iter_json(self) -> Iterator[dict[str, Any]]:
        """``e.to_json()`` of every event, in order."""
        names, notes, states = EVENT_STATES, self._notes, self._states
        for i, (eid, etype, line) in enumerate(zip(self._ids, self._types, self._lines, strict=True)):
            note = notes.get(i)
            yield {
                "index": i,
                "line": line,
                "event_id": eid,
                "type": etype,
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
