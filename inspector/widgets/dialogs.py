"""Dialogs, each behind a classmethod ``ask`` returning plain values (tests patch ``ask``), and the
prompter that the window uses to reach them."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget


class OpenFolderDialog:
    """Choose a memory root or character folder."""

    @classmethod
    def ask(cls, parent: QWidget | None, start: str) -> str | None:
        path = QFileDialog.getExistingDirectory(parent, "Open memory folder", start)
        return path or None


class OpenZipDialog:
    """Choose a ``.zip`` export."""

    @classmethod
    def ask(cls, parent: QWidget | None, start: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(parent, "Open zip export", start, "Zip exports (*.zip);;All files (*)")
        return path or None


class GoToEventDialog:
    """Ask for an event id (or a prefix of one, or ``#index``)."""

    @classmethod
    def ask(cls, parent: QWidget | None) -> str | None:
        text, ok = QInputDialog.getText(parent, "Go to event", "Event id, id prefix, or #index:")
        return text.strip() or None if ok else None


class ErrorDialog:
    """Tell the user something failed; the window stays as it was."""

    @classmethod
    def show(cls, parent: QWidget | None, title: str, message: str) -> None:
        QMessageBox.warning(parent, title, message)


class DialogPrompter:
    """The window's :class:`inspector.core.prompter.Prompter`: real dialogs, parented to the window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.parent = parent

    def choose_folder(self, start: str) -> str | None:
        return OpenFolderDialog.ask(self.parent, start)

    def choose_zip(self, start: str) -> str | None:
        return OpenZipDialog.ask(self.parent, start)

    def ask_event_id(self) -> str | None:
        return GoToEventDialog.ask(self.parent)

    def show_error(self, title: str, message: str) -> None:
        ErrorDialog.show(self.parent, title, message)
