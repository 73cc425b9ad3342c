"""Entry history: the covered fields of every journaled entry after each event, by the replay rules.

For a covered entry (a reflection by id, a persona entry by entity key and id), its history is
one :class:`Point` per event that touches it, in journal order (x = the event's index; ``ts`` is
metadata and is not monotonic). Each point holds the entry as the events so far set it
(:class:`EntryState`): the handlers' fields (evidence counters and timestamps, status and
lifecycle stamps and reasons, ``merged_from_ids``, event-time and speaker keys), the text and its
hash where an event carries them (``text_sha256`` from a merge's ``rewrite_text_sha256``, the
text of an archive snapshot), and the archive placement (``placement``, ``shard``). The values
are the stored ones, as the events carry them (decay is never applied).

Rules:

- The start state is the entry as the first event that touches it sets it; a field no event has
  set yet is :data:`UNKNOWN`, never guessed.
- Each step is the replay handler's own field rule (:data:`journal.handlers.FIELD_RULES`,
  :func:`journal.handlers.removes_entry`), applied by :func:`journal.history.rules.step`. An
  event for an entry an earlier event archived is the handler's no-op, marked ``absent``.
- Each point carries its event's state and reason from the diagnosis (``held`` and ``parked`` are
  reasons of ``pending`` / ``applied``; :attr:`Point.shown_state` names them). A blocked or parked
  event changes nothing (replay does not run it). The entry's last applied point says whether
  the current view agrees with it (:attr:`Point.view_agrees`, :attr:`EntryHistory.view`).

Entry points, all on :class:`JournalHistory` (one per diagnosis):
:meth:`~JournalHistory.entry` (one entry's points), :meth:`~JournalHistory.state_at` (every
entry as of one event), :meth:`~JournalHistory.diff` (every entry whose fields differ between two
events), :meth:`~JournalHistory.moved` (views that moved without an event, finding code
``view.moved_on``). Modules: :mod:`~journal.history.values` (the values),
:mod:`~journal.history.rules` (one step), :mod:`~journal.history.build` (reading the journal).
"""

from __future__ import annotations

from journal.history.build import MOVED_CODE, HistoryError, HistoryInputError, JournalHistory, key_of
from journal.history.rules import EFFECTS, step
from journal.history.values import (
    PLACEMENT,
    SHARD,
    TEXT_SHA256,
    UNKNOWN,
    EntryDiff,
    EntryHistory,
    EntryKey,
    EntryState,
    EventRef,
    FieldChange,
    HistoryDiff,
    MovedView,
    Point,
    StateAt,
    ViewCheck,
)

__all__ = [
    "EFFECTS",
    "MOVED_CODE",
    "PLACEMENT",
    "SHARD",
    "TEXT_SHA256",
    "UNKNOWN",
    "EntryDiff",
    "EntryHistory",
    "EntryKey",
    "EntryState",
    "EventRef",
    "FieldChange",
    "HistoryDiff",
    "HistoryError",
    "HistoryInputError",
    "JournalHistory",
    "MovedView",
    "Point",
    "StateAt",
    "ViewCheck",
    "key_of",
    "step",
]
