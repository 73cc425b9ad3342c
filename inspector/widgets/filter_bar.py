"""The filter bar over the timeline: event types, states, a time range (and "go to time"), payload
text or regex, entry id."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeyEvent, QMouseEvent, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
    QWidgetAction,
)

from inspector.core.filtering import DAMAGED_TYPE, FilterError, TimelineFilter
from inspector.core.timeline import ROW_STATES
from inspector.core.timestamps import TIME_INPUT_HINT
from inspector.models.colors import STATE_LABELS
from inspector.widgets import icons

#: Text fields wait this long after the last keystroke before filtering (ms).
TEXT_DEBOUNCE_MS = 250


class StayOpenMenu(QMenu):
    """A menu whose checkable entries toggle without closing it, so that several can be ticked in
    one visit (by mouse, Space or Enter); Ctrl+click on one asks for "only this".

    Signals:
        only_requested(QAction): Ctrl+click on a checkable entry.
    """

    only_requested = Signal(QAction)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """Override: toggle a checkable entry and stay open."""
        action = self.actionAt(event.position().toPoint())
        if action is not None and action.isCheckable() and action.isEnabled() and action.menu() is None:
            if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
                self.only_requested.emit(action)
            else:
                action.trigger()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Override: Space and Enter toggle the highlighted checkable entry and stay open."""
        action = self.activeAction()
        keys = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if event.key() in keys and action is not None and action.isCheckable() and action.isEnabled():
            action.trigger()
            return
        super().keyPressEvent(event)


class _ChoiceButton(QToolButton):
    """A drop-down of checkable choices that stays open while you tick; all checked means "no
    filter". "All" ticks every choice; "Only" (a submenu, or Ctrl+click on a choice) keeps one."""

    changed = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._menu = StayOpenMenu(self)
        self._menu.only_requested.connect(lambda action: self.set_selected({action.data()}))
        self.setMenu(self._menu)
        self._actions: dict[str, QAction] = {}
        self.all_action: QAction | None = None
        self.only_menu: QMenu | None = None
        self._update_text()

    def set_choices(self, choices: Iterable[tuple[str, str]]) -> None:
        """``(value, label)`` pairs; keeps the checked state of values seen before."""
        previous = {v: a.isChecked() for v, a in self._actions.items()}
        self._menu.clear()
        self._actions = {}
        self.all_action = self._menu.addAction("All")
        self.all_action.setToolTip("Tick every choice (no filtering)")
        self.all_action.triggered.connect(lambda: self.set_selected(None))
        self.only_menu = self._menu.addMenu("Only")
        self._menu.addSeparator()
        for value, label in choices:
            action = QAction(label, self._menu)
            action.setCheckable(True)
            action.setData(value)
            action.setChecked(previous.get(value, True))
            action.setToolTip("Click to tick or untick (the menu stays open); Ctrl+click: only this")
            action.toggled.connect(self._on_toggled)
            self._menu.addAction(action)
            self._actions[value] = action
            only = self.only_menu.addAction(label)
            only.triggered.connect(lambda _checked=False, v=value: self.set_selected({v}))
        self._menu.setToolTipsVisible(True)
        self._update_text()

    def only(self, value: str) -> None:
        """Keep ``value`` alone ("only this")."""
        self.set_selected({value})

    def actions_by_value(self) -> dict[str, QAction]:
        return dict(self._actions)

    def selected(self) -> frozenset[str] | None:
        """The checked values, or ``None`` when all are checked (no filtering)."""
        checked = frozenset(v for v, a in self._actions.items() if a.isChecked())
        return None if len(checked) == len(self._actions) else checked

    def set_selected(self, values: Iterable[str] | None) -> None:
        wanted = None if values is None else set(values)
        for v, a in self._actions.items():
            a.blockSignals(True)
            a.setChecked(wanted is None or v in wanted)
            a.blockSignals(False)
        self._update_text()
        self.changed.emit()

    def _on_toggled(self, _checked: bool) -> None:
        self._update_text()
        self.changed.emit()

    def _update_text(self) -> None:
        sel = self.selected()
        if sel is None:
            self.setText(f"{self.title}: all")
        elif len(sel) == 1:
            self.setText(f"{self.title}: {next(iter(sel))}")
        else:
            self.setText(f"{self.title}: {len(sel)} of {len(self._actions)}")


