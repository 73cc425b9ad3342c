"""Find (issue 16 item 15, issue 27 item 15): find is not filter. Ctrl+F opens the find bar under
the filter bar; what it finds is marked, never hidden: matches are highlighted in the timeline's
Summary cells and in the Event tab's payload views (tree and raw JSON), F3 / Shift+F3 go to the
next / previous match among all the rows shown, and a small list of the matches and of the
bookmarks jumps to the one clicked. The filter bar's search box still filters.

What matches is the find controller's (:class:`inspector.controllers.find.FindController`, the
filter's payload search on the rows shown). An invalid regular expression highlights and finds
nothing; the find bar says why."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import (
    QColor,
    QKeySequence,
    QPainter,
    QPalette,
    QShortcut,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.controllers.bookmarks import BookmarkController
from inspector.controllers.find import FindController
from inspector.core.find import match_spans, step_among
from inspector.models.timeline_model import COL_SUMMARY, COL_TYPE, EventTableModel
from inspector.widgets.icons import ActionFactory
from inspector.widgets.status_line import StatusLine
from inspector.widgets.timeline_selection import TimelineSelection

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


#: How many matches the list shows (F3 reaches every one).
LISTED = 500

#: The list's rows carry the row's position in the timeline as shown.
POSITION_ROLE = Qt.ItemDataRole.UserRole + 1


class FindBar(QWidget):
    """The find box, its regular-expression toggle, previous / next, what it found, and the list of
    matches and bookmarks (shown while the bar is open)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FindBar")
        self.text = QLineEdit()
        self.text.setPlaceholderText("Find in payloads (marks rows, hides none)…")
        self.text.setClearButtonEnabled(True)
        self.regex = QCheckBox(".*")
        self.regex.setToolTip("Find text is a regular expression")
        self.previous = QToolButton()
        self.previous.setText("▲")
        self.previous.setToolTip("Previous match (Shift+F3)")
        self.next = QToolButton()
        self.next.setText("▼")
        self.next.setToolTip("Next match (F3)")
        self.count = QLabel()
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close the find bar (Esc)")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(QLabel("Find:"))
        row.addWidget(self.text, 1)
        row.addWidget(self.regex)
        row.addWidget(self.previous)
        row.addWidget(self.next)
        row.addWidget(self.count)
        row.addWidget(self.close_button)
        self.list = QListWidget()
        self.list.setObjectName("FindList")
        self.list.setUniformItemSizes(True)
        # Small: four rows, so that a 600 px window keeps its timeline; elided, whole on hover.
        self.list.setMaximumHeight(self.list.fontMetrics().lineSpacing() * 4 + 8)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.list)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self.text, self.hide)


