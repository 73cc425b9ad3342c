"""The window's appearance settings as plain rules (issue 16 item 21): which theme applies, and
the bounds of the font zoom. The controller keeps them in ``QSettings`` and applies them."""

from __future__ import annotations

#: The themes the View menu offers; ``system`` is the platform's own palette.
THEMES = ("system", "light", "dark")

#: The environment variable that overrides the window's choice (for scripts and screenshots).
THEME_ENV = "MEMORY_INSPECTOR_THEME"

#: The font zoom, in points added to the application's font size (Ctrl+plus / Ctrl+minus).
ZOOM_MIN, ZOOM_MAX = -4, 12


def effective_theme(chosen: object, env: str | None) -> str:
    """The theme that applies: the environment variable when it names a theme, else the choice
    kept in the settings, else ``system`` (a damaged setting is not an error)."""
    if env and env.strip().lower() in THEMES:
        return env.strip().lower()
    return chosen if isinstance(chosen, str) and chosen in THEMES else "system"


def clamp_zoom(value: object) -> int:
    """A zoom step within :data:`ZOOM_MIN` … :data:`ZOOM_MAX` (``0`` for anything unreadable)."""
    try:
        step = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0
    return max(ZOOM_MIN, min(ZOOM_MAX, step))
