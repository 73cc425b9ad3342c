"""Exception hierarchy of the journal package: every error is a ``JournalError``."""

from __future__ import annotations


class JournalError(Exception):
    """Root of every error raised deliberately by the journal package."""


class UnknownEventTypeError(JournalError, ValueError):
    """An event name outside the declared vocabulary was used for a write or a handler."""


class InvalidCharacterError(JournalError, ValueError):
    """A character name that cannot be used as a folder name inside the memory root."""


class BadShardNameError(JournalError, ValueError):
    """A shard basename (usually taken from an event payload) does not match the shard pattern."""


class ShardCorruptError(JournalError):
    """An archive shard exists but is not a JSON list; it is never overwritten."""


class ViewCorruptError(JournalError):
    """A view file exists but is not valid JSON or its top level has the wrong type."""


class ViewDriftError(JournalError):
    """``persona.entry_updated``: the entry's current text does not hash to the event's hash."""


class PayloadError(JournalError, ValueError):
    """An event payload of the wrong type (not an object)."""


class SentinelConflictError(JournalError):
    """The on-disk sentinel is not the value a replay round expected (another writer moved it)."""


class UnappliedTailError(JournalError):
    """Events after the sentinel are not applied yet, and the operation would discard them
    (compaction); replay them first."""
