"""Guarded replay and restore (inspector.core.replay): every guard, on real folders."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from inspector.core import replay as gr
from inspector.core.prompter import ASK_APPLY, ASK_EXTRACT, ASK_RECENT_WRITES, HeadlessPrompter
from inspector.core.replay import BadInputError, ReplayRequest, Scope
from inspector.core.replay import backup as replay_backup
from inspector.core.replay import plan as replay_plan
from inspector.core.replay import target as replay_target
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import server_lock_held, tree_snapshot, zip_export
from journal.log import EventLog
from journal.reader import read_journal
from journal.reconcile import Reconciler, ReplayStop
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, load_shard
from journal.views import PERSONA, REFLECTIONS, load_view, read_sentinel
from tests.helpers.fs_hooks import fault_hook
from tests.inspector.replay_cases import (
    BLOCKED,
    CHARACTER,
    FOLDER_CASES,
    SHARD,
    add_persona_orphan,
    build_case,
    hash_tree,
    make_old,
    unapplied,
)

pytestmark = pytest.mark.usefixtures("replay_env")


def _request(root, backups, **kw):
    return ReplayRequest(root, CHARACTER, backup_root=backups, **kw)


def _events(cd):
    return read_journal(cd / JOURNAL_NAME).events


def _sentinel(cd):
    return read_sentinel(cd).event_id


# -- launcher lock -------------------------------------------------------------------------------


_HOLDER = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "os.write(fd, b'%d\\n' % os.getpid())\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_lock_held_by_another_process_refuses_and_released_lock_allows(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    state = tmp_path / "runtime"
    state.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(state / "launcher.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert gr.check_launcher_lock().state == "running"
        before = hash_tree(cd)
        run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
        assert run.status == "refused" and run.exit_code == 1
        assert [r.code for r in run.preflight.refusals] == ["server.running"]
        assert hash_tree(cd) == before
        assert not backups.exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert gr.check_launcher_lock().state == "free"
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert run.status == "applied" and run.exit_code == 0


def test_missing_lock_file_is_free_and_never_created(tmp_path):
    lock = gr.check_launcher_lock(tmp_path / "nowhere")
    assert lock.state == "free"
    assert not (tmp_path / "nowhere").exists()


def test_lock_that_cannot_be_tested_is_unknown_and_refuses(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    (tmp_path / "runtime").write_text("a file where the state folder should be")
    assert gr.check_launcher_lock().state == "unknown"
    before = hash_tree(cd)
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert run.status == "refused" and [r.code for r in run.preflight.refusals] == ["server.unknown"]
    assert hash_tree(cd) == before


def test_override_turns_the_refusal_into_a_recorded_warning(root, backups, tmp_path):
    build_case(root, "pending_tail")
    with server_lock_held(tmp_path / "runtime"):
        run = gr.run_guarded_replay(_request(root, backups, override_server_lock=True), HeadlessPrompter(True))
    assert run.status == "applied"
    assert [w.code for w in run.preflight.warnings][:1] == ["server.override"]
    report = json.loads(run.outcome.report_path.read_text())
    assert report["overrides"] == {"server_lock": True}
    assert report["preflight"]["server"]["state"] == "running"


def test_server_started_between_plan_and_apply_writes_nothing(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    target = gr.target_of(root, CHARACTER)
    pf = gr.preflight(target)
    plan = gr.make_plan(target)
    before = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        outcome = gr.execute(plan, backup_root=backups, preflight_=pf)
    assert outcome.status == "refused" and "started after the plan" in outcome.message
    assert hash_tree(cd) == before


def test_runtime_state_dir_per_platform():
    assert gr.runtime_state_dir({"HOME": "/h"}, "linux") == Path("/h/.local/state/N.E.K.O/runtime")
    assert gr.runtime_state_dir({"HOME": "/h"}, "darwin") == Path("/h/Library/Application Support/N.E.K.O.runtime")
    assert gr.runtime_state_dir({"LOCALAPPDATA": "C:/L"}, "win32") == Path("C:/L/N.E.K.O.runtime")
    assert gr.runtime_state_dir({"HOME": "/h", "NEKO_RUNTIME_STATE_DIR": "/s"}, "linux") == Path("/s")


def test_default_backup_root_is_in_the_user_data_folder(tmp_path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert gr.default_backup_root("linux") == home / ".local/share/memory-inspector/backups"
    assert gr.default_backup_root("darwin") == home / "Library/Application Support/memory-inspector/backups"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert gr.default_backup_root("linux") == tmp_path / "x/memory-inspector/backups"
    assert list(tmp_path.iterdir()) == []  # asking for the folder creates nothing


def test_without_backup_dir_the_backup_goes_to_the_data_folder(root, tmp_path):
    build_case(root, "pending_tail")
    run = gr.run_guarded_replay(ReplayRequest(root, CHARACTER), HeadlessPrompter(True))
    assert run.status == "applied"
    assert run.outcome.backup.path.is_relative_to(tmp_path / "xdg-data" / "memory-inspector" / "backups")


# -- preflight -------------------------------------------------------------------------------------


def test_recent_write_warns_and_a_person_can_decline(root, backups):
    cd = build_case(root, "pending_tail")
    target = gr.target_of(root, CHARACTER)
    assert [w.code for w in gr.preflight(target).warnings] == ["files.recent"]
    before = hash_tree(cd)
    prompter = HeadlessPrompter({ASK_RECENT_WRITES: False, ASK_APPLY: True})
    run = gr.run_guarded_replay(_request(root, backups), prompter)
    assert run.status == "declined" and run.exit_code == 1
    assert prompter.keys() == [ASK_RECENT_WRITES]
    assert hash_tree(cd) == before and not backups.exists()


def test_old_files_do_not_warn(root):
    cd = build_case(root, "pending_tail")
    make_old(cd)
    pf = gr.preflight(gr.target_of(root, CHARACTER))
    assert pf.ok and pf.warnings == ()
    prompter = HeadlessPrompter(True)
    gr.run_guarded_replay(_request(root, root.parent / "b"), prompter)
    assert prompter.keys() == [ASK_APPLY]


def test_not_writable_folder_is_refused(root, backups):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True), writable=lambda p: False)
    assert run.status == "refused"
    assert [r.code for r in run.preflight.refusals] == ["folder.not_writable"]
    assert hash_tree(cd) == before


def test_folder_nobody_can_write_is_refused_for_real(tmp_path):
    """The real writability check, nothing injected. CI runs as root, for whom ``chmod 0o555``
    proves nothing; a folder path below a regular file cannot be written by anyone, root included."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cd = blocker / CHARACTER
    assert not gr.folder_writable(cd)
    pf = gr.preflight(gr.ReplayTarget(cd, CHARACTER, blocker, cd))
    assert [r.code for r in pf.refusals] == ["folder.not_writable"]


