"""The events after the sentinel: what our guarded replay does with them, and the wedge.

The decisions are the tail-decision engine's (:mod:`journal.engine`, the one home of them, which the
reconciler and the replay plan use too), run here on an in-memory overlay of the folder; this module
turns them into the diagnosis's states, reasons and findings. Replay holds per entry
(:mod:`journal.holds`): an event it cannot apply holds the entries it touches, and later events of
those entries wait behind it, while events of other entries still apply. Events our replay already
applied past a held event are in the applied set (:mod:`journal.appliedset`), and count as applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from journal.appliedset import sentinel_run
from journal.diagnosis.checks import PARKED_MESSAGE, Character
from journal.diagnosis.eventlist import EventList
from journal.diagnosis.folder import Folder, ProjectionStore
from journal.diagnosis.scan import JournalScan
from journal.engine import Decision, TailDecisions, TailPass, decide_tail, handler_apply
from journal.errors import ViewDriftError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event
from journal.finding import Advice
from journal.handlers import HandlerRegistry, run_handler
from journal.holds import Entry
from journal.park import ParkedRead
from journal.reader import iter_journal_from
from journal.serverrules import server_reader
from journal.views import PERSONA, SentinelRead


@dataclass(slots=True)
class Hold:
    """One place our replay holds: the event it cannot apply, and what waits behind it.

    Attributes:
        index: the held event.
        entries: the entries it holds (empty: it holds everything).
        behind: how many later events wait behind it.
    """

    index: int
    entries: frozenset[Entry]
    behind: int = 0


@dataclass(slots=True)
class TailResult:
    """The engine's decisions for the tail, as the findings read them: the holds, in order, and
    how many events are held behind them, apply, or are already applied."""

    holds: list[Hold] = field(default_factory=list)
    held: int = 0
    applies: int = 0
    already: int = 0

    @property
    def unapplied(self) -> int:
        """Events after the sentinel a run has still to apply (or cannot): applies, held, blocked."""
        return self.applies + self.held + len(self.holds)


@dataclass(slots=True)
class TailRun:
    """Our replay's pass over the tail as the diagnosis ran it: the engine on an in-memory overlay
    of the folder (kept when asked for, ``diagnose_character(keep_run=True)``, as
    ``diagnosis.tail.run``). The replay plan reads from it what a run writes
    (:func:`journal.dryrun.predict_run`) and runs the pass again for another scope
    (:meth:`again`), with neither a scratch copy of the folder nor another read of the whole
    journal.

    Attributes:
        scan: the journal as the diagnosis read it.
        folder: the views and shards as the diagnosis read them.
        registry: the handlers the pass ran.
        sentinel: ``events_applied.json`` as read.
        sindex: the sentinel's event (-1: replay starts at the first event).
        expected: the sentinel the pass starts from (``None``: missing, malformed or null).
        applied: the ids of the valid applied set.
        parked: the parked events (for :meth:`again` with ``park``: those and that one).
        hidden: journal lines whose event the memory server's reader cannot see.
        decisions: the pass's decisions.
        store: the overlay its handlers ran on, holding what they saved.
        until: the ``until`` of the pass (``None``: every event after the sentinel).
    """

    scan: JournalScan
    folder: Folder
    registry: HandlerRegistry
    sentinel: SentinelRead
    sindex: int
    expected: str | None
    applied: frozenset[str]
    parked: ParkedRead
    hidden: frozenset[int]
    decisions: TailDecisions = field(default_factory=TailDecisions)
    store: ProjectionStore | None = None
    until: str | None = None
    _index: _Index | None = None

    @property
    def char_dir(self) -> Path:
        return self.folder.dir

    @property
    def events(self) -> EventList:
        return self.scan.events

    def index(self, event_id: str) -> int:
        """An event id's index among the journal's events (-1 when it is not there)."""
        if self._index is None:
            self._index = _Index(self.scan.events, self.sindex)
        return self._index(event_id)

    def again(self, *, until: str | None = None, park: str | None = None) -> TailRun:
        """The pass again, on a fresh overlay of the same views and the same journal read: up to
        and including the event ``until`` (as the reconciler's ``until``: when no event after the
        sentinel has that id, no event is looked at), or with the event ``park`` parked too (what
        parking it does to the tail). The tail's payloads are read again, from the sentinel on.

        Raises:
            OSError: the journal cannot be read again.
        """
        parked = self.parked if park is None else replace(self.parked, ids=self.parked.ids | {park})
        other = TailRun(
            self.scan, self.folder, self.registry, self.sentinel, self.sindex, self.expected, self.applied, parked,
            self.hidden, until=until, _index=self._index,
        )
        other._decide({})
        return other

    def _visible(self, i: int) -> bool:
        return self.scan.events.line(i) not in self.hidden

    def _decide(self, merges: dict[int, Any]) -> None:
        events, sindex = self.scan.events, self.sindex

        def behind() -> Iterator[tuple[str, bool]]:
            for i in range(sindex, -1, -1):
                yield events.event_id(i), self._visible(i)

        run = sentinel_run(self.expected, behind() if sindex >= 0 else iter(()))
        store = self.store = ProjectionStore(self.folder)
        tail: Iterator[tuple[int, Event, bool]] = _tail_events(
            self.folder.dir / JOURNAL_NAME, events, sindex, self._visible, merges
        )
        if self.until is not None and self.index(self.until) <= sindex:
            tail = iter(())  # the reconciler's "nothing in scope": no event is looked at
        self.decisions = decide_tail(
            tail,
            apply=handler_apply(self.registry, store, store.focus),
            tail_pass=TailPass(self.expected, self.applied, run, self.parked),
            index=self.index,
            until=self.until,
        )


class _Index:
    """An event id's index among the journal's events. The first few are found by a scan of the
    ids; once more are asked (an applied set, a plan), by a table of the events from the sentinel
    on (the only ones a pass asks about but for the sentinel's own run), and by a scan, each answer
    kept, for any other."""

    __slots__ = ("_asked", "_events", "_far", "_near", "_start")

    #: Answers found by a scan before the table is built.
    SCANS = 4

    def __init__(self, events: EventList, sindex: int) -> None:
        self._events = events
        self._start = max(0, sindex)
        self._near: dict[str, int] | None = None
        self._far: dict[str, int] = {}
        self._asked = 0

    def __call__(self, event_id: str) -> int:
        if self._near is None:
            self._asked += 1
            if self._asked > self.SCANS:
                events = self._events
                self._near = {events.event_id(i): i for i in range(self._start, len(events))}
        if self._near is not None:
            i = self._near.get(event_id)
            if i is not None:
                return i
        if event_id not in self._far:
            found = self._events.index_of(event_id)
            self._far[event_id] = -1 if found is None else found
        return self._far[event_id]


def decide_pending(c: Character, *, keep_run: bool = False) -> None:
    """Our replay's decision for every event after the sentinel, from the tail-decision engine
    (:func:`journal.engine.decide_tail`) run on an in-memory overlay of the folder: the states,
    reasons and findings of the tail, and what a run would write (the sentinel, the applied set).

    ``keep_run``: keep the pass (:class:`TailRun`) as ``c.diag.tail.run``."""
    events, folder = c.events, c.folder
    assert folder is not None
    if not c.journal_ok or c.diag.sentinel.state == "refused":
        return  # a sentinel that is not a regular file: our replay refuses to run (check_pending)
    expected = c.sentinel_read.event_id if c.diag.sentinel.state in ("ok", "unknown_id") else None
    tail_run = TailRun(
        JournalScan(events, c.defects, c.diag.journal.lines, c.diag.journal.bytes, c.bom_lines),
        folder,
        c.registry,
        c.sentinel_read,
        c.sindex,
        expected,
        c.applied,
        c.parked,
        frozenset(server_reader(c.defects, c.bom_lines).hidden_lines),
    )
    merges: dict[int, Any] = {}
    tail_run._decide(merges)
    decided = tail_run.decisions
    if keep_run:
        decided.run = tail_run
    c.diag.tail = decided
    result = c.tail = TailResult()
    by_index: dict[int, Hold] = {}
    held_merges: list[tuple[int, Any]] = []
    for d in decided.decisions:
        if d.kind == "parked":
            events.set_state(d.index, "applied", "parked", PARKED_MESSAGE)
        elif d.kind == "already":
            events.set_state(d.index, "applied")  # applied past a held event: never run again
            result.already += 1
        elif d.kind == "applies":
            result.applies += 1
        elif d.kind == "held":
            result.held += 1
            hold = by_index.get(d.held_by) if d.held_by is not None else None
            if hold is not None:
                hold.behind += 1
            events.set_state(d.index, "pending", "held", _held_message(d.held_by))
            if d.index in merges:
                held_merges.append((d.index, merges[d.index]))
        else:
            hold = Hold(d.index, frozenset() if d.holds_everything else (d.entries or frozenset()))
            by_index[d.index] = hold
            result.holds.append(hold)
            _blocked(c, d, hold)
    _held_merges(c, held_merges)
    _wedge_findings(c, result)


def _tail_events(
    path: Path, events: EventList, sindex: int, visible: Callable[[int], bool], merges: dict[int, Any]
) -> Iterator[tuple[int, Event, bool]]:
    """The events after the sentinel, read again with their payloads, as ``(index, event, visible)``;
    the payloads of merges (``persona.entry_updated``) are kept in ``merges`` for :func:`_held_merges`."""
    n = len(events)
    start = sindex + 1
    if start >= n:
        return
    i = start
    for batch, _defects in iter_journal_from(path, events.offset(start), events.line(start) - 1):
        for ev in batch:
            while i < n and events.offset(i) < ev.offset:
                i += 1  # not found again: the file changed under us; skip it
            if not (i < n and events.offset(i) == ev.offset and events.event_id(i) == ev.event_id):
                continue
            if ev.type == "persona.entry_updated":
                merges[i] = ev.payload
            yield i, ev, visible(i)
            i += 1


def _held_message(by: int | None) -> str:
    return f"held behind event #{by}" if by is not None else "held behind an earlier event that cannot be applied"


def _blocked(c: Character, d: Decision, hold: Hold) -> None:
    """The state and findings of an event our replay cannot apply."""
    events, diag, findings = c.events, c.diag, c.findings
    code, message = d.reason or "handler_error", d.message or ""
    events.set_state(d.index, "blocked", code, message)
    if diag.blocked is None:
        diag.blocked = events[d.index]
        diag.blocked_message = message
        diag.blocked_holds = _entries_text(hold.entries)
    what = d.type or "(missing type)"
    if d.holds_everything:
        text = f"replay stops at event #{d.index} ({what}): {code}: {message}"
    else:
        text = (
            f"replay cannot apply event #{d.index} ({what}): {code}: {message}; it holds "
            f"{_entries_text(hold.entries)} and goes on with other entries"
        )
    findings.add("replay.blocked", "error", text, event_id=d.event_id)
    if code == "view_drift":
        findings.add("view.drift", "error", message, event_id=d.event_id, file=PERSONA)


def _entries_text(entries: frozenset[Entry]) -> str:
    return ", ".join(f"{kind} {eid}" for kind, eid in sorted(entries)) or "every entry"


def _held_merges(c: Character, held: list[tuple[int, Any]]) -> None:
    """Held merges that will fail the same text-hash check once replay gets to them."""
    assert c.folder is not None
    entry_updated = c.registry.get("persona.entry_updated")
    if entry_updated is None or not held:
        return
    check = ProjectionStore(c.folder)
    for k, payload in held:
        check.focus(payload)
        try:
            run_handler(entry_updated, check, payload)
        except ViewDriftError as exc:
            c.findings.add(
                "view.drift", "warning", f"pending event #{k}: {exc}", event_id=c.events.event_id(k), file=PERSONA
            )
        except Exception:
            continue


def _wedge_findings(c: Character, result: TailResult) -> None:
    """A hold with events of other entries replaying past it is a wedge: our replay never moves
    the sentinel past it until it applies or is parked."""
    events = c.events
    for hold in result.holds:
        if not hold.entries:
            continue
        ts = events[hold.index].ts
        c.findings.add(
            "replay.held",
            "error",
            f"guarded replay holds {_entries_text(hold.entries)} at event #{hold.index} ({events.type(hold.index)}, "
            f"ts {ts}) since it cannot apply it ({events[hold.index].reason}); {hold.behind} later event"
            f"{'s' if hold.behind != 1 else ''} of {'that entry' if len(hold.entries) == 1 else 'those entries'} "
            f"{'waits' if hold.behind == 1 else 'wait'} behind it, and events of other entries still replay. "
            "The sentinel stays before it until it applies or a person parks it",
            event_id=events.event_id(hold.index),
            advice=Advice("park", c.diag.name, events.event_id(hold.index)),
        )


def check_pending(c: Character) -> None:
    """How many events wait after the sentinel, and whether the next start of our library replays them."""
    n, sindex, diag = len(c.events), c.sindex, c.diag
    result = c.tail
    if diag.sentinel.state == "refused" and c.journal_ok and n:
        c.findings.add(
            "tail.pending",
            "warning",
            f"where the sentinel stands is unknown: {SENTINEL_NAME} {c.sentinel_read.message}; guarded replay "
            f"refuses to run until it is a regular file, so none of the {n} event{'s' if n != 1 else ''} is "
            "applied by it",
            file=SENTINEL_NAME,
        )
        return
    pending = result.unapplied if result is not None else 0
    if pending <= 0:
        return
    if diag.blocked is not None and result is not None:
        first = result.holds[0]
        if not first.entries:
            tail = f"; replay stops at event #{first.index} ({diag.blocked.reason})"
            behind = n - first.index - 1 - result.already
            if behind:
                tail += f" and the {behind} after it wait{'s' if behind == 1 else ''} behind it"
        else:
            held = len(result.holds) + result.held
            tail = f"; replay holds {held} of them, from event #{first.index} ({diag.blocked.reason})"
            if result.applies:
                tail += f", and replays the {result.applies} of other entries"
    else:
        tail = "; our guarded replay applies them (what the memory server's start does: server_start)"
    c.findings.add(
        "tail.pending",
        "warning",
        f"{pending} event{'s' if pending != 1 else ''} after the sentinel "
        f"{'are' if pending != 1 else 'is'} not applied yet{tail}",
        event_id=c.events.event_id(sindex + 1),
    )
