"""The window's settings (issue 16 item 21): View ▸ Theme (system, light, dark), the font zoom
(Ctrl+plus, Ctrl+minus, Ctrl+0) of the tables and detail views, and File ▸ Open recent with Clear
recent. The choices are kept by :class:`~inspector.controllers.appearance.Appearance` in
``QSettings``, the recent locations by :class:`~inspector.core.recent.RecentLocations`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from inspector.controllers.appearance import Appearance
from inspector.core.appearance import THEMES
from inspector.core.recent import RecentLocations
from inspector.widgets.icons import ActionFactory
from inspector.widgets.status_line import StatusLine
from inspector.widgets.theme import follow_theme

THEME_TITLES = {"system": "&System", "light": "&Light", "dark": "&Dark"}


class SettingsActions(QObject):
    """The theme menu and the zoom actions.

    Args:
        appearance: the context's theme and zoom.
        host: the window (the menu's parent; a theme switch restyles it and everything in it).
        zoomed: the widgets the zoom applies to (their children follow): the characters, the
            timeline and the detail tabs, and the raw JSON, whose fixed-pitch font is its own.
        status: where the zoom is said.
        actions: makes the zoom actions.

    Attributes:
        theme_menu: View ▸ Theme, one checkable action per theme (:attr:`theme_actions`).
        zoom_in_action, zoom_out_action, reset_zoom_action: Ctrl+plus, Ctrl+minus, Ctrl+0.
    """

    def __init__(
        self,
        appearance: Appearance,
        host: QWidget,
        zoomed: Sequence[QWidget],
        status: StatusLine,
        actions: ActionFactory,
    ) -> None:
        super().__init__(host)
        self.appearance = appearance
        self.zoomed = tuple(zoomed)
        self.status = status
        self.theme_menu = QMenu("&Theme", host)
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for theme in THEMES:
            action = self.theme_menu.addAction(THEME_TITLES[theme])
            action.setCheckable(True)
            action.setChecked(theme == appearance.theme)
            action.triggered.connect(lambda _checked=False, t=theme: appearance.set_theme(t))
            group.addAction(action)
            self.theme_actions[theme] = action
        self.zoom_in_action = actions("Zoom &in", appearance.zoom_in, QKeySequence.StandardKey.ZoomIn)
        # Ctrl+= too: on most keyboards "+" needs Shift, and people press Ctrl and the "=" key.
        self.zoom_in_action.setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
        self.zoom_out_action = actions("Zoom &out", appearance.zoom_out, "Ctrl+-")
        self.reset_zoom_action = actions("&Reset zoom", appearance.reset_zoom, "Ctrl+0")
        self._applied = 0  # the zoom the widgets show now, in points
        appearance.zoom_changed.connect(self.apply_zoom)
        appearance.theme_changed.connect(lambda _theme: follow_theme(host))
        if appearance.zoom:
            self.apply_zoom(appearance.zoom)

    def apply_zoom(self, zoom: int) -> None:
        """Shift every font of the zoomed widgets and of everything inside them by the change.

        Each widget gets its own font, its present size plus the change: under the application's
        style sheet a child does not follow its parent's font any more, so setting the parents
        alone would leave tables at their old size.
        """
        delta = zoom - self._applied
        if delta:
            targets: dict[int, tuple[QWidget, QFont]] = {}
            for root in self.zoomed:
                for widget in (root, *root.findChildren(QWidget)):
                    targets.setdefault(id(widget), (widget, QFont(widget.font())))
            for widget, font in targets.values():  # every present font read before any is changed
                font.setPointSizeF(max(4.0, font.pointSizeF() + delta))
                widget.setFont(font)
            self._applied = zoom
        self.status.show(f"Zoom: {zoom:+d} pt" if zoom else "Zoom reset.", 3000)


class RecentMenu(QMenu):
    """File ▸ Open recent: the recent locations, newest first, and File ▸ Clear recent.

    Args:
        recent: the recent-locations store (``None``: none are kept, the menu stays empty).
        open_path: opens a location chosen in the menu.
        status: where clearing is said.
        actions: makes Clear recent.
        parent: the window.

    Attributes:
        clear_action: File ▸ Clear recent.
    """

    def __init__(
        self,
        recent: RecentLocations | None,
        open_path: Callable[[str], object],
        status: StatusLine,
        actions: ActionFactory,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Open &recent", parent)
        self.recent = recent
        self.open_path = open_path
        self.status = status
        self.clear_action = actions("&Clear recent", self.clear_recent)

    def refresh(self) -> None:
        """List the recent locations as they are kept now."""
        self.clear()
        items = self.recent.load() if self.recent is not None else []
        for path in items:
            action = self.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        self.setEnabled(bool(items))
        self.clear_action.setEnabled(bool(items))

    def clear_recent(self) -> None:
        if self.recent is not None:
            self.recent.clear()
        self.refresh()
        self.status.show("Cleared the recent folders.", 3000)
