"""Support bundles: a redacted, diagnosable zip of a memory folder for a support case (issue 17).

One module per step: :mod:`~inspector.core.bundle.rules` (what is kept, per file kind),
:mod:`~inspector.core.bundle.redact` (values, files), :mod:`~inspector.core.bundle.journal` (the
journal, line by line), :mod:`~inspector.core.bundle.members` (which files, under which names),
:mod:`~inspector.core.bundle.checkdoc` (``check.json`` / ``check.txt`` of the original),
:mod:`~inspector.core.bundle.facts` (what the original's diagnosis used that the bundle cannot
hold, for the bundle's own check: :mod:`journal.recorded`),
:mod:`~inspector.core.bundle.manifest`, :mod:`~inspector.core.bundle.write` (the atomic zip), and
:mod:`~inspector.core.bundle.secret` (the sender's key). Qt-free: the window and the command line
call :func:`write_bundle`.
"""

from __future__ import annotations

from inspector.core.bundle.secret import load_or_create_secret, read_secret, secret_path
from inspector.core.bundle.write import (
    SCREENSHOT_NAME,
    BundleCancelledError,
    BundleError,
    BundleRefusedError,
    BundleResult,
    check_output,
    write_bundle,
)

__all__ = [
    "SCREENSHOT_NAME",
    "BundleCancelledError",
    "BundleError",
    "BundleRefusedError",
    "BundleResult",
    "check_output",
    "load_or_create_secret",
    "read_secret",
    "secret_path",
    "write_bundle",
]
