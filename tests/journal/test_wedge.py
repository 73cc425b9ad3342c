"""The recovery wedge: one event that can never be applied must not hold every later recovery.

Replay stops per entry (:mod:`journal.holds`); the sentinel stays just before the first held
event, so the memory server reads the folder as before; what our library applies past it is
recorded in ``events_applied_set.json`` (:mod:`journal.appliedset`) and never applied again; a
person can park a held event for good (:mod:`journal.park`). Real format throughout: folders
written by our writers, pending events appended as a crash leaves them, server writes as the
server makes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from journal import EventLog, fs
from journal.appliedset import (
    APPLIED_SET_NAME,
    applied_beyond,
    applied_set_valid,
    read_applied_set,
    write_applied_set,
)
from journal.errors import UnappliedTailError
from journal.events import JOURNAL_NAME, EntryKeys, Event, encode_event, new_event
from journal.holds import Holds, event_entries, stops_everything
from journal.lastevent import last_event_id
from journal.park import PARKED_NAME, ParkRecord, is_parked, read_parked, record_park
from journal.reader import read_journal
from journal.reconcile import Reconciler, startup_sequence
from journal.views import PERSONA, REFLECTIONS, read_sentinel, write_sentinel
from tests.journal._replay_kit import (
    CHAR,
    apply_evidence,
    evidence,
    make_character,
    persona_by_id,
    persona_entry,
    persona_evidence,
    persona_view,
    reflection,
    reflections_by_id,
    sentinel_id,
    server_record_and_save,
    tree_hashes,
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def merge_payload(eid: str, new_text: str, value: float = 3.0) -> dict[str, Any]:
    """A ``persona.entry_updated`` merge on promote, as the server writes it."""
    return {
        **persona_evidence("master", eid, value),
        "rewrite_text_sha256": sha(new_text),
        "merged_from_ids": ["ref_m"],
        "source": "promote_merge",
    }


@dataclass
class Wedge:
    """A character whose persona merge was torn by a crash, then written and crashed around."""

    tmp: Path
    root: Path
    cd: Path
    log: EventLog
    e0: Event
    merge: Event | None = None

    def pending(self, event_type: str, payload: dict[str, Any]) -> Event:
        """Durable, never applied: a crash after the append."""
        return self.log.append(CHAR, event_type, payload)

    def our_write(self, rid: str, value: float) -> Event:
        payload = evidence(rid, value)
        return self.log.record_and_save(
            CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), view=REFLECTIONS
        )

    def reconcile(self) -> Any:
        return Reconciler(EventLog(self.root)).reconcile(CHAR)

    def reinforcement(self) -> dict[str, float]:
        return {rid: e["reinforcement"] for rid, e in reflections_by_id(self.cd).items()}

    def applied_set(self) -> list[str]:
        aset = read_applied_set(self.cd)
        return list(aset.applied) if applied_set_valid(aset, read_sentinel(self.cd).event_id) else []


def build_wedge(tmp_path: Path, *, torn: bool = True) -> Wedge:
    """Reflections ref_a..ref_c, persona entry master/prom_a ("old text"), one applied event; with
    ``torn``, then a merge of prom_a appended without its persona.json save (view_drift forever)."""
    root = tmp_path / "memory"
    cd = make_character(
        root,
        reflections=[reflection(r, reinforcement=0.0) for r in ("ref_a", "ref_b", "ref_c")],
        persona=persona_view(persona_entry("prom_a", text="old text"), persona_entry("prom_b", text="b text")),
    )
    log = EventLog(root)
    e0 = log.record_and_save(
        CHAR, "reflection.evidence_updated", evidence("ref_c", 0.5), apply_evidence(evidence("ref_c", 0.5)),
        view=REFLECTIONS,
    )
    w = Wedge(tmp_path, root, cd, log, e0)
    if torn:
        w.merge = w.pending("persona.entry_updated", merge_payload("prom_a", "the merged text"))
    return w


@pytest.fixture
def wedge(tmp_path: Path) -> Wedge:
    return build_wedge(tmp_path)


# -- the wedge, end to end --------------------------------------------------------------------------


def test_the_wedge_end_to_end(wedge: Wedge) -> None:
    w = wedge
    assert w.merge is not None
    # (2) A live write for another entry: applied now; the sentinel cannot move past the torn
    # merge, so the event is recorded in the applied set instead.
    live = w.our_write("ref_b", 2.0)
    assert sentinel_id(w.cd) == w.e0.event_id
    assert w.applied_set() == [live.event_id] and w.reinforcement()["ref_b"] == 2.0
    # (3) A crashed write to a reflection, and a crashed write to the held persona entry.
    crashed = w.pending("reflection.evidence_updated", evidence("ref_a", 3.0))
    held_too = w.pending("persona.evidence_updated", persona_evidence("master", "prom_a", 4.0))
    persona_before = (w.cd / PERSONA).read_bytes()

    # The next start recovers the reflection with no one acting.
    reports, resumed = asyncio.run(startup_sequence(Reconciler(EventLog(w.root)), lambda: "outbox"))
    report = reports[CHAR]
    assert resumed == "outbox"
    assert report.applied == [crashed.event_id] and report.skipped == [live.event_id]
    assert w.reinforcement() == {"ref_a": 3.0, "ref_b": 2.0, "ref_c": 0.5}
    # (4) The merge stays held, and with it the later event of its entry.
    assert report.stopped is not None and (report.stopped.event_id, report.stopped.reason) == (
        w.merge.event_id,
        "view_drift",
    )
    assert report.held == [w.merge.event_id, held_too.event_id]
    assert report.held_entries == [("persona", "prom_a")] and not report.held_everything
    assert (w.cd / PERSONA).read_bytes() == persona_before
    # The sentinel stays just before the merge (the server stops there, as before); what was
    # applied past it is recorded beside it.
    assert sentinel_id(w.cd) == report.sentinel_after == w.e0.event_id
    assert report.applied_beyond == w.applied_set() == [live.event_id, crashed.event_id]

    # (5) A second start changes no byte.
    before = tree_hashes(w.tmp)
    again = w.reconcile()
    assert tree_hashes(w.tmp) == before
    assert again.applied == [] and again.skipped == [live.event_id, crashed.event_id]
    assert again.held == report.held

    # (6) A person parks the merge: it is never applied; the entry's held event then applies, and
    # the sentinel moves on over every consecutive settled event to the journal end.
    record_park(w.cd, ParkRecord(w.merge.event_id, w.merge.type, 1, 2, w.merge.ts, "now", "me", "host", "torn"))
    parked = w.reconcile()
    assert parked.parked == [w.merge.event_id] and parked.applied == [held_too.event_id]
    assert parked.complete and parked.held == [] and parked.applied_beyond == []
    assert persona_by_id(w.cd)["prom_a"]["reinforcement"] == 4.0
    assert persona_by_id(w.cd)["prom_a"]["text"] == "old text"  # the merge itself never applied
    assert sentinel_id(w.cd) == read_journal(w.cd / JOURNAL_NAME).events[-1].event_id
    assert not (w.cd / APPLIED_SET_NAME).exists()
    # A healthy folder again: the next live write advances the sentinel, compaction may run.
    after_live = w.our_write("ref_c", 9.0)
    assert sentinel_id(w.cd) == after_live.event_id
    settled = tree_hashes(w.tmp)
    assert w.reconcile().applied == [] and tree_hashes(w.tmp) == settled


def test_the_server_reading_the_wedged_folder_stops_where_it_always_did(wedge: Wedge) -> None:
    """Limit (b): the server ignores the applied set. Its start replays from the sentinel and
    stops at the merge; its next live write moves the sentinel (its own rule), which makes our
    applied set stale, so we replay from the server's sentinel and ignore the old record."""
    live = wedge.our_write("ref_b", 2.0)
    wedge.reconcile()
    assert read_sentinel(wedge.cd).event_id == wedge.e0.event_id
    assert wedge.applied_set() == [live.event_id]
    # The server's live write: the sentinel goes to its event unconditionally.
    payload = evidence("ref_a", 5.0)
    server = server_record_and_save(
        wedge.log, CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), REFLECTIONS
    )
    aset = read_applied_set(wedge.cd)
    assert aset.state == "ok" and applied_beyond(aset, server.event_id) == frozenset()  # stale
    after_server = wedge.pending("reflection.evidence_updated", evidence("ref_c", 7.0))
    report = wedge.reconcile()
    assert report.sentinel_before == server.event_id and report.skipped == []
    assert report.applied == [after_server.event_id] and report.complete
    assert not (wedge.cd / APPLIED_SET_NAME).exists()  # the stale record is removed
    assert sentinel_id(wedge.cd) == after_server.event_id


