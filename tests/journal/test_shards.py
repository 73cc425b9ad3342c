"""Archive shards: naming, choosing, idempotent append, hostile names, and the archive operations."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from journal import (
    ARCHIVE_FILE_MAX_ENTRIES,
    JOURNAL_NAME,
    PERSONA_ARCHIVE,
    REFLECTION_ARCHIVE,
    SENTINEL_NAME,
    BadShardNameError,
    EventLog,
    ShardCorruptError,
    append_entries,
    choose_shard,
    fs,
    is_shard_name,
    read_journal,
    read_sentinel,
    validate_shard_name,
)
from journal.shards import ensure_shard, list_shards, load_shard
from tests.helpers.fs_hooks import fault_hook, recorded

DAY = date(2026, 5, 1)
CHAR = "Alice"


def snapshot(folder: Path) -> dict[str, str]:
    """Every path below ``folder`` (folders included) with a hash of each file's bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
    return out


def put(folder: Path, name: str, data: bytes | list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


def entries(n: int, prefix: str = "e") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i}", "text": f"entry {i}"} for i in range(n)]


# -- names ---------------------------------------------------------------------------------------------

HOSTILE = [
    "../x.json",
    "/etc/passwd",
    "a/b.json",
    "2026-01-01_ABCDEF12.json",
    "２０２６-01-01_0a1b2c3d.json",
    "2026-01-01_0a1b2c3d.json\n",
    "2026-01-01_0a1b2c3d.json/",
    "../2026-01-01_0a1b2c3d.json",
    "2026-01-01_0a1b2c3d.json\x00",
    "2026-01-01_0a1b2c3d.JSON",
    "2026-01-01_0a1b2c3.json",
    "2026-1-01_0a1b2c3d.json",
    "",
    ".",
    None,
    42,
    b"2026-01-01_0a1b2c3d.json",
    ["2026-01-01_0a1b2c3d.json"],
]


@pytest.mark.parametrize("name", ["2026-01-01_0a1b2c3d.json", "1999-12-31_00000000.json", "2026-05-01_ffffffff.json"])
def test_valid_shard_names(name):
    assert is_shard_name(name)
    assert validate_shard_name(name) == name


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_invalid_shard_names(name):
    assert not is_shard_name(name)
    with pytest.raises(BadShardNameError):
        validate_shard_name(name)


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_hostile_names_raise_and_write_nothing_anywhere(tmp_path, name):
    root = tmp_path / "root"
    archive = root / CHAR / REFLECTION_ARCHIVE
    put(archive, "2026-01-01_0a1b2c3d.json", entries(1))
    (root / CHAR / "x.json").write_bytes(b"[]")
    before = snapshot(tmp_path)

    # A guard: if validation ever broke, no effect may leave tmp_path (think "/etc/passwd").
    escaped: list[fs.FsCall] = []

    def guard(call: fs.FsCall) -> None:
        escaped.append(call)
        raise OSError(errno.EPERM, "test guard: no filesystem effect expected", call.path)

    with fault_hook(guard):
        with pytest.raises(BadShardNameError):
            append_entries(archive, name, entries(2, "new"))
        with pytest.raises(BadShardNameError):
            ensure_shard(archive, name)
        with pytest.raises(BadShardNameError):
            append_entries(tmp_path / "fresh" / PERSONA_ARCHIVE, name, entries(1))
    assert escaped == []
    assert snapshot(tmp_path) == before


# -- choosing a shard --------------------------------------------------------------------------------


def test_choose_in_a_missing_folder_makes_a_new_name_of_today_without_creating_it(tmp_path):
    archive = tmp_path / REFLECTION_ARCHIVE
    name = choose_shard(archive, DAY)
    assert is_shard_name(name) and name.startswith("2026-05-01_")
    assert not archive.exists()
    assert choose_shard(archive, DAY) != name  # a fresh uuid8 each time


def test_choose_uses_the_local_date_today_by_default(tmp_path):
    assert choose_shard(tmp_path).startswith(date.today().isoformat() + "_")


