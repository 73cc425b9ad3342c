"""Entry histories over one character's diagnosis: one entry's points, every entry at an event,
a diff between two events, and the views that moved without an event."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from journal.diagnosis import FINDING_CODES, CharacterDiagnosis, EventInfo, EventList
from journal.diagnosis.eventlist import find_events
from journal.errors import JournalError
from journal.events import JOURNAL_NAME
from journal.handlers import text_sha256
from journal.history.rules import step
from journal.history.values import (
    PLACEMENT,
    TEXT_SHA256,
    UNKNOWN,
    EntryDiff,
    EntryHistory,
    EntryKey,
    EntryState,
    EventRef,
    FieldChange,
    HistoryDiff,
    MovedView,
    Point,
    StateAt,
    ViewCheck,
    same_value,
)
from journal.reader import events_at, iter_journal
from journal.stores import MemoryStore
from journal.views import PERSONA, REFLECTIONS

#: The finding code of "the entry's view moved on after its last applied event, without an event":
#: the diagnosis gives it to an applied merge whose text moved on; the history gives it to every
#: entry whose view disagrees with its last applied point. One fact, one code.
MOVED_CODE = "view.moved_on"
assert MOVED_CODE in FINDING_CODES

#: The diagnosis's findings about an entry's last event that say its view is not what the event left.
_VIEW_FINDINGS = (MOVED_CODE, "event.suspect")


#: ``progress(done, total)``: how far a long build is; it may raise to stop it.
Progress = Callable[[int, int], None]

#: How often (in events indexed, in points folded) a build reports its progress.
PROGRESS_EVERY = 1 << 16
PROGRESS_EVERY_POINT = 256


class HistoryError(JournalError):
    """The journal cannot give the history: it changed since it was diagnosed, or it cannot be read."""


#: At most this many candidates are listed when an id or prefix names several.
CANDIDATES_SHOWN = 10


class HistoryInputError(HistoryError, LookupError):
    """The entry or event asked for is not in the journal (the CLI exits 2 with this message)."""


def key_of(event_type: str, payload: Any) -> EntryKey | None:
    """The entry an event touches, exactly (the entity and id apart, which the diagnosis's
    ``entry_ref`` string joins with ``/``); ``None`` when it names none."""
    if not isinstance(payload, dict):
        return None
    if event_type.startswith("reflection."):
        rid = payload.get("reflection_id")
        return EntryKey(rid) if isinstance(rid, str) and rid else None
    if event_type.startswith("persona."):
        ek, eid = payload.get("entity_key"), payload.get("entry_id")
        if isinstance(ek, str) and isinstance(eid, str) and ek and eid:
            return EntryKey(eid, ek)
    return None


class JournalHistory:
    """The histories of one character folder, read from its diagnosis and its journal.

    Built once per diagnosis (the GUI keeps one beside the diagnosis it shows): the first call
    indexes which events touch which entry and reads the current views, both kept. Reads the
    character folder only; the folder must still be the one diagnosed (a zip's extracted copy
    lives as long as its :class:`~journal.diagnosis.Diagnosis`).

    The reconstruction applies the replay handlers' own field rules (:mod:`journal.history.rules`)
    to each entry, event by event in journal order. An event replay does not run (a blocked
    one, as the diagnosis found; a parked one) changes nothing and is marked so.

    Attributes:
        diagnosis: the character's diagnosis (the events' states and reasons are read from it).
    """

    def __init__(self, diagnosis: CharacterDiagnosis) -> None:
        self.diagnosis = diagnosis
        self._dir = Path(diagnosis.path)
        self._journal = self._dir / JOURNAL_NAME
        self._index: dict[str | None, list[int]] | None = None
        self._views: dict[str, tuple[Any, str | None]] = {}
        self._indexed: dict[str, dict[EntryKey, dict[str, Any]]] = {}
        self._events = diagnosis.events

    # -- lookups -------------------------------------------------------------------------------

    def index(self, progress: Progress | None = None) -> dict[str | None, list[int]]:
        """The diagnosis's entry name (``ref``) → the indices of the events that touch it.

        Args:
            progress: called as ``progress(done, total)`` (events indexed) now and then while the
                index is built; it may raise to stop (nothing is kept then).
        """
        if self._index is None:
            index: dict[str | None, list[int]] = {}
            entries = self._events.entries if isinstance(self._events, EventList) else [e.entry for e in self._events]
            total = len(entries)
            for i, ref in enumerate(entries):
                if ref is not None:
                    index.setdefault(ref, []).append(i)
                if progress is not None and not i % PROGRESS_EVERY:
                    progress(i, total)
            self._index = index
        return self._index

    def event(self, text: str) -> EventRef:
        """The one event ``text`` names, in the event syntax of every command and the window's
        Ctrl+G (:func:`journal.diagnosis.eventlist.find_events`): ``#N``, an event id, or the
        start of one event's id.

        Raises:
            HistoryInputError: no event has that id, index or id prefix, or several have the
                prefix (the message lists them).
        """
        found = find_events(self._events, text, limit=CANDIDATES_SHOWN + 1)
        if not found:
            raise HistoryInputError(f"no event {text!r} in the journal of {self.diagnosis.name}")
        if len(found) > 1:
            listed = ", ".join(f"#{i} {self._events[i].event_id}" for i in found[:CANDIDATES_SHOWN])
            more = ", ..." if len(found) > CANDIDATES_SHOWN else ""
            raise HistoryInputError(
                f"{text!r} starts the ids of several events of {self.diagnosis.name} ({listed}{more}): "
                "give more of the id, or #index"
            )
        return EventRef(found[0], self._events[found[0]].event_id)

    def find_entry(self, text: str, entity: str | None = None) -> EntryKey:
        """The one entry ``text`` names, in the entry syntax of every command: the diagnosis's
        name of it as ``check`` prints it (``<entity>/<id>`` for a persona entry, the id for a
        reflection), or a persona entry's id alone when only one entity has an entry with that id.
        With ``entity``, the persona entry ``text`` of that entity.

        Raises:
            HistoryInputError: no event touches such an entry, or ``text`` names entries of several
                entities (the message lists them).
        """
        if entity is not None:
            return EntryKey(text, entity)
        index = self.index()
        tail = "/" + text
        firsts = sorted(ix[0] for ref, ix in index.items() if ref is not None and (ref == text or ref.endswith(tail)))
        keys: set[EntryKey] = set()
        for _i, etype, payload in self._payloads(firsts):
            key = key_of(etype, payload)
            if key is not None and text in (key.ref, key.id):
                keys.add(key)
        if not keys:
            raise HistoryInputError(f"no event of the journal of {self.diagnosis.name} touches entry {text!r}")
        if len(keys) > 1:
            names = sorted((k.ref for k in keys), key=str)
            listed = ", ".join(names[:CANDIDATES_SHOWN]) + (", ..." if len(names) > CANDIDATES_SHOWN else "")
            raise HistoryInputError(
                f"entry {text!r} is ambiguous in {self.diagnosis.name}: {listed}; name one as ENTITY/ID"
            )
        return keys.pop()

    def _info(self, i: int) -> EventInfo:
        return self._events[i]

    # -- one entry ----------------------------------------------------------------------------

    def entry(self, key: EntryKey, progress: Progress | None = None) -> EntryHistory:
        """The history of one entry: a point per event that touches it, in journal order, and
        the current view against the last applied point.

        Args:
            progress: called as ``progress(done, total)`` now and then: the journal's events
                indexed (the first call only), then the entry's events read and folded, on one
                scale of twice the events; it may raise to stop the build (a window's Cancel).

        Raises:
            HistoryInputError: no event touches the entry.
            HistoryError: the journal changed since it was diagnosed, or cannot be read.
        """
        n = len(self._events)
        scale = 2 * max(1, n)
        index = self.index(None if progress is None else lambda done, _total: progress(done, scale))
        candidates = [i for i in index.get(key.ref, ()) if self._type(i).startswith(key.family)]
        if progress is not None:
            progress(n, scale)
        touching = [(i, t, p) for i, t, p in self._payloads(candidates) if key_of(t, p) == key]
        if not touching:
            raise HistoryInputError(f"no event of the journal of {self.diagnosis.name} touches entry {key.ref!r}")
        points: list[Point] = []
        state: EntryState | None = None
        for k, (i, etype, payload) in enumerate(touching):
            point = self._point(i, etype, payload, state)
            state = point.entry
            points.append(point)
            if progress is not None and not k % PROGRESS_EVERY_POINT:
                progress(n + n * k // len(touching), scale)
        view = ViewCheck()
        last = next((k for k in range(len(points) - 1, -1, -1) if points[k].applied), None)
        if last is not None:
            view = self.check_view(key, points[last])
            points[last] = _with_agreement(points[last], view.agrees)
        return EntryHistory(key, tuple(points), self.diagnosis.sentinel.index, view)

    def _point(self, i: int, etype: str, payload: Any, before: EntryState | None) -> Point:
        info = self._info(i)
        if info.state == "blocked":
            after, effect = before or EntryState(), "blocked"  # replay stops there: nothing applied
        elif info.reason == "parked":
            after, effect = before or EntryState(), "parked"  # gone past, never applied
        else:
            after, effect = step(before, etype, payload)
        changed = tuple(c.name for c in (before or EntryState()).changes_to(after))
        return Point(i, info.event_id, info.type, info.ts, info.state, info.reason, effect, after, changed)

    # -- every entry ----------------------------------------------------------------------------

    def state_at(self, at: EventRef | int) -> StateAt:
        """Every covered entry as of event ``at`` (after it): each entry some event up to it
        touches, with the index of its last point.

        Raises:
            HistoryInputError: ``at`` is not an event index of the journal.
            HistoryError: as :meth:`entry`.
        """
        ref = self._ref(at)
        states: dict[EntryKey, tuple[int, EntryState]] = {}
        for i, key, state in self._fold(ref.index):
            states[key] = (i, state)
        return StateAt(ref, states)

    def diff(self, a: EventRef | int, b: EventRef | int) -> HistoryDiff:
        """Every covered entry whose fields differ between event ``a`` and event ``b`` (either
        order: before is the state at ``a``, after the state at ``b``).

        Raises:
            HistoryInputError, HistoryError: as :meth:`state_at`.
        """
        ra, rb = self._ref(a), self._ref(b)
        lo, hi = sorted((ra.index, rb.index))
        at_lo: dict[EntryKey, EntryState] = {}
        at_hi: dict[EntryKey, EntryState] = {}
        for i, key, state in self._fold(hi):
            if i <= lo:
                at_lo[key] = state
            at_hi[key] = state
        before, after = (at_lo, at_hi) if ra.index <= rb.index else (at_hi, at_lo)
        out = []
        for key in sorted(set(before) | set(after), key=_order):
            changes = before.get(key, EntryState()).changes_to(after.get(key, EntryState()))
            if changes:
                out.append(EntryDiff(key, tuple(changes)))
        return HistoryDiff(ra, rb, tuple(out))

    def moved(self) -> list[MovedView]:
        """Entries whose current view disagrees with their last applied point: views that moved
        without an event (a correction merge, memory-format §9.5, or a hand edit), in entry order.

        Each is a ``view.moved_on`` fact (:data:`MOVED_CODE`, ``info``), the code the diagnosis
        gives an applied merge whose text moved on; where the diagnosis has a finding on that
        event (``view.moved_on``, or ``event.suspect``: its handler would still change the view),
        its words are reused.

        Raises:
            HistoryError: as :meth:`entry`.
        """
        last: dict[EntryKey, tuple[int, EntryState, EntryState | None]] = {}
        previous: dict[EntryKey, EntryState] = {}
        applied = self._applied_marks()
        for i, key, state in self._fold(len(self._events) - 1):
            if applied(i):
                last[key] = (i, state, previous.get(key))
            previous[key] = state
        said = {f.event_id: f for f in self.diagnosis.findings if f.code in _VIEW_FINDINGS and f.event_id}
        out = []
        for key in sorted(last, key=_order):
            i, state, before = last[key]
            info = self._info(i)
            changed = tuple(c.name for c in (before or EntryState()).changes_to(state))
            point = Point(i, info.event_id, info.type, info.ts, info.state, info.reason, "changed", state, changed)
            view = self.check_view(key, point)
            if view.agrees is not False:
                continue
            finding = said.get(info.event_id)
            fields = ", ".join(d.name for d in view.differences)
            message = (
                finding.message
                if finding is not None
                else f"event #{i} ({info.type}, {key.ref}): the entry's current view differs from what its last "
                f"applied event left ({fields}), without an event (a correction merge, or a hand edit)"
            )
            out.append(
                MovedView(
                    key,
                    MOVED_CODE,
                    "info",
                    _with_agreement(point, False),
                    view.differences,
                    message,
                    None if finding is None else finding.code,
                )
            )
        return out

    # -- the current view --------------------------------------------------------------------------

    def check_view(self, key: EntryKey, point: Point) -> ViewCheck:
        """The current view's entry against ``point`` (meant for its last applied point): every
        known field of the point, the text hash against the view's text, and its placement."""
        name = REFLECTIONS if key.entity is None else PERSONA
        view, error = self._view(name)
        if error is not None:
            return ViewCheck(point.index, None, (), error)
        current = self._view_index(name, view).get(key)
        st = point.entry
        diffs: list[FieldChange] = []
        if st.placement in ("archive", "removed"):
            if current is not None:
                diffs.append(FieldChange(PLACEMENT, st.placement, "view"))
        elif current is None:
            diffs.append(FieldChange(PLACEMENT, st.get(PLACEMENT), "absent"))
        else:
            for field_name in sorted(st.fields):
                value = st.fields[field_name]
                if field_name == TEXT_SHA256:
                    have = text_sha256(current.get("text"))
                else:
                    have = current.get(field_name, UNKNOWN)
                if not same_value(value, have):
                    diffs.append(FieldChange(field_name, value, have))
        return ViewCheck(point.index, not diffs, tuple(diffs))

    def _view(self, name: str) -> tuple[Any, str | None]:
        if name not in self._views:
            expected = list if name == REFLECTIONS else dict
            try:
                value: Any = MemoryStore(self._dir).load_view(name, expected)
                self._views[name] = (value, None)
            except (JournalError, OSError) as exc:
                self._views[name] = (None, f"{name} cannot be read: {exc}")
        return self._views[name]

    def _view_index(self, name: str, view: Any) -> dict[EntryKey, dict[str, Any]]:
        """The view's entries by key: each the entry its handler finds (the first with that id,
        as :func:`~journal.handlers.find_entry` and :func:`~journal.handlers.find_persona_entry`
        pick it), indexed once rather than searched per entry."""
        found = self._indexed.get(name)
        if found is None:
            found = {}
            if name == REFLECTIONS:
                for e in view:
                    if isinstance(e, dict) and isinstance(e.get("id"), str):
                        found.setdefault(EntryKey(e["id"]), e)
            else:
                for entity, section in view.items():
                    facts = section.get("facts") if isinstance(section, dict) else None
                    for e in facts if isinstance(facts, list) else ():
                        if isinstance(e, dict) and isinstance(e.get("id"), str):
                            found.setdefault(EntryKey(e["id"], entity), e)
            self._indexed[name] = found
        return found

    # -- reading the journal ---------------------------------------------------------------------

    def _ref(self, at: EventRef | int) -> EventRef:
        if isinstance(at, EventRef):
            return at
        if not 0 <= at < len(self._events):
            raise HistoryInputError(f"no event #{at} in the journal of {self.diagnosis.name}")
        return EventRef(at, self._event_id(at))

    def _type(self, i: int) -> str:
        events = self._events
        return events.type(i) if isinstance(events, EventList) else events[i].type

    def _event_id(self, i: int) -> str:
        events = self._events
        return events.event_id(i) if isinstance(events, EventList) else events[i].event_id

    def _offset(self, i: int) -> int:
        events = self._events
        return events.offset(i) if isinstance(events, EventList) else events[i].offset

    def _payloads(self, indices: Sequence[int]) -> Iterator[tuple[int, str, Any]]:
        """``(index, type, payload)`` of the events ``indices``, re-read by their offsets."""
        if not indices:
            return
        try:
            found = events_at(self._journal, [self._offset(i) for i in indices])
        except OSError as exc:
            raise HistoryError(f"{JOURNAL_NAME} cannot be read: {exc.strerror or exc}") from exc
        for i in indices:
            ev = found.get(self._offset(i))
            if ev is None or ev.event_id != self._event_id(i):
                raise self._changed(i)
            yield i, ev.type, _payload(ev)

    def _fold(self, upto: int) -> Iterator[tuple[int, EntryKey, EntryState]]:
        """Every event up to ``upto`` that touches an entry, in journal order: ``(index, entry,
        the entry after it)``, the journal read once from the start."""
        events = self._events
        entries = events.entries if isinstance(events, EventList) else None
        ids = events.event_id if isinstance(events, EventList) else None
        runs = self._not_run()
        states: dict[EntryKey, EntryState] = {}
        i = -1
        try:
            for batch, _defects in iter_journal(self._journal):
                for ev in batch:
                    i += 1
                    if i > upto:
                        return
                    ref = entries[i] if entries is not None else events[i].entry
                    if ref is None:
                        continue
                    if ev.event_id != (ids(i) if ids is not None else events[i].event_id):
                        raise self._changed(i)
                    etype = ev.type
                    payload = _payload(ev)
                    key = key_of(etype, payload)
                    if key is None:
                        continue
                    before = states.get(key)
                    # Replay does not run a blocked or parked event: the entry stays as it was.
                    after = (before or EntryState()) if i in runs else step(before, etype, payload)[0]
                    states[key] = after
                    yield i, key, after
        except OSError as exc:
            raise HistoryError(f"{JOURNAL_NAME} cannot be read: {exc.strerror or exc}") from exc
        if i < upto:
            raise self._changed(i + 1)

    def _not_run(self) -> set[int]:
        """Indices of the events replay does not run: blocked and parked (from the diagnosis)."""
        out: set[int] = set()
        for info in self._noted():
            if info.state == "blocked" or info.reason == "parked":
                out.add(info.index)
        return out

    def _noted(self) -> Iterator[EventInfo]:
        """The events that have a state other than ``applied`` or a reason."""
        events = self._events
        if isinstance(events, EventList):
            # Both scans are C-level; a million-event journal has a handful of noted events.
            noted = set(_noted_indices(events))
            noted.update(info.index for info in events.not_applied())
            for i in sorted(noted):
                yield events[i]
            return
        for info in events:
            if info.state != "applied" or info.reason is not None:
                yield info

    def _applied_marks(self) -> Callable[[int], bool]:
        """Whether event ``i`` is applied (:attr:`Point.applied`), for a whole-journal pass."""
        not_applied = {info.index for info in self._noted() if not _applied(info)}
        return lambda i: i not in not_applied

    def _changed(self, i: int) -> HistoryError:
        return HistoryError(
            f"{JOURNAL_NAME} changed since it was diagnosed: event #{i} is no longer where the diagnosis found it; "
            "diagnose the folder again"
        )


def _applied(info: EventInfo) -> bool:
    return (info.state == "applied" and info.reason != "parked") or info.state == "suspect"


def _noted_indices(events: EventList) -> Iterator[int]:
    # The events the diagnosis gave a reason to (an applied one with a reason is a parked one).
    # EventList has no public accessor for them; see the report of issue 18.
    notes: dict[int, Any] = events._notes
    return iter(notes)


#: A payload the exact parser refuses (cannot happen for a record the reader took; kept total).
_UNREADABLE = ("unreadable payload",)


def _payload(ev: Any) -> Any:
    try:
        return ev.payload
    except ValueError:
        return _UNREADABLE  # not an object: the handler refuses it, and so does the step


def _with_agreement(point: Point, agrees: bool | None) -> Point:
    return Point(
        point.index,
        point.event_id,
        point.type,
        point.ts,
        point.state,
        point.reason,
        point.effect,
        point.entry,
        point.changed,
        agrees,
    )


def _index_of(events: Sequence[EventInfo], event_id: str) -> int | None:
    for i, info in enumerate(events):
        if info.event_id == event_id:
            return i
    return None


def _order(key: EntryKey) -> tuple[int, str, str]:
    return (0 if key.entity is None else 1, key.entity or "", key.id)
