"""EventLog: the write contract of record_and_save and its async twin, fault-tested at every call."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from journal import (
    JOURNAL_NAME,
    SENTINEL_NAME,
    Event,
    EventLog,
    InvalidCharacterError,
    ViewCorruptError,
    check_character_name,
    encode_event,
    fs,
    make_event,
    read_journal,
    read_sentinel,
)
from tests.helpers.fs_hooks import fail_at, fault_hook, recorded

CHAR = "Alice"
VIEW = "reflections.json"
REF_ID = "ref_0123456789abcdef"
E0 = make_event("00000000-0000-4000-8000-000000000000", "reflection.evidence_updated", "2026-04-23T12:00:00", {"n": 0})
E1 = make_event("11111111-1111-4111-8111-111111111111", "reflection.evidence_updated", "2026-04-23T12:00:01", {"n": 1})


def reflections(n: int = 200) -> list[dict[str, Any]]:
    return [
        {"id": f"ref_{i:016x}", "text": f"反思 {i}", "status": "confirmed", "reinforcement": 1.0} for i in range(n)
    ] + [{"id": REF_ID, "text": "Master relaxes with tea", "status": "pending", "reinforcement": 0.5}]


def make_char(
    root: Path,
    *,
    journal: bytes | None = b"",
    sentinel: str | bool | None = False,
    view: list[dict[str, Any]] | None = None,
) -> Path:
    """A character folder: ``journal`` bytes (None: no file), ``sentinel`` id (False: no file)."""
    cd = root / CHAR
    cd.mkdir(parents=True)
    if journal is not None:
        (cd / JOURNAL_NAME).write_bytes(journal)
    if sentinel is not False:
        (cd / SENTINEL_NAME).write_text(json.dumps({"last_applied_event_id": sentinel, "ts": "2026-04-23T12:00:00"}))
    if view is not None:
        fs.atomic_write_json(cd / VIEW, view)
    return cd


def bump(value: float) -> tuple[list[Any], Callable[[list[dict[str, Any]]], None]]:
    """A mutator setting the test reflection's reinforcement; the list records its calls."""
    seen: list[Any] = []

    def mutate(view: list[dict[str, Any]]) -> None:
        seen.append(view)
        for entry in view:
            if entry["id"] == REF_ID:
                entry["reinforcement"] = value

    return seen, mutate


def record(log: EventLog, mutate: Callable[[Any], Any], value: float = 2.4) -> Event:
    return log.record_and_save(
        CHAR,
        "reflection.evidence_updated",
        {"reflection_id": REF_ID, "reinforcement": value, "source": "user_fact"},
        mutate,
        view=VIEW,
    )


def reinforcement(cd: Path) -> float:
    view = json.loads((cd / VIEW).read_bytes())
    return next(e["reinforcement"] for e in view if e["id"] == REF_ID)


def litter(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(fs.TEMP_PREFIX)]


# -- the happy path -----------------------------------------------------------------------------------


def test_record_and_save_appends_then_saves_the_view_then_advances_the_sentinel(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections())
    log = EventLog(tmp_path)
    seen, mutate = bump(2.4)
    with recorded() as calls:
        event = record(log, mutate)
    effects = [(c.op, Path(c.path).name) for c in calls if c.phase == "before"]
    journal_ops = [("open", JOURNAL_NAME), ("write", JOURNAL_NAME), ("fsync", JOURNAL_NAME), ("close", JOURNAL_NAME)]
    assert effects[:4] == journal_ops
    replaced = [name for op, name in effects if op == "replace"]
    assert replaced == [VIEW, SENTINEL_NAME]
    assert len(effects) == 16
    assert len(seen) == 1

    assert reinforcement(cd) == 2.4
    assert [e.event_id for e in read_journal(cd / JOURNAL_NAME).events] == [E0.event_id, event.event_id]
    assert read_sentinel(cd).event_id == event.event_id
    assert event.payload == {"reflection_id": REF_ID, "reinforcement": 2.4, "source": "user_fact"}
    assert litter(tmp_path) == []


def test_the_view_is_saved_like_the_server_writes_it(tmp_path):
    cd = make_char(tmp_path, journal=None, view=reflections(2))
    _, mutate = bump(2.4)
    record(EventLog(tmp_path), mutate)
    data = (cd / VIEW).read_bytes()
    assert data == json.dumps(json.loads(data), indent=2, ensure_ascii=False).encode()
    assert "反思".encode() in data and not data.endswith(b"\n")


