"""Compaction: when it is due, and how compact() replaces the journal and resets the sentinel."""

from __future__ import annotations

import errno
import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from journal import (
    COMPACT_DAYS_THRESHOLD,
    COMPACT_LINES_THRESHOLD,
    JOURNAL_NAME,
    SENTINEL_NAME,
    Event,
    EventLog,
    JournalTail,
    UnknownEventTypeError,
    compaction_status,
    encode_event,
    fs,
    make_event,
    read_journal,
    read_sentinel,
)
from tests.helpers.fs_hooks import fault_hook, recorded

NOW = datetime(2026, 8, 1, 12, 0, 0)
CHAR = "Alice"


def line(ts: str, eid: str | None = None) -> bytes:
    return encode_event(make_event(eid or str(uuid.uuid4()), "reflection.evidence_updated", ts, {"n": 1}))


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / JOURNAL_NAME
    path.write_bytes(data)
    return path


# -- compaction_status --------------------------------------------------------------------------------


def test_thresholds_are_10000_lines_and_90_days():
    assert (COMPACT_LINES_THRESHOLD, COMPACT_DAYS_THRESHOLD) == (10_000, 90)


def test_a_missing_journal_is_not_due(tmp_path):
    status = compaction_status(tmp_path / JOURNAL_NAME, NOW)
    assert (status.due, status.lines, status.oldest_ts, status.age_days, status.reason) == (False, 0, None, None, None)


def test_due_at_10000_lines_not_at_9999(tmp_path):
    recent = line(NOW.isoformat())
    path = write(tmp_path, recent * 9_999)
    status = compaction_status(path, NOW)
    assert (status.due, status.lines, status.reason) == (False, 9_999, None)
    path.write_bytes(recent * 10_000)
    status = compaction_status(path, NOW)
    assert (status.due, status.lines) == (True, 10_000)
    assert status.reason is not None and "10,000 lines" in status.reason


def test_blank_corrupt_and_unterminated_lines_all_count(tmp_path):
    data = line(NOW.isoformat()) + b"\n" * 4_000 + b"junk\n" * 5_998 + b'{"torn'
    status = compaction_status(write(tmp_path, data), NOW)
    assert (status.lines, status.due) == (10_000, True)


def test_due_when_the_first_line_is_90_days_old(tmp_path):
    old = (NOW - timedelta(days=COMPACT_DAYS_THRESHOLD)).isoformat()
    status = compaction_status(write(tmp_path, line(old) + line(NOW.isoformat())), NOW)
    assert status.due and status.oldest_ts == old
    assert status.age_days == pytest.approx(90.0)
    assert status.reason is not None and "90 days" in status.reason


def test_not_due_just_under_90_days(tmp_path):
    young = (NOW - timedelta(days=COMPACT_DAYS_THRESHOLD) + timedelta(seconds=1)).isoformat()
    status = compaction_status(write(tmp_path, line(young)), NOW)
    assert not status.due and status.age_days is not None and status.age_days < 90


def test_age_is_taken_from_the_first_line_only(tmp_path):
    ancient = (NOW - timedelta(days=400)).isoformat()
    status = compaction_status(write(tmp_path, line(NOW.isoformat()) + line(ancient)), NOW)
    assert not status.due and status.age_days == pytest.approx(0.0)


@pytest.mark.parametrize(
    "first",
    [b"junk\n", b"\n", b"[1]\n", b'{"ts": 5}\n', b'{"ts": "yesterday"}\n', b'{"ts": "2026-01-01T00:00:00+02:00"}\n'],
    ids=["not-json", "blank", "not-object", "ts-not-string", "ts-not-iso", "ts-aware"],
)
def test_an_unusable_first_line_disables_the_age_check_only(tmp_path, first):
    ancient = (NOW - timedelta(days=400)).isoformat()
    path = write(tmp_path, first + line(ancient))
    status = compaction_status(path, NOW)
    assert (status.due, status.age_days) == (False, None)
    path.write_bytes(first + line(ancient) * (COMPACT_LINES_THRESHOLD - 1))
    status = compaction_status(path, NOW)
    assert status.due and status.lines == COMPACT_LINES_THRESHOLD and status.age_days is None


