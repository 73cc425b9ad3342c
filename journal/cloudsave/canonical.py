"""The server's canonical JSON and the unit fingerprint (cloudsave-format §2.2).

The canonical JSON is a named format: exactly what the server's ``json.dumps(ensure_ascii=False,
sort_keys=True, separators=(",", ":"))`` writes (keys sorted by code point, non-ASCII raw, floats
as ``repr``). Both fingerprints use it: the unit's ``payload_fingerprint`` (``sha256:`` + hex) and
the manifest's ``fingerprint`` (plain hex).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: The binding keys the fingerprint keeps, and only those present (§2.2 step 2).
STABLE_BINDING_KEYS = (
    "character_name",
    "model_type",
    "asset_source",
    "asset_source_id",
    "model_ref",
    "asset_display_name",
    "fallback_model_ref",
    "experience_overrides",
)

#: The prefix of a ``payload_fingerprint``.
FINGERPRINT_PREFIX = "sha256:"


def canonical_json(obj: Any) -> bytes:
    """``obj`` in the server's canonical JSON, as UTF-8 bytes (§2.2 step 4)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def stable_binding(binding: Any) -> dict[str, Any]:
    """The binding reduced to its stable keys; ``{}`` when it is not a dict (§2.2 step 2)."""
    if not isinstance(binding, dict):
        return {}
    return {k: binding[k] for k in STABLE_BINDING_KEYS if k in binding}


def payload_fingerprint(name: str, profile: Any, binding: Any, memory_files: Mapping[str, str]) -> str:
    """The unit's ``payload_fingerprint``: ``sha256:`` + the SHA-256 of the canonical payload.

    Args:
        name: the character's name.
        profile: ``profile.json`` as read (not a dict: ``{}``).
        binding: ``binding.json`` as read (reduced by :func:`stable_binding`).
        memory_files: ``{file name: lowercase hex SHA-256}`` of the managed files present.
    """
    payload = {
        "schema_version": 1,
        "character_name": str(name),
        "character_payload": profile if isinstance(profile, dict) else {},
        "binding_payload": stable_binding(binding),
        "memory_files": dict(memory_files),
    }
    return FINGERPRINT_PREFIX + hashlib.sha256(canonical_json(payload)).hexdigest()


def manifest_fingerprint(client_id: Any, sequence_number: Any, files: Any) -> str:
    """The manifest's ``fingerprint`` (plain hex, §1.2)."""
    doc = {"client_id": client_id, "sequence_number": sequence_number, "files": files}
    return hashlib.sha256(canonical_json(doc)).hexdigest()