def test_a_mutator_may_return_a_replacement_view(tmp_path):
    cd = make_char(tmp_path, journal=None, view=reflections(2))
    record(EventLog(tmp_path), lambda view: [*view, {"id": "ref_new", "reinforcement": 0.0}])
    assert [e["id"] for e in json.loads((cd / VIEW).read_bytes())][-1] == "ref_new"


def test_the_first_write_of_a_new_character_creates_its_folder_durably(tmp_path):
    log = EventLog(tmp_path)
    with recorded() as calls:
        log.record_and_save(
            CHAR, "persona.evidence_updated", {"entity_key": "master"}, lambda v: None, view="persona.json"
        )
    effects = [(c.op, Path(c.path)) for c in calls if c.phase == "before"]
    cd = tmp_path / CHAR
    assert effects[:2] == [("mkdir", cd), ("fsync_dir", tmp_path)]
    # The journal is created: its folder is fsynced right after the journal's own fsync/close.
    assert effects[2:7] == [
        ("open", cd / JOURNAL_NAME),
        ("write", cd / JOURNAL_NAME),
        ("fsync", cd / JOURNAL_NAME),
        ("close", cd / JOURNAL_NAME),
        ("fsync_dir", cd),
    ]
    assert json.loads((cd / "persona.json").read_bytes()) == {}


def test_a_corrupt_view_raises_before_anything_is_written(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id)
    (cd / VIEW).write_bytes(b"[{")
    seen, mutate = bump(2.4)
    with recorded() as calls, pytest.raises(ViewCorruptError):
        record(EventLog(tmp_path), mutate)
    assert calls == []
    assert seen == []
    assert (cd / JOURNAL_NAME).read_bytes() == encode_event(E0)


def test_a_raising_mutator_leaves_the_durable_event_for_replay_and_the_view_alone(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections(3))
    before = (cd / VIEW).read_bytes()

    def explode(view: Any) -> None:
        raise RuntimeError("mutator failed")

    with pytest.raises(RuntimeError, match="mutator failed"):
        record(EventLog(tmp_path), explode)
    events = read_journal(cd / JOURNAL_NAME).events
    assert len(events) == 2 and events[1].payload["reinforcement"] == 2.4
    assert (cd / VIEW).read_bytes() == before
    assert read_sentinel(cd).event_id == E0.event_id


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\\b", "/abs", "a\0b", None, 3])
def test_invalid_character_names_are_refused(tmp_path, name):
    with pytest.raises(InvalidCharacterError):
        check_character_name(name)
    with pytest.raises(InvalidCharacterError):
        EventLog(tmp_path).append(name, "fact.added", {})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["猫娘", "Alice.v2", "..hidden", "a b"])
def test_unicode_and_dotted_character_names_are_folders(tmp_path, name):
    log = EventLog(tmp_path)
    log.append(name, "fact.added", {})
    assert (tmp_path / name / JOURNAL_NAME).is_file()


def test_the_lock_is_one_per_character(tmp_path):
    log = EventLog(tmp_path)
    assert log.lock("A") is log.lock("A")
    assert log.lock("A") is not log.lock("B")


def test_append_alone_moves_neither_view_nor_sentinel(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections(1))
    before = (cd / VIEW).read_bytes()
    event = EventLog(tmp_path).append(CHAR, "fact.added", {"x": 1})
    assert read_journal(cd / JOURNAL_NAME).events[-1].event_id == event.event_id
    assert read_sentinel(cd).event_id == E0.event_id
    assert (cd / VIEW).read_bytes() == before


# -- an injected failure at every filesystem call ---------------------------------------------------------

