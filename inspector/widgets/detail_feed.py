"""What the detail pane shows for the selected row, fed to its tabs.

:class:`DetailFeed` takes the panes it fills and the controllers that answer them, not the window:
the Event tab, the entry the event touches and its provenance in the Views tab, the replay
preview, and the History and Chat tabs' questions, each asked only while its tab is looked at (a
preview is a dry run, a history reads the journal, a chat reads the db). It renders what the
detail source and the controllers answer; it computes nothing about the folder itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject

from inspector.controllers.context import AppContext
from inspector.core.replay_preview import ReplayPreview, diff_as_tree
from inspector.core.timeline import Row
from inspector.core.vocabulary import EventInfo
from inspector.widgets.chat_panel import ChatPanel
from inspector.widgets.detail import DetailTabs
from inspector.widgets.history_panel import HistoryPanel


class DetailFeed(QObject):
    """Feeds the detail tabs for the selected row.

    Args:
        detail: the tabs.
        history_panel, chat_panel: the History and Chat tabs.
        context: the session, the detail source and the history and chat controllers.
        selected_row: the row selected now (an answer for another row is dropped).
    """

    def __init__(
        self,
        detail: DetailTabs,
        history_panel: HistoryPanel,
        chat_panel: ChatPanel,
        context: AppContext,
        selected_row: Callable[[], Row | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.detail = detail
        self.history_panel = history_panel
        self.chat_panel = chat_panel
        self.session = context.session
        self.source = context.detail_source
        self.history = context.history
        self.chat = context.chat
        self.selected_row = selected_row
        self.source.preview_ready.connect(self._on_replay_preview)
        detail.views.file_requested.connect(lambda rel: detail.views.show_file(self.source.load_view_file(rel)))
        detail.views.entry_selected.connect(self._show_provenance)
        detail.currentChanged.connect(self._on_tab_changed)
        self.history.history_ready.connect(self._on_history_ready)
        self.history.history_failed.connect(lambda _req, message: history_panel.set_message(message))
        self.history.history_cleared.connect(history_panel.set_message)
        self.chat.chat_ready.connect(chat_panel.set_read)
        self.chat.chat_failed.connect(lambda _req, message: chat_panel.set_message(message))
        self.chat.chat_cleared.connect(chat_panel.set_message)
        # The Chat tab shows for a character that has the db (six tabs do not fit at 900 px).
        self.chat.available.connect(lambda on: detail.setTabVisible(detail.indexOf(chat_panel), on))
        detail.setTabVisible(detail.indexOf(chat_panel), False)

    def show_ref(self, ref: int, refresh_views: bool = True) -> None:
        """Show row ``ref`` of the character shown in every tab (``refresh_views``: the Views tab
        too, which a re-read of the same row leaves as the person left it)."""
        tl = self.session.shown_timeline()
        if tl is None:
            return
        row = tl.row(ref)
        record, raw = self.source.record_of(row)
        server = "" if tl.provisional else tl.server_note(ref)
        self.detail.event_detail.show_row(row, record, raw, tl.state(ref), server=server)
        if not isinstance(row, EventInfo) or tl.provisional:
            self.detail.views.set_preview(None, "")
            return
        if refresh_views:
            self._show_touched_entry(row, record)
        self._request_replay_preview(row)
        self._request_tab_answers(row, record)

    def _show_touched_entry(self, row: EventInfo, record: Any) -> None:
        views = self.detail.views
        if row.entry is None:
            views.set_provenance(None)
            return
        touched = self.source.touched_entry(row, record)
        if touched is not None and touched.path is not None:
            views.show_file(touched.loaded, select=touched.path)
        elif touched is not None:
            views.show_file(touched.loaded)
            views.error.setText(touched.missing)
            views.error.show()
        self._show_provenance(row.entry)

    def _show_provenance(self, entry: str) -> None:
        found = self.source.provenance(entry)
        if found is not None:
            self.detail.views.set_provenance(found.entry, found.timeline, found.refs, found.summaries)

    def _on_tab_changed(self, _index: int) -> None:
        row = self.selected_row()
        if isinstance(row, EventInfo) and not self.session.timeline_model.timeline.provisional:  # type: ignore[union-attr]
            self._request_replay_preview(row)
            self._request_tab_answers(row, None)

    def _request_tab_answers(self, row: EventInfo, record: Any) -> None:
        """The entry's history or the chat turns, asked only while their tab is looked at (the
        history reads the journal, the chat reads the db)."""
        shown = self.detail.currentWidget()
        if shown is self.history_panel:
            self.history.request_event(row, record.get("payload") if isinstance(record, dict) else None)
        elif shown is self.chat_panel:
            self.chat.request_event(row)

    def _on_history_ready(self, request: Any, history: Any, arrays: Any) -> None:
        self.history_panel.set_history(history, arrays)
        self.history_panel.show_event(request.event_index)

    def _request_replay_preview(self, row: EventInfo) -> None:
        views = self.detail.views
        if not self.source.previewable(row):
            views.set_preview(None, "")
            return
        if self.detail.currentWidget() is not views:
            return  # a dry run copies the folder: only run it when the Views tab is looked at
        views.set_preview(None, "computing…")
        self.source.request_preview(row)

    def _on_replay_preview(self, row: EventInfo, preview: ReplayPreview | None, error: str) -> None:
        selected = self.selected_row()
        if not isinstance(selected, EventInfo) or selected.event_id != row.event_id:
            return
        if preview is None:
            self.detail.views.set_preview(None, f"the dry run failed: {error}")
        else:
            self.detail.views.set_preview(diff_as_tree(preview.diff, row.entry), preview.summary)
