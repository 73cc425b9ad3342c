"""Guarded replay on every case of the shared fixture builder (journal/fixtures/)."""

from __future__ import annotations

import pytest

from inspector.core import replay as gr
from inspector.core.prompter import HeadlessPrompter
from inspector.core.replay import ReplayRequest, Scope
from journal import fixtures as folders
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.log import EventLog
from journal.reader import read_journal
from journal.reconcile import Reconciler
from journal.serverrules import server_reader
from journal.views import read_sentinel

pytestmark = pytest.mark.usefixtures("replay_env")


@pytest.mark.parametrize("name", sorted(folders.CASES))
def test_apply_on_each_shared_case(tmp_path, name):
    root = tmp_path / "memory"
    root.mkdir()
    built = folders.CASES[name](root, name)
    backups = tmp_path / "backups"
    original = folders.tree_snapshot(built.path)
    run = gr.run_guarded_replay(ReplayRequest(root, name, backup_root=backups), HeadlessPrompter(True))
    plan, outcome = run.plan, run.outcome
    assert outcome.mismatches == []
    if not plan.has_work:
        assert outcome.backup is None and folders.tree_snapshot(built.path) == original
        return
    for rel, data in plan.predicted.items():
        if rel != SENTINEL_NAME:
            assert (built.path / rel).read_bytes() == data, rel
    read = read_journal(built.path / JOURNAL_NAME)
    events = read.events
    if plan.block is not None:
        stop = next(i for i, e in enumerate(events) if e.event_id == plan.block.event_id)
        assert read_sentinel(built.path).event_id == events[stop - 1].event_id
    else:
        # The last event the memory server's reader can see (never a glued one, memory-format §9.3).
        hidden = server_reader(read.defects).hidden_lines
        visible = [e for e in events if e.line not in hidden]
        assert read_sentinel(built.path).event_id == visible[-1].event_id
    after = folders.tree_snapshot(built.path)
    gr.run_guarded_replay(ReplayRequest(root, name, backup_root=backups), HeadlessPrompter(True))
    Reconciler(EventLog(root)).reconcile(name)
    assert folders.tree_snapshot(built.path) == after
    restored = gr.run_guarded_restore(outcome.backup.path, HeadlessPrompter(True))
    assert restored.status == "restored", restored.message
    assert folders.tree_snapshot(built.path) == original


def test_orphan_repair_on_the_shared_case(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    built = folders.archive_entry_lost(root)
    sentinel = (built.path / SENTINEL_NAME).read_bytes()
    run = gr.run_guarded_replay(
        ReplayRequest(root, built.name, scope=Scope("repair"), backup_root=tmp_path / "b"), HeadlessPrompter(True)
    )
    assert run.status == "applied" and len(run.outcome.applied) == 1
    assert (built.path / SENTINEL_NAME).read_bytes() == sentinel
    assert gr.find_orphaned_archive_events(built.path) == []


def test_zip_and_server_lock_cases(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    built = folders.pending_tail(root)
    z = folders.zip_export(root, tmp_path / "export.zip")
    run = gr.run_guarded_replay(ReplayRequest(z, built.name, backup_root=tmp_path / "b"), HeadlessPrompter(True))
    assert [r.code for r in run.preflight.refusals] == ["input.zip_export"]
    with folders.server_lock_held(tmp_path / "runtime"):
        run = gr.run_guarded_replay(
            ReplayRequest(root, built.name, backup_root=tmp_path / "b"), HeadlessPrompter(True)
        )
    assert run.status == "refused" and [r.code for r in run.preflight.refusals] == ["server.running"]


@pytest.mark.parametrize("name", sorted(folders.CASES))
def test_repair_scope_covers_exactly_what_the_diagnosis_calls_archive_entry_lost(tmp_path, name):
    from journal.diagnosis import diagnose_character

    root = tmp_path / "memory"
    root.mkdir()
    built = folders.CASES[name](root, name)
    lost = [
        e.event_id
        for e in diagnose_character(built.path).events
        if e.state == "orphaned" and e.reason == "archive_entry_lost"
    ]
    assert [o.event.event_id for o in gr.find_orphaned_archive_events(built.path)] == lost


def test_repair_scope_matches_the_diagnosis_with_a_persona_orphan_too(tmp_path):
    from journal.diagnosis import diagnose_character
    from tests.inspector.replay_cases import add_persona_orphan, build_case

    root = tmp_path / "memory"
    root.mkdir()
    cd = build_case(root, "archive_lost")
    add_persona_orphan(root)
    lost = [e.event_id for e in diagnose_character(cd).events if e.reason == "archive_entry_lost"]
    assert len(lost) == 2
    assert [o.event.event_id for o in gr.find_orphaned_archive_events(cd)] == lost