#: The 16 calls of record_and_save on an existing journal, in order.
CALLS = [
    "journal open", "journal write", "journal fsync", "journal close",
    "view open", "view write", "view fsync", "view close", "view replace", "view fsync_dir",
    "sentinel open", "sentinel write", "sentinel fsync", "sentinel close", "sentinel replace", "sentinel fsync_dir",
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(CALLS)), ids=CALLS)
def test_failure_at_each_call_has_the_write_contract_outcome(tmp_path, index):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections())
    view_before = (cd / VIEW).read_bytes()
    sentinel_before = (cd / SENTINEL_NAME).read_bytes()
    seen, mutate = bump(2.4)

    with fault_hook(fail_at(index)), pytest.raises(OSError, match="injected failure"):
        record(EventLog(tmp_path), mutate)

    step = CALLS[index]
    events = read_journal(cd / JOURNAL_NAME).events
    assert litter(tmp_path) == []
    if step in ("journal open", "journal write"):
        # The append failed: nothing is in the journal, nothing else happened.
        assert (cd / JOURNAL_NAME).read_bytes() == encode_event(E0)
    if step.startswith("journal"):
        # Append or its fsync failed: the view is untouched, on disk and in memory.
        assert seen == []
        assert (cd / VIEW).read_bytes() == view_before
        assert (cd / SENTINEL_NAME).read_bytes() == sentinel_before
        if step == "journal close":  # the fsync succeeded: the event is durable
            assert len(events) == 2
        return
    # The failure came after the append: the event is durable and readable, for replay.
    assert len(seen) == 1
    assert events[0].event_id == E0.event_id
    assert len(events) == 2 and events[1].payload == {
        "reflection_id": REF_ID,
        "reinforcement": 2.4,
        "source": "user_fact",
    }
    view_saved = index >= CALLS.index("view fsync_dir")
    assert reinforcement(cd) == (2.4 if view_saved else 0.5)
    if step == "sentinel fsync_dir":
        assert read_sentinel(cd).event_id == events[1].event_id  # replaced before the failure
    else:
        assert (cd / SENTINEL_NAME).read_bytes() == sentinel_before  # not advanced


def test_the_matrix_covers_every_call(tmp_path):
    make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections())
    with recorded() as calls:
        record(EventLog(tmp_path), bump(2.4)[1])
    effects = [f"{'journal' if c.path.endswith(JOURNAL_NAME) else ''}{c.op}" for c in calls if c.phase == "before"]
    assert len(effects) == len(CALLS)
    assert [c.split()[1] for c in CALLS] == [e.removeprefix("journal") for e in effects]


def test_an_event_left_by_a_failed_save_is_not_orphaned_by_the_next_write(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections())
    log = EventLog(tmp_path)
    with fault_hook(fail_at(CALLS.index("view replace"))), pytest.raises(OSError):
        record(log, bump(2.4)[1])
    record(log, bump(3.0)[1], value=3.0)
    events = read_journal(cd / JOURNAL_NAME).events
    assert len(events) == 3
    assert read_sentinel(cd).event_id == E0.event_id  # the failed event still replays
    assert reinforcement(cd) == 3.0


# -- no silent orphaning ------------------------------------------------------------------------------------


def test_an_unapplied_tail_keeps_the_sentinel_where_it_was(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0) + encode_event(E1), sentinel=E0.event_id, view=reflections(3))
    event = record(EventLog(tmp_path), bump(2.4)[1])
    assert read_sentinel(cd).event_id == E0.event_id
    assert [e.event_id for e in read_journal(cd / JOURNAL_NAME).events] == [E0.event_id, E1.event_id, event.event_id]
    assert reinforcement(cd) == 2.4  # the live write still lands in the view


def test_a_sentinel_at_the_last_event_advances(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0) + encode_event(E1), sentinel=E1.event_id, view=reflections(3))
    log = EventLog(tmp_path)
    first = record(log, bump(2.4)[1])
    assert read_sentinel(cd).event_id == first.event_id
    second = record(log, bump(2.5)[1], value=2.5)
    assert read_sentinel(cd).event_id == second.event_id


@pytest.mark.parametrize("sentinel", [False, None], ids=["missing", "null"])
def test_no_journal_and_no_sentinel_id_advances(tmp_path, sentinel):
    cd = make_char(tmp_path, journal=None, sentinel=sentinel, view=reflections(3))
    event = record(EventLog(tmp_path), bump(2.4)[1])
    assert read_sentinel(cd).event_id == event.event_id


def test_an_empty_or_eventless_journal_with_a_null_sentinel_advances(tmp_path):
    cd = make_char(tmp_path, journal=b"\njunk\n[1]\n", sentinel=None, view=reflections(3))
    event = record(EventLog(tmp_path), bump(2.4)[1])
    assert read_sentinel(cd).event_id == event.event_id


@pytest.mark.parametrize("sentinel", [False, None, "not-in-the-journal"], ids=["missing", "null", "unknown-id"])
def test_events_with_no_sentinel_pointing_at_the_end_are_not_orphaned(tmp_path, sentinel):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=sentinel, view=reflections(3))
    sentinel_before = (cd / SENTINEL_NAME).read_bytes() if sentinel is not False else None
    record(EventLog(tmp_path), bump(2.4)[1])
    after = (cd / SENTINEL_NAME).read_bytes() if (cd / SENTINEL_NAME).exists() else None
    assert after == sentinel_before


