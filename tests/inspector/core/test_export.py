"""Rows and findings as text (copy and export), timestamps at one precision, the time filter."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from inspector.core import export
from inspector.core.check_report import dumps_json, write_human
from inspector.core.export import (
    COL_ENTRY,
    COL_INDEX,
    COL_STATE,
    COL_SUMMARY,
    COL_TIME,
    COL_TYPE,
    RowSet,
    cell_text,
    character_report,
    csv_bytes,
    findings_bytes,
    json_text,
    ndjson_bytes,
    refused_target,
    tsv_cell,
    tsv_text,
)
from inspector.core.filtering import DAMAGED_TYPE, FilterError, TimelineFilter, apply_filter, first_at_or_after
from inspector.core.jobs import Cancelled, CancelToken
from inspector.core.timeline import UNCHECKED, CharacterTimeline
from inspector.core.timestamps import format_ts, parse_time_input, ts_key
from journal.diagnosis import EventInfo, Finding, diagnose_path
from journal.events import encode_event, make_event
from tests.inspector.gui_fixtures import hand_diagnosis

#: Text no export may show while redaction is on.
SECRET = "Master\tdrinks\noolong\r at dawn \x1b[31m"

#: ``ts`` of each event, as written: two precisions, and not in order (a clock moved back).
TIMES = (
    "2026-05-01T09:00:00",
    "2026-05-01T09:00:01.250000",
    "2026-04-30T23:59:59.999",  # earlier than the one before it
    "2026-05-01T10:30:00",
    "not a time",
)


def _event(i: int, ts: str, payload: dict) -> bytes:
    eid = f"{i:08d}-0000-4000-8000-000000000000"
    return encode_event(make_event(eid, "persona.fact_added", ts, payload))


@pytest.fixture
def timeline(tmp_path) -> CharacterTimeline:
    char = tmp_path / "memory" / "alice"
    char.mkdir(parents=True)
    payloads = [{"entity_key": "master", "entry_id": f"card_{i:08x}", "text": SECRET} for i in range(len(TIMES))]
    payloads[1]["entry_id"] = "card\tone\nline"  # hostile ids reach the Entry column as they are
    lines = [_event(i, ts, payload) for (i, ts), payload in zip(enumerate(TIMES), payloads, strict=True)]
    lines.insert(2, b'garbage {"event_id": "torn", "text": "' + SECRET.encode("unicode_escape") + b'\t\n')
    body = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    torn = b'{"event_id": "cut", "text": "garbage and oolong'  # a torn last line (no newline): its defect quotes it
    (char / "events.ndjson").write_bytes(body + torn)
    return CharacterTimeline(hand_diagnosis(char))


def _rows(tl: CharacterTimeline, *, redact: bool = False, columns=None) -> RowSet:
    cols = tuple(columns) if columns is not None else (COL_INDEX, COL_TIME, COL_TYPE, COL_ENTRY, COL_SUMMARY, COL_STATE)
    return RowSet(tl, list(tl.refs), cols, redact)


# -- timestamps ----------------------------------------------------------------------------------------


def test_a_timestamp_shows_the_year_at_one_precision():
    assert format_ts("2026-05-01T09:00:00") == "2026-05-01 09:00:00.000"
    assert format_ts("2026-05-01T09:00:01.250000") == "2026-05-01 09:00:01.250"
    assert format_ts("2026-04-30T23:59:59.999") == "2026-04-30 23:59:59.999"
    assert format_ts("2026-05-01T09:00:01.25+02:00") == "2026-05-01 09:00:01.250+02:00"
    assert format_ts("not a time") == "not a time" and format_ts("") == ""


def test_timestamps_compare_by_time_whatever_their_precision():
    assert ts_key("2026-05-01T09:00:00") == ts_key("2026-05-01T09:00:00.000000")
    assert ts_key("2026-05-01T09:00:00") < ts_key("2026-05-01T09:00:00.1") < ts_key("2026-05-01T09:00:01")
    assert ts_key("garbage") is None


def test_a_typed_bound_covers_the_precision_it_was_typed_at():
    assert parse_time_input("2026-05-01") == "2026-05-01T00:00:00.000000"
    assert parse_time_input("2026-05-01", end=True) == "2026-05-01T23:59:59.999999"
    assert parse_time_input(" 2026-05-01 09:00 ", end=True) == "2026-05-01T09:00:59.999999"
    assert parse_time_input("2026-05-01T09:00:01.25") == "2026-05-01T09:00:01.250000"
    assert parse_time_input("") is None
    for bad in ("yesterday", "2026-13-01", "2026-05-01 25:00", "2026-05-01 09:00 and more"):
        with pytest.raises(ValueError):
            parse_time_input(bad)


# -- the time filter and "go to time" --------------------------------------------------------------------


def test_the_time_range_keeps_events_by_ts_wherever_they_are(timeline):
    refs = list(timeline.refs)
    kept = apply_filter(timeline, refs, TimelineFilter(since="2026-05-01"))
    assert kept == [0, 1, 3]  # not the earlier event after them, nor the damaged line, nor "not a time"
    assert apply_filter(timeline, refs, TimelineFilter(until="2026-04-30")) == [2]
    assert apply_filter(timeline, refs, TimelineFilter(since="2026-05-01 09:00", until="2026-05-01 09:00")) == [0, 1]
    assert apply_filter(timeline, refs, TimelineFilter(types=frozenset({DAMAGED_TYPE}), since="2026-01-01")) == []
    assert TimelineFilter(since="2026").active and TimelineFilter(until="x").by_fields
    with pytest.raises(FilterError):
        apply_filter(timeline, refs, TimelineFilter(since="2026-05-02", until="2026-05-01"))
    with pytest.raises(FilterError):
        TimelineFilter(since="soon").validate()


def test_go_to_time_is_the_first_row_at_or_after_it_in_journal_order(timeline):
    refs = list(timeline.refs)
    # 09:00:00.5 is first reached by event 1 (09:00:01.25), although event 2 (earlier) comes later
    assert refs[first_at_or_after(timeline, refs, "2026-05-01 09:00:00.5")] == 1
    assert refs[first_at_or_after(timeline, refs, "2026-04-30")] == 0
    assert first_at_or_after(timeline, refs, "2027-01-01") is None
    with pytest.raises(FilterError):
        first_at_or_after(timeline, refs, "noon")


# -- TSV, CSV -----------------------------------------------------------------------------------------


def test_tsv_is_the_columns_shown_in_their_order_header_first_one_line_per_row(timeline):
    text = tsv_text(_rows(timeline, columns=(COL_STATE, COL_INDEX, COL_ENTRY, COL_SUMMARY)))
    lines = text.split("\n")
    assert lines[0] == "State\t#\tEntry\tSummary" and lines[-1] == ""
    assert len(lines) == 2 + len(timeline.refs)  # a newline inside a text never starts a line
    assert all(line.count("\t") == 3 for line in lines[:-1])
    assert lines[1].startswith("pending\t0\tmaster/card_00000000\tadded “Master drinks oolong")
    assert lines[2].split("\t")[2] == "master/card\\tone\\nline"
    damaged = lines[3].split("\t")
    assert damaged[:3] == ["damaged line", "", ""] and damaged[3].startswith("not valid JSON: 'garbage")
    assert tsv_cell("a\\b\tc\nd\re") == "a\\\\b\\tc\\nd\\re"


def test_csv_round_trips_through_the_csv_module(timeline):
    rows = _rows(timeline)
    data = csv_bytes(rows)
    parsed = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert parsed[0] == ["#", "Time", "Type", "Entry", "Summary", "State"]
    assert parsed[1:] == list(export.iter_cells(rows))
    assert parsed[1][:4] == ["0", "2026-05-01 09:00:00.000", "persona.fact_added", "master/card_00000000"]
    assert parsed[2][3] == "master/card\tone\nline"  # quoted, not escaped
    assert parsed[6][1] == "not a time" and parsed[7][1] == "line 7"


# -- records --------------------------------------------------------------------------------------------


def test_ndjson_is_the_records_as_the_reader_has_them(timeline):
    data = ndjson_bytes(_rows(timeline))
    journal = (Path(timeline.path) / "events.ndjson").read_bytes().splitlines()
    lines = data.splitlines()
    assert len(lines) == len(timeline.refs)
    assert lines[0] == journal[0]  # the event's line itself
    damaged = json.loads(lines[2])
    assert damaged["damaged_line"] == 3 and damaged["kind"] == "malformed"
    assert damaged["text"] == journal[2].decode("utf-8")
    assert [json.loads(line).get("event_id") for line in lines if b"damaged_line" not in line] == [
        timeline.events.event_id(i) for i in range(len(TIMES))
    ]
    assert json.loads(json_text(_rows(timeline)))[0] == json.loads(journal[0])


def test_a_record_that_no_longer_parses_is_still_valid_json(timeline):
    path = Path(timeline.path) / "events.ndjson"
    raw = bytearray(path.read_bytes())
    offset = timeline.offset(0)
    raw[offset : offset + 1] = b"#"  # the journal changed under the window
    path.write_bytes(bytes(raw))
    first = json.loads(ndjson_bytes(_rows(timeline)).splitlines()[0])
    assert first == {"event_id": timeline.events.event_id(0), "unreadable": first["unreadable"]}
    assert "no longer parses" in first["unreadable"]


# -- redaction ------------------------------------------------------------------------------------------


def _visible_words(text: str) -> list[str]:
    return [w for w in ("oolong", "drinks", "garbage") if w in text]


def test_redaction_applies_to_every_format(timeline):
    rows = _rows(timeline, redact=True)
    assert _visible_words(tsv_text(_rows(timeline))) == ["oolong", "drinks", "garbage"]  # the test can fail
    for text in (tsv_text(rows), csv_bytes(rows).decode(), ndjson_bytes(rows).decode(), json_text(rows)):
        assert _visible_words(text) == [], text[:300]
        assert "‹" in text  # the redaction's labels stand in
    records = [json.loads(line) for line in ndjson_bytes(rows).splitlines()]
    assert records[0]["event_id"] == timeline.events.event_id(0)  # only the texts go
    assert records[2]["text"].startswith("‹damaged line")


def test_findings_are_what_check_reports_for_the_character(tmp_path, timeline):
    root = Path(timeline.path).parent
    diagnosis = diagnose_path(str(root))
    tl = CharacterTimeline(diagnosis.characters[0])
    report = character_report(diagnosis, tl, redact=False)
    assert findings_bytes("json", report) == dumps_json(diagnose_path(str(root), character="alice"))
    doc = json.loads(findings_bytes("json", report))
    assert doc["schema"] == 1 and [c["name"] for c in doc["characters"]] == ["alice"]
    out = io.StringIO()
    write_human(diagnose_path(str(root), character="alice"), out)
    assert findings_bytes("text", report).decode() == out.getvalue()
    # A finding that quotes a damaged line (as a glued line's does, with the defect's message):
    torn = next(d for d in tl.defects if d.kind == "torn_tail")
    quoting = Finding("line.torn_tail", "warning", f"line {torn.line}: {torn.message}", line=torn.line)
    tl.diagnosis.findings.append(quoting)
    assert "garbage" in findings_bytes("text", character_report(diagnosis, tl, redact=False)).decode()
    redacted = character_report(diagnosis, tl, redact=True)
    for fmt in ("json", "text"):
        text = findings_bytes(fmt, redacted).decode()
        assert "garbage" not in text and "‹damaged line" in text, fmt  # not with redaction on
    assert tl.diagnosis.findings[-1] is quoting  # the window's own findings are untouched


# -- jobs and targets -----------------------------------------------------------------------------------


def test_a_cancelled_export_stops_between_chunks(timeline, monkeypatch):
    monkeypatch.setattr(export, "CHUNK_ROWS", 2)
    token = CancelToken()
    seen = []

    def progress(done, total):
        seen.append((done, total))
        token.cancel()

    with pytest.raises(Cancelled):
        csv_bytes(_rows(timeline), token, progress)
    assert seen == [(2, len(timeline.refs))]


def test_an_export_inside_the_opened_folder_is_refused(tmp_path):
    opened = tmp_path / "memory"
    (opened / "alice").mkdir(parents=True)
    assert refused_target(opened / "alice" / "rows.csv", opened) is not None
    assert refused_target(opened, opened) is not None
    assert refused_target(tmp_path / "memory-rows.csv", opened) is None  # a sibling with the same prefix
    assert refused_target(tmp_path / "rows.csv", None) is None
    (tmp_path / "link").symlink_to(opened / "alice")
    assert refused_target(tmp_path / "link" / "rows.csv", opened) is not None


def test_a_row_changed_since_the_diagnosis_copies_without_its_old_reason():
    held = EventInfo(3, 4, 100, "e3", "persona.entry_updated", "2026-05-01T09:00:00", "master/x", "pending", "held")
    assert cell_text(held, "pending", COL_STATE).endswith("· held")  # the diagnosis's reason, beside its state
    assert cell_text(held, UNCHECKED, COL_STATE) == UNCHECKED  # that reason may not hold any more
