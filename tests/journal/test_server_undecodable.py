"""The server model on bytes that are not UTF-8 (issue 24 item 1; memory-format §9.8.1, .2, .4).

The memory server reads the journal, the sentinel and shards as UTF-8 text and catches only JSON
and OS errors: a journal or sentinel that is not UTF-8 makes its reconcile raise, so it replays
nothing for that character, at every start; a shard that is not UTF-8 stops its replay there
(unlike invalid JSON, which it passes as a full shard). Each folder is built with the shared
fixture builders, then damaged the way a crash or a hand edit damages it.
"""

from __future__ import annotations

from pathlib import Path

from journal.diagnosis import diagnose_character
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import REFLECTION_IDS, corrupt_shard, healthy, pending_tail
from journal.shards import REFLECTION_ARCHIVE
from journal.views import write_sentinel

CAT = "猫".encode()  # three bytes: a torn append can cut it


def _codes(d):
    return {f.code: f for f in d.findings}


def _tear_utf8(cd: Path, *, glue: bool) -> int:
    """Append a record torn inside a multi-byte character (and glue the next append onto it);
    returns the offset of the first byte that is not UTF-8."""
    path = cd / JOURNAL_NAME
    data = path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    torn = last.replace(b'"payload": {', b'"payload": {"note": "' + CAT * 3 + b'", ', 1)
    cut = torn.index(CAT) + 1
    fragment = torn[:cut]
    glued = last.replace(b'"event_id": "', b'"event_id": "f', 1) + b"\n" if glue else b""
    path.write_bytes(data + fragment + glued)
    return len(data) + cut - 1


def test_a_journal_torn_inside_a_multibyte_character_stops_the_server_for_good(tmp_path: Path) -> None:
    cd = pending_tail(tmp_path).path
    bad = _tear_utf8(cd, glue=False)
    d = diagnose_character(cd)
    s = d.server_start
    assert s is not None and s.raises is not None
    assert (s.raises.file, s.raises.offset) == (JOURNAL_NAME, bad)
    assert s.applied == 0 and s.stop is None and not s.changes
    assert s.unapplied == d.counts()["pending"]  # everything after its sentinel stays unapplied
    f = _codes(d)["server.journal_undecodable"]
    assert f.severity == "error" and f"offset {bad}" in f.message
    assert f.advice is not None and (f.advice.action, f.advice.character) == ("repair_journal", cd.name)
    assert f"line {s.raises.line}" in f.message and "every later one" in f.message
    assert "server.full_replay" not in _codes(d) and "server.replay_stops" not in _codes(d)
    assert "replays nothing" in s.summary()
    assert s.to_json()["reconcile_raises"] == {"file": JOURNAL_NAME, "offset": bad, "line": s.raises.line}


def test_an_append_glued_onto_a_torn_multibyte_character_stops_it_too(tmp_path: Path) -> None:
    cd = pending_tail(tmp_path).path
    bad = _tear_utf8(cd, glue=True)
    d = diagnose_character(cd)
    assert "line.glued" in _codes(d)  # our reader recovers the glued event
    s = d.server_start
    assert s is not None and s.raises is not None and s.raises.offset == bad and s.applied == 0


def test_a_journal_that_decodes_is_read_as_before(tmp_path: Path) -> None:
    cd = pending_tail(tmp_path).path
    s = diagnose_character(cd).server_start
    assert s is not None and s.raises is None and s.applied > 0


