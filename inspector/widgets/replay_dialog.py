"""The guarded-replay plan dialog: the plan (events, where replay stops and why, the per-file
diff) and, after a run, the result beside it.

It sits behind classmethods returning plain values (``ReplayDialog.ask``, ``ReplayDialog.review``,
``ReplayDialog.show_result``), so tests patch them and never drive a modal ``exec()``. The flow
(:mod:`inspector.core.replay.flow`) orders the steps and the window's controller drives it
(:mod:`inspector.controllers.replay`); nothing here writes files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.advice import SCOPE_LABELS
from inspector.core.replay.flow import (
    Plan,
    PlannedEvent,
    Preflight,
    ReplayOutcome,
    Review,
    Scope,
    describe_journal_repair,
    describe_outcome,
)
from inspector.widgets.screen_fit import ElidingComboBox, fit_to_screen

#: The plan's heading before anything ran.
PLAN_TITLE = "Plan (predicted by a dry run; nothing has been written)"


def plan_title_after(outcome: ReplayOutcome) -> str:
    """The plan's heading once it was carried out (or refused), beside the result."""
    if outcome.backup is None:
        return f"Plan (not carried out: {outcome.status}; nothing was written)"
    return f"Plan (carried out: {outcome.status}; the folder before is backed up in {outcome.backup.path})"


def _fit_columns(view: QTreeWidget) -> None:
    """Columns as wide as their content (the last one stretches); the user may still resize."""
    header = view.header()
    for column in range(view.columnCount()):
        view.resizeColumnToContents(column)
    header.setStretchLastSection(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)


def _wrapping(label: QLabel) -> QLabel:
    """A label that wraps to the dialog instead of widening it (a long path or id breaks too)."""
    label.setWordWrap(True)
    label.setMinimumWidth(1)
    return label


class _ReadingBox(QTextBrowser):
    """Read-only text that wraps to the dialog, as tall as its text up to :attr:`MAX_LINES` lines,
    and scrolls when the dialog has less room: a label as tall as its text was cut at the bottom
    of a 540 px dialog, its end out of reach (issue 27)."""

    #: The box asks for its text's height up to this many lines.
    MAX_LINES = 12

    #: It keeps this many lines at least (then it scrolls).
    MIN_LINES = 3

    def __init__(self, text: str) -> None:
        super().__init__()
        self.setPlainText(text)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.document().documentLayout().documentSizeChanged.connect(lambda _size: self.updateGeometry())

    def text(self) -> str:
        """The whole text (as a label's)."""
        return self.toPlainText()

    def _lines(self, n: int) -> int:
        return self.fontMetrics().lineSpacing() * n + 2 * self.frameWidth() + 8

    def sizeHint(self) -> QSize:
        """Override: its text's height, up to :attr:`MAX_LINES` lines."""
        height = int(self.document().size().height()) + 2 * self.frameWidth() + 2
        height = max(self._lines(self.MIN_LINES), min(height, self._lines(self.MAX_LINES)))
        return QSize(super().sizeHint().width(), height)

    def minimumSizeHint(self) -> QSize:
        """Override: :attr:`MIN_LINES` lines (it scrolls to the rest)."""
        return QSize(super().minimumSizeHint().width(), self._lines(self.MIN_LINES))


def _with_tooltips(item: QTreeWidgetItem, char_dir: Path) -> None:
    """Every cell's full text on hover; a file row's tooltip is its full path."""
    for k in range(item.childCount()):
        child = item.child(k)
        for column in range(child.columnCount()):
            text = child.text(column)
            if item.parent() is None and column == 0 and not text.startswith("("):
                text = str(char_dir / text)
            child.setToolTip(column, text)
        _with_tooltips(child, char_dir)


#: The size the dialog asks for (it gets at most 90 % of the screen: :mod:`inspector.widgets.screen_fit`).
PREFERRED_WIDTH, PREFERRED_HEIGHT = 1200, 800

#: The "up to event" list offers at most this many pending events (the command line takes any id).
MAX_UNTIL_CHOICES = 5000


# -- plain values the dialogs return ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayChoice:
    """What the person chose in the replay dialog.

    Attributes:
        action: ``apply`` (carry out the plan shown), ``replan`` (plan again with ``scope``) or
            ``cancel``.
        scope: the scope selected in the dialog.
    """

    action: str
    scope: Scope


# -- dialogs --------------------------------------------------------------------------------------------