def test_zip_export_is_refused_with_an_offer_to_extract(root, backups, tmp_path):
    build_case(root, "pending_tail")
    z = zip_export(root, tmp_path / "export.zip")
    data = z.read_bytes()
    run = gr.run_guarded_replay(ReplayRequest(z, CHARACTER, backup_root=backups), HeadlessPrompter(False))
    assert run.status == "refused" and run.exit_code == 1
    assert [r.code for r in run.preflight.refusals] == ["input.zip_export"]
    assert run.preflight.refusals[0].offer == "extract"
    assert z.read_bytes() == data and run.extracted_to is None

    prompter = HeadlessPrompter({ASK_EXTRACT: True})
    run = gr.run_guarded_replay(ReplayRequest(z, CHARACTER, backup_root=backups), prompter)
    assert run.status == "refused" and run.extracted_to == tmp_path / "export-extracted"
    assert hash_tree(run.extracted_to / "memory") == hash_tree(root)
    # The extracted folder can then be replayed.
    run = gr.run_guarded_replay(
        ReplayRequest(run.extracted_to / "memory", CHARACTER, backup_root=backups), HeadlessPrompter(True)
    )
    assert run.status == "applied"


@pytest.mark.parametrize("member", ["../evil.json", "/abs.json", "a/../../evil.json"])
def test_extract_refuses_members_outside_the_folder(tmp_path, member):
    z = tmp_path / "bad.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(member, "x")
    with pytest.raises(BadInputError):
        gr.extract_export(z, tmp_path / "out")
    assert not (tmp_path / "evil.json").exists()


def test_extract_refuses_links_and_oversized_archives(tmp_path, monkeypatch):
    z = tmp_path / "link.zip"
    info = zipfile.ZipInfo("memory/Alice/link")
    info.external_attr = 0o120777 << 16
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(BadInputError, match="link"):
        gr.extract_export(z, tmp_path / "out1")
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a", b"\0" * 4096)
    monkeypatch.setattr(replay_target, "EXTRACT_MAX_BYTES", 1024)  # where extract_export reads it
    with pytest.raises(BadInputError, match="bytes"):
        gr.extract_export(big, tmp_path / "out2")


