"""The journal repair (``journal.repair``): bytes that are not UTF-8 move out of the journal into
``events.ndjson.damaged``, losslessly; every record keeps its bytes and its order (issue 24)."""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import EventLog, Reconciler, fs
from journal.appliedset import read_applied_set
from journal.events import JOURNAL_NAME, encode_event, new_event
from journal.reader import read_journal
from journal.repair import (
    DAMAGED_NAME,
    JournalChangedError,
    JournalRepairError,
    RepairRefusedError,
    plan_repair,
    read_damaged,
    reassemble,
    repair_journal,
    undecodable_fragments,
)
from journal.views import read_sentinel
from tests.faults import crashkit
from tests.inspector.replay_cases import CHARACTER, build_case
from tests.journal import _repair_kit as kit


@pytest.fixture
def cd(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return build_case(root, "pending_tail")


def _journal(cd: Path) -> bytes:
    return (cd / JOURNAL_NAME).read_bytes()


def _others(cd: Path) -> dict[str, str]:
    """Every file the repair must not touch."""
    return {k: v for k, v in kit.hash_files(cd).items() if k not in (JOURNAL_NAME, DAMAGED_NAME)}


def _assert_repaired(cd: Path, old: bytes) -> list[dict]:
    """The post-conditions of every repair; returns the ``.damaged`` records."""
    new = _journal(cd)
    new.decode("utf-8")  # the whole file is UTF-8 now
    read = read_journal(cd / JOURNAL_NAME)
    assert not [d for d in read.defects if d.kind == "invalid_utf8"]
    for d in read.defects:  # whatever damage is left is UTF-8 (the repair leaves that alone)
        new[d.offset : d.offset + d.length].decode("utf-8")
    assert kit.records_of(new) == kit.records_of(old)  # every event id and its bytes, in order
    damaged = read_damaged(cd)
    assert damaged.state == "ok" and damaged.bad_lines == 0
    assert reassemble(new, damaged.records) == old  # lossless
    return list(damaged.records)


def test_a_torn_utf8_last_line_moves_out_whole(cd):
    kit.torn_utf8_tail(cd)
    old, others = _journal(cd), _others(cd)
    assert read_journal(cd / JOURNAL_NAME).defects[-1].kind == "torn_tail"
    plan = plan_repair(cd)
    assert [(f.kind, f.reader, f.newline) for f in plan.fragments] == [("line", "torn_tail", False)]
    (frag,) = plan.fragments
    assert len(frag.data) == len(kit.torn_record()) and old.endswith(frag.data)
    assert frag.preview() == f"‹{len(frag.data)} bytes, not UTF-8 at +{len(frag.data) - 1}›"
    assert plan.records == 7 and plan.new_size == len(old) - len(frag.data)
    result = repair_journal(cd, expect_sha256=plan.sha256)
    assert result.rewritten and result.recorded == plan.fragments
    assert _journal(cd) == old[: frag.offset]  # the journal now ends with the last record's newline
    (rec,) = _assert_repaired(cd, old)
    assert rec["line"] == frag.line and rec["offset"] == frag.offset and rec["kind"] == "line"
    assert _others(cd) == others
    assert hashlib.sha256(_journal(cd)).hexdigest() == plan.new_sha256


def test_an_event_glued_onto_a_torn_utf8_fragment_is_kept_on_its_own_line(cd):
    eid = kit.glue_onto_torn_utf8(cd)
    old = _journal(cd)
    before = read_journal(cd / JOURNAL_NAME)
    glued = next(d for d in before.defects if d.kind == "glued")
    assert glued.recovered_event_id == eid
    (frag,) = plan_repair(cd).fragments
    assert (frag.kind, frag.event_id, frag.newline, frag.line) == ("glued", eid, False, glued.line)
    assert len(frag.data) == len(kit.torn_record())
    repair_journal(cd)
    new = _journal(cd)
    assert new == old[: frag.offset] + old[frag.offset + frag.length :]  # only the fragment's bytes go
    assert new.split(b"\n")[-2].startswith(b'{"event_id": "' + eid.encode())  # its own line now
    after = read_journal(cd / JOURNAL_NAME)
    assert after.defects == []  # the glued record is a record like any other now
    assert after.events[-1].event_id == eid and after.events[-1].line == glued.line
    _assert_repaired(cd, old)


def test_several_fragments_move_out_and_damage_that_is_utf8_stays_byte_for_byte(cd):
    eid = kit.several(cd)
    old = _journal(cd)
    ascii_line = b'{"event_id": "d1a2", "type": "reflection.evidence_updated", "payload": {"trunc\n'
    plan = plan_repair(cd)
    assert [(f.kind, f.newline) for f in plan.fragments] == [("line", True), ("glued", False), ("line", False)]
    assert plan.fragments[1].event_id == eid
    assert plan.decodable_damage == 1 and plan.glued == 1
    assert plan.new_size == len(old) - sum(f.removed for f in plan.fragments)
    repair_journal(cd)
    records = _assert_repaired(cd, old)
    assert [r["line"] for r in records] == [f.line for f in plan.fragments]
    assert _journal(cd).count(ascii_line) == 1  # the malformed line that is UTF-8 is untouched
    kinds = [d.kind for d in read_journal(cd / JOURNAL_NAME).defects]
    assert kinds == ["malformed"]


def test_a_journal_with_nothing_to_repair_is_not_written(cd):
    kit.ascii_damage(cd)
    before = kit.hash_files(cd)
    plan = plan_repair(cd)
    assert not plan.has_work and plan.fragments == () and plan.decodable_damage == 1
    assert plan.new_sha256 == plan.sha256
    result = repair_journal(cd)
    assert not result.rewritten and kit.hash_files(cd) == before
    assert not (cd / DAMAGED_NAME).exists()


def test_no_journal_is_nothing_to_repair(tmp_path):
    plan = plan_repair(tmp_path)
    assert not plan.present and not plan.has_work
    assert not repair_journal(tmp_path).rewritten and os.listdir(tmp_path) == []


def test_the_damaged_records_hold_the_bytes_their_place_and_the_old_journal(cd):
    kit.several(cd)
    old = _journal(cd)
    plan = plan_repair(cd)
    repair_journal(cd, clock=lambda: "2026-08-20T14:03:11+02:00")
    raw = (cd / DAMAGED_NAME).read_bytes()
    raw.decode("ascii")  # ASCII only
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4
    for line, frag in zip(lines, plan.fragments, strict=False):
        rec = json.loads(line)
        assert list(rec) == [
            "schema",
            "kind",
            "line",
            "offset",
            "length",
            "newline",
            "reader",
            "bad_at",
            "event_id",
            "sha256",
            "bytes",
            "journal_size",
            "journal_sha256",
            "moved_at",
        ]
        data = base64.b64decode(rec["bytes"])
        assert data == old[rec["offset"] : rec["offset"] + rec["length"]] == frag.data
        assert rec["sha256"] == hashlib.sha256(data).hexdigest()
        assert rec["journal_size"] == len(old) and rec["journal_sha256"] == hashlib.sha256(old).hexdigest()
        assert rec["moved_at"] == "2026-08-20T14:03:11+02:00" and rec["schema"] == 1
        assert old.count(b"\n", 0, rec["offset"]) + 1 == rec["line"]


def test_the_sentinel_the_applied_set_and_the_views_still_name_the_same_ids(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    cd = build_case(root, "persona_drift")  # a held persona event, then more events
    log = EventLog(root)
    last = log.append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a3"})
    Reconciler(log).reconcile(CHARACTER)  # applies past the held event: an applied set
    aset = read_applied_set(cd)
    assert aset.state == "ok" and last.event_id in aset.applied
    kit.glue_onto_torn_utf8(cd)
    sentinel = read_sentinel(cd).event_id
    others = _others(cd)
    old = _journal(cd)
    repair_journal(cd)
    _assert_repaired(cd, old)
    assert _others(cd) == others
    assert read_sentinel(cd).event_id == sentinel
    ids = [e.event_id for e in read_journal(cd / JOURNAL_NAME).events]
    assert sentinel in ids and read_applied_set(cd).applied == aset.applied
    assert read_applied_set(cd).state == "ok"


def test_a_repair_interrupted_after_recording_converges_without_recording_twice(cd):
    kit.several(cd)
    old = _journal(cd)

    def fail_replace(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before":
            raise OSError(errno.EIO, "injected", call.path)

    previous = fs.set_fault_hook(fail_replace)
    try:
        with pytest.raises(OSError):
            repair_journal(cd)
    finally:
        fs.set_fault_hook(previous)
    assert _journal(cd) == old  # never a mix
    assert len(read_damaged(cd).records) == 3
    again = plan_repair(cd)
    assert again.recorded == frozenset(f.offset for f in again.fragments) and again.to_record == ()
    result = repair_journal(cd)
    assert result.recorded == () and len(result.already) == 3
    assert len(_assert_repaired(cd, old)) == 3
    assert not repair_journal(cd).rewritten  # a third run has nothing to do


def test_a_torn_damaged_append_is_ignored_and_the_fragments_are_recorded_whole(cd):
    kit.glue_onto_torn_utf8(cd)
    old = _journal(cd)
    plan = plan_repair(cd)
    (frag,) = plan.fragments
    from journal.repair import encode_record

    line = encode_record(frag.record(plan.size, plan.sha256, "t"))
    (cd / DAMAGED_NAME).write_bytes(line[: len(line) // 2])  # a crash cut the append
    assert read_damaged(cd).bad_lines == 1 and plan_repair(cd).to_record == plan.fragments
    repair_journal(cd)
    damaged = read_damaged(cd)
    assert len(damaged.records) == 1 and damaged.bad_lines == 1
    assert (cd / DAMAGED_NAME).read_bytes().startswith(line[: len(line) // 2] + b"\n{")
    assert reassemble(_journal(cd), damaged.records) == old


def test_a_journal_that_changed_since_the_plan_is_refused_and_nothing_is_written(cd):
    kit.torn_utf8_tail(cd)
    plan = plan_repair(cd)
    with open(cd / JOURNAL_NAME, "ab") as fh:
        fh.write(kit.record()[1])
    before = kit.hash_files(cd)
    with pytest.raises(JournalChangedError):
        repair_journal(cd, expect_sha256=plan.sha256)
    assert kit.hash_files(cd) == before


def test_links_and_special_files_are_refused(cd, tmp_path):
    kit.torn_utf8_tail(cd)
    before = kit.hash_files(cd)
    outside = tmp_path / "elsewhere"
    outside.write_bytes(b"")
    (cd / DAMAGED_NAME).symlink_to(outside)
    with pytest.raises(RepairRefusedError, match="link"):
        repair_journal(cd)
    (cd / DAMAGED_NAME).unlink()
    os.mkfifo(cd / DAMAGED_NAME)
    with pytest.raises(RepairRefusedError, match="FIFO"):
        plan_repair(cd)
    (cd / DAMAGED_NAME).unlink()
    (cd / JOURNAL_NAME).rename(tmp_path / "journal")
    (cd / JOURNAL_NAME).symlink_to(tmp_path / "journal")
    with pytest.raises(RepairRefusedError, match="link"):
        repair_journal(cd)
    assert outside.read_bytes() == b"" and (tmp_path / "journal").is_file()
    (cd / JOURNAL_NAME).unlink()
    (tmp_path / "journal").rename(cd / JOURNAL_NAME)
    assert kit.hash_files(cd) == before


def test_the_repair_checks_its_own_result_before_writing(cd, monkeypatch):
    kit.torn_utf8_tail(cd)
    before = kit.hash_files(cd)
    from journal import repair

    monkeypatch.setattr(repair, "rewrite", lambda data, fragments: data[:-3])  # loses record bytes
    with pytest.raises(JournalRepairError, match="nothing was written"):
        repair_journal(cd)
    assert kit.hash_files(cd) == before


def test_the_fragments_a_plan_of_another_scope_finds_are_the_repairs(cd):
    kit.several(cd)
    read = read_journal(cd / JOURNAL_NAME)
    assert undecodable_fragments(cd / JOURNAL_NAME, read.defects) == list(plan_repair(cd).fragments)


def test_the_writes_are_ordered_for_a_crash_and_a_power_loss(cd):
    kit.several(cd)
    recorder = crashkit.Recorder()
    previous = fs.set_fault_hook(recorder)
    try:
        repair_journal(cd)
    finally:
        fs.set_fault_hook(previous)
    ops = [(t.op, os.path.basename(t.path)) for t in recorder.trace if t.phase == "before"]
    assert ops[:5] == [
        ("open", DAMAGED_NAME),
        ("write", DAMAGED_NAME),
        ("fsync", DAMAGED_NAME),
        ("close", DAMAGED_NAME),
        ("fsync_dir", CHARACTER),
    ]
    assert [op for op, _ in ops[5:]] == ["open", "write", "fsync", "close", "replace", "fsync_dir"]
    assert ops[9] == ("replace", JOURNAL_NAME)
    assert crashkit.durability_violations(recorder.trace, returned=True) == []


# -- any journal -----------------------------------------------------------------------------------------

_pieces = st.one_of(
    st.builds(
        lambda n: encode_event(new_event("reflection.evidence_updated", {"reflection_id": f"r{n}"})), st.integers(0, 9)
    ),
    st.builds(
        lambda cut: encode_event(new_event("persona.evidence_updated", {"entity_key": "master", "text": kit.TEXT}))[
            :cut
        ],
        st.integers(1, 200),
    ),
    st.sampled_from([b"\n", b"\xff\xfe\n", b"{not json}\n", "猫".encode()[:2], b"\xef\xbb\xbf", b"\r\n", b"\x00\x00"]),
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_pieces, max_size=12))
def test_any_journal_is_repaired_losslessly(tmp_path_factory, pieces):
    cd = tmp_path_factory.mktemp("any")
    old = b"".join(pieces)
    (cd / JOURNAL_NAME).write_bytes(old)
    plan = plan_repair(cd)
    result = repair_journal(cd)
    new = _journal(cd)
    assert result.rewritten == plan.has_work == (not _valid(old))
    assert _valid(new) and kit.records_of(new) == kit.records_of(old)
    if plan.has_work:
        assert reassemble(new, read_damaged(cd).records) == old
        assert hashlib.sha256(new).hexdigest() == plan.new_sha256
    else:
        assert new == old and not (cd / DAMAGED_NAME).exists()


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
