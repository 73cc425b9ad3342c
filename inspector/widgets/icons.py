"""The one module that names icons (SVGs under ``resources/icons``, tinted to the palette's text
colour) and makes the window's actions with them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QObject, QRectF, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

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

#: The dynamic property naming the icon an action, button or label shows (:func:`set_icon`), so
#: that :func:`retint` can draw it again in another theme's colour.
ICON_PROPERTY = "themedIcon"
#: The pixmap size of a label's icon.
SIZE_PROPERTY = "themedIconSize"


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
        set_icon(action, icon_name, parent.palette())
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setToolTip(tip)
        action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action


class ActionFactory:
    """Makes the actions of a host widget (the window) with :func:`make_action`, parented to it:
    one factory, built once by the window and handed to each helper that makes actions.

    Args:
        host: the actions' parent; a window-wide action is added to it too.
    """

    def __init__(self, host: QWidget) -> None:
        self.host = host

    def __call__(
        self, text: str, slot: Any, shortcut: Any = None, icon_name: str | None = None, tip: str = ""
    ) -> QAction:
        """A window-wide action: its shortcut works wherever the focus is in the host."""
        action = self.local(text, slot, shortcut, icon_name, tip)
        self.host.addAction(action)
        return action

    def local(
        self, text: str, slot: Any, shortcut: Any = None, icon_name: str | None = None, tip: str = ""
    ) -> QAction:
        """An action of the host that is not added to it: its shortcut works where it is placed (a
        menu, a view)."""
        return make_action(self.host, text, slot, shortcut, icon_name, tip)


def set_icon(
    target: QAction | QAbstractButton | QLabel, name: str, palette: QPalette | None = None, size: int = 16
) -> None:
    """Show icon ``name`` on an action or a button (a label: as a ``size`` px pixmap), drawn in
    ``palette``'s text colour, and remember it for :func:`retint`."""
    target.setProperty(ICON_PROPERTY, name)
    drawn = icon(name, palette)
    if isinstance(target, QLabel):
        target.setProperty(SIZE_PROPERTY, size)
        target.setPixmap(drawn.pixmap(size, size))
    else:
        target.setIcon(drawn)


def retint(root: QObject) -> None:
    """Draw every icon :func:`set_icon` put on ``root`` or under it again, in the application's
    palette: after a theme switch they show as at a start with that theme (issue 27 item 9)."""
    palette = QPalette()
    for target in (root, *root.findChildren(QObject)):
        name = target.property(ICON_PROPERTY)
        if isinstance(name, str) and isinstance(target, (QAction, QAbstractButton, QLabel)):
            size = target.property(SIZE_PROPERTY)
            set_icon(target, name, palette, size if isinstance(size, int) else 16)
