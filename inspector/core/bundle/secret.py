"""The sender's redaction secret: made once, kept in memory-inspector's data folder, never bundled.

Tokens and keyed values in a bundle are HMACs under this secret, so a developer cannot test a
guessed text against them; the sender can (``memory-inspector bundle --guess TEXT``), because the
secret stays on the sender's machine.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from inspector.core.dirs import make_private_dirs, secret_path
from journal import fs

SECRET_BYTES = 32


def read_secret(path: str | os.PathLike[str] | None = None) -> bytes | None:
    """The secret at ``path`` (default :func:`~inspector.core.dirs.secret_path`, an old place's
    secret read where it is), or ``None`` when there is none; never writes.

    Raises:
        OSError: it cannot be read; or the file is not a secret (too short).
    """
    p = Path(path) if path is not None else secret_path(adopt=False)
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
    make_private_dirs(p.parent)
    data = secrets.token_bytes(SECRET_BYTES)
    fs.atomic_write_bytes(p, data)  # created 0600 by the one durable writer
    return data
