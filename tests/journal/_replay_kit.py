"""Builders shared by the replay tests: realistic entries, character folders, and writers.

Two live writers are modelled:

* :func:`server_record_and_save` — the memory server's write contract (design record, Write
  contract): under the character lock, load → append → mutate → save → write the sentinel
  **unconditionally**. This is the writer the design record's concurrency bullets are about: it
  moves the sentinel to the journal end even while a replay round is in flight.
* ``EventLog.record_and_save`` — this package's writer, which never moves the sentinel past an
  unapplied tail.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from journal import EventLog, fs
from journal import fixtures as folders
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event, encode_event, new_event
from journal.reader import read_journal
from journal.views import PERSONA, REFLECTIONS, load_view, read_sentinel, write_sentinel

CHAR = "Alice"
EVIDENCE = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "sub_zero_last_increment_date",
    "user_fact_reinforce_count",
)


def reflection(rid: str, **fields: Any) -> dict[str, Any]:
    """A reflection with the fields of memory-format §2.2."""
    entry: dict[str, Any] = {
        "id": rid,
        "text": f"text of {rid}: 主人 likes tea",
        "entity": "master",
        "status": "confirmed",
        "source_fact_ids": ["fact_a", "fact_b"],
        "created_at": "2026-04-20T10:00:00",
        "feedback": None,
        "next_eligible_at": "2026-04-20T10:30:00",
        "reinforcement": 1.0,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-04-22T09:00:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 1,
        "last_promote_attempt_at": None,
        "promote_attempt_count": 0,
        "confirmed_at": "2026-04-21T10:00:00",
        "schema_version": 2,
    }
    entry.update(fields)
    return entry


def persona_entry(eid: str, text: str = "Master drinks green tea", **fields: Any) -> dict[str, Any]:
    """A persona entry with the fields of memory-format §2.3, evidence already set."""
    defaults: dict[str, Any] = {
        "source_id": "ref_x",
        "reinforcement": 2.0,
        "rein_last_signal_at": "2026-04-23T08:00:00",
    }
    return folders.persona_entry(eid, text, **{**defaults, **fields})


def persona_view(*entries: dict[str, Any], section: str = "master") -> dict[str, Any]:
    view: dict[str, Any] = {"master": {"facts": []}, "neko": {"facts": []}, "relationship": {"facts": []}}
    view[section]["facts"].extend(entries)
    return view


def make_character(
    root: Path,
    name: str = CHAR,
    *,
    reflections: list[dict[str, Any]] | None = None,
    persona: dict[str, Any] | None = None,
) -> Path:
    """A character folder with the given views (written exactly as the memory server writes them)."""
    cd = root / name
    cd.mkdir(parents=True, exist_ok=True)
    if reflections is not None:
        fs.atomic_write_json(cd / REFLECTIONS, reflections)
    if persona is not None:
        fs.atomic_write_json(cd / PERSONA, persona)
    return cd


def evidence(rid: str, value: float, **extra: Any) -> dict[str, Any]:
    """A ``reflection.evidence_updated`` payload (a full evidence snapshot)."""
    return {
        "reflection_id": rid,
        "reinforcement": value,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-05-01T10:00:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 2,
        "source": "user_fact",
        **extra,
    }


def persona_evidence(key: str, eid: str, value: float) -> dict[str, Any]:
    return {
        "entity_key": key,
        "entry_id": eid,
        "reinforcement": value,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-05-01T10:00:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 1,
        "source": "user_confirm",
    }


def apply_evidence(payload: dict[str, Any]) -> Callable[[Any], None]:
    """The live writer's mutation for an evidence payload (the same values the handler assigns)."""

    def mutate(view: Any) -> None:
        if "reflection_id" in payload:
            entries = view
            target = payload["reflection_id"]
            keys = (*EVIDENCE, "last_promote_attempt_at", "promote_attempt_count")
        else:
            entries = view[payload["entity_key"]]["facts"]
            target = payload["entry_id"]
            keys = EVIDENCE
        for entry in entries:
            if entry.get("id") == target:
                for k in keys:
                    if k in payload:
                        entry[k] = payload[k]
                return

    return mutate


def server_record_and_save(
    log: EventLog, character: str, event_type: str, payload: dict[str, Any], mutate: Callable[[Any], None], view: str
) -> Event:
    """The memory server's ``record_and_save``: the sentinel is written unconditionally."""
    expected = list if view == REFLECTIONS else dict
    with log.lock(character):
        cd = log.char_dir(character)
        current = load_view(cd / view, expected)
        event = new_event(event_type, payload)
        fs.durable_append(cd / JOURNAL_NAME, encode_event(event))
        mutate(current)
        fs.atomic_write_json(cd / view, current)
        write_sentinel(cd, event.event_id)
    return event


def tree_hashes(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file under ``root`` (links recorded by their target)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def sentinel_id(cd: Path) -> str | None:
    return read_sentinel(cd).event_id


def event_ids(cd: Path) -> list[str]:
    return [ev.event_id for ev in read_journal(cd / JOURNAL_NAME).events]


def sentinel_index(cd: Path) -> int:
    """Position of the on-disk sentinel among the journal's events (-1: none/unknown)."""
    sid = sentinel_id(cd)
    ids = event_ids(cd)
    return ids.index(sid) if sid in ids else -1


def reflections_by_id(cd: Path) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in load_view(cd / REFLECTIONS, list)}


def persona_by_id(cd: Path, section: str = "master") -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in load_view(cd / PERSONA, dict)[section]["facts"]}


def remove_sentinel(cd: Path) -> None:
    (cd / SENTINEL_NAME).unlink()
