"""Comparing two exports of one character (issue 17): folders or zips, both only read.

:func:`compare_paths` returns a :class:`~inspector.core.compare.value.Comparison`, a pure value
the command line prints and the window shows; its parts are computed by
:mod:`~inspector.core.compare.journal`, :mod:`~inspector.core.compare.views` and
:mod:`~inspector.core.compare.outbox`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from inspector.core.compare.journal import compare_journals
from inspector.core.compare.outbox import compare_outboxes
from inspector.core.compare.value import (
    COMPARE_SCHEMA,
    Comparison,
    DamageRef,
    EntryDiff,
    EventRef,
    JournalDiff,
    JournalSide,
    OutboxDiff,
    ViewProblem,
)
from inspector.core.compare.views import compare_views
from journal.diagnosis import UnknownCharacterError, UnreadableInputError
from journal.dryrun import FieldChange
from journal.inputs import characters_in, descend, extract_zip, is_character_folder


@contextlib.contextmanager
def character_folder(path: str | os.PathLike[str], character: str | None = None) -> Iterator[tuple[Path, str]]:
    """The character folder ``path`` holds, and its name: ``path`` itself when it is one, else the
    memory root's character ``character`` (needed when it holds several). A zip is extracted
    safely to a private temp folder (:func:`journal.inputs.extract_zip`), removed afterwards.

    Raises:
        UnreadableInputError: not a folder or a zip, unreadable, or no single character found.
        UnknownCharacterError: ``character`` names no character of ``path``.
    """
    given = os.fspath(path)
    try:
        st = os.stat(given)
    except OSError as exc:
        raise UnreadableInputError(f"{given}: {exc.strerror or exc}") from None
    temp: str | None = None
    try:
        if stat.S_ISDIR(st.st_mode):
            base = Path(given)
            stem = None
        elif stat.S_ISREG(st.st_mode) and zipfile.is_zipfile(given):
            temp = tempfile.mkdtemp(prefix="memory-inspector-diff-")
            extract_zip(given, temp)
            base = descend(Path(temp))
            stem = Path(given).stem if base == Path(temp) else None
        else:
            raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")
        if is_character_folder(base):
            yield base, stem or base.name
            return
        entries = [e for e in characters_in(base, os.path.realpath(base)) if e.refusal is None]
        if character is not None:
            entries = [e for e in entries if e.name == character]
            if not entries:
                raise UnknownCharacterError(f"{given}: no character named {character!r}")
        if len(entries) != 1:
            names = ", ".join(repr(e.name) for e in entries[:5])
            raise UnreadableInputError(
                f"{given}: holds {len(entries)} characters ({names}); name one with --character"
                if entries
                else f"{given}: no character folder found here"
            )
        yield entries[0].path, entries[0].name
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


def compare_folders(
    a_dir: str | os.PathLike[str], b_dir: str | os.PathLike[str], *, a: str = "A", b: str = "B", character: str = ""
) -> Comparison:
    """Compare two character folders (only read)."""
    result = Comparison(a, b, character)
    result.journal = compare_journals(a_dir, b_dir)
    result.entries, result.view_problems = compare_views(a_dir, b_dir)
    result.outbox = compare_outboxes(a_dir, b_dir)
    return result


def compare_paths(
    a: str | os.PathLike[str], b: str | os.PathLike[str], *, character: str | None = None
) -> Comparison:
    """Compare two exports of one character: folders (a memory root or a character folder) or zips.

    Raises:
        UnreadableInputError, UnknownCharacterError: as :func:`character_folder`.
    """
    with character_folder(a, character) as (a_dir, a_name), character_folder(b, character) as (b_dir, _):
        return compare_folders(a_dir, b_dir, a=os.fspath(a), b=os.fspath(b), character=a_name)


__all__ = [
    "COMPARE_SCHEMA",
    "Comparison",
    "DamageRef",
    "EntryDiff",
    "EventRef",
    "FieldChange",
    "JournalDiff",
    "JournalSide",
    "OutboxDiff",
    "ViewProblem",
    "character_folder",
    "compare_folders",
    "compare_paths",
]
