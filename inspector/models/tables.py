"""Small read-only tables: diagnosis findings, outbox operations."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPalette

from inspector.core.advice import finding_text
from inspector.core.check_report import report_order
from inspector.core.redaction import redact_message
from inspector.core.timestamps import format_ts
from inspector.models.colors import state_color
from journal.diagnosis import Finding, OutboxOp

Index = QModelIndex | QPersistentModelIndex
ROW_ROLE = Qt.ItemDataRole.UserRole + 1

#: Severity → the state colour it borrows.
_SEVERITY_STATE = {"error": "blocked", "warning": "suspect", "info": None}


class RowTableModel(QAbstractTableModel):
    """A table of plain row values with fixed columns, fed by :meth:`set_rows`.

    Subclasses name the columns and say how a row shows in each.
    """

    columns: tuple[str, ...] = ()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[Any]:
        return list(self._rows)

    def cell(self, row: Any, column: int) -> Any:
        raise NotImplementedError

    def extra(self, row: Any, column: int, role: int) -> Any:
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: number of rows."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: number of columns."""
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: column titles."""
        horizontal = orientation == Qt.Orientation.Horizontal
        shown = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)  # whole on hover when cut
        if role in shown and horizontal and 0 <= section < len(self.columns):
            return self.columns[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: the cell's text, plus what :meth:`extra` adds."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if not 0 <= index.column() < len(self.columns):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.cell(row, index.column())
            return "" if value is None else str(value)
        if role == ROW_ROLE:
            return row
        return self.extra(row, index.column(), role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Override: selectable, never editable."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


class FindingTableModel(RowTableModel):
    """The diagnosis findings of one character (:class:`journal.diagnosis.Finding`)."""

    columns = ("Severity", "Code", "Message", "Event / file")

    def __init__(self, parent: Any = None, palette_source: Callable[[], QPalette] | None = None) -> None:
        super().__init__(parent)
        self._palette_source = palette_source or QPalette
        self.redact = False

    def set_redact(self, on: bool) -> None:
        """Show messages redacted (quoted damaged lines, text digests) or as they are."""
        self.redact = on
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 2), self.index(self.rowCount() - 1, 2))

    def set_rows(self, rows: Sequence[Any]) -> None:
        """Override: the findings in ``check``'s order (:func:`~inspector.core.check_report.report_order`:
        errors, then warnings, then info)."""
        super().set_rows(report_order(rows))

    def _message(self, row: Finding) -> str:
        text = finding_text(row, "window")  # what to do, in the window's actions and shortcuts
        return redact_message(text) if self.redact else text

    def cell(self, row: Finding, column: int) -> Any:
        if column == 0:
            return row.severity
        if column == 1:
            return row.code
        if column == 2:
            return self._message(row)
        return _where(row)

    def extra(self, row: Finding, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.BackgroundRole and column == 0:
            state = _SEVERITY_STATE.get(row.severity)
            return state_color(self._palette_source(), state) if state else None
        if role == Qt.ItemDataRole.ToolTipRole:
            # Rich text, so that Qt wraps a long message to the screen instead of one line wider than it.
            # The severity's cell may show its icon alone in a narrow pane: its tip names it first.
            head = f"<b>{html.escape(row.severity)}</b>: " if column == 0 else ""
            return f"<p>{head}{html.escape(self._message(row))}</p>"
        return None

    def full_text(self, row: Finding) -> str:
        """The whole finding as the detail box shows it and Copy copies it: severity, code, what it
        is about, then its message (redacted when redaction is on)."""
        where = _where(row)
        head = f"{row.severity} · {row.code}" + (f" · {where}" if where else "")
        return f"{head}\n\n{self._message(row)}"


def _where(row: Finding) -> str:
    """The event or file a finding is about, with its line."""
    where = row.event_id or row.file or ""
    return f"{where} (line {row.line})" if row.line else where


class OutboxTableModel(RowTableModel):
    """Pending and dead-letter outbox operations (:class:`journal.diagnosis.OutboxOp`)."""

    columns = ("Operation", "Type", "Status", "Attempts", "Queued at", "Line")

    def cell(self, row: OutboxOp, column: int) -> Any:
        queued = format_ts(row.ts) if row.ts else ""
        return (row.op_id, row.type or "(none)", row.status.replace("_", " "), row.attempts, queued, row.line)[column]

    def extra(self, row: OutboxOp, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            return str(self.cell(row, column))  # the whole text of a cell elided to fit the pane
        return None
