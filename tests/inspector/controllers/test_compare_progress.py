"""File ▸ Compare with shows its progress and stops on Cancel between its steps (issue 27 item 10);
before, Cancel waited for the whole comparison and only then dropped it."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from inspector.controllers import support as support_module
from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.session import SessionController
from inspector.controllers.support import COMPARE_STEPS, SupportController
from journal import fixtures as folders

WAIT_MS = 20_000


@pytest.fixture(autouse=True)
def _no_real_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


@pytest.fixture
def opened(qtbot, tmp_path):
    built = folders.pending_tail(tmp_path / "memory")
    other = tmp_path / "other"
    shutil.copytree(tmp_path / "memory", other)
    dispatcher = GuiDispatcher()
    session = SessionController(dispatcher, watch=False)
    with qtbot.waitSignal(session.loaded, timeout=WAIT_MS):
        assert session.open_path(built.path)
    controller = SupportController(session, dispatcher)
    yield controller, other / built.path.name
    controller.shutdown()
    session.close()


def test_a_comparison_reports_each_step(qtbot, opened):
    controller, other = opened
    seen = []
    controller.progress.connect(lambda done, total: seen.append((done, total)))
    with qtbot.waitSignal(controller.compared, timeout=WAIT_MS):
        assert controller.compare_with(other)
    total = len(COMPARE_STEPS)
    assert seen == [(done, total) for done in range(total + 1)]


def test_cancel_stops_a_comparison_at_its_next_step(qtbot, opened, monkeypatch):
    controller, other = opened
    gate, comparing = threading.Event(), threading.Event()
    listed = []
    real_compare, real_rows = support_module.compare_sides, support_module.aligned_events

    def slow_compare(a, b):
        comparing.set()
        assert gate.wait(WAIT_MS / 1000)
        return real_compare(a, b)

    def rows(*args, **kwargs):
        listed.append(args[0])
        return real_rows(*args, **kwargs)

    monkeypatch.setattr(support_module, "compare_sides", slow_compare)
    monkeypatch.setattr(support_module, "aligned_events", rows)
    with qtbot.assertNotEmitted(controller.compared, wait=0):
        assert controller.compare_with(other)
        assert comparing.wait(WAIT_MS / 1000)
        with qtbot.waitSignal(controller.cancelled, timeout=WAIT_MS):
            controller.cancel()
            gate.set()
    assert listed == []  # stopped after the comparison step, before listing any event
    assert not controller.busy
