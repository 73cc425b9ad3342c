"""The timeline's selection: the row selected, and selecting a row by its ref or its position.
Built once by the window and handed to every helper that reads or moves the selection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QAbstractItemView, QTableView

from inspector.core.filtering import TimelineFilter
from inspector.core.timeline import Row
from inspector.widgets.filter_bar import FilterBar

if TYPE_CHECKING:
    from inspector.controllers.session import SessionController


class TimelineSelection:
    """Which timeline row is selected, and selecting one.

    Args:
        view: the timeline's view.
        session: the session (its timeline model, and the filter cleared when it hides a row asked for).
        filter_bar: the filter bar, cleared with the filter.
    """

    def __init__(self, view: QTableView, session: SessionController, filter_bar: FilterBar) -> None:
        self.view = view
        self.session = session
        self.filter_bar = filter_bar

    def position(self) -> int | None:
        """The position of the selected row among the rows shown (``None``: none is)."""
        index = self.view.currentIndex()
        return index.row() if index.isValid() else None

    def selected_ref(self) -> int | None:
        """The ref of the selected row (event index ``>= 0``, damaged line ``< 0``)."""
        pos = self.position()
        return None if pos is None else self.session.timeline_model.ref_at(pos)

    def selected_row(self) -> Row | None:
        pos = self.position()
        return None if pos is None else self.session.timeline_model.row_at(pos)

    def select_ref(self, ref: int) -> bool:
        """Select row ``ref`` (clearing the filter if it hides the row); whether it is shown."""
        model = self.session.timeline_model
        pos = model.position_of(ref)
        if pos is None and self.session.filter.active:
            self.filter_bar.clear()
            self.session.set_filter(TimelineFilter())
            pos = model.position_of(ref)
        if pos is None:
            return False
        self.select_position(pos)
        return True

    def select_position(self, pos: int) -> None:
        """Select the row at ``pos`` among the rows shown, scrolled to the middle."""
        index = self.session.timeline_model.index(pos, 0)
        self.view.setCurrentIndex(index)
        self.view.selectRow(pos)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
