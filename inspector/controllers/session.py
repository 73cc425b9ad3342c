"""The session: what is open, which character is shown, the live watcher and the background jobs.

:class:`SessionController` is the window's non-widget controller. It runs core work (loading,
filtering, watching, re-diagnosing, dry runs) in worker threads, receives the results on the GUI
thread through a :class:`~inspector.controllers.dispatch.GuiDispatcher`, and feeds the item models.
Widgets only render those models and call its methods.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from PySide6.QtCore import QObject, Signal

from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.rediagnosis import RediagnosisScheduler, RediagnosisWork
from inspector.core.filtering import FEW_ROWS, FilterError, TimelineFilter, accepts_live, apply_filter
from inspector.core.jobs import BackgroundJob, CancelToken
from inspector.core.live import FolderWatcher, LiveFolder, LiveUpdate, ObserverFactory, WatchStatus
from inspector.core.loader import Diagnose, LoadedFolder, LoadProgress, Preview, load_location
from inspector.core.location import Location, LocationError, open_sample, resolve_location
from inspector.core.payloads import RecordReader, SummaryCache
from inspector.core.rediagnose import DiagnosisDelta, diagnose_in_child
from inspector.core.replay_preview import ReplayPreview, preview_replay
from inspector.core.timeline import CharacterTimeline, JournalReplaced, Row
from inspector.core.views import LoadedFile, build_provenance, list_view_files, load_file, provenance_of
from inspector.models.characters_model import CharacterListModel, CharacterRow
from inspector.models.tables import FindingTableModel, OutboxTableModel
from inspector.models.timeline_model import EventTableModel
from journal.diagnosis import CharacterDiagnosis, Diagnosis, EventInfo, diagnose_path
from journal.events import JOURNAL_NAME, SENTINEL_NAME

#: Field-only filters over at most this many rows run on the GUI thread (they take milliseconds).
INLINE_FILTER_ROWS = 200_000


def _default_diagnose(path: str, *, progress: Callable[[int, int], None] | None = None) -> Diagnosis:
    from journal.diagnosis import diagnose_path

    return diagnose_path(path, progress=progress)


class SessionController(QObject):
    """Owns the opened folder and keeps the models current.

    Args:
        dispatcher: delivers worker results on the GUI thread.
        diagnose: ``PATH -> Diagnosis`` (default: :func:`journal.diagnosis.diagnose_path`).
        diagnose_character: ``char_dir -> CharacterDiagnosis`` for re-diagnosis after live changes
            (default: :func:`journal.diagnosis.diagnose_character` in a child process).
        observer_factory: builds the watchdog observer (default ``None``: watchdog's own;
            :func:`~inspector.core.live.no_observer` polls).
        watch: whether to watch opened folders at all.

    Attributes:
        folder: the loaded folder, or ``None``.
        current: the character shown in the timeline.
        filter: the timeline filter in force.
        redact: whether text is hidden.
        timeline_model, characters_model, findings_model, outbox_model: the models it feeds.
        rediagnosis: decides when a watched character is diagnosed again (this session is its host).
        replaced_refs: rows of the last live change that took another row's place (a torn last
            line that became an event), so a selection on them shows the new row.

    Signals:
        loading_started(str): a load began (the location's label).
        progress(object): a :class:`LoadProgress`.
        loaded(object): the :class:`LoadedFolder` is shown.
        load_failed(str, str): title and message; whatever was shown before stays.
        load_cancelled(): the user cancelled a load.
        character_shown(str): the timeline now shows this character.
        sentinel_changed(object): the shown character's :class:`SentinelState`.
        watch_status_changed(object): a :class:`WatchStatus`.
        refreshed(float): live changes were applied at this ``time.time()``.
        notice(str): something the user should know (a reload after compaction...).
        files_changed(str, object): character and set of replaced view / shard files.
        filtering(bool): a filter job started (True) or finished (False).
        states_recomputed(str): a fresh diagnosis of this character was merged.
    """

    loading_started = Signal(str)
    progress = Signal(object)
    loaded = Signal(object)
    load_failed = Signal(str, str)
    load_cancelled = Signal()
    character_shown = Signal(str)
    sentinel_changed = Signal(object)
    watch_status_changed = Signal(object)
    refreshed = Signal(float)
    notice = Signal(str)
    files_changed = Signal(str, object)
    filtering = Signal(bool)
    states_recomputed = Signal(str)

    def __init__(
        self,
        dispatcher: GuiDispatcher,
        *,
        diagnose: Diagnose | None = None,
        diagnose_character: Callable[[str], CharacterDiagnosis] | None = None,
        observer_factory: ObserverFactory = None,
        watch: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.dispatcher = dispatcher
        self._diagnose = diagnose or _default_diagnose
        self._diagnose_character = diagnose_character
        self._observer_factory = observer_factory
        self.watch_enabled = watch
        self.folder: LoadedFolder | None = None
        self.location: Location | None = None
        self.current: str | None = None
        self.filter = TimelineFilter()
        self.redact = False
        self.watch_status = WatchStatus("off")
        self.last_refresh: float | None = None
        self.replaced_refs: list[int] = []
        self.timeline_model = EventTableModel(self)
        self.characters_model = CharacterListModel(self)
        self.findings_model = FindingTableModel(self)
        self.outbox_model = OutboxTableModel(self)
        self._current_before_preview: str | None = None
        self._caches: dict[str, SummaryCache] = {}
        self._provenance: dict[str, dict[str, list[int]]] = {}
        self._file_cache: dict[tuple[str, str], LoadedFile] = {}
        self._gen = 0
        self._load_job: BackgroundJob | None = None
        self._filter_job: BackgroundJob | None = None
        self._filter_gen = 0
        self._jobs: set[BackgroundJob] = set()
        self._watcher: FolderWatcher | None = None
        self._closed = False
        #: Per character: its timeline's :attr:`~CharacterTimeline.changes` when its running
        #: re-diagnosis started.
        self._rediagnosed: dict[str, int] = {}
        self.rediagnosis = RediagnosisScheduler(self, self)

    # -- jobs ----------------------------------------------------------------------------------------

    def start_job(self, name: str, work: Callable[[CancelToken], Any], **callbacks: Any) -> BackgroundJob:
        self._jobs = {j for j in self._jobs if j.running}
        job = BackgroundJob(name, work, **callbacks)
        self._jobs.add(job)
        job.start()
        return job

    @property
    def busy(self) -> bool:
        """Whether any background job is still running (tests wait for this to clear)."""
        return any(j.running for j in self._jobs)

    # -- opening -------------------------------------------------------------------------------------

    def open_path(self, path: str | os.PathLike[str]) -> bool:
        """Open a folder or zip; an unreadable path is reported and nothing else changes."""
        try:
            location = resolve_location(path)
        except LocationError as exc:
            self.load_failed.emit("Cannot open", str(exc))
            return False
        self.open_location(location)
        return True

    def open_sample(self) -> bool:
        try:
            location = open_sample()
        except LocationError as exc:
            self.load_failed.emit("Cannot open the sample", str(exc))
            return False
        self.open_location(location)
        return True

    def reload(self, notice: str | None = None) -> None:
        """Load the same location again (keeps the shown character)."""
        if self.location is not None:
            if notice:
                self.notice.emit(notice)
            self.open_location(self.location, keep=self.current, preview=False)

    def open_location(self, location: Location, *, keep: str | None = None, preview: bool = True) -> None:
        """Load ``location`` in a worker; the first rows show as soon as they are read."""
        self.cancel_load(quiet=True)
        self._gen += 1
        gen = self._gen
        self.location = location
        post = self.dispatcher.post

        def work(token: CancelToken) -> LoadedFolder:
            return load_location(
                location,
                token,
                self._diagnose,
                on_preview=(lambda p: post(lambda: self._on_preview(gen, p))) if preview else None,
                on_progress=lambda pr: post(lambda: self._on_progress(gen, pr)),
            )

        def done(result: LoadedFolder) -> None:
            post(lambda: self._on_loaded(gen, result, keep))

        def failed(message: str) -> None:
            post(lambda: self._on_load_failed(gen, location, message))

        def cancelled() -> None:
            post(lambda: self._discard_unless_shown(location))

        job = self.start_job(f"load:{location.path.name}", work, on_done=done, on_error=failed, on_cancelled=cancelled)
        self._load_job = job
        # After the job is known (``loading`` is true); what it reports is posted, so it comes later.
        self.loading_started.emit(location.label)

    def cancel_load(self, quiet: bool = False) -> None:
        """Cancel a running load: what was shown before stays shown."""
        job, self._load_job = self._load_job, None
        if job is not None and job.running:
            job.cancel()
            if not quiet:
                self._gen += 1
                self._restore_after_failed_load()
                self.load_cancelled.emit()

    @property
    def loading(self) -> bool:
        """Whether a load is under way (from :attr:`loading_started` until it is shown, fails or is cancelled)."""
        return self._load_job is not None

    def _on_progress(self, gen: int, progress: LoadProgress) -> None:
        if gen == self._gen:
            self.progress.emit(progress)

    def _on_preview(self, gen: int, preview: Preview) -> None:
        if gen != self._gen:
            return
        tl = preview.timeline
        cache = SummaryCache(tl, RecordReader(preview.char_dir / JOURNAL_NAME), redact=self.redact)
        self.characters_model.set_rows([CharacterRow.preview(tl.name)])
        if self.current is not None:
            self._current_before_preview = self.current
        self.current = None
        self.timeline_model.set_sentinel_label("")
        self.timeline_model.set_rows(tl, tl.refs, cache.summary)
        self.findings_model.set_rows([])
        self.outbox_model.set_rows([])

    def _on_loaded(self, gen: int, folder: LoadedFolder, keep: str | None) -> None:
        if gen != self._gen:
            if folder.location is not self.location:
                folder.close()  # a superseded load's own scratch or zip copy
            else:
                folder.diagnosis.close()
            return
        self._load_job = None
        old = self.folder
        self._stop_watching()
        if old is not None:
            if old.location is not folder.location:
                old.close()
            else:
                old.diagnosis.close()  # a reload: keep the location (the sample's scratch copy)
        self.folder = folder
        self.location = folder.location
        keep = keep or self._current_before_preview
        self._current_before_preview = None
        self._caches.clear()
        self._provenance.clear()
        self._file_cache.clear()
        self.replaced_refs = []
        self.characters_model.set_rows([self._character_row(tl) for tl in folder.timelines.values()])
        names = list(folder.timelines)
        name = keep if keep in folder.timelines else (names[0] if names else None)
        if name is not None:
            self.show_character(name)
        else:
            # Nothing of the folder shown before may stay, as if it belonged to this one.
            self.current = None
            self.timeline_model.set_rows(None, [])
            self.timeline_model.set_sentinel_label("")
            self.findings_model.set_rows([])
            self.outbox_model.set_rows([])
            self.sentinel_changed.emit(None)
        self._start_watching()
        self.last_refresh = time.time()
        self.loaded.emit(folder)

    def _on_load_failed(self, gen: int, location: Location, message: str) -> None:
        if gen != self._gen:
            return
        self._load_job = None
        self._restore_after_failed_load()
        self._discard_unless_shown(location)
        self.load_failed.emit("Cannot open", f"{location.label}: {message}")

    def _discard_unless_shown(self, location: Location) -> None:
        if self.folder is None or location is not self.folder.location:
            location.discard()

    def _restore_after_failed_load(self) -> None:
        """Show the previously loaded folder again (a preview may have replaced it)."""
        shown, self._current_before_preview = self.current or self._current_before_preview, None
        if self.folder is not None:
            self.location = self.folder.location
            self.characters_model.set_rows([self._character_row(tl) for tl in self.folder.timelines.values()])
            if shown in self.folder.timelines:
                self.show_character(shown)
        else:
            self.location = None
            self.characters_model.set_rows([])
            self.timeline_model.set_rows(None, [])

    # -- characters ------------------------------------------------------------------------------------

    def timeline(self, name: str | None = None) -> CharacterTimeline | None:
        name = self.current if name is None else name
        if self.folder is None or name is None:
            return None
        return self.folder.timelines.get(name)

    def shown_timeline(self) -> CharacterTimeline | None:
        """The timeline in the table: the shown character's, or the preview while loading."""
        return self.timeline_model.timeline

    def char_dir(self) -> Path | None:
        tl = self.shown_timeline()
        return Path(tl.path) if tl is not None else None

    def _cache(self, name: str) -> SummaryCache:
        cache = self._caches.get(name)
        if cache is None:
            tl = self.folder.timelines[name]  # type: ignore[union-attr]
            cache = SummaryCache(tl, RecordReader(Path(tl.path) / JOURNAL_NAME), redact=self.redact)
            self._caches[name] = cache
        return cache

    def summaries_for(self, name: str) -> Callable[[Any, int], str]:
        return self._cache(name).summary

    def _character_row(self, tl: CharacterTimeline) -> CharacterRow:
        d = tl.diagnosis
        note = ""
        if getattr(d, "views_only", False):
            note = "views only"
        elif not d.journal.present:
            note = "no journal"
        elif tl.sentinel.state in ("missing", "malformed", "null", "unknown_id") and len(tl.events):
            # the three read alike as "N pending" otherwise; each means something else
            note = {"unknown_id": "sentinel unknown"}.get(tl.sentinel.state, f"sentinel {tl.sentinel.state}")
        return CharacterRow.of(tl.name, tl.counts, d.findings, note=note, unchecked=tl.unchecked, health=tl.health)

    def show_character(self, name: str) -> None:
        """Show ``name`` in the timeline and the detail models."""
        tl = self.timeline(name)
        if tl is None:
            return
        self.current = name
        self.findings_model.set_rows(tl.diagnosis.findings)
        self.outbox_model.set_rows(tl.diagnosis.outbox)
        self._apply_filter(reset_first=True)
        self._push_sentinel()
        self.character_shown.emit(name)

    def _push_sentinel(self) -> None:
        tl = self.timeline()
        if tl is None:
            self.timeline_model.set_sentinel_label("")
            self.sentinel_changed.emit(None)
            return
        state = tl.sentinel_state()
        self.timeline_model.set_sentinel_label(state.counts_text())
        self.sentinel_changed.emit(state)

    # -- filtering -------------------------------------------------------------------------------------

    def set_filter(self, flt: TimelineFilter) -> None:
        self.filter = flt
        self._apply_filter()

    def _apply_filter(self, reset_first: bool = False) -> None:
        tl = self.timeline()
        if tl is None:
            return
        name = tl.name
        summaries = self.summaries_for(name)
        flt = self.filter
        self._filter_gen += 1
        fgen = self._filter_gen
        if self._filter_job is not None:
            self._filter_job.cancel()
            self._filter_job = None
        try:
            flt.validate()
        except FilterError:
            return
        rows = len(tl.refs)
        if not flt.active or rows <= (FEW_ROWS if flt.needs_payloads else INLINE_FILTER_ROWS):
            self.timeline_model.set_rows(tl, apply_filter(tl, tl.refs, flt) if flt.active else tl.refs, summaries)
            self.filtering.emit(False)
            return
        if reset_first:
            self.timeline_model.set_rows(tl, [], summaries)
        snapshot = tl.refs[:]
        post = self.dispatcher.post
        self.filtering.emit(True)

        def done(refs: list[int]) -> None:
            post(lambda: self._on_filtered(fgen, name, flt, refs, len(snapshot)))

        def failed(message: str) -> None:
            post(lambda: self.notice.emit(f"Filtering failed: {message}"))

        self._filter_job = self.start_job(
            "filter", lambda token: apply_filter(tl, snapshot, flt, token), on_done=done, on_error=failed
        )

    def _on_filtered(self, fgen: int, name: str, flt: TimelineFilter, refs: list[int], seen: int) -> None:
        if fgen != self._filter_gen or name != self.current:
            return
        self._filter_job = None
        tl = self.timeline()
        assert tl is not None
        # Rows appended while the job ran were not in its snapshot.
        extra = tl.refs[seen:]
        if len(extra):
            refs = refs + apply_filter(tl, extra, flt)
        self.timeline_model.set_rows(tl, refs, self.summaries_for(name))
        self._push_sentinel()
        self.filtering.emit(False)

    def _accepts_live(self, tl: CharacterTimeline, ref: int, payloads: dict[str, tuple[str, Any]]) -> bool:
        flt = self.filter
        if not flt.active:
            return True
        text = None
        if flt.text and ref >= 0:
            found = payloads.get(tl.events.event_id(ref))
            if found is not None:
                text = orjson.dumps(found[1]).decode("utf-8", "replace")
        return accepts_live(tl, ref, flt, text)

    # -- redaction --------------------------------------------------------------------------------------

    def set_redact(self, on: bool) -> None:
        self.redact = on
        for cache in self._caches.values():
            cache.set_redact(on)
        self.timeline_model.refresh_all()
        self.findings_model.set_redact(on)

    # -- reading for the detail pane --------------------------------------------------------------------

    def record_of(self, row: Row) -> tuple[Any, bytes]:
        char_dir = self.char_dir()
        if char_dir is None:
            return None, b""
        return RecordReader(char_dir / JOURNAL_NAME).record(row)

    def view_files(self) -> list[str]:
        char_dir = self.char_dir()
        return list_view_files(char_dir) if char_dir is not None else []

    def load_view_file(self, rel: str) -> LoadedFile:
        """A view or shard file of the shown character (cached until the watcher says it changed)."""
        key = (self.current or "", rel)
        cached = self._file_cache.get(key)
        if cached is None:
            char_dir = self.char_dir()
            cached = load_file(char_dir, rel) if char_dir is not None else LoadedFile(rel, None, "nothing open")
            self._file_cache[key] = cached
        return cached

    def provenance(self, entry: str) -> list[int]:
        """The events of the shown character that touch ``entry`` (indices, in journal order)."""
        tl = self.timeline()
        if tl is None:
            return []
        index = self._provenance.get(tl.name)
        if index is None:
            index = self._provenance[tl.name] = build_provenance(tl.events.entries)
        return provenance_of(index, entry)

    def preview_replay(self, event: EventInfo, on_result: Callable[[ReplayPreview | None, str], None]) -> None:
        """Dry-run the tail up to ``event`` in a worker; ``on_result(preview, error)`` on the GUI thread."""
        char_dir = self.char_dir()
        if char_dir is None:
            return
        post = self.dispatcher.post
        self.start_job(
            f"dry-run:{event.event_id[:8]}",
            lambda token: preview_replay(char_dir, event),
            on_done=lambda p: post(lambda: on_result(p, "")),
            on_error=lambda m: post(lambda: on_result(None, m)),
        )

    # -- live --------------------------------------------------------------------------------------------

    def _start_watching(self) -> None:
        folder = self.folder
        if folder is None:
            return
        if not folder.location.watchable:
            self._set_watch_status(WatchStatus("off", "zip export: a snapshot"))
            return
        if not self.watch_enabled:
            self._set_watch_status(WatchStatus("off", "disabled"))
            return
        if not folder.timelines:
            self._set_watch_status(WatchStatus("off", "no character folder here"))
            return
        live = LiveFolder(folder.timelines)
        gen = self._gen
        post = self.dispatcher.post

        def on_batch(paths: set[str]) -> None:
            updates = live.process(paths)
            if updates:
                post(lambda: self._apply_live(gen, updates))

        watcher = FolderWatcher(
            folder.location.path,
            on_batch,
            on_status=lambda s: post(lambda: self._on_watch_status(gen, s)),
            observer_factory=self._observer_factory,
        )
        self._watcher = watcher
        status = watcher.start()
        self._set_watch_status(status)
        # Anything appended between the diagnosis's read and the observer's start is read now.
        watcher.notify(
            str(Path(tl.path) / name) for tl in folder.timelines.values() for name in (JOURNAL_NAME, SENTINEL_NAME)
        )

    def _stop_watching(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        self.rediagnosis.stop()

    def _on_watch_status(self, gen: int, status: WatchStatus) -> None:
        if gen == self._gen:
            self._set_watch_status(status)

    def _set_watch_status(self, status: WatchStatus) -> None:
        self.watch_status = status
        self.watch_status_changed.emit(status)

    def _apply_live(self, gen: int, updates: list[LiveUpdate]) -> None:
        """Apply what the watcher read (GUI thread)."""
        if gen != self._gen or self.folder is None:
            return
        self.replaced_refs = []
        for update in updates:
            tl = self.folder.timelines.get(update.character)
            if tl is None:
                continue
            if update.reset:
                self.reload(
                    f"The journal of {update.character} was truncated or replaced (compaction?): reloaded everything."
                )
                return
            shown = update.character == self.current
            if update.rows or update.reread_from is not None:
                removed, added = tl.append(update.rows, update.size, reread_from=update.reread_from)
                cache = self._cache(update.character)
                index = self._provenance.get(tl.name)
                for ref in added:
                    if ref < 0:
                        continue
                    found = update.payloads.get(tl.events.event_id(ref))
                    if found is not None:
                        cache.put(ref, *found)
                    entry = tl.events.entries[ref]
                    if index is not None and entry is not None:
                        index.setdefault(entry, []).append(ref)
                if shown:
                    accepted = [r for r in added if self._accepts_live(tl, r, update.payloads)]
                    self.replaced_refs += self.timeline_model.replace_last(removed, accepted)
            if update.sentinel is not None:
                # No state is worked out here: the rows the move can change wait for the re-diagnosis.
                first = tl.sentinel_moved(update.sentinel)
                if shown and first is not None:
                    self.timeline_model.rows_changed_from(first)
            if update.restate:
                tl.changed()
                self.rediagnosis.schedule(update.character)
            if shown and (update.restate or update.reread_from is not None):
                self._push_sentinel()  # the bar says what waits for the re-diagnosis
            if update.files:
                for rel in update.files:
                    self._file_cache.pop((update.character, rel), None)
                self.files_changed.emit(update.character, update.files)
            self.characters_model.update_row(self._character_row(tl))
        self.last_refresh = time.time()
        self.refreshed.emit(self.last_refresh)

    # -- re-diagnosis (when: :class:`RediagnosisScheduler`; what and the merge: here) --------------------

    @property
    def generation(self) -> int:
        """Changes whenever what is shown is replaced (a load, a cancel, closing)."""
        return self._gen

    def post(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` on the GUI thread (safe from any thread)."""
        self.dispatcher.post(fn)

    def rediagnosis_work(self, name: str) -> RediagnosisWork | None:
        """The fresh diagnosis of ``name`` as it is now, to run in a worker (``None``: not shown any more)."""
        tl = self.timeline(name)
        if tl is None or self._closed:
            return None
        char_dir = tl.path
        check_index = len(tl.events) - 1
        self._rediagnosed[name] = tl.changes  # what this diagnosis will have seen (one runs at a time)
        diagnosis = self.folder.diagnosis if self.folder is not None else None
        root = (diagnosis.memory_root if diagnosis is not None else None) or char_dir
        listing = diagnosis.characters_file if diagnosis is not None else None
        custom = self._diagnose_character

        unit_of = self.folder.location.path if self.folder is not None and tl.diagnosis.not_applicable else None

        def work(token: CancelToken) -> DiagnosisDelta:
            if custom is not None:
                return DiagnosisDelta.of(custom(char_dir), check_index)
            if unit_of is not None:
                # A cloud-save unit is no memory folder: diagnosed again as check reads PATH, through
                # the one resolver (its unit rule, its anchor); views only, so in this process.
                with diagnose_path(str(unit_of), character=name, characters_file=listing) as again:
                    return DiagnosisDelta.of(again.only_character(), check_index)
            # A child process: the diagnosis must not hold this process's GIL while rows arrive.
            return diagnose_in_child(char_dir, root, name, check_index, token, characters_file=listing)

        return work

    def rediagnosis_failed(self, name: str, message: str) -> None:
        self.notice.emit(f"Re-analysing {name} failed: {message}")

    def merge_rediagnosis(self, generation: int, name: str, fresh: DiagnosisDelta) -> bool:
        """Merge a fresh diagnosis of ``name`` into its timeline; whether it was merged."""
        if generation != self._gen or self.folder is None:
            return False
        tl = self.folder.timelines.get(name)
        if tl is None:
            return False
        try:
            changed = tl.merge_diagnosis(fresh, self._rediagnosed.pop(name, None))
        except JournalReplaced:
            self.reload(f"The journal of {name} changed under the window: reloaded everything.")
            return False
        if name == self.current:
            self.timeline_model.rows_changed(changed)
            self.findings_model.set_rows(tl.diagnosis.findings)
            self.outbox_model.set_rows(tl.diagnosis.outbox)
            self._push_sentinel()
        self.characters_model.update_row(self._character_row(tl))
        self.states_recomputed.emit(name)
        return True

    # -- closing ------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop watching, cancel and join every job, delete scratch copies. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.rediagnosis.close()
        self._gen += 1
        self._stop_watching()
        for job in list(self._jobs):
            job.cancel()
        for job in list(self._jobs):
            job.join(timeout=60)
        self._jobs.clear()
        if self.folder is not None:
            self.folder.close()
        if self.location is not None:
            self.location.discard()
