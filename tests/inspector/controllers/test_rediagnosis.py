"""RediagnosisScheduler: one fresh diagnosis at a time per character, after a quiet moment, spaced
by how long the last one took; stale results are not merged, closing schedules nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import QTimer

from inspector.controllers import rediagnosis as rediagnosis_mod
from inspector.controllers.rediagnosis import RediagnosisScheduler, RediagnosisWork
from inspector.core.jobs import BackgroundJob, CancelToken
from inspector.core.rediagnose import DiagnosisDelta


class FakeHost:
    """A host whose work blocks until released, and whose posts run when the test says so."""

    def __init__(self) -> None:
        self.generation = 1
        self.started: list[str] = []
        self.merged: list[tuple[int, str]] = []
        self.failures: list[tuple[str, str]] = []
        self.posted: list[Callable[[], object]] = []
        self.jobs: list[BackgroundJob] = []
        self.release = threading.Event()
        self.fail = False
        self.take = True

    def rediagnosis_work(self, name: str) -> RediagnosisWork | None:
        self.started.append(name)

        def work(token: CancelToken) -> DiagnosisDelta:
            self.release.wait(10)
            if self.fail:
                raise RuntimeError("child failed")
            return DiagnosisDelta.__new__(DiagnosisDelta)  # only passed through

        return work

    def start_job(self, name, work, *, on_done, on_error) -> BackgroundJob:
        job = BackgroundJob(name, work, on_done=on_done, on_error=on_error).start()
        self.jobs.append(job)
        return job

    def post(self, fn: Callable[[], object]) -> None:
        self.posted.append(fn)

    def merge_rediagnosis(self, generation: int, name: str, fresh: DiagnosisDelta) -> bool:
        self.merged.append((generation, name))
        return self.take and generation == self.generation

    def rediagnosis_failed(self, name: str, message: str) -> None:
        self.failures.append((name, message))

    def finish_jobs(self) -> None:
        self.release.set()
        for job in self.jobs:
            assert job.join(10)
        posted, self.posted = self.posted, []
        for fn in posted:
            fn()
        self.release.clear()


@pytest.fixture
def host(qtbot, monkeypatch):
    monkeypatch.setattr(rediagnosis_mod, "REDIAGNOSE_QUIET_MS", 10)
    fake = FakeHost()
    yield fake
    fake.release.set()
    for job in fake.jobs:
        job.join(10)


def test_a_burst_is_one_diagnosis_and_a_change_during_it_asks_for_one_more(qtbot, host):
    scheduler = RediagnosisScheduler(host)
    for _ in range(5):
        scheduler.schedule("alice")
    qtbot.waitUntil(lambda: host.started == ["alice"])
    scheduler.schedule("alice")  # while it runs: once more afterwards, not now
    scheduler.schedule("alice")
    assert host.started == ["alice"]
    host.finish_jobs()
    assert host.merged == [(1, "alice")]
    qtbot.waitUntil(lambda: host.started == ["alice", "alice"])
    host.finish_jobs()
    assert scheduler.due() == set() and scheduler.running() == set()  # nothing was asked for meanwhile
    assert host.started == ["alice", "alice"]


def test_the_next_one_waits_for_a_multiple_of_the_last_ones_duration(qtbot, host):
    scheduler = RediagnosisScheduler(host)
    scheduler.finished(1, "alice", DiagnosisDelta.__new__(DiagnosisDelta), 10.0)  # the last one took 10 s
    scheduler.schedule("alice")
    assert scheduler.due() == {"alice"}
    assert scheduler.findChild(QTimer).interval() == int(10.0 * rediagnosis_mod.REDIAGNOSE_SPACING * 1000)


def test_a_stale_result_is_not_merged_and_asks_for_nothing_more(qtbot, host):
    scheduler = RediagnosisScheduler(host)
    scheduler.start("alice")
    scheduler.schedule("alice")  # again, once this one is merged
    host.generation = 2  # a load replaced what was shown meanwhile
    host.finish_jobs()
    assert host.merged == [(1, "alice")]
    assert scheduler.due() == set() and scheduler.running() == set() and host.started == ["alice"]


def test_a_failure_is_told_only_for_the_current_generation(qtbot, host):
    scheduler = RediagnosisScheduler(host)
    host.fail = True
    scheduler.start("alice")
    host.finish_jobs()
    assert host.failures == [("alice", "RuntimeError: child failed")]
    scheduler.start("bob")
    host.generation = 2
    host.finish_jobs()
    assert host.failures == [("alice", "RuntimeError: child failed")]


def test_stop_forgets_what_was_due_and_close_schedules_nothing(qtbot, host):
    scheduler = RediagnosisScheduler(host)
    scheduler.schedule("alice")
    assert scheduler.due() == {"alice"}
    scheduler.stop()
    assert scheduler.due() == set()
    scheduler.close()
    scheduler.schedule("bob")
    scheduler.start("bob")
    assert scheduler.due() == set() and scheduler.running() == set() and host.started == []
