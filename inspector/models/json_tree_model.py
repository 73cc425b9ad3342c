"""A JSON value as a two-column tree (key, value), built lazily, with optional redaction."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from inspector.core.redaction import hide_strings, hides, redact_text

Index = QModelIndex | QPersistentModelIndex
PATH_ROLE = Qt.ItemDataRole.UserRole + 1

_MAX_PREVIEW = 160


class _Node:
    """One key/value of the tree; children are created the first time they are asked for."""

    __slots__ = ("_children", "hidden", "key", "parent", "row", "value")

    def __init__(self, parent: _Node | None, row: int, key: Any, value: Any, hidden: str | None) -> None:
        self.parent = parent
        self.row = row
        self.key = key
        self.value = value
        self.hidden = hidden  # the redaction label kind inherited from a text / chat key
        self._children: list[_Node] | None = None

    def children(self, redact: bool) -> list[_Node]:
        if self._children is None:
            items: list[tuple[Any, Any]]
            if isinstance(self.value, dict):
                items = list(self.value.items())
            elif isinstance(self.value, list):
                items = list(enumerate(self.value))
            else:
                items = []
            self._children = [
                _Node(self, i, k, v, self.hidden or (hides(k) if redact and isinstance(k, str) else None))
                for i, (k, v) in enumerate(items)
            ]
        return self._children

    def path(self) -> tuple[Any, ...]:
        keys: list[Any] = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            keys.append(node.key)
            node = node.parent
        return tuple(reversed(keys))


def _key_text(node: _Node) -> str:
    """A dict key as is; a list index with the element's ``id`` beside it, to find entries at a glance."""
    if not isinstance(node.key, int):
        return str(node.key)
    value = node.value
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return f"[{node.key}] {value['id']}"
    return f"[{node.key}]"


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= _MAX_PREVIEW else text[: _MAX_PREVIEW - 1] + "…\""
    return json.dumps(value)


class JsonTreeModel(QAbstractItemModel):
    """Shows one JSON value (a view file, a payload, a diff) as an expandable key/value tree.

    With redaction on, every string under a text or chat key is shown as its label
    (``‹text · 42 chars · sha256 1a2b…›``); keys, ids, numbers and structure stay.

    Attributes:
        columns: the header titles.
    """

    columns = ("Key", "Value")

    def __init__(self, parent: Any = None, *, redact: bool = False) -> None:
        super().__init__(parent)
        self._redact = redact
        self._root = _Node(None, 0, None, None, None)
        self._mono = QFont("monospace")
        self._mono.setStyleHint(QFont.StyleHint.Monospace)

    # -- feeding ------------------------------------------------------------------------------------

    def set_value(self, value: Any) -> None:
        self.beginResetModel()
        self._root = _Node(None, 0, None, value, None)
        self.endResetModel()

    def value(self) -> Any:
        return self._root.value

    def set_redact(self, redact: bool) -> None:
        if redact != self._redact:
            self._redact = redact
            self.set_value(self._root.value)

    @property
    def redact(self) -> bool:
        return self._redact

    def shown_value(self) -> Any:
        """The whole value as displayed (redacted when redaction is on), e.g. for copying."""
        from inspector.core.redaction import redact_tree

        return redact_tree(self._root.value) if self._redact else self._root.value

    # -- paths --------------------------------------------------------------------------------------

    def index_for_path(self, path: tuple[Any, ...]) -> QModelIndex:
        """The index of the value at ``path`` (keys and list indices), or an invalid index."""
        node = self._root
        parent = QModelIndex()
        for key in path:
            found = None
            for child in node.children(self._redact):
                if child.key == key:
                    found = child
                    break
            if found is None:
                return QModelIndex()
            node = found
            parent = self.createIndex(node.row, 0, node)
        return parent

    def path_of(self, index: Index) -> tuple[Any, ...]:
        node = self._node(index)
        return node.path() if node is not self._root else ()

    # -- QAbstractItemModel ---------------------------------------------------------------------------

    def _node(self, index: Index) -> _Node:
        if index.isValid():
            node = index.internalPointer()
            if isinstance(node, _Node):
                return node
        return self._root

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Override: the child at ``row`` of ``parent``."""
        if column < 0 or column >= len(self.columns) or row < 0:
            return QModelIndex()
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        children = self._node(parent).children(self._redact)
        if row >= len(children):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        """Override: the parent of ``index``."""
        if not index.isValid():
            return QModelIndex()
        node = self._node(index).parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: number of children."""
        if parent.isValid() and parent.column() != 0:
            return 0
        node = self._node(parent)
        if node is not self._root and not isinstance(node.value, (dict, list)):
            return 0
        return len(node.children(self._redact))

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        """Override: containers only, without building their children."""
        if parent.isValid() and parent.column() != 0:
            return False
        node = self._node(parent)
        if node is self._root:
            return isinstance(node.value, (dict, list)) and len(node.value) > 0
        return isinstance(node.value, (dict, list)) and len(node.value) > 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: key and value."""
        return len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: column titles."""
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(self.columns):
            return self.columns[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: the key or the (possibly redacted) value."""
        if not index.isValid():
            return None
        node = self._node(index)
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return _key_text(node)
            return self._value_text(node)
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 1:
            if isinstance(node.value, str) and not self._hidden_kind(node):
                return node.value[:2000]
            return None
        if role == Qt.ItemDataRole.FontRole and index.column() == 1:
            return self._mono
        if role == PATH_ROLE:
            return node.path()
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Override: selectable, never editable."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def _hidden_kind(self, node: _Node) -> str | None:
        if not self._redact:
            return None
        if node.hidden:
            return node.hidden
        return hides(node.key) if isinstance(node.key, str) else None

    def _value_text(self, node: _Node) -> str:
        value = node.value
        if isinstance(value, dict):
            return f"{{{len(value)} key{'s' if len(value) != 1 else ''}}}"
        if isinstance(value, list):
            return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
        kind = self._hidden_kind(node)
        if kind and isinstance(value, str):
            return redact_text(value, kind)
        return _scalar_text(value)


def redacted_json_text(value: Any, redact: bool) -> str:
    """Pretty JSON of ``value`` as the raw-JSON pane shows it."""
    from inspector.core.redaction import redact_tree

    shown = redact_tree(value) if redact else value
    return json.dumps(shown, ensure_ascii=False, indent=2)


__all__ = ["PATH_ROLE", "JsonTreeModel", "hide_strings", "redacted_json_text"]
