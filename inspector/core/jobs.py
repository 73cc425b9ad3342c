"""Background work without Qt: a cancel token and a thread that runs one job and reports back.

Callbacks run in the worker thread; the GUI wraps them so that they are delivered on its own
thread (``inspector.controllers.dispatch``). Threads are not daemons: whoever starts a job stops it
(:meth:`BackgroundJob.cancel` then :meth:`BackgroundJob.join`), and the test suite fails on leaks.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any


class Cancelled(Exception):
    """Raised inside a job when its token was cancelled; the job ends quietly."""


class CancelToken:
    """Shared flag between the GUI (which cancels) and a job (which checks between steps)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the token was cancelled."""
        if self._event.is_set():
            raise Cancelled

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on cancel; returns whether cancelled."""
        return self._event.wait(timeout)


class BackgroundJob:
    """Runs ``work(token)`` in its own thread; then exactly one of ``on_done(result)``,
    ``on_error(message)`` or ``on_cancelled()`` is called, in the worker thread.

    Attributes:
        name: thread name (shown in leak reports).
        token: the job's cancel token.
    """

    def __init__(
        self,
        name: str,
        work: Callable[[CancelToken], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.token = CancelToken()
        self._work = work
        self._on_done = on_done
        self._on_error = on_error
        self._on_cancelled = on_cancelled
        self._thread = threading.Thread(target=self._run, name=name)

    def start(self) -> BackgroundJob:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self.token.cancel()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread; returns whether it has ended."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            result = self._work(self.token)
        except Cancelled:
            if self._on_cancelled:
                self._on_cancelled()
            return
        except Exception as exc:  # a job's failure is reported, never lost in a thread
            message = f"{type(exc).__name__}: {exc}"
            if self._on_error:
                self._on_error(message)
            else:
                traceback.print_exc()
            return
        if self.token.cancelled:
            if self._on_cancelled:
                self._on_cancelled()
        elif self._on_done:
            self._on_done(result)
