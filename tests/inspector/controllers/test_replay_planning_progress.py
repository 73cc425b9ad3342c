"""The window's plan job reports progress while the plan reads the journal, and its Cancel stops
the plan with nothing written (issue 28)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from PySide6.QtWidgets import QMainWindow, QPushButton

from inspector.controllers.replay import install_replay_actions
from inspector.core.prompter import HeadlessPrompter
from inspector.core.replay import flow as flow_module
from inspector.core.replay.errors import PlanningCancelledError
from tests.inspector.replay_cases import CHARACTER, build_case, hash_tree

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]


def test_the_plan_shows_its_progress_in_the_window_and_cancel_stops_it(qtbot, tmp_path, monkeypatch):
    root = tmp_path / "memory"
    root.mkdir()
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    reported, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def plan_that_reports(target: Any, scope: Any, **kwargs: Any) -> Any:
        kwargs["on_progress"](50 << 20, 200 << 20)  # 50 of 200 MiB read
        reported.set()
        release.wait(30)  # the test looks at the dialog and presses Cancel meanwhile
        seen.append(kwargs["should_continue"]())
        raise PlanningCancelledError("planning was cancelled; nothing was written")

    monkeypatch.setattr(flow_module, "make_plan", plan_that_reports)
    window = QMainWindow()
    qtbot.addWidget(window)
    c = install_replay_actions(
        window, None, lambda: (str(root), CHARACTER), prompter=HeadlessPrompter(True), backup_root=tmp_path / "b"
    )
    with qtbot.waitSignal(c.finished, timeout=30_000) as blocker:
        c.replay_action.trigger()
        qtbot.waitUntil(lambda: c.progress_dialog is not None and "25%" in c.progress_dialog.labelText(), timeout=9000)
        dialog = c.progress_dialog
        assert dialog is not None and dialog.isVisible()
        assert dialog.maximum() == 100 and dialog.value() == 25
        assert "reading the journal" in dialog.labelText() and "50 of 200 MiB" in dialog.labelText()
        (button,) = dialog.findChildren(QPushButton)
        assert button.text() == "Cancel"
        button.click()
        release.set()
    run = blocker.args[0]
    assert seen == [False]
    assert run.status == "cancelled" and "nothing was written" in run.message and run.outcomes == []
    assert c.progress_dialog is None and not c.busy
    assert hash_tree(cd) == before
