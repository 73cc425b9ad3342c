"""``memory-inspector replay`` / ``restore`` from the command line: output, questions, exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core import replay as gr
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import server_lock_held, zip_export
from journal.reader import read_journal
from journal.views import REFLECTIONS, read_sentinel
from tests.inspector.replay_cases import (
    BLOCKED,
    CHARACTER,
    FOLDER_CASES,
    build_case,
    hash_tree,
    unapplied,
)

pytestmark = pytest.mark.usefixtures("replay_env")


class FakeTTY(io.StringIO):
    """A terminal on which a person has typed ``initial``."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _no_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal unless a test says so


def replay(root, backups, *extra):
    return main(["replay", str(root), "--character", CHARACTER, "--backup-dir", str(backups), *extra])


def _backup_dirs(backups):
    return sorted(p for p in (backups / CHARACTER).iterdir()) if (backups / CHARACTER).is_dir() else []


def test_yes_applies_prints_plan_diff_and_result(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    assert replay(root, backups, "--yes") == 0
    out = capsys.readouterr().out
    assert "Would apply 4 event(s):" in out
    assert 'status: "pending" → "confirmed"' in out
    assert "[y/N] yes (--yes)" in out
    assert "Result: applied" in out and "memory-inspector restore" in out
    events = read_journal(cd / JOURNAL_NAME).events
    assert read_sentinel(cd).event_id == events[-1].event_id
    (backup,) = _backup_dirs(backups)
    assert (backup / "report.json").is_file() and (backup / "manifest.json").is_file()


def test_without_yes_and_no_terminal_it_refuses_and_changes_nothing(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    assert replay(root, backups) == 1
    captured = capsys.readouterr()
    assert "Would apply 4 event(s):" in captured.out
    assert "stdin is not a terminal" in captured.err
    assert hash_tree(cd) == before and not backups.exists()


@pytest.mark.parametrize("answers,code", [("y\ny\n", 0), ("y\nn\n", 1), ("n\n", 1)])
def test_asks_on_the_terminal(root, backups, monkeypatch, capsys, answers, code):
    cd = build_case(root, "pending_tail")  # fresh files: the recent-writes question comes first
    before = hash_tree(cd)
    monkeypatch.setattr(sys, "stdin", FakeTTY(answers))
    assert replay(root, backups) == code
    out = capsys.readouterr().out
    assert "a writer may be active" in out
    if code == 0:
        assert "Apply 4 event(s) to Alice?" in out and "Result: applied" in out
    else:
        assert hash_tree(cd) == before and not backups.exists()


@pytest.mark.parametrize("case", FOLDER_CASES)
def test_dry_run_changes_nothing_and_predicts_the_exit_code(root, backups, capsys, case):
    build_case(root, case)
    before = hash_tree(root)
    code = replay(root, backups, "--dry-run")
    assert hash_tree(root) == before and not backups.exists()
    assert code == (1 if case in BLOCKED else 0)
    out = capsys.readouterr().out
    assert "Dry run:" in out and "nothing was changed" in out


def test_blocked_event_exits_1_with_the_explanation(root, backups, capsys):
    cd = build_case(root, "persona_drift")
    assert replay(root, backups, "--yes") == 1
    out = capsys.readouterr().out
    assert "reason: view_drift" in out and "What you can do" in out
    assert "Result: stopped" in out and "Held, not applied: 1 event(s)" in out
    events = read_journal(cd / JOURNAL_NAME).events
    # The sentinel stays just before the held event (the server stops there too).
    assert read_sentinel(cd).event_id == events[-2].event_id


def test_nothing_pending_exits_0(root, backups, capsys):
    build_case(root, "healthy")
    assert replay(root, backups) == 0  # nothing to confirm: no question, no terminal needed
    assert "nothing to apply" in capsys.readouterr().out


def test_until(root, backups):
    cd = build_case(root, "pending_tail")
    pending = unapplied(cd)
    assert replay(root, backups, "--yes", "--until", pending[0].event_id) == 0
    assert read_sentinel(cd).event_id == pending[0].event_id


def test_repair_orphans_keeps_the_sentinel(root, backups, capsys):
    cd = build_case(root, "archive_lost")
    sentinel = (cd / SENTINEL_NAME).read_bytes()
    assert replay(root, backups, "--yes", "--repair-orphans") == 0
    assert "Would re-apply 1 event(s):" in capsys.readouterr().out
    assert (cd / SENTINEL_NAME).read_bytes() == sentinel
    assert gr.find_orphaned_archive_events(cd) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{missing}", "--character", CHARACTER, "--yes"],
        ["replay", "{root}", "--character", "Bob", "--yes"],
        ["replay", "{root}", "--character", CHARACTER, "--yes", "--until", "no-such-event"],
        ["replay", "{root}", "--character", CHARACTER, "--until", "x", "--repair-orphans"],
        ["replay", "{root}", "--character", CHARACTER, "--yes", "--backup-dir", "{root}/Alice/bk"],
        ["restore", "{root}"],
    ],
)
def test_bad_input_exits_2_with_a_reason(root, backups, tmp_path, capsys, argv):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    args = [a.format(root=root, missing=tmp_path / "missing") for a in argv]
    if "--backup-dir" not in args and args[0] == "replay":
        args += ["--backup-dir", str(backups)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memory-inspector {args[0]}: ") and err.count("\n") == 1
    assert hash_tree(cd) == before


def test_a_memory_root_without_character_exits_2_naming_the_characters(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    assert main(["replay", str(root), "--backup-dir", str(backups), "--yes"]) == 2
    err = capsys.readouterr().err
    assert "is not a character folder: name the character with --character" in err
    assert f"(characters in it: {CHARACTER})" in err and err.count("\n") == 1
    assert hash_tree(cd) == before and not backups.exists()


def test_a_character_folder_needs_no_character_option(root, backups, capsys):
    """The help says PATH may be a character folder: then --character is not needed (issue 15)."""
    cd = build_case(root, "pending_tail")
    assert main(["replay", str(cd), "--backup-dir", str(backups), "--yes"]) == 0
    assert "applied 4 event(s) as planned" in capsys.readouterr().out
    assert main(["replay", str(cd), "--backup-dir", str(backups), "--dry-run"]) == 0


def test_server_lock_refuses_and_the_override_is_recorded(root, backups, tmp_path, capsys):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        assert replay(root, backups, "--yes") == 1
        out = capsys.readouterr().out
        assert "Refused: the memory server is running" in out
        assert hash_tree(cd) == before and not backups.exists()
        assert replay(root, backups, "--yes", "--i-know-the-server-is-stopped") == 0
    (backup,) = _backup_dirs(backups)
    report = json.loads((backup / "report.json").read_text())
    assert report["overrides"]["server_lock"] is True


def test_dry_run_while_the_server_runs_shows_the_plan_and_predicts_the_refusal(root, backups, tmp_path, capsys):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        assert replay(root, backups, "--dry-run") == 1
    out = capsys.readouterr().out
    assert "Would apply 4 event(s):" in out and "an apply would be refused" in out
    assert hash_tree(cd) == before and not backups.exists()


def test_restore_into_a_vanished_memory_root_is_bad_input(root, backups, tmp_path, capsys):
    import shutil

    build_case(root, "pending_tail")
    replay(root, backups, "--yes")
    (backup,) = _backup_dirs(backups)
    shutil.rmtree(root)
    assert main(["restore", str(backup), "--yes"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_zip_export_is_refused_and_extraction_offered(root, backups, tmp_path, monkeypatch, capsys):
    build_case(root, "pending_tail")
    z = zip_export(root, tmp_path / "export.zip")
    assert main(["replay", str(z), "--character", CHARACTER, "--yes", "--backup-dir", str(backups)]) == 1
    assert "extract it to a folder first" in capsys.readouterr().out
    assert not (tmp_path / "export-extracted").exists()
    monkeypatch.setattr(sys, "stdin", FakeTTY("y\n"))
    assert main(["replay", str(z), "--character", CHARACTER, "--backup-dir", str(backups)]) == 1
    assert "Extracted to" in capsys.readouterr().out
    assert hash_tree(tmp_path / "export-extracted" / "memory") == hash_tree(root)


def test_restore_round_trip(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    original = hash_tree(cd)
    assert replay(root, backups, "--yes") == 0
    (backup,) = _backup_dirs(backups)
    changed = hash_tree(cd)
    assert main(["restore", str(backup)]) == 1  # no terminal, no --yes
    assert "stdin is not a terminal" in capsys.readouterr().err
    assert hash_tree(cd) == changed
    assert main(["restore", str(backup), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "replace events_applied.json" in out and "Result: restored" in out
    assert hash_tree(cd) == original


def test_restore_shows_the_folder_in_full_and_where_it_comes_from(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    replay(root, backups, "--yes")
    (backup,) = _backup_dirs(backups)
    capsys.readouterr()
    assert main(["restore", str(backup), "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"Into: {cd.resolve()}  (recorded in the index of backups when it was taken)" in out
    assert f"back into {cd.resolve()}?" in out


def test_restore_of_a_backup_not_in_the_index_exits_1_and_names_to(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    replay(root, backups, "--yes")
    (backup,) = _backup_dirs(backups)
    gr.default_index_path().write_text('{"schema": 1, "backups": []}')  # its entry is lost
    after = hash_tree(cd)
    assert main(["restore", str(backup), "--yes"]) == 1
    out = capsys.readouterr().out
    assert "not in the index of backups" in out and "--to DIR" in out
    assert hash_tree(cd) == after
    # ``--to`` names the folder instead.
    assert main(["restore", str(backup), "--yes", "--to", str(cd)]) == 0
    assert f"Into: {cd.resolve()}  (the folder you named with --to)" in capsys.readouterr().out
    assert hash_tree(cd) == gr.load_backup(backup).hashes()


def test_restore_of_a_tampered_backup_exits_1(root, backups, capsys):
    cd = build_case(root, "pending_tail")
    replay(root, backups, "--yes")
    (backup,) = _backup_dirs(backups)
    (backup / "files" / REFLECTIONS).write_text("[]")
    after = hash_tree(cd)
    assert main(["restore", str(backup), "--yes"]) == 1
    assert "does not match its manifest" in capsys.readouterr().out
    assert hash_tree(cd) == after


def test_restore_refuses_while_the_server_runs(root, backups, tmp_path):
    cd = build_case(root, "pending_tail")
    replay(root, backups, "--yes")
    (backup,) = _backup_dirs(backups)
    after = hash_tree(cd)
    with server_lock_held(tmp_path / "runtime"):
        assert main(["restore", str(backup), "--yes"]) == 1
    assert hash_tree(cd) == after


def test_end_to_end_in_a_real_process(root, backups, tmp_path):
    """The installed entry point, with stdin from /dev/null: refuse; with --yes: apply."""
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    env = {**os.environ, "NEKO_RUNTIME_STATE_DIR": str(tmp_path / "runtime"), "HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "inspector", "replay", str(root), "--character", CHARACTER]
    cmd += ["--backup-dir", str(backups)]
    cwd = Path(__file__).resolve().parents[2]
    first = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=cwd)
    assert first.returncode == 1, first.stderr
    assert "stdin is not a terminal" in first.stderr and hash_tree(cd) == before
    second = subprocess.run([*cmd, "--yes"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=cwd)
    assert second.returncode == 0, second.stderr
    assert "Result: applied" in second.stdout


def _unreadable(cd, name, kind, tmp_path):
    p = cd / name
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p.mkdir()
    else:  # a link leading out of the character folder
        outside = tmp_path / "outside"
        outside.write_text('{"after": null, "after_ts": null, "applied": []}')
        os.symlink(outside, p)


@pytest.mark.parametrize("name", ["events_parked.ndjson", "events_applied_set.json"])
@pytest.mark.parametrize("kind", ["fifo", "directory", "link"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_an_unreadable_parked_or_applied_set_file_is_bad_input_and_nothing_is_written(
    root, backups, tmp_path, capsys, name, kind, dry_run
):
    """Which events are parked, or already applied past the sentinel, would be unknown: replay
    would apply a parked event, or apply an event a second time. One line, exit 2, no backup."""
    cd = build_case(root, "pending_tail")
    _unreadable(cd, name, kind, tmp_path)
    before = hash_tree(cd)
    assert replay(root, backups, "--dry-run" if dry_run else "--yes") == 2
    err = capsys.readouterr().err
    assert err.startswith("memory-inspector replay: ") and err.count("\n") == 1, err
    assert name in err and "nothing was written" in err
    assert hash_tree(cd) == before and not backups.exists()


def test_an_applied_set_over_the_size_cap_is_refused(root, backups, capsys, monkeypatch):
    from journal import appliedset

    cd = build_case(root, "pending_tail")
    monkeypatch.setattr(appliedset, "APPLIED_SET_MAX_BYTES", 64)
    (cd / appliedset.APPLIED_SET_NAME).write_text('{"after": null, "after_ts": null, "applied": ["' + "x" * 80 + '"]}')
    aset = appliedset.read_applied_set(cd)
    assert aset.state == "refused" and "larger than" in (aset.message or "")
    before = hash_tree(cd)
    assert replay(root, backups, "--yes") == 2
    err = capsys.readouterr().err
    assert appliedset.APPLIED_SET_NAME in err and "larger than" in err and hash_tree(cd) == before


@pytest.mark.parametrize("option", ["--until", "--park"])
def test_an_empty_event_id_is_bad_input(root, backups, capsys, option):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    assert replay(root, backups, "--yes", option, "") == 2
    captured = capsys.readouterr()
    assert captured.err == f"memory-inspector replay: {option} needs an event id (it was empty); nothing was written\n"
    assert captured.out == "" and hash_tree(cd) == before


@pytest.mark.parametrize("option", ["--until", "--park"])
def test_an_unknown_event_id_is_echoed_escaped(root, backups, capsys, option):
    build_case(root, "pending_tail")
    assert replay(root, backups, "--yes", option, "x\x1b[31mred\nline\x07") == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and err.count("\n") == 1
    assert "no event x\\x1b[31mred\\nline\\x07" in err


def test_restore_dry_run_prints_what_would_change_and_writes_nothing(root, backups, capsys):
    """``restore`` suggested ``--dry-run`` before it had one (issue 15): now it does."""
    cd = build_case(root, "pending_tail")
    assert replay(root, backups, "--yes") == 0
    (backup,) = _backup_dirs(backups)
    after, copies = hash_tree(cd), _backup_dirs(backups)
    capsys.readouterr()
    assert main(["restore", str(backup), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "replace events_applied.json" in out
    assert "Dry run: nothing was changed; a restore would replace" in out and "(exit 0)" in out
    assert hash_tree(cd) == after and _backup_dirs(backups) == copies  # not even a pre-restore backup


@pytest.mark.parametrize("case", ["pending_tail", "legacy_block", "torn_tail", "archive_lost", "glued"])
def test_terminal_text_counts_in_words_and_names_no_window_tab(root, backups, capsys, case):
    """Text a terminal prints says "1 warning", not "1 warnings"; never "Dry run: dry run"; and
    points at nothing only the window has (issue 15)."""
    import re

    build_case(root, case)
    main(["check", str(root)])
    replay(root, backups, "--dry-run")
    out = capsys.readouterr().out
    assert not re.search(r"(?<![\d,])1 (defects|warnings|errors|characters)\b", out)
    assert "Dry run: dry run" not in out and "Event tab" not in out and "its panel" not in out


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_journal_that_cannot_be_read_is_bad_input_and_nothing_is_written(root, backups, tmp_path, capsys, kind):
    """The plan reads the journal through the diagnosis; a journal it cannot read (never opened, so
    a FIFO cannot block) refuses the plan: one line, exit 2, no backup."""
    cd = build_case(root, "pending_tail")
    (cd / "events.ndjson").unlink()
    _unreadable(cd, "events.ndjson", kind, tmp_path)
    before = hash_tree(cd) if kind != "fifo" else None
    assert replay(root, backups, "--yes") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "events.ndjson" in err
    assert not backups.exists()
    if before is not None:
        assert hash_tree(cd) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("flag", ["--dry-run", "--yes"])
def test_a_fifo_sentinel_is_refused_not_planned_as_missing(root, backups, capsys, flag):
    cd = build_case(root, "pending_tail")
    (cd / SENTINEL_NAME).unlink()
    os.mkfifo(cd / SENTINEL_NAME)
    before = hash_tree(cd)
    assert replay(root, backups, flag) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "refuses" in err and "Sentinel: missing" not in err
    assert hash_tree(cd) == before and not backups.exists()


def test_until_takes_the_one_event_syntax(root, backups, capsys):
    """``--until`` names an event as every command does: ``#index`` or the start of its id."""
    cd = build_case(root, "pending_tail")
    pending = unapplied(cd)
    events = read_journal(cd / JOURNAL_NAME).events
    index = next(i for i, e in enumerate(events) if e.event_id == pending[0].event_id)
    assert replay(root, backups, "--yes", "--until", f"#{index}") == 0
    assert read_sentinel(cd).event_id == pending[0].event_id
    assert replay(root, backups, "--yes", "--until", pending[1].event_id[:13]) == 0
    assert read_sentinel(cd).event_id == pending[1].event_id


def test_a_prefix_of_several_events_is_refused_with_them():
    from types import SimpleNamespace

    from inspector.core.replay.errors import BadInputError
    from inspector.core.replay.plan import Scope, _named_events

    events = [SimpleNamespace(event_id=i) for i in ("ab-1", "ab-2", "cd-3")]
    assert _named_events(Scope("until", "cd"), events) == Scope("until", "cd-3")
    assert _named_events(Scope("park", park="#1"), events) == Scope("park", park="ab-2")
    assert _named_events(Scope("until", "zz"), events) == Scope("until", "zz")  # none: the plan says so
    with pytest.raises(BadInputError, match=r"'ab' names 2 events \(#0 ab-1, #1 ab-2\): give more of the id"):
        _named_events(Scope("until", "ab"), events)
