"""Where a finding points in the window (:func:`inspector.controllers.finding_target.finding_target`):
its event, its journal line, then its file; a journal-level finding at the journal's first line or
its end; nowhere when none of them is shown."""

from __future__ import annotations

import os

import pytest

from inspector.controllers.finding_target import FindingTarget, finding_target
from journal.diagnosis import Finding

JOURNAL = "events.ndjson"
VIEW = os.path.join("views", "a.json")  # as the diagnosis names it, with the platform's separator


class Rows:
    """A timeline that knows event ``e7`` (ref 7) and journal line 12 (a damaged line, ref -1, and
    the event recovered from it, ref 4)."""

    def find_event(self, event_id: str) -> int | None:
        return 7 if event_id == "e7" else None

    def refs_at_line(self, line: int) -> list[int]:
        return [-1, 4] if line == 12 else []


@pytest.mark.parametrize(
    ("finding", "target"),
    [
        (Finding("x", "error", "m", event_id="e7", line=12), FindingTarget("event", ref=7)),
        (Finding("x", "error", "m", event_id="gone", line=12), FindingTarget("event", ref=-1)),
        (Finding("x", "error", "m", event_id="gone", line=99, file=JOURNAL), FindingTarget("event", position=9)),
        (Finding("compaction.due", "info", "m", file=JOURNAL), FindingTarget("event", position=0)),
        (Finding("outbox.pending", "info", "m", file="outbox.ndjson"), FindingTarget("outbox")),
        (Finding("x", "warning", "m", file=VIEW), FindingTarget("views", view_file="views/a.json")),
        (Finding("x", "warning", "m", event_id="gone"), None),
    ],
)
def test_a_finding_points_at_its_event_then_its_line_then_its_file(finding, target):
    assert finding_target(Rows(), finding, rows_shown=10) == target


def test_a_journal_finding_points_nowhere_when_no_row_is_shown():
    for code in ("compaction.due", "server.next_append_glued"):
        assert finding_target(Rows(), Finding(code, "info", "m", file=JOURNAL), rows_shown=0) is None
