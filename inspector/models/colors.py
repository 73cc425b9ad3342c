"""State colours derived from the palette, so the window reads the same in light and dark themes.

Each state has a hue; a row's background is that hue blended into the palette's ``Base`` colour,
more strongly on dark bases (where a faint tint disappears). Text keeps the palette's ``Text``
colour, which stays readable because the blend keeps the base's lightness band.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from inspector.core.export import STATE_LABELS  # noqa: F401  (its home is the rows' texts; re-exported)

#: Hue per row state (legend order). Applied is a faint tint: it is most rows and not a problem.
STATE_HUES: dict[str, tuple[str, float]] = {
    "applied": ("#3aa655", 0.14),
    "pending": ("#2f7fd8", 0.28),
    "blocked": ("#d93636", 0.45),
    "orphaned": ("#9b4fd6", 0.38),
    "suspect": ("#e08a00", 0.35),
    "damaged": ("#8a6d3b", 0.40),
}



def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def blend(base: QColor, over: QColor, amount: float) -> QColor:
    """``amount`` of ``over`` painted on ``base`` (both opaque)."""
    return QColor.fromRgbF(
        base.redF() + (over.redF() - base.redF()) * amount,
        base.greenF() + (over.greenF() - base.greenF()) * amount,
        base.blueF() + (over.blueF() - base.blueF()) * amount,
    )


def state_color(palette: QPalette, state: str) -> QColor | None:
    """The background of a row in ``state`` under ``palette``; ``None`` for states without a colour."""
    spec = STATE_HUES.get(state)
    if spec is None:
        return None
    hue, amount = spec
    if is_dark(palette):
        amount = min(0.9, amount * 1.5)
    return blend(palette.color(QPalette.ColorRole.Base), QColor(hue), amount)


def readable_on(fill: QColor) -> QColor:
    """Black or white, whichever reads better on ``fill``."""
    luma = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF()
    return QColor("#000000") if luma > 0.6 else QColor("#ffffff")


def accent_color(palette: QPalette, state: str) -> QColor:
    """A saturated version of the state's hue, for markers and badges (lighter on dark themes)."""
    color = QColor(STATE_HUES.get(state, ("#808080", 0))[0])
    return color.lighter(135) if is_dark(palette) else color
