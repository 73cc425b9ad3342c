"""Hostile backups against ``restore``: it trusts nothing in a backup that it was not told.

Every file inside a backup folder can be forged: the manifest (its ``source`` above all), the
copy, the report. Restore writes only into a folder named from outside the backup: ``--to DIR``,
or the folder the index of backups (in the app's own data folder) recorded when the backup was
taken, and only while the manifest still has the SHA-256 recorded there. That folder must still be
a character folder. Every refusal here leaves every file of every folder byte-for-byte as it was.

Backups (folders 0700, files 0600) are private whatever the umask.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core import replay as gr
from inspector.core.prompter import HeadlessPrompter
from inspector.core.replay import BadInputError, ReplayRequest
from journal.views import REFLECTIONS
from tests.inspector.replay_cases import CHARACTER, build_case, hash_tree


@pytest.fixture(autouse=True)
def _private_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Never the real launcher lock, data folder or index of backups."""
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """Alice, replayed (so a backup of her exists), and Bob, another character folder nearby."""
    root = tmp_path / "memory"
    root.mkdir()
    alice = build_case(root, "pending_tail")
    other = tmp_path / "other-memory"
    other.mkdir()
    bob = build_case(other, "healthy")
    bob = bob.rename(other / "Bob")
    (bob / "only-bob-has-this.txt").write_text("Bob's own file")
    backups = tmp_path / "backups"
    run = gr.run_guarded_replay(ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    assert run.status == "applied" and run.outcome.backup is not None
    return {"root": root, "alice": alice, "bob": bob, "backups": backups, "backup": run.outcome.backup.path}


def _restore(backup: Path, *extra: str) -> int:
    return main(["restore", str(backup), "--yes", *extra])


def _restore_to(backup: Path, to: Path | None) -> int:
    """``memory-inspector restore BACKUP --yes [--to DIR]``."""
    return main(["restore", str(backup), "--yes", *([] if to is None else ["--to", str(to)])])


def _rewrite_manifest(backup: Path, **changes: object) -> None:
    path = backup / gr.MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(changes)
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """No help from the umask: whatever is private is private because it was created so."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


# -- the manifest's "source" is never a target ----------------------------------------------------


def test_an_edited_source_is_refused_and_that_folder_is_byte_for_byte_unchanged(world, capsys):
    bob, alice = world["bob"], world["alice"]
    _rewrite_manifest(world["backup"], source=str(bob))
    bob_before, alice_before = hash_tree(bob), hash_tree(alice)
    assert _restore(world["backup"]) == 1
    out = capsys.readouterr().out
    assert "edited or replaced" in out and "restore refuses" in out
    assert hash_tree(bob) == bob_before and (bob / "only-bob-has-this.txt").read_text() == "Bob's own file"
    assert hash_tree(alice) == alice_before


def test_a_forged_backup_consistent_with_itself_is_refused_by_the_index(world, capsys):
    """Files, sizes and hashes re-done to agree with each other: only the index can tell."""
    backup, bob = world["backup"], world["bob"]
    forged = b"[]"
    (backup / "files" / REFLECTIONS).write_bytes(forged)
    manifest = json.loads((backup / gr.MANIFEST_NAME).read_text(encoding="utf-8"))
    for f in manifest["files"]:
        if f["path"] == REFLECTIONS:
            f["sha256"], f["size"] = hashlib.sha256(forged).hexdigest(), len(forged)
    manifest["source"] = str(bob)
    (backup / gr.MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    assert gr.verify_backup(gr.load_backup(backup)) == []  # it agrees with itself
    bob_before, alice_before = hash_tree(bob), hash_tree(world["alice"])
    rp = gr.plan_restore(backup)
    assert rp.refusal is not None and not rp.ok and rp.target is None
    assert gr.restore_target(gr.load_backup(backup)).code == "manifest_changed"
    assert _restore(backup) == 1
    assert "SHA-256 differs" in capsys.readouterr().out
    # Naming a folder does not launder a manifest the index knows to be different.
    assert _restore_to(backup, world["alice"]) == 1
    assert hash_tree(bob) == bob_before and hash_tree(world["alice"]) == alice_before


def test_a_forged_report_changes_nothing_about_where_restore_writes(world):
    backup, alice, bob = world["backup"], world["alice"], world["bob"]
    report = json.loads((backup / gr.REPORT_NAME).read_text(encoding="utf-8"))
    report["folder"] = str(bob)
    report["outcome"]["status"] = "nothing_to_do"
    (backup / gr.REPORT_NAME).write_text(json.dumps(report), encoding="utf-8")
    bob_before = hash_tree(bob)
    rp = gr.plan_restore(backup)
    assert rp.target == alice.resolve() and rp.via == "index"
    assert _restore(backup) == 0
    assert hash_tree(alice) == gr.load_backup(backup).hashes()
    assert hash_tree(bob) == bob_before


# -- not in the index -----------------------------------------------------------------------------


def test_a_copy_of_an_indexed_backup_is_the_same_backup(world, tmp_path):
    """The index names a backup by its manifest's hash too (a backups folder that was moved): a
    byte-identical copy goes back where the original would, and nowhere else."""
    copy = tmp_path / "usb" / "copy"
    shutil.copytree(world["backup"], copy)
    rp = gr.plan_restore(copy)
    assert rp.ok and rp.via == "index" and rp.target == world["alice"].resolve()


def test_a_backup_missing_from_the_index_needs_to_and_says_so(world, tmp_path, capsys):
    alice, bob = world["alice"], world["bob"]
    stray = tmp_path / "usb" / "stray"
    shutil.copytree(world["backup"], stray)
    _rewrite_manifest(stray, source=str(bob))  # a stray backup may say anything
    before = {"alice": hash_tree(alice), "bob": hash_tree(bob)}
    assert _restore(stray) == 1
    out = capsys.readouterr().out
    assert "not in the index of backups" in out and "pass --to DIR" in out
    assert "Into: (no folder" in out
    assert {"alice": hash_tree(alice), "bob": hash_tree(bob)} == before


def test_without_an_index_every_restore_without_to_is_refused(world, capsys):
    index = gr.default_index_path()
    index.unlink()
    before = hash_tree(world["alice"])
    assert _restore(world["backup"]) == 1
    out = capsys.readouterr().out
    assert "is not in the index of backups" in out and "which does not exist yet" in out
    assert hash_tree(world["alice"]) == before


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"schema": 2, "backups": []}', b"[1, 2]"])
def test_a_corrupt_index_refuses_with_a_clear_message_and_never_crashes(world, capsys, garbage):
    index = gr.default_index_path()
    index.write_bytes(garbage)
    before = hash_tree(world["alice"])
    assert _restore(world["backup"]) == 1
    out = capsys.readouterr().out
    assert "the index of backups" in out and "is unusable" in out and "--to" in out
    assert hash_tree(world["alice"]) == before
    listed = gr.list_backups(world["backups"], CHARACTER)
    assert [b.target.code for b in listed] == ["index_unreadable"]


def test_a_corrupt_index_is_kept_aside_when_the_next_backup_is_recorded(world):
    index = gr.default_index_path()
    index.write_bytes(b"{not json")
    backup = gr.create_backup(world["alice"], world["backups"])
    (aside,) = index.parent.glob(f"{index.name}.corrupt-*")
    assert aside.read_bytes() == b"{not json"
    assert [e.path for e in gr.read_index().entries] == [backup.path.resolve()]


# -- --to -----------------------------------------------------------------------------------------


def test_to_a_character_folder_restores_there(world, tmp_path, capsys):
    stray = tmp_path / "usb" / "stray"
    shutil.copytree(world["backup"], stray)
    gr.default_index_path().unlink()  # nothing vouches for it: only --to names a folder
    expected = gr.load_backup(stray).hashes()
    assert _restore_to(stray, world["bob"]) == 0
    out = capsys.readouterr().out
    assert f"Into: {world['bob'].resolve()}  (the folder you named with --to)" in out
    assert "Note: the folder is named Bob; the backup is of Alice." in out
    assert hash_tree(world["bob"]) == expected  # Bob's own file left with the pre-restore backup


def test_to_is_resolved_and_shown_in_full(world, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(world["root"])  # a relative --to, as typed
    assert _restore_to(world["backup"], Path(CHARACTER)) == 0
    out = capsys.readouterr().out
    assert f"Into: {world['alice'].resolve()}  (the folder you named with --to)" in out


@pytest.mark.parametrize("kind", ["plain", "memory_root", "file", "missing_other_name", "inside_backup"])
def test_to_a_folder_that_is_not_a_character_folder_is_refused(world, tmp_path, capsys, kind):
    plain = tmp_path / "documents"
    plain.mkdir()
    (plain / "taxes.txt").write_text("important")
    to = {
        "plain": plain,
        "memory_root": world["root"],
        "file": plain / "taxes.txt",
        "missing_other_name": world["root"] / "Mallory",
        "inside_backup": world["backup"] / "files",
    }[kind]
    before = hash_tree(tmp_path)
    assert _restore_to(world["backup"], to) == 2
    err = capsys.readouterr().err
    assert err.startswith("memory-inspector restore: ") and err.count("\n") == 1
    if kind == "memory_root":
        assert f"did you mean {world['alice']}" in err
    assert hash_tree(tmp_path) == before
    assert not (world["root"] / "Mallory").exists()


def test_an_empty_or_missing_folder_named_after_the_character_is_accepted(world, tmp_path):
    fresh = tmp_path / "fresh" / CHARACTER
    fresh.parent.mkdir()
    assert _restore_to(world["backup"], fresh) == 0  # missing: created
    assert hash_tree(fresh) == gr.load_backup(world["backup"]).hashes()
    empty = tmp_path / "empty" / CHARACTER
    empty.mkdir(parents=True)
    assert _restore_to(world["backup"], empty) == 0
    assert hash_tree(empty) == gr.load_backup(world["backup"]).hashes()


# -- the recorded folder must still be a character folder -----------------------------------------


def test_a_recorded_folder_replaced_by_a_link_is_refused(world, tmp_path):
    alice, bob = world["alice"], world["bob"]
    shutil.move(alice, tmp_path / "alice-moved")
    alice.symlink_to(bob, target_is_directory=True)
    before = hash_tree(bob)
    with pytest.raises(BadInputError, match="now a link"):
        gr.plan_restore(world["backup"])
    assert _restore(world["backup"]) == 2
    assert hash_tree(bob) == before


def test_a_recorded_folder_that_is_no_longer_a_character_folder_is_refused(world):
    alice = world["alice"]
    shutil.rmtree(alice)
    alice.mkdir()
    (alice / "notes.txt").write_text("someone else's folder now")
    assert _restore(world["backup"]) == 2
    assert (alice / "notes.txt").read_text() == "someone else's folder now" and len(list(alice.iterdir())) == 1


def test_a_link_inside_the_folder_is_not_written_through(world, tmp_path):
    alice = world["alice"]
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(alice / "reflection_archive")
    (alice / "reflection_archive").symlink_to(outside, target_is_directory=True)
    before = hash_tree(alice)
    rp = gr.plan_restore(world["backup"])
    assert rp.refusal is not None and "is a link" in rp.refusal
    assert _restore(world["backup"]) == 1
    assert list(outside.iterdir()) == [] and hash_tree(alice) == before


# -- private modes --------------------------------------------------------------------------------


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


def test_backup_folders_are_0700_and_files_0600_whatever_the_umask(tmp_path, umask_zero):
    root = tmp_path / "memory"
    root.mkdir()
    cd = build_case(root, "pending_tail")
    backups = tmp_path / "deep" / "backups"  # created by the backup, with its parent
    backup = gr.create_backup(cd, backups)
    folders = [backups.parent, backups, backups / CHARACTER, backup.path]
    folders += [p for p in backup.path.rglob("*") if p.is_dir()]
    files = [p for p in backup.path.rglob("*") if p.is_file()]
    assert len(files) == len(backup.files) + 1  # the copy and the manifest
    assert {str(p): _mode(p) for p in folders} == {str(p): 0o700 for p in folders}
    assert {str(p): _mode(p) for p in files} == {str(p): 0o600 for p in files}
    index = gr.default_index_path()
    assert _mode(index) == 0o600 and _mode(index.parent) == 0o700


def test_an_existing_backup_folder_keeps_its_mode(tmp_path, umask_zero):
    root = tmp_path / "memory"
    root.mkdir()
    cd = build_case(root, "healthy")
    backups = tmp_path / "mine"
    backups.mkdir(mode=0o755)
    os.chmod(backups, 0o755)
    backup = gr.create_backup(cd, backups)
    assert _mode(backups) == 0o755 and _mode(backup.path) == 0o700 and _mode(backups / CHARACTER) == 0o700


def test_replay_reports_and_pre_restore_backups_are_private(world, umask_zero):
    report = world["backup"] / gr.REPORT_NAME
    assert _mode(world["backup"]) == 0o700 and _mode(report) == 0o600
    outcome = gr.run_guarded_restore(world["backup"], HeadlessPrompter(True)).outcome
    assert outcome.status == "restored" and outcome.pre_restore is not None
    pre = outcome.pre_restore.path
    assert _mode(pre) == 0o700 and _mode(pre / gr.REPORT_NAME) == 0o600
    assert all(_mode(p) == (0o700 if p.is_dir() else 0o600) for p in pre.rglob("*"))
