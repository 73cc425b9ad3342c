"""``manifest.json`` of a support bundle: versions, when, whether redacted, and every member's size
and SHA-256. It names the input by its base name only (a full path can hold a user name)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from inspector import __version__

MANIFEST_SCHEMA = 1


def _qt_version() -> str | None:
    """PySide6's version, which is the Qt version it ships (read from its metadata: the core never
    imports Qt)."""
    for dist in ("PySide6-Essentials", "PySide6"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


@dataclass(slots=True)
class MemberRecord:
    name: str
    size: int
    sha256: str


@dataclass(slots=True)
class Manifest:
    """What ``manifest.json`` says.

    Attributes:
        input: the input's base name.
        redacted: whether the members are redacted (``--no-redact`` makes it false, and says so).
        key_id: names the sender's redaction secret (``None`` when not redacted).
        characters: ``{"name", "folder"}`` per character: its name and its folder in the zip.
        files: every other member's name, size and SHA-256, in the order written.
        omitted: ``{"character", "what", "reason"}`` for what was left out.
        facts: what the original's diagnosis used that the bundle does not hold, for the bundle's
            own diagnosis (:mod:`journal.recorded`).
    """

    input: str
    redacted: bool
    key_id: str | None
    characters: list[dict[str, str]] = field(default_factory=list)
    files: list[MemberRecord] = field(default_factory=list)
    omitted: list[dict[str, str]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": MANIFEST_SCHEMA,
            "tool": "memory-inspector",
            "version": __version__,
            "python": platform.python_version(),
            "qt": _qt_version(),
            "os": f"{platform.system()} {platform.release()} ({sys.platform}, {platform.machine()})",
            "created_at": self.created_at,
            "input": self.input,
            "redacted": self.redacted,
            "redaction_key_id": self.key_id,
            "characters": self.characters,
            "files": [{"name": f.name, "size": f.size, "sha256": f.sha256} for f in self.files],
            "omitted": self.omitted,
            "facts": self.facts,
        }


def input_base_name(path: str) -> str:
    return os.path.basename(os.path.abspath(path).rstrip(os.sep)) or "input"


#: Input names the format defines (the server's own folder name): kept as they are.
DEFINED_INPUT_NAMES = frozenset({"memory", "input"})


def input_name(path: str, keyed_by: Any = None, folders: Mapping[str, str] | None = None) -> str:
    """What the bundle calls its input (the manifest's ``input``, ``check``'s PATH): a character
    folder given as PATH is its folder in the bundle; when redacted, any other name a person gave
    (a memory root's folder name is text too) is ``input-<8 hex of its keyed tag>``, as character
    folders are keyed; names the format defines stay."""
    base = input_base_name(path)
    if folders is not None and base in folders:
        return folders[base]
    if keyed_by is None or base in DEFINED_INPUT_NAMES:
        return base
    return f"input-{keyed_by.tag(base)}"
