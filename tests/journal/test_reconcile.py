"""The reconciler, one scenario of the design record per test (Startup recovery, Cross-file archive
recovery, Concurrency and consistency boundaries).

Live writers are interleaved at exact points through :class:`ReconcileHooks` (called outside the
character lock); nothing here sleeps or depends on timing.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal import EventLog, fs
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event, encode_event, new_event
from journal.handlers import HandlerRegistry, default_registry
from journal.reader import read_journal
from journal.reconcile import _MAX_FROZEN_RESCANS, ReconcileHooks, Reconciler, ReplayReport, _JournalFollower
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS, load_view, write_sentinel
from tests.journal._replay_kit import (
    CHAR,
    apply_evidence,
    event_ids,
    evidence,
    make_character,
    persona_by_id,
    persona_entry,
    persona_evidence,
    persona_view,
    reflection,
    reflections_by_id,
    remove_sentinel,
    sentinel_id,
    sentinel_index,
    server_record_and_save,
    tree_hashes,
)

SHARD = "2026-05-01_0a1b2c3d.json"


class World:
    """A memory root with one character: reflections ref_a..ref_d, persona entry master/prom_a, and
    one applied event so the sentinel is a real id."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "memory"
        self.cd = make_character(
            self.root,
            reflections=[reflection(r, reinforcement=0.0) for r in ("ref_a", "ref_b", "ref_c", "ref_d")],
            persona=persona_view(persona_entry("prom_a", text="old text")),
        )
        self.log = EventLog(self.root)
        self.e0 = self.log.record_and_save(
            CHAR, "reflection.evidence_updated", evidence("ref_d", 0.5), apply_evidence(evidence("ref_d", 0.5)),
            view=REFLECTIONS,
        )
        assert sentinel_id(self.cd) == self.e0.event_id

    def pending(self, event_type: str, payload: dict[str, Any]) -> Event:
        """Append an event that is durable but not applied (a crash after the append)."""
        return self.log.append(CHAR, event_type, payload)

    def pending_evidence(self, rid: str, value: float) -> Event:
        return self.pending("reflection.evidence_updated", evidence(rid, value))

    def server_write(self, rid: str, value: float) -> Event:
        """A live write by the memory server's writer (moves the sentinel unconditionally)."""
        payload = evidence(rid, value)
        return server_record_and_save(
            self.log, CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), REFLECTIONS
        )

    def our_write(self, rid: str, value: float) -> Event:
        """A live write by this package's ``record_and_save`` (never orphans a pending tail)."""
        payload = evidence(rid, value)
        return self.log.record_and_save(
            CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), view=REFLECTIONS
        )

    def reinforcement(self) -> dict[str, float]:
        return {rid: e["reinforcement"] for rid, e in reflections_by_id(self.cd).items()}

    def fold(self) -> dict[str, float]:
        """What the views must show for the reflections: the last payload per entry, in journal order."""
        out = {"ref_a": 0.0, "ref_b": 0.0, "ref_c": 0.0, "ref_d": 0.0}
        for ev in read_journal(self.cd / JOURNAL_NAME).events:
            if ev.type == "reflection.evidence_updated":
                out[ev.payload["reflection_id"]] = ev.payload["reinforcement"]
        return out

    def reconciler(self, hooks: ReconcileHooks | None = None, registry: HandlerRegistry | None = None) -> Reconciler:
        return Reconciler(self.log, registry, hooks=hooks)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def ids(events: list[Event]) -> list[str]:
    return [e.event_id for e in events]


def recording_registry(calls: list[tuple[Any, str | None]], cd: Path) -> HandlerRegistry:
    """The production handlers, recording (reinforcement in the payload, on-disk sentinel) per call."""
    base = default_registry()
    registry = HandlerRegistry()
    for name in base.names():
        handler = base.get(name)
        assert handler is not None

        def wrapped(store: Any, payload: dict[str, Any], handler: Any = handler) -> bool:
            calls.append((payload.get("reinforcement"), sentinel_id(cd)))
            return bool(handler(store, payload))

        registry.register(name, wrapped)
    return registry


# -- 1. a live write between two replay steps ------------------------------------------------------


