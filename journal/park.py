"""Parked events, ``events_parked.ndjson``: held events a person decided to go past (the one home of
"is this event parked").

An event that can never be applied (a persona merge torn by a crash, whose text hash can never
match again) holds its entry for good (:mod:`journal.holds`). Parking is a person's decision, taken
through the guarded replay (``memory-inspector replay … --park EVENT_ID``), never automatically:
the reconciler never applies a parked event, treats it as settled (the sentinel may move past it),
and the entry's later events are no longer held by it.

The file is an audit trail in the character folder that the memory server ignores. One JSON object
per line, appended durably, never rewritten::

    {"event_id": "…", "type": "persona.entry_updated", "index": 12, "line": 13,
     "event_ts": "2026-05-01T10:00:00.5", "parked_at": "2026-08-20T14:03:11+02:00",
     "by": "alice", "host": "laptop", "reason": "view_drift: persona entry master/prom_x: …"}

``index`` and ``line`` are the event's 0-based position among the journal's events and its 1-based
line (``null`` when unknown), ``event_ts`` the event's own ``ts``, ``parked_at`` when it was parked
(ISO-8601), ``by`` and ``host`` who parked it and where, ``reason`` why it was held.
A line that is not such an object (a torn last line of a crashed append) parks nothing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import loads_exact
from journal.errors import ViewCorruptError
from journal.events import is_unicode
from journal.stores import Confinement

PARKED_NAME = "events_parked.ndjson"

#: A park file larger than this is not read (it holds one short line per decision a person made).
PARKED_MAX_BYTES = 64 << 20

#: The states :func:`read_parked` gives.
PARKED_STATES = ("missing", "ok", "refused")


@dataclass(frozen=True, slots=True)
class ParkRecord:
    """One park decision (one line of ``events_parked.ndjson``)."""

    event_id: str
    type: str
    index: int | None
    line: int | None
    event_ts: str
    parked_at: str
    by: str
    host: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "type": self.type,
            "index": self.index,
            "line": self.line,
            "event_ts": self.event_ts,
            "parked_at": self.parked_at,
            "by": self.by,
            "host": self.host,
            "reason": self.reason,
        }

    def encode(self) -> bytes:
        """The record's line (``json.dumps``, non-ASCII kept, newline-terminated)."""
        return json.dumps(self.to_json(), ensure_ascii=False).encode("utf-8") + b"\n"


@dataclass(frozen=True, slots=True)
class ParkedRead:
    """``events_parked.ndjson`` as read.

    Attributes:
        state: ``missing``, ``ok``, or ``refused`` (a link leading out of the character folder,
            not a regular file, or unreadable: which events are parked is then unknown, so the
            reconciler refuses to replay).
        records: every park record, in file order (an id may be parked twice).
        ids: the parked event ids.
        bad_lines: lines that are not park records (a torn last line, damage).
        message: what was wrong, for ``refused``.
    """

    state: str = "missing"
    records: tuple[dict[str, Any], ...] = ()
    ids: frozenset[str] = frozenset()
    bad_lines: int = 0
    message: str | None = None


def _parse(data: bytes) -> ParkedRead:
    records: list[dict[str, Any]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = loads_exact(raw)
        except ValueError:
            bad += 1
            continue
        eid = obj.get("event_id") if isinstance(obj, dict) else None
        if not (isinstance(eid, str) and eid and is_unicode(eid)):
            bad += 1
            continue
        assert isinstance(obj, dict)
        records.append(obj)
    return ParkedRead("ok", tuple(records), frozenset(r["event_id"] for r in records), bad)


def read_parked(char_dir: str | os.PathLike[str]) -> ParkedRead:
    """Read ``events_parked.ndjson`` of a character folder; never raises."""
    try:
        path = Confinement(char_dir).view_path(PARKED_NAME)
    except ViewCorruptError as exc:
        return ParkedRead("refused", message=str(exc))
    try:
        with fs.open_regular(path) as fh:
            data = fh.read(PARKED_MAX_BYTES + 1)
    except FileNotFoundError:
        return ParkedRead("missing")
    except OSError as exc:
        return ParkedRead("refused", message=f"{PARKED_NAME} cannot be read: {exc.strerror or exc}")
    if len(data) > PARKED_MAX_BYTES:
        return ParkedRead("refused", message=f"{PARKED_NAME} is larger than {PARKED_MAX_BYTES >> 20} MiB; not read")
    return _parse(data)


def is_parked(parked: ParkedRead, event_id: str) -> bool:
    """Whether a person parked ``event_id``: replay never applies it and goes past it."""
    return event_id in parked.ids


def record_park(char_dir: str | os.PathLike[str], record: ParkRecord) -> None:
    """Append one park decision durably (one write, then fsync), after any torn last line.

    Raises:
        ViewCorruptError: the file is a link leading out of the character folder; nothing written.
        OSError: the append or its fsync failed.
    """
    path = Confinement(char_dir).view_path(PARKED_NAME)
    fs.ensure_dir(Path(char_dir))
    fs.durable_append(path, record.encode())