def test_choose_picks_the_first_of_todays_shards_with_room_in_lexical_order(tmp_path):
    put(tmp_path, "2026-05-01_00000000.json", entries(ARCHIVE_FILE_MAX_ENTRIES))
    put(tmp_path, "2026-05-01_22222222.json", [])
    put(tmp_path, "2026-05-01_11111111.json", entries(ARCHIVE_FILE_MAX_ENTRIES - 1))
    assert choose_shard(tmp_path, DAY) == "2026-05-01_11111111.json"


def test_choose_treats_a_corrupt_shard_as_full_and_never_touches_it(tmp_path):
    bad_json = put(tmp_path, "2026-05-01_00000000.json", b"[{")
    not_list = put(tmp_path, "2026-05-01_11111111.json", {"id": "x"})
    put(tmp_path, "2026-05-01_22222222.json", entries(3))
    before = snapshot(tmp_path)
    assert choose_shard(tmp_path, DAY) == "2026-05-01_22222222.json"
    assert snapshot(tmp_path) == before
    with pytest.raises(ShardCorruptError):
        append_entries(tmp_path, bad_json.name, entries(1))
    with pytest.raises(ShardCorruptError):
        append_entries(tmp_path, not_list.name, entries(1))
    assert snapshot(tmp_path) == before


def test_choose_ignores_other_days_and_names_outside_the_pattern(tmp_path):
    put(tmp_path, "2026-04-30_00000000.json", [])
    put(tmp_path, "2026-05-01_ABCDEF12.json", [])
    put(tmp_path, "2026-05-01_0000000.json", [])
    name = choose_shard(tmp_path, DAY)
    assert name.startswith("2026-05-01_") and name not in os.listdir(tmp_path)
    assert list_shards(tmp_path) == ["2026-04-30_00000000.json"]


def test_choose_makes_a_new_name_when_all_of_todays_shards_are_full(tmp_path):
    put(tmp_path, "2026-05-01_00000000.json", entries(ARCHIVE_FILE_MAX_ENTRIES))
    put(tmp_path, "2026-05-01_11111111.json", b"not json")
    name = choose_shard(tmp_path, DAY)
    assert name.startswith("2026-05-01_") and name not in os.listdir(tmp_path)


def test_a_new_name_colliding_with_an_existing_shard_is_rerolled(tmp_path, monkeypatch):
    put(tmp_path, "2026-05-01_aaaaaaaa.json", entries(ARCHIVE_FILE_MAX_ENTRIES))
    rolls = iter([uuid.UUID("aaaaaaaa-0000-4000-8000-000000000000"), uuid.UUID("bbbbbbbb-0000-4000-8000-000000000000")])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(rolls))
    assert choose_shard(tmp_path, DAY) == "2026-05-01_bbbbbbbb.json"


# -- creating and appending ------------------------------------------------------------------------------


def test_ensure_shard_creates_an_empty_list_and_its_folder(tmp_path):
    archive = tmp_path / "c" / REFLECTION_ARCHIVE
    assert ensure_shard(archive, "2026-05-01_0a1b2c3d.json") is True
    assert (archive / "2026-05-01_0a1b2c3d.json").read_bytes() == b"[]"
    put(archive, "2026-05-01_11111111.json", entries(2))
    before = snapshot(tmp_path)
    assert ensure_shard(archive, "2026-05-01_11111111.json") is False
    assert ensure_shard(archive, "2026-05-01_0a1b2c3d.json") is False
    assert snapshot(tmp_path) == before


def test_append_entries_is_idempotent_by_id(tmp_path):
    name = "2026-05-01_0a1b2c3d.json"
    a, b, c = entries(3)
    assert append_entries(tmp_path, name, [a, b]) is True
    assert append_entries(tmp_path, name, [b, c]) is True
    with recorded() as calls:
        assert append_entries(tmp_path, name, [a, c, b]) is False
    assert calls == []  # nothing new: nothing written
    assert json.loads((tmp_path / name).read_bytes()) == [a, b, c]
    assert [e["id"] for e in load_shard(tmp_path / name) or []] == ["e0", "e1", "e2"]


def test_append_entries_writes_the_shard_atomically_like_a_view(tmp_path):
    name = "2026-05-01_0a1b2c3d.json"
    with recorded() as calls:
        append_entries(tmp_path, name, [{"id": "x", "text": "猫"}])
    assert [c.op for c in calls if c.phase == "before"][-2:] == ["replace", "fsync_dir"]
    assert (tmp_path / name).read_bytes() == '[\n  {\n    "id": "x",\n    "text": "猫"\n  }\n]'.encode()


