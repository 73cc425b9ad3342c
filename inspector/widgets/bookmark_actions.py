"""The window's bookmark actions (issue 16 item 20): Ctrl+B toggles the selected row's bookmark,
F2 / Shift+F2 go to the next / previous bookmarked row shown (wrapping, as F8 does). The marks are
drawn by the timeline's cells and the overview ruler; the bookmarks are the controller's."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.controllers.bookmarks import BookmarkController
from inspector.models.timeline_model import EventTableModel
from inspector.widgets.icons import ActionFactory
from inspector.widgets.overview_ruler import OverviewRuler
from inspector.widgets.status_line import StatusLine
from inspector.widgets.timeline_selection import TimelineSelection
from inspector.widgets.timeline_view import TimelineView


class BookmarkActions(QObject):
    """Turns the bookmark gestures into :class:`BookmarkController` calls and shows the result.

    Args:
        bookmarks: the context's bookmarks.
        view, ruler: the timeline and its overview ruler, which draw the marks.
        model: the timeline's model (the rows shown).
        selection: the timeline's selection (the row bookmarked, the row stepped to).
        status: where the result is said.
        actions: makes Ctrl+B, F2 and Shift+F2.

    Attributes:
        toggle_action, next_action, previous_action: Ctrl+B, F2, Shift+F2.
    """

    def __init__(
        self,
        bookmarks: BookmarkController,
        view: TimelineView,
        ruler: OverviewRuler,
        model: EventTableModel,
        selection: TimelineSelection,
        status: StatusLine,
        actions: ActionFactory,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.bookmarks = bookmarks
        self.view = view
        self.ruler = ruler
        self.model = model
        self.selection = selection
        self.status = status
        self.toggle_action = actions(
            "Toggle &bookmark", self.toggle, "Ctrl+B", None, "Bookmark the selected row, or remove its bookmark"
        )
        self.next_action = actions("Next boo&kmark", lambda: self.go(1), "F2", None, "Next bookmarked row")
        self.previous_action = actions(
            "Previous bookm&ark", lambda: self.go(-1), "Shift+F2", None, "Previous bookmarked row"
        )
        view.cell_marks.bookmarked = bookmarks.is_bookmarked
        ruler.bookmark_positions = lambda: bookmarks.positions(model.refs())
        bookmarks.changed.connect(self._on_changed)

    def _on_changed(self) -> None:
        self.ruler.schedule()
        self.view.viewport().update()

    def toggle(self) -> None:
        ref = self.selection.selected_ref()
        if ref is None:
            self.status.show("Select a row to bookmark it.", 5000)
            return
        on = self.bookmarks.toggle(ref)
        if on is None:
            self.status.show("A damaged line has no event id: it cannot be bookmarked.", 5000)
        else:
            self.status.show(f"Bookmarked event #{ref}." if on else f"Removed the bookmark of #{ref}.", 5000)

    def go(self, step: int) -> None:
        found = self.bookmarks.next_position(self.model.refs(), self.selection.position(), step)
        if found is None:
            self.status.show_row_message("No bookmarks in the rows shown (Ctrl+B bookmarks a row).")
            return
        self.status.clear_row_message()
        if found.wrapped:
            which = "first" if step > 0 else "last"
            self.status.show_row_message(f"Wrapped around to the {which} bookmark.")
        self.selection.select_position(found.pos)
