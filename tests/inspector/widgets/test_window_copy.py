"""Selecting several rows and copying them (issue 16 item 16): TSV and JSON on the clipboard, the
rows' right-click menu, big selections in the background, and nothing written in the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication

from inspector.controllers import export as export_controller
from inspector.core.export import COL_STATE, COLUMNS
from inspector.core.filtering import DAMAGED_TYPE
from inspector.core.replay.flow import Scope
from tests.inspector.widgets.folders_for_gui import SECRET, two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui

Select = QItemSelectionModel.SelectionFlag


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    inspector_window.show()
    qtbot.waitExposed(inspector_window)
    open_and_wait(qtbot, inspector_window, root)
    before = tree_hashes(root)
    yield inspector_window
    assert tree_hashes(root) == before  # copying reads; it never writes in the folder


def _select(window, first: int, last: int, flags=Select.ClearAndSelect) -> None:
    model = window.session.timeline_model
    selection = QItemSelection(model.index(first, 0), model.index(last, len(COLUMNS) - 1))
    window.timeline.selectionModel().select(selection, flags | Select.Rows)


def _clipboard() -> str:
    return QApplication.clipboard().text()


def _shown_header(window) -> list[str]:
    header = window.timeline.horizontalHeader()
    logical = [header.logicalIndex(v) for v in range(header.count())]
    return [COLUMNS[c] for c in logical if not header.isSectionHidden(c)]


def test_ctrl_c_copies_the_selected_rows_as_tsv_in_the_columns_shown(qtbot, loaded):
    view = loaded.timeline
    _select(loaded, 0, 1)
    _select(loaded, 5, 5, Select.Select)  # Ctrl-click adds a row
    loaded.row_actions.copy_action.trigger()
    lines = _clipboard().splitlines()
    assert lines[0].split("\t") == _shown_header(loaded) == ["#", "Type", "Entry", "State", "Summary", "Time"]
    assert [line.split("\t")[0] for line in lines[1:]] == ["0", "1", "5"]
    view.horizontalHeader().setSectionHidden(COL_STATE, True)
    view.horizontalHeader().moveSection(view.horizontalHeader().visualIndex(COL_STATE), 0)
    loaded.row_actions.copy_action.trigger()
    assert _clipboard().splitlines()[0].split("\t") == ["#", "Type", "Entry", "Summary", "Time"]
    # The key itself, in the timeline: the table's own Ctrl+C (one cell) gives way to the rows'.
    QApplication.clipboard().clear()
    loaded.activateWindow()
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert _clipboard().splitlines()[0].startswith("#\tType")


def test_the_current_row_still_drives_the_detail_pane(loaded):
    view, model = loaded.timeline, loaded.session.timeline_model
    view.setCurrentIndex(model.index(3, 0))
    _select(loaded, 7, 9, Select.Select)
    assert view.currentIndex().row() == 3
    assert loaded.selected_ref() == model.ref_at(3)
    assert model.row_at(3).event_id in loaded.detail.event_detail.header.text()
    assert len(view.selectionModel().selectedRows()) == 4


def test_ctrl_a_and_copy_as_json_put_the_records_on_the_clipboard(loaded):
    loaded.timeline.selectAll()
    loaded.row_actions.copy_json_action.trigger()
    records = json.loads(_clipboard())
    journal = (Path(loaded.session.timeline().path) / "events.ndjson").read_bytes().splitlines()
    assert records == [json.loads(line) for line in journal]
    assert "Copied 32 rows as JSON." in loaded.statusBar().currentMessage()


def test_copies_are_redacted_when_the_window_is(loaded):
    loaded.session.show_character("bob")
    loaded.timeline.selectAll()
    loaded.row_actions.copy_json_action.trigger()
    assert SECRET in _clipboard()  # the test can fail
    loaded.set_redact(True)
    for action in (loaded.row_actions.copy_json_action, loaded.row_actions.copy_action):
        action.trigger()
        assert SECRET not in _clipboard() and "‹" in _clipboard()


def test_a_big_selection_is_copied_in_the_background_up_to_the_cap(qtbot, loaded, monkeypatch):
    monkeypatch.setattr(export_controller, "INLINE_COPY_ROWS", 2)
    monkeypatch.setattr(export_controller, "COPY_LIMIT", 5)
    loaded.timeline.selectAll()
    exporter = loaded.context.exporter
    with qtbot.waitSignal(exporter.started) as began, qtbot.waitSignal(exporter.finished, timeout=WAIT_MS) as blocker:
        loaded.row_actions.copy_action.trigger()
    assert began.args == ["Copying 5 rows…"]  # in a worker, with the status bar's progress
    assert "first 5 of 32 rows" in blocker.args[0] and "Export" in blocker.args[0]
    assert len(_clipboard().splitlines()) == 1 + 5
    assert blocker.args[0] in loaded.statusBar().currentMessage()
    assert loaded.row_actions.indicator.isHidden()


def test_the_rows_menu_offers_copy_filters_views_replay_and_bookmark(qtbot, loaded, monkeypatch):
    model = loaded.session.timeline_model
    actions = loaded.row_actions
    pos = 0
    row = model.row_at(pos)
    menu = actions.row_menu(pos)
    texts = [a.text().split("\t")[0] for a in menu.actions() if not a.isSeparator()]
    assert texts == [
        "&Copy rows",
        "Copy as &JSON",
        "Copy event &id",
        f"Filter to this type ({row.type})",
        f"Filter to this entry ({row.entry})",
        "Show in Views",
        "Replay up to here…",
        "Bookmark",
    ]
    loaded.timeline.setCurrentIndex(model.index(pos, 0))
    actions.copy_id_action.trigger()
    assert _clipboard() == row.event_id

    started = []
    monkeypatch.setattr(loaded.context.replay, "start_replay", lambda scope=None: started.append(scope))
    _action(menu, "Replay up to here").trigger()
    assert started == [Scope("until", row.event_id)]

    _action(menu, "Bookmark").trigger()
    assert loaded.context.bookmarks.is_bookmarked(model.ref_at(pos))
    assert _action(actions.row_menu(pos), "Remove bookmark") is not None

    _action(menu, "Show in Views").trigger()
    assert loaded.detail.currentWidget() is loaded.detail.views

    _action(menu, "Filter to this type").trigger()
    assert loaded.filter_bar.types.selected() == {row.type}
    qtbot.waitUntil(lambda: not loaded.session.busy)
    assert {model.row_at(p).type for p in range(model.rowCount())} == {row.type}
    assert model.rowCount() < 32

    loaded.filter_bar.clear()
    loaded.filter_bar.emit_filter()
    entry_menu = actions.row_menu(model.position_of(3))
    _action(entry_menu, "Filter to this entry").trigger()
    entry = model.row_at(0).entry
    assert loaded.filter_bar.entry.text() == entry
    assert all(model.row_at(p).entry == entry for p in range(model.rowCount()))


def test_a_damaged_row_filters_to_damaged_lines_and_has_no_replay(tmp_path, qtbot, inspector_window):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    with open(root / "alice" / "events.ndjson", "ab") as fh:
        fh.write(b"not json at all\n")
    open_and_wait(qtbot, inspector_window, root)
    model = inspector_window.session.timeline_model
    pos = model.rowCount() - 1
    menu = inspector_window.row_actions.row_menu(pos)
    assert not _action(menu, "Replay up to here").isEnabled()
    assert not _action(menu, "Bookmark").isEnabled() and not _action(menu, "Show in Views").isEnabled()
    _action(menu, "Filter to this type").trigger()
    assert inspector_window.filter_bar.types.selected() == {DAMAGED_TYPE}
    assert model.rowCount() == 1


def _action(menu, prefix: str):
    return next((a for a in menu.actions() if a.text().startswith(prefix)), None)