def test_append_entries_with_nothing_creates_the_missing_shard(tmp_path):
    assert append_entries(tmp_path / "new", "2026-05-01_0a1b2c3d.json", []) is True
    assert (tmp_path / "new" / "2026-05-01_0a1b2c3d.json").read_bytes() == b"[]"


def test_append_entries_copies_its_input(tmp_path):
    entry = {"id": "x"}
    append_entries(tmp_path, "2026-05-01_0a1b2c3d.json", [entry])
    assert entry == {"id": "x"}


# -- archive_reflection / archive_persona_entry ---------------------------------------------------------------


def reflection_root(tmp_path: Path, n: int = 5) -> tuple[EventLog, Path]:
    cd = tmp_path / CHAR
    cd.mkdir()
    view = [{"id": f"ref_{i:016x}", "text": f"反思 {i}", "status": "promoted"} for i in range(n)]
    fs.atomic_write_json(cd / "reflections.json", view)
    return EventLog(tmp_path), cd


def test_archive_reflection_moves_the_entry_to_one_shard_and_records_the_event(tmp_path):
    log, cd = reflection_root(tmp_path)
    with recorded() as calls:
        event = log.archive_reflection(CHAR, "ref_0000000000000002", today=DAY)
    assert event is not None
    archive = cd / REFLECTION_ARCHIVE
    [name] = list_shards(archive)
    assert name.startswith("2026-05-01_")

    view = json.loads((cd / "reflections.json").read_bytes())
    assert "ref_0000000000000002" not in [e["id"] for e in view] and len(view) == 4
    shard = json.loads((archive / name).read_bytes())
    assert len(shard) == 1
    assert shard[0]["id"] == "ref_0000000000000002" and shard[0]["text"] == "反思 2"
    assert shard[0]["status"] == "archived" and shard[0]["archive_shard_path"] == name
    assert shard[0]["archived_at"] == event.payload["archived_at"]

    assert event.type == "reflection.state_changed"
    assert event.payload["to"] == "archived" and event.payload["from"] == "promoted"
    assert event.payload["archive_shard_path"] == name
    assert event.payload["entry_snapshot"] == shard[0]
    assert read_journal(cd / JOURNAL_NAME).events[-1].payload == event.payload
    assert read_sentinel(cd).event_id == event.event_id

    # Order: the shard exists ([]) before the event; the sentinel is the last atomic write, after the shard's.
    effects = [(c.op, Path(c.path).name) for c in calls if c.phase == "before" and c.op in ("replace", "write")]
    replaced = [n for op, n in effects if op == "replace"]
    assert replaced == [name, "reflections.json", name, SENTINEL_NAME]
    first_journal_write = next(i for i, c in enumerate(calls) if c.op == "write" and c.path.endswith(JOURNAL_NAME))
    first_replace = next(i for i, c in enumerate(calls) if c.op == "replace")
    assert first_replace < first_journal_write


def test_archiving_a_missing_reflection_does_nothing(tmp_path):
    log, _ = reflection_root(tmp_path)
    before = snapshot(tmp_path)
    assert log.archive_reflection(CHAR, "ref_nope", today=DAY) is None
    assert snapshot(tmp_path) == before


def test_archiving_fills_todays_shard_with_room(tmp_path):
    log, cd = reflection_root(tmp_path)
    put(cd / REFLECTION_ARCHIVE, "2026-05-01_00000000.json", entries(ARCHIVE_FILE_MAX_ENTRIES))
    put(cd / REFLECTION_ARCHIVE, "2026-05-01_11111111.json", entries(2))
    log.archive_reflection(CHAR, "ref_0000000000000000", today=DAY)
    log.archive_reflection(CHAR, "ref_0000000000000001", today=DAY)
    shard = json.loads((cd / REFLECTION_ARCHIVE / "2026-05-01_11111111.json").read_bytes())
    assert [e["id"] for e in shard] == ["e0", "e1", "ref_0000000000000000", "ref_0000000000000001"]
    assert len(list_shards(cd / REFLECTION_ARCHIVE)) == 2