def test_a_stale_applied_set_is_ignored_when_the_sentinel_was_rewritten_with_the_same_id(wedge: Wedge) -> None:
    """A server start that replays writes the sentinel again (a new ``ts``), even with the same
    id: a record bound to the old write no longer counts, and its events replay."""
    live = wedge.our_write("ref_b", 2.0)
    assert wedge.applied_set() == [live.event_id]
    write_sentinel(wedge.cd, wedge.e0.event_id)  # same id, new ts
    assert wedge.applied_set() == []
    report = wedge.reconcile()
    assert report.skipped == [] and report.applied == [live.event_id]


def test_never_reapply_a_change_made_without_an_event_is_not_rolled_back(wedge: Wedge) -> None:
    crashed = wedge.pending("reflection.evidence_updated", evidence("ref_a", 3.0))
    first = wedge.reconcile()
    assert first.applied == [crashed.event_id] and first.applied_beyond == [crashed.event_id]
    # A startup migration (or any repair without an event) changes the field afterwards.
    views = reflections_by_id(wedge.cd)
    views["ref_a"]["reinforcement"] = 1.25
    fs.atomic_write_json(wedge.cd / REFLECTIONS, list(views.values()))
    second = wedge.reconcile()
    assert second.applied == [] and second.skipped == [crashed.event_id]
    assert wedge.reinforcement()["ref_a"] == 1.25


