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
from dataclasses import dataclass, field
from typing import Any

from journal.appliedset import sentinel_run
from journal.diagnosis.checks import PARKED_MESSAGE, Character
from journal.diagnosis.eventlist import EventList
from journal.diagnosis.folder import ProjectionStore
from journal.engine import Decision, TailDecisions, TailPass, decide_tail, handler_apply
from journal.errors import ViewDriftError
from journal.events import SENTINEL_NAME, Event
from journal.handlers import run_handler
from journal.holds import Entry
from journal.reader import iter_journal_from
from journal.serverrules import server_reader
from journal.views import PERSONA


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

    decisions: TailDecisions
    holds: list[Hold] = field(default_factory=list)
    held: int = 0
    applies: int = 0
    already: int = 0

    @property
    def unapplied(self) -> int:
        """Events after the sentinel a run has still to apply (or cannot): applies, held, blocked."""
        return self.applies + self.held + len(self.holds)


def decide_pending(c: Character) -> None:
    """Our replay's decision for every event after the sentinel, from the tail-decision engine
    (:func:`journal.engine.decide_tail`) run on an in-memory overlay of the folder: the states,
    reasons and findings of the tail, and what a run would write (the sentinel, the applied set)."""
    events, sindex, folder = c.events, c.sindex, c.folder
    assert folder is not None
    if not c.journal_ok or c.diag.sentinel.state == "refused":
        return  # a sentinel that is not a regular file: our replay refuses to run (check_pending)
    hidden = server_reader(c.defects, c.bom_lines).hidden_lines

    def visible(i: int) -> bool:
        return events.line(i) not in hidden

    def behind() -> Iterator[tuple[str, bool]]:
        for i in range(sindex, -1, -1):
            yield events.event_id(i), visible(i)

    expected = c.sentinel_read.event_id if c.diag.sentinel.state in ("ok", "unknown_id") else None
    run = sentinel_run(expected, behind() if sindex >= 0 else iter(()))
    store = ProjectionStore(folder)
    merges: dict[int, Any] = {}
    decided = decide_tail(
        _tail_events(c, visible, merges),
        apply=handler_apply(c.registry, store, store.focus),
        tail_pass=TailPass(expected, c.applied, run, c.parked),
        index=lambda eid: _index(events, eid),
    )
    c.diag.tail = decided
    result = c.tail = TailResult(decided)
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


def _index(events: EventList, event_id: str) -> int:
    i = events.index_of(event_id)
    return -1 if i is None else i


def _tail_events(
    c: Character, visible: Callable[[int], bool], merges: dict[int, Any]
) -> Iterator[tuple[int, Event, bool]]:
    """The events after the sentinel, read again with their payloads, as ``(index, event, visible)``;
    the payloads of merges (``persona.entry_updated``) are kept in ``merges`` for :func:`_held_merges`."""
    events = c.events
    n = len(events)
    start = c.sindex + 1
    if start >= n:
        return
    i = start
    for batch, _defects in iter_journal_from(c.journal_path, events.offset(start), events.line(start) - 1):
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
            "The sentinel stays before it until it applies or a person parks it "
            f"(memory-inspector replay PATH --character {c.diag.name} --park {events.event_id(hold.index)})",
            event_id=events.event_id(hold.index),
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
