"""Windows that fit the screen they open on (issue 27 items 1 and 3), and a combo box whose long
labels elide in the middle with the whole text on hover.

One rule: a window or dialog is never larger than :data:`SCREEN_SHARE` of the available screen
(:func:`screen_limit`), so its frame and its buttons are always on it. Dialogs call
:func:`fit_to_screen` once they are built; the main window sizes itself with :func:`clipped_size`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, QSettings, QSize, Qt
from PySide6.QtGui import QGuiApplication, QPainter, QPaintEvent, QResizeEvent, QScreen
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QVBoxLayout,
    QWidget,
)

#: The share of the available screen a window may take at most, in each direction.
SCREEN_SHARE = 0.9


def screen_of(widget: QWidget | None) -> QScreen | None:
    """The screen ``widget`` is on (its parent's before it is shown), else the primary screen."""
    probe = widget
    while probe is not None:
        screen = probe.screen()
        if screen is not None:
            return screen
        probe = probe.parentWidget()
    return QGuiApplication.primaryScreen()


def screen_limit(widget: QWidget | None) -> QRect:
    """The part of ``widget``'s screen a window may take: :data:`SCREEN_SHARE` of the available
    geometry (without panels and docks), centred in it."""
    screen = screen_of(widget)
    avail = screen.availableGeometry() if screen is not None else QRect(0, 0, 800, 600)
    size = QSize(int(avail.width() * SCREEN_SHARE), int(avail.height() * SCREEN_SHARE))
    rect = QRect(avail.topLeft(), size)
    rect.moveCenter(avail.center())
    return rect


def clipped_size(widget: QWidget | None, wanted: QSize) -> QSize:
    """``wanted``, clipped to :func:`screen_limit`."""
    return wanted.boundedTo(screen_limit(widget).size())


def fit_to_screen(widget: QWidget, preferred: QSize | None = None) -> None:
    """Size ``widget`` (a built dialog or tool window) to ``preferred`` (default: its size hint)
    within :func:`screen_limit`, cap it there, and place it inside: over its parent when it has one,
    else centred. Its frame counts: once shown, when the window system has framed it, it is fitted
    again with the frame's real margins."""
    _fit(widget, preferred)
    widget.installEventFilter(_RefitOnShow(widget, preferred))


def _fit(widget: QWidget, preferred: QSize | None) -> None:
    limit = screen_limit(widget)
    frame_extra = widget.frameGeometry().size() - widget.geometry().size() if widget.isVisible() else QSize(0, 0)
    room = limit.size() - frame_extra
    widget.setMaximumSize(room)
    wanted = preferred if preferred is not None else widget.sizeHint()
    size = wanted.expandedTo(widget.minimumSizeHint()).boundedTo(room)
    widget.resize(size)
    frame = QRect(limit.topLeft(), size + frame_extra)
    parent = widget.parentWidget()
    if parent is not None and parent.isVisible():
        frame.moveCenter(parent.window().frameGeometry().center())
    else:
        frame.moveCenter(limit.center())
    # Inside the limit whatever the parent's place: a parent half off the screen keeps the dialog on it.
    frame.moveLeft(max(limit.left(), min(frame.left(), limit.right() - frame.width() + 1)))
    frame.moveTop(max(limit.top(), min(frame.top(), limit.bottom() - frame.height() + 1)))
    widget.move(frame.topLeft())  # move() places the frame's top-left corner


class _RefitOnShow(QObject):
    """Fits its window again when it is first shown (then the frame's margins are known)."""

    def __init__(self, widget: QWidget, preferred: QSize | None) -> None:
        super().__init__(widget)
        self._preferred = preferred

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Override: on the first show, fit again with the frame the window system gave it."""
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            _fit(watched, watched.size() if self._preferred is None else self._preferred)
        return False


class OwnMinimum(QWidget):
    """Holds one pane whose minimum size is ``minimum()``, never its content's: a splitter and a
    window take a pane's minimum from its content, so a long word a selection shows moved a
    splitter and grew the window (issue 27 item 2). The content is squeezed (it wraps, elides or
    scrolls) instead.

    Args:
        pane: the pane held.
        minimum: the pane's minimum size (asked at each layout: it may follow, say, tab titles).
    """

    def __init__(self, pane: QWidget, minimum: Callable[[], QSize], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pane = pane
        self._minimum = minimum
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(pane)

    def minimumSizeHint(self) -> QSize:
        """Override: the pane's own minimum, not its content's."""
        return self._minimum()

    def sizeHint(self) -> QSize:
        """Override: the content's size hint, at least the minimum."""
        return self.pane.sizeHint().expandedTo(self._minimum())


class ElidingLabel(QLabel):
    """A one-line plain-text label that shrinks: cut with "…" when it has less room than its text
    (at the end, or where ``mode`` says), the whole text then on hover (the status bar's fields ran
    into each other at 900 px, issue 27 item 4; the sentinel bar's ids are cut in the middle, since
    they differ at both ends). Its size hint is its whole text; its minimum, :attr:`min_chars`.

    Args:
        text: the whole text.
        mode: where the text is cut when it does not fit.
    """

    #: How many characters the label keeps at least.
    min_chars = 8

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
    ) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.mode = mode
        self._tip = ""

    def minimumSizeHint(self) -> QSize:
        """Override: a few characters, not the whole text."""
        fm = self.fontMetrics()
        return QSize(fm.averageCharWidth() * self.min_chars, super().minimumSizeHint().height())

    def setToolTip(self, tip: str) -> None:
        """Override: the label's own tooltip; the whole text is added while it is elided."""
        self._tip = tip
        super().setToolTip(tip)

    def shown_text(self) -> str:
        """The text as painted: whole, or cut (where :attr:`mode` says) to the label's width."""
        room = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), self.mode, room)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Override: the whole text on hover while it is cut."""
        super().resizeEvent(event)
        self._update_tip()

    def _update_tip(self) -> None:
        cut = self.shown_text() != self.text()
        tip = "\n\n".join(t for t in (self.text() if cut else "", self._tip) if t)
        super().setToolTip(tip)

    def setText(self, text: str) -> None:
        """Override: keep the whole text; the tooltip follows."""
        super().setText(text)
        self._update_tip()

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Override: paint the text cut to the room there is."""
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(self.alignment()) | Qt.TextFlag.TextSingleLine, self.shown_text())