def test_bad_input(root, backups, tmp_path):
    build_case(root, "pending_tail")
    with pytest.raises(BadInputError):
        gr.target_of(tmp_path / "missing", CHARACTER)
    with pytest.raises(BadInputError):
        gr.target_of(root, "Bob")
    with pytest.raises(BadInputError):
        gr.target_of(root, "../etc")
    (tmp_path / "plain.txt").write_text("x")
    with pytest.raises(BadInputError):
        gr.target_of(tmp_path / "plain.txt", CHARACTER)
    with pytest.raises(BadInputError, match="inside the character folder"):
        gr.run_guarded_replay(
            ReplayRequest(root, CHARACTER, backup_root=root / CHARACTER / "b"), HeadlessPrompter(True)
        )
    with pytest.raises(BadInputError, match="inside the memory root"):
        gr.run_guarded_replay(
            ReplayRequest(root, CHARACTER, backup_root=root / "backups"), HeadlessPrompter(True)
        )


def test_character_folder_as_path_may_back_up_beside_it(root, backups):
    """Its parent is not known to be a memory root (it may be the home folder holding the data folder)."""
    cd = build_case(root, "pending_tail")
    run = gr.run_guarded_replay(ReplayRequest(cd, CHARACTER, backup_root=root / "bk"), HeadlessPrompter(True))
    assert run.status == "applied" and run.outcome.backup.path.is_relative_to(root / "bk")
    with pytest.raises(BadInputError, match="inside the character folder"):
        gr.run_guarded_replay(ReplayRequest(cd, CHARACTER, backup_root=cd / "bk"), HeadlessPrompter(True))


def test_character_folder_itself_is_accepted_as_path(root):
    cd = build_case(root, "pending_tail")
    target = gr.target_of(cd, CHARACTER)
    assert target.char_dir == cd and target.root == root


# -- plan ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", FOLDER_CASES)
def test_plan_and_dry_run_leave_every_file_byte_identical(root, backups, case):
    cd = build_case(root, case)
    before = hash_tree(root)
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    gr.make_plan(gr.target_of(root, CHARACTER), Scope("repair"))
    run = gr.run_guarded_replay(_request(root, backups, dry_run=True), HeadlessPrompter(True))
    assert run.status == "planned" and run.outcomes == []
    assert hash_tree(root) == before
    assert not backups.exists()
    assert (run.exit_code == 0) == (case not in BLOCKED)
    assert plan.fingerprints == gr.fingerprint_folder(cd)


def test_plan_shows_events_stop_reason_and_diff(root):
    build_case(root, "pending_tail")
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    assert [e.type for e in plan.events] == [
        "reflection.evidence_updated",
        "reflection.state_changed",
        "persona.evidence_updated",
        "reflection.state_changed",
    ]
    assert plan.pending == 4 and plan.block is None and plan.complete
    kinds = {(c.file, c.entry): c.kind for c in plan.diff.entries}
    assert kinds[(REFLECTIONS, "ref_00000000000000a3")] == "removed"
    assert kinds[(PERSONA, "master/prom_ref_77")] == "changed"
    fields = {
        f.field: (f.before, f.after) for c in plan.diff.entries if c.entry == "ref_00000000000000a1" for f in c.fields
    }
    assert fields["status"] == ("pending", "confirmed")
    assert [(s.file, s.entry_id) for s in plan.diff.shard_entries_added] == [
        (f"{REFLECTION_ARCHIVE}/{SHARD}", "ref_00000000000000a3")
    ]
    assert plan.diff.sentinel_after == plan.events[-1].event_id
    text = "\n".join(gr.describe_plan(plan))
    assert 'status: "pending" → "confirmed"' in text and "+ entry ref_00000000000000a3" in text


def test_plan_lists_the_temp_litter_the_real_run_removes(root, backups):
    cd = build_case(root, "pending_tail")
    (cd / ".nkatmp0badc0de.tmp").write_bytes(b"half a view")
    (cd / REFLECTION_ARCHIVE / ".nkatmp1234abcd.tmp").write_bytes(b"")
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    assert plan.temp_files == [".nkatmp0badc0de.tmp", f"{REFLECTION_ARCHIVE}/.nkatmp1234abcd.tmp"]
    assert "Also removes 2 leftover temp file(s)" in "\n".join(gr.describe_plan(plan))
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert run.status == "applied" and gr.leftover_temp_files(cd) == []
    report = json.loads(run.outcome.report_path.read_text())
    assert sorted(report["outcome"]["temp_files_removed"]) == sorted(plan.temp_files)
    assert ".nkatmp0badc0de.tmp" in run.outcome.backup.hashes()  # the backup keeps them


@pytest.mark.parametrize("case,reason", sorted(BLOCKED.items()))
def test_blocked_event_is_explained_never_skipped(root, backups, case, reason):
    cd = build_case(root, case)
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    assert plan.block is not None and plan.block.reason == reason
    assert plan.block.actions() and plan.block.why
    text = "\n".join(gr.describe_plan(plan))
    assert f"reason: {reason}" in text and "What you can do" in text
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert run.status == "stopped" and run.exit_code == 1
    assert run.outcome.block.event_id == plan.block.event_id
    events = _events(cd)
    blocked_at = next(i for i, e in enumerate(events) if e.event_id == plan.block.event_id)
    assert _sentinel(cd) == events[blocked_at - 1].event_id
    assert all(e.event_id != plan.block.event_id for e in events[:blocked_at])