def test_a_live_merge_past_the_wedge_is_not_replayed_into_a_new_wedge(wedge: Wedge) -> None:
    """A merge of another entry, applied live past the wedge, then a correction merge of that
    entry (text rewritten, no event): replaying the merge would fail its text hash for ever."""
    payload = merge_payload("prom_b", "b merged")

    def merge(view: dict[str, Any]) -> None:
        entry = next(e for e in view["master"]["facts"] if e["id"] == "prom_b")
        entry.update(text="b merged", merged_from_ids=["ref_m"], reinforcement=3.0)

    live = wedge.log.record_and_save(CHAR, "persona.entry_updated", payload, merge, view=PERSONA)
    persona = persona_view(
        persona_entry("prom_a", text="old text"),
        {**persona_by_id(wedge.cd)["prom_b"], "text": "corrected by hand"},
    )
    fs.atomic_write_json(wedge.cd / PERSONA, persona)
    report = wedge.reconcile()
    assert report.skipped == [live.event_id] and [b.event_id for b in report.blocks] == [wedge.merge.event_id]


def test_a_held_event_that_becomes_applicable_applies_and_later_events_of_its_entry_run_again(
    wedge: Wedge,
) -> None:
    """Newest payload wins: once the merge applies (its text is back), an event of the same entry
    applied past it earlier runs again after it; events of other entries are still not rerun."""
    assert wedge.merge is not None

    def evidence_of(value: float) -> Any:
        def mutate(view: dict[str, Any]) -> None:
            next(e for e in view["master"]["facts"] if e["id"] == "prom_a")["reinforcement"] = value

        return mutate

    later = wedge.log.record_and_save(
        CHAR, "persona.evidence_updated", persona_evidence("master", "prom_a", 6.0), evidence_of(6.0), view=PERSONA
    )
    other = wedge.our_write("ref_b", 2.0)
    first = wedge.reconcile()
    assert first.skipped == [later.event_id, other.event_id] and first.held == [wedge.merge.event_id]
    # Someone restores the merged text: the merge can apply now.
    view = persona_view(
        {**persona_by_id(wedge.cd)["prom_a"], "text": "the merged text"}, persona_by_id(wedge.cd)["prom_b"]
    )
    fs.atomic_write_json(wedge.cd / PERSONA, view)
    report = wedge.reconcile()
    assert report.applied == [wedge.merge.event_id, later.event_id] and report.skipped == [other.event_id]
    assert persona_by_id(wedge.cd)["prom_a"]["reinforcement"] == 6.0  # not the merge's 3.0
    assert report.complete and sentinel_id(wedge.cd) == other.event_id
    assert not (wedge.cd / APPLIED_SET_NAME).exists()


# -- what holds what ----------------------------------------------------------------------------------


def test_a_held_merge_holds_the_reflections_state_change_through_absorbed_into(wedge: Wedge) -> None:
    assert wedge.merge is not None
    state = wedge.pending(
        "reflection.state_changed",
        {"reflection_id": "ref_a", "from": "confirmed", "to": "merged", "ts": "2026-05-02T00:00:00",
         "absorbed_into": "prom_a"},
    )
    ref_a_later = wedge.pending("reflection.evidence_updated", evidence("ref_a", 8.0))
    ref_b = wedge.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    report = wedge.reconcile()
    assert report.held == [wedge.merge.event_id, state.event_id, ref_a_later.event_id]
    assert report.held_entries == [("persona", "prom_a"), ("reflection", "ref_a")]
    assert report.applied == [ref_b.event_id]
    assert reflections_by_id(wedge.cd)["ref_a"]["status"] == "confirmed"  # not merged
    assert wedge.reinforcement() == {"ref_a": 0.0, "ref_b": 2.0, "ref_c": 0.5}


@pytest.mark.parametrize(
    "event_type",
    ["fact.added", "correction.queued"],
)
def test_an_event_whose_entries_cannot_be_known_stops_everything_after_it(tmp_path: Path, event_type: str) -> None:
    w = build_wedge(tmp_path, torn=False)
    before = w.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    unknown = w.pending(event_type, {"text": "legacy vocabulary"})
    after = w.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    for _ in range(2):
        report = w.reconcile()
        assert report.stopped is not None and (report.stopped.event_id, report.stopped.reason) == (
            unknown.event_id,
            "no_handler",
        )
        assert report.held_everything and report.held == [unknown.event_id, after.event_id]
        assert sentinel_id(w.cd) == before.event_id
        assert w.reinforcement()["ref_b"] == 0.0
        assert not (w.cd / APPLIED_SET_NAME).exists()