class TimelineFind(QObject):
    """The window's find: its actions, the find bar, the highlights, and stepping through the matches.

    Args:
        controller: what is found (the composition root builds it: ``AppContext.find``).
        bookmarks: the bookmarks, listed under the matches.
        bar: the find bar (the window places it, under the filter bar).
        model: the timeline's model (the rows shown).
        selection: the timeline's selection (stepping moves it).
        highlight: marks the pattern's matches where they show (the timeline's cells, the
            Event tab's payload views; ``None``: none).
        status: where what was found is said.
        actions: makes Ctrl+F, F3 and Shift+F3.

    Attributes:
        controller: what is found (:class:`~inspector.controllers.find.FindController`).
        bar: the :class:`FindBar`, under the filter bar.
        pattern: the find text's pattern (``None``: empty or an invalid regular expression).
        find_action, find_next_action, find_previous_action: Ctrl+F, F3, Shift+F3.
    """

    def __init__(
        self,
        controller: FindController,
        bookmarks: BookmarkController,
        bar: FindBar,
        model: EventTableModel,
        selection: TimelineSelection,
        highlight: Callable[[re.Pattern[str] | None], None],
        status: StatusLine,
        actions: ActionFactory,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.pattern: re.Pattern[str] | None = None
        self._pending: int | None = None
        self.controller = controller
        self.bookmarks = bookmarks
        self.bar = bar
        self.model = model
        self.selection = selection
        self.highlight = highlight
        self.status = status
        bar.hide()
        self.find_action = actions(
            "&Find…", self.focus_search, "Ctrl+F", None, "Find in the payloads of the rows shown (marks, hides none)"
        )
        self.find_next_action = actions(
            "Find &next", lambda: self.find(1), "F3", None, "Next row matching the find text (F3)"
        )
        self.find_previous_action = actions(
            "Find pre&vious", lambda: self.find(-1), "Shift+F3", None, "Previous row matching the find text"
        )
        bar.text.textChanged.connect(self._update_query)
        bar.regex.toggled.connect(self._update_query)
        bar.text.returnPressed.connect(lambda: self.find(1))
        bar.next.clicked.connect(lambda: self.find(1))
        bar.previous.clicked.connect(lambda: self.find(-1))
        bar.close_button.clicked.connect(bar.hide)
        bar.list.itemClicked.connect(self._on_listed)
        bar.list.itemActivated.connect(self._on_listed)
        self.controller.matches_changed.connect(self._on_matches)
        # Queued: a character's bookmarks change before the timeline shows its rows.
        bookmarks.changed.connect(self._fill_list, Qt.ConnectionType.QueuedConnection)

    def focus_search(self) -> None:
        """Ctrl+F: open the find bar with its text selected (typing replaces it)."""
        self.bar.show()
        self._fill_list()
        box = self.bar.text
        box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        box.selectAll()

    def _update_query(self, *_args: Any) -> None:
        self.controller.set_query(self.bar.text.text(), self.bar.regex.isChecked())

    def _on_matches(self) -> None:
        c = self.controller
        self.pattern = c.pattern() if not c.error else None
        self.highlight(self.pattern)
        if c.error:
            self.bar.count.setText(c.error)
        elif c.busy:
            self.bar.count.setText("finding…")
        elif c.text:
            n = len(c.refs)
            self.bar.count.setText(f"{n:,} match{'es' if n != 1 else ''}")
        else:
            self.bar.count.setText("")
        self._fill_list()
        if not c.busy and self._pending is not None:
            step, self._pending = self._pending, None
            self._go(step)

    def _fill_list(self, *_args: Any) -> None:
        """The matches (the first :data:`LISTED`), then the bookmarks, each one row to click."""
        listing = self.bar.list
        listing.clear()
        if self.bar.isHidden():
            listing.hide()
            return  # filled when the bar opens
        model = self.model
        matches = self.controller.positions()
        for pos in matches[:LISTED]:
            self._add(listing, "match", pos)
        if len(matches) > LISTED:
            more = QListWidgetItem(f"… and {len(matches) - LISTED:,} more matches (F3 reaches them)")
            more.setFlags(Qt.ItemFlag.NoItemFlags)
            listing.addItem(more)
        if model.timeline is not None:
            for pos in self.bookmarks.positions(model.refs()):
                self._add(listing, "bookmark", pos)
        listing.setVisible(listing.count() > 0)  # no empty box taking the timeline's room

    def _add(self, listing: QListWidget, kind: str, pos: int) -> None:
        model = self.model
        row = model.index(pos, COL_TYPE).data() or ""
        summary = model.index(pos, COL_SUMMARY).data() or ""
        ref = model.ref_at(pos)
        number = f"#{ref}" if ref >= 0 else "damaged line"
        item = QListWidgetItem(f"{kind} · {number} {row} — {summary}")
        item.setData(POSITION_ROLE, pos)
        item.setToolTip(item.text())
        listing.addItem(item)

    def _on_listed(self, item: QListWidgetItem) -> None:
        pos = item.data(POSITION_ROLE)
        if isinstance(pos, int):
            self.selection.select_position(pos)

    def find(self, step: int) -> None:
        """Select the next (``step`` = 1) or previous (-1) row matching the find text, hiding none."""
        c = self.controller
        if not self.bar.text.text():
            self.status.show_row_message("Type what to find in the find bar (Ctrl+F).")
            self.focus_search()
            return
        self._update_query()
        if c.error:
            self.status.show_row_message(f"Nothing to find: {c.error}.")
            return
        if c.busy:
            self._pending = step  # the search is running: step when its matches are there
            return
        self._go(step)

    def _go(self, step: int) -> None:
        status = self.status
        positions = self.controller.positions()
        found = step_among(positions, self.selection.position(), step)
        text = self.controller.text
        if found is None:
            status.show_row_message(f"No row matches {text!r} in the rows shown.")
            return
        k = positions.index(found.pos) + 1
        if found.wrapped:
            which = "first" if step > 0 else "last"
            status.show_row_message(f"Wrapped to the {which} match (match {k:,} of {len(positions):,}).")
        else:
            status.show_row_message(f"Match {k:,} of {len(positions):,} for {text!r}.")
        self.selection.select_position(found.pos)