def test_a_bom_before_the_first_line_is_tolerated(tmp_path):
    old = (NOW - timedelta(days=100)).isoformat()
    status = compaction_status(write(tmp_path, b"\xef\xbb\xbf" + line(old)), NOW)
    assert status.due and status.oldest_ts == old


def test_the_first_line_is_never_taken_from_a_later_read_chunk(tmp_path):
    # A blank first line, then exactly one 8 MiB read's worth, then an old event: the old event
    # is not the first line, so age stays unknown.
    chunk = 8 << 20
    data = b"\n" + b"x" * (chunk - 2) + b"\n" + line((NOW - timedelta(days=400)).isoformat())
    status = compaction_status(write(tmp_path, data), NOW)
    assert (status.lines, status.oldest_ts, status.due) == (3, None, False)


def test_eventlog_compaction_status_reads_the_characters_journal(tmp_path):
    log = EventLog(tmp_path)
    log.append(CHAR, "fact.added", {})
    status = log.compaction_status(CHAR, datetime.now() + timedelta(days=91))
    assert status.due and status.lines == 1


# -- compact() ------------------------------------------------------------------------------------------

SEEDS = [
    ("reflection.evidence_updated", {"reflection_id": "ref_0123456789abcdef", "reinforcement": 2.4}),
    ("persona.evidence_updated", {"entity_key": "master", "entry_id": "prom_ref_77", "sub_zero_days": 0}),
    ("reflection.state_changed", {"reflection_id": "ref_1", "from": "pending", "to": "confirmed", "ts": "t"}),
]


def populated(tmp_path: Path) -> tuple[EventLog, Path, list[Event]]:
    log = EventLog(tmp_path)
    old = [log.append(CHAR, "reflection.evidence_updated", {"n": n}) for n in range(5)]
    cd = log.char_dir(CHAR)
    (cd / SENTINEL_NAME).write_text(json.dumps({"last_applied_event_id": old[-1].event_id, "ts": "t"}))
    return log, cd, old


def test_compact_rewrites_the_journal_as_seeds_with_new_ids_and_one_ts(tmp_path):
    log, cd, old = populated(tmp_path)
    seeds = log.compact(CHAR, SEEDS)
    assert [(e.type, e.payload) for e in seeds] == SEEDS
    ids = [e.event_id for e in seeds]
    assert len(set(ids)) == 3 and not set(ids) & {e.event_id for e in old}
    assert all(uuid.UUID(i).version == 4 for i in ids)
    assert len({e.ts for e in seeds}) == 1
    assert datetime.fromisoformat(seeds[0].ts).tzinfo is None

    assert (cd / JOURNAL_NAME).read_bytes() == b"".join(encode_event(e) for e in seeds)
    result = read_journal(cd / JOURNAL_NAME)
    assert [e.event_id for e in result.events] == ids and result.defects == []
    assert read_sentinel(cd).state == "null"


def test_compact_replaces_through_a_temp_file_then_resets_the_sentinel(tmp_path):
    log, cd, _ = populated(tmp_path)
    with recorded() as calls:
        log.compact(CHAR, SEEDS)
    effects = [(c.op, Path(c.path)) for c in calls if c.phase == "before"]
    temp = effects[0][1]
    assert temp.parent == cd and temp.name.startswith(fs.TEMP_PREFIX)
    assert effects[:6] == [
        ("open", temp),
        ("write", temp),
        ("fsync", temp),
        ("close", temp),
        ("replace", cd / JOURNAL_NAME),
        ("fsync_dir", cd),
    ]
    assert [p.name for op, p in effects[6:] if op == "replace"] == [SENTINEL_NAME]
    assert [p for p in cd.iterdir() if p.name.startswith(fs.TEMP_PREFIX)] == []