def test_an_unknown_entry_event_after_a_per_entry_hold_holds_everything(wedge: Wedge) -> None:
    first = wedge.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    unknown = wedge.pending("reflection.evidence_updated", {"reinforcement": 9.0})  # names no reflection
    last = wedge.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    report = wedge.reconcile()
    assert report.applied == [first.event_id] and report.held_everything
    assert report.held == [wedge.merge.event_id, unknown.event_id, last.event_id]


def test_a_declared_type_without_handler_naming_an_entry_holds_only_that_entry(tmp_path: Path) -> None:
    w = build_wedge(tmp_path, torn=False)
    surfaced = w.pending("reflection.surfaced", {"reflection_id": "ref_a", "surfaced_at": "t", "source": "legacy"})
    held = w.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    other = w.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    report = w.reconcile()
    assert report.stopped is not None and report.stopped.reason == "no_handler"
    assert report.held == [surfaced.event_id, held.event_id] and report.applied == [other.event_id]
    assert sentinel_id(w.cd) == w.e0.event_id


def test_a_corrupt_view_stops_everything(wedge: Wedge) -> None:
    (wedge.cd / PERSONA).write_bytes(b'{"master": ')
    persona_ev = wedge.pending("persona.evidence_updated", persona_evidence("master", "prom_b", 1.0))
    refl = wedge.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    report = wedge.reconcile()
    assert report.stopped is not None and report.stopped.reason == "corrupt_view"
    assert report.held_everything and report.held == [wedge.merge.event_id, persona_ev.event_id, refl.event_id]
    assert report.applied == []


def test_event_entries_and_holds_rules() -> None:
    assert event_entries("reflection.evidence_updated", {"reflection_id": "r"}) == {("reflection", "r")}
    assert event_entries("persona.entry_updated", {"entity_key": "master", "entry_id": "p"}) == {("persona", "p")}
    assert event_entries(
        "reflection.state_changed", {"reflection_id": "r", "to": "merged", "absorbed_into": "p"}
    ) == {("reflection", "r"), ("persona", "p")}
    archive = {"entity_key": "master", "entry_id": "p", "archive_shard_path": "2026-05-01_0a1b2c3d.json",
               "entry_snapshot": {"id": "p2"}}
    assert event_entries("persona.fact_added", archive) == {("persona", "p"), ("persona", "p2")}
    assert event_entries("persona.fact_added", EntryKeys.of(archive)) == {("persona", "p"), ("persona", "p2")}
    for etype, payload in [
        ("reflection.frobnicated", {"reflection_id": "r"}),
        ("fact.added", {"text": "x"}),
        ("reflection.evidence_updated", {}),
        ("reflection.evidence_updated", ["not", "an", "object"]),
        (None, {"reflection_id": "r"}),
    ]:
        assert event_entries(etype, payload) is None, (etype, payload)
    assert stops_everything("corrupt_view") and stops_everything("sentinel_write")
    assert not stops_everything("view_drift") and not stops_everything("no_handler")

    holds = Holds()
    assert holds.admit(None) and holds.admit(frozenset({("reflection", "a")}))
    holds.hold(frozenset({("persona", "p")}), "view_drift")
    assert not holds.admit(frozenset({("persona", "p"), ("reflection", "b")}))  # transitive
    assert holds.entries == {("persona", "p"), ("reflection", "b")} and not holds.everything
    assert not holds.admit(frozenset({("reflection", "b")}))
    assert holds.admit(frozenset({("reflection", "c")}))
    assert not holds.admit(None) and holds.everything  # unknown entries while something is held
    assert not holds.admit(frozenset({("reflection", "z")}))
    solo = Holds()
    solo.hold(frozenset({("persona", "p")}), "corrupt_view")
    assert solo.everything


# -- the applied set and the park file, as files ------------------------------------------------------


def test_the_new_files_are_no_character_folder_markers_and_are_confined(tmp_path: Path) -> None:
    from journal.diagnosis import diagnose_path  # noqa: F401  (journal.inputs is imported through it)
    from journal.inputs import is_character_folder

    folder = tmp_path / "memory" / "x"
    folder.mkdir(parents=True)
    (folder / APPLIED_SET_NAME).write_text("{}")
    (folder / PARKED_NAME).write_text("")
    assert not is_character_folder(folder)

    w = build_wedge(tmp_path / "w")
    outside = tmp_path / "outside.json"
    outside.write_text('{"after": null, "after_ts": null, "applied": ["x"]}')
    os.symlink(outside, w.cd / APPLIED_SET_NAME)
    assert read_applied_set(w.cd).state == "refused"
    live = w.our_write("ref_b", 2.0)  # the record is not written through the link
    assert outside.read_text() == '{"after": null, "after_ts": null, "applied": ["x"]}'
    report = w.reconcile()  # so the live write replays (its own snapshot), as before this record
    assert report.applied == [live.event_id] and report.applied_beyond == []
    assert outside.read_text() == '{"after": null, "after_ts": null, "applied": ["x"]}'
    os.symlink(outside, w.cd / PARKED_NAME)
    assert read_parked(w.cd).state == "refused"
    with pytest.raises(OSError, match="parked"):
        w.reconcile()  # which events are parked is unknown: nothing is applied


