"""The Chat tab (issue 26 item 5): the turns stored around the selected event, read in the
background from a private copy of time_indexed.db, redacted like every text, nothing written."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from journal import fixtures
from journal.events import JOURNAL_NAME
from journal.fixtures.chatdb import write_chat_db
from journal.layout import CHAT_DB
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


def _folder(root: Path) -> Path:
    b = fixtures.pending_tail(root)
    at = datetime.fromisoformat(json.loads((b.path / JOURNAL_NAME).read_text().splitlines()[9])["ts"])
    write_chat_db(
        b.path / CHAT_DB,
        [
            (at - timedelta(minutes=45), [("human", "too early")]),
            (at - timedelta(minutes=10), [("human", "what I said"), ("ai", "what it said")]),
            (at + timedelta(minutes=5), [("ai", "too late")]),
        ],
    )
    return b.path


def _show_chat(qtbot, window, ref: int) -> None:
    window.detail.setCurrentWidget(window.chat_panel)
    with qtbot.waitSignal(window.context.chat.chat_ready, timeout=WAIT_MS):
        window.select_ref(ref)


def test_the_chat_tab_shows_the_turns_before_the_selected_event(qtbot, inspector_window, root: Path) -> None:  # noqa: F811
    folder = _folder(root)
    before = tree_hashes(folder)
    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, folder)
    qtbot.waitUntil(lambda: window.detail.isTabVisible(window.detail.indexOf(window.chat_panel)), timeout=WAIT_MS)
    _show_chat(qtbot, window, 9)
    model = window.chat_panel.model
    assert [model.index(r, 2).data() for r in range(model.rowCount())] == ["what I said", "what it said"]
    assert [model.index(r, 1).data() for r in range(model.rowCount())] == ["human", "ai"]
    header = window.chat_panel.header.text()
    assert "2 turns" in header and "around event #9" in header and "Matched by time only" in header
    window.set_redact(True)
    shown = [model.index(r, 2).data() for r in range(model.rowCount())]
    assert all("said" not in text for text in shown) and all(text.startswith("‹") for text in shown)
    window.set_redact(False)
    assert tree_hashes(folder) == before


def test_without_a_db_the_tab_says_so(qtbot, inspector_window, root: Path) -> None:  # noqa: F811
    b = fixtures.pending_tail(root)
    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, b.path)
    assert not window.detail.isTabVisible(window.detail.indexOf(window.chat_panel))  # no db: no Chat tab
    window.detail.setCurrentWidget(window.chat_panel)
    with qtbot.waitSignal(window.context.chat.chat_cleared, timeout=WAIT_MS) as blocker:
        window.select_ref(9)
    assert "no time_indexed.db" in blocker.args[0] and "no time_indexed.db" in window.chat_panel.header.text()
    assert window.chat_panel.model.rowCount() == 0
