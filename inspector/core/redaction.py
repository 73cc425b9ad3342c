"""Redaction for screenshots and support tickets: entry text and chat content become a short label.

A redacted string reads ``‹text · 42 chars · sha256 1a2b…›``: what it was, its length, and a
hash prefix, so two equal texts can still be recognised. Ids, numbers, timestamps, keys and the
shape of every object stay as they are.
"""

from __future__ import annotations

import hashlib
from typing import Any

#: Keys whose values are user text (memory-format §2, §3.5): every string under them is hidden.
TEXT_KEYS = frozenset({"text", "content", "event_when_raw", "reject_explanation", "display_name"})

#: Keys whose values are conversation (outbox ``extract_facts``, memory-format §5.1).
CHAT_KEYS = frozenset({"messages"})


def redact_text(text: str, kind: str = "text") -> str:
    """The label that replaces ``text``."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"‹{kind} · {len(text)} chars · sha256 {digest[:4]}…›"


def hides(key: object) -> str | None:
    """The label kind for values stored under ``key``, or ``None`` when they are shown as they are."""
    if key in CHAT_KEYS:
        return "chat"
    if key in TEXT_KEYS:
        return str(key)
    return None


def hide_strings(value: Any, kind: str) -> Any:
    """``value`` with every string inside it replaced by its label."""
    if isinstance(value, str):
        return redact_text(value, kind)
    if isinstance(value, list):
        return [hide_strings(v, kind) for v in value]
    if isinstance(value, dict):
        return {k: hide_strings(v, kind) for k, v in value.items()}
    return value


def redact_tree(obj: Any) -> Any:
    """A copy of a JSON value with every text / chat value replaced by its label."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            kind = hides(k)
            out[k] = hide_strings(v, kind) if kind else redact_tree(v)
        return out
    if isinstance(obj, list):
        return [redact_tree(v) for v in obj]
    return obj
