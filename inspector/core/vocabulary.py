"""The journal's words the window speaks: the value types and file names its widgets render.

Widgets import these from here, never from ``journal`` itself (``tests/test_structure.py``): the
window's layers import downward through ``core``, and this is the one list of what crosses.
Nothing is defined here; each name keeps its one home in ``journal``.
"""

from __future__ import annotations

from journal.diagnosis import EventInfo, Finding, OutboxOp
from journal.diagnosis.values import (
    HEALTH_LEVELS,
    EntryChange,
    ServerStart,
    health_of,
    is_server_start_finding,
    is_shown,
)
from journal.events import JOURNAL_NAME
from journal.finding import SEVERITIES
from journal.history import UNKNOWN, EntryHistory, EntryKey, Point
from journal.outbox import OUTBOX_NAME

__all__ = [
    "HEALTH_LEVELS",
    "JOURNAL_NAME",
    "OUTBOX_NAME",
    "SEVERITIES",
    "UNKNOWN",
    "EntryChange",
    "EntryHistory",
    "EntryKey",
    "EventInfo",
    "Finding",
    "OutboxOp",
    "Point",
    "ServerStart",
    "health_of",
    "is_server_start_finding",
    "is_shown",
]