def test_compaction_is_seen_as_a_reset_by_a_tail(tmp_path):
    log, cd, _ = populated(tmp_path)
    tail = JournalTail(cd / JOURNAL_NAME)
    assert len(tail.poll().events) == 5
    seeds = log.compact(CHAR, SEEDS)
    update = tail.poll()
    assert update.reset and [e.event_id for e in update.events] == [e.event_id for e in seeds]


def test_compact_with_no_seeds_leaves_an_empty_journal(tmp_path):
    log, cd, _ = populated(tmp_path)
    assert log.compact(CHAR, []) == []
    assert (cd / JOURNAL_NAME).read_bytes() == b""
    assert read_sentinel(cd).state == "null"


@pytest.mark.parametrize(
    "bad",
    [("fact.deleted", {}), ("fact.added", {}), ("correction.queued", {}), ("reflection.surfaced", {})],
    ids=["undeclared", "declared-no-handler-1", "declared-no-handler-2", "declared-no-handler-3"],
)
def test_a_seed_without_a_replay_handler_raises_before_writing(tmp_path, bad):
    log, cd, _ = populated(tmp_path)
    journal_before = (cd / JOURNAL_NAME).read_bytes()
    sentinel_before = (cd / SENTINEL_NAME).read_bytes()
    with recorded() as calls, pytest.raises(UnknownEventTypeError):
        log.compact(CHAR, [*SEEDS, bad])
    assert calls == []
    assert (cd / JOURNAL_NAME).read_bytes() == journal_before
    assert (cd / SENTINEL_NAME).read_bytes() == sentinel_before


def test_a_crash_between_replace_and_sentinel_reset_leaves_a_sentinel_naming_a_gone_id(tmp_path):
    log, cd, old = populated(tmp_path)

    def hook(call: fs.FsCall) -> None:
        if call.phase == "before" and call.op == "open" and Path(call.path).parent == cd:
            opened.append(call.path)
            if len(opened) == 2:  # the sentinel's temp file, after the journal's replace
                raise OSError(errno.EIO, "injected crash before the sentinel reset", call.path)

    opened: list[str] = []
    with fault_hook(hook), pytest.raises(OSError, match="injected crash"):
        log.compact(CHAR, SEEDS)

    result = read_journal(cd / JOURNAL_NAME)
    assert [(e.type, e.payload) for e in result.events] == SEEDS  # the replace happened
    sentinel = read_sentinel(cd)
    assert sentinel.state == "ok" and sentinel.event_id == old[-1].event_id
    assert sentinel.event_id not in {e.event_id for e in result.events}  # => a full replay of the seeds
    assert [p for p in cd.iterdir() if p.name.startswith(fs.TEMP_PREFIX)] == []


def test_a_failed_journal_replace_keeps_the_old_journal_and_sentinel(tmp_path):
    log, cd, _ = populated(tmp_path)
    journal_before = (cd / JOURNAL_NAME).read_bytes()
    sentinel_before = (cd / SENTINEL_NAME).read_bytes()

    def hook(call: fs.FsCall) -> None:
        if call.phase == "before" and call.op == "replace":
            raise OSError(errno.EIO, "injected replace failure", call.path)

    with fault_hook(hook), pytest.raises(OSError, match="injected replace failure"):
        log.compact(CHAR, SEEDS)
    assert (cd / JOURNAL_NAME).read_bytes() == journal_before
    assert (cd / SENTINEL_NAME).read_bytes() == sentinel_before
    assert [p for p in cd.iterdir() if p.name.startswith(fs.TEMP_PREFIX)] == []


def test_compact_of_a_new_character_creates_its_folder(tmp_path):
    log = EventLog(tmp_path)
    seeds = log.compact(CHAR, SEEDS[:1])
    assert [e.event_id for e in read_journal(log.journal_path(CHAR)).events] == [seeds[0].event_id]
    assert read_sentinel(log.char_dir(CHAR)).state == "null"