def _fmt(value: Any, limit: int = 200) -> str:
    """A field value in one line (JSON), shortened."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReplayDialog(QDialog):
    """The plan (events, where replay stops and why, per-file diff) and, after a run, the result
    beside it. The scope can be changed; a different scope is planned again before anything runs.

    Args:
        plan: the plan to show.
        preflight: its warnings are shown on top.
        pending: the pending events (choices for "up to event").
        notice: a line shown on top (e.g. "the folder changed; this is a new plan").
        outcome: when given, the dialog shows the result next to the plan and only closes.

    Attributes:
        events_view: the events that would apply.
        diff_view: the per-file diff (file → entry → field before/after).
        block_label: where replay stops and why, with what a person can do (hidden when none); it
            scrolls when the dialog is short.
        plan_heading: what the plan is: predicted, or carried out (or refused) and where the backup is.
        until_combo, park_combo: the events to replay up to, and the held events to park (their
            labels elide in the middle; the whole label is the tooltip).
        result_view: the result text (hidden until there is one).
        apply_button, replan_button: the actions.
    """

    def __init__(
        self,
        plan: Plan,
        preflight: Preflight | None = None,
        pending: list[PlannedEvent] | None = None,
        *,
        notice: str = "",
        outcome: ReplayOutcome | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.plan = plan
        self._pending = pending if pending is not None else plan.unapplied
        self._choice = ReplayChoice("cancel", plan.scope)
        self._editable = outcome is None
        self.setWindowTitle(f"Guarded replay — {plan.target.character}")
        layout = QVBoxLayout(self)

        notes = [notice] if notice else []
        if preflight is not None:
            notes += [w.message for w in preflight.warnings]
        self.notice_label = _wrapping(QLabel("\n".join(notes)))
        self.notice_label.setVisible(bool(notes))
        layout.addWidget(self.notice_label)

        layout.addWidget(self._scope_box(outcome is None))

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._plan_pane())
        self.result_view = QPlainTextEdit()
        self.result_view.setReadOnly(True)
        result_box = QGroupBox("Result")
        QVBoxLayout(result_box).addWidget(self.result_view)
        result_box.setVisible(False)
        self._result_box = result_box
        splitter.addWidget(result_box)
        layout.addWidget(splitter, 1)

        self.buttons = QDialogButtonBox()
        self.apply_button = self.buttons.addButton("Back up and apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button.setEnabled(plan.has_work)
        self.apply_button.clicked.connect(self._on_apply_clicked)
        self.close_button.clicked.connect(self.reject)
        layout.addWidget(self.buttons)
        if outcome is not None:
            self.set_outcome(outcome)
        # Large enough to read a typical plan (field names and values uncut), within the screen.
        fit_to_screen(self, QSize(PREFERRED_WIDTH, PREFERRED_HEIGHT))

    # -- building -------------------------------------------------------------------------------------

    def _scope_box(self, editable: bool) -> QGroupBox:
        box = QGroupBox("Scope")
        grid = QGridLayout(box)
        self.scope_tail = QRadioButton("Pending tail")
        self.scope_until = QRadioButton("Up to event:")
        self.until_combo = ElidingComboBox()
        for ev in self._pending[:MAX_UNTIL_CHOICES]:
            self.until_combo.addItem(ev.label(), ev.event_id)
        repairable = sum(1 for o in self.plan.orphans if o.repairable)
        self.scope_repair = QRadioButton(f"{SCOPE_LABELS['repair_orphans']} ({repairable})")
        # Park: a person goes past a held event (never automatic; planned, backed up and audited).
        self.scope_park = QRadioButton(SCOPE_LABELS["park"])
        self.scope_park.setToolTip(
            "Go past an event replay can never apply: it is recorded in events_parked.ndjson and never "
            "applied, and the held events of its entry then replay. The plan below shows what they change."
        )
        self.park_combo = ElidingComboBox()
        held = self.plan.blocks or ([self.plan.block] if self.plan.block is not None else [])
        if self.plan.park is not None and not any(b.event_id == self.plan.scope.park for b in held):
            self.park_combo.addItem(self.plan.park.event.label(), self.plan.scope.park)
        for b in held:
            self.park_combo.addItem(f"#{b.index} {b.type} ({b.reason})", b.event_id)
        # The journal repair: offered when the journal holds bytes the memory server cannot decode.
        fragments = len(self.plan.undecodable)
        self.scope_repair_journal = QRadioButton(f"{SCOPE_LABELS['repair_journal']} ({fragments} not UTF-8)")
        self.scope_repair_journal.setToolTip(
            "Move the bytes of events.ndjson that are not UTF-8 into events.ndjson.damaged (losslessly), keeping "
            "every complete record: the memory server cannot read a journal that holds them, and replays nothing "
            "for this character until they are gone. Nothing is replayed."
        )
        group = QButtonGroup(box)
        for b in (self.scope_tail, self.scope_until, self.scope_repair, self.scope_park, self.scope_repair_journal):
            group.addButton(b)
            b.setEnabled(editable)
        self.scope_repair_journal.setEnabled(
            editable and (fragments > 0 or self.plan.scope.kind == "repair_journal")
        )
        self.scope_until.setEnabled(editable and bool(self._pending))
        self.until_combo.setEnabled(editable and bool(self._pending))
        can_park = self.park_combo.count() > 0
        self.scope_park.setEnabled(editable and can_park)
        self.park_combo.setEnabled(editable and can_park)
        # Three rows, the event lists taking what is left: one row of every choice was wider than
        # a small screen, and the lists were as wide as their longest label (issue 27 item 1).
        grid.addWidget(self.scope_tail, 0, 0)
        grid.addWidget(self.scope_repair, 0, 2)
        grid.addWidget(self.scope_until, 1, 0)
        grid.addWidget(self.until_combo, 1, 1)
        grid.addWidget(self.scope_repair_journal, 1, 2)
        grid.addWidget(self.scope_park, 2, 0)
        grid.addWidget(self.park_combo, 2, 1)
        grid.setColumnStretch(1, 1)
        kind = self.plan.scope.kind
        radios = {"tail": self.scope_tail, "until": self.scope_until, "repair": self.scope_repair}
        radios["park"] = self.scope_park
        radios["repair_journal"] = self.scope_repair_journal
        radios[kind].setChecked(True)
        for combo, value in ((self.until_combo, self.plan.scope.until), (self.park_combo, self.plan.scope.park)):
            if value is not None:
                at = combo.findData(value)
                if at >= 0:
                    combo.setCurrentIndex(at)
        group.buttonToggled.connect(self._on_scope_changed)
        self.until_combo.currentIndexChanged.connect(self._on_scope_changed)
        self.park_combo.currentIndexChanged.connect(self._on_scope_changed)
        return box

    def _plan_pane(self) -> QWidget:
        plan = self.plan
        box = QGroupBox("Plan")
        self.plan_box = box
        # Its content scrolls when the dialog is short: at 540 px the heading with the backup's
        # path, the summary and the "blocked at" text were cut at the bottom, out of reach (issue 27).
        content = QWidget()
        col = QVBoxLayout(content)
        col.setContentsMargins(0, 0, 0, 0)
        self.plan_scroll = QScrollArea()
        self.plan_scroll.setWidget(content)
        self.plan_scroll.setWidgetResizable(True)
        self.plan_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.plan_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # labels wrap
        QVBoxLayout(box).addWidget(self.plan_scroll)
        # The heading is a label, not the box's title: a title never wraps, and a backup's path
        # in it made the dialog wider than the screen.
        self.plan_heading = _wrapping(QLabel(PLAN_TITLE))
        self.plan_heading.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.plan_heading.font()
        bold.setBold(True)
        self.plan_heading.setFont(bold)
        col.addWidget(self.plan_heading)
        verb = "re-apply" if plan.scope.kind == "repair" else "apply"
        summary = (
            f"{plan.scope.describe().capitalize()}: would {verb} {len(plan.events)} event(s). "
            f"{plan.total_events} events in the journal, {plan.pending} pending."
        )
        if plan.temp_files and plan.has_work:
            summary += f" Also removes {len(plan.temp_files)} leftover temp file(s) of interrupted writes."
        if plan.park is not None:
            park = plan.park
            summary += (
                f"\nPark {park.event.label()}: it is never applied, and replay goes past it (held: {park.reason}). "
                f"The decision is recorded in events_parked.ndjson and in the report; {len(park.released)} held "
                "event(s) of its entry then apply (listed below, with what they change)."
            )
        if plan.scope.kind == "repair_journal":
            summary = "\n".join(describe_journal_repair(plan))
        if not plan.journal_present:
            summary = "No journal in this folder (views only): nothing to replay."
        self.summary_label = _wrapping(QLabel(summary))
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        col.addWidget(self.summary_label)

        self.events_view = QTreeWidget()
        self.events_view.setHeaderLabels(["#", "Type", "Entry", "Event id"])
        self.events_view.setRootIsDecorated(False)
        for ev in plan.events:
            item = QTreeWidgetItem(self.events_view, [str(ev.index), ev.type, ev.entry or "", ev.event_id])
            for column in range(4):
                item.setToolTip(column, item.text(column))
        _fit_columns(self.events_view)
        col.addWidget(self.events_view, 1)

        blocks = [plan.block] if plan.block is not None else []
        blocks += [o.block for o in plan.unrepairable if o.block is not None]
        self.block_label = _ReadingBox("\n\n".join("\n".join(b.lines("window")) for b in blocks))
        self.block_label.setVisible(bool(blocks))
        col.addWidget(self.block_label)

        self.diff_view = QTreeWidget()
        self.diff_view.setHeaderLabels(["Change", "Before", "After"])
        self._fill_diff()
        col.addWidget(self.diff_view, 2)
        if plan.scope.kind == "repair_journal":
            # Nothing is replayed: the summary above lists the fragments and the change to each file.
            self.events_view.setVisible(False)
            self.diff_view.setVisible(False)
        return box

    def _fill_diff(self) -> None:
        diff = self.plan.diff
        files: dict[str, QTreeWidgetItem] = {}

        def file_item(name: str) -> QTreeWidgetItem:
            if name not in files:
                files[name] = QTreeWidgetItem(self.diff_view, [name])
            return files[name]

        for change in diff.entries:
            entry = QTreeWidgetItem(file_item(change.file), [f"{change.entry} ({change.kind})"])
            for f in change.fields:
                QTreeWidgetItem(entry, [f.field, _fmt(f.before), _fmt(f.after)])
        for added in diff.shard_entries_added:
            QTreeWidgetItem(file_item(added.file), [f"+ entry {added.entry_id}"])
        if diff.sentinel_before != diff.sentinel_after:
            QTreeWidgetItem(
                self.diff_view, ["events_applied.json", str(diff.sentinel_before), str(diff.sentinel_after)]
            )
        if not diff.entries and not diff.shard_entries_added and diff.sentinel_before == diff.sentinel_after:
            QTreeWidgetItem(self.diff_view, ["(no file changes)"])
        self.diff_view.expandAll()
        _with_tooltips(self.diff_view.invisibleRootItem(), self.plan.char_dir)
        _fit_columns(self.diff_view)

    # -- state ------------------------------------------------------------------------------------------

    def selected_scope(self) -> Scope:
        """The scope the radio buttons (and the event combo) select."""
        if self.scope_repair.isChecked():
            return Scope("repair")
        if self.scope_repair_journal.isChecked():
            return Scope("repair_journal")
        if self.scope_park.isChecked() and self.park_combo.currentData() is not None:
            return Scope("park", park=str(self.park_combo.currentData()))
        if self.scope_until.isChecked() and self.until_combo.currentData() is not None:
            return Scope("until", str(self.until_combo.currentData()))
        return Scope()

    def choice(self) -> ReplayChoice:
        """What the person chose (``cancel`` until a button is pressed)."""
        return self._choice

    def set_outcome(self, outcome: ReplayOutcome) -> None:
        """Show the result next to the plan; only closing is left."""
        self._editable = False
        self.result_view.setPlainText("\n".join(describe_outcome(outcome)))
        self._result_box.setVisible(True)
        self.plan_heading.setText(plan_title_after(outcome))
        self.apply_button.setVisible(False)
        self.close_button.setText("Close")
        for b in (
            self.scope_tail,
            self.scope_until,
            self.scope_repair,
            self.until_combo,
            self.scope_park,
            self.park_combo,
            self.scope_repair_journal,
        ):
            b.setEnabled(False)

    # -- slots ------------------------------------------------------------------------------------------

    @Slot()
    def _on_scope_changed(self, *_args: Any) -> None:
        """Every change of scope re-plans at once: the dialog closes with the new scope, and the
        flow shows the new plan."""
        scope = self.selected_scope()
        if self._editable and scope != self.plan.scope:
            self._choice = ReplayChoice("replan", scope)
            self.accept()

    @Slot()
    def _on_apply_clicked(self) -> None:
        self._choice = ReplayChoice("apply", self.plan.scope)
        self.accept()

    # -- the ask() pattern ----------------------------------------------------------------------------

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        plan: Plan,
        preflight: Preflight | None,
        pending: list[PlannedEvent],
        notice: str = "",
    ) -> ReplayChoice:
        """Show the plan modally; return what the person chose."""
        dialog = cls(plan, preflight, pending, notice=notice, parent=parent)
        dialog.exec()
        return dialog.choice()

    @classmethod
    def review(cls, parent: QWidget | None, review: Review) -> bool | Scope:
        """The flow's plan review: ``True`` to apply, ``False`` to close, a scope to re-plan."""
        choice = cls.ask(parent, review.plan, review.preflight, review.plan.unapplied, review.notice)
        if choice.action == "replan":
            return choice.scope
        return choice.action == "apply"

    @classmethod
    def show_result(cls, parent: QWidget | None, plan: Plan, outcome: ReplayOutcome) -> None:
        """Show the result next to the plan, modally."""
        dialog = cls(plan, outcome=outcome, parent=parent)
        dialog.exec()


__all__ = ["PLAN_TITLE", "ReplayChoice", "ReplayDialog", "plan_title_after"]
