"""The filter bar over the timeline: event types, states, payload text or regex, entry id."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QWidget,
)

from inspector.core.filtering import DAMAGED_TYPE, FilterError, TimelineFilter
from inspector.core.timeline import ROW_STATES
from inspector.models.colors import STATE_LABELS
from inspector.widgets import icons

#: Text fields wait this long after the last keystroke before filtering (ms).
TEXT_DEBOUNCE_MS = 250


class _ChoiceButton(QToolButton):
    """A drop-down of checkable choices; all checked means "no filter"."""

    changed = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._menu = QMenu(self)
        self.setMenu(self._menu)
        self._actions: dict[str, QAction] = {}
        self._update_text()

    def set_choices(self, choices: Iterable[tuple[str, str]]) -> None:
        """``(value, label)`` pairs; keeps the checked state of values seen before."""
        previous = {v: a.isChecked() for v, a in self._actions.items()}
        self._menu.clear()
        self._actions = {}
        all_action = self._menu.addAction("Show all")
        all_action.triggered.connect(lambda: self.set_selected(None))
        self._menu.addSeparator()
        for value, label in choices:
            action = QAction(label, self._menu)
            action.setCheckable(True)
            action.setChecked(previous.get(value, True))
            action.toggled.connect(self._on_toggled)
            self._menu.addAction(action)
            self._actions[value] = action
        self._update_text()

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


class FilterBar(QWidget):
    """Builds a :class:`TimelineFilter` from its controls and emits it (text input is debounced).

    Signals:
        filter_changed(TimelineFilter): the filter to apply.
    """

    filter_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        icon = QLabel()
        icon.setPixmap(icons.icon(icons.FILTER, self.palette()).pixmap(16, 16))
        self.types = _ChoiceButton("Types", self)
        self.states = _ChoiceButton("States", self)
        self.states.set_choices((s, STATE_LABELS[s]) for s in ROW_STATES)
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
        self._text_palette = QPalette(self.text.palette())
        self.count = QLabel(self)
        layout.addWidget(icon)
        layout.addWidget(self.types)
        layout.addWidget(self.states)
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
        )

    def emit_filter(self) -> None:
        """Validate and emit the current filter now (skipping the debounce)."""
        self._timer.stop()
        flt = self.current_filter()
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
        if message:
            base = self._text_palette.color(QPalette.ColorRole.Base)
            red = QColor(220, 40, 40)
            tinted = QColor(
                (base.red() * 2 + red.red()) // 3,
                (base.green() * 2 + red.green()) // 3,
                (base.blue() * 2 + red.blue()) // 3,
            )
            palette = QPalette(self._text_palette)
            palette.setColor(QPalette.ColorRole.Base, tinted)
            self.text.setPalette(palette)  # a tint, not a frame: the box keeps its size
        else:
            self.text.setPalette(self._text_palette)
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
        self.types.set_selected(None)
        self.states.set_selected(None)
