"""When a watched character is diagnosed again: after a burst of live changes, one at a time.

The window works no state out itself: rows that arrived since the last diagnosis, and the rows a
moved sentinel can change, read "not yet checked" until a fresh diagnosis says what they are
(:data:`inspector.core.timeline.UNCHECKED`). :class:`RediagnosisScheduler` decides *when* one
runs: a quiet moment after the first change of a burst, never two at once for a character (a
change during a run asks for one more afterwards), and spaced by how long the previous one took,
so a huge journal under constant writes is not re-analysed back to back. *What* runs and what is
done with the result belong to its host, the
:class:`~inspector.controllers.session.SessionController` that owns it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, QTimer

from inspector.core.jobs import BackgroundJob, CancelToken
from inspector.core.rediagnose import DiagnosisDelta

#: Delay after the first change of a burst before the states are recomputed by a fresh diagnosis (ms).
REDIAGNOSE_QUIET_MS = 700
#: A re-diagnosis waits at least this many times as long as the previous one took, so a huge
#: journal under constant writes is not re-analysed back to back.
REDIAGNOSE_SPACING = 3.0

#: The work of one re-diagnosis, run in a worker: a cancel token in, the fresh diagnosis out.
RediagnosisWork = Callable[[CancelToken], DiagnosisDelta]


class RediagnosisHost(Protocol):
    """What the scheduler needs from its owner (the session)."""

    @property
    def generation(self) -> int:
        """Changes whenever what is shown is replaced (a load, a cancel, closing): a result of an
        older generation is not merged."""

    def rediagnosis_work(self, name: str) -> RediagnosisWork | None:
        """The diagnosis of ``name`` as it is now, to run in a worker (``None``: nothing to diagnose)."""

    def start_job(
        self,
        name: str,
        work: RediagnosisWork,
        *,
        on_done: Callable[[DiagnosisDelta], None],
        on_error: Callable[[str], None],
    ) -> BackgroundJob:
        """Run ``work`` in a background job the host joins when it closes."""

    def post(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` on the GUI thread (safe from any thread)."""

    def merge_rediagnosis(self, generation: int, name: str, fresh: DiagnosisDelta) -> bool:
        """Take a fresh diagnosis in; returns whether it was merged (not stale, nor reloaded instead)."""

    def rediagnosis_failed(self, name: str, message: str) -> None:
        """Tell the user a re-diagnosis of the current generation failed."""


class RediagnosisScheduler(QObject):
    """Schedules fresh diagnoses of watched characters (GUI thread only).

    Args:
        host: what to diagnose, where to run it, what to do with the result.
        parent: the Qt parent (the session).

    Attributes:
        host: as given.
    """

    def __init__(self, host: RediagnosisHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self._timers: dict[str, QTimer] = {}
        self._running: dict[str, BackgroundJob] = {}
        self._again: set[str] = set()
        self._seconds: dict[str, float] = {}
        self._closed = False

    def due(self) -> set[str]:
        """The characters whose diagnosis is due (waiting for its timer)."""
        return {name for name, timer in self._timers.items() if timer.isActive()}

    def running(self) -> set[str]:
        """The characters being diagnosed now."""
        return set(self._running)

    def schedule(self, name: str) -> None:
        """Something ``name``'s diagnosis depends on changed: diagnose it again soon."""
        if self._closed:
            return
        if name in self._running:
            self._again.add(name)
            return
        timer = self._timers.get(name)
        if timer is None:
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(lambda n=name: self.start(n))
            self._timers[name] = timer
        if timer.isActive():
            return  # already due: a steady writer must not postpone it forever
        spacing = int(self._seconds.get(name, 0.0) * REDIAGNOSE_SPACING * 1000)
        timer.start(max(REDIAGNOSE_QUIET_MS, spacing))

    def start(self, name: str) -> None:
        """Diagnose ``name`` now, in a worker."""
        if self._closed:
            return
        work = self.host.rediagnosis_work(name)
        if work is None:
            return
        host = self.host
        gen = host.generation
        started = time.perf_counter()

        def done(fresh: DiagnosisDelta) -> None:
            host.post(lambda: self.finished(gen, name, fresh, time.perf_counter() - started))

        def failed(message: str) -> None:
            host.post(lambda: self.failed(gen, name, message))

        self._running[name] = host.start_job(f"rediagnose:{name}", work, on_done=done, on_error=failed)

    def finished(self, generation: int, name: str, fresh: DiagnosisDelta, seconds: float) -> None:
        """A diagnosis of ``name`` started in ``generation`` came back after ``seconds``."""
        self._running.pop(name, None)
        self._seconds[name] = seconds
        if not self.host.merge_rediagnosis(generation, name, fresh):
            return
        if name in self._again:
            self._again.discard(name)
            self.schedule(name)

    def failed(self, generation: int, name: str, message: str) -> None:
        """A diagnosis of ``name`` started in ``generation`` failed."""
        self._running.pop(name, None)
        if generation == self.host.generation:
            self.host.rediagnosis_failed(name, message)

    def stop(self) -> None:
        """Forget what was due (the folder is no longer watched); a running job's result is
        still bookkept, and dropped by the host when its generation is gone."""
        for timer in self._timers.values():
            timer.stop()
        self._timers.clear()
        self._again.clear()

    def close(self) -> None:
        """Schedule nothing from now on (the session is closing). Idempotent."""
        self._closed = True
        self.stop()
