"""The events after the sentinel: what our guarded replay does with them, and the wedge.

Replay holds per entry (:mod:`journal.holds`): an event it cannot apply holds the entries it
touches, and later events of those entries wait behind it, while events of other entries still
apply. An event whose entries cannot be known, or a reason that holds everything, stops all that
follows, as the design record's global stop did. Events our replay already applied past a held
event are in the applied set (:mod:`journal.appliedset`), and count as applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from journal.appliedset import Rerun
from journal.diagnosis.checks import PARKED_MESSAGE, Character
from journal.diagnosis.folder import ProjectionStore
from journal.errors import ViewDriftError
from journal.handlers import run_handler, try_apply
from journal.holds import Entry, Holds, event_entries, stops_everything
from journal.park import is_parked
from journal.reader import iter_journal_from
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
    """What the tail check found: the holds, in order, and the events held behind them."""

    holds: list[Hold] = field(default_factory=list)
    held: int = 0
    applies: int = 0
    already: int = 0


def check_tail(c: Character) -> None:
    """Run the pending events' handlers in order, in memory, holding per entry where replay would."""
    events, sindex, folder, findings, diag = c.events, c.sindex, c.folder, c.findings, c.diag
    assert folder is not None
    n = len(events)
    start = sindex + 1
    if start >= n or not c.journal_ok:
        return
    rerun = Rerun(c.applied)
    store = ProjectionStore(folder)
    holds = Holds()
    result = c.tail = TailResult()
    owner: dict[Entry, Hold] = {}
    stopper: Hold | None = None
    held_updates: list[tuple[int, Any]] = []
    i = start
    for batch, _defects in iter_journal_from(c.journal_path, events.offset(start), events.line(start) - 1):
        for ev in batch:
            while i < n and events.offset(i) < ev.offset:
                i += 1  # not found again: the file changed under us; skip it
            if not (i < n and events.offset(i) == ev.offset and events.event_id(i) == ev.event_id):
                continue
            here, i = i, i + 1
            if is_parked(c.parked, ev.event_id):
                events.set_state(here, "applied", "parked", PARKED_MESSAGE)
                continue
            entries = event_entries(ev.type, ev.payload)
            if rerun.admit_applied(ev.event_id, entries):
                events.set_state(here, "applied")  # applied past a held event: never run again
                result.already += 1
                continue
            if not holds.admit(entries):
                hold = stopper if stopper is not None else _owner_of(owner, entries)
                if hold is not None:
                    hold.behind += 1
                    for e in entries or ():
                        owner.setdefault(e, hold)
                    events.set_state(here, "pending", "held", f"held behind event #{hold.index}")
                result.held += 1
                if ev.type == "persona.entry_updated":
                    held_updates.append((here, ev.payload))
                if holds.everything and stopper is None:
                    stopper = hold
                continue
            store.focus(ev.payload)
            reason = try_apply(c.registry, store, ev.type, ev.payload)[0]
            if reason is None:
                result.applies += 1
                rerun.note_applied(ev.event_id, entries)  # later applied-set events of these entries run again
                continue
            code, message = reason
            everything = entries is None or stops_everything(code)
            holds.hold(None if everything else entries, code)
            hold = Hold(here, frozenset() if everything else (entries or frozenset()))
            result.holds.append(hold)
            for e in hold.entries:
                owner.setdefault(e, hold)
            if everything:
                stopper = hold
            events.set_state(here, "blocked", code, message)
            if diag.blocked is None:
                diag.blocked = events[here]
                diag.blocked_message = message
                diag.blocked_holds = _entries_text(hold.entries)
            what = ev.type or "(missing type)"
            if everything:
                text = f"replay stops at event #{here} ({what}): {code}: {message}"
            else:
                text = (
                    f"replay cannot apply event #{here} ({what}): {code}: {message}; it holds "
                    f"{_entries_text(hold.entries)} and goes on with other entries"
                )
            findings.add("replay.blocked", "error", text, event_id=ev.event_id)
            if code == "view_drift":
                findings.add("view.drift", "error", message, event_id=ev.event_id, file=PERSONA)
    _held_merges(c, held_updates)
    _wedge_findings(c, result)


def _owner_of(owner: dict[Entry, Hold], entries: frozenset[Entry] | None) -> Hold | None:
    for e in entries or ():
        if e in owner:
            return owner[e]
    return None


def _entries_text(entries: frozenset[Entry]) -> str:
    return ", ".join(f"{kind} {eid}" for kind, eid in sorted(entries)) or "every entry"


def _held_merges(c: Character, held: list[tuple[int, Any]]) -> None:
    """Held merges that will fail the same text-hash check once replay gets to them."""
    assert c.folder is not None
    check = ProjectionStore(c.folder)
    entry_updated = c.registry.get("persona.entry_updated")
    if entry_updated is None:
        return
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
    pending = n - (sindex + 1) - (result.already if result is not None else 0)
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