@pytest.mark.parametrize(
    "reason", ["no_handler", "view_drift", "corrupt_view", "corrupt_shard", "bad_shard_name", "handler_error", "x"]
)
def test_every_block_reason_has_words_and_actions(reason):
    b = gr.explain_block(ReplayStop("id", 3, "t", reason, "msg"))
    assert b.title.startswith("Blocked at event #3") and b.why and b.actions()
    assert b.to_json()["reason"] == reason


def test_until_scope_stops_at_the_chosen_event(root, backups):
    cd = build_case(root, "pending_tail")
    pending = unapplied(cd)
    until = pending[1].event_id
    run = gr.run_guarded_replay(_request(root, backups, scope=Scope("until", until)), HeadlessPrompter(True))
    assert run.status == "applied"
    assert run.outcome.applied == [pending[0].event_id, until]
    assert _sentinel(cd) == until
    assert [e.event_id for e in unapplied(cd)] == [e.event_id for e in pending[2:]]


def test_until_must_name_a_pending_event(root, backups):
    cd = build_case(root, "pending_tail")
    target = gr.target_of(root, CHARACTER)
    with pytest.raises(BadInputError, match="no event"):
        gr.make_plan(target, Scope("until", "nope"))
    with pytest.raises(BadInputError, match="already applied"):
        gr.make_plan(target, Scope("until", _events(cd)[0].event_id))


# -- apply, on each case -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", FOLDER_CASES)
def test_apply_matches_the_dry_run_backup_restores_and_replaying_again_changes_nothing(root, backups, case):
    cd = build_case(root, case)
    original = hash_tree(cd)
    original_tree = tree_snapshot(cd)
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    plan, outcome = run.plan, run.outcome
    events = _events(cd)
    assert outcome.mismatches == []
    if not plan.has_work:
        assert outcome.status in ("nothing_to_do", "stopped") and outcome.backup is None
        assert hash_tree(cd) == original
        return
    # Views equal what the reconciler's dry run predicted.
    for rel, data in plan.predicted.items():
        if rel != SENTINEL_NAME:
            assert (cd / rel).read_bytes() == data, rel
    # The sentinel is at the end, or just before the blocked event.
    if case in BLOCKED:
        assert outcome.status == "stopped"
        stop = next(i for i, e in enumerate(events) if e.event_id == outcome.block.event_id)
        assert _sentinel(cd) == events[stop - 1].event_id
    else:
        # The sentinel never names an event the memory server cannot see: after a glued last event
        # it stays on the event before it, and the glued one is in the applied set.
        last = events[-2] if case == "glued" else events[-1]
        assert outcome.status == "applied" and _sentinel(cd) == last.event_id
    after = hash_tree(cd)
    # Replaying again changes no byte.
    again = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert again.outcome.status in ("nothing_to_do", "stopped") and again.outcome.backup is None
    Reconciler(EventLog(root)).reconcile(CHARACTER)
    assert hash_tree(cd) == after
    # The backup restores the folder byte-identically.
    assert outcome.backup.hashes() == original
    restored = gr.execute_restore(gr.plan_restore(outcome.backup.path), backup_root=backups)
    assert restored.status == "restored", restored.message
    assert tree_snapshot(cd) == original_tree


def test_progress_is_reported_per_event(root, backups):
    build_case(root, "pending_tail")
    seen = []
    gr.run_guarded_replay(
        _request(root, backups), HeadlessPrompter(True), on_progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_cancel_between_events_leaves_a_consistent_folder(root, backups):
    cd = build_case(root, "pending_tail")
    pending = unapplied(cd)
    calls = []

    def should_continue():
        calls.append(1)
        return len(calls) <= 2

    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True), should_continue=should_continue)
    assert run.status == "cancelled" and run.exit_code == 1
    assert run.outcome.applied == [pending[0].event_id, pending[1].event_id]
    assert _sentinel(cd) == pending[1].event_id
    assert run.outcome.after.pending == 2
    # A later run finishes the job, and the result equals an uninterrupted replay's.
    rest = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert rest.status == "applied" and rest.outcome.applied == [e.event_id for e in pending[2:]]


def test_declining_the_plan_writes_nothing(root, backups):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    prompter = HeadlessPrompter({ASK_RECENT_WRITES: True, ASK_APPLY: False})
    run = gr.run_guarded_replay(_request(root, backups), prompter)
    assert run.status == "declined" and hash_tree(cd) == before and not backups.exists()
    assert "Would apply 4 event(s):" in prompter.asked[-1].details


