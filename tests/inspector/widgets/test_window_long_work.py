"""Long work in the window shows its progress and can be cancelled (issue 27 item 10): the History
tab's build, in the status bar with Cancel (the comparison's is tests/inspector/controllers/
test_compare_progress.py; the replay plan's, test_replay_planning_progress.py)."""

from __future__ import annotations

import threading

import pytest

from inspector.controllers.history import CANCELLED_TEXT
from journal.history import JournalHistory
from tests.inspector.widgets.window_fixtures import (  # noqa: F401
    WAIT_MS,
    inspector_window,
    make_inspector_window,
)

pytestmark = pytest.mark.gui


class _Gated(JournalHistory):
    def __init__(self, diagnosis, gate, started):
        super().__init__(diagnosis)
        self.gate, self.started = gate, started

    def entry(self, key, progress=None):
        self.started.set()
        assert self.gate.wait(WAIT_MS / 1000)
        return super().entry(key, progress=progress)


def test_the_history_build_shows_progress_and_its_cancel_stops_it(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    window.session.show_character("healthy")
    gate, started = threading.Event(), threading.Event()
    window.context.history._make_history = lambda d: _Gated(d, gate, started)
    window.detail.setCurrentWidget(window.history_panel)
    tl = window.session.shown_timeline()
    ref = next(i for i, ev in enumerate(tl.events) if ev.entry is not None)
    with qtbot.waitSignal(window.context.history.building, timeout=WAIT_MS):
        assert window.select_ref(ref)
    assert started.wait(WAIT_MS / 1000)
    job = window.history_job
    assert job.isVisible() and job.label.text() == "Building the entry's history…"
    with qtbot.assertNotEmitted(window.context.history.history_ready, wait=0):
        with qtbot.waitSignal(window.context.history.history_cleared, timeout=WAIT_MS) as cleared:
            job.cancel_button.click()
        gate.set()
        qtbot.waitUntil(lambda: not job.isVisible(), timeout=WAIT_MS)
    assert cleared.args == [CANCELLED_TEXT]
    qtbot.waitUntil(lambda: not window.session.busy, timeout=WAIT_MS)
