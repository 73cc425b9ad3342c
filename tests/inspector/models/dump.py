"""``dump(model)``: a model's displayed contents as plain lists, for ``dump(model) == [...]`` tests."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QModelIndex, Qt


def dump(
    model: QAbstractItemModel, parent: QModelIndex | None = None, role: int = Qt.ItemDataRole.DisplayRole
) -> list[Any]:
    """Rows of ``parent`` as lists of cell values; a row with children gets them as a last element."""
    parent = QModelIndex() if parent is None else parent
    out: list[Any] = []
    # A list model's columnCount is private in PySide6: one column.
    columns = model.columnCount(parent) if not isinstance(model, QAbstractListModel) else 1
    for r in range(model.rowCount(parent)):
        cells = [model.data(model.index(r, c, parent), role) for c in range(columns)]
        first = model.index(r, 0, parent)
        if model.rowCount(first) > 0:
            cells.append(dump(model, first, role))
        out.append(cells)
    return out
