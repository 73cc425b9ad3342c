"""Step 1, the first guard: refuse while the memory server runs (the launcher lock of
memory-format §6.2), warn about recent writes, refuse a folder that is not writable or a zip export."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.replay.fingerprints import WATCHED_FILES
from inspector.core.replay.target import ReplayTarget, suggest_extract_dir
from journal import runtime
from journal.runtime import LauncherLock
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE

#: A file changed less than this many seconds ago means a writer may be active.
RECENT_WRITE_SECONDS = 10.0


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
