"""The main window's actions, menus and toolbar: built once, for the window, from the helpers and
slots they call (:class:`WindowActions`). The window's helpers make their own actions; this module
places them in the menus."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMainWindow, QToolBar

from inspector.controllers.session import SessionController
from inspector.widgets import icons
from inspector.widgets.bookmark_actions import BookmarkActions
from inspector.widgets.find import TimelineFind
from inspector.widgets.navigation import Navigation
from inspector.widgets.settings_menu import RecentMenu, SettingsActions
from inspector.widgets.support_actions import SupportActions
from inspector.widgets.timeline_menu import RowActions


@dataclass(frozen=True, slots=True)
class WindowSlots:
    """What the window's own actions call: the window's slots (the helpers' are theirs)."""

    open_folder: Callable[[], Any]
    open_zip: Callable[[], Any]
    follow: Callable[[bool], Any]
    redact: Callable[[bool], Any]
    clear_filter: Callable[[], Any]
    shortcuts: Callable[[], Any]
    tour: Callable[[], Any]
    about: Callable[[], Any]


@dataclass(frozen=True, slots=True)
class WindowHelpers:
    """The window's helpers whose actions the menus place."""

    navigation: Navigation
    finder: TimelineFind
    bookmarks: BookmarkActions
    settings: SettingsActions
    recent_menu: RecentMenu
    rows: RowActions
    support: SupportActions


class WindowActions:
    """The window's own actions, its menus and its toolbar, placed on ``host``.

    Args:
        host: the window (the menus' and the toolbar's, and ``quit_action`` closes it).
        actions: makes the window-wide actions.
        session: opens the sample, reloads.
        slots: the window's slots its actions call.
        helpers: the helpers whose actions the menus place.

    Attributes:
        open_folder_action, open_zip_action, open_sample_action, reload_action, quit_action: File.
        jump_action, next_problem_action, previous_problem_action, goto_action: Go.
        follow_action, redact_action, clear_filter_action: View (follow and redact are checkable).
        shortcuts_action, about_action: Help.
        tools_menu: Tools (the composition root's guarded replay and restore are added to it).
        toolbar: the main toolbar.
    """

    def __init__(
        self,
        host: QMainWindow,
        actions: icons.ActionFactory,
        session: SessionController,
        slots: WindowSlots,
        helpers: WindowHelpers,
    ) -> None:
        a, nav = actions, helpers.navigation
        self.open_folder_action = a(
            "Open &folder…",
            slots.open_folder,
            QKeySequence.StandardKey.Open,
            icons.OPEN_FOLDER,
            "Open a memory root or one character's folder",
        )
        self.open_zip_action = a(
            "Open &zip export…", slots.open_zip, "Ctrl+Shift+O", icons.OPEN_ZIP, "Open a .zip export (read-only)"
        )
        self.open_sample_action = a("Open the bundled &sample", session.open_sample)
        self.reload_action = a(
            "&Reload",
            lambda: session.reload(),
            QKeySequence.StandardKey.Refresh,
            icons.RELOAD,
            "Read the folder again",
        )
        self.quit_action = a("&Quit", host.close, QKeySequence.StandardKey.Quit)
        self.jump_action = a(
            "&Jump to sentinel", nav.jump_to_sentinel, "Ctrl+J", icons.SENTINEL, "Select the sentinel's event"
        )
        self.next_problem_action = a(
            "&Next problem",
            lambda: nav.goto_problem(1),
            "F8",
            icons.NEXT_PROBLEM,
            "Next blocked, orphaned, suspect or damaged row (F8)",
        )
        self.previous_problem_action = a(
            "&Previous problem",
            lambda: nav.goto_problem(-1),
            "Shift+F8",
            icons.PREVIOUS_PROBLEM,
            "Previous problem (Shift+F8)",
        )
        self.goto_action = a(
            "&Go to event…", nav.ask_goto_event, "Ctrl+G", icons.GOTO, "Select an event by id, id prefix or #index"
        )
        self.follow_action = a(
            "&Follow new events",
            slots.follow,
            "Ctrl+End",
            icons.FOLLOW,
            "Keep the newest event in view (pauses when you scroll up)",
        )
        self.follow_action.setCheckable(True)
        self.follow_action.setChecked(True)
        self.redact_action = a(
            "&Redact text",
            slots.redact,
            "Ctrl+Shift+R",
            icons.REDACT,
            "Hide entry text and chat content (for screenshots)",
        )
        self.redact_action.setCheckable(True)
        self.clear_filter_action = a("&Clear filter", slots.clear_filter, "Ctrl+Shift+F")
        self.shortcuts_action = a("&Keyboard shortcuts", slots.shortcuts, QKeySequence.StandardKey.HelpContents)
        self.about_action = a("&About memory-inspector", slots.about)
        self._build_menus(host, a, slots, helpers)
        self.toolbar = self._build_toolbar(host)

    def _build_menus(
        self, host: QMainWindow, a: icons.ActionFactory, slots: WindowSlots, helpers: WindowHelpers
    ) -> None:
        menu = host.menuBar()
        file_menu = menu.addMenu("&File")
        file_menu.addAction(self.open_folder_action)
        file_menu.addAction(self.open_zip_action)
        file_menu.addAction(self.open_sample_action)
        file_menu.addMenu(helpers.recent_menu)
        file_menu.addAction(helpers.recent_menu.clear_action)
        file_menu.addSeparator()
        file_menu.addAction(self.reload_action)
        helpers.rows.add_export_menu(file_menu)
        helpers.support.add_to_file_menu(file_menu)  # support bundle, compare
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = menu.addMenu("&View")
        view_menu.addAction(self.redact_action)
        view_menu.addAction(self.follow_action)
        view_menu.addAction(self.clear_filter_action)
        view_menu.addSeparator()
        settings = helpers.settings
        view_menu.addMenu(settings.theme_menu)
        for action in (settings.zoom_in_action, settings.zoom_out_action, settings.reset_zoom_action):
            view_menu.addAction(action)
        go_menu = menu.addMenu("&Go")
        for action in (self.jump_action, self.next_problem_action, self.previous_problem_action, self.goto_action):
            go_menu.addAction(action)
        go_menu.addAction(helpers.rows.goto_time_action)
        go_menu.addSeparator()
        finder = helpers.finder
        for action in (finder.find_action, finder.find_next_action, finder.find_previous_action):
            go_menu.addAction(action)
        go_menu.addSeparator()
        marks = helpers.bookmarks
        for action in (marks.toggle_action, marks.next_action, marks.previous_action):
            go_menu.addAction(action)
        #: Actions that change a folder (guarded replay, restore) are added here by the composition root.
        self.tools_menu = menu.addMenu("&Tools")
        help_menu = menu.addMenu("&Help")
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(a("Window &tour", slots.tour))
        help_menu.addAction(self.about_action)
        helpers.recent_menu.refresh()

    def _build_toolbar(self, host: QMainWindow) -> QToolBar:
        toolbar = QToolBar("Main")
        toolbar.setObjectName("MainToolbar")
        # Its constructor asked the style sheet for metrics before it had this name: polish it again, so
        # that the sheet's rule for it applies from the start as after a theme switch (issue 27 item 9).
        toolbar.style().unpolish(toolbar)
        toolbar.style().polish(toolbar)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.setMovable(False)
        for action in (self.open_folder_action, self.open_zip_action, self.reload_action):
            toolbar.addAction(action)
        toolbar.addSeparator()
        for action in (self.jump_action, self.previous_problem_action, self.next_problem_action, self.goto_action):
            toolbar.addAction(action)
        toolbar.addSeparator()
        toolbar.addAction(self.follow_action)
        toolbar.addAction(self.redact_action)
        host.addToolBar(toolbar)
        return toolbar
