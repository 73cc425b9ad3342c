"""The writers' clock and id source: every timestamp and fresh id a writer writes comes from the
ones it was given (``clock=``, ``new_id=``), and without them from the real clock and uuid4."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

import pytest

from journal import (
    JOURNAL_NAME,
    SENTINEL_NAME,
    EventLog,
    FolderStore,
    choose_shard,
    new_event,
    read_journal,
    read_sentinel,
    write_sentinel,
)
from journal.appliedset import APPLIED_SET_NAME, write_applied_set
from journal.events import new_uuid
from journal.shards import REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS

CHAR = "Alice"
REF = {"id": "ref_0123456789abcdef", "text": "Master relaxes with tea", "status": "pending"}
ENTRY = {"id": "prom_0123456789abcdef", "text": "Master drinks tea", "protected": False}


class Ticking:
    """A clock giving ``T0``, ``T1``, ... and an id source giving ``aaaaaaa0-…``, ``aaaaaaa1-…``."""

    def __init__(self) -> None:
        self.times: Iterator[int] = iter(range(1000))
        self.ids: Iterator[int] = iter(range(1000))

    def clock(self) -> str:
        return f"2026-05-01T09:00:{next(self.times):02d}"

    def new_id(self) -> str:
        return str(uuid.UUID(f"aaaaaa{next(self.ids):02x}-0000-4000-8000-000000000000"))


@pytest.fixture
def src() -> Ticking:
    return Ticking()


@pytest.fixture
def log(tmp_path: Path, src: Ticking) -> EventLog:
    cd = tmp_path / CHAR
    cd.mkdir()
    (cd / REFLECTIONS).write_text(json.dumps([REF]), encoding="utf-8")
    (cd / PERSONA).write_text(json.dumps({"master": {"facts": [ENTRY]}}), encoding="utf-8")
    return EventLog(tmp_path, clock=src.clock, new_id=src.new_id)


def _sentinel(log: EventLog) -> dict[str, object]:
    data: dict[str, object] = json.loads((log.char_dir(CHAR) / SENTINEL_NAME).read_bytes())
    return data


def test_append_takes_the_id_and_the_ts_from_its_sources(log: EventLog) -> None:
    ev = log.append(CHAR, "reflection.evidence_updated", {"reflection_id": REF["id"]})
    assert (ev.event_id, ev.ts) == ("aaaaaa00-0000-4000-8000-000000000000", "2026-05-01T09:00:00")
    assert [e.event_id for e in read_journal(log.journal_path(CHAR)).events] == [ev.event_id]


def test_record_and_save_stamps_the_event_and_the_sentinel(log: EventLog) -> None:
    ev = log.record_and_save(
        CHAR, "reflection.evidence_updated", {"reflection_id": REF["id"]}, lambda v: None, view=REFLECTIONS
    )
    assert ev.ts == "2026-05-01T09:00:00"
    assert _sentinel(log) == {"last_applied_event_id": ev.event_id, "ts": "2026-05-01T09:00:01"}


def test_a_write_behind_the_sentinel_stamps_the_applied_set(log: EventLog) -> None:
    log.append(CHAR, "reflection.evidence_updated", {"reflection_id": REF["id"]})  # never applied
    ev = log.record_and_save(
        CHAR, "reflection.evidence_updated", {"reflection_id": REF["id"]}, lambda v: None, view=REFLECTIONS
    )
    record = json.loads((log.char_dir(CHAR) / APPLIED_SET_NAME).read_bytes())
    assert record["applied"] == [ev.event_id] and record["ts"] == "2026-05-01T09:00:02"


def test_an_archive_takes_the_shard_name_archived_at_and_the_event_from_its_sources(log: EventLog) -> None:
    ev = log.archive_reflection(CHAR, REF["id"], today=date(2026, 5, 1))
    assert ev is not None
    # the shard is named first (id 0), then the event (id 1); archived_at is the first tick
    assert ev.payload["archive_shard_path"] == "2026-05-01_aaaaaa00.json"
    assert (log.char_dir(CHAR) / REFLECTION_ARCHIVE / "2026-05-01_aaaaaa00.json").is_file()
    assert ev.event_id == "aaaaaa01-0000-4000-8000-000000000000"
    assert (ev.payload["archived_at"], ev.ts) == ("2026-05-01T09:00:00", "2026-05-01T09:00:01")
    assert _sentinel(log)["ts"] == "2026-05-01T09:00:02"
    persona = log.archive_persona_entry(CHAR, "master", ENTRY["id"], today=date(2026, 5, 1))
    assert persona is not None and persona.payload["archive_shard_path"] == "2026-05-01_aaaaaa02.json"


def test_compaction_takes_the_seeds_ids_their_ts_and_the_sentinels_ts_from_its_sources(log: EventLog) -> None:
    seeds = [("reflection.evidence_updated", {"n": 1}), ("reflection.evidence_updated", {"n": 2})]
    events = log.compact(CHAR, seeds)
    assert [e.event_id[:8] for e in events] == ["aaaaaa00", "aaaaaa01"]
    assert {e.ts for e in events} == {"2026-05-01T09:00:00"}
    assert _sentinel(log) == {"last_applied_event_id": None, "ts": "2026-05-01T09:00:01"}


def test_a_store_stamps_the_sentinel_with_its_clock(tmp_path: Path, src: Ticking) -> None:
    FolderStore(tmp_path, clock=src.clock).write_sentinel("x")
    assert read_sentinel(tmp_path).ts == "2026-05-01T09:00:00"
    FolderStore(tmp_path, durable=False, clock=src.clock).write_sentinel("y")
    assert read_sentinel(tmp_path).ts == "2026-05-01T09:00:01"


def test_the_module_level_writers_take_a_clock_and_an_id_source(tmp_path: Path, src: Ticking) -> None:
    ev = new_event("reflection.evidence_updated", {}, clock=src.clock, new_id=src.new_id)
    assert (ev.event_id[:8], ev.ts) == ("aaaaaa00", "2026-05-01T09:00:00")
    write_sentinel(tmp_path, ev.event_id, clock=src.clock)
    sentinel = read_sentinel(tmp_path)
    assert sentinel.ts == "2026-05-01T09:00:01"
    write_applied_set(tmp_path, sentinel, ["a"], clock=src.clock)
    assert json.loads((tmp_path / APPLIED_SET_NAME).read_bytes())["ts"] == "2026-05-01T09:00:02"
    assert choose_shard(tmp_path / "archive", date(2026, 5, 1), new_id=src.new_id) == "2026-05-01_aaaaaa01.json"
    assert choose_shard(tmp_path, date(2026, 5, 1), new_id=lambda: uuid.uuid4().hex).startswith("2026-05-01_")


def test_a_shard_name_refuses_an_id_that_is_not_hex(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="8 lowercase hex digits"):
        choose_shard(tmp_path, date(2026, 5, 1), new_id=lambda: "not-an-id")


def test_without_sources_the_writers_use_uuid4_and_the_local_clock(tmp_path: Path) -> None:
    log = EventLog(tmp_path)
    assert (log.clock, log.new_id) == (None, None)
    before = datetime.now()
    ev = log.append(CHAR, "reflection.evidence_updated", {})
    assert uuid.UUID(ev.event_id).version == 4 and str(uuid.UUID(ev.event_id)) == ev.event_id
    assert before <= datetime.fromisoformat(ev.ts) <= datetime.now()
    assert uuid.UUID(new_uuid()).version == 4
    assert (tmp_path / CHAR / JOURNAL_NAME).is_file()
