"""The diagnosis of a PATH: a memory root, one character folder, or a ``.zip`` export of either."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime

from journal.diagnosis.character import diagnose_character, journal_size, server_status
from journal.diagnosis.values import CharacterDiagnosis, Diagnosis, ServerStatus, is_server_start_finding
from journal.handlers import HandlerRegistry
from journal.inputs import ResolvedInput, ZipLimits, resolve
from journal.serverrules import CharacterList, read_characters


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
    server_model: bool = True,
) -> Diagnosis:
    """Diagnose a memory root, one character folder, or a ``.zip`` export of either.

    What PATH holds is :func:`journal.inputs.resolve`'s answer: a folder holding memory files
    (``events.ndjson``, ``persona.json``, …) is one character; any other folder is a memory root
    whose sub-folders are characters (files and dot-folders ignored). A zip is extracted to a
    private temp folder (see :class:`Diagnosis` for its lifetime); members that would land outside
    it, links and special files are refused with an ``input.refused`` finding; :class:`ZipLimits`
    stops a zip bomb.

    ``characters_file``: the memory server's ``characters.json`` (default: the one beside the
    memory root, ``../config/characters.json``, when it exists; memory-format §9.1). A character
    it does not list is one the server never reconciles. The one read is
    :attr:`Diagnosis.characters_file`.

    ``server_model``: predict each character's next server start (see
    :func:`~journal.diagnosis.character.diagnose_character`).

    ``progress(bytes_read, total_bytes)`` follows the journal scans of all characters together
    (never backwards); it may raise to cancel, and the exception propagates (a zip's extracted copy
    is removed first).

    Raises:
        UnreadableInputError: PATH does not exist or cannot be read, is neither a folder nor a
            zip, the zip is corrupt or too big, or PATH holds no character folder
            (:class:`~journal.inputs.NoCharacterError`); also when ``characters_file`` is given
            and does not exist.
        UnknownCharacterError: ``character`` is not among PATH's characters.
    """
    probe = server if server is not None else server_status()
    found = resolve(path, character, zip_limits=zip_limits, characters_file=characters_file)
    diag = Diagnosis(
        found.path,
        str(found.root),
        is_zip=found.is_zip,
        kind=found.kind,
        memory_root=None if found.memory_root is None else str(found.memory_root),
        findings=list(found.refused),
        server=probe,
        characters_file=found.characters_file,
        cloud_layout=None if found.cloud is None else found.cloud.kind,
        _temp=found.take_temp(),
    )
    try:
        _diagnose_characters(diag, found, registry, probe, now, progress, server_model)
    except BaseException:
        diag.close()
        raise
    return diag


def _diagnose_characters(
    diag: Diagnosis,
    found: ResolvedInput,
    registry: HandlerRegistry | None,
    server: ServerStatus,
    now: datetime | None,
    progress: Callable[[int, int], None] | None = None,
    server_model: bool = True,
) -> None:
    """Diagnose each character :func:`~journal.inputs.resolve` found, with one overall progress."""
    root_real = os.path.realpath(found.root)
    entries = found.characters
    recorded = found.recorded
    if found.characters_file is not None:
        listed = read_characters(found.characters_file)
    elif recorded is not None and recorded.characters is not None:
        listed = recorded.characters  # a bundle's: what its original's diagnosis read
    else:
        listed = CharacterList()
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
                server_model=server_model,
            )
        before += size
        overall(before)
        if found.is_cloud_unit:
            _as_cloud_unit(cdiag, found, entry.name)
        if diag.findings:
            cdiag.findings = [*cdiag.findings, *diag.findings]
        diag.characters.append(cdiag)


#: A unit's "memory server's next start" (issue 26 §2): the download preview is where it applies.
NOT_A_MEMORY_FOLDER = "not applicable: a cloud-save unit is not a memory folder"


def _as_cloud_unit(cdiag: CharacterDiagnosis, found: ResolvedInput, name: str) -> None:
    """A cloud-save unit's diagnosis: no server start (it is no memory folder: its ``server.*``
    findings go), and the unit's own findings (fingerprint, manifest, layouts, fence, tombstone)."""
    from journal.cloudsave.verify import verify_unit  # journal.cloudsave imports the diagnosis

    cdiag.server_start = None
    cdiag.not_applicable = NOT_A_MEMORY_FOLDER
    cdiag.findings = [f for f in cdiag.findings if not is_server_start_finding(f)]
    assert found.cloud is not None
    for unit in found.cloud.units:
        if unit.name == name:
            cdiag.cloud_unit = verify_unit(unit, found.cloud.anchor)
            cdiag.findings.extend(cdiag.cloud_unit.findings)
