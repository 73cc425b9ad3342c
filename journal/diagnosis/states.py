"""Event states and reasons, and the per-event value a diagnosis shows (:class:`EventInfo`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Event states, in the order a legend shows them.
EVENT_STATES = ("applied", "pending", "blocked", "orphaned", "suspect")

#: Reasons an event is blocked (replay would stop there).
BLOCK_REASONS = ("no_handler", "view_drift", "corrupt_view", "corrupt_shard", "bad_shard_name", "handler_error")

#: The reason a pending event may carry: replay holds it behind an event of the same entry that
#: it cannot apply (or behind one that holds everything).
PENDING_REASONS = ("held",)

#: Reasons an event at or before the sentinel is orphaned or suspect.
ORPHAN_REASONS = ("no_handler", "archive_entry_lost")
SUSPECT_REASONS = ("view_differs",)


@dataclass(slots=True)
class EventInfo:
    """What the diagnosis knows about one event (compact: the payload is not kept).

    Attributes:
        index: 0-based position among the journal's events in file order.
        line: 1-based journal line.
        offset: byte offset of the record (re-read the payload from here when needed).
        event_id, type, ts: as in the record.
        entry: the entry the event touches: ``reflection_id`` for reflection events,
            ``"<entity_key>/<entry_id>"`` for persona events, else ``None``.
        state: one of :data:`EVENT_STATES`.
        reason: for blocked / orphaned / suspect: why (``no_handler``, ``view_drift``, ...,
            ``archive_entry_lost``, ``view_differs``), else ``None``.
        message: the reason in words, when there is one.
    """

    index: int
    line: int
    offset: int
    event_id: str
    type: str
    ts: str
    entry: str | None
    state: str = "pending"
    reason: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "state": self.state,
            "reason": self.reason,
        }
