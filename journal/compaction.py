"""When a journal is due for compaction (memory-format §4.4): the one home of the rule."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from journal.codec import loads_exact

#: Compaction is due at this many physical lines (blank and damaged ones included) ...
COMPACT_LINES_THRESHOLD = 10_000
#: ... or when the first line's ``ts`` is at least this many days old.
COMPACT_DAYS_THRESHOLD = 90


def _now() -> datetime:
    """The clock the age is measured against when no ``now`` is given (tests replace it)."""
    return datetime.now()


def first_line_ts(first_line: bytes) -> Any:
    """The ``ts`` of the journal's first line as the age check reads it (a BOM and surrounding
    whitespace allowed); ``None`` when that line is not a record."""
    try:
        obj = loads_exact(first_line.strip().removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return None
    return obj.get("ts") if isinstance(obj, dict) else None


def age_days(first_ts: object, now: datetime | None = None) -> float | None:
    """Age in days of the first line's ``ts`` (``None`` when it is not a readable timestamp: a
    corrupt first line disables the age check, as upstream)."""
    if not isinstance(first_ts, str):
        return None
    try:
        return ((now or _now()) - datetime.fromisoformat(first_ts)).total_seconds() / 86400
    except (ValueError, TypeError):
        return None


def compaction_reason(lines: int, first_ts: object, now: datetime | None = None) -> str | None:
    """Why a journal of ``lines`` physical lines whose first line has ``first_ts`` is due for
    compaction, in words, or ``None`` when it is not."""
    if lines >= COMPACT_LINES_THRESHOLD:
        return f"{lines:,} lines (threshold {COMPACT_LINES_THRESHOLD:,})"
    age = age_days(first_ts, now)
    if age is not None and age >= COMPACT_DAYS_THRESHOLD:
        return f"the oldest event is {age:.0f} days old (threshold {COMPACT_DAYS_THRESHOLD})"
    return None
