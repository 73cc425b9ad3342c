"""Chat turns from ``time_indexed_original``, and the turns around an event's time (cloudsave-format §6.3, §6.5).

A row's ``message`` is ``{"type": T, "data": {"content": C}}`` (``T``: ``human``, ``ai`` or
``system``; ``C`` a string or a list of parts whose ``text`` parts are the words), and its
``timestamp`` is the server's naive local clock, stored with a space (``2026-08-17 09:31:00``).
An event's ``ts`` is the same clock with a ``T``. So turns are matched to an event by the parsed
time, never by the string (``' ' < 'T'``), and there is no identifier that links them (§6.5).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from journal.chat.snapshot import ChatError, snapshot
from journal.layout import CHAT_DB

#: The table of every turn the server stores (``time_indexed_compressed`` is no longer written).
TABLE = "time_indexed_original"

#: The turns shown around an event: from this many minutes before its time …
DEFAULT_MINUTES = 30
#: … to this long after it (evidence events are written after the turns that caused them).
AFTER = timedelta(minutes=1)

#: The roles a message's ``type`` names.
ROLES = ("human", "ai", "system")

#: What every reading says of the link between turns and events (§6.5).
NO_LINK = (
    "turns are matched to events by time only: no identifier links them, and both clocks are the "
    "memory server's naive local time (ambiguous across a time-zone or daylight-saving change)"
)


def parse_naive_time(text: str | bytes | None) -> datetime | None:
    """A timestamp as the server's readers parse it: ISO (``T`` or a space), else
    ``%Y-%m-%d %H:%M:%S.%f``; any offset dropped (naive local time). ``None``: not a time."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    s = str(text).strip()
    try:
        value = datetime.fromisoformat(s)
    except ValueError:
        try:
            value = datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f")
        except ValueError:
            return None
    return value.replace(tzinfo=None)


def parse_message(raw: str) -> tuple[str, str | None, str | None]:
    """``(role, text, problem)`` of a stored message: the role its ``type`` names (``unknown``
    otherwise), the words of its content (the ``text`` parts of a list, joined by a new line), and
    what is wrong with it (``None``: nothing)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return "unknown", raw, "not JSON: shown as it is stored"
    if not isinstance(doc, dict):
        return "unknown", raw, "not a JSON object: shown as it is stored"
    role = doc.get("type")
    role = role if isinstance(role, str) and role in ROLES else "unknown"
    data = doc.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    if isinstance(content, str):
        return role, content, None if role != "unknown" else f"unknown type {doc.get('type')!r}"
    if isinstance(content, list):
        parts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        return role, "\n".join(parts), None if parts or not content else "no text part"
    return role, None, "no data.content"


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One stored message.

    Attributes:
        row: its rowid (the server's ``id``).
        session_id: the id of the call that stored it (a fresh uuid per call: not a chat session,
            and not related to any event).
        role: ``human``, ``ai``, ``system`` or ``unknown``.
        text: its words (``None``: none could be read).
        timestamp: the parsed time (``None``: it could not be parsed).
        stored_time: the timestamp as stored.
        problem: what is wrong with the row, if anything (invalid UTF-8, not JSON, …).
    """

    row: int
    session_id: str | None
    role: str
    text: str | None
    timestamp: datetime | None
    stored_time: str
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "session_id": self.session_id,
            "role": self.role,
            "text": self.text,
            "timestamp": None if self.timestamp is None else self.timestamp.isoformat(sep=" "),
            "stored_time": self.stored_time,
            "problem": self.problem,
        }


@dataclass(slots=True)
class ChatRead:
    """The turns of one reading.

    Attributes:
        db: the db that was read.
        method: how (:class:`journal.chat.Snapshot`'s ``method``).
        start, end: the window asked for (``None``: open on that side).
        turns: the turns inside it, by time then row (the server's order).
        rows: how many rows the table holds.
        untimed: rows whose time cannot be parsed (never inside a window; listed when there is none).
    """

    db: str
    method: str
    start: datetime | None
    end: datetime | None
    turns: list[ChatTurn] = field(default_factory=list)
    rows: int = 0
    untimed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "read": self.method,
            "from": None if self.start is None else self.start.isoformat(sep=" "),
            "to": None if self.end is None else self.end.isoformat(sep=" "),
            "rows": self.rows,
            "untimed_rows": self.untimed,
            "link": NO_LINK,
            "turns": [t.to_json() for t in self.turns],
        }


def window_around(ts: str | datetime, minutes: int = DEFAULT_MINUTES) -> tuple[datetime, datetime]:
    """From ``minutes`` before ``ts`` to :data:`AFTER` after it.

    Raises:
        ChatError: ``ts`` is not a time.
    """
    at = ts if isinstance(ts, datetime) else parse_naive_time(ts)
    if at is None:
        raise ChatError(f"not a time: {ts!r}")
    return at - timedelta(minutes=minutes), at + AFTER


def _text(value: Any) -> tuple[str, str | None]:
    """A stored text as ``str``, and a problem when its bytes are not UTF-8 (replaced, shown)."""
    if value is None:
        return "", None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            return value.decode("utf-8", "replace"), f"not UTF-8 at byte {exc.start}: shown with replacements"
    return str(value), None


def _rows(conn: Any, db: str) -> Iterator[tuple[Any, ...]]:
    try:
        cols = {r[1].decode() if isinstance(r[1], bytes) else r[1] for r in conn.execute(f"PRAGMA table_info({TABLE})")}
        if not cols:
            raise ChatError(f"{db}: no {TABLE} table (not the memory server's chat history)")
        missing = {"session_id", "message", "timestamp"} - cols
        if missing:
            raise ChatError(f"{db}: {TABLE} lacks the column(s) {', '.join(sorted(missing))}")
        yield from conn.execute(f"SELECT rowid, session_id, message, timestamp FROM {TABLE} ORDER BY timestamp, rowid")
    except ChatError:
        raise
    except Exception as exc:  # sqlite3.DatabaseError: a damaged copy
        raise ChatError(f"{db}: cannot be read: {exc}") from None


def read_chat(
    db: str | os.PathLike[str],
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> ChatRead:
    """The turns stored between ``start`` and ``end`` (both included; ``None``: open), read from a
    private copy of the db (:func:`journal.chat.snapshot`).

    Args:
        folder: the character folder the db belongs to (a link leading out of it is refused).

    Raises:
        ChatError: the db cannot be read, in one line naming it.
    """
    path = os.fspath(db)
    with snapshot(path, folder=folder) as snap:
        out = ChatRead(path, snap.method, start, end)
        for rowid, session, message, stored in _rows(snap.conn, path):
            out.rows += 1
            stored_text, _ = _text(stored)
            when = parse_naive_time(stored_text)
            if when is None:
                out.untimed += 1
                continue
            if (start is not None and when < start) or (end is not None and when > end):
                continue
            raw, bad_bytes = _text(message)
            role, text, problem = parse_message(raw)
            session_text, _ = _text(session)
            out.turns.append(
                ChatTurn(int(rowid), session_text or None, role, text, when, stored_text, bad_bytes or problem)
            )
    out.turns.sort(key=lambda t: (t.timestamp or datetime.min, t.row))  # parsed time, then row (§6.5)
    return out


def db_of(character_folder: str | os.PathLike[str]) -> str:
    """Where a character folder's chat history is (cloudsave-format §6.1)."""
    return os.path.join(os.fspath(character_folder), CHAT_DB)