# -- fingerprints ------------------------------------------------------------------------------------


def test_write_between_plan_and_apply_is_refused_and_replanned(root, backups):
    cd = build_case(root, "pending_tail")
    log = EventLog(root)
    written = []

    def answer(question):
        if question.key == ASK_APPLY and not written:
            # A writer appends while the person reads the plan.
            written.append(
                log.append(
                    CHARACTER,
                    "reflection.evidence_updated",
                    {"reflection_id": "ref_00000000000000a2", "reinforcement": 9.0},
                )
            )
        return True

    prompter = HeadlessPrompter(answer)
    run = gr.run_guarded_replay(_request(root, backups), prompter)
    first, second = run.outcomes
    assert first.status == "changed" and first.changed_files == [JOURNAL_NAME]
    assert first.applied == [] and first.report is None
    assert json.loads(first.report_path.read_text())["outcome"]["status"] == "changed"
    assert len(run.plans) == 2 and written[0].event_id not in [e.event_id for e in run.plans[0].events]
    assert run.plans[1].events[-1].event_id == written[0].event_id
    assert any("Re-planning" in n for n in prompter.notes)
    assert prompter.keys().count(ASK_APPLY) == 2
    assert "new plan" in prompter.asked[-1].text
    assert second.status == "applied" and _sentinel(cd) == written[0].event_id
    assert load_view(cd / REFLECTIONS, list)[1]["reinforcement"] == 9.0


def test_changed_fingerprint_writes_nothing(root, backups):
    cd = build_case(root, "pending_tail")
    target = gr.target_of(root, CHARACTER)
    plan = gr.make_plan(target)
    snapshot = {}

    def edit_view():
        data = load_view(cd / PERSONA, dict)
        data["neko"]["facts"][0]["text"] = "edited by hand"
        (cd / PERSONA).write_text(json.dumps(data, indent=2))
        snapshot.update(hash_tree(cd))

    outcome = gr.execute(plan, backup_root=backups, before_check=edit_view)
    assert outcome.status == "changed" and outcome.changed_files == [PERSONA]
    assert hash_tree(cd) == snapshot


def test_a_writer_that_never_stops_makes_planning_give_up(root, monkeypatch):
    build_case(root, "pending_tail")
    counter = iter(range(1000))
    monkeypatch.setattr(replay_plan, "fingerprint_folder", lambda cd: {"x": str(next(counter))})  # make_plan's
    with pytest.raises(gr.FolderBusyError):
        gr.make_plan(gr.target_of(root, CHARACTER))


# -- orphan repair -------------------------------------------------------------------------------------


def test_orphan_repair_puts_the_entry_into_its_shard_once_and_keeps_the_sentinel(root, backups):
    cd = build_case(root, "archive_lost")
    persona_entry = add_persona_orphan(root)
    sentinel_bytes = (cd / SENTINEL_NAME).read_bytes()
    orphans = gr.find_orphaned_archive_events(cd)
    assert [(o.archive, o.entry_id, o.repairable) for o in orphans] == [
        (REFLECTION_ARCHIVE, "ref_00000000000000a3", True),
        (PERSONA_ARCHIVE, persona_entry, True),
    ]
    tail = gr.make_plan(gr.target_of(root, CHARACTER))
    assert not tail.has_work and "repair orphans" in "\n".join(gr.describe_plan(tail))
    run = gr.run_guarded_replay(_request(root, backups, scope=Scope("repair")), HeadlessPrompter(True))
    assert run.status == "applied", run.message
    assert run.outcome.applied == [o.event.event_id for o in orphans]
    assert (cd / SENTINEL_NAME).read_bytes() == sentinel_bytes
    shard = load_shard(cd / REFLECTION_ARCHIVE / SHARD)
    assert [e["id"] for e in shard] == ["ref_00000000000000a3"]
    (pshard,) = (cd / PERSONA_ARCHIVE).iterdir()
    assert [e["id"] for e in load_shard(pshard)] == [persona_entry]
    assert gr.find_orphaned_archive_events(cd) == []
    after = hash_tree(cd)
    again = gr.run_guarded_replay(_request(root, backups, scope=Scope("repair")), HeadlessPrompter(True))
    assert again.status == "nothing_to_do" and hash_tree(cd) == after
    assert [e["id"] for e in load_shard(cd / REFLECTION_ARCHIVE / SHARD)] == ["ref_00000000000000a3"]


