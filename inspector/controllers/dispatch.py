"""Delivering calls from worker threads to the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal


class GuiDispatcher(QObject):
    """Runs callables on the thread that owns it (the GUI thread), in the order they were posted.

    Worker threads call :meth:`post`; a queued signal carries the callable across threads, so
    nothing else has to be thread-safe.

    Signals:
        _posted: carries one callable (internal).
    """

    _posted = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._posted.connect(self._run, Qt.ConnectionType.QueuedConnection)
        self._closed = False

    def post(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` soon on the GUI thread (safe from any thread)."""
        if not self._closed:
            self._posted.emit(fn)

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., None]:
        """A callable that, called from any thread, runs ``fn(*args)`` on the GUI thread."""

        def posted(*args: Any) -> None:
            self.post(lambda: fn(*args))

        return posted

    def close(self) -> None:
        """Drop calls posted from now on (the window is going away)."""
        self._closed = True

    def _run(self, fn: Callable[[], Any]) -> None:
        if not self._closed:
            fn()
