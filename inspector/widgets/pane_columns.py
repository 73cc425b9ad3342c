"""The columns of a table in a narrow pane (the detail pane's Findings and History tables, issue
27 items 5 and 8): all in view by one rule (:func:`inspector.core.columns.pane_widths`), each
eliding its own way, until the user lays them out (:mod:`inspector.widgets.header_layouts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from inspector.core.columns import pane_widths
from inspector.widgets.header_layouts import auto_fitted, set_auto_fitted

#: Room a cell's text leaves for the delegate's margins and the focus frame (pixels).
CELL_MARGINS = 12
#: The least width of a column (pixels): when even the floors do not fit, every column gives way.
MIN_SECTION = 8


@dataclass(frozen=True)
class PaneColumn:
    """How one column claims room, most important first in a table's plan.

    Attributes:
        column: the model's column.
        floor_chars: the characters it keeps at least (``None``: it carries identity and keeps its
            whole content and title); ``floor_px`` instead, when given, a floor in pixels.
        cap_chars: its first claim on the room beyond the floor, in characters (``None``: its whole
            content); the text column takes what is left after every column's claim anyway.
        floor_px: a floor in pixels (a severity's icon) instead of ``floor_chars``.
    """

    column: int
    floor_chars: int | None = None
    cap_chars: int | None = None
    floor_px: int | None = None


class ElidingDelegate(QStyledItemDelegate):
    """Each column elides its own way (an id in the middle, a message at its end); the others as
    the view says."""

    def __init__(self, modes: Mapping[int, Qt.TextElideMode], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.modes = dict(modes)

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        """Override: the column's elide mode."""
        super().initStyleOption(option, index)
        mode = self.modes.get(index.column())
        if mode is not None:
            option.textElideMode = mode


class PaneColumns(QObject):
    """Keeps ``view``'s columns fitted to its viewport by ``plan`` while the user has not laid them
    out: fitted again when the viewport's width or the rows change; a width, an order or a hidden
    column the user chose stops it until :meth:`reset`. The text column (``text``) takes the room
    the others leave, at least ``text_floor`` pixels.

    Args:
        view: the table.
        plan: its columns, most important first (``text`` among them).
        text: the column that takes the room left.
        text_floor: the least width of ``text`` (pixels).
    """

    def __init__(self, view: QTableView, plan: Sequence[PaneColumn], text: int, text_floor: int) -> None:
        super().__init__(view)
        self.view = view
        self.plan = tuple(plan)
        self.text = text
        self.text_floor = text_floor
        self._fitting = False
        header = view.horizontalHeader()
        header.sectionResized.connect(self._on_user_layout)
        header.sectionMoved.connect(self._on_user_layout)
        view.viewport().installEventFilter(self)
        model = view.model()
        for signal in (model.modelReset, model.rowsInserted, model.layoutChanged, model.dataChanged):
            signal.connect(self.fit)

    @property
    def auto_fit(self) -> bool:
        """Whether the columns are fitted (not laid out by the user)."""
        return auto_fitted(self.view.horizontalHeader())

    def reset(self) -> None:
        """The default layout: every column shown, in the model's order, fitted to the pane."""
        header = self.view.horizontalHeader()
        self._fitting = True
        try:
            for col in range(header.count()):
                header.setSectionHidden(col, False)
                header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
                header.moveSection(header.visualIndex(col), col)
            header.setStretchLastSection(False)  # the fit fills the viewport exactly
            header.setMinimumSectionSize(MIN_SECTION)  # the style's (26 px) would push the last one out
            header.setTextElideMode(Qt.TextElideMode.ElideRight)  # a narrow title shows it is cut
        finally:
            self._fitting = False
        set_auto_fitted(header, True)
        self.fit()

    def natural(self, col: int) -> int:
        """Column ``col``'s width for its rows' content (as the view's delegate measures it) and
        its title."""
        return max(self.view.sizeHintForColumn(col), self.view.horizontalHeader().sectionSizeHint(col))

    def floor(self, spec: PaneColumn, natural: int) -> int:
        """The least width of ``spec``'s column: a few characters (or pixels), never more than its content."""
        if spec.floor_px is not None:
            return min(natural, spec.floor_px)
        if spec.floor_chars is None:
            return natural
        return min(natural, self._chars(spec.floor_chars))

    def widths(self) -> dict[int, int]:
        """The widths the plan gives the columns in the viewport as it is now."""
        wants = []
        for spec in self.plan:
            natural = self.natural(spec.column)
            floor = self.text_floor if spec.column == self.text else self.floor(spec, natural)
            if spec.cap_chars is not None:
                natural = min(natural, self._chars(spec.cap_chars))
            wants.append((spec.column, floor, max(floor, natural)))
        return pane_widths(wants, self.text, self.view.viewport().width())

    def fit(self, *_args: Any) -> None:
        """Fit the columns to the viewport (nothing when the user laid them out)."""
        if not self.auto_fit or self._fitting:
            return
        header = self.view.horizontalHeader()
        self._fitting = True
        try:
            # Fitting may show or hide a scroll bar, which changes the room: fit to the new room.
            for _ in range(3):
                room = self.view.viewport().width()
                for col, width in self.widths().items():
                    header.resizeSection(col, width)
                if self.view.viewport().width() == room:
                    break
        finally:
            self._fitting = False
        self.view.horizontalScrollBar().setValue(0)

    def _chars(self, n: int) -> int:
        return self.view.fontMetrics().averageCharWidth() * n + CELL_MARGINS

    def _on_user_layout(self, *_args: Any) -> None:
        if not self._fitting:
            set_auto_fitted(self.view.horizontalHeader(), False)  # the user's: no more fitting

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Override: refit when the viewport's width changes (the pane, a scroll bar, the font)."""
        if event.type() == QEvent.Type.Resize and watched is self.view.viewport():
            self.fit()
        return False
