"""Find in the timeline (issue 16 item 15, issue 27 item 15): where the find text shows in a
piece of text, and which row F3 / Shift+F3 (or F2 for bookmarks) goes to next among the rows it
marks. Qt-free; the window paints and selects."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass


def match_spans(text: str, pattern: re.Pattern[str] | None, limit: int = 64) -> list[tuple[int, int]]:
    """``(start, end)`` of each non-empty match of ``pattern`` in ``text``, at most ``limit``
    (a cell or a payload shows only so many; a pattern like ``.`` must not build thousands)."""
    if pattern is None or not text:
        return []
    out: list[tuple[int, int]] = []
    for m in pattern.finditer(text):
        if m.end() > m.start():  # an empty match (``a*``) marks nothing
            out.append((m.start(), m.end()))
            if len(out) >= limit:
                break
    return out


@dataclass(frozen=True, slots=True)
class Step:
    """Where a find-next / find-previous lands.

    Attributes:
        pos: the row to select.
        wrapped: it went past the last (or first) row and started over.
    """

    pos: int
    wrapped: bool


def step_among(positions: Sequence[int], current: int | None, step: int) -> Step | None:
    """The marked row after (``step`` = 1) or before (-1) row ``current`` among ``positions``
    (sorted row positions: the find's matches, the bookmarks), wrapping around; from nothing
    selected, the first or the last; ``None`` when no row is marked."""
    if not positions:
        return None
    if current is None:
        return Step(positions[0] if step > 0 else positions[-1], False)
    if step > 0:
        i = bisect.bisect_right(positions, current)
        return Step(positions[i], False) if i < len(positions) else Step(positions[0], True)
    i = bisect.bisect_left(positions, current) - 1
    return Step(positions[i], False) if i >= 0 else Step(positions[-1], True)
