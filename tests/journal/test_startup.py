"""Startup: every character reconciled concurrently and awaited, *then* the outbox resumes.

Design record, Startup recovery: reconciliation before outbox replay is load-bearing, because a
resumed outbox operation is a live writer that loads its view outside the journal lock.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from journal import EventLog
from journal.events import Event
from journal.reconcile import ReconcileHooks, Reconciler, ReplayReport, startup_sequence
from journal.views import write_sentinel
from tests.journal._replay_kit import (
    event_ids,
    evidence,
    make_character,
    reflection,
    reflections_by_id,
    sentinel_id,
)

NAMES = ("Alice", "Bob", "Chloé.v2")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Three characters, each with two pending evidence events after an applied one."""
    root = tmp_path / "memory"
    log = EventLog(root)
    for name in NAMES:
        cd = make_character(root, name, reflections=[reflection("ref_a", reinforcement=0.0)])
        first = log.append(name, "reflection.evidence_updated", evidence("ref_a", 0.5))
        write_sentinel(cd, first.event_id)
        log.append(name, "reflection.evidence_updated", evidence("ref_a", 1.0))
        log.append(name, "reflection.evidence_updated", evidence("ref_a", 2.0))
    return root


def at_end(root: Path, name: str) -> bool:
    return sentinel_id(root / name) == event_ids(root / name)[-1]


def test_startup_reconciles_every_character_before_resuming_the_outbox(root: Path) -> None:
    log: list[Any] = []

    def after_event(ev: Event) -> None:
        log.append(("applied", ev.event_id))

    def resume_outbox() -> str:
        log.append("outbox")
        assert all(at_end(root, n) for n in NAMES), "the outbox resumed before reconciliation finished"
        return "spawned"

    reconciler = Reconciler(EventLog(root), hooks=ReconcileHooks(after_event=after_event))
    reports, resumed = asyncio.run(startup_sequence(reconciler, resume_outbox))
    assert resumed == "spawned"
    assert set(reports) == set(NAMES) and all(r.complete for r in reports.values())
    assert log[-1] == "outbox" and log.count("outbox") == 1
    assert len([x for x in log if x != "outbox"]) == 2 * len(NAMES)
    for name in NAMES:
        assert reflections_by_id(root / name)["ref_a"]["reinforcement"] == 2.0


def test_outbox_waits_for_the_slowest_character(root: Path) -> None:
    order: list[str] = []
    alice_done = threading.Event()

    class Recording(Reconciler):
        def reconcile(self, character: str, **kwargs: Any) -> ReplayReport:
            if character == "Bob":
                # Bob's round starts only after Alice's has finished: it is the slowest.
                assert alice_done.wait(30)
            report = super().reconcile(character, **kwargs)
            order.append(character)
            if character == "Alice":
                alice_done.set()
            return report

    def resume_outbox() -> None:
        order.append("outbox")

    asyncio.run(startup_sequence(Recording(EventLog(root)), resume_outbox, ["Alice", "Bob"]))
    assert order == ["Alice", "Bob", "outbox"]


def test_an_async_outbox_scan_is_awaited_but_the_tasks_it_spawns_are_not(root: Path) -> None:
    async def main() -> None:
        gate = asyncio.Event()
        ran: list[str] = []

        async def outbox_op() -> None:
            await gate.wait()
            ran.append("op")

        async def replay_pending_outbox() -> list[asyncio.Task[None]]:
            assert all(at_end(root, n) for n in NAMES)
            return [asyncio.create_task(outbox_op())]

        reports, tasks = await startup_sequence(Reconciler(EventLog(root)), replay_pending_outbox)
        assert len(reports) == 3 and len(tasks) == 1 and not tasks[0].done()  # spawned, not awaited
        gate.set()
        await asyncio.gather(*tasks)
        assert ran == ["op"]

    asyncio.run(main())


def test_a_failing_round_is_reported_after_every_round_finished_and_the_outbox_stays_put(root: Path) -> None:
    resumed: list[str] = []

    class Failing(Reconciler):
        def reconcile(self, character: str, **kwargs: Any) -> ReplayReport:
            if character == "Bob":
                raise PermissionError("events.ndjson: permission denied")
            return super().reconcile(character, **kwargs)

    with pytest.raises(ExceptionGroup) as info:
        asyncio.run(startup_sequence(Failing(EventLog(root)), lambda: resumed.append("outbox")))
    assert "Bob" in str(info.value)
    assert [type(e) for e in info.value.exceptions] == [PermissionError]
    assert resumed == []
    assert at_end(root, "Alice") and at_end(root, "Chloé.v2")  # the other rounds still completed


def test_areconcile_all_runs_the_characters_concurrently(root: Path) -> None:
    # Each round waits at its first event until the other round is there too: run one after the
    # other, the barrier would break and the round would raise.
    barrier = threading.Barrier(2, timeout=30)
    waited: set[str] = set()

    def before_event(ev: Event) -> None:
        name = threading.current_thread().name
        if name not in waited:
            waited.add(name)
            barrier.wait()

    reconciler = Reconciler(EventLog(root), hooks=ReconcileHooks(before_event=before_event))
    reports = asyncio.run(reconciler.areconcile_all(["Alice", "Bob"]))
    assert len(waited) == 2
    assert all(r.complete and len(r.applied) == 2 for r in reports.values())
    assert at_end(root, "Alice") and at_end(root, "Bob")


def test_a_cancelled_caller_still_waits_for_the_rounds_to_finish(root: Path) -> None:
    entered = threading.Event()
    release = threading.Event()
    finished = threading.Event()
    seen: list[str] = []

    class Recording(Reconciler):
        def reconcile(self, character: str, **kwargs: Any) -> ReplayReport:
            report = super().reconcile(character, **kwargs)
            finished.set()
            return report

    def before_event(ev: Event) -> None:
        entered.set()
        assert release.wait(30)

    async def main() -> None:
        reconciler = Recording(EventLog(root), hooks=ReconcileHooks(before_event=before_event))
        task = asyncio.create_task(reconciler.areconcile_all(["Alice"]))
        assert await asyncio.to_thread(entered.wait, 30)
        task.add_done_callback(lambda t: seen.append("done after the round" if finished.is_set() else "done EARLY"))
        task.cancel()
        asyncio.get_running_loop().call_soon(release.set)  # runs after the task saw its cancellation
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert seen == ["done after the round"]
    assert at_end(root, "Alice")


def test_areconcile_passes_options_through(root: Path) -> None:
    until = event_ids(root / "Alice")[1]
    report = asyncio.run(Reconciler(EventLog(root)).areconcile("Alice", until=until))
    assert report.until_reached and report.applied == [until]


def test_reconcile_all_covers_every_character_folder(root: Path) -> None:
    (root / ".hidden").mkdir()
    (root / "notes.txt").write_text("x")
    os.symlink(root / "Alice", root / "Alias")
    reconciler = Reconciler(EventLog(root))
    assert reconciler.characters() == sorted(NAMES)
    reports = reconciler.reconcile_all()
    assert list(reports) == sorted(NAMES) and all(r.complete for r in reports.values())
    assert asyncio.run(reconciler.areconcile_all()) == {
        n: ReplayReport(n, event_ids(root / n)[-1], event_ids(root / n)[-1]) for n in sorted(NAMES)
    }


def test_a_missing_root_has_no_characters(tmp_path: Path) -> None:
    assert asyncio.run(Reconciler(EventLog(tmp_path / "none")).areconcile_all()) == {}
