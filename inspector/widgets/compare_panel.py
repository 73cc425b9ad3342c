"""File ▸ Compare with…: two exports of one character in one panel (issue 17).

The two timelines side by side, aligned at their common prefix (row = position; the divergence
row highlighted; events only on one side marked), each side's sentinel and damage, the entries
that differ with their changed fields as a before/after tree, and the outbox changes. It renders a
:class:`~inspector.controllers.support.CompareResult`; activating an event of A asks the window to
select it (:attr:`ComparePanel.activated_a`), an event of B shows its record here. Texts are
redacted while the window's redaction is on (:func:`inspector.core.redaction.redact_tree`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.controllers.support import COMMON, LISTED_ROWS, ONLY, AlignedEvent, CompareResult
from inspector.core.compare import EntryDiff, JournalSide, ValueChange
from inspector.core.compare.tree import plain
from inspector.core.redaction import redact_tree
from inspector.core.text import count, one_line
from inspector.widgets.screen_fit import fit_to_screen

#: The columns of each side's table.
COLUMNS = ("#", "Mark", "Type", "Event id")
MARK_COLUMN = COLUMNS.index("Mark")

#: Where the two journals part, and the events only one side holds (translucent: any theme).
DIVERGENCE_COLOR = QColor(255, 170, 0, 120)
ONLY_COLORS = {"A": QColor(220, 50, 50, 60), "B": QColor(40, 160, 70, 60)}

#: The role holding a row's event index (``None``: a summary row, or no event at this position).
EVENT_ROLE = Qt.ItemDataRole.UserRole

#: Nested values are unfolded in the entries tree down to this depth.
TREE_DEPTH = 4

#: A value longer than this is cut in its cell (the whole value is in the tooltip).
CELL_CHARS = 200


def value_text(value: Any) -> str:
    """A JSON value on one line (``—`` for none), cut to :data:`CELL_CHARS`."""
    if value is None:
        return "—"
    text = one_line(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def side_text(name: str, side: JournalSide) -> str:
    """One side's journal in a line: events, sentinel, damage (or why it cannot be read)."""
    if not side.present:
        return f"{name}: no journal"
    where = f" at #{side.sentinel_index}" if side.sentinel_index is not None else ""
    parts = [f"{name}: {count(side.events, 'event')}", f"sentinel {side.sentinel_state}{where}"]
    if side.damage:
        shown = ", ".join(f"line {d.line}: {d.kind}" for d in side.damage[:5])
        more = f", … {len(side.damage) - 5:,} more" if len(side.damage) > 5 else ""
        parts.append(f"{count(len(side.damage), 'damaged line')} ({shown}{more})")
    else:
        parts.append("no damage")
    if side.error:
        parts.append(one_line(side.error))
    return " · ".join(parts)


