"""Table columns the user arranges: the header's menu (show, hide, reset) and the layouts kept
between runs in the user's settings (never inside an opened folder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

#: Bumped when the default columns change, so that a layout saved by an older version is ignored.
LAYOUT_VERSION = 1
#: A table's own version, when its default columns changed alone: the Findings columns fit the
#: pane since version 2, and every run before kept its fixed widths as if the user had chosen them.
#: It counts within :data:`LAYOUT_VERSION` (:meth:`HeaderLayouts.key`), so a bump of either one
#: ignores what was kept before.
TABLE_VERSIONS = {"findings": 2}

#: A header's dynamic property: ``True`` while its table fits its own columns to the pane (see
#: :mod:`inspector.widgets.pane_columns`), which the user did not lay out: nothing to keep.
AUTO_FIT_PROPERTY = "autoFitColumns"


def auto_fitted(header: QHeaderView) -> bool:
    """Whether ``header``'s table fits its columns itself (the user has not laid them out)."""
    return bool(header.property(AUTO_FIT_PROPERTY))


def set_auto_fitted(header: QHeaderView, on: bool) -> None:
    header.setProperty(AUTO_FIT_PROPERTY, on)


def column_menu(view: QTableView, reset: Callable[[], None] | None = None) -> QMenu:
    """The header's context menu: one checkable entry per column (shown or hidden), and "Reset
    columns" when ``reset`` is given. The last shown column cannot be hidden."""
    header = view.horizontalHeader()
    model = view.model()
    menu = QMenu(header)
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    for visual in range(header.count()):
        col = header.logicalIndex(visual)
        title = model.headerData(col, Qt.Orientation.Horizontal) if model is not None else str(col)
        action = menu.addAction(str(title))
        action.setCheckable(True)
        action.setChecked(not header.isSectionHidden(col))
        action.setEnabled(shown != [col])
        action.setData(col)
        action.toggled.connect(lambda on, c=col: _show_column(view, c, on))
    if reset is not None:
        menu.addSeparator()
        menu.addAction("Reset columns", reset)
    menu.addSeparator()
    hint = menu.addAction("Drag a column's edge to resize it, its title to move it")
    hint.setEnabled(False)
    return menu


def _show_column(view: QTableView, col: int, on: bool) -> None:
    header = view.horizontalHeader()
    header.setSectionHidden(col, not on)
    if on and header.sectionSize(col) < header.minimumSectionSize() * 2:
        header.resizeSection(col, header.defaultSectionSize())


def install_column_menu(view: QTableView, reset: Callable[[], None] | None = None) -> None:
    """Right-clicking ``view``'s header offers :func:`column_menu`; its columns can be moved."""
    header = view.horizontalHeader()
    header.setSectionsMovable(True)
    header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def popup(point: Any) -> None:
        menu = column_menu(view, reset)
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(header.mapToGlobal(point))

    header.customContextMenuRequested.connect(popup)


class HeaderLayouts:
    """Keeps tables' header layouts (widths, order, hidden columns) in ``QSettings`` between runs.

    The settings are the user's (in tests, a file under a temporary folder); never anything inside
    an opened folder.

    Args:
        settings: where layouts are kept (``None``: nothing is kept).
    """

    def __init__(self, settings: QSettings | None) -> None:
        self.settings = settings

    @staticmethod
    def key(name: str) -> str:
        """Where the layout ``name`` is kept: under :data:`LAYOUT_VERSION`, and the table's own
        version when it has one (``layout/v1/findings.v2``), so that the two never name one key
        (a table's version 2 read as a later layout version 2)."""
        own = TABLE_VERSIONS.get(name)
        return f"layout/v{LAYOUT_VERSION}/{name}" + ("" if own is None else f".v{own}")

    def restore(self, name: str, header: QHeaderView) -> bool:
        """Apply the layout saved as ``name``; ``False`` (the header unchanged) when there is none
        or it does not fit this header."""
        if self.settings is None:
            return False
        state = self.settings.value(self.key(name))
        if state is None:
            return False
        count = header.count()
        try:
            ok = bool(header.restoreState(state))
        except (TypeError, ValueError):
            return False
        if ok and header.count() == count:
            set_auto_fitted(header, False)  # the user's layout wins over any fitting
            return True
        return False

    def save(self, name: str, header: QHeaderView) -> None:
        """Keep ``header``'s layout as ``name``; a layout the table fitted itself is not the user's:
        it is forgotten, so that the next window fits its own pane again."""
        if self.settings is None:
            return
        if auto_fitted(header):
            self.forget(name)
            return
        self.settings.setValue(self.key(name), header.saveState())
        self.settings.sync()

    def forget(self, name: str) -> None:
        """Drop the layout saved as ``name`` (the table lays itself out again next time)."""
        if self.settings is None:
            return
        self.settings.remove(self.key(name))
        self.settings.sync()
