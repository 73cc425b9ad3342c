"""The main window: characters on the left, the timeline in the centre, detail tabs on the right."""

from __future__ import annotations

import os
import time
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QSplitter,
    QStyle,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.controllers.context import AppContext
from inspector.core.check_report import health_text
from inspector.core.filtering import TimelineFilter
from inspector.core.live import WatchStatus
from inspector.core.loader import LoadedFolder, LoadProgress
from inspector.core.replay.flow import default_backup_root
from inspector.core.text import size_text
from inspector.core.timeline import UNCHECKED, Row, SentinelState
from inspector.widgets import icons
from inspector.widgets.bookmark_actions import BookmarkActions
from inspector.widgets.characters import CharacterList
from inspector.widgets.chat_panel import ChatPanel
from inspector.widgets.detail import DetailTabs
from inspector.widgets.detail_feed import DetailFeed
from inspector.widgets.filter_bar import FilterBar
from inspector.widgets.find import FindBar, TimelineFind
from inspector.widgets.header_layouts import HeaderLayouts, install_column_menu
from inspector.widgets.help_dialogs import (
    AboutDialog,
    ShortcutsDialog,
    TourDialog,
    about_lines,
    present,
    shortcut_rows,
    window_tour,
)
from inspector.widgets.history_panel import HistoryPanel
from inspector.widgets.icons import ActionFactory
from inspector.widgets.job_indicator import JobIndicator
from inspector.widgets.navigation import Navigation
from inspector.widgets.overview_ruler import OverviewRuler, with_ruler
from inspector.widgets.screen_fit import ElidingLabel, OwnMinimum, keep_size, opening_size
from inspector.widgets.server_start import ServerStartPanel, timeline_text
from inspector.widgets.settings_menu import RecentMenu, SettingsActions
from inspector.widgets.status_line import StatusLine
from inspector.widgets.support_actions import SupportActions
from inspector.widgets.timeline_bars import GUARDED_TITLE, SentinelBar, StateLegend
from inspector.widgets.timeline_menu import RowActions
from inspector.widgets.timeline_selection import TimelineSelection
from inspector.widgets.timeline_view import TimelineView
from inspector.widgets.window_actions import WindowActions, WindowHelpers, WindowSlots

APP_TITLE = "Memory Inspector"

#: The size the window asks for the first time (clipped to 90 % of the screen).
DEFAULT_SIZE = QSize(1440, 880)

#: What the status bar says while the History tab's entry history is built.
HISTORY_BUILDING = "Building the entry's history…"

#: The smallest the window may be made (content a selection shows never raises it).
MINIMUM_SIZE = QSize(640, 420)

#: The smallest the detail's pane may be made, at least its tab titles whole.
DETAIL_MINIMUM = QSize(220, 200)


#: What the window says while nothing is open: what to do (issue 16 item 13).
NOTHING_OPEN = (
    "No folder open. Open a memory root or a character folder (File ▸ Open folder, Ctrl+O), a .zip export "
    "(Ctrl+Shift+O), drop one on the window, or try the bundled sample (File ▸ Open the bundled sample)."
)


