"""A job's place in the status bar: what runs, its progress, and Cancel (copies, exports, support
bundles, comparisons, an entry's history)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from inspector.widgets import icons


class JobIndicator(QWidget):
    """In the status bar while a copy or export runs: what it does, its progress, and Cancel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setMaximumWidth(160)
        self.cancel_button = QToolButton(self)
        icons.set_icon(self.cancel_button, icons.CANCEL, self.palette())
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Cancel the copy or export (nothing is written)")
        self.cancel_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for w in (self.label, self.bar, self.cancel_button):
            layout.addWidget(w)
        self.hide()

    def start(self, what: str) -> None:
        self.label.setText(what)
        self.bar.setRange(0, 0)
        self.show()

    def set_progress(self, done: int, total: int) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
