"""The entry history (journal.history): reconstruction against the replay handlers, state, diff, moved views."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from journal import fixtures as folders
from journal import fs
from journal.codec import same_json
from journal.diagnosis import diagnose_character
from journal.dryrun import dry_run
from journal.events import JOURNAL_NAME, encode_event, make_event
from journal.history import (
    MOVED_CODE,
    UNKNOWN,
    EntryKey,
    EntryState,
    HistoryError,
    HistoryInputError,
    JournalHistory,
    step,
)
from journal.park import ParkRecord, record_park
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS


@pytest.fixture(autouse=True)
def _no_real_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _history(path: Path) -> JournalHistory:
    return JournalHistory(diagnose_character(path, now=folders.FIXTURE_NOW))


# -- reconstruction against the handlers, on random journals ---------------------------------------

REFLECTIONS_SEEDED = ("ref_a", "ref_b")
PERSONA_SEEDED = (("master", "p1", "Master likes tea"), ("neko", "p2", "主人 likes rain"))
SHARDS = ("2026-05-01_0a1b2c3d.json", "2026-05-02_0b1c2d3e.json")
EVIDENCE = ("reinforcement", "disputation", "rein_last_signal_at", "sub_zero_days", "promote_attempt_count")

values = st.one_of(st.floats(-3, 3, allow_nan=False), st.integers(0, 20), st.none(), st.sampled_from(["2026-05-01T09"]))
evidence = st.dictionaries(st.sampled_from(EVIDENCE), values, max_size=3)
reflection = st.sampled_from(REFLECTIONS_SEEDED)
persona = st.sampled_from(range(len(PERSONA_SEEDED)))

actions = st.one_of(
    st.tuples(st.just("r_evidence"), reflection, evidence),
    st.tuples(st.just("p_evidence"), persona, evidence),
    st.tuples(st.just("merge"), persona, evidence, st.sampled_from(["match", "none", "drift"]), st.booleans()),
    st.tuples(
        st.just("state"),
        reflection,
        st.sampled_from(["confirmed", "promoted", "denied", "promote_blocked", "merged"]),
        st.booleans(),
    ),
    st.tuples(st.just("r_archive"), reflection, st.sampled_from([*SHARDS, None, "../bad.json"]), evidence),
    st.tuples(st.just("p_archive"), persona, st.sampled_from([*SHARDS, None]), st.booleans()),
    st.tuples(st.just("legacy"), reflection),
    st.tuples(st.just("not_object"), reflection),
)


def _event(action: tuple[Any, ...]) -> tuple[str, Any]:
    kind = action[0]
    if kind == "r_evidence":
        return "reflection.evidence_updated", {"reflection_id": action[1], **action[2], "source": "user_fact"}
    if kind == "p_evidence":
        key, eid, _ = PERSONA_SEEDED[action[1]]
        return "persona.evidence_updated", {"entity_key": key, "entry_id": eid, **action[2]}
    if kind == "merge":
        key, eid, text = PERSONA_SEEDED[action[1]]
        payload: dict[str, Any] = {"entity_key": key, "entry_id": eid, **action[2], "merged_from_ids": ["ref_a"]}
        if action[3] != "none":
            payload["rewrite_text_sha256"] = _sha(text if action[3] == "match" else text + "!")
        if action[4]:
            payload["speaker_provenance"] = {"speaker_id": "u1", "speaker_trust": 0.5}
        return "persona.entry_updated", payload
    if kind == "state":
        payload = {"reflection_id": action[1], "from": "pending", "to": action[2], "ts": "2026-05-01T10:00:00"}
        if action[3]:
            payload.update(absorbed_into="prom_x", reason="why", reject_explanation="because")
        return "reflection.state_changed", payload
    if kind == "r_archive":
        payload = {"reflection_id": action[1], "from": "pending", "to": "archived"}
        if action[2] is not None:
            snapshot = {"id": action[1], "text": f"text of {action[1]}", "status": "archived", **action[3]}
            payload.update(archive_shard_path=action[2], archived_at="2026-05-01T11:00:00", entry_snapshot=snapshot)
        return "reflection.state_changed", payload
    if kind == "p_archive":
        key, eid, text = PERSONA_SEEDED[action[1]]
        payload = {"entity_key": key, "entry_id": eid, "text": text}
        if action[2] is not None:
            payload["archive_shard_path"] = action[2]
            if action[3]:
                payload["entry_snapshot"] = {"id": eid, "text": text, "reinforcement": 9.0}
        return "persona.fact_added", payload
    if kind == "legacy":
        return "reflection.surfaced", {"reflection_id": action[1]}
    return "reflection.evidence_updated", [action[1]]


def _seed(char_dir: Path) -> None:
    fs.ensure_dir(char_dir)
    reflections = [
        {"id": rid, "text": f"text of {rid}", "status": "pending", "reinforcement": 0.0} for rid in REFLECTIONS_SEEDED
    ]
    persona: dict[str, Any] = {"master": {"facts": []}, "neko": {"facts": []}}
    for key, eid, text in PERSONA_SEEDED:
        persona[key]["facts"].append(folders.persona_entry(eid, text))
    fs.atomic_write_json(char_dir / REFLECTIONS, reflections)
    fs.atomic_write_json(char_dir / PERSONA, persona)


def _entry_in(files: dict[str, bytes], key: EntryKey) -> dict[str, Any] | None:
    if key.entity is None:
        view = json.loads(files[REFLECTIONS])
        return next((e for e in view if e.get("id") == key.id), None)
    view = json.loads(files[PERSONA])
    return next((e for e in view.get(key.entity, {}).get("facts", []) if e.get("id") == key.id), None)


def _shard_copy(files: dict[str, bytes], key: EntryKey, shard: str) -> dict[str, Any] | None:
    archive = REFLECTION_ARCHIVE if key.entity is None else PERSONA_ARCHIVE
    data = files.get(f"{archive}/{shard}")
    if data is None:
        return None
    return next((e for e in json.loads(data) if e.get("id") == key.id), None)


def _agrees(state: EntryState, files: dict[str, bytes], key: EntryKey) -> None:
    """The replayed folder holds what the reconstruction says, field by known field."""
    current = _entry_in(files, key)
    if state.placement is None:
        assert not state.fields
        return
    if state.placement == "view":
        assert current is not None, key
        holder = current
    else:
        assert current is None, key
        if state.placement == "removed":
            return
        assert state.shard is not None
        copy = _shard_copy(files, key, state.shard)
        assert copy is not None, (key, state.shard)
        holder = copy
    for name, value in state.fields.items():
        if name == "text_sha256":
            assert _sha(holder.get("text") or "") == value, (key, name)
        else:
            assert name in holder and same_json(holder[name], value), (key, name, holder.get(name, "-"), value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(actions, min_size=1, max_size=10))
@example(  # archived twice into the same shard: the shard keeps its first copy
    plan=[
        ("r_archive", "ref_a", SHARDS[0], {"reinforcement": 1.0}),
        ("r_archive", "ref_a", SHARDS[0], {"reinforcement": 2.0}),
    ]
)
@example(  # then into another shard, then evidence for the archived entry
    plan=[
        ("r_archive", "ref_b", SHARDS[0], {}),
        ("r_archive", "ref_b", SHARDS[1], {"sub_zero_days": 3}),
        ("r_evidence", "ref_b", {"reinforcement": 2.0}),
        ("p_archive", 0, None, False),
        ("merge", 1, {"disputation": 1.0}, "match", True),
        ("p_archive", 1, SHARDS[0], True),
    ]
)
def test_reconstruction_equals_replay_after_every_event(tmp_path_factory: Any, plan: list[tuple[Any, ...]]) -> None:
    root = tmp_path_factory.mktemp("history")
    char_dir = root / "c"
    _seed(char_dir)
    ids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(len(plan))]
    lines = b"".join(
        encode_event(make_event(ids[i], *_event(a)[:1], f"2026-05-01T09:00:{i:02d}", _event(a)[1]))
        for i, a in enumerate(plan)
    )
    (char_dir / JOURNAL_NAME).write_bytes(lines)  # no sentinel: replay runs the whole journal
    history = _history(char_dir)
    keys = [EntryKey(r) for r in REFLECTIONS_SEEDED] + [EntryKey(eid, key) for key, eid, _ in PERSONA_SEEDED]
    entries = {}
    for key in keys:
        try:
            entries[key] = history.entry(key)
        except HistoryInputError:
            pass
    whole = dry_run(char_dir)
    stop = len(ids) if whole.report.stopped is None else ids.index(whole.report.stopped.event_id)
    for k in range(stop):
        files = dry_run(char_dir, until=ids[k]).predicted
        for key, h in entries.items():
            point = h.at(k)
            if point is not None:
                _agrees(point.entry, files, key)
            else:
                assert _entry_in(files, key) is not None  # untouched: still as seeded
        state = history.state_at(k)
        for key, (_, st_) in state.entries.items():
            _agrees(st_, files, key)
    if stop < len(ids):
        # The event replay stops at is blocked in the diagnosis, and the history does not apply it.
        for h in entries.values():
            for p in h.points:
                if p.index == stop:
                    assert p.state == "blocked" and p.effect == "blocked" and p.noop


# -- the rules, one by one --------------------------------------------------------------------------------


def test_fields_no_event_set_are_unknown() -> None:
    after, effect = step(None, "reflection.evidence_updated", {"reflection_id": "r", "reinforcement": 1.0})
    assert effect == "changed"
    assert after.get("reinforcement") == 1.0
    assert after.get("status") is UNKNOWN and after.get("disputation") is UNKNOWN
    assert after.get("placement") == "view"
    assert after.get("shard") is UNKNOWN


def test_an_event_for_an_archived_entry_is_a_marked_noop() -> None:
    snap = {"id": "r", "text": "t", "reinforcement": 2.0}
    archived, effect = step(
        None,
        "reflection.state_changed",
        {"reflection_id": "r", "to": "archived", "archive_shard_path": SHARDS[0], "entry_snapshot": snap},
    )
    assert effect == "changed" and archived.placement == "archive" and archived.shard == SHARDS[0]
    assert archived.get("text") == "t" and archived.get("text_sha256") == _sha("t")
    after, effect = step(archived, "reflection.evidence_updated", {"reflection_id": "r", "reinforcement": 5.0})
    assert effect == "absent" and after is archived


def test_refused_payloads_change_nothing() -> None:
    start = EntryState({"reinforcement": 1.0}, "view")
    for etype, payload in (
        ("reflection.evidence_updated", [1]),
        ("reflection.state_changed", {"reflection_id": "r", "to": 5}),
        ("reflection.state_changed", {"reflection_id": "r", "to": "archived", "archive_shard_path": "../x.json"}),
        (
            "persona.fact_added",
            {"entity_key": "m", "entry_id": "e", "archive_shard_path": SHARDS[0], "entry_snapshot": {"text": "no id"}},
        ),
    ):
        after, effect = step(start, etype, payload)
        assert (after, effect) == (start, "refused"), (etype, payload)
    assert step(start, "reflection.surfaced", {"reflection_id": "r"}) == (start, "no_handler")
    assert step(start, "persona.fact_added", {"entity_key": "m", "entry_id": "e"}) == (start, "unchanged")


# -- on the fixtures ----------------------------------------------------------------------------------------


def test_healthy_persona_entry_points(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    h = _history(b.path).entry(EntryKey(folders.PERSONA_ENTRY[1], folders.PERSONA_ENTRY[0]))
    assert [p.index for p in h.points] == [2, 4, 5]
    assert [p.effect for p in h.points] == ["changed", "changed", "changed"]
    assert [p.value("reinforcement") for p in h.points] == [1.5, 2.5, 2.5]
    assert h.points[0].value("merged_from_ids") is UNKNOWN
    assert h.points[2].value("merged_from_ids") == [folders.REFLECTION_IDS[1]]
    assert h.points[2].value("text_sha256") == _sha("Master drinks green tea every evening")
    assert h.sentinel_index == 8
    assert h.last_applied is h.points[2] and h.points[2].view_agrees is True
    assert [p.view_agrees for p in h.points[:2]] == [None, None]
    assert h.view.agrees is True


def test_pending_points_carry_the_diagnosis_state(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    h = _history(b.path).entry(EntryKey(folders.REFLECTION_IDS[0]))
    assert [(p.state, p.effect) for p in h.points][-1] == ("pending", "changed")
    assert h.points[-1].value("reinforcement") == 1.9
    assert h.last_applied is not None and h.last_applied.index < h.points[-1].index
    assert h.view.agrees is True  # the view holds the last applied point, not the pending one


def test_a_parked_event_is_never_applied(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    record_park(b.path, ParkRecord(b.ids["tail1"], "", None, None, "", "2026-05-02T09:00:00", "t", "", "test"))
    h = _history(b.path).entry(EntryKey(folders.REFLECTION_IDS[0]))
    last = h.points[-1]
    assert (last.state, last.reason, last.shown_state, last.effect) == ("applied", "parked", "parked", "parked")
    assert last.value("reinforcement") == h.points[-2].value("reinforcement") == 1.2
    assert not last.applied


def test_blocked_merge_changes_nothing(tmp_path: Path) -> None:
    b = folders.persona_drift(tmp_path)
    h = _history(b.path).entry(EntryKey(folders.PERSONA_ENTRY[1], folders.PERSONA_ENTRY[0]))
    blocked = [p for p in h.points if p.state == "blocked"]
    assert len(blocked) == 1 and blocked[0].effect == "blocked" and blocked[0].changed == ()


def _edit_persona(path: Path, **fields: Any) -> None:
    p = path / PERSONA
    data = json.loads(p.read_text("utf-8"))
    data["master"]["facts"][1].update(fields)
    p.write_text(json.dumps(data, indent=2, ensure_ascii=False), "utf-8")


def test_moved_reuses_the_diagnosis_moved_on_finding(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    _edit_persona(b.path, text="Corrected by a correction merge")
    diag = diagnose_character(b.path, now=folders.FIXTURE_NOW)
    [finding] = [f for f in diag.findings if f.code == "view.moved_on"]
    [moved] = JournalHistory(diag).moved()
    assert moved.code == MOVED_CODE == "view.moved_on" and moved.severity == "info"
    assert moved.finding == "view.moved_on" and moved.message == finding.message
    assert moved.point.event_id == finding.event_id
    assert [(d.name, d.after) for d in moved.differences] == [("text_sha256", _sha("Corrected by a correction merge"))]


def test_moved_finds_a_hand_edit_the_diagnosis_does_not(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    p = b.path / REFLECTIONS
    data = json.loads(p.read_text("utf-8"))
    data[0]["reinforcement"] = 7.0  # set by event #0; the entry's last event (#3) does not set it
    p.write_text(json.dumps(data, indent=2, ensure_ascii=False), "utf-8")
    diag = diagnose_character(b.path, now=folders.FIXTURE_NOW)
    assert not [f for f in diag.findings if f.event_id is not None]
    [moved] = JournalHistory(diag).moved()
    assert moved.key == EntryKey(folders.REFLECTION_IDS[0]) and moved.code == "view.moved_on"
    assert moved.finding is None and moved.point.index == 3
    assert [(d.name, d.before, d.after) for d in moved.differences] == [("reinforcement", 1.2, 7.0)]


def test_nothing_moved_in_a_healthy_folder(tmp_path: Path) -> None:
    assert _history(folders.healthy(tmp_path).path).moved() == []


def test_state_at_and_diff(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    h = _history(b.path)
    r1, r2, r3, _ = folders.REFLECTION_IDS
    state = h.state_at(3)
    assert set(state.entries) == {EntryKey(r1), EntryKey(r2), EntryKey(*reversed(folders.PERSONA_ENTRY))}
    assert state.entries[EntryKey(r1)][0] == 3 and state.entries[EntryKey(r1)][1].get("status") == "confirmed"
    diff = h.diff(h.event(b.ids["confirmed"]), h.event(b.ids["archive_reflection"]))
    changed = {e.key.ref: {c.name: (c.before, c.after) for c in e.changes} for e in diff.entries}
    assert r1 not in changed  # nothing touched it in between
    assert changed[r2]["status"] == (UNKNOWN, "merged")
    assert changed[r3]["placement"] == (UNKNOWN, "archive")
    back = h.diff(h.event(b.ids["archive_reflection"]), h.event(b.ids["confirmed"]))
    assert {e.key.ref: {c.name: (c.after, c.before) for c in e.changes} for e in back.entries} == changed


def test_unknown_entry_and_event(tmp_path: Path) -> None:
    h = _history(folders.healthy(tmp_path).path)
    with pytest.raises(HistoryInputError):
        h.entry(EntryKey("ref_nope"))
    with pytest.raises(HistoryInputError):
        h.entry(EntryKey(folders.REFLECTION_IDS[0], "master"))  # a reflection id is not a persona entry
    with pytest.raises(HistoryInputError):
        h.event("no-such-event")
    with pytest.raises(HistoryInputError):
        h.state_at(10_000)


def test_journal_changed_since_the_diagnosis(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    h = _history(b.path)
    journal = b.path / JOURNAL_NAME
    journal.write_bytes(b"\n" + journal.read_bytes())  # every offset moves by one byte
    with pytest.raises(HistoryError, match="changed since it was diagnosed"):
        h.entry(EntryKey(folders.REFLECTION_IDS[0]))
    assert h.state_at(8).entries  # read in order, not by offset: the same events, at the same indices
    journal.write_bytes(journal.read_bytes().split(b"\n", 2)[2])  # the first event is gone
    with pytest.raises(HistoryError, match="changed since it was diagnosed"):
        h.state_at(8)


def test_damaged_journal_lines_are_skipped_like_the_diagnosis(tmp_path: Path) -> None:
    b = folders.glued_torn_line(tmp_path)
    h = _history(b.path)
    state = h.state_at(len(h.diagnosis.events) - 1)
    assert state.entries  # the recovered events are there, at the diagnosis's indices
    for key in state.entries:
        assert h.entry(key).points


def test_history_never_writes(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    _edit_persona(b.path, text="moved")
    before = folders.tree_snapshot(b.path)
    h = _history(b.path)
    h.moved()
    h.diff(0, 8)
    h.entry(EntryKey(folders.REFLECTION_IDS[0]))
    assert folders.tree_snapshot(b.path) == before
