"""Find in the timeline (issue 16 item 15): where the search text shows in a piece of text, and
which row F3 / Shift+F3 goes to next. Qt-free; the window paints and selects."""

from __future__ import annotations

import re
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


def step_row(count: int, current: int | None, step: int) -> Step | None:
    """The next (``step`` = 1) or previous (-1) of ``count`` matching rows after ``current``
    (``None``: nothing selected, so the first or the last); ``None`` when there is no row."""
    if count <= 0:
        return None
    if current is None or not 0 <= current < count:
        return Step(0 if step > 0 else count - 1, False)
    pos = current + step
    if 0 <= pos < count:
        return Step(pos, False)
    return Step(pos % count, True)
