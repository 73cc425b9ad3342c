"""What the timeline's cells show beyond the model's text: the find's matches in the Summary cell
(issue 16 item 15) and a ribbon on bookmarked rows (item 20). The timeline's delegate asks
:class:`TimelineCellMarks` first; the window sets its pattern and its bookmark test."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, Qt
from PySide6.QtGui import QColor, QPainter, QPolygon
from PySide6.QtWidgets import QHeaderView, QStyledItemDelegate, QStyleOptionViewItem

from inspector.models.timeline_model import COL_SUMMARY, REF_ROLE
from inspector.widgets.find import paint_with_matches

#: The bookmarks' colour (teal: no state uses it), on rows and on the overview ruler.
BOOKMARK_COLOR = QColor("#109c96")

#: Width of the bookmark ribbon at the left of a bookmarked row, in pixels.
RIBBON_WIDTH = 7

#: Left of the ribbon: the memory server's stripe is drawn at the row's very edge.
RIBBON_LEFT = 6


def _no_bookmarks(_ref: int) -> bool:
    return False


class TimelineCellMarks:
    """Paints the extra marks of a timeline cell.

    Attributes:
        pattern: the find's pattern, highlighted in Summary cells (``None``: nothing).
        bookmarked: whether a row (by ref) is bookmarked.
    """

    def __init__(self) -> None:
        self.pattern: re.Pattern[str] | None = None
        self.bookmarked: Callable[[int], bool] = _no_bookmarks

    def paint(
        self,
        delegate: QStyledItemDelegate,
        header: QHeaderView,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """Paint the cell with its marks; ``False``: it has none (the delegate paints it as usual)."""
        col = index.column()
        highlight = col == COL_SUMMARY and self.pattern is not None
        ribbon = col == _first_shown(header) and self.bookmarked(index.data(REF_ROLE))
        if not highlight and not ribbon:
            return False
        if highlight:
            paint_with_matches(delegate, painter, option, index, self.pattern)
        else:
            QStyledItemDelegate.paint(delegate, painter, option, index)
        if ribbon:
            draw_ribbon(painter, option.rect.left() + RIBBON_LEFT, option.rect.top() + 2, option.rect.height() - 4)
        return True


def _first_shown(header: QHeaderView) -> int:
    for visual in range(header.count()):
        col = header.logicalIndex(visual)
        if not header.isSectionHidden(col):
            return col
    return -1


def draw_ribbon(painter: QPainter, x: int, y: int, height: int) -> None:
    """A bookmark ribbon (a strip with a notch at its foot) at ``x, y``."""
    w, h = RIBBON_WIDTH, max(6, height)
    corners = ((x, y), (x + w, y), (x + w, y + h), (x + w // 2, y + h - 3), (x, y + h))
    shape = QPolygon([QPoint(px, py) for px, py in corners])
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(BOOKMARK_COLOR)
    painter.drawPolygon(shape)
    painter.restore()
