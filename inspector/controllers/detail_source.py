"""What the detail pane shows, looked up for it: records, view files, the entry an event touches,
provenance, and the replay-preview queue (one dry run at a time, the latest wish wins)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.session import SessionController
from inspector.core.timeline import CharacterTimeline, Row
from inspector.core.views import LoadedFile, TreePath, files_for_event, locate_entry
from journal.diagnosis import EventInfo

#: Row states whose replay can be previewed (a dry run of the tail up to the event).
PREVIEW_STATES = ("pending", "blocked")


@dataclass(frozen=True)
class TouchedEntry:
    """Where the entry an event touches is shown.

    Attributes:
        loaded: the view or shard file to show.
        path: the entry's place in it (``None``: it is in none of the candidate files).
        missing: why it is not found (``""`` when it is).
    """

    loaded: LoadedFile
    path: TreePath | None
    missing: str = ""


@dataclass(frozen=True)
class Provenance:
    """The events of ``timeline`` that touch ``entry`` (refs, journal order), and their summaries."""

    entry: str
    timeline: CharacterTimeline
    refs: list[int]
    summaries: Any


class DetailSource(QObject):
    """The detail pane's data source: the window asks it, then renders what it answers.

    It holds no widgets. Reading goes through the session (which caches view files until the
    watcher says they changed); the dry runs for the replay preview are queued here, so that at
    most one runs and only the last row asked for is run next.

    Args:
        session: what is open.

    Signals:
        preview_ready(object, object, str): ``(row, preview or None, error)`` for the row last asked
            for; the window checks the row is still the selected one.
    """

    preview_ready = Signal(object, object, str)

    def __init__(self, session: SessionController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._running = False
        self._wanted: EventInfo | None = None

    # -- records and files ------------------------------------------------------------------------

    def record_of(self, row: Row) -> tuple[Any, bytes]:
        """The parsed record of ``row`` (``None`` for a damaged line) and its raw bytes."""
        return self.session.record_of(row)

    def view_files(self) -> list[str]:
        return self.session.view_files()

    def load_view_file(self, rel: str) -> LoadedFile:
        return self.session.load_view_file(rel)

    def touched_entry(self, row: EventInfo, record: Any) -> TouchedEntry | None:
        """The file and place of the entry ``row`` touches (``None``: it touches none)."""
        if row.entry is None:
            return None
        payload = record.get("payload") if isinstance(record, dict) else None
        candidates = files_for_event(row, payload)
        for rel in candidates:
            loaded = self.load_view_file(rel)
            path = locate_entry(rel, loaded.value, row.entry) if loaded.value is not None else None
            if path is not None:
                return TouchedEntry(loaded, path)
        if not candidates:
            return None
        lost = " (the archived entry is lost)" if len(candidates) > 1 else ""
        missing = f"Entry {row.entry} is in neither {' nor '.join(candidates)}{lost}"
        return TouchedEntry(self.load_view_file(candidates[0]), None, missing)

    def provenance(self, entry: str) -> Provenance | None:
        """The events of the shown character touching ``entry`` (``None``: nothing is shown)."""
        tl = self.session.timeline()
        if tl is None:
            return None
        return Provenance(entry, tl, self.session.provenance(entry), self.session.summaries_for(tl.name))

    # -- replay preview -----------------------------------------------------------------------------

    @staticmethod
    def previewable(row: Row | None) -> bool:
        """Whether replaying up to ``row`` can be previewed (a pending or blocked event)."""
        return isinstance(row, EventInfo) and row.state in PREVIEW_STATES

    def request_preview(self, row: EventInfo) -> None:
        """Dry-run the tail up to ``row``; :attr:`preview_ready` follows. While a run is busy,
        only the last row asked for is run next (the others were already scrolled past)."""
        self._wanted = row
        if not self._running:
            self._run(row)

    def _run(self, row: EventInfo) -> None:
        self._running = True
        self.session.preview_replay(row, lambda p, err, r=row: self._on_preview(r, p, err))

    def _on_preview(self, row: EventInfo, preview: Any, error: str) -> None:
        self._running = False
        wanted = self._wanted
        if wanted is not None and wanted.event_id != row.event_id:
            self._run(wanted)
            return
        self._wanted = None
        self.preview_ready.emit(row, preview, error)
