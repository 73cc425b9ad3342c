"""Event vocabulary, the event value type and the exact on-disk line encoding."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from journal.errors import UnknownEventTypeError

#: The 15 names the memory server declares (memory-format §3.3).
ALL_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "fact.added",
        "fact.absorbed",
        "fact.archived",
        "reflection.synthesized",
        "reflection.state_changed",
        "reflection.surfaced",
        "reflection.rebutted",
        "persona.fact_added",
        "persona.fact_mentioned",
        "persona.suppressed",
        "correction.queued",
        "correction.resolved",
        "reflection.evidence_updated",
        "persona.evidence_updated",
        "persona.entry_updated",
    }
)

#: The five names with production replay handlers.
REPLAYABLE_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "reflection.evidence_updated",
        "persona.evidence_updated",
        "persona.entry_updated",
        "reflection.state_changed",
        "persona.fact_added",
    }
)

JOURNAL_NAME = "events.ndjson"
SENTINEL_NAME = "events_applied.json"


def now_iso() -> str:
    """Naive local ISO-8601 timestamp, as the memory server writes it (no zero microseconds)."""
    return datetime.now().isoformat()


def check_event_type(event_type: object) -> str:
    """Return ``event_type`` if it is a declared name, else raise ``UnknownEventTypeError``."""
    if not isinstance(event_type, str) or event_type not in ALL_EVENT_TYPES:
        raise UnknownEventTypeError(
            f"unknown event type {event_type!r}: not one of the {len(ALL_EVENT_TYPES)} declared names"
        )
    return event_type


@dataclass(slots=True)
class Event:
    """One journal record. Treat it as immutable (not frozen only because frozen init is ~3x slower
    on the 1M-event read path).

    Attributes:
        event_id: uuid4 string; carries no order.
        type: event name (may be undeclared when read from a damaged or foreign journal).
        ts: naive local ISO-8601 timestamp, audit only.
        payload: event-specific object (whatever the line held; may be a non-dict when damaged).
        line: 1-based line number in the journal file (0 for events not read from a file).
        offset: byte offset of the record's first byte in the file (-1 when not read from a file).
    """

    event_id: str
    type: str
    ts: str
    payload: Any = field(default_factory=dict)
    line: int = 0
    offset: int = -1


def new_event(event_type: str, payload: dict[str, Any]) -> Event:
    """Build a fresh event with a new uuid4 and the current local timestamp.

    Raises:
        UnknownEventTypeError: ``event_type`` is not declared.
        TypeError: ``payload`` is not a dict.
    """
    check_event_type(event_type)
    if not isinstance(payload, dict):
        raise TypeError(f"payload must be a dict, not {type(payload).__name__}")
    return Event(event_id=str(uuid.uuid4()), type=event_type, ts=now_iso(), payload=payload)


def encode_event(event: Event) -> bytes:
    """Encode ``event`` as one journal line, byte-compatible with the memory server.

    ``json.dumps(..., ensure_ascii=False)`` with default separators, keys in the order
    event_id, type, ts, payload, terminated by ``\\n``.
    """
    record = {"event_id": event.event_id, "type": event.type, "ts": event.ts, "payload": event.payload}
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
