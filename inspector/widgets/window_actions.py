"""The main window's actions, menus and toolbar (built once, by :class:`MainWindow`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from inspector.widgets import icons

if TYPE_CHECKING:
    from inspector.widgets.main_window import MainWindow


def build_actions(w: MainWindow) -> None:
    """Create the window's actions (as attributes of ``w``), its menus and its toolbar."""
    w.open_folder_action = w._action(
        "Open &folder…",
        w.ask_open_folder,
        QKeySequence.StandardKey.Open,
        icons.OPEN_FOLDER,
        "Open a memory root or one character's folder",
    )
    w.open_zip_action = w._action(
        "Open &zip export…", w.ask_open_zip, "Ctrl+Shift+O", icons.OPEN_ZIP, "Open a .zip export (read-only)"
    )
    w.open_sample_action = w._action("Open the bundled &sample", w.session.open_sample)
    w.reload_action = w._action(
        "&Reload",
        lambda: w.session.reload(),
        QKeySequence.StandardKey.Refresh,
        icons.RELOAD,
        "Read the folder again",
    )
    w.quit_action = w._action("&Quit", w.close, QKeySequence.StandardKey.Quit)
    w.jump_action = w._action(
        "&Jump to sentinel", w.navigation.jump_to_sentinel, "Ctrl+J", icons.SENTINEL, "Select the sentinel's event"
    )
    w.next_problem_action = w._action(
        "&Next problem",
        lambda: w.navigation.goto_problem(1),
        "F8",
        icons.NEXT_PROBLEM,
        "Next blocked, orphaned, suspect or damaged row (F8)",
    )
    w.previous_problem_action = w._action(
        "&Previous problem",
        lambda: w.navigation.goto_problem(-1),
        "Shift+F8",
        icons.PREVIOUS_PROBLEM,
        "Previous problem (Shift+F8)",
    )
    w.goto_action = w._action(
        "&Go to event…", w.navigation.ask_goto_event, "Ctrl+G", icons.GOTO, "Select an event by id, id prefix or #index"
    )
    w.follow_action = w._action(
        "&Follow new events",
        w._on_follow_triggered,
        "Ctrl+End",
        icons.FOLLOW,
        "Keep the newest event in view (pauses when you scroll up)",
    )
    w.follow_action.setCheckable(True)
    w.follow_action.setChecked(True)
    w.redact_action = w._action(
        "&Redact text",
        w._on_redact_triggered,
        "Ctrl+Shift+R",
        icons.REDACT,
        "Hide entry text and chat content (for screenshots)",
    )
    w.redact_action.setCheckable(True)
    w.clear_filter_action = w._action("&Clear filter", w.filter_bar.clear, "Ctrl+Shift+F")
    w.shortcuts_action = w._action("&Keyboard shortcuts", w.show_shortcuts, QKeySequence.StandardKey.HelpContents)
    w.about_action = w._action("&About memory-inspector", w.show_about)

    menu = w.menuBar()
    file_menu = menu.addMenu("&File")
    file_menu.addAction(w.open_folder_action)
    file_menu.addAction(w.open_zip_action)
    file_menu.addAction(w.open_sample_action)
    w.recent_menu = QMenu("Open &recent", w)
    file_menu.addMenu(w.recent_menu)
    file_menu.addAction(w.settings_actions.clear_recent_action)
    file_menu.addSeparator()
    file_menu.addAction(w.reload_action)
    w.row_actions.add_export_menu(file_menu)
    w.support_actions.add_to_file_menu(file_menu)  # support bundle, compare
    file_menu.addSeparator()
    file_menu.addAction(w.quit_action)
    view_menu = menu.addMenu("&View")
    view_menu.addAction(w.redact_action)
    view_menu.addAction(w.follow_action)
    view_menu.addAction(w.clear_filter_action)
    view_menu.addSeparator()
    view_menu.addMenu(w.settings_actions.theme_menu)
    settings = w.settings_actions
    for a in (settings.zoom_in_action, settings.zoom_out_action, settings.reset_zoom_action):
        view_menu.addAction(a)
    go_menu = menu.addMenu("&Go")
    for a in (w.jump_action, w.next_problem_action, w.previous_problem_action, w.goto_action):
        go_menu.addAction(a)
    go_menu.addAction(w.row_actions.goto_time_action)
    go_menu.addSeparator()
    for a in (w.finder.find_action, w.finder.find_next_action, w.finder.find_previous_action):
        go_menu.addAction(a)
    go_menu.addSeparator()
    marks = w.bookmark_actions
    for a in (marks.toggle_action, marks.next_action, marks.previous_action):
        go_menu.addAction(a)
    #: Actions that change a folder (guarded replay, restore) are added here by the composition root.
    w.tools_menu = menu.addMenu("&Tools")
    help_menu = menu.addMenu("&Help")
    help_menu.addAction(w.shortcuts_action)
    help_menu.addAction(w._action("Window &tour", w.show_tour))
    help_menu.addAction(w.about_action)
    w._refresh_recent_menu()

    toolbar = QToolBar("Main")
    toolbar.setObjectName("MainToolbar")
    # Its constructor asked the style sheet for metrics before it had this name: polish it again, so
    # that the sheet's rule for it applies from the start as after a theme switch (issue 27 item 9).
    toolbar.style().unpolish(toolbar)
    toolbar.style().polish(toolbar)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    toolbar.setMovable(False)
    for a in (w.open_folder_action, w.open_zip_action, w.reload_action):
        toolbar.addAction(a)
    toolbar.addSeparator()
    for a in (w.jump_action, w.previous_problem_action, w.next_problem_action, w.goto_action):
        toolbar.addAction(a)
    toolbar.addSeparator()
    toolbar.addAction(w.follow_action)
    toolbar.addAction(w.redact_action)
    w.addToolBar(toolbar)
