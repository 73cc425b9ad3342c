"""Loading and saving the JSON views (``reflections.json``, ``persona.json``, ...) and the sentinel."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from journal import fs
from journal.errors import ViewCorruptError
from journal.events import SENTINEL_NAME, now_iso

REFLECTIONS = "reflections.json"
PERSONA = "persona.json"
FACTS = "facts.json"

#: Digits to "0", anything else to ".": a run of 19 "0"s is the only way to spell an integer
#: outside orjson's 64-bit range (a translate and a find are far faster than a regex here).
_DIGIT_MAP = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
_DIGIT_RUN = b"0" * 19

#: The top-level type each known view must have.
VIEW_TYPES: dict[str, type] = {REFLECTIONS: list, PERSONA: dict, FACTS: list}


def parse_json_bytes(data: bytes) -> Any:
    """Parse JSON as Python's ``json`` module would (NaN/Infinity accepted), fast path via orjson.

    Raises:
        ValueError: not JSON (``RecursionError`` for absurd nesting is turned into ``ValueError``).
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        # orjson turns integers beyond 64 bits into floats; json keeps them (and saving must too).
        if data.translate(_DIGIT_MAP).find(_DIGIT_RUN) < 0:
            return obj
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def load_view(path: str | os.PathLike[str], expected: type, *, missing: Any = None) -> Any:
    """Load a view file that must have top-level type ``expected``.

    A missing file gives ``missing`` (default: an empty ``expected()``).

    Raises:
        ViewCorruptError: the file is not JSON or its top level has the wrong type.
        OSError: the file exists but cannot be read.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return expected() if missing is None else missing
    try:
        obj = parse_json_bytes(data)
    except ValueError as exc:
        raise ViewCorruptError(f"{p.name} is not valid JSON: {exc}") from exc
    if not isinstance(obj, expected):
        raise ViewCorruptError(
            f"{p.name} has a top-level {type(obj).__name__}, expected a {expected.__name__}"
        )
    return obj


def save_view(path: str | os.PathLike[str], obj: Any) -> None:
    """Save a view atomically, formatted as the memory server writes it."""
    fs.atomic_write_json(path, obj)


# -- sentinel -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SentinelRead:
    """The sentinel file as read, before it is resolved against a journal.

    Attributes:
        state: ``ok`` (a string id), ``missing``, ``malformed`` or ``null``. Resolving against the
            journal may turn ``ok`` into ``unknown_id``.
        event_id: the id when ``state == "ok"``, else ``None``.
        ts: the sentinel's ``ts`` when it is a string.
        message: what was wrong, for ``malformed``.
    """

    state: str
    event_id: str | None = None
    ts: str | None = None
    message: str | None = None

    @property
    def replay_from_start(self) -> bool:
        """Whether replay must start at the journal's first event (anything but a string id)."""
        return self.event_id is None


def read_sentinel(char_dir: str | os.PathLike[str]) -> SentinelRead:
    """Read ``events_applied.json`` with the design record's fallbacks; never raises."""
    p = Path(char_dir) / SENTINEL_NAME
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return SentinelRead("missing")
    except OSError as exc:
        return SentinelRead("malformed", message=f"cannot read: {exc.strerror or exc}")
    try:
        obj = parse_json_bytes(data)
    except ValueError as exc:
        return SentinelRead("malformed", message=f"not valid JSON: {exc}")
    if not isinstance(obj, dict):
        return SentinelRead("malformed", message=f"top level is a {type(obj).__name__}, not an object")
    ts = obj.get("ts") if isinstance(obj.get("ts"), str) else None
    value = obj.get("last_applied_event_id")
    if value is None:
        return SentinelRead("null", ts=ts)
    if not isinstance(value, str):
        return SentinelRead(
            "malformed", ts=ts, message=f"last_applied_event_id is a {type(value).__name__}, not a string"
        )
    return SentinelRead("ok", event_id=value, ts=ts)


def write_sentinel(char_dir: str | os.PathLike[str], event_id: str | None) -> None:
    """Write the sentinel atomically (``indent=2``), as the memory server does."""
    fs.atomic_write_json(
        Path(char_dir) / SENTINEL_NAME, {"last_applied_event_id": event_id, "ts": now_iso()}
    )


_IMMUTABLE_LEAVES = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """``copy.deepcopy`` for JSON values, a few times faster: dicts and lists are rebuilt, str,
    numbers, booleans and ``None`` shared (as deepcopy shares them); anything else is deep-copied."""
    t = type(value)
    if t is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if t is list:
        return [copy_json(v) for v in value]
    if t in _IMMUTABLE_LEAVES:
        return value
    return copy.deepcopy(value)
