"""The filter bar (issue 16 item 18): Types and States menus that stay open while you tick, with
"All" and "Only"; the time range and "go to time"; timestamps with the year at one precision."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from inspector.core.export import COL_TIME
from inspector.core.timestamps import format_ts, parse_time_input, ts_key
from inspector.widgets.filter_bar import TIME_TIP
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    inspector_window.show()
    qtbot.waitExposed(inspector_window)
    open_and_wait(qtbot, inspector_window, root)
    return inspector_window


def _rows(window) -> int:
    return window.session.timeline_model.rowCount()


def test_the_states_menu_stays_open_while_you_tick(qtbot, loaded):
    button = loaded.filter_bar.states
    menu = button.menu()
    menu.popup(button.mapToGlobal(QPoint(0, button.height())))
    qtbot.waitUntil(menu.isVisible)
    applied = button.actions_by_value()["applied"]
    with qtbot.waitSignal(button.changed):
        qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(applied).center())
    assert menu.isVisible() and not applied.isChecked()
    pending = button.actions_by_value()["pending"]
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(pending).center())
    assert menu.isVisible() and not pending.isChecked()  # a second tick in the same visit
    menu.setActiveAction(pending)
    qtbot.keyClick(menu, Qt.Key.Key_Space)
    assert menu.isVisible() and pending.isChecked()
    # Ctrl+click: only this one
    blocked = button.actions_by_value()["blocked"]
    qtbot.mouseClick(
        menu, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, menu.actionGeometry(blocked).center()
    )
    assert button.selected() == {"blocked"}
    menu.hide()
    loaded.filter_bar.emit_filter()
    assert _rows(loaded) == 1


def test_types_have_all_and_only(loaded):
    types = loaded.filter_bar.types
    only = next(a for a in types.only_menu.actions() if a.text() == "fact.added")
    only.trigger()
    assert types.selected() == {"fact.added"} and types.text() == "Types: fact.added"
    assert _rows(loaded) == 1
    types.all_action.trigger()
    assert types.selected() is None and _rows(loaded) == 32


def test_the_time_column_shows_the_year_at_one_precision(loaded):
    model = loaded.session.timeline_model
    tl = loaded.session.timeline()
    for pos in (0, 31):
        shown = model.index(pos, COL_TIME).data()
        assert shown == format_ts(tl.events[pos].ts) and shown[:4] == tl.events[pos].ts[:4]
        assert len(shown) == len("2026-04-23 12:00:00.000")


def test_the_time_range_filters_by_ts(qtbot, loaded):
    tl = loaded.session.timeline()
    bar = loaded.filter_bar
    since = format_ts(tl.events[20].ts)  # milliseconds: events in the same millisecond come too
    low = parse_time_input(since)
    expected = [i for i in range(len(tl.events)) if ts_key(tl.events[i].ts) >= low]
    assert 0 < len(expected) < 32
    with qtbot.waitSignal(bar.filter_changed):
        bar.time.set_range(since, "")
    assert [loaded.session.timeline_model.ref_at(p) for p in range(_rows(loaded))] == expected
    assert bar.time.isChecked() and since in bar.time.toolTip()
    assert "not in order" in TIME_TIP and "journal order" in bar.time.goto.toolTip()
    # A bad time tints the boxes and keeps the last valid filter.
    bar.time.set_range("tomorrow", "")
    bar.emit_filter()
    assert "not a time" in bar.time.since.toolTip() and bar.time.text() == "Time: invalid"
    assert _rows(loaded) == len(expected)
    bar.clear()
    bar.emit_filter()
    assert _rows(loaded) == 32 and not bar.time.isChecked()


def test_go_to_time_selects_the_first_row_at_or_after_it(qtbot, loaded):
    tl = loaded.session.timeline()
    bar = loaded.filter_bar
    target = tl.events[12].ts
    first = next(i for i in range(len(tl.events)) if ts_key(tl.events[i].ts) >= ts_key(target))
    bar.time.goto.setText(format_ts(target))
    bar.time.go_button.click()
    assert loaded.selected_ref() == first
    assert "journal order" in loaded.statusBar().currentMessage()
    bar.time.goto.setText("2999-01-01")
    bar.time.request_goto()
    assert loaded.selected_ref() == first and "No row shown" in loaded.statusBar().currentMessage()
    assert loaded.row_actions.goto_time_action.shortcut().toString() == "Ctrl+T"
