"""What you can do with timeline rows: copy them (Ctrl+C as TSV, Ctrl+Shift+C as JSON), the rows'
right-click menu, File ▸ Export (rows as CSV or NDJSON, findings as ``check`` reports them), and
"go to time"; with the status bar's progress and cancel for the copies and exports that run in
the background (:class:`~inspector.controllers.export.ExportController`).

The texts come from :mod:`inspector.core.export`; this module only turns gestures into its calls.
"""

from __future__ import annotations

import os
from array import array
from typing import Any

from PySide6.QtCore import QObject, Qt, SignalInstance
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu, QTableView

from inspector.controllers.context import AppContext
from inspector.core.export import RowSet, character_report
from inspector.core.filtering import DAMAGED_TYPE, FilterError, first_at_or_after
from inspector.core.replay.flow import Scope
from inspector.core.vocabulary import EventInfo
from inspector.widgets.detail import DetailTabs
from inspector.widgets.filter_bar import FilterBar
from inspector.widgets.icons import ActionFactory
from inspector.widgets.job_indicator import JobIndicator
from inspector.widgets.status_line import StatusLine
from inspector.widgets.timeline_selection import TimelineSelection

#: File ▸ Export: (title, format, name filter) of each export.
ROW_EXPORTS = (("CSV", "csv", "CSV files (*.csv)"), ("NDJSON", "ndjson", "NDJSON files (*.ndjson)"))
FINDING_EXPORTS = (
    ("JSON (check --json)", "json", "JSON files (*.json)"),
    ("text (check)", "text", "Text files (*.txt)"),
)


def shown_columns(view: QTableView) -> tuple[int, ...]:
    """The logical columns ``view`` shows, in the order it shows them."""
    header = view.horizontalHeader()
    logical = (header.logicalIndex(v) for v in range(header.count()))
    return tuple(c for c in logical if not header.isSectionHidden(c))


def selected_positions(view: QTableView) -> list[tuple[int, int]]:
    """The selected rows as merged ``(first, last)`` spans, in order (the current row when none is
    selected). A million selected rows (Ctrl+A) are one span: nothing per row is built."""
    spans = sorted((r.top(), r.bottom()) for r in view.selectionModel().selection())
    merged: list[tuple[int, int]] = []
    for top, bottom in spans:
        if merged and top <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], bottom))
        else:
            merged.append((top, bottom))
    if not merged and view.currentIndex().isValid():
        row = view.currentIndex().row()
        merged = [(row, row)]
    return merged