def test_a_torn_last_line_does_not_break_advancing(tmp_path):
    torn = encode_event(E1)[:45]
    cd = make_char(tmp_path, journal=encode_event(E0) + torn, sentinel=E0.event_id, view=reflections(3))
    event = record(EventLog(tmp_path), bump(2.4)[1])
    assert read_sentinel(cd).event_id == event.event_id
    result = read_journal(cd / JOURNAL_NAME)
    assert [e.event_id for e in result.events] == [E0.event_id, event.event_id]
    assert [(d.kind, d.line) for d in result.defects] == [("malformed", 2)]  # the fragment, isolated


def test_a_glued_last_line_counts_its_recovered_event(tmp_path):
    glued = encode_event(E1)[:45] + encode_event(E0)
    cd = make_char(tmp_path, journal=glued, sentinel=E0.event_id, view=reflections(3))
    event = record(EventLog(tmp_path), bump(2.4)[1])
    assert read_sentinel(cd).event_id == event.event_id


# -- the async twin -----------------------------------------------------------------------------------------


def test_arecord_and_save_runs_in_a_worker_thread_and_releases_the_lock(tmp_path):
    cd = make_char(tmp_path, journal=None, view=reflections(3))
    log = EventLog(tmp_path)
    lock = log.lock(CHAR)
    seen: dict[str, Any] = {}
    loop_may_run = threading.Event()

    def mutate(view: list[dict[str, Any]]) -> None:
        seen["thread"] = threading.get_ident()
        seen["locked"] = lock.locked()
        # Set by a coroutine on the event loop: it only runs if this block is not on the loop.
        seen["loop_ran"] = loop_may_run.wait(timeout=30)
        view[-1]["reinforcement"] = 9.0

    async def release() -> None:
        loop_may_run.set()

    async def main() -> Event:
        seen["loop_thread"] = threading.get_ident()
        event, _ = await asyncio.gather(
            log.arecord_and_save(CHAR, "reflection.evidence_updated", {"reflection_id": REF_ID}, mutate, view=VIEW),
            release(),
        )
        seen["locked_after"] = lock.locked()
        return event

    event = asyncio.run(main())
    assert seen["thread"] != seen["loop_thread"]
    assert seen["locked"] is True
    assert seen["loop_ran"] is True
    assert seen["locked_after"] is False
    assert not lock.locked()
    assert read_sentinel(cd).event_id == event.event_id
    assert reinforcement(cd) == 9.0


def test_two_concurrent_arecord_and_save_on_one_character_both_land(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections(3))
    log = EventLog(tmp_path)

    def add(entry_id: str) -> Callable[[list[dict[str, Any]]], None]:
        def mutate(view: list[dict[str, Any]]) -> None:
            view.append({"id": entry_id, "reinforcement": 1.0})

        return mutate

    async def main() -> list[Event]:
        return list(
            await asyncio.gather(
                log.arecord_and_save(CHAR, "reflection.evidence_updated", {"reflection_id": "a"}, add("a"), view=VIEW),
                log.arecord_and_save(CHAR, "reflection.evidence_updated", {"reflection_id": "b"}, add("b"), view=VIEW),
            )
        )

    events = asyncio.run(main())
    ids = [e["id"] for e in json.loads((cd / VIEW).read_bytes())]
    assert {"a", "b"} <= set(ids)
    journal = [e.event_id for e in read_journal(cd / JOURNAL_NAME).events]
    assert journal[0] == E0.event_id and set(journal[1:]) == {e.event_id for e in events}
    assert read_sentinel(cd).event_id == journal[-1]
    assert not log.lock(CHAR).locked()


def test_an_async_failure_propagates_and_releases_the_lock(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections(3))
    log = EventLog(tmp_path)

    async def main() -> None:
        await log.arecord_and_save(CHAR, "reflection.evidence_updated", {}, bump(2.4)[1], view=VIEW)

    with fault_hook(fail_at(CALLS.index("journal fsync"))), pytest.raises(OSError, match="injected"):
        asyncio.run(main())
    assert not log.lock(CHAR).locked()
    assert reinforcement(cd) == 0.5
