"""The overview ruler's marks (issue 16 item 19): which rows shown are problems or bookmarks, and
how they fold into one mark per pixel. Qt-free; computed once per reset or state change, so that
painting a ruler over a million rows only walks its buckets."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from inspector.core.timeline import DAMAGED, PROBLEM_STATES, CharacterTimeline

#: Mark kinds, the most telling first: a pixel holding several shows the first of them.
MARK_KINDS = ("blocked", DAMAGED, "orphaned", "suspect", "bookmark")
_RANK = {kind: i for i, kind in enumerate(MARK_KINDS)}

#: Above this share of problem rows, one pass over the rows beats a binary search per problem.
_DENSE = 1 / 16


@dataclass(frozen=True, slots=True)
class Mark:
    """One row worth a mark on the ruler.

    Attributes:
        pos: its position among the rows shown.
        kind: one of :data:`MARK_KINDS`.
    """

    pos: int
    kind: str


def problem_marks(timeline: CharacterTimeline, refs: Sequence[int]) -> list[Mark]:
    """The rows of ``refs`` (the rows shown, file-ordered) whose state is a problem, in order.

    The timeline's own rule says what a problem is (:data:`PROBLEM_STATES`, :meth:`state`); the
    candidates come from its per-state index (a C-level scan), and only those are placed.
    """
    n = len(refs)
    if n == 0:
        return []
    event_states = sorted(PROBLEM_STATES - {DAMAGED})
    candidates: list[int] = []
    if not timeline.provisional:
        for state in event_states:
            candidates += timeline.events.indices(state)
    candidates += [~k for k in range(len(timeline.defects))]
    state = timeline.state
    if len(candidates) > n * _DENSE:
        return [Mark(pos, s) for pos, r in enumerate(refs) if (s := state(r)) in PROBLEM_STATES]
    out: list[Mark] = []
    for ref in candidates:
        s = state(ref)
        if s not in PROBLEM_STATES:
            continue
        pos = timeline.position(refs, ref)
        if pos is not None:
            out.append(Mark(pos, s))
    out.sort(key=lambda m: m.pos)
    return out


def buckets(marks: Iterable[Mark], rows: int, pixels: int) -> dict[int, Mark]:
    """One mark per pixel of a ruler ``pixels`` high over ``rows`` rows: for each pixel holding a
    mark, its most telling one (:data:`MARK_KINDS` order; the first row among equals)."""
    if rows <= 0 or pixels <= 0:
        return {}
    out: dict[int, Mark] = {}
    for mark in marks:
        y = min(pixels - 1, mark.pos * pixels // rows)
        old = out.get(y)
        if old is None or _RANK[mark.kind] < _RANK[old.kind]:
            out[y] = mark
    return out


def pixel_of(pos: int, rows: int, pixels: int) -> int:
    """The ruler pixel of row ``pos`` (the same folding as :func:`buckets`)."""
    return min(pixels - 1, max(0, pos) * pixels // rows) if rows > 0 and pixels > 0 else 0


def mark_near(folded: dict[int, Mark], y: int, reach: int = 3) -> Mark | None:
    """The mark at pixel ``y`` or the nearest within ``reach`` pixels (a click needs no aim)."""
    for d in range(reach + 1):
        for candidate in (y - d, y + d):
            if candidate in folded:
                return folded[candidate]
    return None
