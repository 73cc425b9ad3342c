"""One background job at a time, for the window's controllers that write or compute on request
(exports and copies, support bundles and comparisons): progress, cancel and the result arrive on
the GUI thread; a result that arrives after a shutdown or a newer job is dropped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.dispatch import GuiDispatcher
from inspector.core.jobs import BackgroundJob, CancelToken

#: What a job runs: the cancel token and a ``progress(done, total)`` callback, in the worker.
Work = Callable[[CancelToken, Callable[[int, int], None]], Any]


class SingleJobController(QObject):
    """Runs one job at a time in a :class:`~inspector.core.jobs.BackgroundJob`.

    Args:
        dispatcher: delivers progress and results on the GUI thread.
        busy_message: what :attr:`failed` says when a job is asked for while one runs.

    Signals:
        started(str): a job began; what it does, in words.
        progress(int, int): done so far, and in all (emitted when the whole percent changes).
        failed(str): the job failed; why.
        cancelled(): the job was cancelled.
    """

    started = Signal(str)
    progress = Signal(int, int)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, dispatcher: GuiDispatcher, busy_message: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dispatcher = dispatcher
        self._busy_message = busy_message
        self._job: BackgroundJob | None = None
        self._running = False
        self._gen = 0

    @property
    def busy(self) -> bool:
        """Whether a job runs, or its result has not reached the GUI thread yet."""
        return self._running

    def run_job(self, name: str, what: str, work: Work, on_done: Callable[[Any], None]) -> bool:
        """Start ``work`` unless a job runs (then :attr:`failed` says so); ``on_done(result)`` runs
        on the GUI thread. Returns whether it started."""
        if self._running:
            self.failed.emit(self._busy_message)
            return False
        self._gen += 1
        gen = self._gen
        post = self.dispatcher.post
        shown = [-1]

        def mine(fn: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                if gen == self._gen:
                    fn()

            return run

        def ended(fn: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                self._running = False
                fn()

            return mine(run)

        def progress(done: int, total: int) -> None:
            percent = done * 100 // total if total > 0 else 0
            if percent != shown[0]:  # work that reports every batch moves the bar by whole percents
                shown[0] = percent
                post(mine(lambda: self.progress.emit(done, total)))

        def done(result: Any) -> None:
            post(ended(lambda: on_done(result)))

        def failed(message: str) -> None:
            post(ended(lambda: self.failed.emit(message)))

        def cancelled() -> None:
            post(ended(self.cancelled.emit))

        self._job = BackgroundJob(
            name, lambda token: work(token, progress), on_done=done, on_error=failed, on_cancelled=cancelled
        )
        self._running = True
        self.started.emit(what)
        self._job.start()
        return True

    def cancel(self) -> None:
        """Cancel the running job (it stops at its next check; what it wrote is not kept)."""
        if self._job is not None and self._job.running:
            self._job.cancel()

    def shutdown(self) -> None:
        """Cancel and join the running job (the window is closing)."""
        job, self._job = self._job, None
        self._gen += 1
        self._running = False
        if job is not None:
            job.cancel()
            job.join(timeout=60)
