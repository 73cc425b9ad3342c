"""Chat history beside the journal: the memory server's ``time_indexed.db`` (cloudsave-format §6).

The server stores every chat turn it is sent in ``time_indexed_original``; nothing links a turn to
an event but the time (§6.5). This package reads the db safely while the server may write
(:mod:`journal.chat.snapshot`: never a read-write open of the file, never ``immutable=1`` on it),
turns its rows into :class:`ChatTurn` values (:mod:`journal.chat.turns`) and picks the turns
around an event's time. It never imports Qt.
"""

from __future__ import annotations

from journal.chat.snapshot import ChatError, Snapshot, snapshot
from journal.chat.turns import (
    DEFAULT_MINUTES,
    ChatRead,
    ChatTurn,
    parse_message,
    parse_naive_time,
    read_chat,
    window_around,
)

__all__ = [
    "DEFAULT_MINUTES",
    "ChatError",
    "ChatRead",
    "ChatTurn",
    "Snapshot",
    "parse_message",
    "parse_naive_time",
    "read_chat",
    "snapshot",
    "window_around",
]
