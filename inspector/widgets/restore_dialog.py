"""The restore chooser: the backups of a character, each with the folder it goes back into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.replay.flow import BackupSummary
from inspector.widgets.screen_fit import fit_to_screen


class RestoreDialog(QDialog):
    """Choose a backup to put back: the backups of this character, newest first, or any folder.

    A backup goes back only into the folder the index of backups recorded when it was taken
    (:func:`inspector.core.replay.restore_target`), shown in full on its row. A backup that is not
    in the index, whose manifest was edited, or whose folder is gone or no longer a character
    folder is listed greyed out with the reason, and cannot be chosen.

    Attributes:
        backups_view: one row per backup (its path in ``Qt.UserRole``, whether it is restorable in
            ``RESTORABLE_ROLE``).
    """

    #: Item data role: whether the row's backup may be restored.
    RESTORABLE_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, backups: list[BackupSummary], start_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Restore backup")
        self._start_dir = start_dir
        self._chosen: Path | None = None
        layout = QVBoxLayout(self)
        label = QLabel(
            "Put a backup back into the folder it was taken from, as recorded in the index of backups "
            "when it was taken. The folder as it is now is backed up first, so a restore can be undone too."
        )
        label.setWordWrap(True)
        label.setMinimumWidth(1)
        layout.addWidget(label)
        self.backups_view = QListWidget()
        first = None
        for row, b in enumerate(backups):
            item = QListWidgetItem(b.label())
            item.setData(Qt.ItemDataRole.UserRole, str(b.path))
            item.setData(self.RESTORABLE_ROLE, b.restorable)
            if b.restorable:
                item.setToolTip(f"{b.path}\ninto {b.target.path}")
                first = row if first is None else first
            else:
                item.setToolTip(f"{b.path}\nNot restorable: {b.target.problem}")
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsSelectable)
            self.backups_view.addItem(item)
        layout.addWidget(self.backups_view, 1)
        buttons = QDialogButtonBox()
        self.restore_button = buttons.addButton("Restore…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.browse_button = buttons.addButton("Other folder…", QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel).clicked.connect(self.reject)
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self._on_restore_clicked)
        self.browse_button.clicked.connect(self._on_browse_clicked)
        self.backups_view.itemDoubleClicked.connect(self._on_restore_clicked)
        self.backups_view.currentItemChanged.connect(self._on_backups_view_current_changed)
        if first is not None:
            self.backups_view.setCurrentRow(first)
        layout.addWidget(buttons)
        fit_to_screen(self, QSize(760, 360))

    def _current_restorable(self) -> QListWidgetItem | None:
        item = self.backups_view.currentItem()
        return item if item is not None and item.data(self.RESTORABLE_ROLE) else None

    def chosen(self) -> Path | None:
        return self._chosen

    @Slot()
    def _on_backups_view_current_changed(self, *_args: Any) -> None:
        self.restore_button.setEnabled(self._current_restorable() is not None)

    @Slot()
    def _on_restore_clicked(self, *_args: Any) -> None:
        item = self._current_restorable()
        if item is not None:
            self._chosen = Path(item.data(Qt.ItemDataRole.UserRole))
            self.accept()

    @Slot()
    def _on_browse_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a backup folder", str(self._start_dir))
        if path:
            self._chosen = Path(path)
            self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None, backups: list[BackupSummary], start_dir: Path) -> Path | None:
        """The backup folder to restore, or ``None``."""
        dialog = cls(backups, start_dir, parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.chosen()
