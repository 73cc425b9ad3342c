"""The timeline: a virtualised table with the sentinel drawn on it, follow mode, and its legend."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QToolTip,
    QWidget,
)

from inspector.core.timeline import SentinelState
from inspector.models.colors import STATE_LABELS, accent_color, blend, readable_on, state_color
from inspector.models.timeline_model import (
    COL_ENTRY,
    COL_INDEX,
    COL_STATE,
    COL_SUMMARY,
    COL_TIME,
    COL_TYPE,
    EventTableModel,
)
from inspector.widgets import icons
from inspector.widgets.server_start import server_color

#: Thickness of the sentinel line, in pixels.
MARKER_PEN = 3

#: Width of the stripe on events the memory server's next start applies and our guarded replay
#: would not (left edge of the row), in pixels.
SERVER_STRIPE = 4

#: The tag on the row where the memory server's next start stops.
SERVER_STOP_TAG = "■ memory server stops here"

#: The title of the sentinel bar: these counts are our guarded replay's, not the server's.
GUARDED_TITLE = "Guarded replay (memory-inspector, only if you run it)"


class TimelineView(QTableView):
    """The event table, with the sentinel marker painted between rows and follow mode.

    The marker is a line under the sentinel's row (above the first row when every shown event
    comes after it), with a tag saying ``sentinel · guarded replay: N applied · M pending``; it is
    painted, not a row, so the model stays one row per event.

    The memory server's next start has its own marks, in its own colour (never a state hue): a
    dashed outline and a tag on the row where its replay stops (:data:`SERVER_STOP_TAG`), and a
    stripe at the left of each event it applies that our guarded replay would not (a full replay
    behind our sentinel, an event past the one where ours stops). Their tooltips say so.

    Follow mode keeps the newest row in view while the table is scrolled to the bottom. Scrolling
    up pauses it; :meth:`set_following` (one action) resumes it, as does scrolling back down.

    Signals:
        following_changed(bool): follow mode was paused or resumed.
    """

    following_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setShowGrid(False)
        self.setAlternatingRowColors(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        vh = self.verticalHeader()
        vh.setVisible(False)
        # Fixed row heights keep a million rows cheap: no per-row size hints are asked for.
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(QFontMetrics(self.font()).height() + 6)
        self.horizontalHeader().setHighlightSections(False)
        self._following = True
        self._adjusting = False
        self._keep_state_colours_under_selection()
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    def setModel(self, model: Any) -> None:
        """Override: also size the columns for the timeline."""
        super().setModel(model)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        fm = QFontMetrics(self.font())
        widths = {
            COL_INDEX: fm.horizontalAdvance("000000") + 10,
            COL_TIME: fm.horizontalAdvance("04-23 12:00:00.000") + 12,
            COL_TYPE: fm.horizontalAdvance("reflection.evidence_updated") + 12,
            COL_ENTRY: fm.horizontalAdvance("ref_0123456789abcdef") + 10,
            COL_STATE: fm.horizontalAdvance("blocked · no_hand") + 10,
        }
        for col, width in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_SUMMARY, QHeaderView.ResizeMode.Stretch)

    def _keep_state_colours_under_selection(self) -> None:
        # A translucent highlight lets the selected row keep showing its state colour.
        palette = self.palette()
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            highlight = QColor(palette.color(group, QPalette.ColorRole.Highlight))
            highlight.setAlpha(110)
            palette.setColor(group, QPalette.ColorRole.Highlight, highlight)
            palette.setColor(group, QPalette.ColorRole.HighlightedText, palette.color(group, QPalette.ColorRole.Text))
        self.setPalette(palette)

    def changeEvent(self, event: Any) -> None:
        """Override: re-derive the translucent highlight when the theme changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self.setPalette(QPalette())
            self._keep_state_colours_under_selection()

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

    # -- the sentinel marker ----------------------------------------------------------------------------

    def sentinel_marker_rect(self) -> QRect | None:
        """Where the marker line is drawn in viewport coordinates (``None``: not on screen / none)."""
        model = self.model()
        if not isinstance(model, EventTableModel):
            return None
        pos = model.marker_position()
        if pos is None or model.rowCount() == 0:
            return None
        if pos < 0:
            y = self.rowViewportPosition(0)
        else:
            top = self.rowViewportPosition(pos)
            if top < -self.rowHeight(pos):
                return None
            y = top + self.rowHeight(pos)
        if y < -MARKER_PEN or y > self.viewport().height() + MARKER_PEN:
            return None
        return QRect(0, y - MARKER_PEN // 2 - 1, self.viewport().width(), MARKER_PEN)

    # -- the memory server's marks ----------------------------------------------------------------

    def server_stop_rect(self) -> QRect | None:
        """The row where the memory server's next start stops, in viewport coordinates (``None``:
        it does not stop, the row is filtered out, or it is not on screen)."""
        model = self.model()
        tl = model.timeline if isinstance(model, EventTableModel) else None
        if tl is None or not isinstance(model, EventTableModel):
            return None
        ref = tl.server_stop_ref()
        pos = model.position_of(ref) if ref is not None else None
        if pos is None:
            return None
        top = self.rowViewportPosition(pos)
        h = self.rowHeight(pos)
        if top + h < 0 or top > self.viewport().height():
            return None
        return QRect(0, top, self.viewport().width(), h)

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

    def _paint_server_marks(self, painter: QPainter) -> None:
        color = server_color(self.palette())
        for pos in self.server_only_positions():
            painter.fillRect(QRect(0, self.rowViewportPosition(pos), SERVER_STRIPE, self.rowHeight(pos)), color)
        rect = self.server_stop_rect()
        if rect is None:
            return
        tl = self.timeline_model().timeline
        stop = tl.server_start.stop if tl is not None and tl.server_start is not None else None
        pen = QPen(color, 2, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect.adjusted(1, 1, -2, -2))
        label = f"{SERVER_STOP_TAG} · {stop.reason}" if stop is not None and stop.reason else SERVER_STOP_TAG
        w, h = self._tag_size(painter, label, 0.8, 12, 2)
        # Above the row (over the bottom of the one before it), so the stop row itself stays readable;
        # inside it only when it is the first row on screen.
        top = rect.top() - h if rect.top() - h >= 0 else rect.top() + 1
        self._draw_tag(painter, QRect(SERVER_STRIPE + 2, top, w, h), label, color)

    def _tag_size(self, painter: QPainter, label: str, scale: float, pad_w: int, pad_h: int) -> tuple[int, int]:
        """Set the painter's font for a tag (bold, ``scale`` × the view's) and size the tag for ``label``."""
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() * scale))
        painter.setFont(font)
        fm = QFontMetrics(font)
        return fm.horizontalAdvance(label) + pad_w, fm.height() + pad_h

    @staticmethod
    def _draw_tag(painter: QPainter, box: QRect, label: str, color: QColor) -> None:
        """A rounded tag filled with ``color``, ``label`` centred in a readable colour."""
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(readable_on(color))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    def viewportEvent(self, event: QEvent) -> bool:
        """Override: a row's tooltip also says what the memory server's next start does with it."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            model = self.model()
            index = self.indexAt(event.pos())
            tl = model.timeline if isinstance(model, EventTableModel) else None
            if index.isValid() and tl is not None and isinstance(model, EventTableModel):
                note = tl.server_note(model.ref_at(index.row()))
                if note:
                    own = model.data(index, Qt.ItemDataRole.ToolTipRole) or ""
                    QToolTip.showText(event.globalPos(), f"{note}\n\nGuarded replay (memory-inspector):\n{own}", self)
                    return True
        return super().viewportEvent(event)

    #: Shown in the empty timeline while no character is open (set by the window).
    empty_text = ""

    def paintEvent(self, event: Any) -> None:
        """Override: paint the rows, the memory server's marks, then the sentinel marker over them;
        with no character open, what to do instead."""
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        model = self.model()
        if self.empty_text and isinstance(model, EventTableModel) and model.timeline is None:
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            box = self.viewport().rect().adjusted(24, 24, -24, -24)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.empty_text)
        self._paint_server_marks(painter)
        rect = self.sentinel_marker_rect()
        if rect is None:
            painter.end()
            return
        model = self.timeline_model()
        color = self._marker_color()
        painter.setPen(QPen(color, MARKER_PEN))
        y = rect.center().y()
        painter.drawLine(0, y, rect.width(), y)
        counts = model.sentinel_label()
        label = f"⚑ sentinel · guarded replay: {counts}" if counts else "⚑ sentinel"
        w, h = self._tag_size(painter, label, 0.9, 14, 4)
        self._draw_tag(painter, QRect(max(4, rect.width() - w - 12), max(0, y - h // 2), w, h), label, color)
        painter.end()

    def _marker_color(self) -> QColor:
        # The sentinel is the processing cursor: drawn in the palette's highlight, never a state hue.
        color = QColor(self.palette().color(QPalette.ColorRole.Highlight))
        color.setAlpha(255)
        return color


class SentinelBar(QFrame):
    """Above the timeline, under the memory server's panel: what *our guarded replay* makes of the
    folder (its title says so): where the sentinel is, where our replay stops, the counts, and a
    jump button; a warning banner when the sentinel is missing, malformed, null or names an
    unknown event.

    Signals:
        jump_requested: the user wants the sentinel row selected.
    """

    jump_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SentinelBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 3, 4, 3)
        self.icon = QLabel()
        self.icon.setPixmap(icons.icon(icons.SENTINEL, self.palette()).pixmap(16, 16))
        self.label = QLabel()
        self.label.setToolTip(
            "What our stricter journal library's guarded replay would do (Tools menu). It is not what the "
            "memory server's next start does: that is the panel above."
        )
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setWordWrap(True)
        self.jump = QPushButton(icons.icon(icons.SENTINEL, self.palette()), "Jump to sentinel")
        self.jump.setToolTip("Select the event the sentinel points at (Ctrl+J)")
        self.jump.clicked.connect(self.jump_requested)
        layout.addWidget(self.icon)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.jump)
        self.state: SentinelState | None = None
        self.set_state(None)

    def set_state(self, state: SentinelState | None, position_text: str = "", stop_text: str = "") -> None:
        """Show ``state``; ``stop_text`` says where our guarded replay stops (``""``: it does not)."""
        self.state = state
        if state is None:
            self.label.setText(f"<b>{GUARDED_TITLE}:</b> no folder open")
            self.jump.setEnabled(False)
            self._set_warning(False)
            return
        title = f"<b>{GUARDED_TITLE}:</b> "
        banner = state.banner_text()
        if banner is not None:
            self.label.setText(title + (f"{stop_text} · {banner}" if stop_text else banner))
            self.jump.setEnabled(False)
            self._set_warning(True)
            return
        stops = f"{stop_text} &nbsp;·&nbsp; " if stop_text else ""
        self.label.setText(f"{title}sentinel at {position_text} &nbsp;·&nbsp; {stops}{state.counts_text()}")
        self.jump.setEnabled(True)
        self._set_warning(False)

    @property
    def warning(self) -> bool:
        return bool(self.property("warning"))

    def _set_warning(self, on: bool) -> None:
        self.setProperty("warning", on)
        palette = QPalette()
        if on:
            window = palette.color(QPalette.ColorRole.Window)
            palette.setColor(QPalette.ColorRole.Window, blend(window, accent_color(palette, "blocked"), 0.35))
        self.setAutoFillBackground(on)
        self.setPalette(palette)


class StateLegend(QWidget):
    """Colour chips naming each row state (our guarded replay's), drawn with the same colours as
    the rows. The memory server's own marks are explained in its panel (:mod:`server_start`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(6)
        layout.addWidget(QLabel("Guarded replay:"))
        self.chips: dict[str, QLabel] = {}
        for state in ("applied", "pending", "blocked", "orphaned", "suspect", "damaged"):
            chip = QLabel(STATE_LABELS[state])
            chip.setObjectName(f"legend-{state}")
            chip.setAutoFillBackground(True)
            chip.setContentsMargins(6, 1, 6, 1)
            chip.setToolTip(_LEGEND_TIPS[state])
            self.chips[state] = chip
            layout.addWidget(chip)
        layout.addStretch(1)
        self.apply_palette(self.palette())

    def apply_palette(self, palette: QPalette) -> None:
        for state, chip in self.chips.items():
            p = QPalette(palette)
            color = state_color(palette, state)
            if color is not None:
                p.setColor(QPalette.ColorRole.Window, color)
            chip.setPalette(p)


_LEGEND_TIPS = {
    "applied": "At or before the sentinel, and its effect is in the views.",
    "pending": "After the sentinel: our guarded replay would apply it.",
    "blocked": "The first pending event our guarded replay cannot apply: it stops here.",
    "orphaned": "Behind the sentinel, yet it was never applied (no handler, or its archived entry is lost).",
    "suspect": "Behind the sentinel, but applying it again would still change the view (heuristic).",
    "damaged": "A journal line that is not an intact event: malformed, torn, or a glued fragment.",
}
