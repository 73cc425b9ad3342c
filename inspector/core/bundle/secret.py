"""The sender's redaction secret: made once, kept in memory-inspector's data folder, never bundled.

Tokens and keyed values in a bundle are HMACs under this secret, so a developer cannot test a
guessed text against them; the sender can (``memory-inspector bundle --guess TEXT``), because the
secret stays on the sender's machine.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from inspector.core.replay.flow import default_index_path
from journal import fs

SECRET_NAME = "bundle-secret.key"
SECRET_BYTES = 32


def secret_path() -> Path:
    """Where the secret lives: beside the index of backups, in memory-inspector's data folder."""
    return default_index_path().parent / SECRET_NAME


def _private_folder(folder: Path) -> None:
    """Create the secret's folder mode 0700 whatever the umask (``mkdir``'s mode is masked by it);
    its missing parents as :func:`journal.fs.ensure_dir` makes them. An existing folder is left as
    it is."""
    if folder.is_dir():
        return
    fs.ensure_dir(folder.parent)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        return
    os.chmod(folder, 0o700)
    fs.fsync_dir(folder.parent)


def read_secret(path: str | os.PathLike[str] | None = None) -> bytes | None:
    """The secret at ``path`` (default :func:`secret_path`), or ``None`` when there is none; never
    writes.

    Raises:
        OSError: it cannot be read; or the file is not a secret (too short).
    """
    p = Path(path) if path is not None else secret_path()
    try:
        with fs.open_regular(p) as fh:
            data = fh.read(4096)
    except FileNotFoundError:
        return None
    if len(data) < 16:
        raise OSError(f"{p}: not a redaction secret (too short); move it away to make a new one")
    return data


def load_or_create_secret(path: str | os.PathLike[str] | None = None) -> bytes:
    """The secret at ``path`` (default :func:`secret_path`), made (mode 0600, in a folder made
    0700) when there is none.

    Raises:
        OSError: it cannot be read or written; or the file is not a secret (too short).
    """
    p = Path(path) if path is not None else secret_path()
    data = read_secret(p)
    if data is not None:
        return data
    _private_folder(p.parent)
    data = secrets.token_bytes(SECRET_BYTES)
    fs.atomic_write_bytes(p, data)  # created 0600 by the one durable writer
    return data
