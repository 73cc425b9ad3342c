"""The timeline table: one row per event or damaged line, in file order."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QPalette

# The columns, and what a row shows in them, have their home with the rows' texts (copies and exports
# show the same); the column names are re-exported from here for the views.
from inspector.core.export import (  # noqa: F401
    COL_ENTRY,
    COL_INDEX,
    COL_STATE,
    COL_SUMMARY,
    COL_TIME,
    COL_TYPE,
    COLUMNS,
    cell_text,
)
from inspector.core.timeline import REASON_TEXT, UNCHECKED, CharacterTimeline, Row
from inspector.models.colors import STATE_LABELS, state_color
from journal.diagnosis import EventInfo

Index = QModelIndex | QPersistentModelIndex

#: Custom roles.
REF_ROLE = Qt.ItemDataRole.UserRole + 1
STATE_ROLE = Qt.ItemDataRole.UserRole + 2
EVENT_ID_ROLE = Qt.ItemDataRole.UserRole + 3

#: Above this many changed rows, :meth:`EventTableModel.rows_changed` repaints every row.
ROWS_CHANGED_ONE_BY_ONE = 5000

#: Gives the summary of row ``refs[pos]`` (may read payloads around it); see ``core.payloads.SummaryCache``.
SummaryProvider = Callable[[Sequence[int], int], str]


def _no_summary(refs: Sequence[int], pos: int) -> str:
    return ""


#: The tooltip of a row that reads :data:`~inspector.core.timeline.UNCHECKED`.
UNCHECKED_TIP = (
    "Not yet checked: this row changed since the last diagnosis (it was appended, or the sentinel moved). "
    "The folder is diagnosed again in a moment; its state is shown then."
)


class EventTableModel(QAbstractTableModel):
    """A virtualised table over a character's timeline.

    It is fed a :class:`~inspector.core.timeline.CharacterTimeline` (which builds each row's value
    when a cell is painted) and the refs of the rows to show, in file order. :meth:`set_rows` is
    for a (re)load, a character switch or a new filter; :meth:`append_rows` is for live appends
    (``beginInsertRows``, never a reset, so selection and scroll survive), :meth:`replace_last` for
    an unterminated last line read again; :meth:`rows_changed` repaints rows whose state changed in
    place.

    Attributes:
        summaries: gives the summary column (payloads are not kept in memory).
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._timeline: CharacterTimeline | None = None
        # Positions -> timeline refs, as an array: a million-item list would be walked by every
        # young collection of the cycle collector until it is promoted.
        self._refs: array[int] = array("q")
        self.summaries: SummaryProvider = _no_summary
        self._colors: dict[str, Any] = {}
        self._sentinel_label = ""
        self._italic = QFont()
        self._italic.setItalic(True)
        self._bold = QFont()
        self._bold.setBold(True)
        self.set_palette(QPalette())

    # -- feeding ----------------------------------------------------------------------------------

    @property
    def timeline(self) -> CharacterTimeline | None:
        return self._timeline

    def refs(self) -> array[int]:
        return self._refs

    def ref_at(self, pos: int) -> int:
        return self._refs[pos]

    def row_at(self, pos: int) -> Row:
        assert self._timeline is not None
        return self._timeline.row(self._refs[pos])

    def set_rows(
        self, timeline: CharacterTimeline | None, refs: Sequence[int], summaries: SummaryProvider | None = None
    ) -> None:
        """Replace every row (a load, a character switch, or a new filter)."""
        self.beginResetModel()
        self._timeline = timeline
        self._refs = array("q", refs)
        self.summaries = summaries or _no_summary
        self.endResetModel()

    def append_rows(self, refs: Sequence[int]) -> None:
        """Add rows at the end (live appends): one ``rowsInserted``, no reset."""
        if not refs:
            return
        first = len(self._refs)
        self.beginInsertRows(QModelIndex(), first, first + len(refs) - 1)
        self._refs.extend(refs)
        self.endInsertRows()

    def replace_last(self, removed: int | None, refs: Sequence[int]) -> list[int]:
        """Live rows at the end, when the journal's unterminated last line was read again.

        ``removed`` (the provisional row that left, see
        :meth:`~inspector.core.timeline.CharacterTimeline.append`) gives way to ``refs``: the first
        takes its place in place (``dataChanged``: the selection and scroll stay), the others are
        inserted after it; with no ``refs`` the row is removed. When ``removed`` is not shown
        (filtered out, or ``None``), ``refs`` are appended.

        Returns:
            The refs that took a shown row's place (a selection on them shows a new row).
        """
        last = len(self._refs) - 1
        if removed is None or last < 0 or self._refs[last] != removed:
            self.append_rows(refs)
            return []
        if not refs:
            self.beginRemoveRows(QModelIndex(), last, last)
            del self._refs[last]
            self.endRemoveRows()
            return []
        self._refs[last] = refs[0]
        self.dataChanged.emit(self.index(last, 0), self.index(last, len(COLUMNS) - 1))
        self.append_rows(refs[1:])
        return [refs[0]]

    def remove_ref(self, ref: int) -> bool:
        """Remove one row (a torn last line that a writer completed); returns whether it was shown."""
        pos = self.position_of(ref)
        if pos is None:
            return False
        self.beginRemoveRows(QModelIndex(), pos, pos)
        del self._refs[pos]
        self.endRemoveRows()
        return True

    def rows_changed(self, refs: Sequence[int]) -> None:
        """Repaint rows whose state changed in place (one signal for the whole span)."""
        if len(refs) > ROWS_CHANGED_ONE_BY_ONE:
            self.refresh_all()  # a view repaints what is on screen: cheaper than placing each row
            return
        positions = [p for p in (self.position_of(r) for r in refs) if p is not None]
        if positions:
            self.dataChanged.emit(self.index(min(positions), 0), self.index(max(positions), len(COLUMNS) - 1))

    def rows_changed_from(self, ref: int) -> None:
        """Repaint the row of ``ref`` and every row after it (a moved sentinel)."""
        if self._timeline is None or not self._refs:
            return
        first = self.nearest_position(ref)
        if first >= 0:
            self.dataChanged.emit(self.index(first, 0), self.index(len(self._refs) - 1, len(COLUMNS) - 1))

    def refresh_all(self) -> None:
        """Repaint everything (palette, redaction)."""
        if self._refs:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._refs) - 1, len(COLUMNS) - 1))

    def set_palette(self, palette: QPalette) -> None:
        self._colors = {s: state_color(palette, s) for s in STATE_LABELS}
        self.refresh_all()

    def state_colors(self) -> dict[str, Any]:
        """The background colour of each state under the current palette."""
        return dict(self._colors)

    # -- positions and the sentinel -------------------------------------------------------------------

    def position_of(self, ref: int) -> int | None:
        """The model row showing ``ref``, or ``None`` when it is not shown (filtered out)."""
        if self._timeline is None:
            return None
        return self._timeline.position(self._refs, ref)

    def nearest_position(self, ref: int) -> int:
        """The model row of ``ref`` or, when it is filtered out, of the next row after it."""
        if self._timeline is None or not self._refs:
            return -1
        return self._timeline.nearest(self._refs, ref)

    def set_sentinel_label(self, label: str) -> None:
        """The text beside the sentinel marker (``N applied · M pending``)."""
        self._sentinel_label = label

    def sentinel_label(self) -> str:
        return self._sentinel_label

    def sentinel_ref(self) -> int | None:
        return self._timeline.sentinel_ref() if self._timeline is not None else None

    def marker_position(self) -> int | None:
        """Model row under which the marker is drawn (-1: above the first row), ``None``: no marker."""
        if self._timeline is None:
            return None
        return self._timeline.marker_position(self._refs)

    # -- QAbstractTableModel --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008  (Qt's signature)
        """Override: the number of rows shown."""
        return 0 if parent.isValid() else len(self._refs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: the fixed columns."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: column titles."""
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: text, colours and tooltips of a cell."""
        if not index.isValid() or self._timeline is None:
            return None
        pos, col = index.row(), index.column()
        if not (0 <= pos < len(self._refs)) or not (0 <= col < len(COLUMNS)):
            return None
        tl = self._timeline
        ref = self._refs[pos]
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._colors.get(tl.state(ref))
        if role == REF_ROLE:
            return ref
        if role == STATE_ROLE:
            return tl.state(ref)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter) if col == COL_INDEX else None
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_SUMMARY:
                return self.summaries(self._refs, pos)
            state = tl.state(ref)
            if state == UNCHECKED and col == COL_STATE:
                return UNCHECKED  # not the reason the last diagnosis gave: it may not hold any more
            return self._display(tl.row(ref), state, col)
        if role == Qt.ItemDataRole.FontRole:
            if ref < 0:
                return self._italic
            return self._bold if col == COL_STATE and tl.state(ref) == "blocked" else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if tl.state(ref) == UNCHECKED:
                return UNCHECKED_TIP
            return self._tooltip(tl.row(ref))
        if role == EVENT_ID_ROLE:
            row = tl.row(ref)
            return row.event_id if isinstance(row, EventInfo) else row.recovered_event_id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Override: rows are selectable, never editable."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    # -- cells ---------------------------------------------------------------------------------------

    @staticmethod
    def _display(row: Row, state: str, col: int) -> str:
        return cell_text(row, state, col)

    @staticmethod
    def _tooltip(row: Row) -> str:
        if not isinstance(row, EventInfo):
            return f"Line {row.line}, byte {row.offset}: {row.message}"
        parts = [f"{row.event_id} · {row.ts} · line {row.line}, byte {row.offset}"]
        if row.reason:
            parts.append(REASON_TEXT.get(row.reason, row.reason))
        if row.message:
            parts.append(row.message)
        return "\n".join(parts)
