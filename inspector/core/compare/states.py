"""The states part of a comparison (issue 25 item 2): each side's event states and park decisions
as its diagnosis gives them (nothing is decided again here), and the events both sides hold whose
state or reason differs.

Only the events that are not ``applied`` on some side, or parked, can differ: every other event is
``applied`` without a reason on both sides.
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.compare.value import EventRef, ParkRef, SideStates, StateChange, StatesDiff
from journal.diagnosis import CharacterDiagnosis
from journal.park import read_parked


def _parked_ids(char_dir: Path) -> list[str]:
    """The ids a person parked, in the order of ``events_parked.ndjson`` (each once)."""
    seen: dict[str, None] = {}
    for record in read_parked(char_dir).records:
        seen.setdefault(record["event_id"], None)
    return list(seen)


def _side(diag: CharacterDiagnosis, parked_ids: list[str], index_of: dict[str, int]) -> SideStates:
    parked = []
    for eid in parked_ids:
        i = index_of.get(eid)
        if i is None:
            parked.append(ParkRef(eid, None, None, None))
        else:
            info = diag.events[i]
            parked.append(ParkRef(eid, i, info.state, info.reason))
    b = diag.blocked
    blocked = None if b is None else EventRef(b.index, b.event_id, b.type, b.line)
    return SideStates(diag.counts(), blocked, None if b is None else b.reason, tuple(parked))


def compare_states(
    a_dir: Path,
    b_dir: Path,
    a_diag: CharacterDiagnosis,
    b_diag: CharacterDiagnosis,
    prefix: int,
    ids: tuple[list[str], list[str]] | None = None,
) -> StatesDiff:
    """Both sides' states and park decisions, and the events whose state differs (``prefix``: the
    journals' common prefix, where an event has the same index on both sides; ``ids``: each side's
    event ids in order, when the caller has them already)."""
    a_ids, b_ids = ids if ids is not None else (a_diag.events.event_ids(), b_diag.events.event_ids())
    # Past the common prefix an id is looked up; inside it, it is at the same index.
    a_rest = {eid: i for i, eid in enumerate(a_ids[prefix:], prefix)}
    b_rest = {eid: i for i, eid in enumerate(b_ids[prefix:], prefix)}
    parked_a, parked_b = _parked_ids(a_dir), _parked_ids(b_dir)

    def index_in(ids: list[str], rest: dict[str, int]) -> dict[str, int]:
        """The index of each parked id of either side (the first event with it)."""
        out = {}
        for eid in {*parked_a, *parked_b}:
            i = rest.get(eid)
            if i is None:
                try:
                    i = ids.index(eid, 0, prefix)
                except ValueError:
                    continue
            out[eid] = i
        return out

    a_index, b_index = index_in(a_ids, a_rest), index_in(b_ids, b_rest)
    diff = StatesDiff(_side(a_diag, parked_a, a_index), _side(b_diag, parked_b, b_index))
    candidates = {e.index for e in a_diag.events.not_applied()} | set(a_index.values())
    others = {e.index for e in b_diag.events.not_applied()} | set(b_index.values())
    for j in others:  # B's candidates, at their index on A's side
        i = j if j < prefix else a_rest.get(b_ids[j])
        if i is not None:
            candidates.add(i)
    for i in sorted(candidates):
        eid = a_ids[i]
        j = i if i < prefix else b_rest.get(eid)
        if j is None:
            continue  # only A holds it
        x, y = a_diag.events[i], b_diag.events[j]
        if (x.state, x.reason) != (y.state, y.reason):
            diff.changes.append(StateChange(eid, i, x.state, x.reason, j, y.state, y.reason))
    return diff
