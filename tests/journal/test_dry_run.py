"""Dry runs: a replay into a scratch copy never touches the original, and predicts the real replay."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from journal import EventLog, fs
from journal.dryrun import EntryChange, FieldChange, ShardEntryAdded, diff_files, dry_run
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.reader import read_journal
from journal.reconcile import Reconciler
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS
from tests.journal._replay_kit import (
    CHAR,
    apply_evidence,
    event_ids,
    evidence,
    make_character,
    persona_entry,
    persona_evidence,
    persona_view,
    reflection,
    sentinel_id,
    tree_hashes,
)

SHARD = "2026-05-01_0a1b2c3d.json"


@pytest.fixture(autouse=True)
def _exact_saves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch-tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # dry runs must clean up after themselves


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pending_folder(tmp_path: Path) -> tuple[EventLog, Path]:
    """A character with a pending tail of every handled kind, including an archive crash window."""
    root = tmp_path / "memory"
    cd = make_character(
        root,
        reflections=[reflection("ref_a"), reflection("ref_b"), reflection("ref_c")],
        persona=persona_view(persona_entry("prom_a", text="merged text"), persona_entry("prom_b")),
    )
    log = EventLog(root)
    payload = evidence("ref_a", 0.5)
    log.record_and_save(CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), view=REFLECTIONS)
    log.append(CHAR, "reflection.evidence_updated", evidence("ref_a", 2.5))
    log.append(CHAR, "reflection.state_changed", {"reflection_id": "ref_b", "from": "confirmed", "to": "promoted",
                                                  "ts": "2026-05-02T00:00:00"})
    log.append(CHAR, "persona.entry_updated", {**persona_evidence("master", "prom_a", 4.0),
                                               "rewrite_text_sha256": sha("merged text"),
                                               "merged_from_ids": ["ref_9"]})
    # An archive that crashed between the journal event and the shard append.
    seen = [0]

    def crash(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before" and f"/{PERSONA_ARCHIVE}/" in call.path:
            seen[0] += 1
            if seen[0] == 2:
                raise OSError(errno.EIO, "crash", call.path)

    previous = fs.set_fault_hook(crash)
    try:
        with pytest.raises(OSError):
            log.archive_persona_entry(CHAR, "master", "prom_b")
    finally:
        fs.set_fault_hook(previous)
    log.append(CHAR, "persona.evidence_updated", persona_evidence("master", "prom_a", 5.0))
    return log, cd


def tracked(cd: Path) -> dict[str, bytes]:
    out = {}
    for rel in (REFLECTIONS, PERSONA, SENTINEL_NAME):
        if (cd / rel).exists():
            out[rel] = (cd / rel).read_bytes()
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        if (cd / archive).is_dir():
            for name in sorted(os.listdir(cd / archive)):
                out[f"{archive}/{name}"] = (cd / archive / name).read_bytes()
    return out


def test_dry_run_changes_nothing_and_predicts_the_real_replay(tmp_path: Path) -> None:
    log, cd = pending_folder(tmp_path)
    (cd / "outbox.ndjson").write_text('{"op_id": "1", "status": "pending"}\n')
    before = tree_hashes(tmp_path / "memory")
    stats = {p: os.stat(tmp_path / "memory" / p).st_mtime_ns for p in before}

    dry = dry_run(cd)

    assert tree_hashes(tmp_path / "memory") == before  # every file byte-identical, no file added
    assert {p: os.stat(tmp_path / "memory" / p).st_mtime_ns for p in before} == stats
    assert os.listdir(tempfile.gettempdir()) == []  # the scratch copy is gone
    pending = event_ids(cd)[1:]
    assert dry.report.applied == pending and dry.report.complete

    diff = dry.diff
    by_entry = {(c.file, c.entry): c for c in diff.entries}
    ref_a = by_entry[(REFLECTIONS, "ref_a")]
    assert ref_a.kind == "changed" and FieldChange("reinforcement", 0.5, 2.5) in ref_a.fields
    assert FieldChange("promoted_at", None, "2026-05-02T00:00:00") in by_entry[(REFLECTIONS, "ref_b")].fields
    prom_a = by_entry[(PERSONA, "master/prom_a")]
    assert {f.field for f in prom_a.fields} >= {"reinforcement", "merged_from_ids"}
    assert FieldChange("reinforcement", 2.0, 5.0) in prom_a.fields
    shard = read_journal(cd / JOURNAL_NAME).events[4].payload["archive_shard_path"]
    assert diff.shard_entries_added == [ShardEntryAdded(f"{PERSONA_ARCHIVE}/{shard}", "prom_b")]
    assert (diff.sentinel_before, diff.sentinel_after) == (event_ids(cd)[0], event_ids(cd)[-1])

    report = Reconciler(log).reconcile(CHAR)
    assert report.applied == dry.report.applied
    real = tracked(cd)
    assert set(real) == set(dry.predicted)
    for rel, data in real.items():
        if rel != SENTINEL_NAME:
            assert data == dry.predicted[rel], rel
    assert sentinel_id(cd) == json.loads(dry.predicted[SENTINEL_NAME])["last_applied_event_id"]


def test_dry_run_predicts_where_replay_stops(tmp_path: Path) -> None:
    log, cd = pending_folder(tmp_path)
    log.append(CHAR, "fact.added", {"text": "legacy"})
    log.append(CHAR, "reflection.evidence_updated", evidence("ref_c", 9.0))
    before = tree_hashes(tmp_path)
    dry = dry_run(cd)
    assert tree_hashes(tmp_path) == before
    assert dry.report.stopped is not None and dry.report.stopped.reason == "no_handler"
    assert not any(c.entry == "ref_c" for c in dry.diff.entries)

    report = Reconciler(log).reconcile(CHAR)
    assert report.stopped == dry.report.stopped and report.applied == dry.report.applied
    assert {k: v for k, v in tracked(cd).items() if k != SENTINEL_NAME} == {
        k: v for k, v in dry.predicted.items() if k != SENTINEL_NAME
    }


def test_dry_run_until_an_event(tmp_path: Path) -> None:
    _, cd = pending_folder(tmp_path)
    until = event_ids(cd)[2]
    dry = dry_run(cd, until=until)
    assert dry.report.until_reached and dry.report.applied == event_ids(cd)[1:3]
    assert dry.diff.sentinel_after == until
    assert dry_run(cd, until=event_ids(cd)[0]).report.applied == []  # already applied: nothing to preview


def test_dry_run_of_an_orphan_repair_leaves_the_sentinel(tmp_path: Path) -> None:
    log, cd = pending_folder(tmp_path)
    Reconciler(log).reconcile(CHAR)
    archive_event = read_journal(cd / JOURNAL_NAME).events[4]
    shard = archive_event.payload["archive_shard_path"]
    (cd / PERSONA_ARCHIVE / shard).write_text("[]")  # the entry is lost again, behind the sentinel
    before = tree_hashes(tmp_path)
    dry = dry_run(cd, repair=[archive_event.event_id])
    assert tree_hashes(tmp_path) == before
    assert dry.report.applied == [archive_event.event_id]
    assert dry.diff.shard_entries_added == [ShardEntryAdded(f"{PERSONA_ARCHIVE}/{shard}", "prom_b")]
    assert dry.diff.sentinel_before == dry.diff.sentinel_after == sentinel_id(cd)
    assert SENTINEL_NAME not in dry.diff.files_changed


def test_dry_run_refuses_a_shard_folder_linked_outside_like_the_real_replay(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cd = make_character(root, reflections=[reflection("ref_a")])
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, cd / REFLECTION_ARCHIVE)
    log = EventLog(root)
    snapshot = {**reflection("ref_a"), "status": "archived", "archive_shard_path": SHARD}
    log.append(CHAR, "reflection.state_changed", {"reflection_id": "ref_a", "to": "archived",
                                                  "archive_shard_path": SHARD, "entry_snapshot": snapshot})
    before = tree_hashes(tmp_path)
    dry = dry_run(cd)
    assert tree_hashes(tmp_path) == before and os.listdir(outside) == []
    assert dry.report.stopped is not None and dry.report.stopped.reason == "corrupt_shard"
    report = Reconciler(log).reconcile(CHAR)
    assert report.stopped is not None and report.stopped.reason == "corrupt_shard"
    assert tree_hashes(tmp_path) == before and os.listdir(outside) == []


def test_dry_run_follows_links_inside_the_folder_like_the_real_replay(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cd = make_character(root)
    (cd / "views").mkdir()
    fs.atomic_write_json(cd / "views" / REFLECTIONS, [reflection("ref_a")])
    os.symlink(Path("views") / REFLECTIONS, cd / REFLECTIONS)
    log = EventLog(root)
    log.append(CHAR, "reflection.evidence_updated", evidence("ref_a", 3.0))
    dry = dry_run(cd)
    assert dry.report.complete and dry.report.changed == 1
    Reconciler(log).reconcile(CHAR)
    assert (cd / REFLECTIONS).read_bytes() == dry.predicted[REFLECTIONS]


def test_dry_run_of_a_views_only_export(tmp_path: Path) -> None:
    cd = make_character(tmp_path / "memory", reflections=[reflection("ref_a")])
    dry = dry_run(cd)
    assert dry.report.applied == [] and dry.diff.empty


# -- the diff value ----------------------------------------------------------------------------------


def dump(obj: Any) -> bytes:
    return fs.dumps_view(obj)


def test_diff_files_reports_entries_shards_and_sentinel() -> None:
    before = {
        REFLECTIONS: dump([{"id": "r1", "a": 1}, {"id": "r2"}]),
        PERSONA: dump({"master": {"facts": [{"id": "p1", "t": "x"}]}}),
        f"{REFLECTION_ARCHIVE}/{SHARD}": dump([{"id": "old"}]),
        SENTINEL_NAME: dump({"last_applied_event_id": "e1", "ts": "t"}),
    }
    after = {
        REFLECTIONS: dump([{"id": "r1", "a": 2, "b": True}, {"id": "r3"}]),
        PERSONA: dump({"master": {"facts": [{"id": "p1", "t": "x"}, {"id": "p2"}]}}),
        f"{REFLECTION_ARCHIVE}/{SHARD}": dump([{"id": "old"}, {"id": "r2"}]),
        f"{PERSONA_ARCHIVE}/{SHARD}": dump([{"id": "p9"}]),
        SENTINEL_NAME: dump({"last_applied_event_id": "e2", "ts": "t2"}),
    }
    diff = diff_files(before, after)
    assert diff.entries == [
        EntryChange(REFLECTIONS, "r1", "changed", (FieldChange("a", 1, 2), FieldChange("b", None, True))),
        EntryChange(REFLECTIONS, "r2", "removed"),
        EntryChange(REFLECTIONS, "r3", "added"),
        EntryChange(PERSONA, "master/p2", "added"),
    ]
    assert diff.shard_entries_added == [
        ShardEntryAdded(f"{PERSONA_ARCHIVE}/{SHARD}", "p9"),
        ShardEntryAdded(f"{REFLECTION_ARCHIVE}/{SHARD}", "r2"),
    ]
    assert (diff.sentinel_before, diff.sentinel_after) == ("e1", "e2")
    assert not diff.empty and diff_files(before, before).empty


def test_diff_files_tolerates_corrupt_content() -> None:
    diff = diff_files({REFLECTIONS: b"{", f"{REFLECTION_ARCHIVE}/{SHARD}": b"oops"},
                      {REFLECTIONS: b"[]", f"{REFLECTION_ARCHIVE}/{SHARD}": b"[1, 2]"})
    assert diff.entries == [] and diff.shard_entries_added == []
    assert diff.files_changed == sorted([REFLECTIONS, f"{REFLECTION_ARCHIVE}/{SHARD}"])


