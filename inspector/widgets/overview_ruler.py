"""The overview ruler beside the timeline's scrollbar (issue 16 item 19, as klogg's): a mark per
problem row (blocked, orphaned, suspect, damaged) and bookmark, and a line at the sentinel, over
the whole of the rows shown; clicking a mark selects its row.

The marks are worked out once per reset or state change (:func:`~inspector.core.overview.problem_marks`,
coalesced by a zero-delay timer) and folded into one per pixel when the height changes, so that
painting the ruler over a million rows only walks its buckets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QPoint, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QHBoxLayout, QWidget

from inspector.core.overview import Mark, buckets, mark_near, pixel_of, problem_marks
from inspector.models.colors import accent_color
from inspector.models.timeline_model import EventTableModel
from inspector.widgets.cell_marks import BOOKMARK_COLOR
from inspector.widgets.timeline_view import TimelineView

#: The ruler's width, in pixels: a lane for problems, then one for bookmarks.
RULER_WIDTH = 14
BOOKMARK_LANE = 5

#: How far from a mark a click still hits it, in pixels.
CLICK_REACH = 3


def _no_bookmarks() -> list[int]:
    return []


class OverviewRuler(QWidget):
    """The marks of the rows shown by ``view``, scaled to the height of its rows' area.

    Args:
        view: the timeline (its model is followed for the marks).

    Attributes:
        bookmark_positions: gives the positions of the bookmarked rows shown (set by the window).

    Signals:
        row_requested(int): a mark was clicked; the row (position in the model) to select.
    """

    row_requested = Signal(int)

    def __init__(self, view: TimelineView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.bookmark_positions: Callable[[], list[int]] = _no_bookmarks
        self.setFixedWidth(RULER_WIDTH)
        self.setToolTip(
            "Overview of the rows shown: blocked (red), damaged, orphaned, suspect, bookmarks (teal) and "
            "the sentinel (line). Click a mark to go to its row."
        )
        self._marks: list[Mark] = []
        # Per lane (problems, bookmarks): one mark per pixel, for the height it was folded for.
        self._folded: tuple[int, dict[int, Mark], dict[int, Mark]] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.recompute)
        model = view.model()
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved, model.layoutChanged, model.dataChanged):
            signal.connect(self.schedule)
        view.verticalScrollBar().rangeChanged.connect(self.update)
        self.recompute()

    def sizeHint(self) -> QSize:
        """Override: a narrow strip."""
        return QSize(RULER_WIDTH, 100)

    def _model(self) -> EventTableModel:
        return self.view.timeline_model()

    def schedule(self, *_args: Any) -> None:
        """Recompute the marks once control returns to the event loop (a burst of changes, one pass)."""
        self._timer.start()

    def marks(self) -> list[Mark]:
        """The marks of the rows shown: problems and bookmarks, by position."""
        return list(self._marks)

    def recompute(self) -> None:
        """Work the marks out again from the rows shown and their states."""
        self._timer.stop()
        model = self._model()
        tl = model.timeline
        marks = problem_marks(tl, model.refs()) if tl is not None else []
        marks += [Mark(pos, "bookmark") for pos in self.bookmark_positions()]
        self._marks = marks
        self._folded = None
        self.update()

    # -- geometry -------------------------------------------------------------------------------

    def track(self) -> tuple[int, int]:
        """``(top, height)`` of the part of the ruler beside the rows (not the header)."""
        viewport = self.view.viewport()
        top = self.mapFromGlobal(viewport.mapToGlobal(QPoint(0, 0))).y()
        return max(0, top), max(1, viewport.height())

    def folded(self) -> tuple[dict[int, Mark], dict[int, Mark]]:
        """Problems and bookmarks, one mark per pixel of the track each (worked out again only
        when the height or the marks change)."""
        _top, height = self.track()
        if self._folded is None or self._folded[0] != height:
            rows = self._model().rowCount()
            problems = buckets((m for m in self._marks if m.kind != "bookmark"), rows, height)
            bookmarks = buckets((m for m in self._marks if m.kind == "bookmark"), rows, height)
            self._folded = (height, problems, bookmarks)
        return self._folded[1], self._folded[2]

    def sentinel_pixel(self) -> int | None:
        """The track pixel of the sentinel line (between its row and the next), ``None``: none."""
        model = self._model()
        pos = model.marker_position()
        if pos is None or model.rowCount() == 0:
            return None
        return pixel_of(pos + 1, model.rowCount(), self.track()[1])

    def point_of(self, pos: int) -> QPoint:
        """Where the mark of row ``pos`` is, in the ruler's coordinates (for a click)."""
        top, height = self.track()
        return QPoint(self.width() // 2, top + pixel_of(pos, self._model().rowCount(), height))

    # -- painting and clicks ---------------------------------------------------------------------

    def _color(self, kind: str) -> QColor:
        return accent_color(self.palette(), kind)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Override: the track, a bar per folded mark, and the sentinel line."""
        painter = QPainter(self)
        palette = self.palette()
        top, height = self.track()
        w = self.width()
        painter.fillRect(0, top, w, height, palette.color(QPalette.ColorRole.Base).darker(112))
        painter.fillRect(0, top, 1, height, palette.color(QPalette.ColorRole.Mid))
        problems, bookmarks = self.folded()
        for y, mark in problems.items():
            painter.fillRect(2, top + y - 1, w - BOOKMARK_LANE - 3, 3, self._color(mark.kind))
        for y in bookmarks:
            painter.fillRect(w - BOOKMARK_LANE, top + y - 1, BOOKMARK_LANE - 1, 3, BOOKMARK_COLOR)
        sentinel = self.sentinel_pixel()
        if sentinel is not None:
            line = QColor(palette.color(QPalette.ColorRole.Highlight))
            line.setAlpha(255)
            painter.fillRect(0, top + sentinel - 1, w, 2, line)
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Override: a click on (or near) a mark selects its row; near the sentinel line, the sentinel's."""
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        top, _height = self.track()
        y = int(event.position().y()) - top
        problems, bookmarks = self.folded()
        mark = mark_near(problems, y, CLICK_REACH) or mark_near(bookmarks, y, CLICK_REACH)
        if mark is not None:
            self.row_requested.emit(mark.pos)
            return
        sentinel = self.sentinel_pixel()
        pos = self._model().marker_position()
        if sentinel is not None and pos is not None and abs(y - sentinel) <= CLICK_REACH:
            self.row_requested.emit(max(0, pos))


def with_ruler(view: TimelineView, ruler: OverviewRuler) -> QWidget:
    """``view`` with ``ruler`` beside its scrollbar, as one widget for the window's layout."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(view, 1)
    layout.addWidget(ruler)
    return box