def test_a_sentinel_that_is_not_utf8_stops_the_server_while_ours_replays_in_full(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    data = b'{"last_applied_event_id": "\xff\xfe", "ts": "x"}'
    (cd / SENTINEL_NAME).write_bytes(data)
    bad = data.index(b"\xff")
    d = diagnose_character(cd)
    assert d.sentinel.state == "malformed"  # ours: replay from the first event
    s = d.server_start
    assert s is not None and s.raises is not None and (s.raises.file, s.raises.offset) == (SENTINEL_NAME, bad)
    assert s.applied == 0 and s.unapplied == len(d.events)
    f = _codes(d)["server.sentinel_undecodable"]
    assert f.severity == "error" and f"offset {bad}" in f.message


def test_a_shard_that_is_not_utf8_stops_the_servers_replay_where_invalid_json_is_passed(tmp_path: Path) -> None:
    b = corrupt_shard(tmp_path)
    shard = b.path / REFLECTION_ARCHIVE / b.notes["shard"]
    passed = diagnose_character(b.path).server_start
    assert passed is not None and passed.stop is None and passed.passed  # invalid JSON: passed as full

    shard.write_bytes(b'[{"id": "ref_x", "text": "' + CAT[:2] + b'"}]')
    d = diagnose_character(b.path)
    s = d.server_start
    assert s is not None and s.stop is not None and not s.passed
    assert s.stop.event_id == b.ids["pending_archive"] and s.stop.reason == "handler_error"
    assert "UnicodeDecodeError" in s.stop.message and "not UTF-8" in s.stop.message
    assert "server.shard_passed" not in _codes(d) and "server.replay_stops" in _codes(d)


# -- item 2: a BOM before the first record (memory-format §9.8.5) ----------------------------------------

BOM = b"\xef\xbb\xbf"


def test_a_bom_before_the_first_record_hides_that_event_from_the_server(tmp_path: Path) -> None:
    b = pending_tail(tmp_path)
    journal = b.path / JOURNAL_NAME
    journal.write_bytes(BOM + journal.read_bytes())
    d = diagnose_character(b.path)
    assert d.events[0].event_id == b.events[0]  # ours reads past the BOM
    s = d.server_start
    assert s is not None and 1 in s.hidden_lines and not s.applies(0, 1)
    f = _codes(d)["server.reader_differs"]
    assert f.severity == "warning" and "line 1" in f.message and "BOM" in f.message


def test_a_sentinel_naming_the_first_event_after_a_bom_makes_the_server_replay_everything(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    journal = b.path / JOURNAL_NAME
    journal.write_bytes(BOM + journal.read_bytes())
    write_sentinel(b.path, b.events[0])
    d = diagnose_character(b.path)
    assert d.sentinel.state == "ok" and d.sentinel.index == 0  # ours finds it
    s = d.server_start
    assert s is not None and s.sentinel.state == "unknown_id"  # the server does not
    unseen = _codes(d)["server.sentinel_unseen"]
    assert "BOM" in unseen.message and "whole journal" in unseen.message
    # Our guarded replay moves the sentinel onto the last event, one the server can see.
    assert d.tail is not None and d.tail.sentinel_after == b.events[-1] and d.tail.moves_sentinel


# -- item 8: records only the server's reader takes (memory-format §4.1 step 2) ---------------------------


def _append_raw(cd: Path, line: bytes) -> None:
    with open(cd / JOURNAL_NAME, "ab") as fh:
        fh.write(line + b"\n")


def _evidence_line(event_id: bytes, rid: str, reinforcement: float) -> bytes:
    return (
        b'{"event_id": ' + event_id + b', "type": "reflection.evidence_updated", "ts": "2026-05-02T09:00:00", '
        b'"payload": {"reflection_id": "' + rid.encode() + b'", "reinforcement": ' + str(reinforcement).encode() + b"}}"
    )


def test_a_null_event_id_is_a_record_for_the_server_and_a_damaged_line_for_us(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    rid = REFLECTION_IDS[0]
    _append_raw(b.path, _evidence_line(b"null", rid, 9.5))
    d = diagnose_character(b.path)
    assert d.counts()["defects"] == 1 and "line.malformed" in _codes(d)  # ours: not an event
    s = d.server_start
    assert s is not None and s.applied == 1 and s.stop is None  # the server applies it
    [change] = s.changes
    assert change.entry == rid and ("reinforcement", 9.5) in [(n, a) for n, _b, a in change.fields]
    f = _codes(d)["server.reader_differs"]
    assert "null" in f.message and "every later start replays the whole journal" in f.message


def test_an_id_with_a_lone_surrogate_is_applied_by_the_server_then_its_sentinel_write_fails(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    rid = REFLECTION_IDS[0]
    _append_raw(b.path, _evidence_line(b'"\\ud800-x"', rid, 7.5))
    _append_raw(b.path, _evidence_line(b'"after-it"', rid, 1.5))
    d = diagnose_character(b.path)
    s = d.server_start
    assert s is not None and s.stop is not None and s.stop.reason == "sentinel_write"
    assert s.stop.line == len((b.path / JOURNAL_NAME).read_bytes().splitlines()) - 1
    assert s.unapplied == 2  # the record it stops on (its handler ran) and the one after it
    assert [c.entry for c in s.changes] == [rid]  # the view did change: the handler ran first
    assert "server.reader_differs" in _codes(d)
    # Ours: the surrogate line is damaged, the event after it is pending and applies.
    assert d.events[-1].event_id == "after-it" and d.events[-1].state == "pending"


def test_a_bom_line_with_a_null_id_is_skipped_by_both_readers(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    _append_raw(b.path, BOM + _evidence_line(b"null", REFLECTION_IDS[0], 9.5))
    s = diagnose_character(b.path).server_start
    assert s is not None and s.applied == 0 and not s.changes
