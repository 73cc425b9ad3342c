"""Guarded replay and restore: the one action of the inspector that writes into a memory folder.

Qt-free; the command line (:mod:`inspector.replay_cmd`) and the window
(:mod:`inspector.widgets.replay_dialog`) run the same steps and show the same values.

The guards, in order (issue 6):

1. :func:`preflight` — refuse while the memory server runs (the launcher lock of memory-format
   §6.2; an override exists for the command line only and is recorded), warn when the journal,
   the sentinel or a view changed in the last 10 seconds, refuse a folder that is not writable or
   a zip export (offering :func:`extract_export`).
2. :func:`make_plan` — a dry run of the same reconciler on a scratch copy: which events would
   apply, where replay would stop and why (:func:`explain_block`), a per-file diff, and the
   fingerprints of every file the plan depends on. Nothing in the real folder changes.
3. :func:`create_backup` — the character folder is copied to a timestamped folder *outside* it,
   with a SHA-256 manifest.
4. :func:`fingerprint_folder` — checked against the plan (and against the backup's manifest)
   right before applying; any difference stops the run so that it can be re-planned.
5. :func:`execute` — the reconciler on the real folder, with progress and cancel between events,
   then a fresh look at the folder (:func:`folder_state`, plus the diagnosis when available).
6. A JSON report beside the backup (plan, outcome, ids applied, where it stopped, fingerprints,
   who and when, override flags).
7. :func:`plan_restore` / :func:`execute_restore` — put a backup back, verified against its
   manifest, one atomic replace per file through :mod:`journal.fs`.

Questions go through an injected :class:`ReplayPrompter` (:class:`HeadlessReplayPrompter` for tests and
scripts); :func:`run_guarded_replay` and :func:`run_guarded_restore` are the synchronous drivers the
command line uses. The window runs the same steps itself, off the GUI thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import hashlib
import json
import os
import secrets
import shutil
import socket
import sys
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from inspector.core.reasons import REASONS
from journal import fs, runtime
from journal.diagnose import DiagnosisInputError, ZipLimits, extract_zip
from journal.errors import InvalidCharacterError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event
from journal.handlers import HandlerRegistry, archive_target, entry_ref
from journal.log import EventLog, check_character_name
from journal.reader import read_journal
from journal.reconcile import (
    DryRun,
    FolderDiff,
    Reconciler,
    ReplayReport,
    ReplayStop,
    dry_run,
    replay_files,
    sentinel_id,
)
from journal.runtime import LauncherLock
from journal.runtime import runtime_state_dir as runtime_state_dir
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name, load_shard
from journal.views import REFLECTIONS, VIEW_TYPES, load_view, parse_json_bytes, read_sentinel

#: A file changed less than this many seconds ago means a writer may be active.
RECENT_WRITE_SECONDS = 10.0

#: How often a run re-plans after the folder changed under it before giving up.
MAX_REPLANS = 3

#: Files whose content the plan depends on (besides the shards of both archive folders).
WATCHED_FILES = (JOURNAL_NAME, SENTINEL_NAME, *VIEW_TYPES)

#: Zip extraction limits: total uncompressed bytes and members (zip-bomb guard).
EXTRACT_MAX_BYTES = 4 << 30
EXTRACT_MAX_MEMBERS = 100_000

MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
BACKUP_FILES = "files"

# Question keys (what a prompter is asked).
ASK_APPLY = "confirm_apply"
ASK_RECENT_WRITES = "recent_writes"
ASK_EXTRACT = "extract_zip"
ASK_RESTORE = "confirm_restore"


def _tool_version() -> str:
    from inspector import __version__

    return f"memory-inspector {__version__}"


# -- errors ---------------------------------------------------------------------------------------


class GuardedReplayError(Exception):
    """Root of the errors raised by guarded replay and restore."""


class BadInputError(GuardedReplayError):
    """The path, character, event id or backup folder given cannot be used (exit code 2)."""


class FolderBusyError(GuardedReplayError):
    """The folder kept changing while it was being planned: a writer is active."""


class BackupError(GuardedReplayError):
    """A backup could not be written, or a backup folder is not a usable backup."""


# -- prompter ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    """A yes/no question for the person running the replay.

    Attributes:
        key: what is asked (``confirm_apply``, ``recent_writes``, ``extract_zip``,
            ``confirm_restore``), so a headless prompter can answer per key.
        title: a short title.
        text: the question in one or two sentences.
        details: supporting text (the plan, the diff, what will be replaced), may be empty.
        default: the answer a person gets by just pressing Enter.
    """

    key: str
    title: str
    text: str
    details: str = ""
    default: bool = False


class ReplayPrompter(Protocol):
    """Where guarded replay asks its questions and says what it is doing (git-cola style).

    The command line answers on the terminal, the window with dialogs, tests with
    :class:`HeadlessReplayPrompter`.
    """

    def ask(self, question: Question) -> bool:
        """Return ``True`` to go ahead."""
        ...

    def notify(self, text: str) -> None:
        """Tell the person something that needs no answer (a guard's finding, a plan, a result)."""
        ...


class HeadlessReplayPrompter:
    """A prompter without a person: answers from a fixed value, a mapping per key, or a function.

    Args:
        answers: ``True``/``False`` for every question, a mapping ``key → bool`` (keys not in it
            get ``default``), or ``fn(question) -> bool``.
        default: the answer for keys a mapping does not name.

    Attributes:
        asked: every question asked, in order.
        notes: every notification, in order.
    """

    def __init__(
        self,
        answers: bool | Mapping[str, bool] | Callable[[Question], bool] = False,
        *,
        default: bool = False,
    ) -> None:
        self._answers = answers
        self._default = default
        self.asked: list[Question] = []
        self.notes: list[str] = []

    def ask(self, question: Question) -> bool:
        self.asked.append(question)
        if isinstance(self._answers, bool):
            return self._answers
        if isinstance(self._answers, Mapping):
            return bool(self._answers.get(question.key, self._default))
        return bool(self._answers(question))

    def notify(self, text: str) -> None:
        self.notes.append(text)

    def keys(self) -> list[str]:
        """The keys of the questions asked, in order."""
        return [q.key for q in self.asked]


# -- target ---------------------------------------------------------------------------------------


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


# -- launcher lock (memory-format §6.2) -----------------------------------------------------------


#: How the replay guard words each finding of the probe (``check`` keeps the journal's wording).
_LOCK_WORDING = {
    "missing": "no launcher lock at {path}",
    "not_held": "the launcher lock {path} is free",
    "held": "the memory server is running (launcher lock {path} is held)",
    "open_error": "cannot open the launcher lock {path}: {error}",
    "lock_error": "cannot test the launcher lock {path}: {error}",
}


def check_launcher_lock(
    state_dir: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> LauncherLock:
    """Whether the memory server runs: :func:`journal.runtime.check_launcher_lock`, worded for replay.

    ``state_dir`` (or ``NEKO_RUNTIME_STATE_DIR``) names the one folder to look in; otherwise the
    platform's folder and the legacy locations are all tried and the worst state wins. The guard
    treats ``unknown`` like ``running``.
    """
    lock = runtime.check_launcher_lock(state_dir, env=env, platform=platform)
    return dataclasses.replace(lock, message=_LOCK_WORDING[lock.cause].format(path=lock.path, error=lock.error))


# -- preflight ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Refusal:
    """A guard that refuses the run.

    Attributes:
        code: ``server.running`` | ``server.unknown`` | ``folder.not_writable`` | ``input.zip_export``.
        message: the reason, for people.
        offer: ``extract`` when the person can be offered to extract a zip export first.
    """

    code: str
    message: str
    offer: str | None = None


@dataclass(frozen=True, slots=True)
class PreflightWarning:
    """Something a person should know before confirming (``files.recent``, ``server.override``)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Preflight:
    """The outcome of the first guard.

    Attributes:
        target: what is replayed.
        server: the launcher lock check.
        override_server_lock: the command-line override was given (recorded in the report).
        refusals: guards that refuse the run (empty when it may go on).
        warnings: things to confirm.
        recent: files changed in the last 10 seconds, with their age in seconds.
    """

    target: ReplayTarget
    server: LauncherLock
    override_server_lock: bool = False
    refusals: tuple[Refusal, ...] = ()
    warnings: tuple[PreflightWarning, ...] = ()
    recent: tuple[tuple[str, float], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refusals

    def to_json(self) -> dict[str, Any]:
        return {
            "server": {"state": self.server.state, "lock_file": self.server.path, "message": self.server.message},
            "override_server_lock": self.override_server_lock,
            "refusals": [{"code": r.code, "message": r.message} for r in self.refusals],
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
            "recent_files": {name: round(age, 3) for name, age in self.recent},
        }


def folder_writable(char_dir: Path) -> bool:
    """Whether replay can replace files in ``char_dir`` and its archive folders.

    An atomic replace needs write access to the folder, not to the file.
    """
    folders = [char_dir] + [char_dir / a for a in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE) if (char_dir / a).is_dir()]
    return all(os.access(f, os.W_OK | os.X_OK) for f in folders)


def recent_changes(
    char_dir: Path, now: float | None = None, window: float = RECENT_WRITE_SECONDS
) -> list[tuple[str, float]]:
    """Watched files (journal, sentinel, views) modified less than ``window`` seconds before ``now``."""
    now = time.time() if now is None else now
    out = []
    for name in WATCHED_FILES:
        try:
            mtime = (char_dir / name).stat().st_mtime
        except OSError:
            continue
        age = now - mtime
        if age < window:
            out.append((name, max(age, 0.0)))
    return out


def preflight(
    target: ReplayTarget,
    *,
    override_server_lock: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
    now: float | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> Preflight:
    """Run the first guard: server lock, recent writes, writability, zip export.

    Args:
        override_server_lock: the command line's ``--i-know-the-server-is-stopped``; the window never
            passes it. A held (or unknown) lock then becomes a warning instead of a refusal.
        state_dir: where ``launcher.lock`` lives (default: ``NEKO_RUNTIME_STATE_DIR`` or the
            platform's folder).
        now: the clock, for tests.
        writable: the writability test (injectable: root can write anywhere).
    """
    server = check_launcher_lock(state_dir)
    refusals: list[Refusal] = []
    warnings: list[PreflightWarning] = []
    if server.state != "free":
        code = "server.running" if server.state == "running" else "server.unknown"
        if override_server_lock:
            warnings.append(
                PreflightWarning(
                    "server.override",
                    f"{server.message}; going on because --i-know-the-server-is-stopped was given "
                    "(recorded in the report)",
                )
            )
        else:
            why = (
                "a live server writes the same files and could undo the replay or be undone by it"
                if server.state == "running"
                else "it cannot be proved that the memory server is stopped"
            )
            refusals.append(Refusal(code, f"{server.message}: stop N.E.K.O first ({why})"))
    recent: list[tuple[str, float]] = []
    if target.zip_path is not None:
        refusals.append(
            Refusal(
                "input.zip_export",
                f"{target.zip_path} is a zip export; replay writes, so extract it to a folder first "
                f"(suggested: {suggest_extract_dir(target.zip_path)})",
                offer="extract",
            )
        )
    elif target.char_dir is not None:
        if not writable(target.char_dir):
            refusals.append(
                Refusal("folder.not_writable", f"{target.char_dir} is not writable: replay could not save anything")
            )
        recent = recent_changes(target.char_dir, now)
        if recent:
            names = ", ".join(f"{n} ({a:.0f} s ago)" for n, a in recent)
            warnings.append(
                PreflightWarning(
                    "files.recent", f"changed in the last {RECENT_WRITE_SECONDS:.0f} s: {names}; a writer may be active"
                )
            )
    return Preflight(target, server, override_server_lock, tuple(refusals), tuple(warnings), tuple(recent))


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

    The extractor of ``check`` (:func:`journal.diagnose.extract_zip`) in its strict mode: any
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


# -- fingerprints ---------------------------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def fingerprint_folder(char_dir: str | os.PathLike[str]) -> dict[str, str | None]:
    """SHA-256 of every file the plan depends on: journal, sentinel, views and every shard.

    Returns:
        relative path → ``"sha256:<hex>"``, or ``None`` for a watched file that does not exist.
        Shards appear only when they exist (a new shard is a difference too).
    """
    cd = Path(char_dir)
    out: dict[str, str | None] = {}
    for name in WATCHED_FILES:
        p = cd / name
        out[name] = f"sha256:{_sha256_file(p)}" if p.is_file() and not p.is_symlink() else None
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = cd / archive
        if not folder.is_dir() or folder.is_symlink():
            continue
        for name in sorted(os.listdir(folder)):
            p = folder / name
            if p.is_file() and not p.is_symlink():
                out[f"{archive}/{name}"] = f"sha256:{_sha256_file(p)}"
    return out


def fingerprint_changes(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[str]:
    """Relative paths whose fingerprint differs (appeared, vanished or changed)."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


# -- events, orphans, blocks ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedEvent:
    """One event of a plan: what it is and which entry it touches.

    Attributes:
        index: 0-based position among the journal's events.
        line: 1-based journal line.
    """

    index: int
    line: int
    event_id: str
    type: str
    ts: str
    entry: str | None

    @classmethod
    def of(cls, index: int, ev: Event) -> PlannedEvent:
        return cls(
            index,
            ev.line,
            ev.event_id,
            ev.type if isinstance(ev.type, str) else "",
            str(ev.ts or ""),
            entry_ref(ev.type, ev.payload),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "entry": self.entry,
        }

    def label(self) -> str:
        entry = f" {self.entry}" if self.entry else ""
        return f"#{self.index} (line {self.line}) {self.type}{entry}  [{self.event_id}]"


@dataclass(frozen=True, slots=True)
class BlockExplanation:
    """Why replay cannot apply an event, in words, and what a person can do about it.

    Attributes:
        event_id, index, type: the event.
        reason: ``no_handler`` | ``view_drift`` | ``corrupt_view`` | ``corrupt_shard`` |
            ``bad_shard_name`` | ``handler_error`` | ``sentinel_write``.
        message: the technical message from the handler.
        title: one line.
        why: what it means for the folder.
        actions: what a person can do, one suggestion per item.
    """

    event_id: str
    index: int
    type: str
    reason: str
    message: str
    title: str
    why: str
    actions: tuple[str, ...]

    def lines(self) -> list[str]:
        out = [self.title, f"  reason: {self.reason} — {self.message}", f"  {self.why}", "  What you can do:"]
        out += [f"   - {a}" for a in self.actions]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "index": self.index,
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "explanation": self.why,
            "actions": list(self.actions),
        }


def explain_block(stop: ReplayStop) -> BlockExplanation:
    """Human text for a replay stop: what happened and what a person can do about it."""
    text = REASONS.get(stop.reason, REASONS["handler_error"])
    what = stop.type or "(missing type)"
    return BlockExplanation(
        stop.event_id,
        stop.index,
        stop.type,
        stop.reason,
        stop.message,
        f"Blocked at event #{stop.index} ({what}): it {text.title}.",
        text.why,
        text.actions,
    )


def _view_holds(char_dir: Path, view: str, entry_id: str, entity_key: str | None) -> bool:
    """Whether ``view`` holds the entry (raises ViewCorruptError)."""
    obj = load_view(char_dir / view, VIEW_TYPES[view])
    if view == REFLECTIONS:
        return any(isinstance(e, dict) and e.get("id") == entry_id for e in obj)
    sections = [obj.get(entity_key)] if entity_key is not None else list(obj.values())
    for section in sections:
        facts = section.get("facts") if isinstance(section, dict) else None
        if isinstance(facts, list) and any(isinstance(e, dict) and e.get("id") == entry_id for e in facts):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Orphan:
    """An archive event behind the sentinel whose entry is in neither the view nor its shard.

    Attributes:
        event: the event.
        archive: ``reflection_archive`` or ``persona_archive``.
        shard: the basename named by the event.
        entry_id: the archived entry.
        problem: ``None`` when a repair can put the entry back; else the reason it cannot
            (``bad_shard_name``, ``corrupt_shard``, ``corrupt_view``) and :attr:`block` explains it.
    """

    event: PlannedEvent
    archive: str
    shard: str
    entry_id: str
    problem: str | None = None
    block: BlockExplanation | None = None

    @property
    def repairable(self) -> bool:
        return self.problem is None


def find_orphaned_archive_events(char_dir: str | os.PathLike[str], events: list[Event] | None = None) -> list[Orphan]:
    """Archive events at or before the sentinel whose entry is lost (diagnosis: ``archive_entry_lost``).

    Only when the sentinel names an event of the journal: otherwise every event is pending and
    replay, not repair, is the way to recover them. Events whose shard name is invalid, whose
    shard is corrupt or whose view is corrupt are returned too, not repairable, with the reason.
    """
    cd = Path(char_dir)
    if events is None:
        events = read_journal(cd / JOURNAL_NAME).events
    sentinel = read_sentinel(cd)
    if sentinel.event_id is None:
        return []
    last = next((i for i, ev in enumerate(events) if ev.event_id == sentinel.event_id), None)
    if last is None:
        return []
    out: list[Orphan] = []
    for i, ev in enumerate(events[: last + 1]):
        target = archive_target(ev.type, ev.payload)
        if target is None:
            continue
        pe = PlannedEvent.of(i, ev)
        shard = str(target.shard)

        def unrepairable(
            reason: str, message: str, pe: PlannedEvent = pe, target: Any = target, shard: str = shard
        ) -> Orphan:
            stop = ReplayStop(pe.event_id, pe.index, pe.type, reason, message)
            return Orphan(pe, target.archive, shard, target.entry_id, reason, explain_block(stop))

        try:
            if _view_holds(cd, target.view, target.entry_id, target.entity_key):
                continue
        except Exception as exc:
            out.append(unrepairable("corrupt_view", str(exc)))
            continue
        if not is_shard_name(target.shard):
            out.append(unrepairable("bad_shard_name", f"invalid shard basename {target.shard!r}"))
            continue
        try:
            entries = load_shard(cd / target.archive / shard)
        except Exception as exc:
            out.append(unrepairable("corrupt_shard", str(exc)))
            continue
        if entries is not None and any(isinstance(e, dict) and e.get("id") == target.entry_id for e in entries):
            continue
        out.append(Orphan(pe, target.archive, shard, target.entry_id))
    return out


# -- the plan -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scope:
    """What a replay covers.

    Attributes:
        kind: ``tail`` (every pending event, the default), ``until`` (the pending events up to and
            including ``until``) or ``repair`` (re-apply orphaned archive events, sentinel unchanged).
        until: the last event id for ``until``.
    """

    kind: str = "tail"
    until: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("tail", "until", "repair"):
            raise ValueError(f"unknown scope {self.kind!r}")
        if (self.kind == "until") != (self.until is not None):
            raise ValueError("an 'until' scope needs an event id, and only it")

    def describe(self) -> str:
        if self.kind == "until":
            return f"pending events up to and including {self.until}"
        if self.kind == "repair":
            return "repair orphaned archive events (the sentinel does not move)"
        return "the pending tail"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "until": self.until}


@dataclass(slots=True)
class Plan:
    """What a guarded replay would do, computed by a dry run on a scratch copy (a pure value).

    Attributes:
        target: the character folder.
        scope: what is covered.
        created_at: when the plan was made (local ISO-8601).
        fingerprints: what the plan saw (:func:`fingerprint_folder`).
        sentinel_state: ``ok`` / ``missing`` / ``malformed`` / ``null`` / ``unknown_id``.
        sentinel_id: the sentinel's event id, when it names one.
        sentinel_index: its index among the events, when found.
        total_events: events in the journal.
        journal_present: whether there is a journal at all (a cloud-save export has none).
        pending: events after the sentinel.
        events: what would be applied (re-applied for ``repair``), in order.
        block: where replay would stop and why, if it would.
        diff: the per-file diff of the dry run.
        predicted: relative path → bytes of each replay file after the dry run.
        dry_report: the dry run's reconciler report.
        orphans: orphaned archive events (repairable or not), shown in every scope.
        unrepairable: for ``repair``: orphans that cannot be repaired, each explained.
        temp_files: leftover temp files of interrupted atomic writes that the real run removes
            (the reconciler sweeps them before replaying; not for ``repair``).
    """

    target: ReplayTarget
    scope: Scope
    created_at: str
    fingerprints: dict[str, str | None]
    sentinel_state: str
    sentinel_id: str | None
    sentinel_index: int | None
    total_events: int
    journal_present: bool
    pending: int
    events: list[PlannedEvent]
    block: BlockExplanation | None
    diff: FolderDiff
    predicted: dict[str, bytes]
    dry_report: ReplayReport
    orphans: list[Orphan] = field(default_factory=list)
    unrepairable: list[Orphan] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)

    @property
    def char_dir(self) -> Path:
        assert self.target.char_dir is not None
        return self.target.char_dir

    @property
    def has_work(self) -> bool:
        """Whether applying would run at least one handler."""
        return bool(self.events)

    @property
    def complete(self) -> bool:
        """Whether everything in scope would be applied (nothing blocked or unrepairable)."""
        return self.block is None and not self.unrepairable

    @property
    def apply_until(self) -> str | None:
        """The ``until`` the real run uses, so it never applies more than the plan shows."""
        if self.scope.kind == "repair":
            return None
        if self.block is None and self.events:
            return self.events[-1].event_id
        return self.scope.until

    @property
    def predicted_exit_code(self) -> int:
        """The exit code an apply of this plan would give: 0 when complete, else 1."""
        return 0 if self.complete else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope.to_json(),
            "created_at": self.created_at,
            "sentinel": {"state": self.sentinel_state, "event_id": self.sentinel_id, "index": self.sentinel_index},
            "events_in_journal": self.total_events,
            "pending": self.pending,
            "events": [e.to_json() for e in self.events],
            "stop": None if self.block is None else self.block.to_json(),
            "unrepairable": [o.block.to_json() for o in self.unrepairable if o.block is not None],
            "temp_files_removed": list(self.temp_files),
            "diff": diff_to_json(self.diff),
        }


