"""The timeline: a virtualised table with the sentinel drawn on it and follow mode (the bars
around it, the sentinel bar and the legend, are in :mod:`inspector.widgets.timeline_bars`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolTip,
    QWidget,
)

from inspector.core.columns import fit_widths
from inspector.models.colors import readable_on
from inspector.models.timeline_model import (
    COL_ENTRY,
    COL_INDEX,
    COL_STATE,
    COL_SUMMARY,
    COL_TIME,
    COL_TYPE,
    EventTableModel,
)
from inspector.widgets.cell_marks import TimelineCellMarks
from inspector.widgets.header_layouts import auto_fitted, set_auto_fitted
from inspector.widgets.server_start import server_color

#: Thickness of the sentinel line, in pixels.
MARKER_PEN = 3

#: Width of the stripe on events the memory server's next start applies and our guarded replay
#: would not (left edge of the row), in pixels.
SERVER_STRIPE = 4

#: The tag on the row where the memory server's next start stops.
SERVER_STOP_TAG = "■ memory server stops here"

#: The columns' visual order by default: what happened and to what first, so that a narrow window
#: still shows #, Type, Entry and State; the summary takes the room left; the time comes last.
DEFAULT_ORDER = (COL_INDEX, COL_TYPE, COL_ENTRY, COL_STATE, COL_SUMMARY, COL_TIME)

#: The delegate's text margins in a cell (a few pixels each side): a text wider than the cell
#: less these is shown elided.
TEXT_MARGINS = 8


@dataclass(frozen=True)
class Tag:
    """A mark drawn in a strip of its own, above or below a row's cells (never over them).

    Attributes:
        pos: the model row the strip belongs to.
        top: the strip is above the row's cells (else below them).
        label: the tag's text.
        kind: ``"sentinel"`` (our guarded replay's cursor) or ``"server"`` (where the memory
            server's next start stops).
    """

    pos: int
    top: bool
    label: str
    kind: str


class _InsetDelegate(QStyledItemDelegate):
    """Paints a cell inside the part of its row that no tag strip takes."""

    def __init__(self, view: TimelineView) -> None:
        super().__init__(view)
        self._view = view

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """Override: shrink the cell to the row's cell band."""
        top, bottom = self._view.row_insets(index.row())
        if top or bottom:
            option = QStyleOptionViewItem(option)
            option.rect = option.rect.adjusted(0, top, 0, -bottom)
        if not self._view.cell_marks.paint(self, self._view.horizontalHeader(), painter, option, index):
            super().paint(painter, option, index)


class TimelineView(QTableView):
    """The event table, with the sentinel marker drawn between rows and follow mode.

    The marker is a line between the sentinel's row and the next (above the first row when every
    shown event comes after it), carrying a tag ``⚑ sentinel · guarded replay: 10 applied · 1
    pending · 1 blocked`` (``check``'s counts, each state apart). Tags never cover data: the row
    they belong to grows by a strip of its own and its cells are painted in the rest
    (:meth:`row_insets`, :meth:`cell_rect`, :meth:`tag_rects`); the model stays one row per event.

    The memory server's next start has its own marks, in its own colour (never a state hue): a
    dashed outline around the row where its replay stops, with a tag in a strip above it
    (:data:`SERVER_STOP_TAG`), and a stripe at the left of each event it applies that our guarded
    replay would not (a full replay behind our sentinel, an event past the one where ours stops).
    Their tooltips say so.

    Cells that do not fit are elided in the middle; their tooltip starts with the full text.

    Follow mode keeps the newest row in view while the table is scrolled to the bottom. Scrolling
    up pauses it; :meth:`set_following` (one action) resumes it, as does scrolling back down.

    Signals:
        following_changed(bool): follow mode was paused or resumed.
    """

    following_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Several rows (Shift/Ctrl-click, Ctrl+A) for copies; the current row is the one the detail shows.
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)  # the rows' menu: timeline_menu
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # ids and types differ at both ends
        self.setShowGrid(False)
        self.setAlternatingRowColors(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        self.setItemDelegate(_InsetDelegate(self))
        vh = self.verticalHeader()
        vh.setVisible(False)
        # Fixed row heights keep a million rows cheap: no per-row size hints are asked for. Only
        # the rows carrying a tag strip are given another height (:meth:`refresh_marks`).
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self._row_height = QFontMetrics(self.font()).height() + 6
        vh.setDefaultSectionSize(self._row_height)
        self._insets: dict[int, tuple[int, int]] = {}
        self.cell_marks = TimelineCellMarks()  # find matches and bookmarks (the window sets them)
        self.horizontalHeader().setHighlightSections(False)
        self.auto_fit = True
        self._fitting = False
        self.horizontalHeader().sectionResized.connect(self._on_section_resized)
        self._following = True
        self._adjusting = False
        self._keep_state_colours_under_selection()
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    def setModel(self, model: Any) -> None:
        """Override: also lay the columns out for the timeline and follow the rows for the marks."""
        super().setModel(model)
        self.reset_columns()
        if model is not None:
            for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved, model.layoutChanged):
                signal.connect(self._on_rows_changed)
            model.dataChanged.connect(self.refresh_marks)

    @property
    def auto_fit(self) -> bool:
        """Whether the columns still follow the room there is (until the user resizes one, or a
        layout of theirs is restored): the header's one record of it, as every table keeps it."""
        return auto_fitted(self.horizontalHeader())

    @auto_fit.setter
    def auto_fit(self, on: bool) -> None:
        set_auto_fitted(self.horizontalHeader(), on)

    def reset_columns(self) -> None:
        """The default column layout: :data:`DEFAULT_ORDER`, every column shown, widths that fit
        the usual content (narrowed to the room there is, see :meth:`fit_columns`), the summary
        taking the room left."""
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        self._fitting = True
        try:
            for col in range(header.count()):
                header.setSectionHidden(col, False)
            for col, width in self._natural_widths().items():
                header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
                header.resizeSection(col, width)
            header.setSectionResizeMode(COL_SUMMARY, QHeaderView.ResizeMode.Stretch)
            for visual, col in enumerate(DEFAULT_ORDER):
                if col < header.count():
                    header.moveSection(header.visualIndex(col), visual)
        finally:
            self._fitting = False
        self.auto_fit = True
        self.fit_columns()

    def _natural_widths(self) -> dict[int, int]:
        """Each column's width for its content: Type and State for the rows there are (the
        widest State of a character with only applied events is "applied", issue 27 item 7), as
        Qt measures them (the rows around the shown ones, up to the header's precision); before
        any row, widths for the usual content."""
        fm = QFontMetrics(self.font())
        widths = {
            COL_INDEX: self._index_width(),
            COL_TIME: fm.horizontalAdvance("2026-04-23 12:00:00.000") + 12,
            COL_TYPE: fm.horizontalAdvance("reflection.evidence_updated") + 12,
            COL_ENTRY: fm.horizontalAdvance("ref_0123456789abcdef") + 10,
            COL_STATE: fm.horizontalAdvance("orphaned · archive_entry_lost") + 10,
        }
        model = self.model()
        if model is not None and model.rowCount() > 0:
            header = self.horizontalHeader()
            # Entry keeps its width for the usual id: ids are long and elide in the middle well.
            for col in (COL_TYPE, COL_STATE):
                title = header.fontMetrics().horizontalAdvance(str(model.headerData(col, Qt.Orientation.Horizontal)))
                widths[col] = max(self._content_width(col), title + 16)
        return widths

    def _content_width(self, col: int) -> int:
        """The widest text of column ``col`` among the rows Qt samples (those around the shown ones,
        up to the header's precision), in each row's font, with the delegate's margins."""
        model = self.model()
        rows = model.rowCount()
        precision = self.horizontalHeader().resizeContentsPrecision()
        first = max(0, self.rowAt(0))
        sampled = range(rows) if precision < 0 or rows <= precision else range(first, min(rows, first + precision))
        widest = 0
        # A column of a thousand rows holds a few distinct texts in a few fonts: each is measured
        # once (a QFontMetrics built and asked per row was most of a 1M-event opening's GUI time).
        measured: dict[tuple[str, str], int] = {}
        metrics: dict[str, QFontMetrics] = {}
        for r in sampled:
            index = model.index(r, col)
            text = index.data(Qt.ItemDataRole.DisplayRole)
            if text:
                font = index.data(Qt.ItemDataRole.FontRole) or self.font()
                key = (font.key(), str(text))
                width = measured.get(key)
                if width is None:
                    fm = metrics.get(key[0])
                    if fm is None:
                        fm = metrics[key[0]] = QFontMetrics(font)
                    width = measured[key] = fm.horizontalAdvance(key[1])
                widest = max(widest, width)
        return widest + TEXT_MARGINS + 2

    def _fit_to_rows(self) -> dict[int, int]:
        """Type and State at the widths of the rows now there (before :meth:`fit_columns`
        narrows them to the room); returns the natural widths it measured."""
        header = self.horizontalHeader()
        natural = self._natural_widths()
        self._fitting = True
        try:
            for col, width in natural.items():
                if col in (COL_TYPE, COL_STATE) and not header.isSectionHidden(col):
                    header.resizeSection(col, width)
        finally:
            self._fitting = False
        self.fit_columns(natural)
        return natural

    def fit_columns(self, natural: dict[int, int] | None = None) -> None:
        """While the user has not laid the columns out (:attr:`auto_fit`): Type, Entry and State take
        their natural widths, or less when that is what it takes for them and # to show without
        scrolling sideways (they elide in the middle; the tooltip has the full text)."""
        if not self.auto_fit or self.model() is None:
            return
        header = self.horizontalHeader()
        # ``natural``: the widths the caller just measured for the same rows (measuring samples a
        # thousand rows' cells; once per change is enough).
        natural = natural or self._natural_widths()
        fm = QFontMetrics(self.font())
        floors = {
            COL_TYPE: fm.horizontalAdvance("persona.fact"),
            COL_ENTRY: fm.horizontalAdvance("persona.fact"),
            COL_STATE: fm.horizontalAdvance("blocked · no_handler") + 10,
        }
        floors = {c: min(floor, natural[c]) for c, floor in floors.items()}  # never wider than the content
        shown = [c for c in (COL_INDEX, COL_TIME) if not header.isSectionHidden(c)]
        # Summary keeps about 20 characters and Time its width, and State (the verdict) its whole
        # text, as long as the floors of the others still fit; Type and Entry give way first.
        reserve = (fm.horizontalAdvance("x" * 20) if not header.isSectionHidden(COL_SUMMARY) else 0) + sum(
            header.sectionSize(c) for c in shown if c == COL_TIME
        )
        shrinkable = [c for c in floors if not header.isSectionHidden(c)]
        room = self.viewport().width() - sum(header.sectionSize(c) for c in shown if c == COL_INDEX)
        others = sum(floors[c] for c in shrinkable if c != COL_STATE)
        if COL_STATE in shrinkable and others + natural[COL_STATE] <= room:
            floors[COL_STATE] = max(floors[COL_STATE], natural[COL_STATE])
        # Then Type keeps its whole text while Entry gives way to its floor (an id elides in the
        # middle well, a type does not) and Summary to 12 characters: shrunk by one factor with
        # Entry, Type was cut at 1300 px though Entry's floor left it the room (issue 27).
        others = sum(floors[c] for c in shrinkable if c != COL_TYPE)
        least = reserve - (fm.horizontalAdvance("x" * 8) if not header.isSectionHidden(COL_SUMMARY) else 0)
        if COL_TYPE in shrinkable and others + natural[COL_TYPE] <= room - least:
            floors[COL_TYPE] = max(floors[COL_TYPE], natural[COL_TYPE])
        room = max(room - reserve, min(room, sum(floors[c] for c in shrinkable)))
        widths = fit_widths({c: natural[c] for c in shrinkable}, floors, room)
        self._fitting = True
        try:
            for c, width in widths.items():
                header.resizeSection(c, width)
        finally:
            self._fitting = False

    def _on_section_resized(self, col: int, _old: int, _new: int) -> None:
        # A width the user chose stays: no more fitting until "Reset columns".
        header = self.horizontalHeader()
        if not self._fitting and header.sectionResizeMode(col) != QHeaderView.ResizeMode.Stretch:
            self.auto_fit = False

    def _index_width(self) -> int:
        """Room for the largest event index of the timeline shown (at least three digits)."""
        model = self.model()
        tl = model.timeline if isinstance(model, EventTableModel) else None
        digits = max(3, len(str(max(0, len(tl.events) - 1)))) if tl is not None else 3
        return QFontMetrics(self.font()).horizontalAdvance("0" * digits) + 12

    def _on_rows_changed(self, *_args: Any) -> None:
        header = self.horizontalHeader()
        natural = self._fit_to_rows() if self.auto_fit else None
        # The # column grows with the journal (a 7-digit index is never cut), never shrinks under the user.
        if not header.isSectionHidden(COL_INDEX) and header.sectionSize(COL_INDEX) < self._index_width():
            self._fitting = True
            try:
                header.resizeSection(COL_INDEX, self._index_width())
            finally:
                self._fitting = False
            self.fit_columns(natural)  # the index width is in the widths measured above
        self.refresh_marks()

    def _keep_state_colours_under_selection(self, base: QPalette | None = None) -> None:
        # A translucent highlight lets the selected row keep showing its state colour.
        palette = QPalette(base) if base is not None else self.palette()
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            highlight = QColor(palette.color(group, QPalette.ColorRole.Highlight))
            highlight.setAlpha(110)
            palette.setColor(group, QPalette.ColorRole.Highlight, highlight)
            palette.setColor(group, QPalette.ColorRole.HighlightedText, palette.color(group, QPalette.ColorRole.Text))
        self.setPalette(palette)

    def restyle(self) -> None:
        """After a theme switch (:func:`inspector.widgets.theme.follow_theme`): the translucent
        highlight, from the application's palette (issue 27 item 9)."""
        self._keep_state_colours_under_selection(QPalette())

    def changeEvent(self, event: Any) -> None:
        """Override: re-derive the rows' height when the font changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the zoom: rows, strips and columns follow the font
            self._row_height, self._insets = QFontMetrics(self.font()).height() + 6, {}
            self.verticalHeader().setDefaultSectionSize(self._row_height)
            self.refresh_marks()
            self.fit_columns()

    def timeline_model(self) -> EventTableModel:
        model = self.model()
        assert isinstance(model, EventTableModel)
        return model

    # -- follow mode ---------------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._following

    def set_following(self, on: bool) -> None:
        """Resume (scrolling to the newest row) or pause follow mode."""
        if on:
            self._scroll_to_end()
        if on != self._following:
            self._following = on
            self.following_changed.emit(on)

    def _scroll_to_end(self) -> None:
        self._adjusting = True
        try:
            self.scrollToBottom()
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())
        finally:
            self._adjusting = False

    def _on_scroll_range_changed(self, _minimum: int, _maximum: int) -> None:
        # New rows grow the range without moving the value: keep the newest row in view.
        if self._following:
            self._scroll_to_end()

    def _on_scroll_value_changed(self, value: int) -> None:
        if self._adjusting:
            return
        at_bottom = value >= self.verticalScrollBar().maximum()
        if at_bottom != self._following:
            self._following = at_bottom
            self.following_changed.emit(at_bottom)

    # -- tag strips ---------------------------------------------------------------------------------

    def tags(self) -> list[Tag]:
        """The tags to draw: the sentinel's (under its row, or above the first row) and where the
        memory server's next start stops (above that row)."""
        model = self.model()
        tl = model.timeline if isinstance(model, EventTableModel) else None
        if tl is None or not isinstance(model, EventTableModel) or model.rowCount() == 0:
            return []
        out: list[Tag] = []
        pos = model.marker_position()
        if pos is not None:
            counts = model.sentinel_label()
            label = f"⚑ sentinel · guarded replay: {counts}" if counts else "⚑ sentinel"
            out.append(Tag(max(pos, 0), pos < 0, label, "sentinel"))
        ref = tl.server_stop_ref()
        stop_pos = model.position_of(ref) if ref is not None else None
        if stop_pos is not None:
            stop = tl.server_start.stop if tl.server_start is not None else None
            label = f"{SERVER_STOP_TAG} · {stop.reason}" if stop is not None and stop.reason else SERVER_STOP_TAG
            out.append(Tag(stop_pos, True, label, "server"))
        return out

    def strip_height(self) -> int:
        return QFontMetrics(self._tag_font()).height() + 6

    def row_insets(self, pos: int) -> tuple[int, int]:
        """The strips above and below row ``pos``'s cells, in pixels (``(0, 0)``: none)."""
        return self._insets.get(pos, (0, 0))

    def refresh_marks(self, *_args: Any) -> None:
        """Give the rows carrying a tag their strips (and the others their plain height) and repaint;
        called when rows, states or the sentinel change."""
        strip = self.strip_height()
        insets: dict[int, tuple[int, int]] = {}
        for tag in self.tags():
            top, bottom = insets.get(tag.pos, (0, 0))
            insets[tag.pos] = (top + strip, bottom) if tag.top else (top, bottom + strip)
        if insets != self._insets:
            vh = self.verticalHeader()
            rows = self.model().rowCount() if self.model() is not None else 0
            for pos in self._insets.keys() - insets.keys():
                if pos < rows:
                    vh.resizeSection(pos, self._row_height)
            for pos, (top, bottom) in insets.items():
                vh.resizeSection(pos, self._row_height + top + bottom)
            self._insets = insets
        self.viewport().update()

    def cell_rect(self, index: QModelIndex) -> QRect:
        """Where a cell's content is painted, in viewport coordinates (its row minus its strips)."""
        top, bottom = self.row_insets(index.row())
        return self.visualRect(index).adjusted(0, top, 0, -bottom)

    def tag_rects(self) -> list[tuple[Tag, QRect]]:
        """Each tag with its strip, in viewport coordinates (whether on screen or not)."""
        strip = self.strip_height()
        out: list[tuple[Tag, QRect]] = []
        above: dict[int, int] = {}
        below: dict[int, int] = {}
        for tag in self.tags():
            row_top = self.rowViewportPosition(tag.pos)
            top_inset, _ = self.row_insets(tag.pos)
            if tag.top:
                y = row_top + above.get(tag.pos, 0)
                above[tag.pos] = above.get(tag.pos, 0) + strip
            else:
                y = row_top + top_inset + self._row_height + below.get(tag.pos, 0)
                below[tag.pos] = below.get(tag.pos, 0) + strip
            out.append((tag, QRect(0, y, self.viewport().width(), strip)))
        return out

    def tag_box(self, label: str, strip: QRect) -> QRect:
        """The rounded box of a tag inside its strip."""
        fm = QFontMetrics(self._tag_font())
        return QRect(SERVER_STRIPE + 4, strip.top() + 2, fm.horizontalAdvance(label) + 14, strip.height() - 4)

    def sentinel_marker_rect(self) -> QRect | None:
        """Where the marker line is drawn in viewport coordinates (``None``: not on screen / none)."""
        for tag, strip in self.tag_rects():
            if tag.kind == "sentinel":
                if strip.bottom() < 0 or strip.top() > self.viewport().height():
                    return None
                y = strip.center().y()
                return QRect(0, y - MARKER_PEN // 2, self.viewport().width(), MARKER_PEN)
        return None

    # -- the memory server's marks ----------------------------------------------------------------

    def server_stop_rect(self) -> QRect | None:
        """The row where the memory server's next start stops (its strip included), in viewport
        coordinates (``None``: it does not stop, the row is filtered out, or it is not on screen)."""
        for tag in self.tags():
            if tag.kind == "server":
                top = self.rowViewportPosition(tag.pos)
                h = self.rowHeight(tag.pos)
                if top + h < 0 or top > self.viewport().height():
                    return None
                return QRect(0, top, self.viewport().width(), h)
        return None

    def server_only_positions(self) -> list[int]:
        """Model rows on screen whose event the server's next start applies and ours would not."""
        model = self.model()
        tl = model.timeline if isinstance(model, EventTableModel) else None
        if tl is None or not isinstance(model, EventTableModel) or model.rowCount() == 0:
            return []
        s = tl.server_start
        if s is None or s.start_index is None:
            return []
        first = self.rowAt(0)
        last = self.rowAt(self.viewport().height() - 1)
        first = 0 if first < 0 else first
        last = model.rowCount() - 1 if last < 0 else last
        return [p for p in range(first, last + 1) if tl.server_only(model.ref_at(p))]

    def _paint_marks(self, painter: QPainter) -> None:
        server = server_color(self.palette())
        for pos in self.server_only_positions():
            top, bottom = self.row_insets(pos)
            y = self.rowViewportPosition(pos) + top
            painter.fillRect(QRect(0, y, SERVER_STRIPE, self.rowHeight(pos) - top - bottom), server)
        stop = self.server_stop_rect()
        if stop is not None:
            top, bottom = self.row_insets(self.rowAt(stop.top() + stop.height() // 2))
            painter.setPen(QPen(server, 2, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(stop.adjusted(1, top + 1, -2, -bottom - 2))
        height = self.viewport().height()
        for tag, strip in self.tag_rects():
            if strip.bottom() < 0 or strip.top() > height:
                continue
            color = self._marker_color() if tag.kind == "sentinel" else server
            painter.fillRect(strip, self.palette().color(QPalette.ColorRole.Base))
            if tag.kind == "sentinel":
                painter.setPen(QPen(color, MARKER_PEN))
                painter.drawLine(0, strip.center().y(), strip.width(), strip.center().y())
            painter.setFont(self._tag_font())
            self._draw_tag(painter, self.tag_box(tag.label, strip), tag.label, color)

    def _tag_font(self) -> QFont:
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        return font

    @staticmethod
    def _draw_tag(painter: QPainter, box: QRect, label: str, color: QColor) -> None:
        """A rounded tag filled with ``color``, ``label`` centred in a readable colour."""
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(readable_on(color))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    # -- tooltips -------------------------------------------------------------------------------------

    def is_elided(self, index: QModelIndex) -> bool:
        """Whether the cell's text is wider than the cell (so it is shown elided in the middle)."""
        text = index.data(Qt.ItemDataRole.DisplayRole)
        if not text:
            return False
        font = index.data(Qt.ItemDataRole.FontRole) or self.font()
        return QFontMetrics(font).horizontalAdvance(str(text)) > self.columnWidth(index.column()) - TEXT_MARGINS

    def tooltip_at(self, point: Any) -> str:
        """The tooltip at a viewport point: a tag's meaning, or a cell's full text (when elided),
        what the memory server's next start does with its row, and our guarded replay's word."""
        for tag, strip in self.tag_rects():
            if strip.contains(point):
                return _TAG_TIPS[tag.kind]
        model = self.model()
        index = self.indexAt(point)
        tl = model.timeline if isinstance(model, EventTableModel) else None
        if not index.isValid() or tl is None or not isinstance(model, EventTableModel):
            return ""
        own = model.data(index, Qt.ItemDataRole.ToolTipRole) or ""
        note = tl.server_note(model.ref_at(index.row()))
        tip = f"{note}\n\nGuarded replay (memory-inspector):\n{own}" if note else own
        if self.is_elided(index):
            tip = f"{index.data(Qt.ItemDataRole.DisplayRole)}\n\n{tip}" if tip else str(index.data())
        return tip

    def viewportEvent(self, event: QEvent) -> bool:
        """Override: tooltips from :meth:`tooltip_at`; columns refitted to a new width."""
        if event.type() == QEvent.Type.Resize:
            self.fit_columns()
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.tooltip_at(event.pos())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    #: Shown in the empty timeline while no character is open (set by the window).
    empty_text = ""

    def paintEvent(self, event: Any) -> None:
        """Override: paint the rows, then the memory server's marks and the tag strips; with no
        character open, what to do instead."""
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        model = self.model()
        if self.empty_text and isinstance(model, EventTableModel) and model.timeline is None:
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            box = self.viewport().rect().adjusted(24, 24, -24, -24)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.empty_text)
        self._paint_marks(painter)
        painter.end()

    def _marker_color(self) -> QColor:
        # The sentinel is the processing cursor: drawn in the palette's highlight, never a state hue.
        color = QColor(self.palette().color(QPalette.ColorRole.Highlight))
        color.setAlpha(255)
        return color


_TAG_TIPS = {
    "sentinel": "The sentinel: events above this line are applied, the ones below are pending "
    "(our guarded replay's count, memory-inspector).",
    "server": "The memory server's next start stops at the event below (outlined): it applies nothing after it.",
}
