"""The Help menu's dialogs: About (versions, where settings and backups live) and the keyboard
shortcuts, searchable. The texts are built by plain functions, so they are tested without a window."""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable
from pathlib import Path

import PySide6
from PySide6.QtCore import QSize, Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector import __version__
from inspector.widgets.screen_fit import fit_to_screen

#: The README beside the package (a source checkout or an editable install), for the window tour.
README = Path(__file__).resolve().parents[2] / "README.md"


def present(dialog: QDialog) -> QDialog:
    """Show a help dialog, modeless, deleted when it is closed; returns it."""
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


def about_lines(config_dir: Path | None, backup_root: Path) -> list[str]:
    """What About says: the versions, and where this installation keeps its files."""
    return [
        f"memory-inspector {__version__}",
        f"Python {platform.python_version()} · PySide6 {PySide6.__version__} · Qt {qVersion()} · {sys.platform}",
        f"Settings and recent folders: {config_dir if config_dir is not None else '(not kept)'}",
        f"Backups of guarded replay and restore: {backup_root}",
        "Window tour: Help ▸ Window tour (the README's section 'The window')",
    ]


def shortcut_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    """``(action, shortcut)`` for every action that has a shortcut, sorted by action name."""
    rows = []
    for action in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if keys:
            rows.append((action.text().replace("&", "").rstrip("…").strip(), ", ".join(keys)))
    return sorted(set(rows), key=lambda r: r[0].lower())


class ShortcutsDialog(QDialog):
    """Every keyboard shortcut of the window, with a filter box (type to narrow the list)."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        layout = QVBoxLayout(self)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search shortcuts…")
        self.search.setClearButtonEnabled(True)
        self.table = QTreeWidget(self)
        self.table.setHeaderLabels(["Action", "Shortcut"])
        self.table.setRootIsDecorated(False)
        for name, keys in rows:
            QTreeWidgetItem(self.table, [name, keys])
        self.table.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.search.textChanged.connect(self.apply_search)
        self.search.setFocus()
        fit_to_screen(self, QSize(460, 520))

    def apply_search(self, text: str) -> None:
        """Show only the rows whose action or shortcut contains ``text`` (case-insensitive)."""
        needle = text.strip().lower()
        for i in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(i)
            hit = not needle or needle in item.text(0).lower() or needle in item.text(1).lower()
            item.setHidden(not hit)

    def visible_rows(self) -> list[tuple[str, str]]:
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [(it.text(0), it.text(1)) for it in items if not it.isHidden()]


class AboutDialog(QDialog):
    """Versions and where this installation keeps its files (selectable, to paste into a report)."""

    def __init__(self, lines: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About memory-inspector")
        layout = QVBoxLayout(self)
        self.label = QLabel("\n".join(lines), self)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setWordWrap(True)
        self.label.setMinimumWidth(1)  # a long settings path wraps instead of widening the dialog
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(self.label)
        layout.addWidget(buttons)
        fit_to_screen(self, QSize(640, 220))


#: The README's section the window tour shows.
TOUR_HEADING = "## The window"


def window_tour() -> str:
    """The README's window tour (Markdown): from the README beside the package when there is one
    (a source checkout), else from the installed package's description, which is the README."""
    text = ""
    try:
        text = README.read_text(encoding="utf-8")
    except OSError:
        from importlib import metadata

        try:
            text = metadata.metadata("memory-inspector").get("Description") or ""
        except metadata.PackageNotFoundError:
            text = ""
    start = text.find(TOUR_HEADING)
    if start < 0:
        return "The window tour is in the README's section “The window”, which this installation does not include."
    end = text.find("\n## ", start + len(TOUR_HEADING))
    section = text[start : end if end >= 0 else len(text)].strip()
    # Images are the README's (a path beside it), not the window's: the tour is the text.
    return "\n".join(line for line in section.split("\n") if not line.startswith("!["))


class TourDialog(QDialog):
    """The README's window tour, rendered (Help ▸ Window tour).

    Attributes:
        browser: the rendered Markdown.
    """

    def __init__(self, markdown: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Window tour")
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(False)
        self.browser.setMarkdown(markdown)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        fit_to_screen(self, QSize(760, 640))