def diff_to_json(diff: FolderDiff) -> dict[str, Any]:
    """A :class:`journal.reconcile.FolderDiff` as plain JSON."""
    return {
        "entries": [
            {
                "file": c.file,
                "entry": c.entry,
                "kind": c.kind,
                "fields": [{"field": f.field, "before": f.before, "after": f.after} for f in c.fields],
            }
            for c in diff.entries
        ],
        "shard_entries_added": [{"file": s.file, "entry_id": s.entry_id} for s in diff.shard_entries_added],
        "sentinel_before": diff.sentinel_before,
        "sentinel_after": diff.sentinel_after,
        "files_changed": list(diff.files_changed),
    }


def _now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def make_plan(
    target: ReplayTarget,
    scope: Scope | None = None,
    *,
    registry: HandlerRegistry | None = None,
    attempts: int = 3,
) -> Plan:
    """Plan a replay by a dry run on a scratch copy; the real folder is only read.

    The folder is fingerprinted before and after the dry run; if it changed meanwhile the plan is
    made again (at most ``attempts`` times), so a plan always describes one state of the folder.

    Raises:
        BadInputError: a zip target, or an ``until`` event that is not pending.
        FolderBusyError: the folder kept changing.
    """
    scope = scope or Scope()
    if target.char_dir is None:
        raise BadInputError(f"{target.source} is a zip export: extract it to a folder first")
    for _ in range(attempts):
        before = fingerprint_folder(target.char_dir)
        plan = _plan_once(target, scope, registry, before)
        if fingerprint_folder(target.char_dir) == before:
            return plan
    raise FolderBusyError(f"{target.char_dir} kept changing while it was planned: a writer is active")


