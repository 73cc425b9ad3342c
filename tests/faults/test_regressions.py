"""Regression tests for the journal bugs the fault regime found (each names the suite that found it)."""

from __future__ import annotations

import errno
import logging
import os

from journal import EventLog, MemoryStore, Reconciler, fs
from tests.faults.scenarios import CHAR, applied_history

OURS = ".nkatmp0123abcd.tmp"


def _litter(char_dir):
    for sub in ("", "reflection_archive", "persona_archive"):
        folder = char_dir / sub
        folder.mkdir(exist_ok=True)
        (folder / OURS).write_bytes(b'[{"id": "half a view')
    # Not ours, or not a leftover of an atomic write: never touched.
    (char_dir / ".nkatmpXYZ.tmp").write_bytes(b"x")
    (char_dir / ".reflections.json.k2j3h4.tmp").write_bytes(b"x")  # the older server's temp name
    (char_dir / ".nkatmpdeadbeef.tmp").symlink_to(char_dir / "reflections.json")
    (char_dir / "sub").mkdir()
    (char_dir / "sub" / OURS).write_bytes(b"x")


def test_recovery_removes_temp_files_left_by_a_crash_inside_an_atomic_write(tmp_path):
    """Found by suite 1: a crash between creating an atomic write's temp file and the replace left
    ``.nkatmp*.tmp`` litter that nothing ever removed. Recovery now sweeps our temp names from the
    character folder and its two archive folders, under the character lock."""
    applied_history(tmp_path)
    char_dir = tmp_path / CHAR
    _litter(char_dir)
    report = Reconciler(EventLog(tmp_path)).reconcile(CHAR)
    assert sorted(report.temp_files_removed) == sorted([OURS, f"reflection_archive/{OURS}", f"persona_archive/{OURS}"])
    for sub in ("", "reflection_archive", "persona_archive"):
        assert not (char_dir / sub / OURS).exists()
    assert (char_dir / ".nkatmpXYZ.tmp").exists()
    assert (char_dir / ".reflections.json.k2j3h4.tmp").exists()
    assert (char_dir / ".nkatmpdeadbeef.tmp").is_symlink()
    assert (char_dir / "reflections.json").exists()  # the link's target is untouched
    assert (char_dir / "sub" / OURS).exists()
    assert Reconciler(EventLog(tmp_path)).reconcile(CHAR).temp_files_removed == []


def test_the_sweep_goes_through_the_fault_hook_and_fsyncs_the_folder_once(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    for name in (".nkatmp00000001.tmp", ".nkatmp00000002.tmp"):
        (folder / name).write_bytes(b"")
    calls: list[tuple[str, str]] = []

    def hook(call: fs.FsCall) -> None:
        if call.phase == "before":
            calls.append((call.op, os.path.basename(call.path)))

    previous = fs.set_fault_hook(hook)
    try:
        removed = fs.sweep_temp_files(folder)
    finally:
        fs.set_fault_hook(previous)
    assert removed == [".nkatmp00000001.tmp", ".nkatmp00000002.tmp"]
    assert calls == [("unlink", ".nkatmp00000001.tmp"), ("unlink", ".nkatmp00000002.tmp"), ("fsync_dir", "f")]
    assert fs.sweep_temp_files(tmp_path / "missing") == []


def test_a_failing_sweep_is_logged_and_replay_still_runs(tmp_path, caplog):
    applied_history(tmp_path)
    char_dir = tmp_path / CHAR
    (char_dir / OURS).write_bytes(b"x")
    log = EventLog(tmp_path)
    log.append(CHAR, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1", "reinforcement": 9.5})

    def hook(call: fs.FsCall) -> None:
        if call.op == "unlink" and call.phase == "before":
            raise OSError(errno.EACCES, "injected", call.path)

    previous = fs.set_fault_hook(hook)
    try:
        with caplog.at_level(logging.WARNING, logger="journal.reconcile"):
            report = Reconciler(log).reconcile(CHAR)
    finally:
        fs.set_fault_hook(previous)
    assert report.complete and len(report.applied) == 1
    assert report.temp_files_removed == []
    assert "could not remove leftover temp files" in caplog.text
    assert (char_dir / OURS).exists()
    assert Reconciler(log).reconcile(CHAR).temp_files_removed == [OURS]


def test_a_reconciler_over_a_memory_store_never_sweeps_the_disk(tmp_path):
    applied_history(tmp_path)
    (tmp_path / CHAR / OURS).write_bytes(b"x")
    report = Reconciler(EventLog(tmp_path), store_factory=MemoryStore).reconcile(CHAR)
    assert report.temp_files_removed == []
    assert (tmp_path / CHAR / OURS).exists()


def test_a_trailing_duplicate_of_the_sentinel_event_does_not_orphan_the_pending_tail(tmp_path):
    """Found by suite 5 (every truncation offset of the ``duplicates`` seed): ``last_event_id``
    returned the id of a trailing line that repeats an earlier record, although the reader says
    that line is not an event. With the sentinel on that earlier record and an unapplied event in
    between, ``record_and_save`` took the sentinel for "at the end", advanced it, and orphaned the
    pending event: replay never applied it."""
    from journal import read_sentinel
    from journal.events import JOURNAL_NAME
    from tests.faults.scenarios import REFLECTION_IDS, record, refl_evidence

    applied_history(tmp_path)
    log = EventLog(tmp_path)
    applied = record(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[0], 30))
    pending = log.append(CHAR, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[1], 31))
    journal = tmp_path / CHAR / JOURNAL_NAME
    copy = next(line for line in journal.read_bytes().splitlines(keepends=True) if applied.event_id.encode() in line)
    with open(journal, "ab") as fh:
        fh.write(copy)
    assert read_sentinel(tmp_path / CHAR).event_id == applied.event_id

    record(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[2], 32))

    assert read_sentinel(tmp_path / CHAR).event_id == applied.event_id, "the sentinel skipped the pending event"
    report = Reconciler(log).reconcile(CHAR)
    assert pending.event_id in report.applied