def _tint(box: QLineEdit, on: bool) -> None:
    """A red tint on ``box`` (not a frame: the box keeps its size), or the application's palette
    again (the one in force: not the palette of the theme the box was built in)."""
    base_palette = QPalette()
    if not on:
        box.setPalette(base_palette)
        return
    base = base_palette.color(QPalette.ColorRole.Base)
    red = QColor(220, 40, 40)
    tinted = QColor(
        (base.red() * 2 + red.red()) // 3, (base.green() * 2 + red.green()) // 3, (base.blue() * 2 + red.blue()) // 3
    )
    palette = QPalette(base_palette)
    palette.setColor(QPalette.ColorRole.Base, tinted)
    box.setPalette(palette)


#: The time boxes' tooltip: what they accept, and what a journal's timestamps are.
TIME_TIP = (
    f"Times as {TIME_INPUT_HINT}, in the journal's local time. A bound covers what you type: "
    "\"to 2026-05-01\" keeps the whole day.\n"
    "Timestamps are not in order in a journal (a clock moved back, two writers): the range keeps "
    "every event whose time is in it, wherever it is; rows without a time (damaged lines) are hidden "
    "while a range is set. \"Go to time\" selects the first row, in journal order, at or after the "
    "time (among the rows shown)."
)


class TimeRangeButton(QToolButton):
    """A drop-down with the time range (From, To) and "Go to time".

    Signals:
        changed: From or To was edited (the bar debounces it).
        goto_requested(str): the time typed in "Go to time" (Enter or Go).
    """

    changed = Signal()
    goto_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # An icon alone keeps the bar narrow (a 900 px window); a range in force shows it pressed.
        icons.set_icon(self, icons.CLOCK, self.palette())
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.setCheckable(True)
        self.setAccessibleName("Time range")
        menu = QMenu(self)
        form = QWidget(menu)
        layout = QFormLayout(form)
        self.since = QLineEdit(form)
        self.until = QLineEdit(form)
        self.goto = QLineEdit(form)
        width = self.fontMetrics().horizontalAdvance("2026-05-01 09:00:00.000") + 40
        for box in (self.since, self.until, self.goto):
            box.setPlaceholderText(TIME_INPUT_HINT)
            box.setToolTip(TIME_TIP)
            box.setClearButtonEnabled(True)
            box.setMinimumWidth(width)
        self.go_button = QPushButton("Go", form)
        go_row = QHBoxLayout()
        go_row.addWidget(self.goto, 1)
        go_row.addWidget(self.go_button)
        layout.addRow("From", self.since)
        layout.addRow("To", self.until)
        layout.addRow("Go to time", go_row)
        action = QWidgetAction(menu)
        action.setDefaultWidget(form)
        menu.addAction(action)
        self.setMenu(menu)
        menu.aboutToHide.connect(lambda: self.setChecked(bool(self.since.text().strip() or self.until.text().strip())))
        self.since.textChanged.connect(self._on_edited)
        self.until.textChanged.connect(self._on_edited)
        self.goto.returnPressed.connect(self.request_goto)
        self.go_button.clicked.connect(self.request_goto)
        self._update_text()

    def set_range(self, since: str, until: str) -> None:
        """Set From and To (one change)."""
        for box, text in ((self.since, since), (self.until, until)):
            box.blockSignals(True)
            box.setText(text)
            box.blockSignals(False)
        self._on_edited()

    def request_goto(self) -> None:
        text = self.goto.text().strip()
        if text:
            self.goto_requested.emit(text)

    def open_goto(self) -> None:
        """Show the drop-down with the keyboard in "Go to time" (Go ▸ Go to time)."""
        self.menu().popup(self.mapToGlobal(self.rect().bottomLeft()))
        self.goto.setFocus()
        self.goto.selectAll()

    def show_error(self, message: str | None) -> None:
        """Tint the range boxes and say why in their tooltip (``None``: clear)."""
        for box in (self.since, self.until):
            _tint(box, bool(message))
            box.setToolTip(f"{message} (the last valid filter stays in force)\n\n{TIME_TIP}" if message else TIME_TIP)
        self._update_text(bool(message))

    def _on_edited(self) -> None:
        self._update_text()
        self.changed.emit()

    def _update_text(self, invalid: bool = False) -> None:
        since, until = self.since.text().strip(), self.until.text().strip()
        if invalid:
            self.setText("Time: invalid")
        elif since or until:
            self.setText(f"Time: from {since or 'the start'} to {until or 'the end'}")
        else:
            self.setText("Time: all")
        self.setChecked(bool(since or until))
        self.setToolTip(f"{self.text()}\n\n{TIME_TIP}")


