"""The support bundle's confirmation: where it goes, what is redacted, and the choice not to redact.

Behind a classmethod ``ask`` returning a plain value, so tests patch ``ask`` and never drive a
modal ``exec()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from inspector.widgets.screen_fit import fit_to_screen, screen_limit

#: What the dialog says is redacted (the README's "What is kept, per file kind" is the full list).
REDACTION_TEXT = (
    "<p><b>Redacted (the default):</b> every text that is not known to be structure: entry texts, "
    "chat messages, names, notes, anything under an unknown key. Each becomes a "
    "<code>‹text · N chars›</code> token. Values derived from text (text hashes, ids built from "
    "them) are keyed by your secret, which stays on this computer; embeddings are dropped. Ids, "
    "timestamps, states, numbers and the folder's structure are kept, so the bundle still "
    "diagnoses as the folder does.</p>"
)

#: What the dialog says of the chat history (``time_indexed.db``, left out unless ticked).
CHAT_TEXT = (
    "<p><b>Chat history:</b> <code>time_indexed.db</code> is left out unless you tick it. Ticked, it "
    "goes in rebuilt from a private copy, every message keyed like any text while redacting.</p>"
)


@dataclass(frozen=True, slots=True)
class BundleChoice:
    """What the person chose: redact (the default), and include the chat history (not by default)."""

    redact: bool = True
    include_chat: bool = False


#: What the dialog says when the box is unticked.
NOT_REDACTED_TEXT = (
    "<p><b>Not redacted:</b> the files are copied as they are, with every text in them, and the "
    "manifest records <code>\"redacted\": false</code>.</p>"
)


class BundleOptionsDialog(QDialog):
    """Confirm File ▸ Export support bundle: the input and output, and whether to redact.

    Attributes:
        redact_box: the "Redact" check box (ticked at first).
        chat_box: the "Include the chat history" check box (unticked at first).
        warning: the not-redacted warning, shown while the box is unticked.
        buttons: Export and Cancel.
    """

    def __init__(self, source: str, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export support bundle")
        layout = QVBoxLayout(self)
        where = QLabel(f"Pack <b>{escape(source)}</b> into<br><code>{escape(target)}</code>")
        where.setWordWrap(True)
        where.setMinimumWidth(1)  # a long path wraps instead of widening the dialog
        contents = QLabel(
            "The bundle holds the diagnosis (<code>check.json</code>, <code>check.txt</code>) and each "
            "character's journal, views, shards, sentinel, outbox and sidecars, with a manifest. "
            "The opened folder is only read."
        )
        contents.setWordWrap(True)
        self.redact_box = QCheckBox("&Redact text (recommended)")
        self.redact_box.setChecked(True)
        explained = QLabel(REDACTION_TEXT)
        explained.setWordWrap(True)
        self.warning = QLabel(NOT_REDACTED_TEXT)
        self.warning.setWordWrap(True)
        self.warning.setVisible(False)
        self.redact_box.toggled.connect(lambda on: self.warning.setVisible(not on))
        self.chat_box = QCheckBox("Include the &chat history (time_indexed.db)")
        self.chat_box.setChecked(False)
        chat_explained = QLabel(CHAT_TEXT)
        chat_explained.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.addButton("&Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        for w in (where, contents, self.redact_box, explained, self.warning, self.chat_box, chat_explained,
                  self.buttons):
            layout.addWidget(w)
        self.setMinimumWidth(min(self.fontMetrics().averageCharWidth() * 72, screen_limit(self).width()))
        fit_to_screen(self)

    @property
    def redact(self) -> bool:
        return self.redact_box.isChecked()

    @property
    def include_chat(self) -> bool:
        return self.chat_box.isChecked()

    @classmethod
    def ask(cls, parent: QWidget | None, source: str, target: str) -> BundleChoice | None:
        """What to write (redacted or not, with the chat history or not); ``None``: cancelled."""
        dialog = cls(source, target, parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return BundleChoice(dialog.redact, dialog.include_chat)

