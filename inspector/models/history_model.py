"""The points of one entry's history as a table (the History tab's), and the words of a value in it."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from inspector.core.redaction import redact_tree
from inspector.core.vocabulary import UNKNOWN, EntryHistory, Point
from inspector.models.colors import state_color
from inspector.models.tables import RowTableModel


def shown_value(name: str, value: Any, redact: bool) -> str:
    """A field's value as the panel shows it: ``unknown``, or JSON, user text redacted."""
    if value is UNKNOWN:
        return "unknown"
    if redact:
        value = redact_tree({name: value})[name]  # the one rule for what is user text
    text = json.dumps(value, ensure_ascii=False)  # JSON: a stored "unknown" string is quoted
    return text if len(text) <= 80 else text[:79] + "…"


def changes_text(before: Point | None, point: Point, redact: bool) -> str:
    """The fields ``point``'s event changed, ``name: before → after`` each."""
    parts = []
    for name in point.changed:
        old = before.entry.get(name) if before is not None else UNKNOWN
        parts.append(f"{name}: {shown_value(name, old, redact)} → {shown_value(name, point.entry.get(name), redact)}")
    return "; ".join(parts)


COL_INDEX, COL_STATE, COL_EFFECT, COL_TYPE, COL_TS, COL_CHANGED = range(6)


class HistoryTableModel(RowTableModel):
    """The points of one entry history, one row each (fed by :meth:`set_history`).

    Attributes:
        redact: whether user text in the changed fields is hidden.
    """

    columns = ("#", "State", "Effect", "Type", "ts", "Changed (before → after)")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.redact = False
        self._palette = QPalette()
        self._x = np.zeros(0, dtype=np.int64)

    def set_history(self, history: EntryHistory | None) -> None:
        points = history.points if history is not None else ()
        self._x = np.fromiter((p.index for p in points), dtype=np.int64, count=len(points))
        self.set_rows(points)

    def set_redact(self, on: bool) -> None:
        self.redact = on
        if self._rows:
            self.dataChanged.emit(self.index(0, COL_CHANGED), self.index(len(self._rows) - 1, COL_CHANGED))

    def set_palette(self, palette: QPalette) -> None:
        self._palette = QPalette(palette)
        if self._rows:
            self.dataChanged.emit(self.index(0, COL_STATE), self.index(len(self._rows) - 1, COL_STATE))

    def row_of(self, index: int) -> int | None:
        """The row of event ``index`` (``None``: the entry's history has no point there)."""
        at = int(np.searchsorted(self._x, index))
        return at if at < len(self._x) and self._x[at] == index else None

    def cell(self, row: Point, column: int) -> Any:
        if column == COL_CHANGED:
            k = self._row_number(row)
            return changes_text(self._rows[k - 1] if k > 0 else None, row, self.redact)
        return (row.index, row.shown_state, row.effect, row.type, row.ts)[column]

    def _row_number(self, row: Point) -> int:
        at = self.row_of(row.index)
        assert at is not None
        return at

    def extra(self, row: Point, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.BackgroundRole and column == COL_STATE:
            return state_color(self._palette, row.state)
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.cell(row, column)
            return text.replace("; ", "\n") if column == COL_CHANGED else str(text)
        return None
