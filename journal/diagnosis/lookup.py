"""One character's journal read from a PATH without diagnosing the folder, for a command that only
looks an event up (``chat --around``): PATH through the one resolver (:func:`journal.inputs.resolve`),
the journal through the diagnosis's own journal step
(:func:`journal.diagnosis.character.read_character_journal`, the one reader), and the event named in
the one event syntax (:func:`journal.diagnosis.eventlist.find_events`) by the caller.

A diagnosis of the same PATH reads the same events in the same order, so an ``#index`` or an id
prefix names the same event here as in ``check`` and the window; what this leaves out is everything
after the read (views, checks, replay, the server model), hence the events' states.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from journal.diagnosis.character import read_character_journal
from journal.diagnosis.eventlist import EventList
from journal.diagnosis.states import EventInfo
from journal.errors import SeveralCharactersError, UnreadableInputError
from journal.finding import Finding
from journal.inputs import ZipLimits, resolve


@dataclass(slots=True)
class CharacterJournal:
    """One character's journal as the diagnosis reads it.

    Attributes:
        name: the character's name (its folder's, or the zip's for a zipped character folder).
        path: the character folder (inside a zip's private copy while the lookup lasts).
        events: its events in file order (states not decided); empty when not read.
        unreadable: why the journal could not be read (refused, unreadable), or ``None``.
        findings: the findings of reading it.
    """

    name: str
    path: str
    events: Sequence[EventInfo] = field(default_factory=EventList)
    unreadable: str | None = None
    findings: list[Finding] = field(default_factory=list)


@contextlib.contextmanager
def character_journal(
    path: str | os.PathLike[str],
    *,
    character: str | None = None,
    read_events: bool = True,
    zip_limits: ZipLimits | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[CharacterJournal]:
    """The one character PATH holds (or ``character``), its journal read unless ``read_events`` is
    false; a zip's extracted copy is removed when the block ends.

    Raises:
        UnreadableInputError: as :func:`journal.inputs.resolve`; also when the character folder
            itself is refused (a link leading out of the memory root, a special file).
        UnknownCharacterError: ``character`` is not among PATH's characters.
        SeveralCharactersError: PATH holds several characters and ``character`` names none.
    """
    with resolve(path, character, zip_limits=zip_limits) as found:
        entry = SeveralCharactersError.only(found.path, found.characters)
        if entry.refusal is not None:
            raise UnreadableInputError(f"{entry.path}: {entry.refusal.message}")
        if not read_events:
            yield CharacterJournal(entry.name, str(entry.path.absolute()))
            return
        recorded = None if found.recorded is None else found.recorded.folders.get(entry.path.name)
        diag = read_character_journal(
            entry.path, root=found.root, name=entry.name, progress=progress, recorded=recorded
        )
        yield CharacterJournal(diag.name, diag.path, diag.events, diag.journal.unreadable, diag.findings)
