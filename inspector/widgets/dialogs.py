"""Dialogs, each behind a classmethod ``ask``/``show`` returning plain values (tests patch those),
and :class:`DialogPrompter`, the window's :class:`~inspector.core.prompter.Prompter`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QLineEdit, QMessageBox, QWidget

from inspector.core.prompter import Question
from inspector.core.replay.flow import BackupSummary, ReplayRun, Review, Scope
from inspector.widgets.replay_dialog import ReplayDialog
from inspector.widgets.restore_dialog import RestoreDialog
from inspector.widgets.screen_fit import fit_to_screen

#: Wide enough for a whole event id (a UUID and more) in the Go-to-event box.
GOTO_WIDTH_CHARS = 44


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


class SaveFileDialog:
    """Choose where to write a file; a name typed without a suffix gets the first filter's."""

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, start: str, filters: Sequence[str]) -> str | None:
        dialog = QFileDialog(parent, title, start, ";;".join(filters))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        suffix = re.search(r"\(\*\.([A-Za-z0-9]+)", filters[0]) if filters else None
        if suffix is not None:
            dialog.setDefaultSuffix(suffix.group(1))
        if dialog.exec() != QFileDialog.DialogCode.Accepted or not dialog.selectedFiles():
            return None
        return dialog.selectedFiles()[0] or None


class GoToEventDialog(QInputDialog):
    """Ask for an event id (or a prefix of one, or ``#index``); the box fits a whole id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to event")
        self.setLabelText("Event id, id prefix, or #index:")
        self.setInputMode(QInputDialog.InputMode.TextInput)
        edit = self.findChild(QLineEdit)
        if edit is not None:
            edit.setMinimumWidth(edit.fontMetrics().averageCharWidth() * GOTO_WIDTH_CHARS)
        fit_to_screen(self)

    @classmethod
    def ask(cls, parent: QWidget | None) -> str | None:
        dialog = cls(parent)
        if dialog.exec() != QInputDialog.DialogCode.Accepted:
            return None
        return dialog.textValue().strip() or None


class ErrorDialog:
    """Tell the user something failed; the window stays as it was."""

    @classmethod
    def show(cls, parent: QWidget | None, title: str, message: str) -> None:
        QMessageBox.warning(parent, title, message)


class QuestionDialog:
    """A yes/no question with its supporting text folded under "Show Details"."""

    @classmethod
    def build(cls, parent: QWidget | None, question: Question) -> QMessageBox:
        """The box that asks ``question`` (Qt sizes a message box to the screen itself)."""
        box = QMessageBox(QMessageBox.Icon.Question, question.title, question.text, parent=parent)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.Yes if question.default else QMessageBox.StandardButton.No)
        if question.details:
            box.setDetailedText(question.details)
        return box

    @classmethod
    def ask(cls, parent: QWidget | None, question: Question) -> bool:
        return cls.build(parent, question).exec() == QMessageBox.StandardButton.Yes


class NoticeDialog:
    """Tell the person something, with the icon its level asks for (information or warning)."""

    @classmethod
    def show(cls, parent: QWidget | None, text: str, title: str = "", level: str = "info") -> None:
        if level == "warning":
            QMessageBox.warning(parent, title or "Memory Inspector", text)
        else:
            QMessageBox.information(parent, title or "Memory Inspector", text)


class DialogPrompter:
    """The window's :class:`~inspector.core.prompter.Prompter`: real dialogs.

    Dialogs are parented to ``parent`` when given, else to the application's active window at the
    time of asking, so nothing needs to be patched in after the window exists.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        self._parent = parent

    @property
    def parent(self) -> QWidget | None:
        return self._parent if self._parent is not None else QApplication.activeWindow()

    def choose_folder(self, start: str) -> str | None:
        return OpenFolderDialog.ask(self.parent, start)

    def choose_zip(self, start: str) -> str | None:
        return OpenZipDialog.ask(self.parent, start)

    def ask_event_id(self) -> str | None:
        return GoToEventDialog.ask(self.parent)

    def choose_save_path(self, title: str, start: str, filters: Sequence[str]) -> str | None:
        return SaveFileDialog.ask(self.parent, title, start, filters)

    def show_error(self, title: str, message: str) -> None:
        ErrorDialog.show(self.parent, title, message)

    def ask(self, question: Question) -> bool:
        return QuestionDialog.ask(self.parent, question)

    def notify(self, text: str, *, title: str = "", level: str = "info") -> None:
        NoticeDialog.show(self.parent, text, title, level)

    def review(self, review: Review) -> bool | Scope:
        return ReplayDialog.review(self.parent, review)

    def choose_backup(self, backups: Sequence[BackupSummary], start: Path) -> Path | None:
        return RestoreDialog.ask(self.parent, list(backups), start)

    def show_result(self, run: ReplayRun) -> None:
        if run.plan is not None and run.outcome is not None:
            ReplayDialog.show_result(self.parent, run.plan, run.outcome)