class MainWindow(QMainWindow):
    """The inspector window. It renders the session's models and forwards gestures to it.

    Args:
        session: the controller that owns what is open.
        prompter: asks the user for folders, ids, and shows errors.
        recent: the recent-locations store (``None``: no recent menu entries are kept).
        settings: where the tables' column layouts are kept between runs (default: ``layout.ini``
            beside the recent-locations file, in the user's config folder; ``None`` without
            ``recent``: nothing is kept).

    Signals:
        closing: the window is closing (owners of extra workers stop them).

    Attributes:
        timeline: the timeline table view.
        detail: the detail tabs.
        characters: the characters list.
        filter_bar: the filter bar.
        server_panel: what the memory server's next start does to the shown character (first).
        sentinel_bar: what our guarded replay makes of it: the sentinel summary / banner (second).
        ruler: the overview ruler beside the timeline's scrollbar (problems, bookmarks, sentinel).
        status: what the window's helpers say in the status bar (:class:`StatusLine`).
        selection: the timeline's selection, shared by the helpers (:class:`TimelineSelection`).
        finder, bookmark_actions, settings_actions: find (Ctrl+F, F3), bookmarks (Ctrl+B, F2), settings.
        recent_menu: File ▸ Open recent (and Clear recent).
        row_actions, navigation: the rows' copies, exports and menu; the sentinel, problems, ids.
        support_actions: File ▸ Export support bundle… and Compare with (issue 17).
        window_actions: the window's own actions, menus and toolbar (``window_actions.reload_action``...).
    """

    closing = Signal()

    def __init__(self, context: AppContext) -> None:
        super().__init__()
        self.context = context
        self.session = context.session
        self.source = context.detail_source
        self.prompter = context.prompter
        self.recent = context.recent
        session = self.session
        self.setWindowTitle(APP_TITLE)
        self.setWindowIcon(icons.icon(icons.APP))
        self.setAcceptDrops(True)
        # The window's size is the user's: an explicit minimum, so that no content a selection
        # shows can raise it and grow the window (issue 27 item 2); the size is set from the
        # settings once they are read (_restore_layouts).
        self.setMinimumSize(MINIMUM_SIZE)

        self.characters = CharacterList(session.characters_model)
        self.characters.describe = self._describe_character
        self.server_panel = ServerStartPanel()
        self.server_panel.set_message(NOTHING_OPEN)
        self.sentinel_bar = SentinelBar()
        self.filter_bar = FilterBar()
        self.timeline = TimelineView()
        self.timeline.empty_text = NOTHING_OPEN
        self.timeline.setModel(session.timeline_model)
        self.legend = StateLegend()
        self.detail = DetailTabs(session.findings_model, session.outbox_model)
        self.history_panel = HistoryPanel()  # the entry's values over time (issue 18)
        self.detail.addTab(self.history_panel, "History")
        self.chat_panel = ChatPanel()  # the chat turns stored around the event's time (issue 26)
        self.detail.addTab(self.chat_panel, "Chat")

        centre = QWidget()
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        centre_layout.setSpacing(3)
        # Every verdict names its actor: first what the memory server's next start does (it happens
        # unless someone acts), then what our guarded replay can do instead.
        centre_layout.addWidget(self.server_panel)
        centre_layout.addWidget(self.sentinel_bar)
        centre_layout.addWidget(self.filter_bar)
        self.find_bar = FindBar()  # find (Ctrl+F) marks rows under the filter bar, hiding none
        centre_layout.addWidget(self.find_bar)
        self.ruler = OverviewRuler(self.timeline)
        centre_layout.addWidget(with_ruler(self.timeline, self.ruler), 1)
        centre_layout.addWidget(self.legend)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.characters)
        split.addWidget(centre)
        # The detail's minimum is its own: a splitter and a window otherwise take a pane's minimum
        # from its content, and a long word a selection shows (a hash in a preview) moved the
        # splitter and grew the window (issue 27 item 2). It follows its tab titles only.
        split.addWidget(OwnMinimum(self.detail, self._detail_minimum))
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        split.setSizes([175, 880, 385])
        #: Moves only when the user drags it: no pane's content may push it (issue 16 item 6).
        self.splitter = split
        self.setCentralWidget(split)

        self._build_status_bar()
        self._build_helpers()
        if context.replay is not None:
            self.window_actions.tools_menu.addAction(context.replay.replay_action)
            self.window_actions.tools_menu.addAction(context.replay.restore_action)
        self._connect()
        self._restore_layouts(context.settings)
        self._pending_reselect: int | None = None
        #: Whether closing keeps the window's size for the next start (a screenshot run does not).
        self.keeps_size = True
        self._update_enabled()

    # -- construction ----------------------------------------------------------------------------------

    def _detail_minimum(self) -> QSize:
        """The detail pane's minimum: every tab title whole (two carry counts), never what a tab
        shows."""
        frame = 2 * self.detail.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
        return DETAIL_MINIMUM.expandedTo(QSize(self.detail.tabBar().sizeHint().width() + frame, 0))

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        # Fields that shrink, cut with "…" and whole on hover, instead of running into each other
        # on a narrow window (issue 27 item 4).
        self.status_sentinel = ElidingLabel("Sentinel: –")
        self.status_watch = ElidingLabel(WatchStatus("off").text())
        self.status_size = ElidingLabel("Journal: –")
        self.status_refresh = ElidingLabel("Last refresh: –")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress_label = QLabel()
        self.cancel_button = QToolButton()
        icons.set_icon(self.cancel_button, icons.CANCEL, self.palette())
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Cancel loading (what was shown before stays)")
        self.cancel_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for w in (self.progress_label, self.progress, self.cancel_button):
            bar.addWidget(w)
        for w in (self.status_sentinel, self.status_watch, self.status_size, self.status_refresh):
            bar.addPermanentWidget(w)
        # Redaction shows, so that a screenshot says it (and one without it does not pass for redacted).
        self.status_redacted = QLabel("<b>Redacted</b>")
        self.status_redacted.setToolTip("Entry text and chat content are hidden (View ▸ Redact text, Ctrl+Shift+R)")
        self.status_redacted.setVisible(False)
        bar.addPermanentWidget(self.status_redacted)
        self._show_progress(False)

    def _build_helpers(self) -> None:
        """The helpers, each given the panes and controllers it works with (never the window), then
        the window's own actions and menus, which place theirs."""
        c, session = self.context, self.session
        self.status = status = StatusLine(self.statusBar())
        model = session.timeline_model
        self.selection = selection = TimelineSelection(self.timeline, session, self.filter_bar)
        make = ActionFactory(self)
        marks = self._show_matches
        self.finder = TimelineFind(c.find, c.bookmarks, self.find_bar, model, selection, marks, status, make)
        self.bookmark_actions = BookmarkActions(c.bookmarks, self.timeline, self.ruler, model, selection, status, make)
        zoomed = (self.characters, self.timeline, self.detail, self.detail.event_detail.raw)
        self.settings_actions = SettingsActions(c.appearance, self, zoomed, status, make)
        self.recent_menu = RecentMenu(self.recent, session.open_path, status, make, self)
        # Copy, the rows' menu, export, go to time.
        self.row_actions = RowActions(
            c, self.timeline, selection, self.filter_bar, self.detail, status, make,
            self.bookmark_actions.toggle_action, self.closing,
        )  # fmt: skip
        self.navigation = Navigation(c, selection, self.detail, status)  # sentinel, problems, event ids, findings
        self.support_actions = SupportActions(c, self, status, make, self.closing)  # bundle, compare (issue 17)
        slots = WindowSlots(
            self.ask_open_folder, self.ask_open_zip, self._on_follow_triggered, self._on_redact_triggered,
            self.filter_bar.clear, self.show_shortcuts, self.show_tour, self.show_about,
        )  # fmt: skip
        helpers = WindowHelpers(
            self.navigation, self.finder, self.bookmark_actions, self.settings_actions, self.recent_menu,
            self.row_actions, self.support_actions,
        )  # fmt: skip
        self.window_actions = WindowActions(self, make, session, slots, helpers)

    def _show_matches(self, pattern: Any) -> None:
        """Mark find's matches in the timeline's cells and the Event tab's payload views."""
        self.timeline.cell_marks.pattern = pattern
        self.timeline.viewport().update()
        self.detail.event_detail.set_highlight(pattern)

    def _layout_tables(self) -> dict[str, QTableView]:
        return {"timeline": self.timeline, "findings": self.detail.findings.table, "history": self.history_panel.table}

    def _restore_layouts(self, settings: QSettings) -> None:
        """Column menus on the tables, and their layouts as the user left them last time."""
        self.layouts = HeaderLayouts(settings)
        self.resize(opening_size(self, settings, DEFAULT_SIZE))
        install_column_menu(self.timeline, self.timeline.reset_columns)
        install_column_menu(self.detail.findings.table, self.detail.findings.reset_columns)
        for name, table in self._layout_tables().items():
            self.layouts.restore(name, table.horizontalHeader())  # the user's layout, as they left it

    def _connect(self) -> None:
        s = self.session
        s.loading_started.connect(self._on_loading_started)
        s.progress.connect(self._on_progress)
        s.loaded.connect(self._on_loaded)
        s.load_failed.connect(self._on_load_failed)
        s.load_cancelled.connect(self._on_load_cancelled)
        s.character_shown.connect(self._on_character_shown)
        s.sentinel_changed.connect(self._on_sentinel_changed)
        s.watch_status_changed.connect(self._on_watch_status)
        s.refreshed.connect(self._on_refreshed)
        s.notice.connect(lambda text: self.status.show(text, 15000))
        s.files_changed.connect(self._on_files_changed)
        s.filtering.connect(self._on_filtering)
        s.states_recomputed.connect(self._on_states_recomputed)
        s.timeline_model.rowsInserted.connect(self._update_counts)
        s.timeline_model.modelReset.connect(self._on_timeline_reset)
        # What a row message described is gone once the rows are others (another character, a
        # filter, a reload all reset the timeline's model).
        s.timeline_model.modelReset.connect(self.status.clear_row_message)
        s.character_shown.connect(self.status.clear_row_message)
        self.cancel_button.clicked.connect(lambda: s.cancel_load())
        self.characters.selectionModel().currentChanged.connect(self._on_character_clicked)
        self.timeline.selectionModel().currentRowChanged.connect(self._on_row_selected)
        self.timeline.following_changed.connect(self.window_actions.follow_action.setChecked)
        self.sentinel_bar.jump_requested.connect(self.navigation.jump_to_sentinel)
        self.ruler.row_requested.connect(self.selection.select_position)
        self.filter_bar.filter_changed.connect(self._on_filter_changed)
        self.feed = DetailFeed(
            self.detail, self.history_panel, self.chat_panel, self.context, self.selection.selected_row, self
        )
        self.detail.views.provenance_activated.connect(self.select_ref)
        self.detail.findings.finding_activated.connect(self.navigation.activate_finding)
        for copier in (self.detail.event_detail, self.server_panel):
            copier.copied.connect(lambda what: self.status.show(f"Copied the {what}.", 3000))
        h, panel = self.context.history, self.history_panel
        # A long history build shows its progress with Cancel in the status bar (issue 27 item 10).
        self.history_job = JobIndicator()
        self.history_job.cancel_button.setToolTip("Stop building the entry's history")
        self.status.add_indicator(self.history_job)
        h.building.connect(lambda on: self.history_job.start(HISTORY_BUILDING) if on else self.history_job.hide())
        h.progress.connect(self.history_job.set_progress)
        self.history_job.cancel_button.clicked.connect(h.cancel)
        panel.event_activated.connect(self.select_ref)  # an event's index is its timeline ref
        self.support_actions.activated_a.connect(self.select_ref)  # an event of A, in the compare panel
        # The comparison's and the download preview's panels follow View ▸ Redact text.
        self.window_actions.redact_action.toggled.connect(self.support_actions.set_redact)

    # -- opening ----------------------------------------------------------------------------------------

    def _start_dir(self) -> str:
        loc = self.session.location
        if loc is not None and loc.kind != "sample":
            return str(loc.path.parent)
        return os.path.expanduser("~")

    def ask_open_folder(self) -> None:
        path = self.prompter.choose_folder(self._start_dir())
        if path:
            self.session.open_path(path)

    def ask_open_zip(self) -> None:
        path = self.prompter.choose_zip(self._start_dir())
        if path:
            self.session.open_path(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Override: accept a dragged local folder or zip."""
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        """Override: open the dropped folder or zip."""
        path = self._dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            self.session.open_path(path)

    @staticmethod
    def _dropped_path(event: Any) -> str | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile():
                path = url.toLocalFile()
                if os.path.isdir(path) or path.lower().endswith(".zip"):
                    return path
        return None

    # -- session signals -----------------------------------------------------------------------------------

    def _on_loading_started(self, label: str) -> None:
        if self.session.folder is None or self.session.location is not self.session.folder.location:
            # Another folder: nothing of the one shown before may pass for it, nor say "healthy"
            # or "no folder open" while it loads (a reload keeps showing the folder meanwhile).
            self.server_panel.set_message(f"Loading {label}… (the server's start is predicted once it is read)")
            self.sentinel_bar.set_state(None)
            self.sentinel_bar.label.setText(f"<b>{GUARDED_TITLE}:</b> loading…")
            self.status_sentinel.setText("Sentinel: loading…")
            self.status_size.setText("Journal: loading…")
            self._on_watch_status(WatchStatus("off", "loading"))
        self._show_progress(True)
        self.progress.setRange(0, 0)
        self.progress_label.setText(f"Loading {label}…")
        self._refresh_title()

    def _on_progress(self, progress: LoadProgress) -> None:
        # The label keeps its text while only the figures move: a label that changes width
        # re-lays the status bar out, which repainted the whole timeline on every update.
        if self.progress_label.text() != progress.message:
            self.progress_label.setText(progress.message)
        if progress.total:
            self.progress.setFormat(f"%p% · {progress.detail}" if progress.detail else "%p%")
            self.progress.setRange(0, progress.total)
            self.progress.setValue(progress.done)
        else:
            self.progress.setRange(0, 0)

    def _show_progress(self, on: bool) -> None:
        for w in (self.progress, self.progress_label, self.cancel_button):
            w.setVisible(on)

    def _on_loaded(self, folder: LoadedFolder) -> None:
        self._show_progress(False)
        loc = folder.location
        self._refresh_title()
        if self.recent is not None and loc.kind != "sample" and not folder.empty_reason:
            self.recent.add(loc.path)
            self.recent_menu.refresh()
        if self.session.last_refresh is not None:
            self._on_refreshed(self.session.last_refresh)
        # The centre says what is there: a folder holding no character says so, in the diagnosis's words.
        self.timeline.empty_text = folder.empty_reason or NOTHING_OPEN
        self.timeline.viewport().update()
        n = len(folder.timelines)
        if not folder.empty_reason:
            loaded = f"Loaded {n} character{'s' if n != 1 else ''} in {folder.seconds:.2f} s."
            self.status.show(loaded, 8000)
        if self.session.current is not None:
            self.characters.select_name(self.session.current)
        else:
            # No character: the previous folder's detail must not stay, as if it were this one's.
            views = self.detail.views
            self.detail.event_detail.clear()
            views.set_files([])
            views.tree_model.set_value(None)
            views.error.hide()
            views.set_provenance(None)
            views.set_preview(None, "")
            self.detail.set_counts(0, 0)
            self.filter_bar.set_types([])
            if folder.empty_reason:
                self.server_panel.set_message(folder.empty_reason)
                self.sentinel_bar.label.setText(f"<b>{GUARDED_TITLE}:</b> nothing to replay (no character folder here)")
                self.statusBar().clearMessage()  # an earlier "Loaded N characters" is not about this folder
            else:
                self.server_panel.set_timeline(None)
        self._update_enabled()

    def _on_load_failed(self, title: str, message: str) -> None:
        self._show_progress(False)
        self._update_enabled()
        # What the load said while it ran gives way to what is shown again: the folder shown before, or nothing.
        if self.session.timeline() is None:
            self.sentinel_bar.set_state(None)
            self.status_sentinel.setText("Sentinel: –")
        self._on_watch_status(self.session.watch_status)
        self._update_counts()
        self._refresh_title()
        if self.session.folder is None:
            self.server_panel.set_message(NOTHING_OPEN)
        else:
            self._refresh_server_panel()
        if message:
            self.prompter.show_error(title, message)

    def _on_load_cancelled(self) -> None:
        self._on_load_failed("", "")  # what shows again is the same as after a failure, without an error
        self.status.show("Loading cancelled.", 5000)

    def _on_character_clicked(self, current: QModelIndex, _previous: QModelIndex) -> None:
        name = current.data(Qt.ItemDataRole.DisplayRole) if current.isValid() else None
        if name and name != self.session.current and self.session.timeline(name) is not None:
            self.session.show_character(name)

    def _on_character_shown(self, name: str) -> None:
        tl = self.session.timeline(name)
        self.characters.select_name(name)
        if tl is not None:
            self.filter_bar.blockSignals(True)
            self.filter_bar.set_types(t for t in tl.event_types() if t)
            self.filter_bar.blockSignals(False)
        self.server_panel.set_timeline(tl)
        self.detail.event_detail.clear()
        self.detail.views.set_files(self.source.view_files())
        self.detail.views.set_provenance(None)
        self.detail.views.set_preview(None, "")
        rel = self.detail.views.current_file()
        if rel:
            self.detail.views.show_file(self.source.load_view_file(rel))
        self.detail.set_counts(self.session.findings_model.rowCount(), self.session.outbox_model.rowCount())
        self._refresh_title()
        self._update_counts()
        if self.timeline.following:
            self.timeline.set_following(True)

    def _on_sentinel_changed(self, state: SentinelState | None) -> None:
        if state is None:
            self.sentinel_bar.set_state(None)
            self.status_sentinel.setText("Sentinel: –")
            return
        tl = self.session.timeline()
        total = len(tl.events) if tl is not None else 0
        if state.on_timeline and state.index is not None:
            ident = f" ({state.event_id[:8]}…)" if state.event_id else ""
            where = f"event #{state.index}{ident} of {total:,}"
            self.status_sentinel.setText(f"Sentinel: #{state.index} of {total:,}")
        else:
            where = state.state
            self.status_sentinel.setText(f"Sentinel: {state.state}")
        blocked = tl.diagnosis.blocked if tl is not None else None
        holds = tl.diagnosis.blocked_holds if tl is not None else None
        if blocked is None:
            stop = ""
        elif holds in (None, "every entry"):
            stop = f"stops at event #{blocked.index} ({blocked.reason})"
        else:
            stop = f"holds {holds} at event #{blocked.index} ({blocked.reason}); other entries replay"
        self.sentinel_bar.set_state(state, where, stop)
        self.timeline.refresh_marks()

    def _on_watch_status(self, status: WatchStatus) -> None:
        self.status_watch.setText(status.text())
        self.status_watch.setToolTip(status.detail)

    def _on_refreshed(self, when: float) -> None:
        self.status_refresh.setText(f"Last refresh: {time.strftime('%H:%M:%S', time.localtime(when))}")
        self._update_counts()
        self.detail.set_counts(self.session.findings_model.rowCount(), self.session.outbox_model.rowCount())
        ref = self.selected_ref()
        if ref is not None and ref in self.session.replaced_refs:
            self._show_ref(ref)  # a torn last line became what the reader now makes of it, in place

    def _on_states_recomputed(self, name: str) -> None:
        if name == self.session.current:
            self.timeline.refresh_marks()
            self.server_panel.set_timeline(self.session.timeline(name))
            self.detail.set_counts(self.session.findings_model.rowCount(), self.session.outbox_model.rowCount())
            ref = self.selected_ref()
            if ref is not None:
                self._show_ref(ref, refresh_views=False)

    def _on_files_changed(self, character: str, files: set[str]) -> None:
        if character != self.session.current:
            return
        views = self.detail.views
        listed = self.session.view_files()
        views.set_files(listed)
        if views.current_file() in files:
            views.show_file(self.session.load_view_file(views.current_file()))

    def _on_filter_changed(self, flt: TimelineFilter) -> None:
        # The selected row stays selected when the new filter keeps it (after a worker's filter too).
        self._pending_reselect = self.selected_ref()
        self.session.set_filter(flt)

    def _on_filtering(self, busy: bool) -> None:
        model = self.session.timeline_model
        tl = self.session.timeline()
        total = len(tl.refs) if tl is not None else model.rowCount()
        self.filter_bar.show_count(model.rowCount(), total, busy)
        keep, self._pending_reselect = self._pending_reselect, None
        if busy:
            self._pending_reselect = keep
        elif keep is not None:
            pos = model.position_of(keep)
            if pos is not None:
                self.select_position(pos)

    def _on_timeline_reset(self) -> None:
        self._update_counts()

    def _update_counts(self, *_args: Any) -> None:
        tl = self.session.timeline()
        model = self.session.timeline_model
        shown = self.session.shown_timeline()
        if shown is not None and shown.provisional:
            # A preview: the first rows only, read while the analysis runs.
            self.status_size.setText("Journal: loading…")
            self.filter_bar.count.setText(f"{model.rowCount():,} rows · loading…")
            return
        if tl is None:
            self.status_size.setText("Journal: loading…" if self.session.loading else "Journal: –")
            self.filter_bar.show_count(model.rowCount(), model.rowCount())
            return
        self.status_size.setText(f"Journal: {size_text(tl.live_size)} · {len(tl.events):,} events")
        self.filter_bar.show_count(model.rowCount(), len(tl.refs))

    def _update_enabled(self) -> None:
        has = self.session.folder is not None
        a = self.window_actions
        for action in (a.reload_action, a.jump_action, a.next_problem_action, a.previous_problem_action, a.goto_action):
            action.setEnabled(has)

    def changeEvent(self, event: QEvent) -> None:
        """Override: re-derive state colours when the palette (theme) changes."""
        if event.type() == QEvent.Type.PaletteChange:
            self.session.timeline_model.set_palette(self.palette())
            self.legend.apply_palette(self.palette())
        super().changeEvent(event)

    # -- the memory server's next start ---------------------------------------------------------------

    def _refresh_server_panel(self) -> None:
        self.server_panel.set_timeline(self.session.timeline())

    def _describe_character(self, name: str) -> str:
        """A character's tooltip in the list: each actor's verdict, the server's first."""
        tl = self.session.timeline(name)
        if tl is None:
            return ""
        rows = self.session.characters_model.rows()
        row = next((r for r in rows if r.name == name), None)
        server = timeline_text(tl)
        lines = [f"Memory server's next start: {server.summary}" if server is not None else ""]
        lines.append(f"Guarded replay (memory-inspector): {row.guarded_text() if row is not None else ''}")
        if row is not None and not row.loading:
            lines.append(f"Diagnosis (as check reports it): {health_text(tl.diagnosis)}")
            if row.unchecked:
                lines.append(f"Changed since that diagnosis: {UNCHECKED} (it is diagnosed again in a moment).")
        if row is not None and row.note:
            lines.append(row.note)
        return "\n".join(ln for ln in lines if ln)

    # -- selection --------------------------------------------------------------------------------------

    def selected_ref(self) -> int | None:
        """The ref of the selected timeline row (event index ``>= 0``, damaged line ``< 0``)."""
        return self.selection.selected_ref()

    def selected_row(self) -> Row | None:
        return self.selection.selected_row()

    def select_ref(self, ref: int) -> bool:
        """Select a row in the timeline (clearing the filter if it hides the row)."""
        return self.selection.select_ref(ref)

    def select_position(self, pos: int) -> None:
        self.selection.select_position(pos)

    def _on_row_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._show_ref(self.session.timeline_model.ref_at(current.row()))

    def _show_ref(self, ref: int, refresh_views: bool = True) -> None:
        self.feed.show_ref(ref, refresh_views)

    # -- toggles ------------------------------------------------------------------------------------------

    def show_shortcuts(self) -> QDialog:
        """Every keyboard shortcut of the window (F1), searchable."""
        return present(ShortcutsDialog(shortcut_rows(self.findChildren(QAction)), self))

    def show_tour(self) -> QDialog:
        """The README's window tour (Help ▸ Window tour)."""
        return present(TourDialog(window_tour(), self))

    def show_about(self) -> QDialog:
        """Versions and where settings and backups live."""
        config = self.recent.file.parent if self.recent is not None else None
        return present(AboutDialog(about_lines(config, default_backup_root()), self))

    def _on_follow_triggered(self, checked: bool) -> None:
        self.timeline.set_following(checked)

    def _on_redact_triggered(self, checked: bool) -> None:
        self.set_redact(checked)

    def set_redact(self, on: bool) -> None:
        self.window_actions.redact_action.setChecked(on)
        self.session.set_redact(on)
        self.detail.event_detail.set_redact(on)
        self.detail.views.set_redact(on)
        self.history_panel.set_redact(on)
        self.chat_panel.set_redact(on)
        self.server_panel.set_redact(on)
        self.status_redacted.setVisible(on)
        self._refresh_title()

    def _refresh_title(self) -> None:
        """The title: the app, what is open, the character, and whether text is redacted."""
        parts = [APP_TITLE]
        loc = self.session.location
        if loc is not None:
            parts.append(loc.label)
            if self.session.current:
                parts.append(self.session.current)
            if self.session.loading:
                parts.append("loading…")
        title = " — ".join(parts)
        self.setWindowTitle(f"{title} (redacted)" if self.window_actions.redact_action.isChecked() else title)

    # -- closing --------------------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        """Override: stop watching and join background work before the window goes."""
        self.closing.emit()
        if self.context.replay is not None:
            self.context.replay.shutdown()
        for name, table in self._layout_tables().items():
            self.layouts.save(name, table.horizontalHeader())  # one the table fitted itself is forgotten
        if self.keeps_size:
            keep_size(self, self.context.settings)
        self.context.history.close()
        self.context.chat.close()
        self.session.close()
        super().closeEvent(event)
