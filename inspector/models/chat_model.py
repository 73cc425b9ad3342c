"""The chat turns around an event, as a table (:class:`journal.chat.ChatTurn` rows)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from inspector.core.redaction import redact_text
from inspector.models.tables import RowTableModel


class ChatTableModel(RowTableModel):
    """Time, role and words of each turn; the words as the window's redaction token when it is on,
    the whole message on hover."""

    columns = ("Time", "Role", "Message")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.redact = False

    def set_redact(self, on: bool) -> None:
        self.redact = on
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 2), self.index(self.rowCount() - 1, 2))

    def words(self, turn: Any) -> str:
        text = turn.text if turn.text is not None else f"({turn.problem})"
        return redact_text(text) if self.redact and turn.text is not None else text

    def cell(self, row: Any, column: int) -> Any:
        if column == 0:
            return row.stored_time
        if column == 1:
            return row.role
        words = self.words(row).replace("\n", " ⏎ ")
        return words if not row.problem or row.text is None else f"{words}  [{row.problem}]"

    def extra(self, row: Any, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and column == 2:
            return self.words(row)
        return None
