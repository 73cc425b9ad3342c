"""Progress and Cancel while a replay is planned (issue 28): the plan reports its read of the
journal, in bytes, through the flow's :class:`~inspector.core.replay.flow.Control`, and a terminal
shows it with ``check``'s meter; a cancel stops the plan with nothing written (exit 1)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from inspector.cli import main
from inspector.core import output
from inspector.core import replay as gr
from inspector.core.prompter import HeadlessPrompter
from inspector.core.replay import ReplayRequest
from inspector.core.replay.flow import Control, Work
from inspector.replay_cmd import TerminalProgress
from journal.diagnosis import scan as scan_module
from journal.events import JOURNAL_NAME
from journal.log import EventLog
from tests.inspector.replay_cases import CHARACTER, build_case, hash_tree

pytestmark = pytest.mark.usefixtures("replay_env")


def _bigger(root: Any) -> Any:
    """A pending tail behind a few hundred more events, so that the read reports progress."""
    cd = build_case(root, "pending_tail")
    log = EventLog(root)
    for i in range(300):
        log.append(CHARACTER, "reflection.evidence_updated", {"reflection_id": f"ref_{i:016x}", "reinforcement": 1.0})
    return cd


def test_the_plan_reports_its_read_of_the_journal_then_the_apply_its_events(root, backups, monkeypatch):
    cd = _bigger(root)
    monkeypatch.setattr(scan_module, "REPORT_EVERY", 4096)
    size = (cd / JOURNAL_NAME).stat().st_size
    seen: list[tuple[str, int, int]] = []
    units: list[str] = []

    def begin(work: Work) -> None:
        units.append(work.unit)

    control = Control(lambda: True, lambda done, total: seen.append((units[-1], done, total)), begin)
    request = ReplayRequest(root, CHARACTER, backup_root=backups)
    run = gr.run_guarded_replay(request, HeadlessPrompter(True), control=control)
    assert run.status in ("applied", "stopped")
    assert units == ["bytes", "events"]
    read = [(done, total) for unit, done, total in seen if unit == "bytes"]
    assert len(read) >= 3 and all(total == size for _d, total in read)
    assert [d for d, _t in read] == sorted(d for d, _t in read) and read[-1][0] < size
    assert [unit for unit, _d, _t in seen if unit == "events"]


def test_a_cancel_while_planning_stops_the_plan_and_writes_nothing(root, backups, monkeypatch):
    cd = _bigger(root)
    monkeypatch.setattr(scan_module, "REPORT_EVERY", 4096)
    before = hash_tree(cd)
    asked: list[int] = []

    def should_continue() -> bool:
        asked.append(1)
        return len(asked) < 2  # cancelled during the read of the journal

    control = Control(should_continue, lambda done, total: None)
    request = ReplayRequest(root, CHARACTER, backup_root=backups)
    run = gr.run_guarded_replay(request, HeadlessPrompter(True), control=control)
    assert run.status == "cancelled" and run.exit_code == 1 and run.plans == [] and run.outcomes == []
    assert run.lines == ["cancelled: planning was cancelled; nothing was written"]
    assert hash_tree(cd) == before and not backups.exists()


def test_the_terminal_shows_the_plans_read_with_checks_meter_and_clears_it(monkeypatch):
    monkeypatch.setattr(output, "METER_AFTER", 0.0)
    stream = io.StringIO()
    progress = TerminalProgress(stream, tty=True)
    plan = Work("Planning: reading the journal…", lambda c: None, total=400 << 20, cancellable=True, unit="bytes")
    progress.begin(plan)
    progress(180 << 20, 400 << 20)
    progress.end(plan)
    text = stream.getvalue()
    assert "memory-inspector replay: planning, reading the journal 45% · 180 of 400 MiB" in text
    assert text.endswith("\r")  # the line is blanked before the plan is printed
    apply = Work("Backing up and applying…", lambda c: None, total=2, cancellable=True)
    progress.begin(apply)
    progress(1, 2)
    assert stream.getvalue().endswith("\rmemory-inspector replay: applying 50% · 1 of 2 events")
    progress.end(apply)
    assert stream.getvalue().endswith("\r")  # blanked before the result is printed


def test_replay_dry_run_on_a_terminal_that_is_not_one_prints_no_meter(root, capsys):
    _bigger(root)
    assert main(["replay", str(root), "--character", CHARACTER, "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "reading the journal" not in err
