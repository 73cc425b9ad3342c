"""One vocabulary (issue 23): every record has exactly one state, and the counts sum to the records.

A record is an event or a damaged line (a line that is not an event), never both: a record with an
undeclared type is an event (``blocked``, reason ``no_handler``, with its ``event.unknown_type``
finding), not also a damaged line. ``held`` and ``parked`` are reasons beside a state, never
states. A character's health is the highest severity among its findings, whatever the counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journal.diagnosis import EVENT_STATES, diagnose_character
from journal.events import JOURNAL_NAME, encode_event, make_event
from journal.fixtures import CASES, healthy
from journal.reader import read_journal
from journal.views import REFLECTIONS


def _records(cd: Path) -> int:
    """Records as the format notes define them, counted without the diagnosis: the journal's
    non-blank lines, plus the event a glued line carries beside its fragment."""
    path = cd / JOURNAL_NAME
    if not path.exists():
        return 0
    lines = [ln for ln in path.read_bytes().split(b"\n") if ln.strip()]
    glued = sum(1 for d in read_journal(path).defects if d.kind == "glued" and d.recovered_event_id)
    return len(lines) + glued


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_counts_sum_to_the_records_and_each_record_has_one_state(tmp_path: Path, case: str) -> None:
    d = diagnose_character(CASES[case](tmp_path, case).path)
    counts = d.counts()
    assert set(counts) == {*EVENT_STATES, "defects"}
    assert sum(counts.values()) == _records(Path(d.path))
    assert all(e.state in EVENT_STATES for e in d.events)
    assert all(e.reason not in EVENT_STATES or e.state == "blocked" for e in d.events)
    doc = d.to_json()
    assert doc["counts"]["defects"] == len(doc["defects"])


def test_an_undeclared_type_is_a_blocked_event_and_not_also_a_damaged_line(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    with open(cd / JOURNAL_NAME, "ab") as fh:
        invented = make_event("7b0c1d2e-0000-4000-8000-000000000001", "memory.invented", "2026-05-02T09:00:00", {})
        fh.write(encode_event(invented))
    d = diagnose_character(cd)
    last = d.events[-1]
    assert (last.state, last.reason) == ("blocked", "no_handler")
    assert d.counts()["blocked"] == 1 and d.counts()["defects"] == 0
    assert "event.unknown_type" in {f.code for f in d.findings}
    assert sum(d.counts().values()) == _records(cd)


def test_health_is_the_highest_finding_severity_whatever_the_counts(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    assert diagnose_character(cd).health in ("none", "info")
    (cd / REFLECTIONS).write_bytes((cd / REFLECTIONS).read_bytes()[:10])  # a truncated view
    d = diagnose_character(cd)
    assert d.counts()["blocked"] == d.counts()["pending"] == d.counts()["defects"] == 0
    assert d.health == "error" and "view.corrupt" in {f.code for f in d.findings}
    json.dumps(d.to_json())  # still one JSON document