@pytest.mark.parametrize("data", [b"not json", b"[1]", b'{"applied": "x"}', b'{"after": 3, "applied": []}'])
def test_a_malformed_applied_set_is_ignored(wedge: Wedge, data: bytes) -> None:
    (wedge.cd / APPLIED_SET_NAME).write_bytes(data)
    aset = read_applied_set(wedge.cd)
    assert aset.state == "malformed" and applied_beyond(aset, wedge.e0.event_id) == frozenset()
    crashed = wedge.pending("reflection.evidence_updated", evidence("ref_a", 3.0))
    report = wedge.reconcile()
    assert report.applied == [crashed.event_id] and report.applied_beyond == [crashed.event_id]


def test_the_applied_set_file_format(wedge: Wedge) -> None:
    live = wedge.our_write("ref_b", 2.0)
    obj = __import__("json").loads((wedge.cd / APPLIED_SET_NAME).read_bytes())
    sentinel = read_sentinel(wedge.cd)
    assert list(obj) == ["after", "after_ts", "applied", "ts"]
    assert obj["after"] == sentinel.event_id and obj["after_ts"] == sentinel.ts and obj["applied"] == [live.event_id]
    write_applied_set(wedge.cd, sentinel, [live.event_id, "another"])
    assert read_applied_set(wedge.cd).applied == (live.event_id, "another")


def test_park_file_reading_skips_torn_lines(tmp_path: Path) -> None:
    w = build_wedge(tmp_path)
    assert w.merge is not None
    record_park(w.cd, ParkRecord(w.merge.event_id, w.merge.type, 1, 2, w.merge.ts, "t", "me", "h", "why"))
    with open(w.cd / PARKED_NAME, "ab") as fh:
        fh.write(b'{"event_id": "torn')
    parked = read_parked(w.cd)
    assert parked.state == "ok" and parked.bad_lines == 1 and is_parked(parked, w.merge.event_id)
    record_park(w.cd, ParkRecord("other", "x", None, None, "", "t", "me", "h", "why"))
    assert read_parked(w.cd).ids == {w.merge.event_id, "other"}  # the torn line stays apart


# -- record_and_save and compact with a wedge ---------------------------------------------------------


def test_compact_refuses_while_anything_is_held_or_applied_past_the_sentinel(wedge: Wedge) -> None:
    wedge.our_write("ref_b", 2.0)
    wedge.reconcile()
    with pytest.raises(UnappliedTailError):
        wedge.log.compact(CHAR, [])
    assert wedge.merge is not None
    record_park(wedge.cd, ParkRecord(wedge.merge.event_id, "", None, None, "", "t", "me", "h", "why"))
    assert wedge.reconcile().complete
    wedge.log.compact(CHAR, [("reflection.evidence_updated", evidence("ref_a", 1.0))])
    assert read_sentinel(wedge.cd).state == "null" and not (wedge.cd / APPLIED_SET_NAME).exists()


def test_a_live_write_over_a_crashed_tail_is_recorded_and_newest_still_wins(tmp_path: Path) -> None:
    """No wedge, just a crash: the pending older event of the same entry replays before the live
    one, and the live one runs again after it (its entry was touched), so the live value stays."""
    w = build_wedge(tmp_path, torn=False)
    older = w.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    live = w.our_write("ref_a", 5.0)
    other = w.our_write("ref_b", 2.0)
    assert w.applied_set() == [live.event_id, other.event_id]
    report = w.reconcile()
    assert report.applied == [older.event_id, live.event_id] and report.skipped == [other.event_id]
    assert w.reinforcement()["ref_a"] == 5.0 and report.complete
    assert sentinel_id(w.cd) == other.event_id and not (w.cd / APPLIED_SET_NAME).exists()


# -- the exact "last complete event" check ------------------------------------------------------------