#: Where the main window's size is kept between runs (in the user's settings, beside the layouts).
WINDOW_SIZE_KEY = "window/size"


def opening_size(widget: QWidget, settings: QSettings | None, default: QSize) -> QSize:
    """The size a main window opens at: the size it had when last closed, clipped to the available
    screen; the first time (or a kept value that is not a size) ``default`` clipped to
    :func:`screen_limit`."""
    kept = settings.value(WINDOW_SIZE_KEY) if settings is not None else None
    if isinstance(kept, QSize) and kept.isValid() and not kept.isEmpty():
        screen = screen_of(widget)
        return kept.boundedTo(screen.availableGeometry().size()) if screen is not None else kept
    return clipped_size(widget, default)


def keep_size(widget: QWidget, settings: QSettings | None) -> None:
    """Keep ``widget``'s size for :func:`opening_size` (a maximised window keeps its normal size)."""
    if settings is None:
        return
    size = widget.normalGeometry().size() if widget.isMaximized() or widget.isFullScreen() else widget.size()
    if size.isValid() and not size.isEmpty():
        settings.setValue(WINDOW_SIZE_KEY, size)
        settings.sync()


#: How many characters an eliding combo box is wide at least (a UUID's first part and the type).
COMBO_MIN_CHARS = 24


class ElidingComboBox(QComboBox):
    """A combo box as wide as its layout gives it (not as its longest label): the shown label is
    elided in the middle, the whole text is its tooltip and each item's, and the list elides in the
    middle too."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(COMBO_MIN_CHARS)
        self.view().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.currentIndexChanged.connect(self._on_current_index_changed)

    def addItem(self, text: str, userData: object = None) -> None:  # type: ignore[override]
        """Override: the item's tooltip is its whole text."""
        super().addItem(text, userData)
        self.setItemData(self.count() - 1, text, Qt.ItemDataRole.ToolTipRole)
        if self.count() == 1:
            self.setToolTip(text)

    def _on_current_index_changed(self, _index: int) -> None:
        self.setToolTip(self.currentText())

    def shown_text(self) -> str:
        """The label as painted: the current text elided in the middle to the box's text area."""
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        area = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return self.fontMetrics().elidedText(self.currentText(), Qt.TextElideMode.ElideMiddle, max(0, area.width() - 4))

    def paintEvent(self, _event: object) -> None:
        """Override: paint the current label elided in the middle (Qt's own cuts it at the end)."""
        painter = QStylePainter(self)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        opt.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)


__all__ = [
    "COMBO_MIN_CHARS",
    "SCREEN_SHARE",
    "WINDOW_SIZE_KEY",
    "ElidingComboBox",
    "ElidingLabel",
    "OwnMinimum",
    "clipped_size",
    "fit_to_screen",
    "keep_size",
    "opening_size",
    "screen_limit",
    "screen_of",
]
