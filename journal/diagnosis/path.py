"""The diagnosis of a PATH: a memory root, one character folder, or a ``.zip`` export of either."""

from __future__ import annotations

import os
import stat
import tempfile
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from journal.diagnosis.character import diagnose_character, journal_size, server_status
from journal.diagnosis.recorded import Recorded, read_recorded, remake_refused
from journal.diagnosis.values import (
    CharacterDiagnosis,
    Diagnosis,
    ServerStatus,
    TempRoot,
    UnknownCharacterError,
    UnreadableInputError,
)
from journal.handlers import HandlerRegistry
from journal.inputs import (
    CHARACTER_MARKERS,
    CharacterEntry,
    ZipLimits,
    characters_in,
    descend,
    extract_zip,
    holds_characters,
    is_character_folder,
)
from journal.serverrules import CharacterList, find_characters_file, read_characters


def diagnose_path(
    path: str | os.PathLike[str],
    *,
    character: str | None = None,
    registry: HandlerRegistry | None = None,
    server: ServerStatus | None = None,
    now: datetime | None = None,
    zip_limits: ZipLimits | None = None,
    progress: Callable[[int, int], None] | None = None,
    characters_file: str | os.PathLike[str] | None = None,
) -> Diagnosis:
    """Diagnose a memory root, one character folder, or a ``.zip`` export of either.

    ``characters_file``: the memory server's ``characters.json`` (default: the one beside the
    memory root, ``../config/characters.json``, when it exists; memory-format §9.1). A character
    it does not list is one the server never reconciles.

    ``progress(bytes_read, total_bytes)`` follows the journal scans of all characters together
    (never backwards); it may raise to cancel, and the exception propagates (a zip's extracted copy
    is removed first).

    A folder holding memory files (``events.ndjson``, ``persona.json``, …) is one character;
    any other folder is a memory root whose sub-folders are characters (files and dot-folders
    ignored). A zip is extracted to a private temp folder (see :class:`Diagnosis` for its
    lifetime); members that would land outside it, links and special files are refused with an
    ``input.refused`` finding; :class:`ZipLimits` stops a zip bomb.

    Raises:
        UnreadableInputError: PATH does not exist or cannot be read, is neither a folder nor a
            zip, or the zip is corrupt or too big.
        UnknownCharacterError: ``character`` is not among PATH's characters.
        UnreadableInputError: also when ``characters_file`` is given and does not exist.
    """
    given = os.fspath(path)
    if characters_file is not None and not os.path.lexists(characters_file):
        raise UnreadableInputError(f"{os.fspath(characters_file)}: no such file (--characters)")
    p = Path(given)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UnreadableInputError(f"{given}: no such file or folder") from None
    except OSError as exc:
        raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
    probe = server if server is not None else server_status()
    recorded: Recorded | None = None
    if stat.S_ISDIR(st.st_mode):
        try:
            os.listdir(p)
        except OSError as exc:
            raise UnreadableInputError(f"{given}: cannot be listed: {exc.strerror or exc}") from exc
        diag = Diagnosis(given, str(p.absolute()), server=probe)
        base = p
        zip_name = None
    elif stat.S_ISREG(st.st_mode):
        try:
            is_zip = zipfile.is_zipfile(p)
        except OSError as exc:
            raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
        if not is_zip:
            raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")
        temp = TempRoot(tempfile.mkdtemp(prefix="memory-inspector-zip-"))
        try:
            refused = extract_zip(p, temp.path, zip_limits)
        except BaseException:
            temp.close()
            raise
        recorded = read_recorded(temp.path)  # a support bundle: its manifest's facts of the original
        if recorded is not None:
            refused = [*refused, *recorded.findings]
        diag = Diagnosis(given, temp.path, is_zip=True, findings=refused, server=probe, _temp=temp)
        base = descend(Path(temp.path))
        zip_name = p.stem
        if recorded is not None:
            remake_refused(recorded, base)
    else:
        raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")

    try:
        _fill(diag, base, zip_name, character, registry, probe, now, progress, characters_file, recorded)
    except BaseException:
        diag.close()
        raise
    return diag


def _fill(
    diag: Diagnosis,
    base: Path,
    zip_name: str | None,
    character: str | None,
    registry: HandlerRegistry | None,
    server: ServerStatus,
    now: datetime | None,
    progress: Callable[[int, int], None] | None = None,
    characters_file: str | os.PathLike[str] | None = None,
    recorded: Recorded | None = None,
) -> None:
    root_real = os.path.realpath(diag.root if diag.is_zip else base)
    if is_character_folder(base):
        diag.kind = "character"
        diag.memory_root = str(base.parent.absolute())
        name = base.name
        if diag.is_zip and Path(diag.root) == base:
            name = zip_name or name
        elif base.name == "memory" and (
            (base.parent / "profile.json").exists() or (base.parent / "meta.json").exists()
        ):
            name = base.parent.name  # cloud-save staging: <name>/memory/<files>
        entries = [CharacterEntry(name, base)]
    else:
        diag.kind = "root"
        diag.memory_root = str(base.absolute())
        entries = characters_in(base, root_real)
        if not holds_characters(entries) and not diag.findings:  # refused zip members are reported instead
            files = ", ".join(
                f for f in ("events.ndjson", "persona.json", "reflections.json") if f in CHARACTER_MARKERS
            )
            raise UnreadableInputError(
                f"{diag.path}: no character folder found here: a memory root holds one folder per character, "
                f"each with its memory files ({files}, …); a character folder holds those files itself"
            )
    if character is not None:
        entries = [e for e in entries if e.name == character]
        if not entries:
            raise UnknownCharacterError(f"{diag.path}: no character named {character!r}")
    found = characters_file if characters_file is not None else find_characters_file(diag.memory_root)
    listed = CharacterList() if found is None else read_characters(found)
    if recorded is not None and recorded.characters is not None and characters_file is None:
        listed = recorded.characters  # a bundle's: what its original's diagnosis read
    sizes = [0 if e.refusal is not None else journal_size(e.path) for e in entries]
    total = sum(sizes)
    shown = 0
    before = 0

    def overall(done: int) -> None:
        nonlocal shown
        shown = max(shown, min(done, total))  # a re-read (duplicate ids) never moves it back
        if progress is not None:
            progress(shown, total)

    def from_character(at: int) -> Callable[[int, int], None] | None:
        return None if progress is None else (lambda done, _total: overall(at + done))

    overall(0)
    for entry, size in zip(entries, sizes, strict=True):
        if entry.refusal is not None:
            cdiag = CharacterDiagnosis(entry.name, str(entry.path.absolute()))
            cdiag.findings = [entry.refusal]
        else:
            cdiag = diagnose_character(
                entry.path,
                registry=registry,
                server=server,
                now=now,
                root=root_real,
                name=entry.name,
                progress=from_character(before),
                characters=listed,
                recorded=None if recorded is None else recorded.folders.get(entry.path.name),
            )
        before += size
        overall(before)
        if diag.findings:
            cdiag.findings = [*cdiag.findings, *diag.findings]
        diag.characters.append(cdiag)
