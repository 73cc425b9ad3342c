"""Find (issue 16 item 15): Ctrl+F focuses the filter bar's search box, F3 / Shift+F3 go to the
next / previous matching row, and matches are highlighted in the timeline's Summary cells and in
the Event tab's payload views (tree and raw JSON).

The search box filters the timeline to the rows whose payload matches, so the rows shown are the
matches: F3 steps through them (applying text typed but not yet applied first). An invalid regular
expression highlights nothing and finds nothing; the box says why (the filter bar's red tint)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from inspector.core.filtering import FilterError
from inspector.core.find import match_spans, step_row

if TYPE_CHECKING:
    from inspector.widgets.main_window import MainWindow

#: The highlight's hue (a marker pen), laid translucently over the row's own colour.
FIND_HUE = "#ffd21f"

#: Characters kept before a match when the cell must be cut for the match to show.
MATCH_CONTEXT = 6


def find_color(palette: QPalette) -> QColor:
    """The background of a match: the marker hue, more opaque on light bases (where it is faint)."""
    color = QColor(FIND_HUE)
    color.setAlpha(110 if palette.color(QPalette.ColorRole.Base).lightness() < 128 else 170)
    return color


def paint_with_matches(
    delegate: QStyledItemDelegate,
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
    pattern: re.Pattern[str] | None,
) -> None:
    """Paint a cell as ``delegate`` would, with the matches of ``pattern`` in its (elided) text
    on a marker-coloured background; a cell without a match is painted as usual. When eliding the
    text would cut every match, the cell shows the text from just before the first one."""
    opt = QStyleOptionViewItem(option)
    delegate.initStyleOption(opt, index)
    text = opt.text
    if not match_spans(text, pattern, limit=1):
        QStyledItemDelegate.paint(delegate, painter, option, index)
        return
    widget = opt.widget
    style = widget.style() if widget is not None else QApplication.style()
    text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
    text_rect = text_rect.adjusted(margin, 0, -margin, 0)
    opt.text = ""
    style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
    fm = opt.fontMetrics
    shown = fm.elidedText(text, opt.textElideMode, text_rect.width())
    if not match_spans(shown, pattern, limit=1):
        # The elision cut every match: show the text from just before the first one instead.
        first = match_spans(text, pattern, limit=1)[0][0]
        tail = "…" + text[max(0, first - MATCH_CONTEXT) :] if first > MATCH_CONTEXT else text
        shown = fm.elidedText(tail, Qt.TextElideMode.ElideRight, text_rect.width())
    painter.save()
    painter.setClipRect(opt.rect)
    color = find_color(opt.palette)
    for start, end in match_spans(shown, pattern):  # a match cut by the ellipsis is not marked
        x = text_rect.left() + fm.horizontalAdvance(shown[:start])
        box = QRect(x, text_rect.top() + 1, fm.horizontalAdvance(shown[start:end]), text_rect.height() - 2)
        painter.fillRect(box, color)
    selected = bool(opt.state & QStyle.StateFlag.State_Selected)
    role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
    painter.setFont(opt.font)
    painter.setPen(opt.palette.color(role))
    align = opt.displayAlignment or (Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    painter.drawText(text_rect, int(align), shown)
    painter.restore()


class MatchDelegate(QStyledItemDelegate):
    """A delegate that highlights :attr:`pattern`'s matches in every cell (the payload tree).

    Attributes:
        pattern: what to highlight (``None``: nothing).
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pattern: re.Pattern[str] | None = None

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """Override: the cell, with its matches highlighted."""
        paint_with_matches(self, painter, option, index, self.pattern)


