"""The bars around the timeline: above it, under the memory server's panel, what *our guarded
replay* makes of the folder (:class:`SentinelBar`); under it, the colours of the row states
(:class:`StateLegend`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QPushButton, QWidget

from inspector.core.timeline import ROW_STATES, UNCHECKED, SentinelState
from inspector.models.colors import STATE_LABELS, accent_color, blend, state_color
from inspector.widgets import icons
from inspector.widgets.screen_fit import ElidingLabel

#: The title of the sentinel bar: these counts are our guarded replay's, not the server's.
GUARDED_TITLE = "Guarded replay (memory-inspector, only if you run it)"


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
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(8, 3, 4, 3)
        self._grid.setVerticalSpacing(1)
        self.icon = QLabel()
        icons.set_icon(self.icon, icons.SENTINEL, self.palette(), 16)
        tip = (
            "What our stricter journal library's guarded replay would do (Tools menu). It is not what the "
            "memory server's next start does: that is the panel above."
        )
        # One line each, cut with "…" and whole on hover: a long entry id or entity name was clipped
        # (a word too long to wrap), and wrapped lines took the timeline's rows in a small window
        # (issue 27). The title is cut at its end; the facts in the middle, as ids differ at both ends;
        # a narrow bar puts the facts on a line of their own (:meth:`resizeEvent`).
        self.title = ElidingLabel(f"{GUARDED_TITLE}:")
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.title.min_chars = len("Guarded replay")
        self.title.setToolTip(tip)
        self.label = ElidingLabel(mode=Qt.TextElideMode.ElideMiddle)
        self.label.min_chars = 12
        self.label.setToolTip(tip)
        self.jump = QPushButton("Jump to sentinel")
        icons.set_icon(self.jump, icons.SENTINEL, self.palette())
        self.jump.setToolTip("Select the event the sentinel points at (Ctrl+J)")
        self.jump.clicked.connect(self.jump_requested)
        self.one_line: bool | None = None
        self._arrange(True)
        self.state: SentinelState | None = None
        self.set_state(None)

    def set_state(self, state: SentinelState | None, position_text: str = "", stop_text: str = "") -> None:
        """Show ``state``; ``stop_text`` says where our guarded replay stops (``""``: it does not)."""
        self._say(state, position_text, stop_text)
        if self.width() > 0:
            self._arrange(self._one_line_width() <= self.width())

    def _say(self, state: SentinelState | None, position_text: str, stop_text: str) -> None:
        self.state = state
        if state is None:
            self.label.setText("no folder open")
            self.jump.setEnabled(False)
            self._set_warning(False)
            return
        banner = state.banner_text()
        if banner is not None:
            self.label.setText(f"{stop_text} · {banner}" if stop_text else banner)
            self.jump.setEnabled(False)
            self._set_warning(True)
            return
        stops = f"{stop_text}  ·  " if stop_text else ""
        self.label.setText(f"sentinel at {position_text}  ·  {stops}{state.counts_text()}")
        self.jump.setEnabled(True)
        self._set_warning(False)

    def plain_text(self) -> str:
        """What the bar says, its title first, as one line of plain text."""
        return f"{self.title.text()} {self.label.text()}"

    def _arrange(self, one_line: bool) -> None:
        """Icon, title, facts and button on one line; or the facts on a second line, under them."""
        if one_line == self.one_line:
            return
        self.one_line = one_line
        grid = self._grid
        while grid.count():
            grid.takeAt(0)
        grid.addWidget(self.icon, 0, 0)
        grid.addWidget(self.title, 0, 1)
        if one_line:
            grid.addWidget(self.label, 0, 2)
            grid.addWidget(self.jump, 0, 3)
        else:
            grid.addWidget(self.jump, 0, 3)
            grid.addWidget(self.label, 1, 1, 1, 3)
        for col, stretch in enumerate((0, 0, 1, 0)):
            grid.setColumnStretch(col, stretch)

    def _one_line_width(self) -> int:
        m = self._grid.contentsMargins()
        parts = (self.icon, self.title, self.label, self.jump)
        gap = self._grid.horizontalSpacing()
        return m.left() + m.right() + sum(w.sizeHint().width() for w in parts) + gap * (len(parts) - 1)

    def minimumSizeHint(self) -> QSize:
        """Override: the two-line arrangement's width, whichever is shown (the bar never widens
        the window)."""
        m = self._grid.contentsMargins()
        gap = self._grid.horizontalSpacing()
        top = self.icon.sizeHint().width() + self.title.minimumSizeHint().width() + self.jump.sizeHint().width()
        width = m.left() + m.right() + max(top + 2 * gap, self.label.minimumSizeHint().width())
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Override: one line when all of it fits whole, else the facts on a line of their own."""
        super().resizeEvent(event)
        self._arrange(self._one_line_width() <= event.size().width())

    @property
    def warning(self) -> bool:
        return bool(self.property("warning"))

    def restyle(self) -> None:
        """After a theme switch: the warning tint (issue 27 item 9)."""
        self._set_warning(self.warning)

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
    the rows. The memory server's own marks are explained in its panel (:mod:`server_start`).

    A narrow window first drops the title (each chip's tooltip says whose state it is), then puts
    the chips on as few rows as fit: the legend never sets the window's minimum width beyond three
    chips.
    """

    #: Chips per row when they do not fit on one.
    NARROW_COLUMNS = 3

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(4, 2, 4, 2)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(2)
        self.title = QLabel("Guarded replay:")
        self.chips: dict[str, QLabel] = {}
        for state in (*ROW_STATES, UNCHECKED):
            chip = QLabel(STATE_LABELS.get(state, state))
            chip.setObjectName(f"legend-{state}")
            chip.setAutoFillBackground(True)
            chip.setContentsMargins(6, 1, 6, 1)
            chip.setToolTip(f"Guarded replay (memory-inspector): {_LEGEND_TIPS[state]}")
            self.chips[state] = chip
        self._mode: tuple[int, bool] | None = None
        self._arrange(len(self.chips), True)
        self.apply_palette(self.palette())

    def _arrange(self, columns: int, title: bool) -> None:
        if (columns, title) == self._mode:
            return
        self._mode = (columns, title)
        while self._grid.count():
            self._grid.takeAt(0)
        self.title.setVisible(title)
        offset = 1 if title else 0
        if title:
            self._grid.addWidget(self.title, 0, 0)
        for i, chip in enumerate(self.chips.values()):
            self._grid.addWidget(chip, i // columns, offset + i % columns)
        for col in range(self._grid.columnCount()):
            self._grid.setColumnStretch(col, 0)
        self._grid.setColumnStretch(offset + columns, 1)

    def _row_width(self, chips: list[QLabel], title: bool) -> int:
        m = self._grid.contentsMargins()
        gap = self._grid.horizontalSpacing()
        widgets = [*([self.title] if title else []), *chips]
        return m.left() + m.right() + sum(w.sizeHint().width() for w in widgets) + gap * (len(widgets) - 1)

    def _grid_width(self, columns: int) -> int:
        """The width of the chips on rows of ``columns``, without the title: a grid's column is as
        wide as its widest chip, on whichever row."""
        chips = list(self.chips.values())
        m = self._grid.contentsMargins()
        widths = [max(c.sizeHint().width() for c in chips[col::columns]) for col in range(min(columns, len(chips)))]
        return m.left() + m.right() + sum(widths) + self._grid.horizontalSpacing() * (len(widths) - 1)

    def minimumSizeHint(self) -> Any:
        """Override: the width of the narrow arrangement."""
        return QSize(self._grid_width(self.NARROW_COLUMNS), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Override: one row with the title when it fits, else one row of chips, else two rows."""
        super().resizeEvent(event)
        width = event.size().width()
        chips = list(self.chips.values())
        if self._row_width(chips, True) <= width:
            self._arrange(len(chips), True)
            return
        # As many chips a row as fit whole (fewer rows leave the timeline more of a short window),
        # at least :attr:`NARROW_COLUMNS`.
        n = next((n for n in range(len(chips), self.NARROW_COLUMNS, -1) if self._grid_width(n) <= width), 0)
        self._arrange(n or self.NARROW_COLUMNS, False)

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
    UNCHECKED: "Changed since the last diagnosis (appended, or after a sentinel that moved): its state is "
    "shown once the folder is diagnosed again, in a moment. Counted nowhere until then.",
}