def test_a_failed_shard_append_leaves_the_sentinel_behind_and_the_snapshot_recovers_it(tmp_path):
    log, cd = reflection_root(tmp_path)
    sentinel_before = read_sentinel(cd)
    replaces = [0]

    def hook(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before":
            replaces[0] += 1
            if replaces[0] == 3:  # the shard append (after the [] create and the view save)
                raise OSError(errno.EIO, "injected shard failure", call.path)

    with fault_hook(hook), pytest.raises(OSError, match="injected shard failure"):
        log.archive_reflection(CHAR, "ref_0000000000000003", today=DAY)

    view = json.loads((cd / "reflections.json").read_bytes())
    assert "ref_0000000000000003" not in [e["id"] for e in view]
    [name] = list_shards(cd / REFLECTION_ARCHIVE)
    assert json.loads((cd / REFLECTION_ARCHIVE / name).read_bytes()) == []
    assert read_sentinel(cd) == sentinel_before  # not advanced: the event will replay
    [event] = read_journal(cd / JOURNAL_NAME).events
    payload = event.payload
    assert payload["entry_snapshot"]["id"] == "ref_0000000000000003"

    # Replay's shard step is idempotent: the entry lands exactly once, however often it runs.
    for _ in range(2):
        append_entries(cd / REFLECTION_ARCHIVE, payload["archive_shard_path"], [payload["entry_snapshot"]])
    shard = json.loads((cd / REFLECTION_ARCHIVE / name).read_bytes())
    assert [e["id"] for e in shard] == ["ref_0000000000000003"]


def persona_root(tmp_path: Path) -> tuple[EventLog, Path]:
    cd = tmp_path / CHAR
    cd.mkdir()
    persona = {
        "master": {
            "facts": [
                {"id": "card_1a2b3c4d", "text": "Name: Alice", "source": "character_card", "protected": True},
                {"id": "prom_ref_77", "text": "Master drinks green tea", "source": "reflection", "protected": False},
                {"id": "manual_1", "text": "猫が好き", "source": "manual"},
            ]
        },
        "neko": {"facts": []},
    }
    fs.atomic_write_json(cd / "persona.json", persona)
    return EventLog(tmp_path), cd


def test_archive_persona_entry_moves_the_entry_and_commits_the_sentinel_last(tmp_path):
    log, cd = persona_root(tmp_path)
    with recorded() as calls:
        event = log.archive_persona_entry(CHAR, "master", "prom_ref_77", today=DAY)
    assert event is not None and event.type == "persona.fact_added"
    [name] = list_shards(cd / PERSONA_ARCHIVE)
    persona = json.loads((cd / "persona.json").read_bytes())
    assert [e["id"] for e in persona["master"]["facts"]] == ["card_1a2b3c4d", "manual_1"]
    shard = json.loads((cd / PERSONA_ARCHIVE / name).read_bytes())
    assert [e["id"] for e in shard] == ["prom_ref_77"]
    assert shard[0]["archive_shard_path"] == name and "status" not in shard[0]
    assert event.payload == {
        "entity_key": "master",
        "entry_id": "prom_ref_77",
        "archive_shard_path": name,
        "archived_at": shard[0]["archived_at"],
        "text": "Master drinks green tea",
        "source": "reflection",
        "entry_snapshot": shard[0],
    }
    replaced = [Path(c.path).name for c in calls if c.op == "replace" and c.phase == "before"]
    assert replaced == [name, "persona.json", name, SENTINEL_NAME]
    assert read_sentinel(cd).event_id == event.event_id


@pytest.mark.parametrize(
    ("entity", "entry_id"),
    [("master", "card_1a2b3c4d"), ("master", "nope"), ("nobody", "prom_ref_77"), ("neko", "prom_ref_77")],
    ids=["protected", "missing-entry", "missing-section", "other-section"],
)
def test_archive_persona_entry_refuses_protected_or_missing_entries_without_writing(tmp_path, entity, entry_id):
    log, _ = persona_root(tmp_path)
    before = snapshot(tmp_path)
    assert log.archive_persona_entry(CHAR, entity, entry_id, today=DAY) is None
    assert snapshot(tmp_path) == before