class FilterBar(QWidget):
    """Builds a :class:`TimelineFilter` from its controls and emits it (text input is debounced).

    Signals:
        filter_changed(TimelineFilter): the filter to apply.
        goto_time_requested(str): "go to time" with the time typed.
    """

    filter_changed = Signal(object)
    goto_time_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)  # narrow gaps: the search and entry boxes keep their room at 900 px
        icon = QLabel()
        icons.set_icon(icon, icons.FILTER, self.palette(), 16)
        self.types = _ChoiceButton("Types", self)
        self.states = _ChoiceButton("States", self)
        self.states.set_choices((s, STATE_LABELS[s]) for s in ROW_STATES)
        self.time = TimeRangeButton(self)
        self.text = QLineEdit(self)
        self.text.setPlaceholderText("Search payloads…")
        self.text.setClearButtonEnabled(True)
        self.regex = QCheckBox(".*", self)
        self.regex.setToolTip("Treat the search text as a regular expression")
        self.entry = QLineEdit(self)
        self.entry.setPlaceholderText("Entry id…")
        self.entry.setClearButtonEnabled(True)
        self.entry.setMaximumWidth(200)
        # A filter error never changes the layout (a long message in a label once pushed the window
        # past the screen): the search box gets a red tint and the message as its tooltip.
        self.error_message = ""
        self._text_tip = "Search payloads: plain text, or a regular expression with .*"
        self.text.setToolTip(self._text_tip)
        self.count = QLabel(self)
        layout.addWidget(icon)
        layout.addWidget(self.types)
        layout.addWidget(self.states)
        layout.addWidget(self.time)
        layout.addWidget(self.text, 2)
        layout.addWidget(self.regex)
        layout.addWidget(self.entry, 1)
        layout.addWidget(self.count)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TEXT_DEBOUNCE_MS)
        self._timer.timeout.connect(self.emit_filter)
        self.types.changed.connect(self.emit_filter)
        self.states.changed.connect(self.emit_filter)
        self.regex.toggled.connect(self.emit_filter)
        self.time.changed.connect(self._timer.start)
        self.time.goto_requested.connect(self.goto_time_requested)
        self.text.textChanged.connect(self._timer.start)
        self.entry.textChanged.connect(self._timer.start)

    def set_types(self, types: Iterable[str]) -> None:
        """The event types present in the shown character (plus damaged lines)."""
        self.types.set_choices([(t, t) for t in sorted(types)] + [(DAMAGED_TYPE, DAMAGED_TYPE)])

    def current_filter(self) -> TimelineFilter:
        return TimelineFilter(
            types=self.types.selected(),
            states=self.states.selected(),
            text=self.text.text(),
            regex=self.regex.isChecked(),
            entry=self.entry.text().strip(),
            since=self.time.since.text().strip(),
            until=self.time.until.text().strip(),
        )

    def emit_filter(self) -> None:
        """Validate and emit the current filter now (skipping the debounce)."""
        self._timer.stop()
        flt = self.current_filter()
        try:
            flt.time_bounds()
        except FilterError as exc:
            self.time.show_error(str(exc))
            return
        self.time.show_error(None)
        try:
            flt.pattern()
        except FilterError as exc:
            self.show_error(str(exc))
            return
        self.show_error(None)
        self.filter_changed.emit(flt)

    def show_error(self, message: str | None) -> None:
        """Mark the search box as invalid (a red tint, the message as its tooltip), or clear it."""
        self.error_message = message or ""
        _tint(self.text, bool(message))
        self.text.setToolTip(f"{message} (the last valid filter stays in force)" if message else self._text_tip)

    def show_count(self, shown: int, total: int, busy: bool = False) -> None:
        if busy:
            self.count.setText("filtering…")
        elif shown == total:
            self.count.setText(f"{total:,} rows")
        else:
            self.count.setText(f"{shown:,} of {total:,} rows")

    def clear(self) -> None:
        for w in (self.text, self.entry):
            w.blockSignals(True)
            w.clear()
            w.blockSignals(False)
        self.regex.blockSignals(True)
        self.regex.setChecked(False)
        self.regex.blockSignals(False)
        self.time.set_range("", "")
        self.time.show_error(None)
        self.types.set_selected(None)
        self.states.set_selected(None)