class MatchHighlighter(QSyntaxHighlighter):
    """Highlights :attr:`pattern`'s matches in a text document, line by line (the raw JSON).

    Attributes:
        pattern: what to highlight (``None``: nothing).
    """

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        super().__init__(document)
        self.pattern: re.Pattern[str] | None = None
        self._format = QTextCharFormat()
        self._format.setBackground(find_color(palette))

    def set_palette(self, palette: QPalette) -> None:
        """Mark the matches in ``palette``'s colour (a theme switch)."""
        self._format.setBackground(find_color(palette))
        self.rehighlight()

    def set_pattern(self, pattern: re.Pattern[str] | None) -> None:
        if pattern is not self.pattern:
            self.pattern = pattern
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        """Override: mark the matches in one line."""
        for start, end in match_spans(text, self.pattern, limit=256):
            self.setFormat(start, end - start, self._format)


class TimelineFind(QObject):
    """The window's find: its actions, the highlights, and stepping through the matching rows.

    Args:
        window: the main window (its filter bar, timeline, detail pane and status bar).

    Attributes:
        pattern: the search box's pattern (``None``: empty or an invalid regular expression).
        find_action, find_next_action, find_previous_action: Ctrl+F, F3, Shift+F3.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pattern: re.Pattern[str] | None = None
        self._pending: int | None = None
        self.find_action = window._action(
            "&Find…", self.focus_search, "Ctrl+F", None, "Search the payloads of the rows (the filter's search box)"
        )
        self.find_next_action = window._action(
            "Find &next", lambda: self.find(1), "F3", None, "Next row matching the search text (F3)"
        )
        self.find_previous_action = window._action(
            "Find pre&vious", lambda: self.find(-1), "Shift+F3", None, "Previous row matching the search text"
        )
        bar = window.filter_bar
        bar.text.textChanged.connect(self._update_pattern)
        bar.regex.toggled.connect(self._update_pattern)
        bar.filter_changed.connect(self._update_pattern)  # also after clear(), which types silently
        # Queued: the window first re-selects the row it kept across the filter, then the step runs.
        window.session.filtering.connect(self._on_filtering, Qt.ConnectionType.QueuedConnection)

    def focus_search(self) -> None:
        box = self.window.filter_bar.text
        box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        box.selectAll()

    def _update_pattern(self, *_args: Any) -> None:
        try:
            pattern = self.window.filter_bar.current_filter().pattern()
        except FilterError:
            pattern = None  # an invalid regular expression highlights nothing
        self.pattern = pattern
        self.window.timeline.cell_marks.pattern = pattern
        self.window.timeline.viewport().update()
        self.window.detail.event_detail.set_highlight(pattern)

    def find(self, step: int) -> None:
        """Select the next (``step`` = 1) or previous (-1) row matching the search box's text."""
        w = self.window
        bar = w.filter_bar
        wanted = bar.current_filter()
        if not wanted.text:
            w.statusBar().showMessage("Type what to find in the search box (Ctrl+F).", 5000)
            self.focus_search()
            return
        try:
            wanted.pattern()
        except FilterError as exc:
            w.statusBar().showMessage(f"Nothing to find: {exc}.", 5000)
            return
        applied = w.session.filter
        if (applied.text, applied.regex) != (wanted.text, wanted.regex):
            self._pending = step  # typed, not filtered yet: filter now, step when the rows are there
            bar.emit_filter()
            return
        self._go(step)

    def _on_filtering(self, busy: bool) -> None:
        if not busy and self._pending is not None:
            step, self._pending = self._pending, None
            self._go(step)

    def _go(self, step: int) -> None:
        w = self.window
        model = w.session.timeline_model
        index = w.timeline.currentIndex()
        found = step_row(model.rowCount(), index.row() if index.isValid() else None, step)
        text = w.filter_bar.text.text()
        if found is None:
            w.statusBar().showMessage(f"No row matches {text!r} in the rows shown.", 5000)
            return
        where = f"match {found.pos + 1:,} of {model.rowCount():,}"
        if found.wrapped:
            which = "first" if step > 0 else "last"
            w.statusBar().showMessage(f"Wrapped to the {which} match ({where}).", 5000)
        else:
            w.statusBar().showMessage(f"Match {found.pos + 1:,} of {model.rowCount():,} for {text!r}.", 5000)
        w.select_position(found.pos)
