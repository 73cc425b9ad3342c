"""The Help menu: keyboard shortcuts (F1, searchable) and About (versions, where files live)."""

from __future__ import annotations

import PySide6
import pytest
from PySide6.QtGui import QAction

from inspector import __version__
from inspector.widgets.help_dialogs import TourDialog
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
)

pytestmark = pytest.mark.gui


def test_f1_lists_every_shortcut_and_the_list_is_searchable(qtbot, inspector_window) -> None:  # noqa: F811
    window = inspector_window
    assert window.window_actions.shortcuts_action.shortcut().toString() == "F1"
    dialog = window.show_shortcuts()
    qtbot.addWidget(dialog)
    rows = dict(dialog.visible_rows())
    assert rows["Next problem"] == "F8" and rows["Jump to sentinel"] == "Ctrl+J"
    assert rows["Redact text"] == "Ctrl+Shift+R" and rows["Go to event"] == "Ctrl+G"
    dialog.search.setText("sentinel")
    assert [name for name, _ in dialog.visible_rows()] == ["Jump to sentinel"]
    dialog.search.setText("")
    assert len(dialog.visible_rows()) == len(rows)


def test_about_says_the_versions_and_where_files_live(qtbot, inspector_window, tmp_path) -> None:  # noqa: F811
    dialog = inspector_window.show_about()
    qtbot.addWidget(dialog)
    text = dialog.label.text()
    assert f"memory-inspector {__version__}" in text and f"PySide6 {PySide6.__version__}" in text
    assert str(tmp_path / "config") in text  # the window's config folder
    assert "Backups of guarded replay and restore:" in text and "Window tour:" in text


def test_the_go_to_event_box_fits_a_whole_event_id(qtbot):
    """The box was too short for a UUID (issue 16 item 4)."""
    from PySide6.QtWidgets import QLineEdit

    from inspector.widgets.dialogs import GoToEventDialog

    dialog = GoToEventDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    (edit,) = dialog.findChildren(QLineEdit)
    uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert edit.width() >= edit.fontMetrics().horizontalAdvance(uuid)


def test_the_window_tour_shows_the_readmes_section(qtbot, inspector_window):  # noqa: F811
    """Help ▸ Window tour (issue 16 item 14): the README's "The window" section, rendered."""
    from inspector.widgets.help_dialogs import README, TOUR_HEADING

    (tour,) = [a for a in inspector_window.findChildren(QAction) if a.text() == "Window &tour"]
    tour.trigger()
    qtbot.waitUntil(lambda: bool(inspector_window.findChildren(TourDialog)))
    (dialog,) = inspector_window.findChildren(TourDialog)
    text = dialog.browser.toPlainText()
    assert text.startswith("The window") and "Redact text" in text and "## Command line" not in text
    assert "![" not in dialog.browser.toMarkdown()  # the README's image is not the window's
    readme = README.read_text(encoding="utf-8")
    assert TOUR_HEADING in readme
    dialog.close()
