"""Exception hierarchy of the journal package: every error is a ``JournalError``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


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


# -- what a PATH given to the inspector cannot be (journal.inputs, the diagnosis) ---------------


class DiagnosisInputError(JournalError):
    """PATH cannot be diagnosed at all (the CLI exits 2 with this message)."""


class UnreadableInputError(DiagnosisInputError):
    """PATH does not exist, cannot be listed, is not a folder or a zip, or the zip is refused."""


class UnknownCharacterError(DiagnosisInputError, LookupError):
    """``--character NAME`` names no character of PATH."""


class SeveralCharactersError(DiagnosisInputError):
    """PATH holds several characters where a command reads one, and no ``--character`` names it."""

    @classmethod
    def of(cls, path: str, names: list[str]) -> SeveralCharactersError:
        """The one refusal, naming the first five characters."""
        listed = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
        return cls(f"{path} holds {len(names):,} characters ({listed}): name one with --character")

    @classmethod
    def only(cls, path: str, characters: Sequence[_N]) -> _N:
        """The one rule of a command that reads one character: the one ``characters`` holds, or
        this refusal (a PATH holding none was refused already)."""
        if len(characters) != 1:
            raise cls.of(path, [c.name for c in characters])
        return characters[0]
