"""Step 0: which character folder a replay acts on (:func:`resolve_target`), and the way out for a
zip export (:func:`suggest_extract_dir`, :func:`extract_export`)."""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from inspector.core.replay.errors import BadInputError
from journal.diagnosis import DiagnosisInputError, ZipLimits, extract_zip
from journal.errors import InvalidCharacterError
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


def resolve_target(path: str | os.PathLike[str], character: str) -> ReplayTarget:
    """Find the character folder for ``PATH --character NAME``.

    PATH may be a memory root holding ``NAME/`` or the character folder itself (named ``NAME``).
    A ``.zip`` export is returned as such (``is_zip``); :func:`preflight` refuses it.

    Raises:
        BadInputError: invalid name, PATH missing, or no folder ``NAME`` there.
    """
    try:
        check_character_name(character)
    except InvalidCharacterError as exc:
        raise BadInputError(str(exc)) from exc
    src = Path(path)
    if not src.exists():
        raise BadInputError(f"{src}: no such file or folder")
    if src.is_file():
        if zipfile.is_zipfile(src):
            return ReplayTarget(src, character, None, None, zip_path=src)
        raise BadInputError(f"{src}: not a folder or a .zip export")
    inner = src / character
    if inner.is_dir() and not inner.is_symlink():
        return ReplayTarget(src, character, src, inner)
    if src.name == character and not src.is_symlink():
        return ReplayTarget(src, character, src.parent, src)
    raise BadInputError(f"{src}: no character folder {character!r} in it")


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
