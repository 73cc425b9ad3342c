"""The Chat tab: the turns the memory server stored around the selected event's time.

It renders what :class:`inspector.controllers.chat.ChatController` reads; it reads nothing itself.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from inspector.models.chat_model import ChatTableModel

#: What the tab says of the link between turns and events, above the turns.
LINK_NOTE = (
    "Matched by time only: no identifier links a turn to an event, and both clocks are the memory "
    "server's naive local time."
)


class ChatPanel(QWidget):
    """A header (the event, the window of time, how many turns) and the table of turns."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ChatTableModel(self)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setObjectName("ChatHeader")
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)  # a message is read whole, wrapped in its column
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.table, 1)
        self.set_message("Select an event to see the chat turns stored around its time.")

    def set_message(self, message: str) -> None:
        self.header.setText(escape(message))
        self.model.set_rows([])

    def set_read(self, request: Any, read: Any) -> None:
        """Show a reading (:class:`journal.chat.ChatRead`) for event ``request.index``."""
        copied = " Read from a private copy (the db was being written)." if read.method == "copy" else ""
        untimed = f" {read.untimed:,} rows with an unreadable time are not shown." if read.untimed else ""
        turns = f"{len(read.turns):,} turn{'s' if len(read.turns) != 1 else ''}"
        self.header.setText(
            f"<b>{turns}</b> from {escape(str(read.start))} to {escape(str(read.end))}, around event "
            f"#{request.index} ({escape(request.ts)}), of {read.rows:,} stored.{copied}{untimed}<br>"
            f"<small>{escape(LINK_NOTE)}</small>"
        )
        self.model.set_rows(read.turns)

    def set_redact(self, on: bool) -> None:
        self.model.set_redact(on)
