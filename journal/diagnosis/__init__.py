"""Read-only diagnosis of a memory folder: the value shared by ``memory-inspector check`` and the GUI.

This package defines the *values* (what is applied, pending, blocked, orphaned, suspect, damaged)
and :func:`diagnose_character` / :func:`diagnose_path` which compute them. Nothing here writes
inside the folder being diagnosed; a ``.zip`` export is extracted to a private temp folder that
:meth:`Diagnosis.close` removes.

How the event states are decided (issue 4; ``index`` is the 0-based position among the journal's
events in file order, recovered glued events included):

- ``pending``: after the sentinel; every event when the sentinel is not ``ok``.
- ``blocked``: the first pending event at which replay would stop: its type has no handler, or
  its handler, run on an in-memory overlay of the folder after the pending events before it,
  raises. Later events stay ``pending``.
- ``orphaned``: at or before the sentinel, yet replay can never have applied it: no handler for
  its type (``no_handler``; only a live write can have moved the sentinel past it), or an archive
  event whose entry is in neither its view nor any shard its archive events name
  (``archive_entry_lost``).
- ``suspect``: at or before the sentinel, a handled event that is the last event touching its
  entry, whose handler would still change something if applied to the folder now
  (``view_differs``). A heuristic: the effect is not visible, or something outside the journal
  changed the entry since.
- ``applied``: every other event at or before the sentinel.

The package, one module per step: :mod:`~journal.diagnosis.values` (the values),
:mod:`~journal.diagnosis.eventlist` (the events and their states), :mod:`~journal.diagnosis.scan`
(the journal, read once), :mod:`~journal.diagnosis.folder` (views and shards, read once, and the
in-memory store handlers run against), :mod:`~journal.diagnosis.checks` (one function per check),
:mod:`~journal.diagnosis.character` and :mod:`~journal.diagnosis.path` (the facade's two entry
points). What a PATH holds (zips, character folders) is :mod:`journal.inputs`.
"""

from __future__ import annotations

from journal.diagnosis.character import diagnose_character, server_status
from journal.diagnosis.eventlist import EventList
from journal.diagnosis.folder import ProjectionStore
from journal.diagnosis.path import diagnose_path
from journal.diagnosis.states import BLOCK_REASONS, EVENT_STATES, ORPHAN_REASONS, SUSPECT_REASONS, EventInfo
from journal.diagnosis.values import MAX_FINDINGS_PER_CODE, CharacterDiagnosis, Diagnosis, JournalStats, ServerStatus
from journal.errors import DiagnosisInputError, UnknownCharacterError, UnreadableInputError
from journal.finding import FINDING_CODES, SEVERITIES, Finding
from journal.inputs import ZipLimits, extract_zip
from journal.outbox import OutboxOp
from journal.sentinel import SentinelInfo

__all__ = [
    "BLOCK_REASONS",
    "EVENT_STATES",
    "FINDING_CODES",
    "MAX_FINDINGS_PER_CODE",
    "ORPHAN_REASONS",
    "SEVERITIES",
    "SUSPECT_REASONS",
    "CharacterDiagnosis",
    "Diagnosis",
    "DiagnosisInputError",
    "EventInfo",
    "EventList",
    "Finding",
    "JournalStats",
    "OutboxOp",
    "ProjectionStore",
    "SentinelInfo",
    "ServerStatus",
    "UnknownCharacterError",
    "UnreadableInputError",
    "ZipLimits",
    "diagnose_character",
    "diagnose_path",
    "extract_zip",
    "server_status",
]
