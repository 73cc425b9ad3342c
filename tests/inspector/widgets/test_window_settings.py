"""Settings (issue 16 item 21): the theme chosen in the View menu (no environment variable
needed, which still overrides), the font zoom of the tables and detail views (Ctrl+plus,
Ctrl+minus, Ctrl+0), File ▸ Clear recent; all kept in the context's QSettings. And every new
shortcut is listed in Help ▸ Keyboard shortcuts, none taken twice."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication

from inspector.controllers.appearance import THEME_KEY, ZOOM_KEY
from inspector.core.appearance import THEME_ENV, ZOOM_MAX, clamp_zoom, effective_theme
from inspector.models.colors import is_dark, state_color
from inspector.widgets.help_dialogs import shortcut_rows
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _keep_the_palette(monkeypatch):
    """The theme is the application's: every test leaves it as it found it."""
    monkeypatch.delenv(THEME_ENV, raising=False)
    app = QApplication.instance()
    before = QPalette(app.palette()) if app is not None else None
    yield
    if before is not None:
        app.setPalette(before)


def _settings(tmp_path):
    return QSettings(str(tmp_path / "config" / "layout.ini"), QSettings.Format.IniFormat)


def test_the_theme_is_chosen_in_the_view_menu_and_kept(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    window = make_inspector_window()
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    themes = window.settings_actions.theme_actions
    assert [a.text() for a in window.settings_actions.theme_menu.actions()] == ["&System", "&Light", "&Dark"]
    assert themes["system"].isChecked()
    themes["dark"].trigger()
    assert is_dark(QApplication.instance().palette())
    qtbot.waitUntil(lambda: is_dark(window.palette()))
    # the rows follow the theme: the window hands the model its new palette
    blocked = window.session.timeline_model.state_colors()["blocked"]
    assert blocked == state_color(window.palette(), "blocked") and blocked.lightness() < 110
    assert _settings(tmp_path).value(THEME_KEY) == "dark"
    window.close()
    QApplication.instance().setPalette(QPalette())
    again = make_inspector_window()  # the next start
    assert again.settings_actions.theme_actions["dark"].isChecked()
    assert is_dark(again.palette())
    again.settings_actions.theme_actions["light"].trigger()
    assert not is_dark(QApplication.instance().palette())
    assert _settings(tmp_path).value(THEME_KEY) == "light"


def test_the_environment_variable_overrides_the_kept_theme(make_inspector_window, tmp_path, monkeypatch):  # noqa: F811
    settings = _settings(tmp_path)
    settings.setValue(THEME_KEY, "light")
    settings.sync()
    monkeypatch.setenv(THEME_ENV, "dark")
    window = make_inspector_window()
    assert window.context.appearance.theme == "dark" and is_dark(window.palette())
    assert window.settings_actions.theme_actions["dark"].isChecked()


def test_theme_rules():
    assert effective_theme("dark", None) == "dark"
    assert effective_theme("dark", " Light ") == "light"
    assert effective_theme("dark", "sepia") == "dark"  # an unknown override is ignored
    assert effective_theme(None, None) == effective_theme(3, "") == "system"
    assert (clamp_zoom("2"), clamp_zoom(99), clamp_zoom("x"), clamp_zoom(None)) == (2, ZOOM_MAX, 0, 0)


def test_zoom_applies_to_the_tables_and_detail_views_and_is_kept(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    window = make_inspector_window()
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    settings = window.settings_actions
    assert [k.toString() for k in settings.zoom_in_action.shortcuts()] == ["Ctrl++", "Ctrl+="]
    assert settings.zoom_out_action.shortcut().toString() == "Ctrl+-"
    assert settings.reset_zoom_action.shortcut().toString() == "Ctrl+0"
    timeline, raw, findings = window.timeline, window.detail.event_detail.raw, window.detail.findings.table
    sizes = (timeline.font().pointSizeF(), raw.font().pointSizeF(), findings.font().pointSizeF())
    row = timeline.rowHeight(0)
    settings.zoom_in_action.trigger()
    settings.zoom_in_action.trigger()
    assert (timeline.font().pointSizeF(), raw.font().pointSizeF(), findings.font().pointSizeF()) == tuple(
        s + 2 for s in sizes
    )
    assert timeline.rowHeight(0) > row  # rows follow the font
    assert window.characters.font().pointSizeF() == sizes[0] + 2
    assert _settings(tmp_path).value(ZOOM_KEY) in (2, "2")
    settings.zoom_out_action.trigger()
    assert timeline.font().pointSizeF() == sizes[0] + 1
    window.close()
    again = make_inspector_window()  # the next start keeps it
    assert again.timeline.font().pointSizeF() == sizes[0] + 1
    again.settings_actions.reset_zoom_action.trigger()
    assert again.timeline.font().pointSizeF() == sizes[0]
    assert again.detail.event_detail.raw.font().pointSizeF() == sizes[1]
    for _ in range(ZOOM_MAX + 5):
        again.settings_actions.zoom_in_action.trigger()
    assert again.context.appearance.zoom == ZOOM_MAX


def test_clear_recent_forgets_the_recent_folders(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    window = make_inspector_window()
    clear = window.recent_menu.clear_action
    assert not clear.isEnabled()
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, window, root)
    assert window.recent.load() == [str(root)]
    assert window.recent_menu.isEnabled() and clear.isEnabled()
    assert clear in window.menuBar().actions()[0].menu().actions()  # File ▸ Clear recent
    clear.trigger()
    assert window.recent.load() == []
    assert not window.recent_menu.isEnabled() and not clear.isEnabled()
    assert window.recent_menu.actions() == []


def test_every_new_shortcut_is_listed_and_none_is_taken_twice(inspector_window):  # noqa: F811
    window = inspector_window
    actions = window.findChildren(QAction)
    rows = dict(shortcut_rows(actions))
    expected = {
        "Find": "Ctrl+F",
        "Find next": "F3",
        "Find previous": "Shift+F3",
        "Toggle bookmark": "Ctrl+B",
        "Next bookmark": "F2",
        "Previous bookmark": "Shift+F2",
        "Zoom in": "Ctrl++, Ctrl+=",
        "Zoom out": "Ctrl+-",
        "Reset zoom": "Ctrl+0",
    }
    assert {name: rows.get(name) for name in expected} == expected
    keys = Counter(
        k.toString(QKeySequence.SequenceFormat.PortableText) for a in actions for k in a.shortcuts() if not k.isEmpty()
    )
    assert [k for k, n in keys.items() if n > 1] == []