class ComparePanel(QWidget):
    """The comparison of what is open (A) with another export (B), in its own window.

    Args:
        result: what to show.
        redact: hide texts (the window's redaction); :meth:`set_redact` changes it.

    Signals:
        activated_a(int): an event of A was activated: its index, which is its ref in the window's
            timeline.

    Attributes:
        result: what is shown.
        header: which character, and A and B.
        summary: common prefix, divergence, counts.
        a_table, b_table: the two timelines, row by row at the same positions.
        a_side, b_side: each side's events, sentinel and damage.
        divergence_row: the row of the first position where they part (``None``: they do not).
        entries: the entries that differ, their changed fields as a before/after tree.
        outbox: the outbox operations added, finished and dead-lettered.
        detail: the record of the event of B selected (or what activating one of A does).
        tabs: entries, outbox and detail.
    """

    activated_a = Signal(int)

    def __init__(self, result: CompareResult, *, redact: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.result = result
        self.redact = redact
        self.setWindowTitle(f"Compare — {one_line(result.comparison.character)}")
        layout = QVBoxLayout(self)
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.summary = QLabel()
        # Long paths wrap instead of widening the window past the screen (issue 27 item 1).
        for label in (self.header, self.summary):
            label.setWordWrap(True)
            label.setMinimumWidth(1)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.a_table, self.b_table = self._table(), self._table()
        self.a_side, self.b_side = QLabel(), QLabel()
        sides = QSplitter(Qt.Orientation.Horizontal)
        boxes = (("A (open in the window)", self.a_table, self.a_side), ("B", self.b_table, self.b_side))
        for title, table, label in boxes:
            box = QGroupBox(title)
            box_layout = QVBoxLayout(box)
            label.setWordWrap(True)
            label.setMinimumWidth(1)
            label.setTextFormat(Qt.TextFormat.PlainText)
            box_layout.addWidget(label)
            box_layout.addWidget(table, 1)
            sides.addWidget(box)
        self.entries = QTreeWidget()
        self.entries.setHeaderLabels(["Entry / field", "Change", "Before (A)", "After (B)"])
        self.entries.setUniformRowHeights(True)
        self.outbox = QPlainTextEdit()
        self.outbox.setReadOnly(True)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.entries, "Entries")
        self.tabs.addTab(self.outbox, "Outbox")
        self.tabs.addTab(self.detail, "Event")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(sides)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout.addWidget(self.header)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)

        self.divergence_row: int | None = None
        self._fill_tables()
        self._render_texts()
        a_bar, b_bar = self.a_table.verticalScrollBar(), self.b_table.verticalScrollBar()
        a_bar.valueChanged.connect(b_bar.setValue)  # the rows stay side by side
        b_bar.valueChanged.connect(a_bar.setValue)
        self.a_table.activated.connect(self._on_a_activated)
        self.a_table.currentCellChanged.connect(self._on_a_current)
        self.b_table.currentCellChanged.connect(self._on_b_current)
        self.b_table.activated.connect(lambda index: self.show_b_event(index.row()))
        if self.divergence_row is not None:
            item = self.a_table.item(self.divergence_row, 0)
            self.a_table.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)
        fit_to_screen(self, QSize(1200, 760))

    @staticmethod
    def _table() -> QTableWidget:
        table = QTableWidget(0, len(COLUMNS))
        table.setHorizontalHeaderLabels(list(COLUMNS))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setWordWrap(False)  # one line per event: the rows of both sides stay level
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        table.horizontalHeader().setStretchLastSection(True)
        return table

    # -- the timelines ---------------------------------------------------------------------------------

    def _fill_tables(self) -> None:
        r = self.result
        j = r.comparison.journal
        positions = max(len(r.a), len(r.b))
        lead = 1 if r.first > 0 else 0
        more = {
            "A": j.a.events - r.first - len(r.a),
            "B": j.b.events - r.first - len(r.b),
        }
        tail = 1 if max(more.values()) > 0 else 0
        for table in (self.a_table, self.b_table):
            table.setRowCount(lead + positions + tail)
        if j.diverges_at is not None and r.first <= j.diverges_at < r.first + positions:
            self.divergence_row = lead + j.diverges_at - r.first
        for name, table, events in (("A", self.a_table, r.a), ("B", self.b_table, r.b)):
            if lead:
                common = f"#0 – #{r.first - 1}: {count(r.first, 'common event')} (the same ids in the same order)"
                self._span_row(table, 0, common)
            for offset in range(positions):
                ev = events[offset] if offset < len(events) else None
                self._event_row(table, lead + offset, name, r.first + offset, ev)
            if tail:
                n = more[name]
                text = f"… {count(n, 'more event')} of {name} not listed (the panel lists {LISTED_ROWS:,})"
                self._span_row(table, lead + positions, text if n > 0 else "")
        for table in (self.a_table, self.b_table):
            table.resizeColumnsToContents()

    @staticmethod
    def _span_row(table: QTableWidget, row: int, text: str) -> None:
        item = QTableWidgetItem(text)
        item.setData(EVENT_ROLE, None)
        table.setItem(row, 0, item)
        table.setSpan(row, 0, 1, len(COLUMNS))

    def _event_row(self, table: QTableWidget, row: int, name: str, position: int, ev: AlignedEvent | None) -> None:
        other = "B" if name == "A" else "A"
        diverges = row == self.divergence_row
        if ev is None:
            cells = [f"#{position}", f"no event ({name} ends before)", "", ""]
        else:
            mark = {COMMON: "common", ONLY: f"only in {name}"}.get(ev.mark, f"in {other} too, elsewhere")
            cells = [f"#{ev.index}", mark, one_line(ev.type), ev.event_id]
        if diverges:
            cells[MARK_COLUMN] = f"diverges here · {cells[MARK_COLUMN]}"
        color = DIVERGENCE_COLOR if diverges else ONLY_COLORS[name] if ev is not None and ev.mark == ONLY else None
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(EVENT_ROLE, ev.index if ev is not None else None)
            if color is not None:
                item.setBackground(QBrush(color))
            table.setItem(row, col, item)

    def event_index(self, table: QTableWidget, row: int) -> int | None:
        """The event index of ``row`` of ``table`` (``None``: no event there)."""
        item = table.item(row, 0)
        value = item.data(EVENT_ROLE) if item is not None else None
        return int(value) if value is not None else None

    def _event_of_b(self, row: int) -> AlignedEvent | None:
        index = self.event_index(self.b_table, row)
        if index is None:
            return None
        return next((e for e in self.result.b if e.index == index), None)

    def _on_a_activated(self, index: QModelIndex) -> None:
        event = self.event_index(self.a_table, index.row())
        if event is not None:
            self.activated_a.emit(event)

    def _on_a_current(self, row: int, _col: int, _prev_row: int, _prev_col: int) -> None:
        if self.event_index(self.a_table, row) is not None:
            self.detail.setPlainText("An event of A: activate it (double-click or Enter) to select it in the window.")

    def _on_b_current(self, row: int, _col: int, _prev_row: int, _prev_col: int) -> None:
        self.show_b_event(row)

    def show_b_event(self, row: int) -> None:
        """Show the record of the event of B at ``row`` in the Event tab (redacted when on)."""
        ev = self._event_of_b(row)
        if ev is None:
            return
        payload = redact_tree(ev.payload) if self.redact else ev.payload
        mark = self.b_table.item(row, MARK_COLUMN).text()
        body = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
        self.detail.setPlainText(
            f"B #{ev.index} · line {ev.line} · {one_line(ev.type)}\nid: {ev.event_id}\n{mark}\n\npayload:\n{body}"
        )
        self.tabs.setCurrentWidget(self.detail)

    # -- the texts (redacted when on) ------------------------------------------------------------------

    def set_redact(self, on: bool) -> None:
        """Hide texts (or show them again), as the window's View ▸ Redact text does."""
        self.redact = on
        self._render_texts()
        row = self.b_table.currentRow()
        if row >= 0 and self.tabs.currentWidget() is self.detail:
            self.show_b_event(row)

    def _where(self, path: str) -> str:
        # A path can hold a user name: redacted, only its base name shows.
        return os.path.basename(os.path.normpath(path)) if self.redact else path

    def _render_texts(self) -> None:
        c = self.result.comparison
        j = c.journal
        a, b = one_line(self._where(c.a)), one_line(self._where(c.b))
        self.header.setText(f"{one_line(c.character)} — A: {a} · B: {b}")
        unread = "".join(
            f"Not read whole: {p.side.upper()} {one_line(p.file or 'the input')}: {one_line(p.message)}. "
            for p in c.problems[:5]
        )
        if c.identical:
            self.summary.setText("A and B are identical: every journal record and every file.")
        else:
            where = f"; they diverge at #{j.diverges_at}" if j.diverges_at is not None else ""
            self.summary.setText(
                f"{unread}Common prefix: {count(j.common_prefix, 'event')}{where}"
                f" · only in A: {count(len(j.only_a), 'event')} · only in B: {count(len(j.only_b), 'event')}"
                f" · {count(len(j.changed), 'event')} changed · {count(len(c.files), 'file')}"
                f" {'differs' if len(c.files) == 1 else 'differ'}"
                f" · {count(len(c.entries), 'entry', 'entries')} differ"
            )
        self.a_side.setText(side_text("A", j.a))
        self.b_side.setText(side_text("B", j.b))
        self._fill_entries()
        self._fill_outbox()

    def _fill_entries(self) -> None:
        c = self.result.comparison
        tree = self.entries
        tree.clear()
        for p in c.problems:
            QTreeWidgetItem(tree, [f"{p.side.upper()} {one_line(p.file or '')}", "not read", one_line(p.message), ""])
        for p in c.view_problems:
            QTreeWidgetItem(tree, [f"{p.side.upper()} {p.file}", "entries not compared", one_line(p.message), ""])
        for ev in c.journal.changed:
            top = QTreeWidgetItem(tree, [f"event · {one_line(ev.event_id)}", f"changed (#{ev.index_a})", "", ""])
            self._changes_items(top, ev.changes)
        for f in c.files:
            top = QTreeWidgetItem(tree, [f"file · {one_line(f.file)}", f"{f.change} ({f.rule})", f.note or "", ""])
            self._changes_items(top, f.changes)
        for e in c.entries:
            self._entry_item(e)
        self.tabs.setTabText(self.tabs.indexOf(tree), f"Entries ({len(c.entries):,})")
        tree.expandToDepth(0)
        for col in range(2):
            tree.resizeColumnToContents(col)

    def _changes_items(self, top: QTreeWidgetItem, changes: tuple[ValueChange, ...]) -> None:
        for ch in changes:
            before, after = plain(ch.before), plain(ch.after)
            if self.redact:
                before, after = redact_tree({"v": before})["v"], redact_tree({"v": after})["v"]
            item = QTreeWidgetItem(top, [one_line(ch.path) or "(the whole value)", ch.kind, "", ""])
            for col, value in ((2, before), (3, after)):
                item.setText(col, value_text(value))

    def _entry_item(self, e: EntryDiff) -> None:
        change = f"{e.change} → {e.shard}" if e.shard else e.change
        top = QTreeWidgetItem(self.entries, [f"{e.view} · {one_line(e.entry)}", change, "", ""])
        for f in e.fields:
            before, after = f.before, f.after
            if self.redact:
                before, after = redact_tree({f.field: before})[f.field], redact_tree({f.field: after})[f.field]
            _value_item(top, one_line(f.field), before, after, 1)

    def _fill_outbox(self) -> None:
        o = self.result.comparison.outbox
        if o.identical:
            self.outbox.setPlainText("The outboxes hold the same pending operations and dead letters.")
            return
        lines = []
        for title, ids in (
            ("Added (pending on B only)", o.added),
            ("Finished (pending on A, no longer on B)", o.finished),
            ("Dead-lettered on B", o.dead_lettered),
        ):
            lines.append(f"{title}: {len(ids):,}")
            lines += [f"  {one_line(i)}" for i in ids[:500]]
        self.outbox.setPlainText("\n".join(lines))
        self.tabs.setTabText(self.tabs.indexOf(self.outbox), "Outbox (changed)")


def _value_item(parent: QTreeWidgetItem, name: str, before: Any, after: Any, depth: int) -> None:
    """A before/after row, unfolded into the keys (or items) that differ when both are containers."""
    item = QTreeWidgetItem(parent, [name, "changed", value_text(before), value_text(after)])
    for col, value in ((2, before), (3, after)):
        item.setToolTip(col, json.dumps(value, ensure_ascii=False, indent=1, default=str)[:4000])
    if depth >= TREE_DEPTH:
        return
    if isinstance(before, dict) or isinstance(after, dict):
        b = before if isinstance(before, dict) else {}
        a = after if isinstance(after, dict) else {}
        for key in sorted(set(b) | set(a), key=str):
            if b.get(key) != a.get(key):
                _value_item(item, one_line(str(key)), b.get(key), a.get(key), depth + 1)
    elif isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            x = before[i] if i < len(before) else None
            y = after[i] if i < len(after) else None
            if x != y:
                _value_item(item, f"[{i}]", x, y, depth + 1)