def test_a_duplicate_of_the_sentinels_record_far_back_does_not_let_a_live_write_orphan_a_pending_event(
    tmp_path: Path,
) -> None:
    """The sentinel's record, more than 8 MiB of blank lines, a pending event, then a copy of the
    sentinel's record. The copy is not an event (the reader says ``duplicate_event_id``), so the
    last event is the pending one and a live write must not move the sentinel past it. A backwards
    reader that checked duplicates only in its last 8 MiB took the copy for the last event."""
    w = build_wedge(tmp_path, torn=False)
    journal = w.cd / JOURNAL_NAME
    sentinel_line = encode_event(read_journal(journal).events[0])
    pending = new_event("reflection.evidence_updated", evidence("ref_a", 3.0))
    fs.durable_append(journal, b"\n" * (9 << 20) + encode_event(pending) + sentinel_line)
    assert [e.event_id for e in read_journal(journal).events] == [w.e0.event_id, pending.event_id]
    assert last_event_id(journal) == (True, pending.event_id)
    live = w.our_write("ref_b", 2.0)
    assert sentinel_id(w.cd) == w.e0.event_id  # not moved past the pending event
    report = w.reconcile()
    assert report.applied == [pending.event_id] and report.skipped == [live.event_id]
    assert w.reinforcement()["ref_a"] == 3.0 and sentinel_id(w.cd) == live.event_id


def test_the_last_event_is_read_incrementally_and_follows_replacement(tmp_path: Path) -> None:
    from journal.lastevent import LastEventCache

    path = tmp_path / JOURNAL_NAME
    cache = LastEventCache()
    a, b, c = (new_event("fact.added", {"n": i}) for i in range(3))
    fs.durable_append(path, encode_event(a))
    assert cache.last_event_id(path) == (True, a.event_id)
    fs.durable_append(path, encode_event(b) + encode_event(a))  # a duplicate of a: not an event
    assert cache.last_event_id(path) == (True, b.event_id)
    fs.durable_append(path, encode_event(c)[:20])  # torn
    assert cache.last_event_id(path) == (True, b.event_id)
    fs.atomic_write_bytes(path, encode_event(c))  # replaced (compaction)
    assert cache.last_event_id(path) == (True, c.event_id)
    os.unlink(path)
    assert cache.last_event_id(path) == (True, None)


# -- concurrency: live writers during a round over a wedge ---------------------------------------------


def test_our_live_write_during_a_wedged_round_is_recorded_and_lands_on_top(wedge: Wedge) -> None:
    from journal.reconcile import ReconcileHooks

    c1 = wedge.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    c2 = wedge.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    live: list[Event] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == c1.event_id and not live:
            live.append(wedge.our_write("ref_a", 7.0))  # lands before the round's older payload

    report = Reconciler(EventLog(wedge.root), hooks=ReconcileHooks(before_event=before_event)).reconcile(CHAR)
    assert not report.frozen and report.rescans >= 1
    assert report.applied == [c1.event_id, c2.event_id, live[0].event_id]  # run again on top
    assert wedge.reinforcement()["ref_a"] == 7.0
    assert report.applied_beyond == wedge.applied_set() == [c1.event_id, c2.event_id, live[0].event_id]
    assert sentinel_id(wedge.cd) == wedge.e0.event_id
    before = tree_hashes(wedge.tmp)
    assert wedge.reconcile().applied == [] and tree_hashes(wedge.tmp) == before


def test_a_server_write_during_a_wedged_round_freezes_it_and_nothing_is_recorded(wedge: Wedge) -> None:
    from journal.reconcile import ReconcileHooks

    c1 = wedge.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    c2 = wedge.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    server: list[Event] = []

    def before_event(ev: Event) -> None:
        if ev.event_id == c2.event_id and not server:
            payload = evidence("ref_a", 9.0)
            server.append(
                server_record_and_save(
                    wedge.log, CHAR, "reflection.evidence_updated", payload, apply_evidence(payload), REFLECTIONS
                )
            )

    report = Reconciler(EventLog(wedge.root), hooks=ReconcileHooks(before_event=before_event)).reconcile(CHAR)
    assert report.frozen and report.held == [wedge.merge.event_id]
    assert report.applied == [c1.event_id, c2.event_id, server[0].event_id]
    assert wedge.reinforcement() == {"ref_a": 9.0, "ref_b": 2.0, "ref_c": 0.5}  # newest wins
    assert sentinel_id(wedge.cd) == server[0].event_id  # the server's rule: the merge is behind it now
    assert not (wedge.cd / APPLIED_SET_NAME).exists() and report.applied_beyond == []


# -- the sentinel names only an event the memory server's reader can see (memory-format §9.3) ------


def _glued_append(w: Wedge, payload: dict[str, Any]) -> Event:
    """A crash tore an append, and the memory server's next append (no newline first) was glued
    onto the fragment; that write crashed before its view save and sentinel write (pending)."""
    journal = w.cd / JOURNAL_NAME
    lost = new_event("reflection.evidence_updated", evidence("ref_c", 0.1))
    fs.durable_append(journal, encode_event(lost)[:70], keep_lines_apart=False)
    glued = new_event("reflection.evidence_updated", payload)
    fs.durable_append(journal, encode_event(glued), keep_lines_apart=False)
    jr = read_journal(journal)
    assert [(d.kind, d.recovered_event_id) for d in jr.defects] == [("glued", glued.event_id)]
    return glued


