"""Contract: the command line's driver and the window's controller drive the one guarded-replay
flow, so every scenario asks the same questions in the same order and ends the same way.

Each scenario is built twice, in two roots (replay writes), and run once through each driver with
the same headless answers. Compared: the keys of the questions asked, the run's status and exit
code, and what was applied (by position and type, since each build has its own event ids).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.controllers.replay import ReplayController
from inspector.core import replay as gr
from inspector.core.prompter import ASK_APPLY, ASK_RESTORE, HeadlessPrompter
from inspector.core.replay import ReplayRequest, RestoreRequest, Scope
from journal.fixtures import server_lock_held, zip_export
from journal.reader import read_journal
from journal.repair import DAMAGED_NAME
from tests.inspector.replay_cases import CHARACTER, FOLDER_CASES, build_case
from tests.journal import _repair_kit as kit

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]


def _summary(run, char_dir: Path | None) -> dict:
    """What both drivers must agree on: the run in words that do not depend on ids or paths."""
    out = {"status": run.status, "exit": run.exit_code}
    outcome = getattr(run, "outcome", None)
    plans = getattr(run, "plans", None)
    if plans is not None:
        out["scopes"] = [p.scope.kind for p in plans]
        out["planned"] = [[(e.index, e.type) for e in p.events] for p in plans]
    if outcome is not None and char_dir is not None and hasattr(outcome, "applied"):
        index = {e.event_id: i for i, e in enumerate(read_journal(char_dir / "events.ndjson").events)}
        out["applied"] = [index.get(e) for e in outcome.applied]
        out["parked"] = None if outcome.parked is None else outcome.parked.index
    repaired = getattr(outcome, "journal_repair", None)
    if repaired is not None:
        out["journal_repair"] = (repaired.rewritten, len(repaired.recorded), len(repaired.already))
    if outcome is not None and hasattr(outcome, "written"):
        out["written"] = sorted(outcome.written)
        out["removed"] = sorted(outcome.removed)
    return out


class _Both:
    """Runs a scenario through the synchronous driver (as ``replay``/``restore`` on a terminal
    do) and through the window's controller, each on its own copy."""

    def __init__(self, qtbot, tmp_path: Path, window) -> None:
        self.qtbot, self.tmp_path, self.window = qtbot, tmp_path, window

    def roots(self) -> tuple[Path, Path]:
        a, b = self.tmp_path / "cli" / "memory", self.tmp_path / "window" / "memory"
        a.mkdir(parents=True)
        b.mkdir(parents=True)
        return a, b

    def cli(self, request: ReplayRequest | RestoreRequest, answers) -> tuple[object, HeadlessPrompter]:
        prompter = HeadlessPrompter(answers)
        flow = gr.replay_flow(request) if isinstance(request, ReplayRequest) else gr.restore_flow(request)
        try:
            return gr.drive(flow, prompter), prompter
        except gr.GuardedReplayError as exc:
            return exc, prompter

    def gui(self, request: ReplayRequest | RestoreRequest, answers) -> tuple[object, HeadlessPrompter]:
        prompter = HeadlessPrompter(answers)
        target = (str(request.path), request.character) if isinstance(request, ReplayRequest) else None
        c = ReplayController(
            self.window,
            lambda: target,
            prompter=prompter,
            backup_root=request.backup_root,
            index_path=request.index_path,
        )
        try:
            with self.qtbot.waitSignal(c.finished, timeout=60_000) as blocker:
                if isinstance(request, ReplayRequest):
                    c.start_replay(request.scope)
                else:
                    c.start_restore(request.backup, dry_run=request.dry_run)
        finally:
            c.shutdown()
        run = blocker.args[0]
        if run is None:  # the flow raised bad input: the window told the person
            return gr.BadInputError(prompter.notes[-1]), prompter
        return run, prompter


@pytest.fixture
def both(qtbot, tmp_path):
    from PySide6.QtWidgets import QMainWindow

    w = QMainWindow()
    qtbot.addWidget(w)
    return _Both(qtbot, tmp_path, w)


def _compare(both: _Both, case: str, *, scope=None, answers=True, zipped=False, damage=None) -> list[str]:
    a, b = both.roots()
    results = []
    for root, drive in ((a, both.cli), (b, both.gui)):
        cd = build_case(root, case)
        if damage is not None:
            damage(cd)
        path = zip_export(root, root.parent / "export.zip") if zipped else root
        request = ReplayRequest(
            path,
            CHARACTER,
            scope=scope(cd) if callable(scope) else (scope or Scope()),
            backup_root=root.parent / "backups",
            index_path=root.parent / "index.json",
        )
        run, prompter = drive(request, answers)
        if isinstance(run, Exception):
            results.append((prompter.keys(), {"error": type(run).__name__}))
        else:
            results.append((prompter.keys(), _summary(run, cd)))
    (cli_keys, cli_run), (gui_keys, gui_run) = results
    assert cli_keys == gui_keys
    assert cli_run == gui_run
    return cli_keys