def _plan_once(
    target: ReplayTarget, scope: Scope, registry: HandlerRegistry | None, fingerprints: dict[str, str | None]
) -> Plan:
    cd = target.char_dir
    assert cd is not None
    jr = read_journal(cd / JOURNAL_NAME)
    if jr.error:
        raise BadInputError(jr.error)
    events = jr.events
    index_of: dict[str, int] = {}
    for i, ev in enumerate(events):
        index_of.setdefault(ev.event_id, i)
    sentinel = read_sentinel(cd)
    state, sid, sindex = sentinel.state, sentinel.event_id, None
    if sid is not None:
        sindex = index_of.get(sid)
        if sindex is None:
            state = "unknown_id"
    pending = len(events) - (sindex + 1 if sindex is not None else 0)
    orphans = find_orphaned_archive_events(cd, events)
    unrepairable: list[Orphan] = []
    if scope.kind == "until":
        assert scope.until is not None
        at = index_of.get(scope.until)
        if at is None:
            raise BadInputError(f"no event {scope.until} in the journal")
        if sindex is not None and at <= sindex:
            raise BadInputError(f"event {scope.until} (#{at}) is already applied (the sentinel is at #{sindex})")
    if scope.kind == "repair":
        unrepairable = [o for o in orphans if not o.repairable]
        ids = [o.event.event_id for o in orphans if o.repairable]
        dry: DryRun = dry_run(cd, registry, repair=ids)
    else:
        dry = dry_run(cd, registry, until=scope.until)
    planned = [PlannedEvent.of(index_of[e], events[index_of[e]]) for e in dry.report.applied if e in index_of]
    block = explain_block(dry.report.stopped) if dry.report.stopped is not None else None
    return Plan(
        target=target,
        scope=scope,
        created_at=_now_iso(),
        fingerprints=fingerprints,
        sentinel_state=state,
        sentinel_id=sid,
        sentinel_index=sindex,
        total_events=len(events),
        journal_present=jr.present,
        pending=pending,
        events=planned,
        block=block,
        diff=dry.diff,
        predicted=dry.predicted,
        dry_report=dry.report,
        orphans=orphans,
        unrepairable=unrepairable,
        temp_files=[] if scope.kind == "repair" else leftover_temp_files(cd),
    )


