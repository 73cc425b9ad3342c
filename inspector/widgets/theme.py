"""What a theme switch does to the widgets beyond the palette Qt hands them (issue 27 item 9).

Qt gives every widget the new palette, but what a widget worked out from the old one stays: icons
tinted in the text colour, state colours blended into the base, a tint of its own, a highlight's
format. After the switch (:class:`~inspector.controllers.appearance.Appearance` has set the
palette and polished every widget again), :func:`follow_theme` draws the icons again and calls
``restyle()`` on each widget that has one, so that the window looks as at a start with that theme.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.widgets import icons


def follow_theme(root: QObject) -> None:
    """Restyle ``root`` and everything under it for the application's palette now in force."""
    icons.retint(root)
    for obj in (root, *root.findChildren(QObject)):
        restyle = getattr(obj, "restyle", None)
        if callable(restyle):
            restyle()
