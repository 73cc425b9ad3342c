"""The value a reconciliation round returns: what it applied, held, skipped and why it stopped.

Built by :class:`journal.reconcile.Reconciler` (re-exported there), read by the CLI, the window and
the guarded replay's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from journal.holds import Entry

#: Every ``ReplayStop.reason``: the diagnosis block reasons, plus ``sentinel_write`` (the handler
#: succeeded and persisted, but the sentinel could not be written; the event replays next time).
STOP_REASONS = (
    "no_handler",
    "handler_error",
    "view_drift",
    "corrupt_view",
    "corrupt_shard",
    "bad_shard_name",
    "sentinel_write",
)


@dataclass(frozen=True, slots=True)
class ReplayStop:
    """An event replay could not apply, and why (it holds its entries, or everything).

    Attributes:
        event_id: the event (it was not applied).
        index: its 0-based position among the journal's events in file order.
        type: its type (``""`` when the record had none).
        reason: one of :data:`STOP_REASONS`.
        message: the reason in words (for ``view_drift``: the entry and both hashes).
    """

    event_id: str
    index: int
    type: str
    reason: str
    message: str


@dataclass(slots=True)
class ReplayReport:
    """The outcome of one reconciliation round of one character (a value for the CLI and GUI).

    Attributes:
        character: the folder name.
        sentinel_before: the sentinel id read at the start (``None`` for missing/null/malformed).
        sentinel_after: the sentinel id on disk at the end.
        tail: events that were pending when the round started.
        applied: ids of the events whose handler returned, in order (an id repeats when a frozen
            round replays it again).
        changed: how many of those reported a change.
        stopped: the first event that could not be applied (the first held event), if any.
        blocks: every event that could not be applied, in order (``stopped`` is the first).
        held: ids of the events not applied because they are held: those in ``blocks`` and every
            later one touching an entry they hold (or everything after a global stop), in order.
        held_entries: the entries held at the end, sorted; ``held_everything``: everything after
            some event was held (an event whose entries are unknown, a ``corrupt_view``).
        skipped: ids the valid applied set names, not run again (already applied).
        parked: ids of parked events gone past (never applied).
        applied_beyond: the ids the applied set records at the end of the round (applied past the
            sentinel), in journal order; empty when nothing is (the set is then removed).
        frozen: another writer moved the sentinel during the round; the round froze it.
        rescans: journal probes made after a drain (at most ``_MAX_FROZEN_RESCANS``).
        left_behind: events after this round's own last-applied position when the probe bound was
            hit. With a frozen sentinel they sit behind it and no later boot replays them; without,
            they are still pending.
        rebased: times a probe found that another writer had moved the sentinel (or replaced the
            journal) after this round's last step, and the round continued from that sentinel
            instead of freezing (see the module docstring).
        cancelled: the caller asked to stop between events.
        until_reached: replay stopped on purpose after the requested event.
        temp_files_removed: leftover temp files of interrupted atomic writes removed before the
            round (relative to the character folder).
    """

    character: str
    sentinel_before: str | None = None
    sentinel_after: str | None = None
    tail: int = 0
    applied: list[str] = field(default_factory=list)
    changed: int = 0
    stopped: ReplayStop | None = None
    blocks: list[ReplayStop] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    held_entries: list[Entry] = field(default_factory=list)
    held_everything: bool = False
    skipped: list[str] = field(default_factory=list)
    parked: list[str] = field(default_factory=list)
    applied_beyond: list[str] = field(default_factory=list)
    frozen: bool = False
    rescans: int = 0
    left_behind: int = 0
    rebased: int = 0
    cancelled: bool = False
    until_reached: bool = False
    temp_files_removed: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Nothing was held, and nothing was left behind or cancelled."""
        return self.stopped is None and not self.cancelled and self.left_behind == 0
