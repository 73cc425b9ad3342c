"""The history of the selected event's entry (issue 18 item 3), built in the background.

:class:`HistoryController` keeps one :class:`~journal.history.JournalHistory` per character
diagnosis (it indexes the journal and reads the views once, then answers each entry from them),
answers "the history of the entry this event touches" in a worker, and forgets a character's
history when the session re-diagnoses it or loads another folder. The window renders what it
answers (:class:`inspector.widgets.history_panel.HistoryPanel`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.session import SessionController
from inspector.core.jobs import BackgroundJob, CancelToken
from journal.diagnosis import CharacterDiagnosis, EventInfo
from journal.history import EntryHistory, EntryKey, HistoryError, HistoryInputError, JournalHistory, key_of

#: What the History tab says after Cancel.
CANCELLED_TEXT = "The history was not built (cancelled): select the event again to build it."

#: The history's own errors, whose messages are shown without their type.
_OWN_ERRORS = (HistoryError.__name__, HistoryInputError.__name__)


@dataclass(frozen=True)
class HistoryRequest:
    """One question: the history of ``key`` in character ``name``'s journal.

    Attributes:
        name: the character.
        key: the entry.
        event_index: the event it was asked for (the window marks it), or ``None``.
        epoch: the controller's load count when asked (a load makes every answer stale).
        version: the character's re-diagnosis count when asked (so does a re-diagnosis).
    """

    name: str
    key: EntryKey
    event_index: int | None
    epoch: int
    version: int


class HistoryController(QObject):
    """Answers the window's "history of this entry" in a worker, one build at a time.

    While a build runs only the last question asked is kept, and run next (the others were
    already clicked past). An answer is dropped when, meanwhile, the folder was reloaded, its
    character re-diagnosed, or another question asked; a re-diagnosis of the character shown asks
    again, so the chart shows the fresh states.

    Args:
        session: what is open (the diagnoses, the journal, the jobs, the GUI-thread dispatcher).
        prepare: ``EntryHistory -> object`` run in the worker after the history is built (the
            window passes the chart's array builder, so the GUI thread never walks the points).
        make_history: builds the histories of a diagnosis (tests replace it).

    Attributes:
        wanted: the question last asked, or ``None``.

    Signals:
        history_ready(object, object, object): ``(request, history, prepared)`` for the question
            last asked; ``prepared`` is what ``prepare`` returned (``None`` without one).
        history_failed(object, str): ``(request, message)``: no event touches the entry, or the
            journal changed or cannot be read.
        history_cleared(str): nothing to show, and why (the event touches no entry, another folder).
        building(bool): a build started (True) or the last one ended (False).
        progress(int, int): how far the running build is (done, total; by whole percents).
    """

    history_ready = Signal(object, object, object)
    history_failed = Signal(object, str)
    history_cleared = Signal(str)
    building = Signal(bool)
    progress = Signal(int, int)

    def __init__(
        self,
        session: SessionController,
        *,
        prepare: Callable[[EntryHistory], Any] | None = None,
        make_history: Callable[[CharacterDiagnosis], JournalHistory] = JournalHistory,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self._prepare = prepare
        self._make_history = make_history
        self._histories: dict[str, JournalHistory] = {}
        self._versions: dict[str, int] = {}
        self._epoch = 0
        self.wanted: HistoryRequest | None = None
        self._running: HistoryRequest | None = None
        self._job: BackgroundJob | None = None
        self._closed = False
        session.loaded.connect(self._on_session_loaded)
        session.states_recomputed.connect(self._on_session_states_recomputed)
        session.character_shown.connect(self._on_session_character_shown)

    # -- questions ----------------------------------------------------------------------------------

    def request_event(self, row: Any, payload: Any = None) -> None:
        """The history of the entry event ``row`` touches (``payload``: its payload, when the
        caller has read it; else it is read here). A row that touches no entry clears."""
        name = self.session.current
        if not isinstance(row, EventInfo) or row.entry is None or name is None:
            self.clear("This event touches no reflection or persona entry.")
            return
        if payload is None:
            record, _raw = self.session.record_of(row)
            payload = record.get("payload") if isinstance(record, dict) else None
        key = key_of(row.type, payload)
        if key is None:
            self.clear("This event names no entry its payload can be read for.")
            return
        self.request_entry(key, event_index=row.index)

    def request_entry(self, key: EntryKey, *, event_index: int | None = None) -> None:
        """The history of ``key`` in the shown character's journal."""
        name = self.session.current
        if name is None or self._closed:
            self.clear("Nothing is open.")
            return
        request = HistoryRequest(name, key, event_index, self._epoch, self._versions.get(name, 0))
        self.wanted = request
        if self._running is None:
            self._run(request)

    def clear(self, why: str = "") -> None:
        """Forget the question (a running build's answer is dropped) and say why."""
        self.wanted = None
        self.history_cleared.emit(why)

    def cancel(self) -> None:
        """Stop the running build (the window's Cancel): nothing is shown for it, and no question
        waits; selecting the event again builds it again."""
        self.wanted = None
        if self._job is not None and self._job.running:
            self._job.cancel()
            self.history_cleared.emit(CANCELLED_TEXT)

    def close(self) -> None:
        """Answer nothing from now on (the session joins the running build when it closes)."""
        self._closed = True
        self.wanted = None

    # -- building -----------------------------------------------------------------------------------

    def _history_of(self, name: str) -> JournalHistory | None:
        tl = self.session.timeline(name)
        if tl is None:
            return None
        history = self._histories.get(name)
        if history is None or history.diagnosis is not tl.diagnosis:
            history = self._histories[name] = self._make_history(tl.diagnosis)
        return history

    def _run(self, request: HistoryRequest) -> None:
        history = self._history_of(request.name)
        if history is None:
            self.clear("Nothing is open.")
            return
        self._running = request
        self.building.emit(True)
        post, prepare = self.session.post, self._prepare

        shown = [-1]
        tokens: list[CancelToken] = []  # the job's, once it runs

        def report(done: int, total: int) -> None:
            tokens[0].check()  # Cancel stops the build at its next report
            percent = done * 100 // total if total > 0 else 0
            if percent != shown[0]:
                shown[0] = percent
                post(lambda: self._on_progress(request, done, total))

        def work(token: CancelToken) -> tuple[EntryHistory, Any]:
            tokens.append(token)
            # One build at a time: the JournalHistory's index and views are filled here only.
            entry = history.entry(request.key, progress=report)
            token.check()
            return entry, (prepare(entry) if prepare is not None else None)

        self._job = self.session.start_job(
            f"history:{request.key.ref[:24]}",
            work,
            on_done=lambda result: post(lambda: self._on_built(request, *result)),
            on_error=lambda message: post(lambda: self._on_failed(request, message)),
            on_cancelled=lambda: post(lambda: self._on_failed(request, "")),
        )

    def _on_progress(self, request: HistoryRequest, done: int, total: int) -> None:
        if request is self._running:
            self.progress.emit(done, total)

    def _stale(self, request: HistoryRequest) -> bool:
        return (
            self._closed
            or request.epoch != self._epoch
            or request.version != self._versions.get(request.name, 0)
            or request != self.wanted
        )

    def _next(self) -> bool:
        """Run the question asked meanwhile, if any; whether one runs."""
        self._running = None
        wanted = self.wanted
        if wanted is not None and not self._closed:
            # Asked before a reload or re-diagnosis: ask it again of the fresh diagnosis.
            wanted = self.wanted = HistoryRequest(
                wanted.name, wanted.key, wanted.event_index, self._epoch, self._versions.get(wanted.name, 0)
            )
            self._run(wanted)
            return True
        self.building.emit(False)
        return False

    def _on_built(self, request: HistoryRequest, entry: EntryHistory, prepared: Any) -> None:
        if self._stale(request):
            self._next()
            return
        self._running = None
        self.building.emit(False)
        self.history_ready.emit(request, entry, prepared)

    def _on_failed(self, request: HistoryRequest, message: str) -> None:
        if self._stale(request):
            self._next()
            return
        self._running = None
        self.building.emit(False)
        kind, sep, text = message.partition(": ")
        # A history's own errors are for people as they are; anything else keeps its type.
        self.history_failed.emit(request, text if sep and kind in _OWN_ERRORS else message)

    # -- the session --------------------------------------------------------------------------------

    def _on_session_loaded(self, _folder: Any) -> None:
        self._epoch += 1
        self._histories.clear()
        self.clear("")  # a running build's answer is dropped when it comes

    def _on_session_states_recomputed(self, name: str) -> None:
        self._versions[name] = self._versions.get(name, 0) + 1
        self._histories.pop(name, None)
        wanted = self.wanted
        if wanted is not None and wanted.name == name and self._running is None:
            self.request_entry(wanted.key, event_index=wanted.event_index)

    def _on_session_character_shown(self, name: str) -> None:
        if self.wanted is not None and self.wanted.name != name:
            self.clear("")
