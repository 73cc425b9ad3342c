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


def load_or_create_secret(path: str | os.PathLike[str] | None = None) -> bytes:
    """The secret at ``path`` (default :func:`secret_path`), made (mode 0600) when there is none.

    Raises:
        OSError: it cannot be read or written; or the file is not a secret (too short).
    """
    p = Path(path) if path is not None else secret_path()
    try:
        with fs.open_regular(p) as fh:
            data = fh.read(4096)
    except FileNotFoundError:
        data = b""
    else:
        if len(data) < 16:
            raise OSError(f"{p}: not a redaction secret (too short); move it away to make a new one")
        return data
    fs.ensure_dir(p.parent)
    data = secrets.token_bytes(SECRET_BYTES)
    fs.atomic_write_bytes(p, data)  # created 0600 by the one durable writer
    return data
