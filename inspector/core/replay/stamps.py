"""Who, when and which tool: the stamps on plans, backup manifests and reports."""

from __future__ import annotations

import getpass
from datetime import datetime


def _tool_version() -> str:
    from inspector import __version__

    return f"memory-inspector {__version__}"


def _now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in odd environments (containers without a passwd entry)
        return "unknown"
