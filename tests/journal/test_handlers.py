"""The five replay handlers (memory-format §3.5), their registry and their stores.

Every handler test runs against both stores (the real folder and the in-memory overlay): the same
contract, two backends. What :class:`FolderStore` saves is checked byte-for-byte against what the
memory server writes (``json.dumps(indent=2, ensure_ascii=False)``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from journal import fs
from journal.errors import (
    BadShardNameError,
    PayloadError,
    ShardCorruptError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import ALL_EVENT_TYPES, REPLAYABLE_EVENT_TYPES
from journal.handlers import (
    ArchiveTarget,
    HandlerRegistry,
    archive_target,
    block_reason,
    default_registry,
    entry_ref,
    run_handler,
)
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.stores import FolderStore, MemoryStore
from journal.views import PERSONA, REFLECTIONS
from tests.journal._replay_kit import persona_entry, persona_view, reflection, tree_hashes

SHARD = "2026-05-01_0a1b2c3d.json"


def stdlib_view(obj: Any) -> bytes:
    """What the memory server writes."""
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


class Harness:
    """One character folder and a store over it; reads back what the store holds."""

    def __init__(self, root: Path, kind: str) -> None:
        self.root = root
        self.cd = root / "Alice"
        self.cd.mkdir(parents=True)
        self.kind = kind
        self._store: FolderStore | MemoryStore | None = None

    @property
    def store(self) -> FolderStore | MemoryStore:
        if self._store is None:
            self._store = FolderStore(self.cd) if self.kind == "folder" else MemoryStore(self.cd)
        return self._store

    def write(self, name: str, obj: Any) -> None:
        path = self.cd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        fs.atomic_write_json(path, obj)

    def view(self, name: str) -> Any:
        if isinstance(self.store, MemoryStore) and self.store.view(name) is not None:
            return self.store.view(name)
        path = self.cd / name
        return json.loads(path.read_bytes()) if path.exists() else None

    def shard(self, archive: str, basename: str = SHARD) -> Any:
        if isinstance(self.store, MemoryStore) and self.store.shard(archive, basename) is not None:
            return self.store.shard(archive, basename)
        path = self.cd / archive / basename
        return json.loads(path.read_bytes()) if path.exists() else None

    def run(self, event_type: str, payload: Any) -> bool:
        handler = default_registry().get(event_type)
        assert handler is not None
        return run_handler(handler, self.store, payload)


@pytest.fixture(params=["folder", "memory"])
def h(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return Harness(tmp_path, request.param)


@pytest.fixture
def folder(tmp_path: Path) -> Harness:
    return Harness(tmp_path, "folder")


class nothing_written:
    def __init__(self, h: Harness) -> None:
        self.h = h

    def __enter__(self) -> None:
        self.before = tree_hashes(self.h.root)

    def __exit__(self, *exc: object) -> None:
        assert tree_hashes(self.h.root) == self.before
        if isinstance(self.h.store, MemoryStore):
            assert self.h.store.written == set()


# -- registry ------------------------------------------------------------------------------------


def test_registry_rejects_a_name_outside_the_vocabulary() -> None:
    registry = HandlerRegistry()
    with pytest.raises(UnknownEventTypeError, match=r"reflection\.evidence_update"):
        registry.register("reflection.evidence_update", lambda store, payload: False)
    with pytest.raises(UnknownEventTypeError):
        registry.register(None, lambda store, payload: False)  # type: ignore[arg-type]
    assert registry.names() == frozenset()


def test_registry_accepts_any_declared_name_and_a_second_registration_replaces_the_first() -> None:
    registry = HandlerRegistry()

    def first(store: Any, payload: Any) -> bool:
        return False

    def second(store: Any, payload: Any) -> bool:
        return True

    registry.register("fact.added", first)
    registry.register("fact.added", second)
    assert registry.get("fact.added") is second
    assert "fact.added" in registry
    assert registry.get("fact.absorbed") is None
    assert registry.get(None) is None


def test_default_registry_has_exactly_the_five_replayable_types() -> None:
    assert default_registry().names() == REPLAYABLE_EVENT_TYPES
    assert REPLAYABLE_EVENT_TYPES < ALL_EVENT_TYPES


@pytest.mark.parametrize("empty", [None, {}, [], "", 0, False])
def test_an_empty_payload_is_passed_as_an_empty_object(empty: Any, tmp_path: Path) -> None:
    seen: list[Any] = []

    def handler(store: Any, payload: Any) -> bool:
        seen.append(payload)
        return False

    assert run_handler(handler, MemoryStore(tmp_path), empty) is False
    assert seen == [{}]


@pytest.mark.parametrize("bad", [[1], "x", 5, True, 1.5])
def test_a_payload_that_is_not_an_object_raises(bad: Any, tmp_path: Path) -> None:
    with pytest.raises(PayloadError):
        run_handler(lambda store, payload: False, MemoryStore(tmp_path), bad)


def test_block_reason_maps_each_error_to_its_reason() -> None:
    assert block_reason(ViewDriftError("d"))[0] == "view_drift"
    assert block_reason(ViewCorruptError("c"))[0] == "corrupt_view"
    assert block_reason(ShardCorruptError("s"))[0] == "corrupt_shard"
    assert block_reason(BadShardNameError("b"))[0] == "bad_shard_name"
    assert block_reason(ValueError("boom")) == ("handler_error", "ValueError: boom")


# -- (a) reflection.evidence_updated -------------------------------------------------------------


def test_reflection_evidence_copies_only_the_keys_present(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a", reinforcement=1.0, disputation=0.5, sub_zero_days=3)])
    assert h.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 2.5, "source": "user_fact"})
    entry = h.view(REFLECTIONS)[0]
    assert entry["reinforcement"] == 2.5
    assert entry["disputation"] == 0.5 and entry["sub_zero_days"] == 3  # absent keys never cleared
    assert "source" not in entry  # source is informational


def test_reflection_evidence_copies_all_nine_keys_including_throttle_and_sweep(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    payload = {
        "reflection_id": "ref_a",
        "reinforcement": 3.0,
        "disputation": 1.0,
        "rein_last_signal_at": "2026-05-02T00:00:00",
        "disp_last_signal_at": "2026-05-02T00:00:01",
        "sub_zero_days": 4,
        "sub_zero_last_increment_date": "2026-05-02",
        "user_fact_reinforce_count": 7,
        "last_promote_attempt_at": "2026-05-02T00:00:02",
        "promote_attempt_count": 2,
    }
    assert h.run("reflection.evidence_updated", payload)
    entry = h.view(REFLECTIONS)[0]
    copied = {k: v for k, v in payload.items() if k != "reflection_id"}
    assert {k: entry[k] for k in copied} == copied


@pytest.mark.parametrize("payload", [{}, {"reflection_id": ""}, {"reflection_id": None, "reinforcement": 9.0}])
def test_reflection_evidence_without_an_id_changes_nothing(h: Harness, payload: dict[str, Any]) -> None:
    h.write(REFLECTIONS, [reflection("ref_a"), {"text": "an entry without an id"}])
    with nothing_written(h):
        assert h.run("reflection.evidence_updated", payload) is False


def test_reflection_evidence_for_an_unknown_entry_changes_nothing(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h):
        assert h.run("reflection.evidence_updated", {"reflection_id": "ref_zzz", "reinforcement": 9.0}) is False


def test_reflection_evidence_is_idempotent_and_an_equal_value_writes_nothing(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    payload = {"reflection_id": "ref_a", "reinforcement": 4.0, "sub_zero_days": 1}
    assert h.run("reflection.evidence_updated", payload) is True
    after_once = h.view(REFLECTIONS)
    if isinstance(h.store, MemoryStore):
        h.store.written.clear()
    with nothing_written(h):
        assert h.run("reflection.evidence_updated", payload) is False
    assert h.view(REFLECTIONS) == after_once


def test_reflection_evidence_change_detection_is_type_strict(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection("ref_a", reinforcement=1, user_fact_reinforce_count=True)])
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 1.0}) is True
    assert b'"reinforcement": 1.0' in (folder.cd / REFLECTIONS).read_bytes()
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "user_fact_reinforce_count": 1})
    assert folder.view(REFLECTIONS)[0]["user_fact_reinforce_count"] is not True


def test_reflection_evidence_updates_only_the_first_entry_with_the_id(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_a", text="dup")])
    assert h.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 8.0})
    assert [e["reinforcement"] for e in h.view(REFLECTIONS)] == [8.0, 1.0]


def test_reflection_evidence_on_a_missing_view_changes_nothing_and_creates_nothing(h: Harness) -> None:
    with nothing_written(h):
        assert h.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 1.0}) is False
    assert not (h.cd / REFLECTIONS).exists()


@pytest.mark.parametrize("content", [b"{not json", b'{"a": 1}', b'"text"'])
def test_reflection_evidence_raises_on_a_corrupt_or_wrong_typed_view(h: Harness, content: bytes) -> None:
    (h.cd / REFLECTIONS).write_bytes(content)
    with nothing_written(h), pytest.raises(ViewCorruptError):
        h.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 1.0})


# -- (b) persona.evidence_updated ----------------------------------------------------------------


def test_persona_evidence_copies_the_seven_evidence_keys_but_not_the_throttle(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a")))
    payload = {
        "entity_key": "master",
        "entry_id": "prom_a",
        "reinforcement": 3.5,
        "sub_zero_last_increment_date": "2026-05-02",
        "user_fact_reinforce_count": 4,
        "last_promote_attempt_at": "2026-05-02T00:00:00",
        "promote_attempt_count": 3,
        "source": "user_confirm",
    }
    assert h.run("persona.evidence_updated", payload)
    entry = h.view(PERSONA)["master"]["facts"][0]
    assert entry["reinforcement"] == 3.5
    assert entry["sub_zero_last_increment_date"] == "2026-05-02"
    assert entry["user_fact_reinforce_count"] == 4
    assert "last_promote_attempt_at" not in entry and "promote_attempt_count" not in entry and "source" in entry
    assert entry["source"] == "reflection"  # the entry's own source, not the payload's


@pytest.mark.parametrize(
    "payload",
    [
        {"entry_id": "prom_a", "reinforcement": 9.0},
        {"entity_key": "master", "reinforcement": 9.0},
        {"entity_key": "nobody", "entry_id": "prom_a", "reinforcement": 9.0},
        {"entity_key": "broken", "entry_id": "prom_a", "reinforcement": 9.0},
        {"entity_key": "master", "entry_id": "prom_zzz", "reinforcement": 9.0},
    ],
)
def test_persona_evidence_without_a_target_changes_nothing(h: Harness, payload: dict[str, Any]) -> None:
    view = persona_view(persona_entry("prom_a"))
    view["broken"] = ["not", "a", "section"]
    h.write(PERSONA, view)
    with nothing_written(h):
        assert h.run("persona.evidence_updated", payload) is False


def test_persona_evidence_raises_when_the_view_is_not_a_dict(h: Harness) -> None:
    h.write(PERSONA, [persona_entry("prom_a")])
    with nothing_written(h), pytest.raises(ViewCorruptError, match="expected a dict"):
        h.run("persona.evidence_updated", {"entity_key": "master", "entry_id": "prom_a", "reinforcement": 1.0})


# -- (c) persona.entry_updated -------------------------------------------------------------------


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def merge_payload(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "entity_key": "master",
        "entry_id": "prom_a",
        "rewrite_text_sha256": sha(text),
        "reinforcement": 3.0,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-05-03T00:00:00",
        "disp_last_signal_at": "2026-05-03T00:00:00",
        "sub_zero_days": 0,
        "merged_from_ids": ["ref_1", "ref_2"],
        "source": "promote_merge",
        **extra,
    }


def test_entry_updated_on_a_missing_persona_changes_nothing(h: Harness) -> None:
    with nothing_written(h):
        assert h.run("persona.entry_updated", merge_payload("x")) is False
    assert not (h.cd / PERSONA).exists()


def test_entry_updated_copies_evidence_merged_ids_and_event_time_when_the_hash_matches(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="merged text 抹茶")))
    payload = merge_payload("merged text 抹茶", event_when_raw="last spring", event_start_at="2026-03-01T00:00:00")
    assert h.run("persona.entry_updated", payload)
    entry = h.view(PERSONA)["master"]["facts"][0]
    assert entry["merged_from_ids"] == ["ref_1", "ref_2"]
    assert entry["reinforcement"] == 3.0 and entry["disp_last_signal_at"] == "2026-05-03T00:00:00"
    assert entry["event_when_raw"] == "last spring" and entry["event_start_at"] == "2026-03-01T00:00:00"
    assert "event_end_at" not in entry
    assert h.run("persona.entry_updated", payload) is False


def test_entry_updated_drift_raises_naming_the_entry_and_both_hashes(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="old text")))
    payload = merge_payload("new text")
    with nothing_written(h), pytest.raises(ViewDriftError) as info:
        h.run("persona.entry_updated", payload)
    message = str(info.value)
    assert "master/prom_a" in message
    assert sha("old text") in message and sha("new text") in message
    assert block_reason(info.value)[0] == "view_drift"


def test_entry_updated_hashes_a_null_text_as_the_empty_string(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text=None)))
    assert h.run("persona.entry_updated", merge_payload(""))


def test_entry_updated_without_a_hash_does_not_check_the_text(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="anything")))
    payload = merge_payload("other")
    del payload["rewrite_text_sha256"]
    assert h.run("persona.entry_updated", payload)


def test_entry_updated_for_an_unknown_entry_does_not_check_the_hash(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_b", text="old")))
    with nothing_written(h):
        assert h.run("persona.entry_updated", merge_payload("new")) is False


def test_speaker_provenance_replaces_the_four_keys(h: Harness) -> None:
    entry = persona_entry("prom_a", text="t", speaker_id="u1", speaker_trust=0.5, speaker_label="Bob",
                          speaker_provenance_mixed=True)
    h.write(PERSONA, persona_view(entry))
    payload = merge_payload("t", speaker_provenance={"speaker_id": "u2", "speaker_label": "Ann", "other": 1})
    assert h.run("persona.entry_updated", payload)
    got = h.view(PERSONA)["master"]["facts"][0]
    assert got["speaker_id"] == "u2" and got["speaker_label"] == "Ann"
    assert "speaker_trust" not in got and "speaker_provenance_mixed" not in got and "other" not in got
    assert list(got)[-2:] == ["speaker_id", "speaker_label"]  # re-added last, as the server does


@pytest.mark.parametrize("provenance", [None, "u1", ["speaker_id"], {}])
def test_speaker_provenance_that_is_not_a_dict_counts_as_empty_and_clears_the_keys(h: Harness, provenance: Any) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="t", speaker_id="u1", speaker_trust=0.5)))
    payload = {"entity_key": "master", "entry_id": "prom_a", "speaker_provenance": provenance}
    assert h.run("persona.entry_updated", payload)
    got = h.view(PERSONA)["master"]["facts"][0]
    assert not {"speaker_id", "speaker_trust", "speaker_label", "speaker_provenance_mixed"} & set(got)


def test_absent_speaker_provenance_leaves_the_keys_alone(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="t", speaker_id="u1")))
    assert h.run("persona.entry_updated", merge_payload("t"))
    assert h.view(PERSONA)["master"]["facts"][0]["speaker_id"] == "u1"


def test_unchanged_speaker_provenance_is_no_change(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a", text="t", speaker_id="u1", speaker_trust=0.5)))
    with nothing_written(h):
        same = {"speaker_trust": 0.5, "speaker_id": "u1"}
        payload = {"entity_key": "master", "entry_id": "prom_a", "speaker_provenance": same}
        assert h.run("persona.entry_updated", payload) is False


# -- (d) reflection.state_changed, lifecycle -----------------------------------------------------


def test_state_change_sets_status_timestamp_and_absorbed_into(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a", status="confirmed")])
    payload = {"reflection_id": "ref_a", "from": "pending", "to": "merged", "ts": "2026-05-04T00:00:00",
               "absorbed_into": "prom_ref_77", "reason": "ignored for merged"}
    assert h.run("reflection.state_changed", payload)
    entry = h.view(REFLECTIONS)[0]
    assert entry["status"] == "merged"  # `from` is never checked
    assert entry["merged_at"] == "2026-05-04T00:00:00"
    assert entry["absorbed_into"] == "prom_ref_77"
    assert "promote_blocked_reason" not in entry and "denied_reason" not in entry
    assert h.run("reflection.state_changed", payload) is False


def test_state_change_routes_reason_by_target_status(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_b")])
    assert h.run("reflection.state_changed", {"reflection_id": "ref_a", "to": "promote_blocked", "reason": "too many"})
    assert h.run("reflection.state_changed", {"reflection_id": "ref_b", "to": "denied", "reason": "rebutted",
                                              "reject_explanation": "user said no"})
    a, b = h.view(REFLECTIONS)
    assert a["promote_blocked_reason"] == "too many" and "denied_reason" not in a
    assert "promote_blocked_at" not in a  # no ts, no <to>_at
    assert b["denied_reason"] == "rebutted" and b["reject_reason"] == "user said no"
    assert "promote_blocked_reason" not in b


@pytest.mark.parametrize(
    "payload",
    [
        {"to": "promoted"},
        {"reflection_id": "ref_a"},
        {"reflection_id": "ref_a", "to": ""},
        {"reflection_id": "ref_zzz", "to": "promoted"},
    ],
)
def test_state_change_without_a_target_changes_nothing(h: Harness, payload: dict[str, Any]) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h):
        assert h.run("reflection.state_changed", payload) is False


def test_state_change_with_a_non_string_target_status_raises(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h), pytest.raises(PayloadError):
        h.run("reflection.state_changed", {"reflection_id": "ref_a", "to": {"status": "x"}})


# -- (d) reflection.state_changed, archive recovery -------------------------------------------------


def archive_payload(rid: str = "ref_a", shard: Any = SHARD, **snapshot_fields: Any) -> dict[str, Any]:
    snapshot = reflection(rid, status="archived", archived_at="2026-05-01T03:00:00", archive_shard_path=shard,
                          **snapshot_fields)
    return {"reflection_id": rid, "from": "confirmed", "to": "archived", "archive_shard_path": shard,
            "archived_at": "2026-05-01T03:00:00", "entry_snapshot": snapshot}


def test_archive_creates_the_missing_shard_and_removes_the_entry(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_b")])
    payload = archive_payload()
    assert h.run("reflection.state_changed", payload)
    assert [e["id"] for e in h.view(REFLECTIONS)] == ["ref_b"]
    assert h.shard(REFLECTION_ARCHIVE) == [payload["entry_snapshot"]]
    assert h.run("reflection.state_changed", payload) is False


def test_archive_appends_to_an_existing_shard_once(h: Harness) -> None:
    h.write(f"{REFLECTION_ARCHIVE}/{SHARD}", [{"id": "ref_old"}])
    h.write(REFLECTIONS, [reflection("ref_a")])
    assert h.run("reflection.state_changed", archive_payload())
    assert [e["id"] for e in h.shard(REFLECTION_ARCHIVE)] == ["ref_old", "ref_a"]
    assert h.run("reflection.state_changed", archive_payload()) is False
    assert [e["id"] for e in h.shard(REFLECTION_ARCHIVE)] == ["ref_old", "ref_a"]


def test_archive_with_the_entry_already_in_the_shard_only_removes_it_from_the_view(h: Harness) -> None:
    h.write(f"{REFLECTION_ARCHIVE}/{SHARD}", [{"id": "ref_a", "text": "as archived"}])
    h.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_a", text="duplicate")])
    assert h.run("reflection.state_changed", archive_payload())
    assert h.view(REFLECTIONS) == []
    assert h.shard(REFLECTION_ARCHIVE) == [{"id": "ref_a", "text": "as archived"}]


def test_early_schema_archive_without_snapshot_only_removes_the_entry(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    payload = archive_payload()
    del payload["entry_snapshot"]
    assert h.run("reflection.state_changed", payload)
    assert h.view(REFLECTIONS) == [] and h.shard(REFLECTION_ARCHIVE) is None


def test_archive_on_a_missing_view_still_heals_the_shard(h: Harness) -> None:
    assert h.run("reflection.state_changed", archive_payload())
    assert [e["id"] for e in h.shard(REFLECTION_ARCHIVE)] == ["ref_a"]
    assert not (h.cd / REFLECTIONS).exists()


@pytest.mark.parametrize("content", [b"not json", b'{"id": "x"}', b""])
def test_archive_into_a_corrupt_shard_raises_and_writes_nothing(h: Harness, content: bytes) -> None:
    (h.cd / REFLECTION_ARCHIVE).mkdir()
    (h.cd / REFLECTION_ARCHIVE / SHARD).write_bytes(content)
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h), pytest.raises(ShardCorruptError) as info:
        h.run("reflection.state_changed", archive_payload())
    assert block_reason(info.value)[0] == "corrupt_shard"
    assert [e["id"] for e in h.view(REFLECTIONS)] == ["ref_a"]  # the only copy stays in the view


HOSTILE = [
    "../2026-05-01_0a1b2c3d.json",
    "../../outside/2026-05-01_0a1b2c3d.json",
    "/tmp/2026-05-01_0a1b2c3d.json",
    "2026-05-01_0A1B2C3D.json",
    "sub/2026-05-01_0a1b2c3d.json",
    "2026-05-01_0a1b2c3d.json/..",
    "２０２６-05-01_0a1b2c3d.json",
    "2026-05-01_0a1b2c3d.json\x00.txt",
    "..",
    "reflections.json",
    5,
    ["2026-05-01_0a1b2c3d.json"],
]


@pytest.mark.parametrize("basename", HOSTILE, ids=repr)
def test_a_hostile_shard_basename_raises_and_writes_nothing_anywhere(h: Harness, basename: Any) -> None:
    (h.root / "outside").mkdir()
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h), pytest.raises(BadShardNameError) as info:
        h.run("reflection.state_changed", archive_payload(shard=basename))
    assert block_reason(info.value)[0] == "bad_shard_name"


@pytest.mark.parametrize("basename", HOSTILE[:4], ids=repr)
def test_a_hostile_basename_raises_even_without_a_snapshot(h: Harness, basename: Any) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    payload = archive_payload(shard=basename)
    del payload["entry_snapshot"]
    with nothing_written(h), pytest.raises(BadShardNameError):
        h.run("reflection.state_changed", payload)


def test_a_snapshot_without_an_id_pauses_instead_of_archiving_it_unfindably(h: Harness) -> None:
    h.write(REFLECTIONS, [reflection("ref_a")])
    payload = archive_payload()
    del payload["entry_snapshot"]["id"]
    with nothing_written(h), pytest.raises(PayloadError):
        h.run("reflection.state_changed", payload)


# -- (e) persona.fact_added ----------------------------------------------------------------------


def persona_archive_payload(eid: str = "prom_a", **overrides: Any) -> dict[str, Any]:
    snapshot = persona_entry(eid, archived_at="2026-05-01T03:00:00.4", archive_shard_path=SHARD)
    payload = {"entity_key": "master", "entry_id": eid, "archive_shard_path": SHARD,
               "archived_at": "2026-05-01T03:00:00.4", "text": snapshot["text"], "source": "reflection",
               "entry_snapshot": snapshot}
    payload.update(overrides)
    return payload


def test_fact_added_without_a_shard_path_is_a_handled_no_op(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a")))
    with nothing_written(h):
        assert h.run("persona.fact_added", {"entity_key": "master", "entry_id": "prom_a", "text": "x"}) is False
        empty_path = {"entity_key": "master", "entry_id": "prom_a", "archive_shard_path": ""}
        assert h.run("persona.fact_added", empty_path) is False


def test_fact_added_heals_the_shard_and_removes_the_entry(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a"), persona_entry("prom_b")))
    payload = persona_archive_payload()
    assert h.run("persona.fact_added", payload)
    assert [e["id"] for e in h.view(PERSONA)["master"]["facts"]] == ["prom_b"]
    assert h.shard(PERSONA_ARCHIVE) == [payload["entry_snapshot"]]
    assert h.run("persona.fact_added", payload) is False


@pytest.mark.parametrize("missing", ["entity_key", "entry_id"])
def test_fact_added_without_an_id_changes_nothing_and_keeps_id_less_entries(h: Harness, missing: str) -> None:
    # Regression: comparing ``e.get("id") == None`` used to remove every entry without an id.
    h.write(PERSONA, persona_view({"text": "an entry without an id"}, persona_entry("prom_a")))
    payload = persona_archive_payload()
    del payload[missing]
    with nothing_written(h):
        assert h.run("persona.fact_added", payload) is False


def test_fact_added_with_a_missing_section_or_view_returns_the_shard_step(h: Harness) -> None:
    assert h.run("persona.fact_added", persona_archive_payload()) is True  # no persona.json: shard healed
    assert not (h.cd / PERSONA).exists()
    h.write(PERSONA, {"neko": {"facts": []}})
    assert h.run("persona.fact_added", persona_archive_payload()) is False  # shard already has it


def test_fact_added_into_a_corrupt_shard_raises_and_keeps_the_entry(h: Harness) -> None:
    (h.cd / PERSONA_ARCHIVE).mkdir()
    (h.cd / PERSONA_ARCHIVE / SHARD).write_bytes(b"[{broken")
    h.write(PERSONA, persona_view(persona_entry("prom_a")))
    with nothing_written(h), pytest.raises(ShardCorruptError):
        h.run("persona.fact_added", persona_archive_payload())


def test_fact_added_with_a_hostile_basename_raises(h: Harness) -> None:
    h.write(PERSONA, persona_view(persona_entry("prom_a")))
    with nothing_written(h), pytest.raises(BadShardNameError):
        h.run("persona.fact_added", persona_archive_payload(archive_shard_path="../../x.json"))


def test_fact_added_raises_on_a_corrupt_persona(h: Harness) -> None:
    (h.cd / PERSONA).write_bytes(b"{oops")
    (h.cd / PERSONA_ARCHIVE).mkdir()
    h.write(f"{PERSONA_ARCHIVE}/{SHARD}", [persona_entry("prom_a")])
    with pytest.raises(ViewCorruptError):
        h.run("persona.fact_added", persona_archive_payload())


# -- confinement: nothing outside the character folder -----------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "elsewhere"
    out.mkdir()
    (out / SHARD).write_text("[]")
    return out


def test_a_symlinked_shard_folder_pointing_outside_is_refused(h: Harness, outside: Path) -> None:
    os.symlink(outside, h.cd / REFLECTION_ARCHIVE)
    h.write(REFLECTIONS, [reflection("ref_a")])
    with nothing_written(h), pytest.raises(ShardCorruptError, match="outside the character folder"):
        h.run("reflection.state_changed", archive_payload())
    assert (outside / SHARD).read_text() == "[]"
    assert os.listdir(outside) == [SHARD]


def test_a_symlinked_shard_file_pointing_outside_is_refused(h: Harness, outside: Path) -> None:
    (h.cd / PERSONA_ARCHIVE).mkdir()
    os.symlink(outside / SHARD, h.cd / PERSONA_ARCHIVE / SHARD)
    h.write(PERSONA, persona_view(persona_entry("prom_a")))
    with nothing_written(h), pytest.raises(ShardCorruptError, match="outside"):
        h.run("persona.fact_added", persona_archive_payload())


def test_a_symlinked_view_pointing_outside_is_refused(h: Harness, outside: Path) -> None:
    fs.atomic_write_json(outside / REFLECTIONS, [reflection("ref_a")])
    os.symlink(outside / REFLECTIONS, h.cd / REFLECTIONS)
    with nothing_written(h), pytest.raises(ViewCorruptError, match="outside"):
        h.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 9.0})


def test_a_symlink_inside_the_character_folder_is_followed(h: Harness) -> None:
    (h.cd / "real_archive").mkdir()
    os.symlink("real_archive", h.cd / REFLECTION_ARCHIVE)
    h.write(REFLECTIONS, [reflection("ref_a")])
    assert h.run("reflection.state_changed", archive_payload())
    if isinstance(h.store, FolderStore):
        assert [e["id"] for e in json.loads((h.cd / "real_archive" / SHARD).read_text())] == ["ref_a"]


def test_a_symlinked_character_folder_is_the_folder_it_was_given(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "Alice")
    store = FolderStore(tmp_path / "Alice")
    fs.atomic_write_json(real / REFLECTIONS, [reflection("ref_a")])
    assert run_handler(default_registry().get("reflection.state_changed"), store, archive_payload())  # type: ignore[arg-type]
    assert (real / REFLECTION_ARCHIVE / SHARD).exists()


# -- FolderStore: every load reads the file, every save is exact --------------------------------------


def test_a_view_rewritten_by_another_writer_is_read_again(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_b")])
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 5.0})
    # Another writer saves the view between two events of the same round.
    fs.atomic_write_json(folder.cd / REFLECTIONS, [reflection("ref_a", reinforcement=6.0), reflection("ref_c")])
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_c", "reinforcement": 7.0})
    got = folder.view(REFLECTIONS)
    assert [(e["id"], e["reinforcement"]) for e in got] == [("ref_a", 6.0), ("ref_c", 7.0)]


def test_a_failed_save_is_not_taken_for_done(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection("ref_a")])

    def fail_replace(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before":
            raise OSError(28, "injected ENOSPC")

    previous = fs.set_fault_hook(fail_replace)
    try:
        with pytest.raises(OSError):
            folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 5.0})
    finally:
        fs.set_fault_hook(previous)
    assert folder.view(REFLECTIONS)[0]["reinforcement"] == 1.0
    # The same store must not believe the failed change is on disk.
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 5.0}) is True
    assert folder.view(REFLECTIONS)[0]["reinforcement"] == 5.0


def test_a_change_to_a_loaded_view_that_was_not_saved_is_not_loaded_again(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection("ref_a")])
    store = folder.store
    assert isinstance(store, FolderStore)
    view = store.load_view(REFLECTIONS, list)
    view[0]["reinforcement"] = 42.0
    assert store.load_view(REFLECTIONS, list)[0]["reinforcement"] == 1.0


def test_a_handler_that_changes_entries_in_place_is_saved_exactly(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection("ref_a"), reflection("ref_b")])
    registry = default_registry()
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_a", "reinforcement": 5.0})

    def sloppy(store: Any, payload: dict[str, Any]) -> bool:
        view = store.load_view(REFLECTIONS, list)
        view[1]["text"] = "changed in place"
        view.append({"id": "ref_new"})
        store.save_view(REFLECTIONS, view)
        return True

    registry.register("fact.added", sloppy)
    assert run_handler(sloppy, folder.store, {})
    assert folder.run("reflection.evidence_updated", {"reflection_id": "ref_b", "reinforcement": 2.0})
    got = folder.view(REFLECTIONS)
    assert got[1]["text"] == "changed in place" and got[2] == {"id": "ref_new"}
    assert (folder.cd / REFLECTIONS).read_bytes() == stdlib_view(got)


def test_many_handler_steps_stay_byte_identical_to_json_dumps(folder: Harness) -> None:
    folder.write(REFLECTIONS, [reflection(f"ref_{i}") for i in range(20)])
    folder.write(PERSONA, persona_view(*[persona_entry(f"prom_{i}", text=f"t{i}") for i in range(10)]))
    for step in range(60):
        i = step % 20
        folder.run("reflection.evidence_updated", {"reflection_id": f"ref_{i}", "reinforcement": step * 0.1})
        folder.run("persona.evidence_updated", {"entity_key": "master", "entry_id": f"prom_{step % 10}",
                                                "reinforcement": float(step), "sub_zero_days": step})
        if step % 7 == 0:
            folder.run("reflection.state_changed", {"reflection_id": f"ref_{i}", "to": "promoted", "ts": f"t{step}"})
        if step == 30:
            folder.run("reflection.state_changed", archive_payload(rid="ref_3"))
            folder.run("persona.fact_added", persona_archive_payload(eid="prom_4"))
    for name in (REFLECTIONS, PERSONA):
        data = (folder.cd / name).read_bytes()
        assert data == stdlib_view(json.loads(data))


# -- what an event touches -------------------------------------------------------------------------


def test_entry_ref_names_the_entry_an_event_touches() -> None:
    assert entry_ref("reflection.evidence_updated", {"reflection_id": "ref_a"}) == "ref_a"
    assert entry_ref("persona.entry_updated", {"entity_key": "master", "entry_id": "prom_a"}) == "master/prom_a"
    assert entry_ref("persona.fact_added", {"entity_key": "master"}) is None
    assert entry_ref("reflection.state_changed", [1]) is None
    assert entry_ref("correction.queued", {"reflection_id": "ref_a"}) is None


def test_archive_target_of_archive_events() -> None:
    assert archive_target("reflection.state_changed", archive_payload()) == ArchiveTarget(
        REFLECTION_ARCHIVE, SHARD, "ref_a", REFLECTIONS
    )
    assert archive_target("persona.fact_added", persona_archive_payload()) == ArchiveTarget(
        PERSONA_ARCHIVE, SHARD, "prom_a", PERSONA, "master"
    )
    assert archive_target("reflection.state_changed", {**archive_payload(), "to": "promoted"}) is None
    assert archive_target("persona.fact_added", {**persona_archive_payload(), "archive_shard_path": ""}) is None
    no_snapshot = persona_archive_payload()
    del no_snapshot["entry_snapshot"]
    assert archive_target("persona.fact_added", no_snapshot) is None
