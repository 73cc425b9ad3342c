"""Whether the memory server runs: the probe of its launcher lock (memory-format §6.2).

The one implementation behind ``check`` (:func:`journal.diagnose.server_status`) and the guarded
replay's preflight (:func:`inspector.core.replay.check_launcher_lock`). It only reads:
a missing lock file is never created, and a lock it manages to take is released at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The lock file the launcher holds while the app runs.
LAUNCHER_LOCK = "launcher.lock"

#: Overrides the per-user runtime state folder (and disables the legacy locations).
RUNTIME_DIR_ENV = "NEKO_RUNTIME_STATE_DIR"

#: ``cause`` → ``state`` of a :class:`LauncherLock`.
LOCK_STATES = {
    "missing": "free",
    "not_held": "free",
    "held": "running",
    "open_error": "unknown",
    "lock_error": "unknown",
}

#: flock errors that mean another process holds the lock (contention), not a failure to test it.
_CONTENTION = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES})


@dataclass(frozen=True, slots=True)
class LauncherLock:
    """Whether the memory server's launcher holds its lock.

    Attributes:
        state: ``running`` (the lock is held by someone), ``free`` (we could take it, and let it
            go at once; or there is no lock file), ``unknown`` (any other error; a guard that
            writes must treat it like ``running``).
        path: the lock file that decided it (the primary location when none exists).
        message: the finding in words.
        cause: ``missing`` | ``not_held`` | ``held`` | ``open_error`` | ``lock_error``; callers
            that phrase the finding their own way switch on it.
        pid: the pid written in a held lock file, when it holds one.
        error: the OS error text of an ``open_error`` / ``lock_error``.
    """

    state: str
    path: str
    message: str
    cause: str = ""
    pid: int | None = None
    error: str = ""

    @property
    def lock_path(self) -> str:
        """The same as :attr:`path` (the name ``check``'s value has always used)."""
        return self.path


def runtime_state_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The per-user folder holding ``launcher.lock`` (``NEKO_RUNTIME_STATE_DIR`` overrides it).

    Args:
        env: the environment (default: ``os.environ``).
        platform: a ``sys.platform`` value (default: this one).
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    override = env.get(RUNTIME_DIR_ENV)
    if override:
        return Path(override)
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if platform.startswith("win"):
        local = env.get("LOCALAPPDATA")
        return Path(local) / "N.E.K.O.runtime" if local else home / "AppData" / "Local" / "N.E.K.O.runtime"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "N.E.K.O.runtime"
    return home / ".local" / "state" / "N.E.K.O" / "runtime"


def legacy_lock_files(env: Mapping[str, str] | None = None, platform: str | None = None) -> list[Path]:
    """Lock files of older launchers (memory-format §6.2, legacy locations)."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    out: list[Path] = []
    if platform.startswith("win"):
        local = env.get("LOCALAPPDATA")
        if local:
            out.append(Path(local) / "N.E.K.O" / "runtime" / LAUNCHER_LOCK)
        return out
    xdg_runtime = env.get("XDG_RUNTIME_DIR")
    if xdg_runtime:
        out.append(Path(xdg_runtime) / "neko" / LAUNCHER_LOCK)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    out.append(Path(f"/tmp/neko-runtime-{uid}") / LAUNCHER_LOCK)
    out.append(Path("/tmp/neko_launcher.lock"))
    return out


def _message(cause: str, where: str, pid: int | None, error: str) -> str:
    if cause == "missing":
        return f"no {LAUNCHER_LOCK}: the app is not running"
    if cause == "not_held":
        return f"{LAUNCHER_LOCK} is not held: the app is not running"
    if cause == "held":
        who = f" by pid {pid}" if pid is not None else ""
        return f"{LAUNCHER_LOCK} is held{who}: the memory server is running"
    if cause == "open_error":
        return f"cannot open {where}: {error}"
    return f"cannot probe the lock on {where}"


def _result(cause: str, where: str, pid: int | None = None, error: str = "") -> LauncherLock:
    return LauncherLock(LOCK_STATES[cause], where, _message(cause, where, pid, error), cause, pid, error)


def _try_lock(fd: int) -> tuple[str, str]:
    """``(cause, error)``: take a non-blocking exclusive lock and release it at once."""
    if sys.platform == "win32":  # pragma: no cover - Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except PermissionError:
            return "held", ""
        except OSError as exc:
            return "lock_error", exc.strerror or str(exc)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return "not_held", ""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in _CONTENTION:
            return "held", ""
        return "lock_error", exc.strerror or str(exc)
    fcntl.flock(fd, fcntl.LOCK_UN)
    return "not_held", ""


def _read_pid(fd: int) -> int | None:
    text = ""
    with contextlib.suppress(OSError):
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def probe_lock_file(path: str | os.PathLike[str]) -> LauncherLock:
    """Try a non-blocking exclusive lock on ``path``; release it at once.

    Getting it means ``free``, contention means ``running``, any other error ``unknown``. A missing
    file is ``free`` and is never created. A held lock's pid (``"<pid>\\n"``) is read when present.
    """
    where = os.fspath(path)
    try:
        fd = os.open(where, os.O_RDWR if sys.platform == "win32" else os.O_RDONLY)
    except FileNotFoundError:
        return _result("missing", where)
    except OSError as exc:
        return _result("open_error", where, error=exc.strerror or str(exc))
    try:
        cause, error = _try_lock(fd)
        return _result(cause, where, _read_pid(fd) if cause == "held" else None, error)
    finally:
        os.close(fd)


def check_launcher_lock(
    state_dir: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> LauncherLock:
    """Whether the memory server runs, from its launcher lock (memory-format §6.2).

    Args:
        state_dir: the one folder to look in. Without it, ``NEKO_RUNTIME_STATE_DIR`` names that
            one folder; otherwise the platform's folder and the legacy locations are all tried
            and the worst state wins (``running``, then ``unknown``, then ``free``).
        env: the environment (default: ``os.environ``).
        platform: a ``sys.platform`` value (default: this one).
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if state_dir is not None:
        return probe_lock_file(Path(state_dir) / LAUNCHER_LOCK)
    primary = runtime_state_dir(env, platform) / LAUNCHER_LOCK
    if env.get(RUNTIME_DIR_ENV):
        return probe_lock_file(primary)
    results = [probe_lock_file(p) for p in [primary, *legacy_lock_files(env, platform)]]
    for state in ("running", "unknown"):
        for r in results:
            if r.state == state:
                return r
    return results[0]