def test_unrepairable_orphans_are_explained(root, backups):
    cd = build_case(root, "archive_lost")
    (cd / REFLECTION_ARCHIVE / SHARD).write_text("{not a list")
    plan = gr.make_plan(gr.target_of(root, CHARACTER), Scope("repair"))
    assert not plan.has_work and [o.problem for o in plan.unrepairable] == ["corrupt_shard"]
    assert "Cannot repair" in "\n".join(gr.describe_plan(plan))
    run = gr.run_guarded_replay(_request(root, backups, scope=Scope("repair")), HeadlessPrompter(True))
    assert run.status == "stopped" and run.exit_code == 1


# -- backups and restore ------------------------------------------------------------------------------


def test_backup_is_outside_the_folder_with_a_manifest(root, backups):
    cd = build_case(root, "pending_tail")
    (cd / "time_indexed.db").write_bytes(b"SQLite format 3\0" + bytes(range(256)))
    backup = gr.create_backup(cd, backups)
    assert backup.path.parent == backups / CHARACTER and not backup.path.is_relative_to(cd)
    manifest = json.loads((backup.path / gr.MANIFEST_NAME).read_text())
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == hash_tree(cd)
    assert manifest["source"] == str(cd.resolve()) and manifest["kind"] == "replay"
    assert gr.verify_backup(gr.load_backup(backup.path)) == []
    assert not list((backups / CHARACTER).glob(".partial-*"))


