"""Where the sentinel is in the journal: the one home of that rule (design record, Startup recovery).

:func:`journal.views.read_sentinel` parses ``events_applied.json``; :func:`locate_sentinel` says
what that means for a given journal: replay resumes after the sentinel's event, or starts from the
first event when the sentinel is missing, malformed, null, or names an id the journal does not hold.
A sentinel that is not a regular file (``refused``) is never read: where it stands is unknown, and
our replay refuses to run (:class:`journal.reconcile.Reconciler`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from journal.views import SentinelRead

#: The states :func:`locate_sentinel` gives.
SENTINEL_STATES = ("ok", "missing", "malformed", "null", "unknown_id", "refused")


@dataclass(slots=True)
class SentinelInfo:
    """``state`` ∈ :data:`SENTINEL_STATES`; ``index`` of the event it names (``None`` unless ``ok``).

    Attributes:
        state: as above.
        event_id: the id the sentinel names, if any.
        index: 0-based index of that event among the journal's events.
    """

    state: str = "missing"
    event_id: str | None = None
    index: int | None = None

    @property
    def replay_start(self) -> int:
        """Index of the first event replay applies (0 when the whole journal replays)."""
        return 0 if self.index is None else self.index + 1


def locate_sentinel(sentinel: SentinelRead, index_of: Callable[[str], int | None]) -> SentinelInfo:
    """The sentinel's state and position, given ``index_of(event_id)`` over the journal's events
    (the first event with that id; ``None`` when there is none)."""
    if sentinel.state != "ok" or sentinel.event_id is None:
        return SentinelInfo(sentinel.state)
    found = index_of(sentinel.event_id)
    if found is None:
        return SentinelInfo("unknown_id", sentinel.event_id)
    return SentinelInfo("ok", sentinel.event_id, found)