class RowActions(QObject):
    """The timeline rows' actions and menu, built once by the window (``window.row_actions``).

    Args:
        context: the session (the rows, their redaction), the exporter, the prompter, the
            bookmarks and guarded replay (the menu's "Replay up to here").
        view: the timeline's view (its selected rows, its columns shown, its menu).
        selection: the timeline's selection.
        filter_bar: the filter bar (the menu's filters, go to time).
        detail: the detail tabs (the menu's "Show in Views").
        status: where the results are said, and the jobs' progress shows.
        actions: makes the actions.
        bookmark_toggle: Ctrl+B, whose shortcut the menu's bookmark item names.
        closing: emitted when the window closes (the background work is stopped).

    Attributes:
        copy_action: copy the selected rows as TSV (Ctrl+C in the timeline).
        copy_json_action: copy their records as JSON (Ctrl+Shift+C in the timeline).
        copy_id_action: copy the selected events' ids, one per line.
        export_rows_actions: File ▸ Export rows as CSV / NDJSON.
        export_findings_actions: File ▸ Export findings as JSON / text.
        goto_time_action: Go ▸ Go to time (Ctrl+T).
        indicator: the status bar's progress and Cancel for background copies and exports.
    """

    def __init__(
        self,
        context: AppContext,
        view: QTableView,
        selection: TimelineSelection,
        filter_bar: FilterBar,
        detail: DetailTabs,
        status: StatusLine,
        actions: ActionFactory,
        bookmark_toggle: QAction,
        closing: SignalInstance,
    ) -> None:
        super().__init__(view)
        self.session = context.session
        self.prompter = context.prompter
        self.exporter = context.exporter
        self.replay = context.replay
        self.bookmarks = context.bookmarks
        self.view = view
        self.selection = selection
        self.filter_bar = filter_bar
        self.detail = detail
        self.status = status
        self.bookmark_toggle = bookmark_toggle
        make = actions.local  # placed in menus and the view, not window-wide
        self.copy_action = make("&Copy rows", lambda: self.copy("tsv"), QKeySequence.StandardKey.Copy, None,
                                "Copy the selected rows as TSV (the columns shown, a header line first)")
        self.copy_json_action = make("Copy as &JSON", lambda: self.copy("json"), "Ctrl+Shift+C", None,
                                     "Copy the selected rows' records as JSON")
        for a in (self.copy_action, self.copy_json_action):
            # Ctrl+C copies rows only in the timeline: the payload views and text boxes keep their own.
            a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            view.addAction(a)
        self.copy_id_action = make("Copy event &id", self.copy_event_ids)
        self.export_rows_actions = [
            make(f"Export rows as {title}…", lambda _c=False, f=fmt, n=name: self.ask_export_rows(f, n),
                 "Ctrl+E" if fmt == "csv" else None, None, "Write the rows shown to a file")
            for title, fmt, name in ROW_EXPORTS
        ]
        self.export_findings_actions = [
            make(f"Export findings as {title}…", lambda _c=False, f=fmt, n=name: self.ask_export_findings(f, n),
                 None, None, "Write what check reports for the character shown to a file")
            for title, fmt, name in FINDING_EXPORTS
        ]
        self.goto_time_action = make("Go to &time…", filter_bar.time.open_goto, "Ctrl+T", None,
                                     "Select the first row at or after a time, in journal order")
        self.indicator = JobIndicator()
        status.add_indicator(self.indicator)
        self.indicator.cancel_button.clicked.connect(self.exporter.cancel)
        ex = self.exporter
        ex.started.connect(self.indicator.start)
        ex.progress.connect(self.indicator.set_progress)
        ex.finished.connect(lambda text: self._ended(text))
        ex.cancelled.connect(lambda: self._ended("Cancelled: nothing was copied or written."))
        ex.failed.connect(self._on_failed)
        view.customContextMenuRequested.connect(self._on_context_menu)
        filter_bar.goto_time_requested.connect(self.goto_time)
        closing.connect(ex.shutdown)
        #: The last right-click menu (tests look at it).
        self.menu: QMenu | None = None

    def add_export_menu(self, file_menu: QMenu) -> QMenu:
        """File ▸ Export (the window's menus are built by ``window_actions``)."""
        export_menu = file_menu.addMenu("&Export")
        export_menu.addActions(self.export_rows_actions)
        export_menu.addSeparator()
        export_menu.addActions(self.export_findings_actions)
        return export_menu

    # -- what is selected ------------------------------------------------------------------------------

    def selected_rows(self) -> RowSet | None:
        """The selected rows (in journal order), the columns shown, the window's redaction."""
        tl = self.session.shown_timeline()
        if tl is None:
            return None
        refs = self.session.timeline_model.refs()
        picked: array[int] = array("q")
        for first, last in selected_positions(self.view):
            picked.extend(refs[first : last + 1])
        return RowSet(tl, picked, shown_columns(self.view), self.session.redact)

    def shown_rows(self) -> RowSet | None:
        """Every row shown (the filter's), for File ▸ Export."""
        tl = self.session.shown_timeline()
        if tl is None:
            return None
        refs = self.session.timeline_model.refs()[:]  # a snapshot: live rows may come
        return RowSet(tl, refs, shown_columns(self.view), self.session.redact)

    # -- copies ----------------------------------------------------------------------------------------

    def copy(self, fmt: str) -> None:
        rows = self.selected_rows()
        if rows is None or not len(rows.refs):
            self.status.show("Select rows to copy first.", 5000)
            return
        self.exporter.copy_rows(rows, fmt)

    def copy_event_ids(self) -> None:
        rows = self.selected_rows()
        if rows is None:
            return
        tl = rows.timeline
        ids = [i for i in (_event_id(tl.row(r)) for r in rows.refs[:100_000]) if i]
        if not ids:
            self.status.show("No event id in the selected rows.", 5000)
            return
        QGuiApplication.clipboard().setText("\n".join(ids))
        self.status.show(f"Copied {len(ids):,} event id{'s' if len(ids) != 1 else ''}.", 5000)

    # -- exports ---------------------------------------------------------------------------------------

    def _save_path(self, title: str, name: str, suffix: str, name_filter: str) -> str | None:
        start = os.path.join(os.path.expanduser("~"), f"{name}.{suffix}")
        path = self.prompter.choose_save_path(title, start, [name_filter, "All files (*)"])
        if not path:
            return None
        why = self.exporter.refusal(path)
        if why is not None:
            self.prompter.show_error(title, why)
            return None
        return path

    def ask_export_rows(self, fmt: str, name_filter: str) -> None:
        rows = self.shown_rows()
        if rows is None:
            return
        suffix = "csv" if fmt == "csv" else "ndjson"
        path = self._save_path("Export rows", f"{rows.timeline.name}-rows", suffix, name_filter)
        if path is not None:
            self.exporter.export_rows(rows, fmt, path)

    def ask_export_findings(self, fmt: str, name_filter: str) -> None:
        session = self.session
        tl = session.timeline()
        if tl is None or session.folder is None:
            return
        why = self.exporter.findings_refusal(tl)
        if why is not None:
            self.prompter.show_error("Export findings", why)
            return
        suffix = "json" if fmt == "json" else "txt"
        path = self._save_path("Export findings", f"{tl.name}-findings", suffix, name_filter)
        if path is not None:
            report = character_report(session.folder.diagnosis, tl, redact=session.redact)
            self.exporter.export_findings(report, fmt, path)

    def _ended(self, message: str) -> None:
        self.indicator.hide()
        self.status.show(message, 10000)

    def _on_failed(self, message: str) -> None:
        self.indicator.hide()
        self.prompter.show_error("Copy or export failed", f"{message}\n\nNothing was written.")

    # -- go to time ------------------------------------------------------------------------------------

    def goto_time(self, text: str) -> bool:
        """Select the first row shown, in journal order, whose time is at or after ``text``."""
        tl = self.session.shown_timeline()
        if tl is None:
            return False
        try:
            pos = first_at_or_after(tl, self.session.timeline_model.refs(), text)
        except FilterError as exc:
            self.status.show(f"Go to time: {exc}", 8000)
            return False
        if pos is None:
            self.status.show(f"No row shown is at or after {text}.", 8000)
            return False
        self.selection.select_position(pos)
        self.status.show(
            f"The first row at or after {text} in journal order (timestamps are not in order: "
            "a later row can be earlier).",
            8000,
        )
        return True

    # -- the rows' menu --------------------------------------------------------------------------------

    def _on_context_menu(self, point: Any) -> None:
        view = self.view
        index = view.indexAt(point)
        if not index.isValid():
            return
        if not view.selectionModel().isRowSelected(index.row(), index.parent()):
            view.setCurrentIndex(index)  # a row outside the selection: it becomes the selection
        menu = self.row_menu(index.row())
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(view.viewport().mapToGlobal(point))

    def row_menu(self, pos: int) -> QMenu:
        """The right-click menu of the row at ``pos``: copy, copy event id, filter to this type /
        this entry, show in views, replay up to here, bookmark."""
        model = self.session.timeline_model
        ref = model.ref_at(pos)
        row = model.row_at(pos)
        menu = QMenu(self.view)
        self.menu = menu
        menu.addAction(self.copy_action)
        menu.addAction(self.copy_json_action)
        menu.addAction(self.copy_id_action)
        self.copy_id_action.setEnabled(_event_id(row) is not None)
        menu.addSeparator()
        is_event = isinstance(row, EventInfo)
        kind = (row.type or "(no type)") if is_event else DAMAGED_TYPE
        by_type = menu.addAction(f"Filter to this type ({kind})")
        by_type.triggered.connect(lambda: self.filter_bar.types.only(row.type if is_event else DAMAGED_TYPE))
        entry = row.entry if is_event else None
        by_entry = menu.addAction(f"Filter to this entry ({entry})" if entry else "Filter to this entry")
        by_entry.setEnabled(bool(entry))
        by_entry.triggered.connect(lambda: self._filter_entry(entry or ""))
        menu.addSeparator()
        views = menu.addAction("Show in Views")
        views.setEnabled(bool(entry))
        views.triggered.connect(lambda: self._show_in_views(pos))
        replay = self.replay
        here = menu.addAction("Replay up to here…")
        here.setEnabled(replay is not None and is_event and not replay.busy)
        if replay is not None and is_event:
            event_id = row.event_id
            here.triggered.connect(lambda: replay.start_replay(Scope("until", event_id)))
        bookmarks = self.bookmarks
        on = bookmarks.is_bookmarked(ref)
        shortcut = self.bookmark_toggle.shortcut()
        keys = f"\t{shortcut.toString()}" if not shortcut.isEmpty() else ""
        mark = menu.addAction(("Remove bookmark" if on else "Bookmark") + keys)
        mark.setEnabled(is_event)
        mark.triggered.connect(lambda: bookmarks.toggle(ref))
        return menu

    def _filter_entry(self, entry: str) -> None:
        bar = self.filter_bar
        bar.entry.setText(entry)
        bar.emit_filter()

    def _show_in_views(self, pos: int) -> None:
        if self.selection.position() != pos:
            self.selection.select_position(pos)
        self.detail.setCurrentWidget(self.detail.views)


def _event_id(row: Any) -> str | None:
    """The row's event id (a glued line's: the event recovered from it)."""
    if isinstance(row, EventInfo):
        return row.event_id
    return getattr(row, "recovered_event_id", None)
