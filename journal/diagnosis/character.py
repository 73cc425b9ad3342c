"""The diagnosis of one character folder: the checks of :mod:`journal.diagnosis.checks`, in order."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from journal.diagnosis import checks, pending
from journal.diagnosis.checks import Character
from journal.diagnosis.findings import Findings
from journal.diagnosis.folder import Folder, probe_path
from journal.diagnosis.scan import JournalScan, scan_journal
from journal.diagnosis.server import check_server_start, predict_server_start
from journal.diagnosis.values import CharacterDiagnosis, ServerStatus
from journal.events import JOURNAL_NAME
from journal.handlers import HandlerRegistry, default_registry
from journal.recorded import RecordedCharacter
from journal.runtime import check_launcher_lock
from journal.serverrules import CharacterList


def server_status(environ: dict[str, str] | None = None) -> ServerStatus:
    """Probe the launcher lock without creating anything (see :func:`journal.runtime.check_launcher_lock`).

    Contention means the app is running; getting the lock means it is not (the lock is released
    at once); a missing lock file means it is not; any other error means unknown.
    """
    return check_launcher_lock(env=environ)


def diagnose_character(
    char_dir: str | os.PathLike[str],
    *,
    registry: HandlerRegistry | None = None,
    server: ServerStatus | None = None,
    now: datetime | None = None,
    root: str | os.PathLike[str] | None = None,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    characters: CharacterList | None = None,
    keep_run: bool = False,
    journal: JournalScan | None = None,
    recorded: RecordedCharacter | None = None,
    server_model: bool = True,
) -> CharacterDiagnosis:
    """Diagnose one character folder; read-only, never raises on content.

    Args:
        char_dir: the character folder.
        registry: the handlers replay would use (default: the five production handlers).
        server: the launcher-lock probe (default: probe now, honouring ``NEKO_RUNTIME_STATE_DIR``).
        now: the time the compaction age is measured against (default: now).
        root: the memory root: symbolic links that point outside it are not followed (default:
            the character folder itself). Views, archive folders and shards follow replay's
            stricter rule whatever ``root`` is: a link leading out of the character folder is
            not followed, and replay is predicted to stop there as it does.
        name: the character name (default: the folder name).
        progress: called as ``progress(bytes_read, journal_bytes)`` every few MiB of the journal
            scan; it may raise (to cancel), and the exception propagates.
        characters: the memory server's ``characters.json`` as read (default: not known).
        keep_run: keep our replay's pass over the tail, for a replay plan
            (:class:`journal.diagnosis.pending.TailRun`, as ``diagnosis.tail.run``).
        journal: the journal as an earlier diagnosis of this folder read it (its ``tail.run.scan``),
            taken instead of reading the journal again. The caller vouches that the journal has
            not changed since (same file, size and modification time); nothing else is taken
            from that diagnosis (its event states are given afresh).
        recorded: what a support bundle's manifest records of this folder's original
            (:mod:`journal.recorded`), for a folder of a bundle.
        server_model: predict the memory server's next start (``server_start`` and the
            ``server.*`` findings but ``server.running``); a command that shows neither (``history``)
            leaves it out, and ``server_start`` stays ``None``. Every other value is the same.
    """
    cd = Path(char_dir)
    c = Character(
        CharacterDiagnosis(name if name is not None else cd.name, str(cd.absolute())),
        cd,
        os.path.realpath(root if root is not None else cd),
        registry if registry is not None else default_registry(),
        Findings(),
        now,
    )
    if characters is not None:
        c.characters = characters
    c.recorded = recorded
    report = None if progress is None else _bounded(progress, journal_size(cd))
    _run(c, server if server is not None else server_status(), report, keep_run, journal, server_model)
    c.diag.findings = c.findings.result()
    return c.diag


def read_character_journal(
    char_dir: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    recorded: RecordedCharacter | None = None,
) -> CharacterDiagnosis:
    """The journal step of :func:`diagnose_character` alone, for a command that only looks an event
    up (``chat --around``): the journal read as the diagnosis reads it (the one reader; a journal
    linked out of ``root`` refused, a bundle's unreadable journal unreadable, a FIFO never waited
    on), and nothing after it: no views, checks, replay or server model.

    Its events' states are not decided (each reads ``pending``) and its findings are only those
    of reading the journal (``input.refused``, ``journal.absent``); a command that shows states or
    findings diagnoses the folder. Arguments as :func:`diagnose_character`'s.
    """
    cd = Path(char_dir)
    c = Character(
        CharacterDiagnosis(name if name is not None else cd.name, str(cd.absolute())),
        cd,
        os.path.realpath(root if root is not None else cd),
        default_registry(),
        Findings(),
        None,
    )
    c.recorded = recorded
    _read_journal(c, None if progress is None else _bounded(progress, journal_size(cd)))
    c.diag.findings = c.findings.result()
    return c.diag


def journal_size(cd: Path) -> int:
    """The size of a character's journal (0 when it cannot be read), for progress totals."""
    try:
        return os.stat(cd / JOURNAL_NAME).st_size
    except OSError:
        return 0


