"""journal.events: the vocabulary, the refusal of undeclared names, and the exact line format."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from journal import (
    ALL_EVENT_TYPES,
    JOURNAL_NAME,
    REPLAYABLE_EVENT_TYPES,
    EventLog,
    UnknownEventTypeError,
    encode_event,
    make_event,
    new_event,
    read_journal,
)
from journal.events import check_event_type
from tests.helpers.fs_hooks import recorded as recorded_fs_calls

DECLARED = {
    "fact.added",
    "fact.absorbed",
    "fact.archived",
    "reflection.synthesized",
    "reflection.state_changed",
    "reflection.surfaced",
    "reflection.rebutted",
    "persona.fact_added",
    "persona.fact_mentioned",
    "persona.suppressed",
    "correction.queued",
    "correction.resolved",
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
}
REPLAYABLE = {
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
    "reflection.state_changed",
    "persona.fact_added",
}
UNDECLARED = ["fact.deleted", "Reflection.evidence_updated", "reflection.evidence_updated ", "", "events.snapshot"]


# -- vocabulary ---------------------------------------------------------------------------------


def test_vocabulary_has_the_15_declared_names():
    assert len(ALL_EVENT_TYPES) == 15
    assert set(ALL_EVENT_TYPES) == DECLARED


def test_exactly_five_declared_names_are_replayable():
    assert len(REPLAYABLE_EVENT_TYPES) == 5
    assert set(REPLAYABLE_EVENT_TYPES) == REPLAYABLE
    assert REPLAYABLE_EVENT_TYPES <= ALL_EVENT_TYPES


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_check_event_type_accepts_every_declared_name(name):
    assert check_event_type(name) == name


@pytest.mark.parametrize("name", [*UNDECLARED, None, 42, b"fact.added"])
def test_check_event_type_rejects_undeclared_names_and_non_strings(name):
    with pytest.raises(UnknownEventTypeError):
        check_event_type(name)


def test_new_event_rejects_an_undeclared_name():
    with pytest.raises(UnknownEventTypeError):
        new_event("fact.deleted", {})


def test_new_event_rejects_a_payload_that_is_not_an_object():
    with pytest.raises(TypeError):
        new_event("fact.added", ["not", "a", "dict"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", UNDECLARED)
def test_append_of_undeclared_name_raises_before_the_journal_is_created(tmp_path, name):
    log = EventLog(tmp_path)
    with recorded_fs_calls() as calls, pytest.raises(UnknownEventTypeError):
        log.append("Alice", name, {"x": 1})
    assert calls == []
    assert not (tmp_path / "Alice").exists()


def test_append_of_undeclared_name_leaves_an_existing_journal_byte_identical(tmp_path):
    log = EventLog(tmp_path)
    log.append("Alice", "fact.added", {"text": "tea"})
    journal = log.journal_path("Alice")
    before = journal.read_bytes()
    with recorded_fs_calls() as calls, pytest.raises(UnknownEventTypeError):
        log.append("Alice", "fact.deleted", {"text": "tea"})
    assert calls == []
    assert journal.read_bytes() == before


def test_record_and_save_of_undeclared_name_writes_nothing_and_never_mutates(tmp_path):
    log = EventLog(tmp_path)
    mutated = []
    with recorded_fs_calls() as calls, pytest.raises(UnknownEventTypeError):
        log.record_and_save("Alice", "fact.deleted", {}, mutated.append, view="reflections.json")
    assert calls == []
    assert mutated == []
    assert list(tmp_path.iterdir()) == []


# -- the line format ----------------------------------------------------------------------------


def test_encode_event_matches_the_memory_server_byte_for_byte():
    event = make_event(
        "9b2f0c1e-3d4a-4b5c-8d6e-7f8091a2b3c4",
        "persona.fact_added",
        "2026-05-01T03:00:00.5",
        {"entity_key": "master", "text": "主人喜欢绿茶 ☕", "ids": [1, 2.5, None, True], "nested": {"k": "v"}},
    )
    expected = (
        '{"event_id": "9b2f0c1e-3d4a-4b5c-8d6e-7f8091a2b3c4", "type": "persona.fact_added", '
        '"ts": "2026-05-01T03:00:00.5", "payload": {"entity_key": "master", "text": "主人喜欢绿茶 ☕", '
        '"ids": [1, 2.5, null, true], "nested": {"k": "v"}}}\n'
    ).encode()
    assert encode_event(event) == expected


def test_encode_event_writes_non_ascii_raw_utf8_not_escapes():
    line = encode_event(make_event("id", "fact.added", "2026-01-01T00:00:00", {"text": "猫娘"}))
    assert "猫娘".encode() in line
    assert b"\\u" not in line


def test_encode_event_escapes_newlines_so_one_event_is_one_line():
    line = encode_event(make_event("id", "fact.added", "t", {"text": "a\nb\r\nc\u2028"}))
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    assert b"\r" not in line


def test_encode_event_writes_nan_as_python_json_does():
    line = encode_event(make_event("id", "fact.added", "t", {"score": float("nan")}))
    assert line == b'{"event_id": "id", "type": "fact.added", "ts": "t", "payload": {"score": NaN}}\n'


def test_appended_record_is_one_utf8_json_object_line_with_keys_in_order(tmp_path):
    log = EventLog(tmp_path)
    event = log.append("Alice", "reflection.evidence_updated", {"reflection_id": "ref_1", "text": "緑茶"})
    data = log.journal_path("Alice").read_bytes()

    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1
    pairs = json.loads(data.decode("utf-8"), object_pairs_hook=lambda kv: kv)
    assert [k for k, _ in pairs] == ["event_id", "type", "ts", "payload"]
    record = dict(pairs)
    assert record["event_id"] == event.event_id
    assert record["type"] == "reflection.evidence_updated"
    assert dict(record["payload"]) == {"reflection_id": "ref_1", "text": "緑茶"}
    assert data == encode_event(event)
    assert "緑茶".encode() in data


def test_event_id_is_a_canonical_uuid4_string(tmp_path):
    ids = {new_event("fact.added", {}).event_id for _ in range(50)}
    assert len(ids) == 50
    for eid in ids:
        parsed = uuid.UUID(eid)
        assert parsed.version == 4
        assert str(parsed) == eid


def test_ts_is_naive_local_iso8601_of_the_time_of_creation():
    before = datetime.now()
    event = new_event("fact.added", {})
    after = datetime.now()
    ts = datetime.fromisoformat(event.ts)
    assert ts.tzinfo is None
    assert "+" not in event.ts and not event.ts.endswith("Z")
    assert before <= ts <= after


def test_order_of_events_is_file_position(tmp_path):
    log = EventLog(tmp_path)
    appended = [log.append("Alice", "fact.added", {"n": n}) for n in range(5)]
    data = log.journal_path("Alice").read_bytes()
    result = read_journal(log.journal_path("Alice"))
    assert [e.event_id for e in result.events] == [e.event_id for e in appended]
    assert [e.line for e in result.events] == [1, 2, 3, 4, 5]
    starts = [0]
    for line in data.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    assert [e.offset for e in result.events] == starts[:5]
    assert result.defects == []


def test_journal_file_is_named_events_ndjson(tmp_path):
    log = EventLog(tmp_path)
    log.append("Alice", "fact.added", {})
    assert [p.name for p in (tmp_path / "Alice").iterdir()] == [JOURNAL_NAME] == ["events.ndjson"]
    assert log.journal_path("Alice") == Path(tmp_path, "Alice", "events.ndjson")
