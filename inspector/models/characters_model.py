"""The characters list: one row per character folder, with its health badge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.core.timeline import LOADING

Index = QModelIndex | QPersistentModelIndex

BADGE_ROLE = Qt.ItemDataRole.UserRole + 1
HEALTH_ROLE = Qt.ItemDataRole.UserRole + 2
NAME_ROLE = Qt.ItemDataRole.UserRole + 3

#: What a character says while only a preview of it was read (never ``healthy``: nothing is known).
LOADING_TEXT = f"{LOADING}…"

#: Badge entries in display order, with the state colour each uses.
BADGE_ORDER = (
    ("blocked", "blocked"),
    ("orphaned", "orphaned"),
    ("suspect", "suspect"),
    ("pending", "pending"),
    ("defects", "damaged"),
)


@dataclass(frozen=True, slots=True)
class CharacterRow:
    """One character as listed.

    Attributes:
        name: the folder name.
        badge: count per problem (``pending``, ``blocked``, ``orphaned``, ``suspect``, ``defects``).
        note: a one-line remark (``views only``, ``no journal``...).
        loading: only a preview was read: nothing is known about its health yet.
    """

    name: str
    badge: dict[str, int]
    note: str = ""
    loading: bool = False

    @property
    def health(self) -> str:
        """The worst state present: the badge colour of the row (``applied`` when healthy,
        ``loading`` while nothing is known)."""
        if self.loading:
            return LOADING
        for key, state in BADGE_ORDER:
            if self.badge.get(key):
                return state
        return "applied"

    def badge_items(self) -> list[tuple[str, str]]:
        """``(text, state)`` pairs for the badge chips, e.g. ``("3 pending", "pending")``."""
        out = []
        for key, state in BADGE_ORDER:
            n = self.badge.get(key, 0)
            if n:
                word = "defect" if key == "defects" else key
                out.append((f"{n:,} {word}{'s' if key == 'defects' and n != 1 else ''}", state))
        return out

    def badge_text(self) -> str:
        if self.loading:
            return LOADING_TEXT
        items = self.badge_items()
        return " · ".join(t for t, _ in items) if items else "healthy"


class CharacterListModel(QAbstractListModel):
    """Rows of :class:`CharacterRow`, fed with :meth:`set_rows` / :meth:`update_row`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[CharacterRow] = []

    def set_rows(self, rows: Sequence[CharacterRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def update_row(self, row: CharacterRow) -> None:
        """Replace the row with the same name (a live change of its counts)."""
        for i, old in enumerate(self._rows):
            if old.name == row.name:
                if old != row:
                    self._rows[i] = row
                    idx = self.index(i, 0)
                    self.dataChanged.emit(idx, idx)
                return

    def row_of(self, name: str) -> int | None:
        for i, r in enumerate(self._rows):
            if r.name == name:
                return i
        return None

    def rows(self) -> list[CharacterRow]:
        return list(self._rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: one row per character."""
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: name, badge and health."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.name
        if role in (Qt.ItemDataRole.ToolTipRole, BADGE_ROLE):
            text = row.badge_text()
            if role == Qt.ItemDataRole.ToolTipRole and row.note:
                text += f"\n{row.note}"
            return text
        if role == HEALTH_ROLE:
            return row.health
        if role == NAME_ROLE:
            return row.name
        return None
