"""The chat turns around the selected event (issue 26 item 5), read in the background.

:class:`ChatController` answers "what was said before this event" from the character's
``time_indexed.db`` (:mod:`journal.chat`: a private copy, never a write), one reading at a time,
the last question winning. The window renders what it answers
(:class:`inspector.widgets.chat_panel.ChatPanel`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.session import SessionController
from inspector.core.jobs import CancelToken
from journal.chat import DEFAULT_MINUTES, ChatError, ChatRead, read_chat, window_around
from journal.chat.turns import db_of
from journal.diagnosis import EventInfo


@dataclass(frozen=True)
class ChatRequest:
    """One question: the turns around event ``index`` (its ``ts``) of character ``name``."""

    name: str
    index: int
    ts: str
    epoch: int


class ChatController(QObject):
    """Reads the turns around an event in a worker; only the last question's answer is shown.

    Signals:
        chat_ready(object, object): ``(request, ChatRead)``.
        chat_failed(object, str): ``(request, message)``: the db cannot be read.
        chat_cleared(str): nothing to show, and why (no db, no event, another folder).
        available(bool): whether the character now shown has a chat history (the window shows
            its Chat tab only then: six tabs do not fit the pane of a 900 px window).
    """

    chat_ready = Signal(object, object)
    chat_failed = Signal(object, str)
    chat_cleared = Signal(str)
    available = Signal(bool)

    def __init__(self, session: SessionController, *, minutes: int = DEFAULT_MINUTES, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.minutes = minutes
        self.wanted: ChatRequest | None = None
        self._running: ChatRequest | None = None
        self._epoch = 0
        self._closed = False
        session.loaded.connect(self._on_session_loaded)
        session.character_shown.connect(self._on_character_shown)

    def request_event(self, row: Any) -> None:
        """The turns around event ``row`` of the character shown."""
        name = self.session.current
        tl = self.session.timeline(name) if name is not None else None
        if self._closed or tl is None or not isinstance(row, EventInfo):
            self.clear("Select an event to see the chat turns stored around its time.")
            return
        if not self.has_chat(tl.name):
            self.clear("No chat history here: this character folder holds no time_indexed.db.")
            return
        self.wanted = ChatRequest(tl.name, row.index, row.ts, self._epoch)
        if self._running is None:
            self._run(self.wanted)

    def clear(self, why: str) -> None:
        self.wanted = None
        self.chat_cleared.emit(why)

    def close(self) -> None:
        self._closed = True
        self.wanted = None

    def has_chat(self, name: str | None = None) -> bool:
        """Whether character ``name`` (default: the one shown) has a ``time_indexed.db``."""
        tl = self.session.timeline(name if name is not None else self.session.current)
        return tl is not None and os.path.lexists(db_of(tl.path))

    def _on_character_shown(self, name: str) -> None:
        self.available.emit(self.has_chat(name))

    def _on_session_loaded(self, *_args: Any) -> None:
        self._epoch += 1
        self.wanted = None

    def _run(self, request: ChatRequest) -> None:
        tl = self.session.timeline(request.name)
        if tl is None:
            self.clear("Nothing is open.")
            return
        folder, minutes, post = tl.path, self.minutes, self.session.post
        self._running = request

        def work(token: CancelToken) -> ChatRead:
            start, end = window_around(request.ts, minutes)
            token.check()
            return read_chat(db_of(folder), start=start, end=end, folder=folder)

        def failed(message: str) -> None:
            post(lambda: self._answer(request, None, message))

        self.session.start_job(
            f"chat:{request.index}",
            work,
            on_done=lambda read: post(lambda: self._answer(request, read, "")),
            on_error=failed,
            on_cancelled=lambda: post(lambda: self._answer(request, None, "")),
        )

    def _answer(self, request: ChatRequest, read: ChatRead | None, message: str) -> None:
        self._running = None
        wanted = self.wanted
        if self._closed:
            return
        if wanted is not None and wanted != request:
            self._run(wanted)  # clicked past: read the last one asked
            return
        if request.epoch != self._epoch or wanted is None:
            return
        if read is not None:
            self.chat_ready.emit(request, read)
        elif message:
            text = message.split(": ", 1)[1] if message.startswith(ChatError.__name__ + ": ") else message
            self.chat_failed.emit(request, text)
