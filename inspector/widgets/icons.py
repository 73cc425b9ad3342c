"""The one module that names icons (SVGs under ``resources/icons``, tinted to the palette's text
colour) and makes the window's actions with them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QWidget

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


def make_action(
    parent: QWidget, text: str, slot: Any, shortcut: Any = None, icon_name: str | None = None, tip: str = ""
) -> QAction:
    """An action with its shortcut, icon (in ``parent``'s palette) and tip, calling ``slot``: the
    one way the window's actions are made."""
    action = QAction(text, parent)
    if icon_name:
        action.setIcon(icon(icon_name, parent.palette()))
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setToolTip(tip)
        action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action
