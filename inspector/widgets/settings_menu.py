"""The window's settings (issue 16 item 21): View ▸ Theme (system, light, dark), the font zoom
(Ctrl+plus, Ctrl+minus, Ctrl+0) of the tables and detail views, and File ▸ Clear recent. The
choices are kept by :class:`~inspector.controllers.appearance.Appearance` in ``QSettings``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from inspector.controllers.appearance import Appearance
from inspector.core.appearance import THEMES
from inspector.widgets.theme import follow_theme

if TYPE_CHECKING:
    from inspector.widgets.main_window import MainWindow

THEME_TITLES = {"system": "&System", "light": "&Light", "dark": "&Dark"}


class SettingsActions(QObject):
    """The theme menu, the zoom actions and Clear recent, wired to the window.

    Args:
        window: the main window (its tables and detail views take the zoom).
        appearance: the context's theme and zoom.

    Attributes:
        theme_menu: View ▸ Theme, one checkable action per theme (:attr:`theme_actions`).
        zoom_in_action, zoom_out_action, reset_zoom_action: Ctrl+plus, Ctrl+minus, Ctrl+0.
        clear_recent_action: File ▸ Clear recent.
    """

    def __init__(self, window: MainWindow, appearance: Appearance) -> None:
        super().__init__(window)
        self.window = window
        self.appearance = appearance
        self.theme_menu = QMenu("&Theme", window)
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for theme in THEMES:
            action = self.theme_menu.addAction(THEME_TITLES[theme])
            action.setCheckable(True)
            action.setChecked(theme == appearance.theme)
            action.triggered.connect(lambda _checked=False, t=theme: appearance.set_theme(t))
            group.addAction(action)
            self.theme_actions[theme] = action
        self.zoom_in_action = window._action("Zoom &in", appearance.zoom_in, QKeySequence.StandardKey.ZoomIn)
        # Ctrl+= too: on most keyboards "+" needs Shift, and people press Ctrl and the "=" key.
        self.zoom_in_action.setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
        self.zoom_out_action = window._action("Zoom &out", appearance.zoom_out, "Ctrl+-")
        self.reset_zoom_action = window._action("&Reset zoom", appearance.reset_zoom, "Ctrl+0")
        self.clear_recent_action = window._action("&Clear recent", self.clear_recent)
        self._applied = 0  # the zoom the widgets show now, in points
        appearance.zoom_changed.connect(self.apply_zoom)
        appearance.theme_changed.connect(lambda _theme: follow_theme(self.window))
        if appearance.zoom:
            self.apply_zoom(appearance.zoom)

    def zoomed(self) -> list[QWidget]:
        """The widgets the zoom applies to: the characters, the timeline and the detail tabs (their
        children follow), and the raw JSON, whose fixed-pitch font is its own."""
        w = self.window
        return [w.characters, w.timeline, w.detail, w.detail.event_detail.raw]

    def apply_zoom(self, zoom: int) -> None:
        """Shift every font of the zoomed widgets and of everything inside them by the change.

        Each widget gets its own font, its present size plus the change: under the application's
        style sheet a child does not follow its parent's font any more, so setting the parents
        alone would leave tables at their old size.
        """
        delta = zoom - self._applied
        if delta:
            targets: dict[int, tuple[QWidget, QFont]] = {}
            for root in self.zoomed():
                for widget in (root, *root.findChildren(QWidget)):
                    targets.setdefault(id(widget), (widget, QFont(widget.font())))
            for widget, font in targets.values():  # every present font read before any is changed
                font.setPointSizeF(max(4.0, font.pointSizeF() + delta))
                widget.setFont(font)
            self._applied = zoom
        self.window.statusBar().showMessage(f"Zoom: {zoom:+d} pt" if zoom else "Zoom reset.", 3000)

    def clear_recent(self) -> None:
        w = self.window
        if w.recent is not None:
            w.recent.clear()
        w._refresh_recent_menu()
        w.statusBar().showMessage("Cleared the recent folders.", 3000)