def _server_sees_the_sentinel(root: Path) -> None:
    from journal.diagnosis import diagnose_path

    (c,) = diagnose_path(root).characters
    codes = [f.code for f in c.findings]
    assert "server.sentinel_unseen" not in codes and "server.full_replay" not in codes, codes
    assert c.server_start is not None and c.server_start.sentinel.state == "ok"


def test_replay_moves_the_sentinel_off_an_event_the_server_cannot_see(tmp_path: Path) -> None:
    """The memory server's live write put the sentinel on an event it glued onto a torn fragment:
    its own reader cannot see it, so its next start would replay the whole journal. Our replay
    puts the sentinel back on the last event it can see, and records the glued event as applied."""
    from journal.fixtures import glued_torn_line

    built = glued_torn_line(tmp_path / "memory")
    glued = built.ids["glued"]
    assert sentinel_id(built.path) == glued
    views_before = (built.path / REFLECTIONS).read_bytes()
    report = Reconciler(EventLog(built.root)).reconcile(built.name)
    events = [e.event_id for e in read_journal(built.path / JOURNAL_NAME).events]
    assert report.applied == [] and report.complete
    assert sentinel_id(built.path) == report.sentinel_after == events[events.index(glued) - 1]
    aset = read_applied_set(built.path)
    assert applied_beyond(aset, sentinel_id(built.path)) == {glued} and report.applied_beyond == [glued]
    assert (built.path / REFLECTIONS).read_bytes() == views_before  # nothing applied again
    _server_sees_the_sentinel(built.root)
    # A second round changes no byte; the glued event is never run again.
    before = tree_hashes(built.root)
    again = Reconciler(EventLog(built.root)).reconcile(built.name)
    assert again.applied == [] and again.skipped == [glued] and tree_hashes(built.root) == before


def test_replay_never_moves_the_sentinel_onto_a_pending_glued_event(tmp_path: Path) -> None:
    w = build_wedge(tmp_path, torn=False)
    glued = _glued_append(w, evidence("ref_a", 3.0))
    report = w.reconcile()
    assert report.applied == [glued.event_id] and report.complete
    assert w.reinforcement()["ref_a"] == 3.0
    assert sentinel_id(w.cd) == report.sentinel_after == w.e0.event_id  # not the glued event
    assert w.applied_set() == report.applied_beyond == [glued.event_id]
    _server_sees_the_sentinel(w.root)
    before = tree_hashes(w.tmp)
    again = w.reconcile()
    assert again.applied == [] and again.skipped == [glued.event_id] and tree_hashes(w.tmp) == before
    # The next live write is visible to the server: the round after it moves the sentinel onto it.
    live = w.our_write("ref_b", 2.0)
    assert w.applied_set() == [glued.event_id, live.event_id]
    last = w.reconcile()
    assert last.applied == [] and last.skipped == [glued.event_id, live.event_id]
    assert sentinel_id(w.cd) == live.event_id and not (w.cd / APPLIED_SET_NAME).exists()
    _server_sees_the_sentinel(w.root)


def test_a_glued_event_inside_the_settled_run_is_passed_by_the_sentinel(tmp_path: Path) -> None:
    w = build_wedge(tmp_path, torn=False)
    glued = _glued_append(w, evidence("ref_a", 3.0))
    after = w.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    report = w.reconcile()
    assert report.applied == [glued.event_id, after.event_id] and report.complete
    assert sentinel_id(w.cd) == after.event_id and not (w.cd / APPLIED_SET_NAME).exists()
    _server_sees_the_sentinel(w.root)


@pytest.mark.parametrize("with_applied_set", [False, True])
def test_a_glued_event_ending_the_settled_run_after_a_park_stays_beyond_the_sentinel(
    wedge: Wedge, with_applied_set: bool
) -> None:
    """Parked merge, a visible event, then a glued one: the sentinel moves over the settled run,
    but only as far as the visible event (eagerly, or at the end of a round that started with an
    applied set); the glued event is recorded beyond it."""
    w = wedge
    assert w.merge is not None
    if with_applied_set:
        visible = w.our_write("ref_b", 2.0)
    else:
        visible = w.pending("reflection.evidence_updated", evidence("ref_b", 2.0))
    glued = _glued_append(w, evidence("ref_a", 3.0))
    record_park(w.cd, ParkRecord(w.merge.event_id, w.merge.type, 1, 2, w.merge.ts, "t", "me", "h", "why"))
    report = w.reconcile()
    assert report.parked == [w.merge.event_id]
    if with_applied_set:
        assert report.skipped == [visible.event_id] and report.applied == [glued.event_id]
    else:
        assert report.applied == [visible.event_id, glued.event_id]
    assert w.reinforcement() == {"ref_a": 3.0, "ref_b": 2.0, "ref_c": 0.5}
    assert sentinel_id(w.cd) == visible.event_id and w.applied_set() == [glued.event_id]
    _server_sees_the_sentinel(w.root)


