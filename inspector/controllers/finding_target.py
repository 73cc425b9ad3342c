"""What a finding is about, as a place in the window: its event's row, its damaged line's row, a
journal-level finding's row (the first line for the journal's age, the end for anything else),
the Outbox tab, or a view file. The window's navigation selects it (Findings ▸ activate)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, Protocol

from inspector.core.vocabulary import JOURNAL_NAME, OUTBOX_NAME, Finding

#: The code of the one journal-level finding about the journal's first line (its age).
JOURNAL_AGE_CODE = "compaction.due"


class LocatesRows(Protocol):
    """What is asked of a timeline (:class:`~inspector.core.timeline.CharacterTimeline`)."""

    def find_event(self, event_id: str) -> int | None: ...

    def refs_at_line(self, line: int) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class FindingTarget:
    """Where a finding points.

    Attributes:
        tab: the detail tab to show: the Event, Outbox or Views tab.
        ref: the row to select, by its ref (``None``: none by ref).
        position: the row to select, by its position among the rows shown (``None``: none).
        view_file: the view file to show in the Views tab (relative, ``/``-separated).
    """

    tab: Literal["event", "outbox", "views"]
    ref: int | None = None
    position: int | None = None
    view_file: str | None = None


def finding_target(tl: LocatesRows, finding: Finding, rows_shown: int) -> FindingTarget | None:
    """Where ``finding`` points in ``tl`` shown as ``rows_shown`` rows (``None``: nowhere shown).

    Its event first, then its journal line, then its file.
    """
    if finding.event_id:
        index = tl.find_event(finding.event_id)
        if index is not None:
            return FindingTarget("event", ref=index)
    if finding.line:
        refs = tl.refs_at_line(finding.line)
        if refs:
            return FindingTarget("event", ref=refs[0])
    if not finding.file:
        return None
    rel = finding.file.replace(os.sep, "/")
    if rel == JOURNAL_NAME:
        # A journal-level finding: NDJSON is never parsed as one document. The age of a journal is
        # its first line's; anything else about it (a torn end) is at its end.
        position = 0 if finding.code == JOURNAL_AGE_CODE else rows_shown - 1
        return FindingTarget("event", position=position) if rows_shown > 0 else None
    if rel == OUTBOX_NAME:
        return FindingTarget("outbox")
    return FindingTarget("views", view_file=rel)
