"""Every folder memory-inspector keeps its own files in, and where earlier versions kept them.

The user's config folder (the recent list, bookmarks, the window's layout) and data folder (the
index of backups, the backups, the bundle secret) are the platform's, as :mod:`platformdirs`
names them: on Linux ``$XDG_CONFIG_HOME`` / ``$XDG_DATA_HOME`` (``~/.config``,
``~/.local/share``), on macOS ``~/Library/Application Support``, on Windows
``%LOCALAPPDATA%``, each with a ``memory-inspector`` folder. ``$MEMORY_INSPECTOR_CONFIG_DIR``
overrides the config folder.

Earlier versions put the config folder in ``~/.config`` on every platform, and computed the data
folder by a formula of their own. So that no recent list, backup index or secret is lost, the
first time a folder is asked for, each of its files that the new place lacks and an old place has
is copied over (:func:`adopt_old_files`); the old file is never deleted or changed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from platformdirs.api import PlatformDirsABC
from platformdirs.macos import MacOS
from platformdirs.unix import Unix
from platformdirs.windows import Windows

from journal import fs

APP_NAME = "memory-inspector"

#: Overrides the config folder (tests and portable setups point it anywhere).
CONFIG_DIR_ENV = "MEMORY_INSPECTOR_CONFIG_DIR"

RECENT_NAME = "recent.json"
BOOKMARKS_NAME = "bookmarks.json"
LAYOUT_NAME = "layout.ini"
INDEX_NAME = "backup-index.json"
SECRET_NAME = "bundle-secret.key"
BACKUPS_NAME = "backups"

#: What the config folder holds; each is adopted from an old config folder.
CONFIG_FILES = (RECENT_NAME, BOOKMARKS_NAME, LAYOUT_NAME)

#: What the data folder holds besides the backups themselves; each is adopted from an old data
#: folder. The backups stay where they are: the index records each one's folder, wherever it is.
DATA_FILES = (INDEX_NAME, SECRET_NAME)

#: Our folders hold a person's memories and their redaction secret: private to the user.
PRIVATE_DIR_MODE = 0o700


def _platform_dirs(platform: str | None = None) -> PlatformDirsABC:
    """:mod:`platformdirs`' answer for ``platform`` (default: this one)."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        return Windows(APP_NAME, appauthor=False)
    if platform == "darwin":
        return MacOS(APP_NAME, appauthor=False)
    return Unix(APP_NAME, appauthor=False)


def _home() -> Path:
    return Path(os.environ.get("HOME") or os.environ.get("USERPROFILE") or Path.home())


def old_config_dirs() -> list[Path]:
    """Where earlier versions kept the config folder: ``$XDG_CONFIG_HOME/memory-inspector``, else
    ``~/.config/memory-inspector``, on every platform (Windows and macOS included)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(_home() / ".config")
    return [Path(base) / APP_NAME]


def old_data_dirs(platform: str | None = None) -> list[Path]:
    """Where earlier versions kept the data folder (their own formula, beside platformdirs'):
    ``%LOCALAPPDATA%`` else ``~/AppData/Local`` on Windows, ``~/Library/Application Support`` on
    macOS, ``$XDG_DATA_HOME`` else ``~/.local/share`` elsewhere."""
    platform = sys.platform if platform is None else platform
    env = os.environ
    if platform.startswith("win"):
        base = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else _home() / "AppData" / "Local"
    elif platform == "darwin":
        base = _home() / "Library" / "Application Support"
    else:
        base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else _home() / ".local" / "share"
    return [base / APP_NAME]


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and its missing parents with mode 0700 whatever the umask, durably;
    existing folders are left as they are (a ``--backup-dir`` the person made keeps its mode)."""
    missing: list[Path] = []
    cur = Path(path)
    while not cur.exists() and not cur.is_symlink():
        missing.append(cur)
        cur = cur.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask
        fs.fsync_dir(folder.parent)


def adopt_old_files(new: Path, old: Iterable[Path], names: Iterable[str]) -> list[Path]:
    """Copy into ``new`` each of ``names`` that ``new`` lacks, from the first ``old`` folder that
    has it as a regular file (written 0600, atomically, in a folder made 0700). An old file is only
    read, never deleted or changed; a file that cannot be read or written stays where it is (the
    caller then starts without it, as it did before there was one).

    Returns:
        The files copied.
    """
    olds = [o for o in old if os.path.realpath(o) != os.path.realpath(new)]
    copied: list[Path] = []
    if not olds:
        return copied
    for name in names:
        target = new / name
        if os.path.lexists(target):
            continue
        for folder in olds:
            try:
                with fs.open_regular(folder / name) as fh:
                    data = fh.read()
            except OSError:
                continue
            try:
                make_private_dirs(new)
                fs.atomic_write_bytes(target, data)
            except OSError:
                break
            copied.append(target)
            break
    return copied


def config_dir(platform: str | None = None) -> Path:
    """The config folder: ``$MEMORY_INSPECTOR_CONFIG_DIR``, else the platform's (old config files
    adopted on the way, :func:`adopt_old_files`)."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    new = Path(_platform_dirs(platform).user_config_dir)
    adopt_old_files(new, old_config_dirs(), CONFIG_FILES)
    return new


def data_dir(platform: str | None = None) -> Path:
    """The data folder, the platform's (the old index of backups and secret adopted on the way)."""
    new = Path(_platform_dirs(platform).user_data_dir)
    adopt_old_files(new, old_data_dirs(platform), DATA_FILES)
    return new


def default_backup_root(platform: str | None = None) -> Path:
    """``backups/`` in the data folder: where replay and restore put their backups by default."""
    return data_dir(platform) / BACKUPS_NAME


def default_index_path(platform: str | None = None) -> Path:
    """``backup-index.json`` in the data folder, beside ``backups/``.

    One index for every backup this installation takes, wherever it goes (``--backup-dir``
    included), so restore never has to look for it next to (or inside) the backup it checks.
    """
    return data_dir(platform) / INDEX_NAME


def secret_path(platform: str | None = None, *, adopt: bool = True) -> Path:
    """The bundle's redaction secret, in the data folder beside the index of backups.

    ``adopt=False`` only reads (``bundle --guess`` writes nothing): the new place when it holds
    the secret, else the first old place that does (nothing is copied), else the new place.
    """
    if adopt:
        return data_dir(platform) / SECRET_NAME
    new = Path(_platform_dirs(platform).user_data_dir)
    for folder in [new, *old_data_dirs(platform)]:
        if os.path.lexists(folder / SECRET_NAME):
            return folder / SECRET_NAME
    return new / SECRET_NAME