def _bounded(progress: Callable[[int, int], None], total: int) -> Callable[[int], None]:
    def report(done: int) -> None:
        progress(min(done, total), total)

    return report


def _run(
    c: Character,
    server: ServerStatus,
    report: Callable[[int], None] | None,
    keep_run: bool = False,
    journal: JournalScan | None = None,
    server_model: bool = True,
) -> None:
    try:
        c.names = set(os.listdir(c.dir))
    except OSError as exc:
        c.diag.journal.unreadable = f"cannot read {c.journal_path}: {exc.strerror or exc}"
        c.findings.add(
            "journal.absent",
            "error",
            f"the character folder {c.dir} cannot be listed: {exc.strerror or exc}; nothing in it was checked",
        )
        return
    checks.check_leftovers(c)
    _read_journal(c, report, journal)
    checks.check_sentinel(c)
    c.folder = Folder(c.dir, c.root_real, c.findings, None if c.recorded is None else c.recorded.unreadable)
    c.folder.load_views()
    c.folder.scan_archives()
    checks.check_unhandled_orphans(c)
    checks.check_archives(c)
    checks.check_suspects(c)
    pending.decide_pending(c, keep_run=keep_run)
    pending.check_pending(c)
    checks.check_defects(c)
    checks.check_outbox(c)
    checks.check_compaction(c)
    checks.check_absent(c)
    checks.check_server(c, server)
    if server_model:
        c.diag.server_start = start = predict_server_start(c, c.characters)
        check_server_start(c, start)


def _read_journal(c: Character, report: Callable[[int], None] | None, journal: JournalScan | None = None) -> None:
    probe = probe_path(c.journal_path, c.root_real)
    if probe.kind == "refused":
        c.diag.journal.unreadable = f"{c.journal_path} is {probe.reason}"
        c.findings.add("input.refused", "warning", f"{JOURNAL_NAME} is {probe.reason}", file=JOURNAL_NAME)
        return
    why = None if c.recorded is None else c.recorded.unreadable.get(JOURNAL_NAME)
    if probe.kind == "missing" and why is None:
        return
    c.diag.journal.present = True
    try:
        if why is not None:  # a bundle's journal its sender's diagnosis could not read: not in the bundle
            raise OSError(errno.EACCES, f"{why} (in the original, as the bundle's manifest records)")
        if probe.kind != "file":
            raise IsADirectoryError(21, "Is a directory" if probe.kind == "dir" else probe.reason)
        scan = journal if journal is not None else scan_journal(c.journal_path, report)
    except OSError as exc:
        c.diag.journal.unreadable = f"cannot read {c.journal_path}: {exc.strerror or exc}"
        c.findings.add(
            "journal.absent",
            "error",
            f"{JOURNAL_NAME} exists but cannot be read: {exc.strerror or exc}",
            file=JOURNAL_NAME,
        )
        return
    c.journal_ok = True
    c.events, c.defects, c.bom_lines = scan.events, scan.defects, scan.bom_lines
    c.diag.events, c.diag.defects = scan.events, scan.defects
    c.diag.journal.lines, c.diag.journal.events, c.diag.journal.bytes = scan.lines, len(scan.events), scan.size