def leftover_temp_files(char_dir: str | os.PathLike[str]) -> list[str]:
    """Temp files of interrupted atomic writes (``.nkatmp<8 hex>.tmp``) in the folder and its
    archive folders: the reconciler removes them before a real replay, so the plan lists them."""
    cd = Path(char_dir)
    out = []
    for sub in ("", REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        folder = cd / sub if sub else cd
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            p = folder / name
            if fs.is_temp_name(name) and p.is_file() and not p.is_symlink():
                out.append(f"{sub}/{name}" if sub else name)
    return out


def pending_events(char_dir: str | os.PathLike[str]) -> list[PlannedEvent]:
    """The events after the sentinel (for choosing an ``until`` event), in order."""
    cd = Path(char_dir)
    events = read_journal(cd / JOURNAL_NAME).events
    sid = read_sentinel(cd).event_id
    start = 0
    if sid is not None:
        for i, ev in enumerate(events):
            if ev.event_id == sid:
                start = i + 1
                break
    return [PlannedEvent.of(i, ev) for i, ev in enumerate(events) if i >= start]


# -- text (shared by the command line and the window) ---------------------------------------------


def _short(value: Any, limit: int = 70) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_preflight(pf: Preflight) -> list[str]:
    """The first guard's findings, one line each."""
    out = [f"Server: {pf.server.message}"]
    out += [f"Refused: {r.message}" for r in pf.refusals]
    out += [f"Warning: {w.message}" for w in pf.warnings]
    return out


def describe_diff(diff: FolderDiff, max_entries: int = 50) -> list[str]:
    """The per-file diff: entries with field-level before/after, shard entries added, sentinel."""
    out: list[str] = []
    for change in diff.entries[:max_entries]:
        out.append(f"  {change.file} {change.entry}: {change.kind}")
        for f in change.fields:
            out.append(f"      {f.field}: {_short(f.before)} → {_short(f.after)}")
    if len(diff.entries) > max_entries:
        out.append(f"  … and {len(diff.entries) - max_entries} more entries")
    for added in diff.shard_entries_added:
        out.append(f"  {added.file}: + entry {added.entry_id}")
    if diff.sentinel_before != diff.sentinel_after:
        out.append(f"  events_applied.json: {diff.sentinel_before} → {diff.sentinel_after}")
    if not out:
        out.append("  (no file changes)")
    return out


def describe_plan(plan: Plan, max_events: int = 50) -> list[str]:
    """The plan as text: scope, sentinel, events that would apply, where it stops and why, diff."""
    out = [f"Plan for {plan.target.character} ({plan.char_dir}), {plan.created_at}", f"Scope: {plan.scope.describe()}"]
    if not plan.journal_present:
        out.append("No journal (events.ndjson) in this folder: nothing to replay (a cloud-save export has views only).")
    where = {
        "ok": f"at #{plan.sentinel_index}",
        "missing": "missing: the whole journal replays (handlers are idempotent)",
        "null": "null: the whole journal replays",
        "malformed": "malformed: the whole journal replays",
        "unknown_id": f"names {plan.sentinel_id}, which is not in the journal: the whole journal replays",
    }.get(plan.sentinel_state, plan.sentinel_state)
    if plan.journal_present:
        out.append(f"Sentinel: {where}; {plan.total_events} events, {plan.pending} pending")
    verb = "re-apply" if plan.scope.kind == "repair" else "apply"
    out.append(f"Would {verb} {len(plan.events)} event(s):")
    out += [f"  {e.label()}" for e in plan.events[:max_events]]
    if len(plan.events) > max_events:
        out.append(f"  … and {len(plan.events) - max_events} more")
    if plan.block is not None:
        out += plan.block.lines()
    if plan.temp_files and plan.has_work:
        out.append(
            f"Also removes {len(plan.temp_files)} leftover temp file(s) of interrupted writes: "
            + ", ".join(plan.temp_files)
        )
    for orphan in plan.unrepairable:
        assert orphan.block is not None
        out.append("Cannot repair:")
        out += ["  " + line for line in orphan.block.lines()]
    if plan.scope.kind != "repair":
        lost = [o for o in plan.orphans if o.repairable]
        if lost:
            out.append(
                f"Note: {len(lost)} orphaned archive event(s) behind the sentinel; "
                "the 'repair orphans' scope puts their entries back."
            )
    out.append("Changes:")
    out += describe_diff(plan.diff)
    return out


# -- backups ----------------------------------------------------------------------------------------


def default_backup_root(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """``backups/`` in the user's data folder for memory-inspector.

    Linux: ``$XDG_DATA_HOME/memory-inspector/backups`` (default ``~/.local/share/...``); macOS:
    ``~/Library/Application Support/memory-inspector/backups``; Windows:
    ``%LOCALAPPDATA%\\memory-inspector\\backups``.
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if platform.startswith("win"):
        base = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else home / "AppData" / "Local"
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    return base / "memory-inspector" / "backups"


def check_backup_root(backup_root: str | os.PathLike[str], target: ReplayTarget) -> Path:
    """Refuse a backup folder inside the character folder, or inside the memory root when PATH
    named the memory root.

    Inside the root it would look like a character folder to the memory server (and a cloud
    restore deletes unknown folders there). When PATH was the character folder itself, its parent
    is not known to be a memory root (it may be a home folder holding the data folder), so only
    the character folder is checked.

    Raises:
        BadInputError: it is inside.
    """
    root = Path(backup_root).expanduser()
    resolved = root.resolve()
    checks = [(target.char_dir, "the character folder")]
    if target.root is not None and target.source.resolve() == target.root.resolve():
        checks.append((target.root, "the memory root"))
    for inside, what in checks:
        if inside is not None and resolved.is_relative_to(inside.resolve()):
            raise BadInputError(f"the backup folder {root} is inside {what} {inside}; choose one outside it")
    return root


@dataclass(frozen=True, slots=True)
class BackupFile:
    """One file of a backup manifest."""

    path: str
    sha256: str
    size: int


@dataclass(slots=True)
class Backup:
    """A backup folder: ``manifest.json``, ``files/`` (the copy) and, after a run, ``report.json``.

    Attributes:
        path: the backup folder.
        character: the character it was taken from.
        source: the character folder it was taken from (where restore puts it back).
        kind: ``replay`` (taken before a replay) or ``pre-restore`` (taken before a restore).
        created_at: local ISO-8601 with offset.
        files: every regular file, with its SHA-256 and size.
        dirs: every folder (relative), so empty folders come back too.
        skipped: entries not copied (links, which are never followed), with the reason.
    """

    path: Path
    character: str
    source: Path
    kind: str
    created_at: str
    files: list[BackupFile]
    dirs: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    @property
    def files_dir(self) -> Path:
        return self.path / BACKUP_FILES

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_NAME

    def hashes(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}

    def manifest(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "kind": self.kind,
            "tool": _tool_version(),
            "character": self.character,
            "source": str(self.source),
            "created_at": self.created_at,
            "created_by": _who(),
            "files": [{"path": f.path, "sha256": f.sha256, "size": f.size} for f in self.files],
            "dirs": list(self.dirs),
            "skipped": list(self.skipped),
        }


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in odd environments (containers without a passwd entry)
        return "unknown"


def _walk_regular_files(char_dir: Path) -> tuple[list[str], list[str], list[dict[str, str]]]:
    """Relative POSIX paths of regular files and folders under ``char_dir``; links skipped."""
    files: list[str] = []
    dirs: list[str] = []
    skipped: list[dict[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(char_dir, followlinks=False):
        base = Path(dirpath)
        rel_base = base.relative_to(char_dir)
        for d in sorted(dirnames):
            p = base / d
            rel = (rel_base / d).as_posix()
            if p.is_symlink():
                skipped.append({"path": rel, "reason": "link (not followed)"})
                dirnames.remove(d)
            else:
                dirs.append(rel)
        for name in sorted(filenames):
            p = base / name
            rel = (rel_base / name).as_posix()
            if p.is_symlink():
                skipped.append({"path": rel, "reason": "link (not followed)"})
            elif p.is_file():
                files.append(rel)
            else:
                skipped.append({"path": rel, "reason": "not a regular file"})
    return sorted(files), sorted(dirs), skipped


def create_backup(
    char_dir: str | os.PathLike[str],
    backup_root: str | os.PathLike[str],
    *,
    character: str | None = None,
    kind: str = "replay",
) -> Backup:
    """Copy a character folder to ``<backup_root>/<character>/<timestamp>-<hex>/`` with a manifest.

    The copy is written into a ``.partial-…`` folder, every file and the manifest durably through
    :mod:`journal.fs`, read back and verified, and only then renamed to its final name, so a folder
    without the ``.partial`` prefix is always a complete backup. Links are never followed.

    Raises:
        BackupError: a file could not be read or written (the partial folder is removed).
    """
    src = Path(char_dir)
    name = character or src.name
    group = Path(backup_root) / name
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    final = group / f"{stamp}-{secrets.token_hex(3)}"
    staging = group / f".partial-{final.name}"
    try:
        fs.ensure_dir(staging / BACKUP_FILES)
        files, dirs, skipped = _walk_regular_files(src)
        entries: list[BackupFile] = []
        for d in dirs:
            fs.ensure_dir(staging / BACKUP_FILES / d)
        for rel in files:
            data = (src / rel).read_bytes()
            fs.atomic_write_bytes(staging / BACKUP_FILES / rel, data)
            entries.append(BackupFile(rel, hashlib.sha256(data).hexdigest(), len(data)))
        backup = Backup(staging, name, src.resolve(), kind, _now_iso(), entries, dirs, skipped)
        problems = verify_backup(backup)
        if problems:
            raise BackupError(f"the backup does not read back as written: {problems[0]}")
        fs.atomic_write_json(staging / MANIFEST_NAME, backup.manifest())
        fs.replace_file(staging, final)
    except (OSError, BackupError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, BackupError):
            raise
        raise BackupError(f"could not back up {src} to {group}: {exc}") from exc
    backup.path = final
    return backup


def load_backup(path: str | os.PathLike[str]) -> Backup:
    """Read a backup folder's manifest.

    Raises:
        BadInputError: not a backup folder (no readable manifest of ours).
    """
    p = Path(path)
    try:
        data = parse_json_bytes((p / MANIFEST_NAME).read_bytes())
    except FileNotFoundError as exc:
        raise BadInputError(f"{p}: not a backup folder (no {MANIFEST_NAME})") from exc
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{p}: unreadable {MANIFEST_NAME}: {exc}") from exc
    try:
        if data.get("schema") != 1:
            raise ValueError(f"unknown schema {data.get('schema')!r}")
        files = [BackupFile(str(f["path"]), str(f["sha256"]), int(f["size"])) for f in data["files"]]
        for f in files:
            rel = PurePosixPath(f.path)
            if rel.is_absolute() or ".." in rel.parts:
                raise ValueError(f"file path {f.path!r} leaves the folder")
        return Backup(
            p,
            check_character_name(data["character"]),
            Path(data["source"]),
            str(data.get("kind", "replay")),
            str(data.get("created_at", "")),
            files,
            [str(d) for d in data.get("dirs", [])],
            list(data.get("skipped", [])),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise BadInputError(f"{p}: {MANIFEST_NAME} is not a backup manifest: {exc}") from exc


def verify_backup(backup: Backup) -> list[str]:
    """Check every file of the backup against its manifest; returns the problems (empty: intact).

    A missing file, a size or hash mismatch, and a file in ``files/`` that the manifest does not
    list are problems.
    """
    problems: list[str] = []
    listed = set()
    for f in backup.files:
        listed.add(f.path)
        p = backup.files_dir / f.path
        try:
            if p.is_symlink() or not p.is_file():
                problems.append(f"{f.path}: missing from the backup")
                continue
            if p.stat().st_size != f.size:
                problems.append(f"{f.path}: {p.stat().st_size} bytes, the manifest says {f.size}")
                continue
            if _sha256_file(p) != f.sha256:
                problems.append(f"{f.path}: content differs from the manifest (SHA-256)")
        except OSError as exc:
            problems.append(f"{f.path}: unreadable: {exc.strerror or exc}")
    if backup.files_dir.is_dir():
        present, _, _ = _walk_regular_files(backup.files_dir)
        problems += [f"{rel}: in the backup but not in its manifest" for rel in present if rel not in listed]
    else:
        problems.append(f"{BACKUP_FILES}/ is missing")
    return problems


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """A backup as listed for choosing one to restore.

    Attributes:
        status: the outcome recorded in its report (``applied``, ``stopped``, ...), or ``None``.
    """

    path: Path
    character: str
    kind: str
    created_at: str
    status: str | None

    def label(self) -> str:
        status = f", replay {self.status}" if self.status else ""
        return f"{self.created_at} — {self.character} ({self.kind}{status})"


def list_backups(backup_root: str | os.PathLike[str], character: str | None = None) -> list[BackupSummary]:
    """Complete backups under ``backup_root`` (of one character, or all), newest first."""
    root = Path(backup_root)
    groups = [root / character] if character else ([p for p in root.iterdir() if p.is_dir()] if root.is_dir() else [])
    out = []
    for group in groups:
        if not group.is_dir():
            continue
        for p in group.iterdir():
            if p.name.startswith(".") or not (p / MANIFEST_NAME).is_file():
                continue
            try:
                b = load_backup(p)
            except BadInputError:
                continue
            status = None
            with contextlib.suppress(OSError, ValueError, AttributeError):
                status = parse_json_bytes((p / REPORT_NAME).read_bytes()).get("outcome", {}).get("status")
            out.append(BackupSummary(p, b.character, b.kind, b.created_at, status))
    return sorted(out, key=lambda s: s.path.name, reverse=True)


# -- applying -------------------------------------------------------------------------------------


def compare_with_prediction(plan: Plan) -> list[str]:
    """Files whose content after the apply differs from what the dry run predicted.

    The sentinel is compared by the id it names (its ``ts`` is the time of writing).
    """
    actual = replay_files(plan.char_dir)
    out = []
    for rel in sorted(set(actual) | set(plan.predicted)):
        if rel == SENTINEL_NAME:
            if sentinel_id(actual.get(rel)) != sentinel_id(plan.predicted.get(rel)):
                out.append(rel)
        elif actual.get(rel) != plan.predicted.get(rel):
            out.append(rel)
    return out


@dataclass(frozen=True, slots=True)
class FolderState:
    """A fresh look at a character folder after a run (shown next to the plan).

    Attributes:
        sentinel_state, sentinel_id, sentinel_index: as in the plan.
        events: events in the journal.
        pending: events after the sentinel.
        orphaned_archive: archive events whose entry is lost (repairable or not).
        diagnosis: counts from :func:`journal.diagnose.diagnose_character` when it is available.
    """

    sentinel_state: str
    sentinel_id: str | None
    sentinel_index: int | None
    events: int
    pending: int
    orphaned_archive: int
    diagnosis: dict[str, Any] | None = None

    def describe(self) -> str:
        where = f"at #{self.sentinel_index}" if self.sentinel_index is not None else self.sentinel_state
        text = (
            f"sentinel {where}; {self.events} events, {self.pending} pending, {self.orphaned_archive} orphaned archive"
        )
        if self.diagnosis and self.diagnosis.get("blocked"):
            b = self.diagnosis["blocked"]
            text += f"; blocked at #{b.get('index')} ({b.get('reason')})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "sentinel": {"state": self.sentinel_state, "event_id": self.sentinel_id, "index": self.sentinel_index},
            "events": self.events,
            "pending": self.pending,
            "orphaned_archive": self.orphaned_archive,
            "diagnosis": self.diagnosis,
        }


def _diagnose(char_dir: Path) -> dict[str, Any] | None:
    """Counts and the blocked event from the shared diagnosis, when that function exists."""
    try:
        from journal import diagnose
    except ImportError:
        return None
    fn = getattr(diagnose, "diagnose_character", None)
    if fn is None:
        return None
    try:
        result = fn(char_dir)
        data = result.to_json()
    except Exception as exc:  # the fresh look must never turn a finished replay into a failure
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"counts": data.get("counts"), "blocked": data.get("blocked")}


def folder_state(char_dir: str | os.PathLike[str]) -> FolderState:
    """Re-read the folder: sentinel position, pending events, orphaned archive events (+ diagnosis)."""
    cd = Path(char_dir)
    events = read_journal(cd / JOURNAL_NAME).events
    sentinel = read_sentinel(cd)
    state, index = sentinel.state, None
    if sentinel.event_id is not None:
        index = next((i for i, ev in enumerate(events) if ev.event_id == sentinel.event_id), None)
        if index is None:
            state = "unknown_id"
    pending = len(events) - (index + 1 if index is not None else 0)
    orphans = find_orphaned_archive_events(cd, events)
    return FolderState(state, sentinel.event_id, index, len(events), pending, len(orphans), _diagnose(cd))


#: Outcome statuses: what happened to a run.
OUTCOME_STATUSES = ("applied", "nothing_to_do", "stopped", "cancelled", "changed", "refused", "failed")


@dataclass(slots=True)
class ReplayOutcome:
    """What a guarded replay did (a value for the command line, the window and the report).

    Attributes:
        status: ``applied`` (everything planned was applied), ``nothing_to_do``, ``stopped``
            (applied up to a blocked event, or some orphans could not be repaired), ``cancelled``
            (between events; the folder is consistent), ``changed`` (the folder differs from the
            plan: nothing applied, re-plan), ``refused`` (a guard refused before writing),
            ``failed`` (an error; restore the backup if needed).
        plan: the plan it carried out.
        backup: the backup taken before writing, when one was.
        report: the reconciler's report of the real run.
        applied: ids of the events whose handler ran, in order.
        block: where it stopped and why.
        changed_files: for ``changed``: what differs from the plan.
        mismatches: files whose content differs from the dry run's prediction (should be empty).
        fingerprints_before: fingerprints right before applying.
        fingerprints_after: fingerprints after applying.
        after: a fresh look at the folder.
        message: one line for people.
        started_at, finished_at: local ISO-8601 with offset.
        report_path: the JSON report beside the backup.
    """

    status: str
    plan: Plan
    backup: Backup | None = None
    report: ReplayReport | None = None
    applied: list[str] = field(default_factory=list)
    block: BlockExplanation | None = None
    changed_files: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    fingerprints_before: dict[str, str | None] | None = None
    fingerprints_after: dict[str, str | None] | None = None
    after: FolderState | None = None
    message: str = ""
    started_at: str = ""
    finished_at: str = ""
    report_path: Path | None = None

    @property
    def exit_code(self) -> int:
        """0 when everything planned was applied (or nothing was pending), else 1."""
        return 0 if self.status in ("applied", "nothing_to_do") else 1

    def to_json(self) -> dict[str, Any]:
        r = self.report
        return {
            "status": self.status,
            "message": self.message,
            "applied": list(self.applied),
            "changed": r.changed if r else 0,
            "stopped": None if self.block is None else self.block.to_json(),
            "cancelled": bool(r and r.cancelled),
            "frozen": bool(r and r.frozen),
            "left_behind": r.left_behind if r else 0,
            "temp_files_removed": list(getattr(r, "temp_files_removed", []) or []) if r else [],
            "changed_since_plan": list(self.changed_files),
            "matches_plan": not self.mismatches,
            "mismatches": list(self.mismatches),
        }


def describe_outcome(outcome: ReplayOutcome) -> list[str]:
    """The result as text (shown next to the plan)."""
    out = [f"Result: {outcome.status} — {outcome.message}"]
    if outcome.applied:
        changed = outcome.report.changed if outcome.report else 0
        out.append(f"Applied {len(outcome.applied)} event(s); {changed} changed a file.")
    if outcome.block is not None:
        out += outcome.block.lines()
    if outcome.changed_files:
        out.append("Changed since the plan: " + ", ".join(outcome.changed_files))
    if outcome.mismatches:
        out.append("Differs from the dry run's prediction: " + ", ".join(outcome.mismatches))
    if outcome.after is not None:
        out.append(f"Now: {outcome.after.describe()}")
    if outcome.backup is not None:
        out.append(f"Backup: {outcome.backup.path}  (undo: memory-inspector restore {outcome.backup.path})")
    if outcome.report_path is not None:
        out.append(f"Report: {outcome.report_path}")
    return out


def _write_report(outcome: ReplayOutcome, preflight_: Preflight | None) -> None:
    """Write (or rewrite) ``report.json`` beside the backup."""
    if outcome.backup is None:
        return
    plan = outcome.plan
    report = {
        "schema": 1,
        "kind": "replay",
        "tool": _tool_version(),
        "who": _who(),
        "host": socket.gethostname(),
        "started_at": outcome.started_at,
        "finished_at": outcome.finished_at or None,
        "character": plan.target.character,
        "folder": str(plan.char_dir.resolve()),
        "backup": str(outcome.backup.path),
        "overrides": {"server_lock": bool(preflight_ and preflight_.override_server_lock)},
        "preflight": None if preflight_ is None else preflight_.to_json(),
        "plan": plan.to_json(),
        "fingerprints": {
            "plan": plan.fingerprints,
            "before_apply": outcome.fingerprints_before,
            "after": outcome.fingerprints_after,
        },
        "outcome": outcome.to_json(),
        "after": None if outcome.after is None else outcome.after.to_json(),
    }
    path = outcome.backup.report_path
    fs.atomic_write_bytes(path, json.dumps(report, indent=2, ensure_ascii=False, default=str).encode("utf-8"))
    outcome.report_path = path


def execute(
    plan: Plan,
    *,
    backup_root: str | os.PathLike[str],
    preflight_: Preflight | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    registry: HandlerRegistry | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    before_check: Callable[[], None] | None = None,
) -> ReplayOutcome:
    """Carry out a plan: server re-check, backup, fingerprint check, apply, fresh look, report.

    Safe to run in a worker thread (it asks nothing). Nothing is written into the character folder
    unless the server is still stopped (or the override was recorded) and every watched file still
    has the fingerprint the plan saw — in the live folder *and* in the backup just taken.

    Args:
        backup_root: where the backup folder goes (outside the character folder).
        preflight_: the preflight the plan was made under (its override flag is honoured and
            recorded).
        should_continue: polled between events; returning False cancels.
        on_progress: ``(done, total)`` after each event.
        before_check: test seam, called after the backup and before the fingerprint check.
    """
    outcome = ReplayOutcome("refused", plan, started_at=_now_iso())
    override = bool(preflight_ and preflight_.override_server_lock)
    if not plan.has_work:
        outcome.block = plan.block
        if plan.block is not None or plan.unrepairable:
            outcome.status, outcome.message = (
                "stopped",
                "nothing can be applied: replay is blocked at the first event in scope",
            )
        else:
            outcome.status, outcome.message = "nothing_to_do", "nothing to apply"
        outcome.finished_at = _now_iso()
        return outcome
    server = check_launcher_lock(state_dir)
    if server.state != "free" and not override:
        outcome.message = f"{server.message}: the memory server started after the plan; nothing was written"
        outcome.finished_at = _now_iso()
        return outcome
    cd = plan.char_dir
    target = plan.target
    assert target.root is not None
    try:
        check_backup_root(backup_root, target)
        outcome.backup = create_backup(cd, backup_root, character=target.character, kind="replay")
    except (BackupError, BadInputError) as exc:
        outcome.status, outcome.message = "failed", f"no backup, nothing written: {exc}"
        outcome.finished_at = _now_iso()
        return outcome
    if before_check is not None:
        before_check()
    current = fingerprint_folder(cd)
    outcome.fingerprints_before = current
    backed_up = outcome.backup.hashes()
    in_backup = {k: (f"sha256:{backed_up[k]}" if k in backed_up else None) for k in plan.fingerprints}
    changed = sorted(
        set(fingerprint_changes(plan.fingerprints, current)) | set(fingerprint_changes(plan.fingerprints, in_backup))
    )
    if changed:
        outcome.status = "changed"
        outcome.changed_files = changed
        outcome.message = "the folder changed since the plan (" + ", ".join(changed) + "); nothing was written: re-plan"
        outcome.finished_at = _now_iso()
        _write_report(outcome, preflight_)
        return outcome
    outcome.status, outcome.message = "failed", "applying (interrupted before the end)"
    _write_report(outcome, preflight_)  # a crash mid-apply still leaves a report naming the backup
    reconciler = Reconciler(EventLog(target.root), registry)
    total = len(plan.events)

    def progress(done: int, _total: int) -> None:
        if on_progress is not None:
            on_progress(min(done, total), total)

    try:
        if plan.scope.kind == "repair":
            report = _repair(reconciler, plan, should_continue, progress)
        else:
            report = reconciler.reconcile(
                target.character, until=plan.apply_until, should_continue=should_continue, on_progress=progress
            )
    except Exception as exc:
        outcome.message = f"replay failed: {type(exc).__name__}: {exc}; the backup can undo any partial change"
        outcome.finished_at = _now_iso()
        with contextlib.suppress(Exception):
            outcome.fingerprints_after = fingerprint_folder(cd)
            outcome.after = folder_state(cd)
        _write_report(outcome, preflight_)
        return outcome
    outcome.report = report
    outcome.applied = list(report.applied)
    planned_ids = [e.event_id for e in plan.events]
    if report.stopped is not None:
        outcome.block = explain_block(report.stopped)
    if report.cancelled:
        outcome.status = "cancelled"
        outcome.message = f"cancelled after {len(report.applied)} of {total} event(s); the folder is consistent"
    elif report.stopped is not None:
        outcome.status = "stopped"
        outcome.message = f"applied {len(report.applied)} event(s), then stopped at a blocked event"
    elif report.left_behind or report.frozen or outcome.applied != planned_ids:
        outcome.status = "stopped"
        outcome.message = "another writer changed the folder during the replay; see the report"
    elif plan.unrepairable:
        outcome.status = "stopped"
        outcome.message = f"repaired {len(report.applied)} event(s); {len(plan.unrepairable)} could not be repaired"
        outcome.block = plan.unrepairable[0].block
    else:
        outcome.status = "applied"
        outcome.message = f"applied {len(report.applied)} event(s) as planned"
    if outcome.applied == planned_ids and not report.cancelled:
        outcome.mismatches = compare_with_prediction(plan)
        if outcome.mismatches:
            outcome.message += "; some files differ from the dry run's prediction (see the report)"
    outcome.fingerprints_after = fingerprint_folder(cd)
    outcome.after = folder_state(cd)
    outcome.finished_at = _now_iso()
    _write_report(outcome, preflight_)
    return outcome


def _repair(
    reconciler: Reconciler,
    plan: Plan,
    should_continue: Callable[[], bool] | None,
    progress: Callable[[int, int], None],
) -> ReplayReport:
    """Re-apply the planned orphaned archive events one at a time (progress and cancel between)."""
    character = plan.target.character
    merged = ReplayReport(character)
    merged.tail = len(plan.events)
    for done, ev in enumerate(plan.events, start=1):
        if should_continue is not None and not should_continue():
            merged.cancelled = True
            break
        one = reconciler.repair(character, [ev.event_id])
        merged.sentinel_before = merged.sentinel_before or one.sentinel_before
        merged.sentinel_after = one.sentinel_after
        merged.applied += one.applied
        merged.changed += one.changed
        if one.stopped is not None:
            merged.stopped = one.stopped
            break
        progress(done, len(plan.events))
    return merged


# -- the synchronous driver (command line, scripts, tests) ------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """What a person asked for.

    Attributes:
        path: memory root, character folder or zip export.
        character: the character.
        scope: what to replay.
        backup_root: where backups go (default: :func:`default_backup_root`).
        override_server_lock: the command-line override (never offered by the window).
        dry_run: plan only.
        state_dir: where ``launcher.lock`` lives (default: ``NEKO_RUNTIME_STATE_DIR`` / platform).
        max_replans: how often to re-plan after the folder changed under the run.
    """

    path: Path
    character: str
    scope: Scope = field(default_factory=Scope)
    backup_root: Path | None = None
    override_server_lock: bool = False
    dry_run: bool = False
    state_dir: Path | None = None
    max_replans: int = MAX_REPLANS


@dataclass(slots=True)
class ReplayRun:
    """Everything a driven run went through.

    Attributes:
        preflight: the first guard.
        plans: every plan made (more than one after re-planning).
        outcomes: every execution (a ``changed`` one is followed by a new plan).
        status: ``applied`` / ``nothing_to_do`` / ``stopped`` / ``cancelled`` / ``refused`` /
            ``failed`` / ``declined`` (the person said no) / ``planned`` (dry run).
        message: one line for people.
        extracted_to: where a zip export was extracted, when the person accepted that offer.
    """

    preflight: Preflight | None = None
    plans: list[Plan] = field(default_factory=list)
    outcomes: list[ReplayOutcome] = field(default_factory=list)
    status: str = "refused"
    message: str = ""
    extracted_to: Path | None = None

    @property
    def plan(self) -> Plan | None:
        return self.plans[-1] if self.plans else None

    @property
    def outcome(self) -> ReplayOutcome | None:
        return self.outcomes[-1] if self.outcomes else None

    @property
    def exit_code(self) -> int:
        """0 when everything planned was applied (or would be, for a dry run), else 1."""
        if self.status in ("applied", "nothing_to_do"):
            return 0
        if self.status == "planned":
            assert self.plan is not None
            return self.plan.predicted_exit_code if self.preflight is None or self.preflight.ok else 1
        return 1


def confirm_question(plan: Plan, backup_root: Path, preflight_: Preflight | None, replanned: bool = False) -> Question:
    """The "apply this plan?" question (the plan itself is in ``details``)."""
    verb = "Re-apply" if plan.scope.kind == "repair" else "Apply"
    text = f"{verb} {len(plan.events)} event(s) to {plan.target.character}? A backup goes to {backup_root} first."
    if replanned:
        text = "The folder changed, so this is a new plan. " + text
    if preflight_ is not None and preflight_.warnings:
        text += " Warnings: " + "; ".join(w.message for w in preflight_.warnings)
    return Question(ASK_APPLY, "Guarded replay", text, "\n".join(describe_plan(plan)), default=False)


def run_guarded_replay(
    request: ReplayRequest,
    prompter: ReplayPrompter,
    *,
    registry: HandlerRegistry | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    now: float | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> ReplayRun:
    """Run every guard in order, asking through ``prompter``; re-plan when the folder changed.

    Raises:
        BadInputError: bad path, character, event id or backup folder (exit code 2).
    """
    run = ReplayRun()
    target = resolve_target(request.path, request.character)
    backup_root = Path(request.backup_root) if request.backup_root is not None else default_backup_root()
    if target.char_dir is not None:
        check_backup_root(backup_root, target)
    pf = preflight(
        target,
        override_server_lock=request.override_server_lock,
        state_dir=request.state_dir,
        now=now,
        writable=writable,
    )
    run.preflight = pf
    prompter.notify("\n".join(describe_preflight(pf)))
    if target.zip_path is not None:
        run.status = "refused"
        run.message = next(r.message for r in pf.refusals if r.code == "input.zip_export")
        dest = suggest_extract_dir(target.zip_path)
        q = Question(
            ASK_EXTRACT,
            "Zip export",
            f"{target.zip_path} is a zip export and replay writes. Extract it to {dest} first?",
            "The zip is left as it is; replay the extracted folder afterwards.",
        )
        if prompter.ask(q):
            run.extracted_to = extract_export(target.zip_path, dest)
            run.message += f". Extracted to {dest}: replay that folder."
            prompter.notify(f"Extracted to {dest}.")
        return run
    blocking = list(pf.refusals)
    if blocking and not request.dry_run:
        run.status, run.message = "refused", "; ".join(r.message for r in blocking)
        return run
    try:
        plan = make_plan(target, request.scope, registry=registry)
    except FolderBusyError as exc:
        run.status, run.message = "refused", str(exc)
        return run
    run.plans.append(plan)
    prompter.notify("\n".join(describe_plan(plan)))
    if request.dry_run:
        run.status = "planned"
        run.message = "dry run: nothing was changed"
        if blocking:
            run.message += "; an apply would be refused: " + "; ".join(r.message for r in blocking)
        return run
    if not plan.has_work:
        outcome = execute(plan, backup_root=backup_root, preflight_=pf, state_dir=request.state_dir, registry=registry)
        run.outcomes.append(outcome)
        run.status, run.message = outcome.status, outcome.message
        return run
    if pf.recent and not prompter.ask(
        Question(
            ASK_RECENT_WRITES,
            "A writer may be active",
            next(w.message for w in pf.warnings if w.code == "files.recent") + ". Go on anyway?",
        )
    ):
        run.status, run.message = "declined", "not applied: files changed recently"
        return run
    replans = 0
    while True:
        if not prompter.ask(confirm_question(plan, backup_root, pf, replanned=replans > 0)):
            run.status, run.message = "declined", "not applied: the plan was not confirmed"
            return run
        outcome = execute(
            plan,
            backup_root=backup_root,
            preflight_=pf,
            state_dir=request.state_dir,
            registry=registry,
            should_continue=should_continue,
            on_progress=on_progress,
        )
        run.outcomes.append(outcome)
        if outcome.status != "changed":
            run.status, run.message = outcome.status, outcome.message
            return run
        prompter.notify(f"Refused: {outcome.message}. Re-planning.")
        replans += 1
        if replans > request.max_replans:
            run.status, run.message = (
                "refused",
                f"the folder kept changing; gave up after {request.max_replans} re-plans",
            )
            return run
        try:
            plan = make_plan(target, request.scope, registry=registry)
        except FolderBusyError as exc:
            run.status, run.message = "refused", str(exc)
            return run
        run.plans.append(plan)
        prompter.notify("\n".join(describe_plan(plan)))
        if not plan.has_work:
            outcome = execute(
                plan, backup_root=backup_root, preflight_=pf, state_dir=request.state_dir, registry=registry
            )
            run.outcomes.append(outcome)
            run.status, run.message = outcome.status, outcome.message
            return run


# -- restore --------------------------------------------------------------------------------------


@dataclass(slots=True)
class RestorePlan:
    """What putting a backup back would do (a pure value; nothing is written to make it).

    Files created in the folder after the backup (a shard a replay created, a temp file, newer
    files of the server) are removed, so the folder becomes byte-identical to the backup; they are
    not lost: :func:`execute_restore` first takes a ``pre-restore`` backup of the folder as it is,
    which makes the restore itself undoable. A folder created after the backup (an archive folder
    a replay created) is removed too once it is empty; one that still holds something the backup
    does not manage (a link, which backups never follow) is left alone.

    Attributes:
        backup: the backup.
        target: the character folder it is put back into.
        problems: the backup does not match its manifest (restore refuses).
        replace: files whose content differs.
        create: files of the backup missing from the folder.
        remove: files in the folder that the backup does not have.
        remove_dirs: folders the backup does not have, deepest first.
        unchanged: files already identical.
        new_events: events in the folder's journal that the backup's journal does not have (they
            leave the folder, and stay in the pre-restore backup).
    """

    backup: Backup
    target: Path
    problems: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    create: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    remove_dirs: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    new_events: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def has_work(self) -> bool:
        return bool(self.replace or self.create or self.remove or self.remove_dirs)


def plan_restore(backup_path: str | os.PathLike[str], target: str | os.PathLike[str] | None = None) -> RestorePlan:
    """Verify a backup against its manifest and compare it with the folder it came from.

    Raises:
        BadInputError: not a backup folder, or the target's parent (the memory root) is gone.
    """
    backup = load_backup(backup_path)
    dest = Path(target) if target is not None else backup.source
    if not dest.parent.is_dir():
        raise BadInputError(f"{dest.parent} does not exist: cannot restore {backup.character} there")
    rp = RestorePlan(backup, dest, problems=verify_backup(backup))
    hashes = backup.hashes()
    live, live_dirs, _ = _walk_regular_files(dest) if dest.is_dir() else ([], [], [])
    for rel in sorted(hashes):
        p = dest / rel
        if not p.is_file() or p.is_symlink():
            rp.create.append(rel)
        elif _sha256_file(p) == hashes[rel]:
            rp.unchanged.append(rel)
        else:
            rp.replace.append(rel)
    rp.remove = [rel for rel in live if rel not in hashes]
    kept = set(backup.dirs)
    rp.remove_dirs = sorted((d for d in live_dirs if d not in kept), key=lambda d: (-d.count("/"), d))
    if JOURNAL_NAME in hashes and (dest / JOURNAL_NAME).is_file():
        old = {e.event_id for e in read_journal(backup.files_dir / JOURNAL_NAME).events}
        rp.new_events = sum(1 for e in read_journal(dest / JOURNAL_NAME).events if e.event_id not in old)
    return rp


def describe_restore_plan(rp: RestorePlan) -> list[str]:
    """The restore plan as text."""
    b = rp.backup
    out = [f"Backup {b.path} ({b.kind}, {b.created_at}) of {b.character}", f"Into: {rp.target}"]
    if rp.problems:
        out.append("The backup does not match its manifest; restore refuses:")
        out += [f"  {p}" for p in rp.problems]
        return out
    if not rp.has_work:
        out.append("The folder already equals the backup: nothing to restore.")
        return out
    out += [f"  replace {rel}" for rel in rp.replace]
    out += [f"  create  {rel}" for rel in rp.create]
    out += [f"  remove  {rel}  (created after the backup; kept in the pre-restore backup)" for rel in rp.remove]
    out += [f"  remove  {rel}/  (an empty folder created after the backup)" for rel in rp.remove_dirs]
    out.append(f"  {len(rp.unchanged)} file(s) already identical")
    if rp.new_events:
        out.append(
            f"Warning: the journal has {rp.new_events} event(s) written after the backup; they leave the "
            "folder (and stay in the pre-restore backup)."
        )
    return out


@dataclass(slots=True)
class RestoreOutcome:
    """What a restore did.

    Attributes:
        status: ``restored`` | ``nothing_to_do`` | ``refused`` | ``failed``.
        pre_restore: the backup of the folder taken just before (undo the restore with it).
        written: files replaced or created.
        removed: files removed.
        problems: differences left after the restore (empty when verified).
    """

    status: str
    plan: RestorePlan
    message: str = ""
    pre_restore: Backup | None = None
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    report_path: Path | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("restored", "nothing_to_do") else 1


def _restore_order(rel: str) -> tuple[int, str]:
    """Journal first, the sentinel last: a crash in between leaves a folder replay can converge."""
    if rel == JOURNAL_NAME:
        return (0, rel)
    if rel == SENTINEL_NAME:
        return (2, rel)
    return (1, rel)


def execute_restore(
    rp: RestorePlan,
    *,
    backup_root: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> RestoreOutcome:
    """Put the backup back: verify it, refuse while the server runs, back up the folder as it is,
    then swap each file in atomically (:func:`journal.fs.atomic_write_bytes`), remove the files the
    backup does not have, and verify the folder against the manifest.

    Args:
        backup_root: where the pre-restore backup goes (default: beside the backup's own group).
    """
    out = RestoreOutcome("refused", rp)
    if rp.problems:
        out.message = "the backup does not match its manifest: " + rp.problems[0]
        return out
    server = check_launcher_lock(state_dir)
    if server.state != "free":
        out.message = f"{server.message}: stop N.E.K.O before restoring"
        return out
    dest = rp.target
    if dest.is_dir() and not writable(dest):
        out.message = f"{dest} is not writable"
        return out
    # Re-compare right now: what is on disk at this moment is what the pre-restore backup keeps.
    rp = plan_restore(rp.backup.path, dest)
    out.plan = rp
    if rp.problems:
        out.message = "the backup does not match its manifest: " + rp.problems[0]
        return out
    if not rp.has_work:
        out.status, out.message = "nothing_to_do", "the folder already equals the backup"
        return out
    root = Path(backup_root) if backup_root is not None else rp.backup.path.parent.parent
    try:
        if dest.is_dir():
            out.pre_restore = create_backup(dest, root, character=rp.backup.character, kind="pre-restore")
        hashes = rp.backup.hashes()
        fs.ensure_dir(dest)
        for d in rp.backup.dirs:
            fs.ensure_dir(dest / d)
        for rel in sorted(rp.replace + rp.create, key=_restore_order):
            data = (rp.backup.files_dir / rel).read_bytes()
            if hashlib.sha256(data).hexdigest() != hashes[rel]:
                raise BackupError(f"{rel} changed in the backup while restoring")
            fs.ensure_dir((dest / rel).parent)
            fs.atomic_write_bytes(dest / rel, data)
            out.written.append(rel)
        for rel in rp.remove:
            fs.remove_file(dest / rel)
            out.removed.append(rel)
        for rel in rp.remove_dirs:
            folder = dest / rel
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                # An empty folder: rmdir is atomic by itself; journal.fs makes it durable.
                os.rmdir(folder)
                fs.fsync_dir(folder.parent)
                out.removed.append(rel + "/")
    except (OSError, BackupError) as exc:
        out.status = "failed"
        out.message = f"restore failed: {exc}"
        if out.pre_restore is not None:
            out.message += f"; the folder as it was is in {out.pre_restore.path}"
        _write_restore_report(out)
        return out
    after = plan_restore(rp.backup.path, dest)
    out.problems = (
        [f"replace {r}" for r in after.replace]
        + [f"create {r}" for r in after.create]
        + [f"remove {r}" for r in after.remove]
    )
    if out.problems:
        out.status, out.message = "failed", "the folder does not match the backup after restoring: " + out.problems[0]
    else:
        out.status, out.message = (
            "restored",
            f"{len(out.written)} file(s) put back, {len(out.removed)} removed; verified",
        )
    _write_restore_report(out)
    return out


def _write_restore_report(out: RestoreOutcome) -> None:
    """Write ``report.json`` into the pre-restore backup (the record of what the restore replaced)."""
    if out.pre_restore is None:
        return
    report = {
        "schema": 1,
        "kind": "restore",
        "tool": _tool_version(),
        "who": _who(),
        "host": socket.gethostname(),
        "at": _now_iso(),
        "character": out.plan.backup.character,
        "folder": str(out.plan.target),
        "restored_from": str(out.plan.backup.path),
        "pre_restore_backup": str(out.pre_restore.path),
        "outcome": {
            "status": out.status,
            "message": out.message,
            "written": out.written,
            "removed": out.removed,
            "problems": out.problems,
        },
    }
    path = out.pre_restore.report_path
    fs.atomic_write_bytes(path, json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8"))
    out.report_path = path


def describe_restore_outcome(out: RestoreOutcome) -> list[str]:
    """The restore result as text."""
    lines = [f"Result: {out.status} — {out.message}"]
    if out.pre_restore is not None:
        where = out.pre_restore.path
        lines.append(f"The folder as it was before: {where}  (undo: memory-inspector restore {where})")
    return lines


def run_guarded_restore(
    backup_path: str | os.PathLike[str],
    prompter: ReplayPrompter,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> RestoreOutcome:
    """Plan a restore, show it, ask, and carry it out.

    Raises:
        BadInputError: not a backup folder.
    """
    rp = plan_restore(backup_path)
    prompter.notify("\n".join(describe_restore_plan(rp)))
    if rp.problems:
        return RestoreOutcome("refused", rp, "the backup does not match its manifest: " + rp.problems[0])
    if not rp.has_work:
        return RestoreOutcome("nothing_to_do", rp, "the folder already equals the backup")
    question = Question(
        ASK_RESTORE,
        "Restore backup",
        f"Put the backup of {rp.backup.character} from {rp.backup.created_at} back into {rp.target}? "
        "The folder as it is now is backed up first.",
        "\n".join(describe_restore_plan(rp)),
    )
    if not prompter.ask(question):
        return RestoreOutcome("refused", rp, "not restored: not confirmed")
    return execute_restore(rp, state_dir=state_dir, writable=writable)
