"""Payloads are read back by offset; the filter works on columns and, for text, on payload JSON."""

from __future__ import annotations

import pytest

from inspector.core import payloads
from inspector.core.filtering import (
    DAMAGED_TYPE,
    FilterError,
    TimelineFilter,
    accepts_live,
    apply_filter,
    filter_fields,
)
from inspector.core.jobs import Cancelled, CancelToken
from inspector.core.payloads import RecordReader, SummaryCache, compile_search, search_payloads
from inspector.core.timeline import CharacterTimeline
from journal import EventLog
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


@pytest.fixture
def timeline(tmp_path):
    char = write_character(tmp_path, applied=6, pending=2)
    log = EventLog(tmp_path)
    log.append("alice", "persona.fact_added", {"entity_key": "master", "entry_id": "card_1a2b3c4d", "text": "Oolong"})
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b"this line is garbage about oolong\n")
    return CharacterTimeline(hand_diagnosis(char))


def test_record_reader_returns_the_record_at_an_offset(timeline):
    reader = RecordReader(f"{timeline.path}/events.ndjson")
    record, raw = reader.record(timeline.row(3))
    assert record["event_id"] == timeline.events.event_id(3)
    assert raw.endswith(b"}")
    defect = timeline.row(timeline.refs[-1])
    record, raw = reader.record(defect)
    assert record is None and raw == b"this line is garbage about oolong"


def test_summary_cache_reads_a_window_in_one_open(timeline, monkeypatch):
    opens = []
    real = RecordReader.raw_records

    def counting(self, offsets, limit=None):
        opens.append(1)
        return real(self, offsets, limit)

    monkeypatch.setattr(RecordReader, "raw_records", counting)
    cache = SummaryCache(timeline, RecordReader(f"{timeline.path}/events.ndjson"))
    refs = list(timeline.refs)
    texts = [cache.summary(refs, pos) for pos in range(len(refs))]
    assert len(opens) == 1
    assert texts[0] == "rein 0.50 · (user_fact)"
    assert texts[8] == "added “Oolong”"
    assert texts[-1].startswith("not valid JSON")
    cache.set_redact(True)
    assert "Oolong" not in cache.summary(refs, 8)


def test_field_filters_use_types_states_and_entry(timeline):
    refs = timeline.refs
    assert filter_fields(timeline, refs, TimelineFilter(states=frozenset({"pending"}))) == [6, 7, 8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset({"persona.fact_added"}))) == [8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset({DAMAGED_TYPE}))) == [refs[-1]]
    assert filter_fields(timeline, refs, TimelineFilter(states=frozenset({"damaged"}))) == [refs[-1]]
    assert filter_fields(timeline, refs, TimelineFilter(entry="CARD_1A2B")) == [8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset())) == []


def test_text_filter_matches_payloads_only_and_is_case_insensitive(timeline):
    refs = timeline.refs
    assert apply_filter(timeline, refs, TimelineFilter(text="oolong")) == [8, refs[-1]]
    # an event id is not part of the payload: searching for it finds nothing
    assert apply_filter(timeline, refs, TimelineFilter(text=timeline.events.event_id(0))) == []
    assert apply_filter(timeline, refs, TimelineFilter(text=r'"reinforcement": 9\.0', regex=True)) == [6]
    with pytest.raises(FilterError):
        apply_filter(timeline, refs, TimelineFilter(text="(", regex=True))


def test_file_scan_and_record_reads_agree(timeline, monkeypatch):
    """The chunked file scan (for many rows) finds what reading records one by one finds."""
    monkeypatch.setattr(payloads, "_CHUNK", 300)  # many chunks, lines split across them
    pattern = compile_search("rein", False)
    refs = list(timeline.refs)
    hits = search_payloads(f"{timeline.path}/events.ndjson", timeline, refs, pattern)
    assert sorted(refs[i] for i in hits) == list(range(8))


def test_search_can_be_cancelled(timeline):
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        search_payloads(f"{timeline.path}/events.ndjson", timeline, timeline.refs, compile_search("x", False), token)


def test_live_rows_pass_the_filter_with_their_payload_text(timeline):
    flt = TimelineFilter(states=frozenset({"pending"}), text="oolong")
    assert accepts_live(timeline, 8, flt, '{"text": "Oolong"}')
    assert not accepts_live(timeline, 8, flt, '{"text": "Sencha"}')
    assert not accepts_live(timeline, 0, flt, '{"text": "Oolong"}')  # applied