def test_live_server_write_between_two_steps_freezes_rereads_and_newest_payload_wins(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_a", 2.0)
    e3 = world.pending_evidence("ref_b", 3.0)
    live: list[Event] = []
    positions: list[int] = []
    calls: list[tuple[Any, str | None]] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == e2.event_id and not live:
            live.append(world.server_write("ref_a", 5.0))

    hooks = ReconcileHooks(before_event=before_event, after_event=lambda ev: positions.append(sentinel_index(world.cd)))
    report = world.reconciler(hooks, recording_registry(calls, world.cd)).reconcile(CHAR)

    w = live[0]
    assert report.frozen and report.stopped is None and report.complete
    # The stale queue was not applied as it was: the round re-read from its own position (e1).
    assert report.applied == ids([e1, e2, e3, w])
    # e2 ran exactly once, after the re-read; once frozen, the round never wrote the sentinel.
    assert [c[0] for c in calls] == [1.0, 2.0, 3.0, 5.0]
    assert [c[1] for c in calls] == [world.e0.event_id, w.event_id, w.event_id, w.event_id]
    # Newest payload per entry wins; no event is lost.
    assert world.reinforcement() == world.fold() == {"ref_a": 5.0, "ref_b": 3.0, "ref_c": 0.0, "ref_d": 0.5}
    # The sentinel never moved backwards and ends where the live writer parked it.
    assert positions == sorted(positions)
    assert sentinel_id(world.cd) == report.sentinel_after == w.event_id == event_ids(world.cd)[-1]


def test_our_live_write_between_two_steps_is_replayed_on_top_without_freezing(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_a", 2.0)
    live: list[Event] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == e2.event_id and not live:
            live.append(world.our_write("ref_a", 5.0))
            # It saw an unapplied tail, so it did not move the sentinel (no orphaning).
            assert sentinel_id(world.cd) == e1.event_id

    report = world.reconciler(ReconcileHooks(before_event=before_event)).reconcile(CHAR)

    assert not report.frozen and report.complete
    # e2's older payload briefly overwrote the live value; the probe after the drain replays the
    # live event on top, so the round ends with the newest value and the sentinel at the end.
    assert report.applied == ids([e1, e2, live[0]])
    assert report.rescans == 2
    assert world.reinforcement()["ref_a"] == 5.0 == world.fold()["ref_a"]
    assert sentinel_id(world.cd) == live[0].event_id == event_ids(world.cd)[-1]


def test_conflict_on_the_first_event_replays_from_the_round_start(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    live: list[Event] = []

    def before_event(ev: Event) -> None:
        if not live:
            live.append(world.server_write("ref_b", 9.0))

    report = world.reconciler(ReconcileHooks(before_event=before_event)).reconcile(CHAR)
    assert report.frozen and report.applied == ids([e1, live[0]])
    assert world.reinforcement() == world.fold()
    assert sentinel_id(world.cd) == live[0].event_id


# -- 2. an event after the frozen pass's snapshot end -----------------------------------------------


def test_event_appended_after_the_frozen_snapshot_is_picked_up_by_a_reprobe(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_a", 2.0)
    e3 = world.pending_evidence("ref_b", 3.0)
    live: list[Event] = []
    probes: list[int] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == e2.event_id and not live:
            live.append(world.server_write("ref_c", 9.0))  # freezes the round

    def after_event(ev: Event) -> None:
        if ev.event_id == e2.event_id and len(live) == 1:
            # Lands after the frozen pass took its snapshot [e2, e3, w1]; e3's stale payload for
            # ref_b is still queued ahead and overwrites this writer's value.
            live.append(world.server_write("ref_b", 7.0))

    hooks = ReconcileHooks(before_event=before_event, after_event=after_event, before_probe=probes.append)
    report = world.reconciler(hooks).reconcile(CHAR)

    w1, w2 = live
    assert report.frozen and report.complete
    assert report.applied == ids([e1, e2, e3, w1, w2])
    assert probes == [1, 2] and report.rescans == 2  # the second probe came back empty
    assert world.reinforcement()["ref_b"] == 7.0  # re-applied by the probe
    assert world.reinforcement() == world.fold()
    assert sentinel_id(world.cd) == w2.event_id


# -- 3. unbroken write traffic ----------------------------------------------------------------------


def test_unbroken_write_traffic_ends_the_round_after_the_probe_bound(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_a", 2.0)
    live: list[Event] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == e2.event_id and not live:
            live.append(world.server_write("ref_c", 1.0))

    def after_event(ev: Event) -> None:
        if live and len(live) < 100:  # every replayed step is followed by another live write
            live.append(world.server_write("ref_c", float(len(live) + 1)))

    caplog.set_level(logging.WARNING, logger="journal.reconcile")
    report = world.reconciler(ReconcileHooks(before_event=before_event, after_event=after_event)).reconcile(CHAR)

    assert report.frozen
    assert report.rescans == _MAX_FROZEN_RESCANS == 8
    assert report.left_behind >= 1 and not report.complete
    assert len(live) < 100
    records = [r for r in caplog.records if "left behind the frozen sentinel" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert "8 probes" in records[0].getMessage() and f"{report.left_behind} event(s)" in records[0].getMessage()
    # What is left sits behind the sentinel the live writer parked at the end.
    assert sentinel_id(world.cd) == live[-1].event_id


def test_unbroken_traffic_of_our_writer_leaves_the_rest_pending_for_the_next_round(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    world.pending_evidence("ref_a", 1.0)
    world.pending_evidence("ref_b", 1.0)
    live: list[Event] = []

    def after_event(ev: Event) -> None:
        if len(live) < 100:  # there is always an unapplied event ahead: the writer never moves the sentinel
            live.append(world.our_write("ref_c", float(len(live) + 1)))

    caplog.set_level(logging.WARNING, logger="journal.reconcile")
    report = world.reconciler(ReconcileHooks(after_event=after_event)).reconcile(CHAR)
    assert not report.frozen and report.rescans == 8 and report.left_behind == 2
    assert any("2 event(s) are left pending after the sentinel" in r.getMessage() for r in caplog.records)
    assert sentinel_index(world.cd) == len(event_ids(world.cd)) - 3

    again = world.reconciler().reconcile(CHAR)
    assert again.applied == ids(live[-2:]) and again.complete
    assert sentinel_id(world.cd) == live[-1].event_id
    assert world.reinforcement() == world.fold()


def test_a_writer_advancing_after_the_round_caught_up_is_taken_over_without_freezing(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    live: list[Event] = []

    def after_event(ev: Event) -> None:
        if not live:
            # The round just applied the last event: the sentinel is at the end, so this write
            # legitimately moves it, on top of everything the round replayed.
            live.append(world.our_write("ref_a", 2.0))
            assert sentinel_id(world.cd) == live[0].event_id

    report = world.reconciler(ReconcileHooks(after_event=after_event)).reconcile(CHAR)
    assert not report.frozen and report.rebased == 1 and report.complete
    assert report.applied == [e1.event_id]  # the live event is not re-applied
    assert world.reinforcement()["ref_a"] == 2.0 and sentinel_id(world.cd) == live[0].event_id


def test_a_server_write_after_the_last_step_is_taken_over_too(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    live: list[Event] = []

    def after_event(ev: Event) -> None:
        if not live:
            live.append(world.server_write("ref_b", 4.0))

    report = world.reconciler(ReconcileHooks(after_event=after_event)).reconcile(CHAR)
    assert not report.frozen and report.rebased == 1 and report.applied == [e1.event_id]
    assert world.reinforcement() == world.fold() and sentinel_id(world.cd) == live[0].event_id


def test_a_sentinel_moved_past_an_event_the_round_may_have_overwritten_still_freezes(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_a", 2.0)
    live: list[Event] = []

    def after_event(ev: Event) -> None:
        if ev.event_id == e1.event_id:
            # Appended during the drain; e2's older payload then overwrites it.
            live.append(world.our_write("ref_a", 7.0))
        elif ev.event_id == e2.event_id and len(live) == 1:
            # A writer that moves the sentinel unconditionally, past the overwritten event.
            live.append(world.server_write("ref_b", 3.0))

    report = world.reconciler(ReconcileHooks(after_event=after_event)).reconcile(CHAR)
    assert report.frozen and report.rebased == 0
    assert report.applied == ids([e1, e2, *live])
    assert world.reinforcement() == world.fold() == {"ref_a": 7.0, "ref_b": 3.0, "ref_c": 0.0, "ref_d": 0.5}
    assert sentinel_id(world.cd) == live[1].event_id


# -- 4. a raising handler ---------------------------------------------------------------------------


def test_a_raising_handler_stops_replay_and_a_restart_replays_the_same_tail(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending("persona.evidence_updated", persona_evidence("master", "prom_a", 4.0))
    e3 = world.pending_evidence("ref_b", 3.0)
    persona_bytes = (world.cd / PERSONA).read_bytes()
    (world.cd / PERSONA).write_bytes(b'{"master": {"facts": [')  # a torn save

    report = world.reconciler().reconcile(CHAR)
    assert report.applied == [e1.event_id]
    assert report.stopped is not None
    assert (report.stopped.event_id, report.stopped.index, report.stopped.reason) == (e2.event_id, 2, "corrupt_view")
    assert report.stopped.type == "persona.evidence_updated" and "persona.json" in report.stopped.message
    assert sentinel_id(world.cd) == e1.event_id == report.sentinel_after
    # A corrupt view holds every entry: nothing after the failure ran (a global stop, as before).
    assert report.held_everything and report.held == ids([e2, e3])
    assert world.reinforcement()["ref_b"] == 0.0

    (world.cd / PERSONA).write_bytes(persona_bytes)  # the cause is fixed
    again = world.reconciler().reconcile(CHAR)
    assert again.applied == ids([e2, e3]) and again.complete
    assert persona_by_id(world.cd)["prom_a"]["reinforcement"] == 4.0
    assert sentinel_id(world.cd) == e3.event_id


def test_any_handler_exception_is_a_handler_error_stop(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    registry = default_registry()

    def broken(store: Any, payload: dict[str, Any]) -> bool:
        raise RuntimeError("disk gremlin")

    registry.register("reflection.evidence_updated", broken)
    report = world.reconciler(registry=registry).reconcile(CHAR)
    assert report.stopped is not None and report.stopped.reason == "handler_error"
    assert report.stopped.message == "RuntimeError: disk gremlin"
    assert report.applied == [] and sentinel_id(world.cd) == world.e0.event_id

    assert world.reconciler().reconcile(CHAR).applied == [e1.event_id]


def test_a_failed_sentinel_write_stops_and_the_event_replays_next_time(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_b", 2.0)
    seen = [0]

    def fail_second_sentinel(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before" and call.path.endswith(SENTINEL_NAME):
            seen[0] += 1
            if seen[0] == 2:
                raise OSError(errno.ENOSPC, "injected", call.path)

    previous = fs.set_fault_hook(fail_second_sentinel)
    try:
        report = world.reconciler().reconcile(CHAR)
    finally:
        fs.set_fault_hook(previous)
    assert report.applied == [e1.event_id]
    assert report.stopped is not None and report.stopped.reason == "sentinel_write"
    assert world.reinforcement()["ref_b"] == 2.0  # the handler had persisted
    assert sentinel_id(world.cd) == e1.event_id

    again = world.reconciler().reconcile(CHAR)
    assert again.applied == [e2.event_id] and again.changed == 0
    assert sentinel_id(world.cd) == e2.event_id


# -- 5. an unregistered type -------------------------------------------------------------------------


def test_an_unregistered_type_pauses_replay_and_later_events_stay_pending(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending("fact.added", {"text": "legacy vocabulary"})
    world.pending_evidence("ref_b", 3.0)

    for _ in range(2):  # every boot stops at the same place
        report = world.reconciler().reconcile(CHAR)
        assert report.stopped is not None
        assert (report.stopped.event_id, report.stopped.index, report.stopped.reason) == (e2.event_id, 2, "no_handler")
        assert "'fact.added'" in report.stopped.message
        # Its entries cannot be known, so it holds everything after it (per-entry holds need them).
        assert report.held_everything and len(report.held) == 2
        assert sentinel_id(world.cd) == e1.event_id
        assert world.reinforcement()["ref_b"] == 0.0
    assert report.applied == []


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        ({"type": "reflection.frobnicated", "ts": "x", "payload": {}}, "'reflection.frobnicated'"),
        ({"ts": "x", "payload": {}}, "(missing type)"),
        ({"type": None, "payload": {}}, "(missing type)"),
    ],
)
def test_an_undeclared_or_missing_type_also_pauses(world: World, record: dict[str, Any], shown: str) -> None:
    fs.durable_append(world.cd / JOURNAL_NAME, json.dumps({"event_id": "odd-1", **record}).encode() + b"\n")
    world.pending_evidence("ref_b", 3.0)
    report = world.reconciler().reconcile(CHAR)
    assert report.stopped is not None and report.stopped.reason == "no_handler"
    assert report.stopped.event_id == "odd-1" and shown in report.stopped.message
    assert sentinel_id(world.cd) == world.e0.event_id


def test_a_fact_added_without_shard_path_counts_as_handled(world: World) -> None:
    e1 = world.pending("persona.fact_added", {"entity_key": "master", "entry_id": "prom_a", "text": "x"})
    e2 = world.pending_evidence("ref_a", 1.0)
    report = world.reconciler().reconcile(CHAR)
    assert report.applied == ids([e1, e2]) and report.changed == 1
    assert sentinel_id(world.cd) == e2.event_id
    assert "prom_a" in persona_by_id(world.cd)


# -- 6. archive recovery -------------------------------------------------------------------------------


def crash_at_shard_append(archive: str) -> Any:
    """Fault hook: the second replace into ``archive`` (the entry append; the first creates ``[]``)."""
    seen = [0]

    def hook(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before" and f"/{archive}/" in call.path:
            seen[0] += 1
            if seen[0] == 2:
                raise OSError(errno.EIO, "crash between the journal event and the shard append", call.path)

    return hook


def shard_entries(cd: Path, archive: str) -> list[dict[str, Any]]:
    folder = cd / archive
    out: list[dict[str, Any]] = []
    for p in sorted(folder.iterdir()):
        out += json.loads(p.read_bytes())
    return out


@pytest.mark.parametrize("kind", ["reflection", "persona"])
def test_archive_crash_before_the_shard_append_is_repaired_by_replay(world: World, kind: str) -> None:
    archive = REFLECTION_ARCHIVE if kind == "reflection" else PERSONA_ARCHIVE
    previous = fs.set_fault_hook(crash_at_shard_append(archive))
    try:
        with pytest.raises(OSError, match="crash between"):
            if kind == "reflection":
                world.log.archive_reflection(CHAR, "ref_b")
            else:
                world.log.archive_persona_entry(CHAR, "master", "prom_a")
    finally:
        fs.set_fault_hook(previous)
    event = read_journal(world.cd / JOURNAL_NAME).events[-1]
    entry_id = "ref_b" if kind == "reflection" else "prom_a"
    # The crash state: the entry is in neither the view nor its shard; the event is pending.
    in_view = reflections_by_id(world.cd) if kind == "reflection" else persona_by_id(world.cd)
    assert entry_id not in in_view and shard_entries(world.cd, archive) == []
    assert sentinel_id(world.cd) == world.e0.event_id

    report = world.reconciler().reconcile(CHAR)
    assert report.applied == [event.event_id] and report.changed == 1
    in_view = reflections_by_id(world.cd) if kind == "reflection" else persona_by_id(world.cd)
    assert entry_id not in in_view
    entries = shard_entries(world.cd, archive)
    assert [e["id"] for e in entries] == [entry_id]
    assert entries[0]["archive_shard_path"] == event.payload["archive_shard_path"]
    assert (world.cd / archive / event.payload["archive_shard_path"]).exists()

    # Repeating the replay (sentinel gone: the whole journal) changes no byte.
    before = tree_hashes(world.cd)
    remove_sentinel(world.cd)
    world.reconciler().reconcile(CHAR)
    after = tree_hashes(world.cd)
    assert {k: v for k, v in after.items() if k != SENTINEL_NAME} == {
        k: v for k, v in before.items() if k != SENTINEL_NAME
    }
    assert sentinel_id(world.cd) == event.event_id


def test_orphaned_archive_event_behind_the_sentinel_is_put_back_by_repair(world: World) -> None:
    # The memory server's order: sentinel advanced before the shard append, which never happened.
    snapshot = {**reflection("ref_c"), "status": "archived", "archived_at": "t", "archive_shard_path": SHARD}
    payload = {"reflection_id": "ref_c", "from": "confirmed", "to": "archived", "archive_shard_path": SHARD,
               "archived_at": "t", "entry_snapshot": snapshot}

    def remove(view: list[Any]) -> list[Any]:
        return [e for e in view if e["id"] != "ref_c"]

    event = server_record_and_save(world.log, CHAR, "reflection.state_changed", payload, lambda v: v.__setitem__(
        slice(None), remove(v)), REFLECTIONS)
    assert world.reconciler().reconcile(CHAR).applied == []  # nothing pending: replay cannot help

    report = world.reconciler().repair(CHAR, [event.event_id])
    assert report.applied == [event.event_id] and report.changed == 1
    assert shard_entries(world.cd, REFLECTION_ARCHIVE) == [snapshot]
    assert sentinel_id(world.cd) == event.event_id == report.sentinel_before == report.sentinel_after
    before = tree_hashes(world.cd)
    assert world.reconciler().repair(CHAR, [event.event_id]).changed == 0
    assert tree_hashes(world.cd) == before


# -- 7. idempotence ------------------------------------------------------------------------------------


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_applied_history(world: World) -> None:
    """Every covered mutation, through the real writers, all applied."""
    log = world.log
    for i, rid in enumerate(["ref_a", "ref_b", "ref_a", "ref_c"]):
        world.our_write(rid, float(i + 1))
    pe = persona_evidence("master", "prom_a", 6.0)
    log.record_and_save(CHAR, "persona.evidence_updated", pe, apply_evidence(pe), view=PERSONA)
    blocked = {"reflection_id": "ref_b", "from": "confirmed", "to": "promote_blocked", "ts": "2026-05-02T00:00:00",
               "reason": "too many attempts"}

    def block(view: list[Any]) -> None:
        for e in view:
            if e["id"] == "ref_b":
                e.update(status="promote_blocked", promote_blocked_at=blocked["ts"])
                e["promote_blocked_reason"] = "too many attempts"

    log.record_and_save(CHAR, "reflection.state_changed", blocked, block, view=REFLECTIONS)
    # Merge on promote: evidence first (view unchanged), then the text rewrite.
    new_text = "Master drinks green tea every evening; 抹茶 on weekends"
    merge_ev = {**persona_evidence("master", "prom_a", 7.0), "source": "promote_merge"}
    log.record_and_save(CHAR, "persona.evidence_updated", merge_ev, lambda view: None, view=PERSONA)
    merge = {**merge_ev, "rewrite_text_sha256": sha(new_text), "merged_from_ids": ["ref_a"],
             "speaker_provenance": {"speaker_id": "u1"}}

    def rewrite(view: dict[str, Any]) -> None:
        entry = view["master"]["facts"][0]
        entry.update(text=new_text, reinforcement=7.0, merged_from_ids=["ref_a"])
        entry["speaker_id"] = "u1"

    log.record_and_save(CHAR, "persona.entry_updated", merge, rewrite, view=PERSONA)
    world.log.archive_reflection(CHAR, "ref_c")
    view = load_view(world.cd / PERSONA, dict)
    view["neko"]["facts"].append(persona_entry("prom_n", text="neko fact"))
    fs.atomic_write_json(world.cd / PERSONA, view)
    world.log.archive_persona_entry(CHAR, "neko", "prom_n")
    world.our_write("ref_d", 9.0)


@pytest.mark.parametrize(
    "sentinel", ["removed", b"{", b"[]", b'{"last_applied_event_id": 5}', b'{"last_applied_event_id": "gone"}']
)
def test_replaying_a_whole_applied_journal_twice_changes_no_byte(world: World, sentinel: Any) -> None:
    build_applied_history(world)
    last = event_ids(world.cd)[-1]
    assert sentinel_id(world.cd) == last
    before = tree_hashes(world.cd)
    for _ in range(2):
        if sentinel == "removed":
            remove_sentinel(world.cd)
        else:
            (world.cd / SENTINEL_NAME).write_bytes(sentinel)
        report = world.reconciler().reconcile(CHAR)
        assert report.complete and report.tail == len(event_ids(world.cd))  # the whole body
        assert report.applied == event_ids(world.cd)
        after = tree_hashes(world.cd)
        assert {k: v for k, v in after.items() if k != SENTINEL_NAME} == {
            k: v for k, v in before.items() if k != SENTINEL_NAME
        }
        assert sentinel_id(world.cd) == last


# -- 8. drift, corrupt shard, bad basename -------------------------------------------------------------


def test_entry_updated_drift_holds_its_entry_with_a_clear_reason_and_writes_nothing_of_it(world: World) -> None:
    payload = {**persona_evidence("master", "prom_a", 3.0), "rewrite_text_sha256": sha("the new text"),
               "merged_from_ids": ["ref_x"], "source": "promote_merge"}
    event = world.pending("persona.entry_updated", payload)
    later = world.pending_evidence("ref_a", 1.0)
    persona = (world.cd / PERSONA).read_bytes()
    report = world.reconciler().reconcile(CHAR)
    assert (world.cd / PERSONA).read_bytes() == persona  # nothing of the held entry is written
    stop = report.stopped
    assert stop is not None and (stop.event_id, stop.reason) == (event.event_id, "view_drift")
    assert "master/prom_a" in stop.message
    assert sha("old text") in stop.message and sha("the new text") in stop.message
    # The other entry's event is applied past the held one; the sentinel stays just before it.
    assert report.held == [event.event_id] and report.held_entries == [("persona", "prom_a")]
    assert report.applied == [later.event_id] and report.applied_beyond == [later.event_id]
    assert world.reinforcement()["ref_a"] == 1.0
    assert sentinel_id(world.cd) == world.e0.event_id
    before = tree_hashes(world.tmp)
    again = world.reconciler().reconcile(CHAR)
    assert again.applied == [] and again.skipped == [later.event_id] and again.held == [event.event_id]
    assert tree_hashes(world.tmp) == before


def archive_event_payload(shard: Any) -> dict[str, Any]:
    snapshot = {**reflection("ref_a"), "status": "archived", "archive_shard_path": shard}
    return {"reflection_id": "ref_a", "from": "confirmed", "to": "archived", "archive_shard_path": shard,
            "archived_at": "t", "entry_snapshot": snapshot}


def test_corrupt_target_shard_pauses_and_writes_nothing(world: World) -> None:
    (world.cd / REFLECTION_ARCHIVE).mkdir()
    (world.cd / REFLECTION_ARCHIVE / SHARD).write_bytes(b'[{"id": "ref_old"')
    event = world.pending("reflection.state_changed", archive_event_payload(SHARD))
    before = tree_hashes(world.tmp)
    report = world.reconciler().reconcile(CHAR)
    assert tree_hashes(world.tmp) == before
    assert report.stopped is not None and (report.stopped.event_id, report.stopped.reason) == (
        event.event_id,
        "corrupt_shard",
    )
    assert "ref_a" in reflections_by_id(world.cd)  # the server would have dropped it here
    assert sentinel_id(world.cd) == world.e0.event_id  # ...and moved the sentinel past the event


@pytest.mark.parametrize("basename", ["../../../escape.json", "/tmp/2026-05-01_0a1b2c3d.json", "evil.json"])
def test_bad_shard_basename_pauses_and_writes_nothing_anywhere(world: World, basename: str) -> None:
    event = world.pending("reflection.state_changed", archive_event_payload(basename))
    before = tree_hashes(world.tmp)
    report = world.reconciler().reconcile(CHAR)
    assert tree_hashes(world.tmp) == before
    assert report.stopped is not None and (report.stopped.event_id, report.stopped.reason) == (
        event.event_id,
        "bad_shard_name",
    )


# -- the round's other contracts ---------------------------------------------------------------------


@pytest.mark.parametrize("sentinel", [None, b"", b"not json", b"[1]", b'{"last_applied_event_id": 3}',
                                      b'{"last_applied_event_id": null}', b'{"last_applied_event_id": "nope"}'])
def test_missing_malformed_or_unknown_sentinel_replays_the_whole_body(world: World, sentinel: bytes | None) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    if sentinel is None:
        remove_sentinel(world.cd)
    else:
        (world.cd / SENTINEL_NAME).write_bytes(sentinel)
    report = world.reconciler().reconcile(CHAR)
    assert report.tail == 2 and report.applied == [world.e0.event_id, e1.event_id]
    assert sentinel_id(world.cd) == e1.event_id


def test_a_healthy_folder_replays_nothing_and_does_not_probe(world: World) -> None:
    before = tree_hashes(world.cd)
    report = world.reconciler(ReconcileHooks(before_probe=lambda n: pytest.fail("probed"))).reconcile(CHAR)
    assert report == ReplayReport(CHAR, world.e0.event_id, world.e0.event_id)
    assert tree_hashes(world.cd) == before


def test_a_character_without_journal_or_folder_is_a_no_op(tmp_path: Path) -> None:
    report = Reconciler(EventLog(tmp_path)).reconcile("Nobody")
    assert report.complete and report.applied == [] and report.sentinel_after is None
    assert not (tmp_path / "Nobody").exists()


def test_until_stops_after_the_event_and_a_non_pending_until_applies_nothing(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_b", 2.0)
    world.pending_evidence("ref_c", 3.0)
    assert world.reconciler().reconcile(CHAR, until=world.e0.event_id).applied == []
    assert world.reconciler().reconcile(CHAR, until="no-such-event").applied == []
    report = world.reconciler().reconcile(CHAR, until=e2.event_id)
    assert report.until_reached and report.applied == ids([e1, e2]) and report.rescans == 0
    assert sentinel_id(world.cd) == e2.event_id and world.reinforcement()["ref_c"] == 0.0


def test_cancelling_between_events_leaves_a_consistent_folder(world: World) -> None:
    evs = [world.pending_evidence(r, float(i)) for i, r in enumerate(["ref_a", "ref_b", "ref_c"])]
    progress: list[tuple[int, int]] = []
    report = world.reconciler().reconcile(
        CHAR, should_continue=lambda: len(progress) < 2, on_progress=lambda d, t: progress.append((d, t))
    )
    assert report.cancelled and not report.complete
    assert report.applied == ids(evs[:2]) and progress == [(1, 3), (2, 3)]
    assert sentinel_id(world.cd) == evs[1].event_id


def test_a_duplicated_line_is_replayed_once(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    fs.durable_append(world.cd / JOURNAL_NAME, encode_event(e1))
    report = world.reconciler().reconcile(CHAR)
    assert report.applied == [e1.event_id]


def test_an_unterminated_complete_last_record_is_replayed_like_the_reader_sees_it(world: World) -> None:
    event = new_event("reflection.evidence_updated", evidence("ref_a", 4.0))
    with open(world.cd / JOURNAL_NAME, "ab") as fh:
        fh.write(encode_event(event)[:-1])  # torn just before its newline
    report = world.reconciler().reconcile(CHAR)
    assert report.applied == [event.event_id]
    assert world.reinforcement()["ref_a"] == 4.0


def test_a_compaction_during_the_round_replays_the_new_body(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    seeds = [("reflection.evidence_updated", evidence("ref_b", 8.0))]

    def after_event(ev: Event) -> None:
        if ev.event_id == e1.event_id:
            world.log.compact(CHAR, seeds)  # replaces the journal and resets the sentinel to null

    report = world.reconciler(ReconcileHooks(after_event=after_event)).reconcile(CHAR)
    # The compaction came after the round's last step: the round takes over the new journal and
    # its reset sentinel, and replays the seeds like a fresh round would.
    assert not report.frozen and report.rebased == 1 and report.complete
    seed_ids = event_ids(world.cd)
    assert report.applied == [e1.event_id, *seed_ids]
    assert world.reinforcement()["ref_b"] == 8.0
    assert sentinel_id(world.cd) == seed_ids[-1]


# -- the incremental journal reader ---------------------------------------------------------------------

chunks = st.lists(
    st.one_of(
        st.sampled_from(["event", "event", "partial", "newline", "garbage", "blank", "replace", "duplicate"]),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(chunks, st.randoms(use_true_random=False))
def test_the_follower_always_sees_what_read_journal_sees(tmp_path_factory: pytest.TempPathFactory, ops: list[str],
                                                         rnd: Any) -> None:
    path = tmp_path_factory.mktemp("follow") / JOURNAL_NAME
    follower = _JournalFollower(path)
    written: list[bytes] = []
    for op in ops:
        if op == "event":
            data = encode_event(new_event("reflection.evidence_updated", {"reflection_id": "r"}))
            with open(path, "ab") as fh:
                fh.write(data)
            written.append(data)
        elif op == "partial":
            data = encode_event(new_event("persona.evidence_updated", {"entry_id": "x"}))
            cut = rnd.randint(1, len(data) - 1)
            with open(path, "ab") as fh:
                fh.write(data[:cut])
        elif op == "newline":
            with open(path, "ab") as fh:
                fh.write(b"\n")
        elif op == "garbage":
            with open(path, "ab") as fh:
                fh.write(b"{garbage\n")
        elif op == "blank":
            with open(path, "ab") as fh:
                fh.write(b"  \n")
        elif op == "duplicate" and written:
            with open(path, "ab") as fh:
                fh.write(rnd.choice(written))
        elif op == "replace":
            fs.atomic_write_bytes(path, encode_event(new_event("fact.added", {})), durable=False)
        follower.refresh()
        assert [e.event_id for e in follower.events] == [e.event_id for e in read_journal(path).events]
        for i, ev in enumerate(follower.events):
            assert follower.index(ev.event_id) == i


def test_sentinel_never_rewinds_when_another_writer_moved_it_elsewhere(world: World) -> None:
    e1 = world.pending_evidence("ref_a", 1.0)
    e2 = world.pending_evidence("ref_b", 2.0)

    def before_event(ev: Event) -> None:
        if ev.event_id == e2.event_id:
            write_sentinel(world.cd, "an-id-this-round-cannot-order")

    report = world.reconciler(ReconcileHooks(before_event=before_event)).reconcile(CHAR)
    assert report.frozen and report.applied == ids([e1, e2])  # e2 re-read from its own position (e1)
    assert sentinel_id(world.cd) == "an-id-this-round-cannot-order"  # frozen: never written back
    assert report.sentinel_after == "an-id-this-round-cannot-order"
    assert world.reinforcement()["ref_a"] == 1.0 and e1.event_id in event_ids(world.cd)
