"""A unit's own files as read: ``meta.json`` (§2.1), ``profile.json``, ``binding.json``, and the
legacy fallbacks the server uses without a sharded ``profile.json`` (§1.4): the
``profiles/characters.json`` entry and ``bindings/<name>.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import fs
from journal.cloudsave.layout import CloudUnit

#: ``meta.json``'s fields (§2.1), in the server's order.
META_FIELDS = (
    "schema_version",
    "character_name",
    "payload_fingerprint",
    "updated_at_utc",
    "sequence_number",
    "source_client_id",
    "source_device_id",
    "asset_state",
    "asset_source",
    "asset_source_id",
    "origin_source",
    "origin_source_id",
    "origin_model_ref",
    "origin_display_name",
)

#: The key of ``characters.json`` that holds the characters.
CHARACTERS_KEY = "猫娘"


@dataclass(slots=True)
class JsonRead:
    """One JSON file as read: ``value`` (``None`` when absent or unreadable) and why not."""

    path: Path | None
    exists: bool = False
    value: Any = None
    problem: str | None = None


def read_json(path: Path | None) -> JsonRead:
    """``path`` parsed (UTF-8, a BOM allowed); a problem in words instead of raising."""
    if path is None:
        return JsonRead(None)
    try:
        with fs.open_regular(path) as f:
            data = f.read()
    except FileNotFoundError:
        return JsonRead(path)
    except OSError as exc:
        return JsonRead(path, True, None, f"cannot be read: {exc.strerror or exc}")
    try:
        return JsonRead(path, True, json.loads(data.decode("utf-8-sig")))
    except (UnicodeDecodeError, ValueError) as exc:
        return JsonRead(path, True, None, f"not valid JSON: {exc}")


@dataclass(slots=True)
class UnitFiles:
    """A unit's metadata as the server reads it.

    Attributes:
        meta: ``meta.json`` (legacy-only units have none).
        profile: the profile the server takes: ``characters/<name>/profile.json``, else the
            ``profiles/characters.json`` entry (``source`` says which).
        binding: ``binding.json``, else ``bindings/<name>.json``.
    """

    meta: JsonRead
    profile: JsonRead
    binding: JsonRead
    profile_source: str = ""
    binding_source: str = ""
    characters_json: JsonRead = field(default_factory=lambda: JsonRead(None))


def read_unit_files(unit: CloudUnit) -> UnitFiles:
    """Read ``unit``'s meta, profile and binding, with the server's legacy fallback (§1.4)."""
    d = unit.unit_dir
    meta = read_json(None if d is None else d / "meta.json")
    profile = read_json(None if d is None else d / "profile.json")
    binding = read_json(None if d is None else d / "binding.json")
    out = UnitFiles(meta, profile, binding, "profile.json" if profile.exists else "", "binding.json")
    root = unit.cloud_root
    if root is not None:
        out.characters_json = read_json(root / "profiles" / "characters.json")
    if not profile.exists and root is not None:
        doc = out.characters_json.value
        section = doc.get(CHARACTERS_KEY) if isinstance(doc, dict) else None
        if isinstance(section, dict) and unit.name in section:
            out.profile = JsonRead(root / "profiles" / "characters.json", True, section[unit.name])
            out.profile_source = f"profiles/characters.json[{CHARACTERS_KEY}]"
        if not binding.exists:
            out.binding = read_json(root / "bindings" / f"{unit.name}.json")
            out.binding_source = f"bindings/{unit.name}.json"
    return out


def meta_summary(meta: Any) -> dict[str, Any]:
    """``meta.json``'s fields of §2.1 that are there (other keys are kept after them)."""
    if not isinstance(meta, dict):
        return {}
    out = {k: meta[k] for k in META_FIELDS if k in meta}
    out.update({k: v for k, v in meta.items() if k not in out})
    return out
