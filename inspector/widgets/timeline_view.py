"""The timeline: a virtualised table with the sentinel drawn on it, follow mode, and its legend."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
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

#: Thickness of the sentinel line, in pixels.
MARKER_PEN = 3


class TimelineView(QTableView):
    """The event table, with the sentinel marker painted between rows and follow mode.

    The marker is a line under the sentinel's row (above the first row when every shown event
    comes after it), with a tag saying ``sentinel · N applied · M pending``; it is painted, not a
    row, so the model stays one row per event.

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

    def paintEvent(self, event: Any) -> None:
        """Override: paint the rows, then the sentinel marker over them."""
        super().paintEvent(event)
        rect = self.sentinel_marker_rect()
        if rect is None:
            return
        model = self.timeline_model()
        color = self._marker_color()
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(color, MARKER_PEN))
        y = rect.center().y()
        painter.drawLine(0, y, rect.width(), y)
        label = f"⚑ sentinel · {model.sentinel_label()}" if model.sentinel_label() else "⚑ sentinel"
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        painter.setFont(font)
        fm = QFontMetrics(font)
        w = fm.horizontalAdvance(label) + 14
        h = fm.height() + 4
        x = max(4, rect.width() - w - 12)
        top = max(0, y - h // 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(QRect(x, top, w, h), 4, 4)
        painter.setPen(readable_on(color))
        painter.drawText(QRect(x, top, w, h), Qt.AlignmentFlag.AlignCenter, label)
        painter.end()

    def _marker_color(self) -> QColor:
        # The sentinel is the processing cursor: drawn in the palette's highlight, never a state hue.
        color = QColor(self.palette().color(QPalette.ColorRole.Highlight))
        color.setAlpha(255)
        return color


class SentinelBar(QFrame):
    """Above the timeline: where the sentinel is, the counts, and a jump button; a warning banner
    when the sentinel is missing, malformed, null or names an unknown event.

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
        self.label = QLabel("No folder open")
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

    def set_state(self, state: SentinelState | None, position_text: str = "") -> None:
        self.state = state
        if state is None:
            self.label.setText("No folder open")
            self.jump.setEnabled(False)
            self._set_warning(False)
            return
        banner = state.banner_text()
        if banner is not None:
            self.label.setText(banner)
            self.jump.setEnabled(False)
            self._set_warning(True)
            return
        self.label.setText(f"<b>Sentinel</b> at {position_text} &nbsp;·&nbsp; {state.counts_text()}")
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
    """Colour chips naming each row state, drawn with the same colours as the rows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(6)
        layout.addWidget(QLabel("Legend:"))
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
    "pending": "After the sentinel: replay would apply it.",
    "blocked": "The first pending event replay cannot apply: it stops here.",
    "orphaned": "Behind the sentinel, yet replay never applied it (no handler, or its archived entry is lost).",
    "suspect": "Behind the sentinel, but applying it again would still change the view (heuristic).",
    "damaged": "A journal line that is not an intact event: malformed, torn, or a glued fragment.",
}
