"""Comparing two exports of one character (issues 17 and 25): folders or zips, both only read.

:func:`compare_paths` returns a :class:`~inspector.core.compare.value.Comparison`, a pure value
the command line prints and the window shows. Each side is resolved and diagnosed once
(:func:`open_side`); the parts are computed by :mod:`~inspector.core.compare.journal` (record by
record), :mod:`~inspector.core.compare.files` (every other file, by the rule of its kind),
:mod:`~inspector.core.compare.states` (the diagnoses' states and park decisions),
:mod:`~inspector.core.compare.views` (entries) and :mod:`~inspector.core.compare.outbox`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.compare.files import compare_files
from inspector.core.compare.journal import compare_journals
from inspector.core.compare.outbox import compare_outboxes
from inspector.core.compare.states import compare_states
from inspector.core.compare.tree import ValueChange
from inspector.core.compare.value import (
    COMPARE_SCHEMA,
    STATUSES,
    Comparison,
    DamageRef,
    EntryDiff,
    EventChange,
    EventRef,
    FileDiff,
    InputProblem,
    JournalDiff,
    JournalSide,
    OutboxDiff,
    ParkRef,
    SideStates,
    StateChange,
    StatesDiff,
    ViewProblem,
)
from inspector.core.compare.views import compare_views
from journal.diagnosis import CharacterDiagnosis, Finding, diagnose_character, diagnose_path
from journal.dryrun import FieldChange
from journal.events import JOURNAL_NAME


@dataclass(slots=True)
class Side:
    """One input of a comparison, resolved to one character folder and diagnosed.

    Attributes:
        given: the PATH as given.
        dir: the character folder read (inside a private temp copy for a zip).
        name: the character's name.
        diagnosis: its diagnosis (states, damage, refused input).
        refused: what the input as a whole refused (zip members), as the diagnosis found it.
    """

    given: str
    dir: Path
    name: str
    diagnosis: CharacterDiagnosis = field(repr=False)
    refused: list[Finding] = field(default_factory=list)


@contextlib.contextmanager
def open_side(
    path: str | os.PathLike[str],
    character: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[Side]:
    """What ``path`` holds (a memory root, a character folder, a zip of either), resolved to the
    character ``character`` (needed when it holds several) and diagnosed: the comparison's one
    resolution of a PATH. A zip's private copy is removed afterwards.

    Raises:
        UnreadableInputError: as :func:`journal.diagnosis.diagnose_path`.
        SeveralCharactersError: it holds several characters and ``character`` names none.
        UnknownCharacterError: ``character`` names no character of ``path``.
    """
    with diagnose_path(path, character=character, progress=progress) as diag:
        found = diag.only_character()
        yield Side(os.fspath(path), Path(found.path), found.name, found, list(diag.findings))


def input_problems(side: str, s: Side) -> list[InputProblem]:
    """What a side refused (``input.refused``: zip members, links leading out of the folder,
    special files) or could not read (the journal, the folder), as its diagnosis found it.

    A refusal of a regular file of the folder is about its content (an applied set that is not a
    list is ignored by replay, not refused by the comparison): the file is compared as such."""
    diag = s.diagnosis
    whole = [f for f in diag.findings if f in s.refused]
    out = [InputProblem(side, f.file, f.message, f.code) for f in whole]
    for f in diag.findings:
        if f in s.refused:
            continue
        refused = f.code == "input.refused" and not _regular(s.dir, f.file)
        if refused or (f.code == "journal.absent" and f.severity == "error"):
            out.append(InputProblem(side, f.file, f.message, f.code))
    why = diag.journal.unreadable
    if why is not None and not any(p.file in (JOURNAL_NAME, None) for p in out):
        out.append(InputProblem(side, JOURNAL_NAME, why, "journal.absent"))
    return out


def _regular(char_dir: Path, rel: str | None) -> bool:
    """Whether ``rel`` is a regular file of the folder (not a link, not a special file)."""
    if rel is None:
        return False
    try:
        return stat.S_ISREG(os.lstat(char_dir / rel).st_mode)
    except OSError:
        return False


def compare_sides(a: Side, b: Side) -> Comparison:
    """Compare two opened sides (only read)."""
    result = Comparison(a.given, b.given, a.name)
    result.problems = input_problems("a", a) + input_problems("b", b)
    ids = (a.diagnosis.events.event_ids(), b.diagnosis.events.event_ids())  # a million ids: listed once
    result.journal = compare_journals(a.dir, b.dir, a.diagnosis, b.diagnosis, ids)
    result.files, unreadable = compare_files(a.dir, b.dir)
    known = {(p.side, p.file) for p in result.problems}
    result.problems += [p for p in unreadable if (p.side, p.file) not in known]
    result.entries, result.view_problems = compare_views(a.dir, b.dir)
    result.outbox = compare_outboxes(a.dir, b.dir)
    result.states = compare_states(a.dir, b.dir, a.diagnosis, b.diagnosis, result.journal.common_prefix, ids)
    return result


def compare_folders(
    a_dir: str | os.PathLike[str], b_dir: str | os.PathLike[str], *, a: str = "A", b: str = "B", character: str = ""
) -> Comparison:
    """Compare two character folders (only read)."""
    sides = [Side(label, Path(d), character, diagnose_character(d)) for label, d in ((a, a_dir), (b, b_dir))]
    return compare_sides(*sides)


def compare_paths(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    character: str | None = None,
    progress: Callable[[str], Callable[[int, int], None] | None] | None = None,
) -> Comparison:
    """Compare two exports of one character: folders (a memory root or a character folder) or zips.

    Args:
        progress: ``progress("A")`` / ``progress("B")``: the ``progress(done, total)`` callback of
            that side's read (:func:`journal.diagnosis.diagnose_path`), or ``None``.

    Raises:
        UnreadableInputError, UnknownCharacterError: as :func:`open_side`.
    """
    of = progress or (lambda _side: None)
    with open_side(a, character, of("A")) as side_a, open_side(b, character, of("B")) as side_b:
        return compare_sides(side_a, side_b)


__all__ = [
    "COMPARE_SCHEMA",
    "STATUSES",
    "Comparison",
    "DamageRef",
    "EntryDiff",
    "EventChange",
    "EventRef",
    "FieldChange",
    "FileDiff",
    "InputProblem",
    "JournalDiff",
    "JournalSide",
    "OutboxDiff",
    "ParkRef",
    "Side",
    "SideStates",
    "StateChange",
    "StatesDiff",
    "ValueChange",
    "ViewProblem",
    "compare_folders",
    "compare_paths",
    "compare_sides",
    "input_problems",
    "open_side",
]