# -- which applied-set events run again (journal.appliedset.Rerun) ------------------------------------


def _no_entry_write(w: Wedge) -> Event:
    """Our live write of an event whose payload names no entry (it changes nothing)."""
    return w.log.record_and_save(
        CHAR, "reflection.evidence_updated", {"reinforcement": 9.0, "source": "x"}, lambda view: None, view=REFLECTIONS
    )


def test_an_event_naming_no_entry_run_in_a_round_never_reruns_an_applied_set_event(tmp_path: Path) -> None:
    """A pending event whose payload names no entry runs (it changes nothing); a later event of
    the applied set must not run again because of it: after a migration that would roll the
    migrated value back to the old snapshot (limit (a))."""
    w = build_wedge(tmp_path, torn=False)
    unknown = w.pending("reflection.evidence_updated", {"reinforcement": 9.0})
    live = w.our_write("ref_a", 2.0)
    assert w.applied_set() == [live.event_id]
    views = reflections_by_id(w.cd)
    views["ref_a"]["reinforcement"] = 1.25  # a startup migration, no event
    fs.atomic_write_json(w.cd / REFLECTIONS, list(views.values()))
    report = w.reconcile()
    assert report.applied == [unknown.event_id] and report.skipped == [live.event_id]
    assert w.reinforcement()["ref_a"] == 1.25
    assert report.complete and sentinel_id(w.cd) == live.event_id and not (w.cd / APPLIED_SET_NAME).exists()


def test_an_applied_set_event_naming_no_entry_is_skipped_and_holds_nothing(wedge: Wedge) -> None:
    w = wedge
    assert w.merge is not None
    no_entry = _no_entry_write(w)
    other = w.pending("reflection.evidence_updated", evidence("ref_a", 3.0))
    assert w.applied_set() == [no_entry.event_id]
    report = w.reconcile()
    assert report.held == [w.merge.event_id] and not report.held_everything
    assert report.skipped == [no_entry.event_id] and report.applied == [other.event_id]
    assert report.applied_beyond == [no_entry.event_id, other.event_id]


def test_an_applied_set_event_naming_no_entry_is_not_rerun_after_an_earlier_event_applies(tmp_path: Path) -> None:
    w = build_wedge(tmp_path, torn=False)
    older = w.pending("reflection.evidence_updated", evidence("ref_a", 1.0))
    no_entry = _no_entry_write(w)
    report = w.reconcile()
    assert report.applied == [older.event_id] and report.skipped == [no_entry.event_id] and report.complete
    assert sentinel_id(w.cd) == no_entry.event_id


def test_the_rerun_rule() -> None:
    from journal.appliedset import Rerun

    a, b = ("reflection", "a"), ("persona", "b")
    rerun = Rerun(["s1", "s2", "s3", "s4"])
    assert not rerun.admit_applied("p0", frozenset({a}))  # not in the applied set: it runs
    assert rerun.admit_applied("s1", frozenset({a}))  # nothing of its entries ran: skip
    rerun.note_applied("p0", None)  # names no entry: it cannot have overwritten one
    assert rerun.admit_applied("s2", frozenset({a}))
    rerun.note_applied("p1", frozenset({a}))
    assert not rerun.admit_applied("s2", frozenset({a, b}))  # shares `a`: runs again after it
    rerun.note_applied("s2", frozenset({a, b}))  # a re-run is an older payload of `b` too
    assert not rerun.admit_applied("s3", frozenset({b}))
    assert rerun.admit_applied("s4", None)  # names no entry: never run again
    assert rerun.admit_applied("s4", frozenset({("reflection", "z")}))
    rerun.add(["s5"])
    assert "s5" in rerun.applied and rerun.admit_applied("s5", frozenset({("reflection", "y")}))


@pytest.mark.parametrize("case", ["glued_torn_line", "torn_tail"])
def test_our_live_write_after_a_torn_or_glued_line_names_only_a_visible_event(tmp_path: Path, case: str) -> None:
    """record_and_save writes a newline first after a torn line, so the event it puts the sentinel
    on is a whole line of its own, which the memory server's reader sees."""
    from journal import fixtures
    from journal.fixtures import REFLECTION_IDS, reflection_evidence_payload

    built = getattr(fixtures, case)(tmp_path / "memory")
    payload = reflection_evidence_payload(REFLECTION_IDS[0], 4.2, at="2026-06-01T00:00:00")
    ev = EventLog(built.root).record_and_save(
        built.name, "reflection.evidence_updated", payload, apply_evidence(payload), view=REFLECTIONS
    )
    jr = read_journal(built.path / JOURNAL_NAME)
    assert jr.events[-1].event_id == ev.event_id == sentinel_id(built.path)
    assert all(d.recovered_event_id != ev.event_id for d in jr.defects)
    _server_sees_the_sentinel(built.root)
