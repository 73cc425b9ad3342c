"""The one module that names icons: SVGs under ``resources/icons``, tinted to the palette's text colour."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

import resources

OPEN_FOLDER = "folder-open"
OPEN_ZIP = "archive"
RELOAD = "reload"
SENTINEL = "sentinel"
FOLLOW = "follow"
NEXT_PROBLEM = "next-problem"
PREVIOUS_PROBLEM = "previous-problem"
REDACT = "redact"
GOTO = "goto"
COPY = "copy"
CANCEL = "cancel"
FILTER = "filter"
CLOCK = "clock"
APP = "app"

_cache: dict[tuple[str, str], QIcon] = {}


def icon(name: str, palette: QPalette | None = None) -> QIcon:
    """The icon ``name``, drawn in the palette's window-text colour (so it shows on dark themes)."""
    color = (palette or QPalette()).color(QPalette.ColorRole.WindowText).name()
    key = (name, color)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    try:
        data = resources.path("icons", f"{name}.svg").read_bytes()
    except OSError:
        return QIcon()
    renderer = QSvgRenderer(QByteArray(data.replace(b"currentColor", color.encode())))
    result = QIcon()
    for size in (16, 24, 32, 48):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        result.addPixmap(pixmap)
    _cache[key] = result
    return result