def test_default_index_is_in_the_user_data_folder_beside_the_backups(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert gr.default_index_path("linux") == tmp_path / "h/.local/share/memory-inspector/backup-index.json"
    assert gr.default_index_path("darwin").parent == gr.default_backup_root("darwin").parent


def test_every_backup_is_recorded_in_the_index_with_its_folder_and_manifest_hash(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    backup = gr.create_backup(cd, backups)
    index = gr.default_index_path()
    assert index.is_relative_to(tmp_path / "xdg-data") and not index.is_relative_to(backups)
    data = json.loads(index.read_text())
    assert data["schema"] == 1
    (entry,) = data["backups"]
    assert entry == {
        "path": str(backup.path.resolve()),
        "name": backup.path.name,
        "character": CHARACTER,
        "kind": "replay",
        "target": str(cd.resolve()),
        "manifest_sha256": hashlib.sha256((backup.path / gr.MANIFEST_NAME).read_bytes()).hexdigest(),
        "created_at": backup.created_at,
    }
    second = gr.create_backup(cd, backups, index_path=tmp_path / "elsewhere.json")
    assert [e.path for e in gr.read_index().entries] == [backup.path.resolve()]
    assert [e.path for e in gr.read_index(tmp_path / "elsewhere.json").entries] == [second.path.resolve()]


def test_a_backup_the_index_cannot_record_is_removed_again(root, backups, monkeypatch):
    cd = build_case(root, "pending_tail")

    def refuse(entry, index_path=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(replay_backup, "record_in_index", refuse)
    with pytest.raises(gr.BackupError, match="No space left"):
        gr.create_backup(cd, backups)
    assert list((backups / CHARACTER).iterdir()) == []


def test_a_failed_index_write_keeps_the_old_index_and_leaves_no_litter(root, backups):
    cd = build_case(root, "pending_tail")
    first = gr.create_backup(cd, backups)
    index = gr.default_index_path()
    before = index.read_bytes()

    def fail_the_index_replace(call):
        if call.op == "replace" and call.phase == "before" and call.path == str(index):
            raise OSError(28, "No space left on device", call.path)

    with fault_hook(fail_the_index_replace), pytest.raises(gr.BackupError, match="No space left"):
        gr.create_backup(cd, backups)
    assert index.read_bytes() == before and sorted(p.name for p in index.parent.iterdir()) == ["backup-index.json"]
    assert [p.name for p in (backups / CHARACTER).iterdir()] == [first.path.name]


def test_backups_taken_at_once_are_all_recorded(root, backups):
    import threading

    cd = build_case(root, "healthy")
    made, start = [], threading.Barrier(6)

    def take():
        start.wait()
        made.append(gr.create_backup(cd, backups))

    threads = [threading.Thread(target=take) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {e.path for e in gr.read_index().entries} == {b.path.resolve() for b in made} and len(made) == 6


def test_a_moved_backup_folder_is_still_found_by_its_manifest_hash(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    original = hash_tree(cd)
    backup = gr.create_backup(cd, backups)
    EventLog(root).append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1"})
    moved = tmp_path / "archive-disk" / backup.path.name
    moved.parent.mkdir()
    backup.path.rename(moved)
    rp = gr.plan_restore(moved)
    assert rp.ok and rp.via == "index" and rp.target == cd.resolve()
    outcome = gr.execute_restore(rp)
    assert outcome.status == "restored" and hash_tree(cd) == original
    # Nothing vouched for the folder beside a moved backup: the pre-restore backup goes home.
    assert outcome.pre_restore is not None and outcome.pre_restore.path.is_relative_to(gr.default_backup_root())


def test_links_are_never_followed_into_backups(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    (tmp_path / "secret").write_text("outside")
    (cd / "link").symlink_to(tmp_path / "secret")
    backup = gr.create_backup(cd, backups)
    assert "link" not in backup.hashes()
    assert backup.skipped == [{"path": "link", "reason": "link (not followed)"}]


def test_tampered_backup_is_refused(root, backups):
    cd = build_case(root, "pending_tail")
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    after = hash_tree(cd)
    (run.outcome.backup.files_dir / REFLECTIONS).write_text("[]")
    rp = gr.plan_restore(run.outcome.backup.path)
    assert rp.problems and not rp.ok
    outcome = gr.run_guarded_restore(run.outcome.backup.path, HeadlessPrompter(True))
    assert outcome.status == "refused" and outcome.exit_code == 1
    assert hash_tree(cd) == after


def test_restore_removes_files_created_after_the_backup_and_is_itself_undoable(root, backups):
    cd = build_case(root, "pending_tail")
    (cd / REFLECTION_ARCHIVE / SHARD).unlink()  # so that the replay creates the shard
    original = hash_tree(cd)
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    EventLog(root).append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1"})
    (cd / ".nkatmp0badc0de.tmp").write_bytes(b"litter")
    after = hash_tree(cd)
    rp = gr.plan_restore(run.outcome.backup.path)
    assert f"{REFLECTION_ARCHIVE}/{SHARD}" in rp.remove and ".nkatmp0badc0de.tmp" in rp.remove
    assert rp.new_events == 1 and "written after the backup" in "\n".join(gr.describe_restore_plan(rp))
    prompter = HeadlessPrompter(True)
    restored = gr.run_guarded_restore(run.outcome.backup.path, prompter)
    assert restored.status == "restored" and restored.exit_code == 0
    outcome = restored.outcome
    assert hash_tree(cd) == original
    assert outcome.pre_restore is not None and outcome.pre_restore.hashes() == after
    report = json.loads(outcome.report_path.read_text())
    assert report["kind"] == "restore" and report["outcome"]["removed"] == sorted(rp.remove)
    undo = gr.run_guarded_restore(outcome.pre_restore.path, HeadlessPrompter(True))
    assert undo.status == "restored" and hash_tree(cd) == after


def test_restore_removes_a_folder_the_replay_created(root, backups):
    import shutil

    cd = build_case(root, "pending_tail")
    shutil.rmtree(cd / REFLECTION_ARCHIVE)  # the replay recreates it to heal the archive entry
    original = tree_snapshot(cd)
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    assert (cd / REFLECTION_ARCHIVE / SHARD).is_file()
    rp = gr.plan_restore(run.outcome.backup.path)
    assert rp.remove == [f"{REFLECTION_ARCHIVE}/{SHARD}"] and rp.remove_dirs == [REFLECTION_ARCHIVE]
    outcome = gr.execute_restore(rp, backup_root=backups)
    assert outcome.status == "restored" and f"{REFLECTION_ARCHIVE}/" in outcome.removed
    assert tree_snapshot(cd) == original


def test_restore_refuses_while_the_server_runs(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    after = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        outcome = gr.run_guarded_restore(run.outcome.backup.path, HeadlessPrompter(True))
    assert outcome.status == "refused" and "stop N.E.K.O" in outcome.message
    assert hash_tree(cd) == after


def test_restore_of_an_identical_folder_does_nothing(root, backups):
    cd = build_case(root, "pending_tail")
    backup = gr.create_backup(cd, backups)
    prompter = HeadlessPrompter(True)
    outcome = gr.run_guarded_restore(backup.path, prompter)
    assert outcome.status == "nothing_to_do" and prompter.asked == []


def test_restore_recreates_a_deleted_folder(root, backups):
    cd = build_case(root, "pending_tail")
    original = hash_tree(cd)
    backup = gr.create_backup(cd, backups)
    import shutil

    shutil.rmtree(cd)
    outcome = gr.run_guarded_restore(backup.path, HeadlessPrompter(True)).outcome
    assert outcome.status == "restored" and outcome.pre_restore is None
    assert hash_tree(cd) == original


def test_not_a_backup_is_bad_input(tmp_path):
    with pytest.raises(BadInputError):
        gr.plan_restore(tmp_path)
    (tmp_path / gr.MANIFEST_NAME).write_text(
        '{"schema": 1, "character": "A", "source": "/x", "files": [{"path": "../x", "sha256": "0", "size": 1}]}'
    )
    with pytest.raises(BadInputError, match="leaves the folder"):
        gr.load_backup(tmp_path)


def test_list_backups_marks_the_backups_that_cannot_be_restored(root, backups, tmp_path):
    build_case(root, "pending_tail")
    good = gr.create_backup(root / CHARACTER, backups)
    stray = gr.create_backup(root / CHARACTER, backups, index_path=tmp_path / "another-index.json")
    scratch = tmp_path / "scratch" / "memory"  # the sample's scratch copy of an earlier run
    scratch.mkdir(parents=True)
    gone = gr.create_backup(build_case(scratch, "healthy"), backups)
    import shutil

    shutil.rmtree(tmp_path / "scratch")
    by_path = {b.path: b for b in gr.list_backups(backups, CHARACTER)}
    assert by_path[good.path].restorable and by_path[good.path].target.path == (root / CHARACTER).resolve()
    assert by_path[good.path].label().endswith(f"→ {(root / CHARACTER).resolve()}")
    assert not by_path[stray.path].restorable and by_path[stray.path].target.code == "not_indexed"
    assert by_path[stray.path].label().endswith("not restorable: not in the index of backups")
    assert not by_path[gone.path].restorable and by_path[gone.path].target.code == "target_gone"
    assert "does not exist" in by_path[gone.path].target.problem
    assert by_path[gone.path].label().endswith("not restorable: its folder is gone")


def test_list_backups_newest_first_with_their_status(root, backups):
    build_case(root, "pending_tail")
    first = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True)).outcome.backup
    cd = root / CHARACTER
    EventLog(root).append(
        CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1", "reinforcement": 5.0}
    )
    second = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True)).outcome.backup
    listed = gr.list_backups(backups, CHARACTER)
    assert {b.path for b in listed} == {first.path, second.path}
    assert all(b.status == "applied" and b.kind == "replay" for b in listed)
    assert cd.is_dir()


# -- the report ----------------------------------------------------------------------------------------


def test_report_beside_the_backup_records_plan_outcome_fingerprints_who_and_when(root, backups):
    cd = build_case(root, "legacy_block")
    run = gr.run_guarded_replay(_request(root, backups), HeadlessPrompter(True))
    report = json.loads((run.outcome.backup.path / gr.REPORT_NAME).read_text())
    assert report["who"] and report["started_at"] and report["finished_at"]
    assert report["overrides"] == {"server_lock": False}
    assert report["folder"] == str(cd.resolve())
    assert report["plan"]["events"][0]["event_id"] == run.outcome.applied[0]
    assert report["outcome"]["status"] == "stopped" and report["outcome"]["applied"] == run.outcome.applied
    assert report["outcome"]["stopped"]["reason"] == "no_handler"
    assert report["fingerprints"]["plan"] == run.plan.fingerprints
    assert report["fingerprints"]["before_apply"] == run.plan.fingerprints
    assert report["fingerprints"]["after"] == gr.fingerprint_folder(cd)
    assert report["after"]["pending"] == 2


def test_core_imports_no_qt():
    code = "import sys, inspector.core.replay; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    code = "import sys, inspector.core.replay; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("kind", ["duplicate", "fifo", "drive"])
def test_extract_refuses_what_check_refuses_before_writing_anything(tmp_path, kind):
    z = tmp_path / "bad.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("memory/Alice/persona.json", "{}")
        if kind == "duplicate":
            with pytest.warns(UserWarning, match="Duplicate name"):
                zf.writestr("memory/Alice/persona.json", "{}")
        elif kind == "fifo":
            info = zipfile.ZipInfo("memory/Alice/pipe")
            info.external_attr = 0o010644 << 16
            zf.writestr(info, "")
        else:
            zf.writestr("C:evil.json", "x")
    with pytest.raises(BadInputError, match="refused"):
        gr.extract_export(z, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.json"))


def test_the_fresh_look_after_a_run_counts_by_the_diagnosis(root, backups):
    """After an apply the folder is read once more, through one diagnosis (issue 15 item 2): the
    parked event counts as parked, not pending, and the sentinel is past it."""
    cd = build_case(root, "persona_drift")
    held = gr.make_plan(gr.target_of(root, CHARACTER)).block
    assert held is not None
    request = gr.ReplayRequest(root, CHARACTER, scope=Scope("park", park=held.event_id), backup_root=backups)
    run = gr.run_guarded_replay(request, HeadlessPrompter(True))
    after = run.outcome.after
    events = read_journal(cd / JOURNAL_NAME).events
    assert (after.parked, after.pending, after.events) == (1, 0, len(events))
    assert after.sentinel_index == len(events) - 1 and after.sentinel_id == events[-1].event_id
    assert after.orphaned_archive == 0 and after.diagnosis["counts"]["pending"] == 0
