"""The window's bookmark actions (issue 16 item 20): Ctrl+B toggles the selected row's bookmark,
F2 / Shift+F2 go to the next / previous bookmarked row shown (wrapping, as F8 does). The marks are
drawn by the timeline's cells and the overview ruler; the bookmarks are the controller's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from inspector.controllers.bookmarks import BookmarkController

if TYPE_CHECKING:
    from inspector.widgets.main_window import MainWindow


class BookmarkActions(QObject):
    """Turns the bookmark gestures into :class:`BookmarkController` calls and shows the result.

    Args:
        window: the main window (its timeline, ruler and status bar).
        bookmarks: the context's bookmarks.

    Attributes:
        toggle_action, next_action, previous_action: Ctrl+B, F2, Shift+F2.
    """

    def __init__(self, window: MainWindow, bookmarks: BookmarkController) -> None:
        super().__init__(window)
        self.window = window
        self.bookmarks = bookmarks
        self.toggle_action = window._action(
            "Toggle &bookmark", self.toggle, "Ctrl+B", None, "Bookmark the selected row, or remove its bookmark"
        )
        self.next_action = window._action("Next boo&kmark", lambda: self.go(1), "F2", None, "Next bookmarked row")
        self.previous_action = window._action(
            "Previous bookm&ark", lambda: self.go(-1), "Shift+F2", None, "Previous bookmarked row"
        )
        window.timeline.cell_marks.bookmarked = bookmarks.is_bookmarked
        model = window.session.timeline_model
        window.ruler.bookmark_positions = lambda: bookmarks.positions(model.refs())
        bookmarks.changed.connect(self._on_changed)

    def _on_changed(self) -> None:
        self.window.ruler.schedule()
        self.window.timeline.viewport().update()

    def toggle(self) -> None:
        w = self.window
        ref = w.selected_ref()
        if ref is None:
            w.statusBar().showMessage("Select a row to bookmark it.", 5000)
            return
        on = self.bookmarks.toggle(ref)
        if on is None:
            w.statusBar().showMessage("A damaged line has no event id: it cannot be bookmarked.", 5000)
        else:
            w.statusBar().showMessage(f"Bookmarked event #{ref}." if on else f"Removed the bookmark of #{ref}.", 5000)

    def go(self, step: int) -> None:
        w = self.window
        index = w.timeline.currentIndex()
        found = self.bookmarks.next_position(
            w.session.timeline_model.refs(), index.row() if index.isValid() else None, step
        )
        if found is None:
            w.show_row_message("No bookmarks in the rows shown (Ctrl+B bookmarks a row).")
            return
        w.clear_row_message()
        if found.wrapped:
            which = "first" if step > 0 else "last"
            w.show_row_message(f"Wrapped around to the {which} bookmark.")
        w.select_position(found.pos)
