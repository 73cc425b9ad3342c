"""Step 0: which character folder a replay acts on (:func:`target_of`, reading PATH as
:func:`journal.inputs.resolve` does), and the way out for a zip export (:func:`suggest_extract_dir`,
:func:`extract_export`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from inspector.core.replay.errors import BadInputError
from journal.diagnosis import DiagnosisInputError, ZipLimits, extract_zip
from journal.errors import InvalidCharacterError
from journal.inputs import resolve
from journal.log import check_character_name

#: Zip extraction limits: total uncompressed bytes and members (zip-bomb guard).
EXTRACT_MAX_BYTES = 4 << 30
EXTRACT_MAX_MEMBERS = 100_000


@dataclass(frozen=True, slots=True)
class ReplayTarget:
    """The character folder a replay acts on.

    Attributes:
        source: the PATH as given.
        character: the character (folder) name.
        root: the memory root holding the folder (``None`` for a zip).
        char_dir: the character folder (``None`` for a zip).
        zip_path: the export when PATH is a zip file (replay refuses it; see :func:`extract_export`).
    """

    source: Path
    character: str
    root: Path | None
    char_dir: Path | None
    zip_path: Path | None = None

    @property
    def is_zip(self) -> bool:
        return self.zip_path is not None


def target_of(path: str | os.PathLike[str], character: str | None = None) -> ReplayTarget:
    """The character folder ``PATH [--character NAME]`` names, as :func:`journal.inputs.resolve`
    reads PATH: the character ``NAME`` of a memory root, or the character folder itself (named
    ``NAME`` when given). Without ``NAME``, PATH must be one character folder (a memory root's
    characters are named in the error). A ``.zip`` export is returned as such (``is_zip``),
    unopened; :func:`preflight` refuses it.

    Raises:
        BadInputError: an invalid name, PATH missing or unreadable, no such character, a memory
            root without ``NAME``, a link, or a cloud-save staging folder (``<name>/memory``: replay
            writes only a memory root's character folder).
    """
    if character is not None:
        _check_name(character)
    src = Path(path)
    try:
        found = resolve(src, character, extract=False)
    except DiagnosisInputError as exc:
        raise BadInputError(str(exc)) from exc
    if found.zip_path is not None:
        return ReplayTarget(src, character or src.stem, None, None, zip_path=src)
    if found.kind == "root" and character is None:
        names = ", ".join(e.name for e in found.characters if e.refusal is None)
        hint = f" (characters in it: {names})" if names else ""
        raise BadInputError(f"{src} is not a character folder: name the character with --character{hint}")
    (entry,) = found.characters
    if entry.refusal is not None:
        raise BadInputError(f"{src}: {entry.refusal.message}")
    if entry.path.name != entry.name:
        raise BadInputError(
            f"{entry.path} is the memory of the cloud-save staging folder {entry.name!r}: replay acts only on a "
            "character folder of a memory root"
        )
    _check_name(entry.name)
    return ReplayTarget(src, entry.name, entry.path.parent, entry.path)


def _check_name(character: str) -> None:
    try:
        check_character_name(character)
    except InvalidCharacterError as exc:
        raise BadInputError(str(exc)) from exc


# -- zip exports --------------------------------------------------------------------------------


def suggest_extract_dir(zip_path: str | os.PathLike[str]) -> Path:
    """A folder beside the zip that does not exist yet (``<stem>-extracted``, then ``-2``, ...)."""
    z = Path(zip_path)
    candidate = z.with_name(f"{z.stem}-extracted")
    n = 2
    while candidate.exists():
        candidate = z.with_name(f"{z.stem}-extracted-{n}")
        n += 1
    return candidate


def extract_export(zip_path: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Extract a zip export into ``dest`` (which must not exist or be empty), safely.

    The extractor of ``check`` (:func:`journal.diagnosis.extract_zip`) in its strict mode: any
    unsafe member (absolute path, ``..``, drive letter, link, special file, duplicate name, ...)
    refuses the whole archive before anything is written, and so does an archive above
    :data:`EXTRACT_MAX_BYTES` uncompressed or :data:`EXTRACT_MAX_MEMBERS` members.

    Returns:
        ``dest``.

    Raises:
        BadInputError: unsafe or oversized archive, or ``dest`` is not empty.
    """
    d = Path(dest)
    if d.exists() and any(d.iterdir()):
        raise BadInputError(f"{d} exists and is not empty")
    limits = ZipLimits(max_total_bytes=EXTRACT_MAX_BYTES, max_members=EXTRACT_MAX_MEMBERS)
    try:
        d.mkdir(parents=True, exist_ok=True)
        extract_zip(zip_path, d, limits, strict=True, private=False)
    except DiagnosisInputError as exc:
        raise BadInputError(str(exc)) from exc
    return d
