"""Builders for the window's tests: journals written through ``journal``'s own writers, and
hand-made diagnoses of them for tests that exercise the timeline rather than the diagnosis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from journal import EventLog, read_journal, read_sentinel
from journal.diagnosis import CharacterDiagnosis, EventInfo, EventList, JournalStats, SentinelInfo
from journal.events import entry_ref
from journal.fixtures.seed import EVIDENCE_MARKER
from journal.servermigrations import MARKER_SECTION
from journal.views import PERSONA, REFLECTIONS

TEXT = "Master drinks green tea every evening"


def reflection(i: int) -> dict[str, Any]:
    return {"id": f"ref_{i:016x}", "text": f"{TEXT} #{i}", "status": "pending", "reinforcement": 0.0}


def write_character(root: Path, name: str = "alice", *, applied: int = 5, pending: int = 0) -> Path:
    """A character folder: ``applied`` evidence events written with ``record_and_save`` (sentinel at
    the end), then ``pending`` events appended without applying them."""
    char_dir = root / name
    char_dir.mkdir(parents=True, exist_ok=True)
    (char_dir / REFLECTIONS).write_text(json.dumps([reflection(i) for i in range(4)], indent=2), encoding="utf-8")
    # With the evidence migration's marker, as in a folder the memory server has started on
    # (memory-format §9.8.7): its next start then runs no one-shot migration.
    persona = {
        "master": {"facts": [{"id": "card_1a2b3c4d", "text": "Name: Alice"}]},
        MARKER_SECTION: {"facts": [EVIDENCE_MARKER]},
    }
    (char_dir / PERSONA).write_text(json.dumps(persona, indent=2), encoding="utf-8")
    log = EventLog(root)
    for i in range(applied):
        append_applied(log, name, i % 4, 0.5 * (i + 1))
    for i in range(pending):
        payload = {"reflection_id": f"ref_{i % 4:016x}", "reinforcement": 9.0 + i}
        log.append(name, "reflection.evidence_updated", payload)
    return char_dir


def append_applied(log: EventLog, name: str, which: int, value: float) -> None:
    rid = f"ref_{which:016x}"

    def mutate(view: list[dict[str, Any]]) -> None:
        for e in view:
            if e["id"] == rid:
                e["reinforcement"] = value

    log.record_and_save(
        name,
        "reflection.evidence_updated",
        {"reflection_id": rid, "reinforcement": value, "source": "user_fact"},
        mutate,
        view=REFLECTIONS,
    )


def hand_diagnosis(char_dir: Path, *, states: dict[int, tuple[str, str | None]] | None = None) -> CharacterDiagnosis:
    """A diagnosis built from the journal as read: applied up to the sentinel, pending after, with
    ``states`` overriding single events (index → (state, reason))."""
    read = read_journal(char_dir / "events.ndjson")
    sentinel = read_sentinel(char_dir)
    ids = [e.event_id for e in read.events]
    index = ids.index(sentinel.event_id) if sentinel.event_id in ids else None
    events = EventList()
    for i, ev in enumerate(read.events):
        state = "applied" if index is not None and i <= index else "pending"
        reason = None
        if states and i in states:
            state, reason = states[i]
        events.append(
            EventInfo(i, ev.line, ev.offset, ev.event_id, ev.type, ev.ts, entry_ref(ev.type, ev.payload), state, reason)
        )
    sentinel_state = sentinel.state if index is not None or sentinel.event_id is None else "unknown_id"
    return CharacterDiagnosis(
        char_dir.name,
        str(char_dir),
        JournalStats(read.present, read.lines, len(read.events), read.size),
        SentinelInfo(sentinel_state, sentinel.event_id, index),
        events,
        read.defects,
    )
