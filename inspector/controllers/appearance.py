"""The theme and the font zoom (issue 16 item 21): chosen in the window, kept in the context's
``QSettings``, applied to the application (the palette) and announced (the zoom)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from inspector.core.appearance import THEMES, clamp_zoom, effective_theme

THEME_KEY = "appearance/theme"
ZOOM_KEY = "appearance/zoom"


def dark_palette() -> QPalette:
    """A dark Fusion palette."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, c in (
        (role.Window, "#2b2d30"),
        (role.WindowText, "#dfe1e5"),
        (role.Base, "#1e1f22"),
        (role.AlternateBase, "#26282b"),
        (role.Text, "#dfe1e5"),
        (role.Button, "#33353a"),
        (role.ButtonText, "#dfe1e5"),
        (role.Highlight, "#3574f0"),
        (role.HighlightedText, "#ffffff"),
        (role.ToolTipBase, "#3c3f41"),
        (role.ToolTipText, "#dfe1e5"),
        (role.PlaceholderText, "#8c8f94"),
        (role.Link, "#6aa0ff"),
    ):
        p.setColor(r, QColor(c))
    return p


def theme_palette(theme: str) -> QPalette:
    """The application palette of ``theme``: an empty ``QPalette`` resets Qt to the platform's."""
    if theme == "dark":
        return dark_palette()
    if theme == "light":
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        return app.style().standardPalette()  # Fusion's light palette, whatever the platform's is
    return QPalette()


class Appearance(QObject):
    """The theme and zoom the window shows, kept in ``settings``.

    Args:
        settings: where the choices are kept (the context's).
        env_theme: ``$MEMORY_INSPECTOR_THEME`` (it overrides the kept theme at start).

    Attributes:
        theme: the theme in force (one of :data:`~inspector.core.appearance.THEMES`).
        zoom: points added to the font size of the tables and detail views.

    Signals:
        theme_changed(str): another theme was applied.
        zoom_changed(int): the zoom changed.
    """

    theme_changed = Signal(str)
    zoom_changed = Signal(int)

    def __init__(self, settings: QSettings, env_theme: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.theme = effective_theme(settings.value(THEME_KEY), env_theme)
        self.zoom = clamp_zoom(settings.value(ZOOM_KEY, 0))

    def apply_theme(self) -> None:
        """Give the application the palette of :attr:`theme` (at start, and after a choice)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            # A widget the style sheet has polished keeps the palette it was polished with (the
            # character list and the detail panes stayed white, issue 27 item 9), and unpolishing it
            # gives back the one it had before: so the sheet is taken off first, the palette set, and
            # the sheet set again, which polishes every widget under the new palette, as at a start.
            palette = theme_palette(self.theme)
            if palette == app.palette():
                return  # nothing to restyle (a start in the palette already in force)
            sheet = app.styleSheet()
            if sheet:
                app.setStyleSheet("")
            app.setPalette(palette)
            if sheet:
                app.setStyleSheet(sheet)

    def set_theme(self, theme: str) -> None:
        """Apply ``theme`` and keep it for the next start."""
        if theme not in THEMES:
            raise ValueError(f"unknown theme {theme!r}")
        self.settings.setValue(THEME_KEY, theme)
        self.settings.sync()
        changed = theme != self.theme
        self.theme = theme
        self.apply_theme()
        if changed:
            self.theme_changed.emit(theme)

    def set_zoom(self, zoom: int) -> None:
        """Set the zoom (clamped) and keep it; ``zoom_changed`` when it moved."""
        zoom = clamp_zoom(zoom)
        if zoom == self.zoom:
            return
        self.zoom = zoom
        self.settings.setValue(ZOOM_KEY, zoom)
        self.settings.sync()
        self.zoom_changed.emit(zoom)

    def zoom_in(self) -> None:
        self.set_zoom(self.zoom + 1)

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom - 1)

    def reset_zoom(self) -> None:
        self.set_zoom(0)
