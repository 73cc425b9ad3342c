"""``memory-inspector replay --repair-journal``: the guarded repair of a journal the memory server
cannot read (issue 24), with every guard replay has: the server lock refuses, the plan is printed,
``--dry-run`` writes nothing, a backup is taken, the fingerprints are checked, a report is written,
and restore brings back the exact old bytes."""

from __future__ import annotations

import errno
import io
import json
import sys
from pathlib import Path

import pytest

from inspector.cli import command_help, main
from inspector.core import replay as gr
from journal import fs
from journal.appliedset import read_applied_set
from journal.diagnosis import diagnose_character
from journal.events import JOURNAL_NAME
from journal.fixtures import server_lock_held, zip_export
from journal.reader import read_journal
from journal.repair import DAMAGED_NAME, read_damaged, reassemble
from journal.views import read_sentinel
from tests.inspector.replay_cases import CHARACTER, build_case, hash_tree
from tests.journal import _repair_kit as kit

pytestmark = pytest.mark.usefixtures("replay_env")


@pytest.fixture(autouse=True)
def _no_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


def repair(root, backups, *extra):
    return main(
        ["replay", str(root), "--character", CHARACTER, "--backup-dir", str(backups), "--repair-journal", *extra]
    )


def _backup(backups: Path) -> Path:
    (only,) = sorted((backups / CHARACTER).iterdir())
    return only


def _assert_repaired(cd: Path, old: bytes) -> None:
    new = (cd / JOURNAL_NAME).read_bytes()
    new.decode("utf-8")
    read = read_journal(cd / JOURNAL_NAME)
    assert not [d for d in read.defects if d.kind == "invalid_utf8"]
    assert all(new[d.offset : d.offset + d.length].decode("utf-8") is not None for d in read.defects)
    assert kit.records_of(new) == kit.records_of(old)
    assert reassemble(new, read_damaged(cd).records) == old