@pytest.mark.parametrize("case", FOLDER_CASES)
def test_every_folder_case_runs_the_same_through_both_drivers(both, case):
    keys = _compare(both, case)
    if case != "healthy" and case != "views_only":
        assert ASK_APPLY in keys or keys == []


@pytest.mark.parametrize("answer", [False, {ASK_APPLY: False, "recent_writes": True}])
def test_declining_is_the_same_through_both_drivers(both, answer):
    _compare(both, "pending_tail", answers=answer)


def test_repair_and_until_scopes_are_the_same_through_both_drivers(both):
    _compare(both, "archive_lost", scope=Scope("repair"))
    both.tmp_path = both.tmp_path / "until"
    both.tmp_path.mkdir()

    def second_pending(cd):
        plan = gr.make_plan(gr.target_of(cd.parent, cd.name))
        return Scope("until", plan.unapplied[1].event_id)

    _compare(both, "pending_tail", scope=second_pending)


def test_park_is_the_same_through_both_drivers(both):
    def park_held(cd):
        held = gr.make_plan(gr.target_of(cd.parent, cd.name)).block
        assert held is not None
        return Scope("park", park=held.event_id)

    _compare(both, "persona_drift", scope=park_held)


def test_a_zip_export_is_the_same_through_both_drivers(both):
    assert _compare(both, "pending_tail", zipped=True, answers=False) == ["extract_zip"]


def test_a_running_server_is_refused_the_same_through_both_drivers(both, tmp_path):
    with server_lock_held(tmp_path / "runtime"):
        assert _compare(both, "pending_tail") == []


@pytest.mark.parametrize("dry_run", [True, False])
def test_restore_and_its_dry_run_are_the_same_through_both_drivers(both, dry_run):
    a, b = both.roots()
    results = []
    for root, drive in ((a, both.cli), (b, both.gui)):
        build_case(root, "pending_tail")
        backups, index = root.parent / "backups", root.parent / "index.json"
        run = gr.run_guarded_replay(
            ReplayRequest(root, CHARACTER, backup_root=backups, index_path=index), HeadlessPrompter(True)
        )
        assert run.status == "applied"
        request = RestoreRequest(backup=run.outcome.backup.path, dry_run=dry_run, backup_root=backups, index_path=index)
        restored, prompter = drive(request, True)
        results.append((prompter.keys(), _summary(restored, None)))
    assert results[0] == results[1]
    keys, summary = results[0]
    assert keys == ([] if dry_run else [ASK_RESTORE])
    assert summary["status"] == ("planned" if dry_run else "restored") and summary["exit"] == 0


# -- the journal repair (issue 24) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "case,damage",
    [
        ("pending_tail", kit.glue_onto_torn_utf8),
        ("healthy", kit.torn_utf8_tail),
        ("pending_tail", kit.several),
        ("torn_tail", None),  # nothing to repair: an ASCII torn tail is damage that is UTF-8
    ],
)
def test_the_journal_repair_is_the_same_through_both_drivers(both, case, damage):
    keys = _compare(both, case, scope=Scope("repair_journal"), damage=damage)
    assert keys == (["recent_writes", ASK_APPLY] if damage is not None else [])  # the folder was just built
    for side in ("cli", "window"):
        cd = both.tmp_path / side / "memory" / CHARACTER
        data = (cd / "events.ndjson").read_bytes()
        data.decode("utf-8")
        assert not [d for d in read_journal(cd / "events.ndjson").defects if d.kind == "invalid_utf8"]
        assert (cd / DAMAGED_NAME).exists() == (damage is not None)


def test_declining_the_journal_repair_is_the_same_through_both_drivers(both):
    answers = {ASK_APPLY: False, "recent_writes": True}
    keys = _compare(
        both, "pending_tail", scope=Scope("repair_journal"), damage=kit.glue_onto_torn_utf8, answers=answers
    )
    assert keys == ["recent_writes", ASK_APPLY]
    for side in ("cli", "window"):
        assert not (both.tmp_path / side / "memory" / CHARACTER / DAMAGED_NAME).exists()


def test_the_journal_repair_of_a_zip_export_is_refused_the_same_through_both_drivers(both):
    keys = _compare(
        both, "pending_tail", scope=Scope("repair_journal"), damage=kit.glue_onto_torn_utf8, zipped=True, answers=False
    )
    assert keys == ["extract_zip"]


def test_the_journal_repair_under_a_running_server_is_refused_the_same_through_both_drivers(both, tmp_path):
    with server_lock_held(tmp_path / "runtime"):
        keys = _compare(both, "pending_tail", scope=Scope("repair_journal"), damage=kit.glue_onto_torn_utf8)
    assert keys == []
    for side in ("cli", "window"):
        assert not (both.tmp_path / side / "memory" / CHARACTER / DAMAGED_NAME).exists()
