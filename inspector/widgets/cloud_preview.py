"""File ▸ Compare with ▸ Cloud save…: what downloading a cloud-save unit into the character shown
would do, in the words ``memory-inspector cloud --against`` prints (the one renderer,
:mod:`inspector.core.cloud_report`). A tool window that only shows; nothing is written."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from inspector.core.cloud_report import CloudPreview
from inspector.core.redaction import redact_message
from inspector.widgets.screen_fit import fit_to_screen

TITLE = "Download preview"


class CloudPreviewPanel(QDialog):
    """The download preview of one unit into the character shown.

    Attributes:
        heading: what a download would do, in one sentence.
        text: every line, monospace, read-only (redacted while the window redacts).
    """

    def __init__(self, preview: CloudPreview, *, redact: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = preview
        self.setWindowTitle(f"{TITLE} — {preview.character}")
        layout = QVBoxLayout(self)
        verdict = "would change this folder" if preview.changes else "would change nothing"
        self.heading = QLabel(
            f"<b>A download of the cloud save {verdict}.</b> Predicted from a scratch copy; nothing is written."
        )
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.set_redact(redact)
        fit_to_screen(self, QSize(1100, 720))

    def set_redact(self, on: bool) -> None:
        """Show the lines redacted (View ▸ Redact text) or as they are."""
        lines = [redact_message(ln) if on else ln for ln in self.preview.lines]
        self.text.setPlainText("\n".join(lines))