def test_the_dry_run_of_a_record_glued_onto_torn_utf8_lists_the_fragment_and_writes_nothing(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    eid = kit.glue_onto_torn_utf8(cd)
    before = hash_tree(cd)
    old = (cd / JOURNAL_NAME).read_bytes()
    glued = next(d for d in read_journal(cd / JOURNAL_NAME).defects if d.kind == "glued")
    assert repair(root, backups, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "Scope: repair the journal" in out
    assert f"line 8, offset {glued.offset}: ‹203 bytes, not UTF-8 at +202›" in out
    assert f"the bytes before event {eid}, which was glued onto them and stays, on its own line" in out
    assert "Keeps all 8 complete record(s) byte for byte, in order (1 of them glued onto a fragment" in out
    assert f"  events.ndjson: rewritten, {len(old):,} bytes → {len(old) - 203:,} bytes" in out
    assert "  events.ndjson.damaged: +1 fragment(s) (created)" in out
    assert "Dry run: nothing was changed; an apply would repair the journal as planned (exit 0)." in out
    assert kit.TEXT[:2] not in out  # never the fragment's text
    assert hash_tree(cd) == before and not backups.exists()


def test_yes_repairs_with_a_backup_and_a_report_and_restore_brings_back_every_byte(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    kit.glue_onto_torn_utf8(cd)
    before = hash_tree(cd)
    old = (cd / JOURNAL_NAME).read_bytes()
    sentinel = read_sentinel(cd).event_id
    assert repair(root, backups, "--yes") == 0
    out = capsys.readouterr().out
    assert "Result: applied — repaired events.ndjson: moved 1 fragment(s)" in out
    _assert_repaired(cd, old)
    assert read_sentinel(cd).event_id == sentinel
    backup = _backup(backups)
    report = json.loads((backup / "report.json").read_text())
    assert report["plan"]["scope"]["kind"] == "repair_journal"
    assert report["plan"]["journal_repair"]["fragments"][0]["length"] == 203
    assert "bytes" not in report["plan"]["journal_repair"]["fragments"][0]
    assert report["outcome"]["status"] == "applied" and report["outcome"]["matches_plan"] is True
    assert (
        report["fingerprints"]["after"][JOURNAL_NAME] == "sha256:" + report["plan"]["journal_repair"]["after"]["sha256"]
    )
    after = hash_tree(cd)
    assert set(after) - set(before) == {DAMAGED_NAME}
    assert main(["restore", str(backup), "--yes"]) == 0
    assert hash_tree(cd) == before  # every file, hashed: the exact old bytes, and no .damaged
    assert (cd / JOURNAL_NAME).read_bytes() == old


def test_a_torn_utf8_last_line(root, backups):
    cd = build_case(root, "healthy")
    kit.torn_utf8_tail(cd)
    old = (cd / JOURNAL_NAME).read_bytes()
    assert repair(root, backups, "--yes") == 0
    _assert_repaired(cd, old)
    assert (cd / JOURNAL_NAME).read_bytes().endswith(b"}\n")
    (rec,) = read_damaged(cd).records
    assert rec["kind"] == "line" and rec["reader"] == "torn_tail" and rec["newline"] is False


def test_several_fragments_and_an_applied_set_that_still_names_the_same_ids(root, backups, capsys):
    from journal import EventLog, Reconciler

    cd = build_case(root, "persona_drift")
    log = EventLog(root)
    log.append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a3"})
    Reconciler(log).reconcile(CHARACTER)
    applied = read_applied_set(cd).applied
    assert applied
    kit.several(cd)
    old = (cd / JOURNAL_NAME).read_bytes()
    assert repair(root, backups, "--yes") == 0
    out = capsys.readouterr().out
    assert out.count("not UTF-8 at +") == 3
    assert "1 damaged line(s) that are UTF-8 stay as they are" in out
    _assert_repaired(cd, old)
    assert read_applied_set(cd).applied == applied and read_applied_set(cd).state == "ok"
    assert len(read_damaged(cd).records) == 3


def test_a_journal_with_nothing_to_repair_says_so_and_writes_nothing(root, backups, capsys):
    cd = build_case(root, "torn_tail")  # an ASCII torn tail: damage that is UTF-8
    before = hash_tree(cd)
    for extra in (("--yes",), ("--dry-run",), ()):
        assert repair(root, backups, *extra) == 0
        out = capsys.readouterr().out
        assert "Nothing to repair: every line of events.ndjson is valid UTF-8; 1 damaged line(s)" in out
        assert "(no file changes)" in out
    assert hash_tree(cd) == before and not backups.exists()


def test_a_running_server_refuses_and_nothing_is_written(root, backups, tmp_path, capsys):
    cd = build_case(root, "pending_tail")
    kit.glue_onto_torn_utf8(cd)
    before = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        assert repair(root, backups, "--yes") == 1
        assert "Refused: the memory server is running" in capsys.readouterr().out
        assert repair(root, backups, "--dry-run") == 1
        assert "an apply would be refused" in capsys.readouterr().out
    assert hash_tree(cd) == before and not backups.exists()


def test_a_zip_export_is_refused_as_for_replay(root, backups, tmp_path, capsys):
    cd = build_case(root, "pending_tail")
    kit.glue_onto_torn_utf8(cd)
    z = zip_export(root, tmp_path / "export.zip")
    before = z.read_bytes()
    assert main(["replay", str(z), "--character", CHARACTER, "--repair-journal", "--yes"]) == 1
    assert "extract it to a folder first" in capsys.readouterr().out
    assert z.read_bytes() == before and not (tmp_path / "export-extracted").exists()


def test_it_cannot_be_combined_with_another_scope(root, backups, capsys):
    build_case(root, "pending_tail")
    for other in (["--repair-orphans"], ["--until", "x"], ["--park", "x"]):
        assert repair(root, backups, *other) == 2
        assert "cannot be combined" in capsys.readouterr().err


def test_a_damaged_file_that_is_a_link_is_bad_input(root, backups, tmp_path, capsys):
    cd = build_case(root, "pending_tail")
    kit.torn_utf8_tail(cd)
    (tmp_path / "elsewhere").write_bytes(b"")
    (cd / DAMAGED_NAME).symlink_to(tmp_path / "elsewhere")
    before = hash_tree(cd)
    assert repair(root, backups, "--yes") == 2
    assert "events.ndjson.damaged is a link" in capsys.readouterr().err
    assert hash_tree(cd) == before and not backups.exists()
    assert (tmp_path / "elsewhere").read_bytes() == b""


def test_help_names_the_scope():
    text = command_help("replay")
    assert "--repair-journal" in text and "events.ndjson.damaged" in text


def test_a_plan_of_the_tail_says_the_server_cannot_read_the_journal(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    kit.several(cd)
    assert main(["replay", str(root), "--character", CHARACTER, "--dry-run"]) == 0
    assert "Note: 3 fragment(s) of events.ndjson are not UTF-8" in capsys.readouterr().out
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    assert [f.line for f in plan.undecodable] == [
        f.line
        for f in gr.make_plan(gr.target_of(root, CHARACTER), gr.Scope("repair_journal")).journal_repair.fragments
    ]


def test_a_repair_interrupted_at_the_journal_replace_converges_on_the_next_run(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    kit.several(cd)
    old = (cd / JOURNAL_NAME).read_bytes()

    def fail(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before" and call.path == str(cd / JOURNAL_NAME):
            raise OSError(errno.ENOSPC, "injected", call.path)

    previous = fs.set_fault_hook(fail)
    try:
        assert repair(root, backups, "--yes") == 1
    finally:
        fs.set_fault_hook(previous)
    assert "Result: failed — the repair failed" in capsys.readouterr().out
    assert (cd / JOURNAL_NAME).read_bytes() == old and len(read_damaged(cd).records) == 3
    assert repair(root, backups, "--dry-run") == 0
    assert capsys.readouterr().out.count("recorded in events.ndjson.damaged already") == 3
    assert repair(root, backups, "--yes") == 0
    assert "+0 fragment(s) (3 recorded already)" in capsys.readouterr().out
    _assert_repaired(cd, old)
    assert len(read_damaged(cd).records) == 3  # not recorded twice


def test_a_journal_that_changes_after_the_plan_is_re_planned(root, backups):
    cd = build_case(root, "pending_tail")
    kit.torn_utf8_tail(cd)
    target = gr.target_of(root, CHARACTER)
    plan = gr.make_plan(target, gr.Scope("repair_journal"))

    def append() -> None:
        with open(cd / JOURNAL_NAME, "ab") as fh:
            fh.write(b"\n" + kit.record()[1])

    outcome = gr.execute(plan, backup_root=backups, before_check=append)
    assert outcome.status == "changed" and outcome.changed_files == [JOURNAL_NAME]
    assert not (cd / DAMAGED_NAME).exists()
    again = gr.make_plan(target, gr.Scope("repair_journal"))
    assert again.journal_repair is not None and len(again.journal_repair.fragments) == 1
    assert gr.execute(again, backup_root=backups).status == "applied"


@pytest.mark.parametrize("damage", ["torn", "glued", "several"])
def test_after_the_repair_the_server_model_predicts_a_start_that_reads_the_journal(root, backups, capsys, damage):
    cd = build_case(root, "pending_tail")
    {"torn": kit.torn_utf8_tail, "glued": kit.glue_onto_torn_utf8, "several": kit.several}[damage](cd)
    before = diagnose_character(cd)
    assert before.server_start is not None and before.server_start.raises is not None
    assert "server.journal_undecodable" in {f.code for f in before.findings}
    assert repair(root, backups, "--yes") == 0
    capsys.readouterr()
    after = diagnose_character(cd)
    s = after.server_start
    assert s is not None and s.raises is None  # it reads the journal again, and replays its tail
    assert "server.journal_undecodable" not in {f.code for f in after.findings}
    # the records it could not reach now replay (and a record that was glued is visible to it now)
    assert s.replays >= before.server_start.unapplied > 0