def test_last_event_id_skips_duplicate_lines_like_the_reader(tmp_path):
    from journal import encode_event, last_event_id, new_event, read_journal

    a, b = (new_event("fact.added", {"n": i}) for i in range(2))
    journal = tmp_path / "events.ndjson"
    journal.write_bytes(encode_event(a) + encode_event(b) + encode_event(a) + b"\n" + encode_event(a)[:-1])
    assert read_journal(journal).events[-1].event_id == b.event_id
    assert last_event_id(journal) == (True, b.event_id)
    # The id inside a payload is not a record of it.
    c = new_event("fact.added", {"about": a.event_id})
    journal.write_bytes(encode_event(c) + encode_event(a))
    assert last_event_id(journal) == (True, a.event_id)
    # Only duplicates: no event after the first copies, so the last event is the first copy's.
    journal.write_bytes(encode_event(a) + encode_event(a) + encode_event(a))
    assert last_event_id(journal) == (True, a.event_id)


def _count(root, rid):
    import json

    return {e["id"]: e for e in json.loads((root / CHAR / "reflections.json").read_text())}[rid][
        "user_fact_reinforce_count"
    ]


def test_compaction_refuses_to_discard_an_unapplied_tail(tmp_path):
    """Found while building suite 6's compactor: seeds come from the views, which do not hold the
    effect of events after the sentinel, so compacting then silently lost those durable events
    (replay of the seeds never applied them). Compaction now refuses and writes nothing."""
    import pytest

    from journal import UnappliedTailError
    from tests.faults.harness import snapshot_files
    from tests.faults.scenarios import REFLECTION_IDS, refl_evidence, seeds_from_views

    applied_history(tmp_path)
    log = EventLog(tmp_path)
    log.append(CHAR, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[1], 77))
    before = snapshot_files(tmp_path)
    calls: list[str] = []
    previous = fs.set_fault_hook(lambda call: calls.append(call.op) and None)
    try:
        with pytest.raises(UnappliedTailError, match="reconcile first"):
            log.compact(CHAR, seeds_from_views(tmp_path / CHAR))
    finally:
        fs.set_fault_hook(previous)
    assert calls == [] and snapshot_files(tmp_path) == before
    Reconciler(log).reconcile(CHAR)
    log.compact(CHAR, seeds_from_views(tmp_path / CHAR))
    Reconciler(log).reconcile(CHAR)
    assert _count(tmp_path, REFLECTION_IDS[1]) == 77


def test_seeds_derived_under_the_lock_cannot_revert_a_concurrent_write(tmp_path):
    """With a precomputed list, a write acknowledged between deriving the seeds and compacting was
    reverted when the older seeds replayed. A callable is derived under the character lock, so
    the write is serialised after the compaction and survives."""
    import threading

    from tests.faults.scenarios import REFLECTION_IDS, record, refl_evidence, seeds_from_views

    applied_history(tmp_path)
    log = EventLog(tmp_path)
    writer = threading.Thread(
        target=record, args=(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[1], 88))
    )

    def seeds():
        writer.start()  # it needs the lock compaction holds now
        return seeds_from_views(tmp_path / CHAR)

    log.compact(CHAR, seeds)
    writer.join()
    Reconciler(log).reconcile(CHAR)
    assert _count(tmp_path, REFLECTION_IDS[1]) == 88
