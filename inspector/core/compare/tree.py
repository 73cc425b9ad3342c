"""Two parsed JSON values compared: the one home of the comparison's value rule (issue 25 item 2).

Key order is ignored; types are strict: ``0`` and ``0.0``, ``1`` and ``true`` are a ``type`` change
(a NaN equals a NaN). Each difference is a :class:`ValueChange` at a field path (``a.b[3]``; the
whole value is ``""``). Lines that are not JSON (a torn last line, damage) are held as :class:`Raw`
and compared by their bytes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

#: At most this many changes are kept per compared value (the count of the others is kept).
MAX_CHANGES = 200

#: The changes a :class:`ValueChange` can be.
CHANGE_KINDS = ("changed", "type", "added", "removed")


@dataclass(frozen=True, slots=True)
class Raw:
    """Bytes that are not JSON (or a line that is not terminated), compared as bytes."""

    data: bytes

    def to_json(self) -> dict[str, Any]:
        return {"not_json": self.data.decode("utf-8", "backslashreplace"), "bytes": len(self.data)}


@dataclass(frozen=True, slots=True)
class ValueChange:
    """One difference between two values.

    Attributes:
        path: where (``""``: the whole value; ``key.sub[2]``).
        kind: ``changed`` (same type, other value), ``type`` (another JSON type, ``0`` → ``0.0``),
            ``added`` (only in B), ``removed`` (only in A).
        before, after: A's and B's value there (``None`` for the side that lacks it).
    """

    path: str
    kind: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "before": plain(self.before), "after": plain(self.after)}


def plain(value: Any) -> Any:
    """``value`` with every :class:`Raw` in it as its JSON form (for ``--json``)."""
    if isinstance(value, Raw):
        return value.to_json()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: ``object``, ``array``, ``string``, ``integer``, ``float``,
    ``boolean``, ``null``, or ``not JSON`` for :class:`Raw`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return "not JSON"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def key_path(path: str, key: str) -> str:
    """``path`` followed by an object key (quoted unless it is a plain name)."""
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


@dataclass(slots=True)
class Changes:
    """The changes found so far: the first :data:`MAX_CHANGES`, and how many there are in all."""

    items: list[ValueChange]
    total: int = 0

    def add(self, change: ValueChange) -> None:
        self.total += 1
        if len(self.items) < MAX_CHANGES:
            self.items.append(change)


def _scalar_same(a: Any, b: Any) -> bool:
    if isinstance(a, float):
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    return bool(a == b)


def _walk(a: Any, b: Any, path: str, out: Changes) -> None:
    ta, tb = json_type(a), json_type(b)
    if ta != tb:
        out.add(ValueChange(path, "type", a, b))
        return
    if ta == "object":
        for key in sorted(set(a) | set(b)):
            sub = key_path(path, key)
            if key not in b:
                out.add(ValueChange(sub, "removed", a[key], None))
            elif key not in a:
                out.add(ValueChange(sub, "added", None, b[key]))
            else:
                _walk(a[key], b[key], sub, out)
    elif ta == "array":
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(b):
                out.add(ValueChange(sub, "removed", a[i], None))
            elif i >= len(a):
                out.add(ValueChange(sub, "added", None, b[i]))
            else:
                _walk(a[i], b[i], sub, out)
    elif not _scalar_same(a, b):
        out.add(ValueChange(path, "changed", a, b))


def value_changes(a: Any, b: Any, path: str = "") -> Changes:
    """Every difference between two parsed values (key order ignored, types strict).

    Raises:
        ValueError: the values are nested too deeply to walk (the caller compares bytes instead).
    """
    out = Changes([])
    try:
        _walk(a, b, path, out)
    except RecursionError:
        raise ValueError("nested too deeply to compare by value") from None
    return out
