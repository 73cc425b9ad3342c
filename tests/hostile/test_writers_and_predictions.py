"""Hostile folders against the live writers and against the predictions of replay.

- The live writers (``record_and_save``, ``archive_reflection``, ``archive_persona_entry``) are
  confined to the character folder by the same rule as replay's stores, and refuse before
  anything is written.
- One lock per character folder per process, whichever ``EventLog`` object asks for it.
- ``check`` (the diagnosis) and the dry run (the guarded replay's plan) stop where the real
  :class:`~journal.reconcile.Reconciler` stops, for the same reason, on links leading out of the
  character folder and on folders where replay expects a file.
- ``check`` reports a character folder it cannot list, and the other characters.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from journal import EventLog
from journal import fixtures as folders
from journal.diagnosis import diagnose_character, diagnose_path
from journal.dryrun import dry_run
from journal.errors import JournalError
from journal.events import JOURNAL_NAME
from journal.reconcile import Reconciler
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import REFLECTIONS, load_view
from tests.helpers.other_user import TREE, require_other_user_runs_this_tree, run_python_as_other_user
from tests.journal._replay_kit import CHAR, make_character, persona_entry, persona_view, reflection

SHARD = "2026-05-01_0a1b2c3d.json"
DAY = date(2026, 5, 1)
REFUSED = "outside the character folder|not a file name inside the character folder"


@pytest.fixture(autouse=True)
def _private_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


def _world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A memory root with one character (a reflection, a persona entry) and a folder outside it."""
    root = tmp_path / "memory"
    cd = make_character(
        root, reflections=[reflection("ref_a")], persona=persona_view(persona_entry("prom_a", source="settings"))
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, cd, outside


# -- 1. live archive writers are confined like replay ------------------------------------------------


def _link_reflection_archive(cd: Path, outside: Path) -> None:
    os.symlink(outside, cd / REFLECTION_ARCHIVE)


def _link_persona_archive(cd: Path, outside: Path) -> None:
    os.symlink(outside, cd / PERSONA_ARCHIVE)


def _link_todays_shard(cd: Path, outside: Path) -> None:
    (cd / REFLECTION_ARCHIVE).mkdir()
    (outside / "shard.json").write_text("[]")
    os.symlink(outside / "shard.json", cd / REFLECTION_ARCHIVE / SHARD)


def _link_reflections_view(cd: Path, outside: Path) -> None:
    os.replace(cd / REFLECTIONS, outside / REFLECTIONS)
    os.symlink(outside / REFLECTIONS, cd / REFLECTIONS)


def _archive_reflection(log: EventLog) -> Any:
    return log.archive_reflection(CHAR, "ref_a", today=DAY)


def _archive_persona(log: EventLog) -> Any:
    return log.archive_persona_entry(CHAR, "master", "prom_a", today=DAY)


@pytest.mark.parametrize(
    ("link", "archive"),
    [
        pytest.param(_link_reflection_archive, _archive_reflection, id="reflection_archive-linked-outside"),
        pytest.param(_link_persona_archive, _archive_persona, id="persona_archive-linked-outside"),
        pytest.param(_link_todays_shard, _archive_reflection, id="todays-shard-linked-outside"),
        pytest.param(_link_reflections_view, _archive_reflection, id="reflections-view-linked-outside"),
    ],
)
def test_live_archive_writers_refuse_a_path_leading_out_of_the_character_folder_and_write_nothing(
    tmp_path: Path,
    link: Callable[[Path, Path], None],
    archive: Callable[[EventLog], Any],
) -> None:
    root, cd, outside = _world(tmp_path)
    link(cd, outside)
    before = folders.tree_snapshot(tmp_path)
    with pytest.raises(JournalError, match=REFUSED):
        archive(EventLog(root))
    assert folders.tree_snapshot(tmp_path) == before  # no event, no view change, no shard, anywhere
    assert not (cd / JOURNAL_NAME).exists()


# -- 2. record_and_save is confined ------------------------------------------------------------------


def _climbing(cd: Path, outside: Path) -> str:
    return "../x.json"


def _absolute(cd: Path, outside: Path) -> str:
    return str(outside / "x.json")


def _linked_outside(cd: Path, outside: Path) -> str:
    (outside / "x.json").write_text("[]")
    os.symlink(outside / "x.json", cd / "x.json")
    return "x.json"


def _linked_view_outside(cd: Path, outside: Path) -> str:
    _link_reflections_view(cd, outside)
    return REFLECTIONS


@pytest.mark.parametrize(
    "view",
    [
        pytest.param(_climbing, id="dot-dot"),
        pytest.param(_absolute, id="absolute"),
        pytest.param(_linked_outside, id="new-view-linked-outside"),
        pytest.param(_linked_view_outside, id="reflections-linked-outside"),
    ],
)
def test_record_and_save_refuses_a_view_outside_the_character_folder_before_writing_anything(
    tmp_path: Path, view: Callable[[Path, Path], str]
) -> None:
    root, cd, outside = _world(tmp_path)
    name = view(cd, outside)
    before = folders.tree_snapshot(tmp_path)

    def mutate(current: Any) -> Any:
        raise AssertionError("the mutation must not run")

    with pytest.raises(JournalError, match=REFUSED):
        EventLog(root).record_and_save(
            CHAR, "reflection.evidence_updated", {"reflection_id": "ref_a"}, mutate, view=name
        )
    assert folders.tree_snapshot(tmp_path) == before  # the event included
    assert not (cd / JOURNAL_NAME).exists()


# -- 3. one lock per character per process -----------------------------------------------------------


def test_two_event_logs_on_one_character_lose_no_update(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cd = make_character(root, reflections=[reflection("ref_a", user_fact_reinforce_count=0)])
    per_thread = 60
    errors: list[BaseException] = []

    def bump(view: list[Any]) -> None:
        view[0]["user_fact_reinforce_count"] += 1

    def writer(log: EventLog) -> None:
        try:
            for _ in range(per_thread):
                log.record_and_save(
                    CHAR, "reflection.evidence_updated", {"reflection_id": "ref_a"}, bump, view=REFLECTIONS
                )
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(EventLog(root),)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert load_view(cd / REFLECTIONS, list)[0]["user_fact_reinforce_count"] == 2 * per_thread


def test_a_fresh_event_log_for_the_reconciler_takes_the_writers_lock(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    make_character(root, reflections=[reflection("ref_a")])
    linked_root = tmp_path / "linked-memory"
    os.symlink(root, linked_root)
    writer = EventLog(root)
    writer.append(CHAR, "reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 2.0})
    assert EventLog(root).lock(CHAR) is writer.lock(CHAR)
    assert EventLog(linked_root).lock(CHAR) is writer.lock(CHAR)  # the resolved folder, not the spelling

    reports: list[Any] = []
    with writer.lock(CHAR):
        t = threading.Thread(target=lambda: reports.append(Reconciler(EventLog(root)).reconcile(CHAR)))
        t.start()
        t.join(timeout=0.3)
        assert t.is_alive() and reports == []  # waiting for the writer's lock
    t.join()
    assert reports and reports[0].complete and len(reports[0].applied) == 1


# -- 4. check and the replay plan predict the real replay ---------------------------------------------


def _view_linked_outside_the_root(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.pending_tail(root)
    _link_reflections_view(b.path, outside)
    return b.name, "corrupt_view"


def _view_linked_to_another_character(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.pending_tail(root)
    other = root / "other"
    other.mkdir()
    os.replace(b.path / REFLECTIONS, other / REFLECTIONS)
    os.symlink(Path("..") / "other" / REFLECTIONS, b.path / REFLECTIONS)
    return b.name, "corrupt_view"


def _archive_folder_linked_outside(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.corrupt_shard(root)
    archive = b.path / REFLECTION_ARCHIVE
    (archive / b.notes["shard"]).write_text("[]")
    shutil.move(archive, outside / REFLECTION_ARCHIVE)
    os.symlink(outside / REFLECTION_ARCHIVE, archive)
    return b.name, "corrupt_shard"


def _shard_linked_outside(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.corrupt_shard(root)
    shard = b.path / REFLECTION_ARCHIVE / b.notes["shard"]
    (outside / "shard.json").write_text("[]")
    shard.unlink()
    os.symlink(outside / "shard.json", shard)
    return b.name, "corrupt_shard"


def _view_is_a_folder(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.pending_tail(root)
    (b.path / REFLECTIONS).unlink()
    (b.path / REFLECTIONS).mkdir()
    return b.name, "handler_error"


def _shard_is_a_folder(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.corrupt_shard(root)
    shard = b.path / REFLECTION_ARCHIVE / b.notes["shard"]
    shard.unlink()
    shard.mkdir()
    return b.name, "handler_error"


def _archive_folder_is_a_file(root: Path, outside: Path) -> tuple[str, str]:
    b = folders.corrupt_shard(root)
    shutil.rmtree(b.path / REFLECTION_ARCHIVE)
    (b.path / REFLECTION_ARCHIVE).write_text("[]")
    return b.name, "handler_error"


LINKS = {
    _view_linked_outside_the_root,
    _view_linked_to_another_character,
    _archive_folder_linked_outside,
    _shard_linked_outside,
}


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(_view_linked_outside_the_root, id="view-linked-outside-the-root"),
        pytest.param(_view_linked_to_another_character, id="view-linked-to-another-character"),
        pytest.param(_archive_folder_linked_outside, id="archive-folder-linked-outside"),
        pytest.param(_shard_linked_outside, id="shard-linked-outside"),
        pytest.param(_view_is_a_folder, id="view-is-a-folder"),
        pytest.param(_shard_is_a_folder, id="shard-is-a-folder"),
        pytest.param(_archive_folder_is_a_file, id="archive-folder-is-a-file"),
    ],
)
def test_check_and_the_dry_run_stop_where_the_real_replay_stops(
    tmp_path: Path, build: Callable[[Path, Path], tuple[str, str]]
) -> None:
    root = tmp_path / "memory"
    outside = tmp_path / "outside"
    outside.mkdir()
    name, reason = build(root, outside)
    cd = root / name

    with diagnose_path(root, character=name) as checked:
        c = checked.characters[0]
    single = diagnose_character(cd, root=root)
    dry = dry_run(cd)
    real = Reconciler(EventLog(root)).reconcile(name)  # the reference, run last: it writes

    assert real.stopped is not None and real.stopped.reason == reason
    for got in (c, single):
        assert got.blocked is not None, [f.message for f in got.findings]
        assert (got.blocked.event_id, got.blocked.reason) == (real.stopped.event_id, reason)
        assert got.blocked_message == real.stopped.message
        if build in LINKS:
            assert "input.refused" in {f.code for f in got.findings}
    assert dry.report.stopped is not None
    assert (dry.report.stopped.event_id, dry.report.stopped.reason) == (real.stopped.event_id, reason)


# -- 5. a character folder that cannot be listed -----------------------------------------------------


@pytest.fixture
def shared_base() -> Iterator[Path]:
    """A temp folder another user can read (pytest's own is private to this user)."""
    base = Path(tempfile.mkdtemp(prefix="hostile-unlistable-"))
    os.chmod(base, 0o755)
    try:
        yield base
    finally:
        for dirpath, _dirs, _files in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_check_reports_an_unlistable_character_folder_and_the_others(shared_base: Path) -> None:
    root = shared_base / "memory"
    folders.healthy(root)
    locked = folders.healthy(root, "locked")
    (shared_base / "runtime").mkdir()
    for dirpath, _dirs, files in os.walk(shared_base):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(Path(dirpath) / f, 0o644)
    locked.path.chmod(0)

    # As nobody when we are root (root lists anything); skipped, with the reason, where nobody
    # cannot run this tree's code from here.
    proc = run_python_as_other_user(
        ["-m", "inspector", "check", str(root), "--json"],
        env={**os.environ, "NEKO_RUNTIME_STATE_DIR": str(shared_base / "runtime")},
        cwd=shared_base,
        reads=[root],
    )
    assert "Traceback" not in proc.stderr.decode(errors="replace"), proc.stderr.decode(errors="replace")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    by_name = {c["name"]: c for c in doc["characters"]}
    assert set(by_name) == {"healthy", "locked"}
    assert all(f["severity"] != "error" for f in by_name["healthy"]["findings"])
    assert by_name["healthy"]["counts"]["applied"] > 0  # really reported, not skipped
    errors = [f for f in by_name["locked"]["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errors] == ["journal.absent"]
    assert str(locked.path) in errors[0]["message"] and "cannot be listed" in errors[0]["message"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_the_other_user_guard_skips_code_from_outside_the_tree_and_unreadable_folders(shared_base: Path) -> None:
    """The guard of the test above is not a formality: a child that would import the package from
    anywhere but the tree under test, or could not read what the test needs, is not run."""
    env = {**os.environ, "PYTHONPATH": str(TREE), "PYTHONDONTWRITEBYTECODE": "1"}
    user = require_other_user_runs_this_tree(env=env, cwd=shared_base, reads=[shared_base])  # skips where it must
    elsewhere = shared_base / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    journal_init = (TREE / "journal" / "__init__.py").resolve()
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_other_user_runs_this_tree(env=env, cwd=shared_base, tree=elsewhere)
    assert skipped.value.msg == (
        f"user {user.name} running {sys.executable} imports journal from {journal_init}, "
        f"not this tree ({elsewhere.resolve()})"
    )
    private = shared_base / "private"
    private.mkdir(mode=0o700)
    private.chmod(0)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_other_user_runs_this_tree(env=env, cwd=shared_base, reads=[private])
    assert skipped.value.msg == f"user {user.name} cannot read {private}: PermissionError: Permission denied"


def test_record_and_save_refuses_to_replace_the_journals_own_files(tmp_path: Path) -> None:
    from journal import EventLog
    from journal.events import JOURNAL_NAME, SENTINEL_NAME
    from journal.outbox import OUTBOX_NAME

    log = EventLog(tmp_path)
    for name in (JOURNAL_NAME, SENTINEL_NAME, OUTBOX_NAME):
        with pytest.raises(ValueError, match="is not a view"):
            log.record_and_save("Alice", "reflection.evidence_updated", {"reflection_id": "r"}, lambda v: v, view=name)
    assert not (tmp_path / "Alice").exists()  # nothing written, not even the folder


def test_a_journal_or_sentinel_linked_out_of_the_folder_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from journal import EventLog
    from journal.errors import ViewCorruptError
    from journal.events import JOURNAL_NAME, SENTINEL_NAME

    outside = tmp_path / "outside"
    outside.mkdir()
    for name in (JOURNAL_NAME, SENTINEL_NAME):
        root = tmp_path / f"root-{name}"
        cd = root / "Alice"
        cd.mkdir(parents=True)
        (cd / "reflections.json").write_text('[{"id": "r", "reinforcement": 1.0}]')
        target = outside / name
        target.write_bytes(b"untouched\n")
        (cd / name).symlink_to(target)
        before = {p.name: p.read_bytes() for p in cd.iterdir() if not p.is_symlink()}
        with pytest.raises(ViewCorruptError, match="outside the character folder"):
            EventLog(root).record_and_save(
                "Alice", "reflection.evidence_updated", {"reflection_id": "r"}, lambda v: v, view="reflections.json"
            )
        assert target.read_bytes() == b"untouched\n"
        assert {p.name: p.read_bytes() for p in cd.iterdir() if not p.is_symlink()} == before
