"""The timeline filter: event types, states, a time range, free text or regex over payloads, entry id;
and the first row at or after a time ("go to time")."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.jobs import CancelToken
from inspector.core.payloads import RecordReader, compile_search, payload_matches, search_payloads
from inspector.core.timeline import DAMAGED, CharacterTimeline
from inspector.core.timestamps import parse_time_input, ts_key
from journal.events import JOURNAL_NAME

#: The type filter's name for damaged lines (they have no event type).
DAMAGED_TYPE = "(damaged line)"

#: Up to this many candidate rows, payloads are read back by offset instead of scanning the file.
FEW_ROWS = 2000


class FilterError(ValueError):
    """The filter cannot be applied (an invalid regular expression); the message says why."""


@dataclass(frozen=True, slots=True)
class TimelineFilter:
    """What the filter bar asks for. Empty / ``None`` fields do not filter.

    Attributes:
        types: event types to keep (:data:`DAMAGED_TYPE` for damaged lines); ``None`` keeps all.
        states: row states to keep (``damaged`` included); ``None`` keeps all.
        text: free text, or a regular expression when ``regex``, searched in payloads.
        regex: treat ``text`` as a regular expression.
        entry: keep events touching an entry whose key contains this (case-insensitive).
        since, until: a time range as typed (:func:`~inspector.core.timestamps.parse_time_input`;
            ``until`` covers the precision it was typed at). It keeps the events whose ``ts`` is in
            it, wherever they are in the journal (``ts`` is not monotonic); rows without a
            timestamp (damaged lines, an event without ``ts``) are not in any range.
    """

    types: frozenset[str] | None = None
    states: frozenset[str] | None = None
    text: str = ""
    regex: bool = False
    entry: str = ""
    since: str = ""
    until: str = ""

    @property
    def active(self) -> bool:
        return self.by_fields or bool(self.text)

    @property
    def by_time(self) -> bool:
        return bool(self.since.strip() or self.until.strip())

    @property
    def by_fields(self) -> bool:
        """Whether it filters on anything but payload text."""
        return self.types is not None or self.states is not None or bool(self.entry) or self.by_time

    def time_bounds(self) -> tuple[str | None, str | None]:
        """The range as :func:`~inspector.core.timestamps.ts_key` bounds (``None``: open).

        Raises:
            FilterError: a bound is not a time, or the range ends before it starts.
        """
        try:
            low = parse_time_input(self.since)
            high = parse_time_input(self.until, end=True)
        except ValueError as exc:
            raise FilterError(str(exc)) from None
        if low is not None and high is not None and high < low:
            raise FilterError("the time range ends before it starts")
        return low, high

    def validate(self) -> None:
        """Raise :class:`FilterError` when the filter cannot be applied (a bad regex or time)."""
        self.time_bounds()
        self.pattern()

    @property
    def needs_payloads(self) -> bool:
        """Whether applying it reads the journal (text search), so it belongs in a worker."""
        return bool(self.text)

    def pattern(self) -> re.Pattern[str] | None:
        """The compiled text pattern, or ``None`` without text.

        Raises:
            FilterError: an invalid regular expression.
        """
        if not self.text:
            return None
        try:
            return compile_search(self.text, self.regex)
        except re.error as exc:
            raise FilterError(f"invalid regular expression: {exc}") from exc


def filter_fields(timeline: CharacterTimeline, refs: Sequence[int], flt: TimelineFilter) -> list[int]:
    """The refs that pass the type, state and entry parts of ``flt`` (column lookups, no payloads)."""
    if not flt.by_fields:
        return list(refs)
    types, entries = timeline.events.types(), timeline.events.entries
    wanted_types, wanted_states = flt.types, flt.states
    needle = flt.entry.lower()
    low, high = flt.time_bounds()
    timed = low is not None or high is not None
    ts_of = timeline.events.ts
    state = timeline.state
    damaged_ok = (wanted_types is None or DAMAGED_TYPE in wanted_types) and (
        wanted_states is None or DAMAGED in wanted_states
    ) and not needle and not timed
    out: list[int] = []
    for r in refs:
        if r < 0:
            if damaged_ok:
                out.append(r)
            continue
        if wanted_types is not None and types[r] not in wanted_types:
            continue
        if wanted_states is not None and state(r) not in wanted_states:
            continue
        if needle:
            entry = entries[r]
            if entry is None or needle not in entry.lower():
                continue
        if timed:
            key = ts_key(ts_of(r))
            if key is None or (low is not None and key < low) or (high is not None and key > high):
                continue
        out.append(r)
    return out


def first_at_or_after(timeline: CharacterTimeline, refs: Sequence[int], text: str) -> int | None:
    """"Go to time": the position in ``refs`` of the first event, in journal order, whose ``ts`` is
    at or after the time typed (not the earliest such time: ``ts`` is not monotonic); ``None``
    when no row is.

    Raises:
        FilterError: ``text`` is not a time.
    """
    try:
        bound = parse_time_input(text)
    except ValueError as exc:
        raise FilterError(str(exc)) from None
    if bound is None:
        return None
    ts_of = timeline.events.ts
    for pos, r in enumerate(refs):
        if r >= 0:
            key = ts_key(ts_of(r))
            if key is not None and key >= bound:
                return pos
    return None


def apply_filter(
    timeline: CharacterTimeline,
    refs: Sequence[int],
    flt: TimelineFilter,
    token: CancelToken | None = None,
) -> list[int]:
    """The refs that pass ``flt``, in file order.

    Raises:
        FilterError: an invalid regular expression or time.
        Cancelled: the token was cancelled during the payload search.
    """
    flt.validate()
    pattern = flt.pattern()
    if pattern is None:
        return filter_fields(timeline, refs, flt)
    # Without field filters the payload search takes the refs as they are (no million-item copy).
    kept = filter_fields(timeline, refs, flt) if flt.by_fields else refs
    if not len(kept):
        return []
    journal = os.path.join(timeline.path, JOURNAL_NAME)
    if len(kept) <= FEW_ROWS:
        return match_records(timeline, RecordReader(journal), kept, pattern)
    return search_payloads(journal, timeline, kept, pattern, token)


def match_records(
    timeline: CharacterTimeline, reader: RecordReader, refs: Sequence[int], pattern: re.Pattern[str]
) -> list[int]:
    """The refs whose payload (an event's JSON from ``"payload"`` on; a damaged line's text)
    matches, reading each record back by offset: cheaper than scanning the file for a few rows."""
    raw = reader.raw_records(timeline.offset(r) for r in refs)
    out = []
    for r in refs:
        text = raw.get(timeline.offset(r), b"").decode("utf-8", "replace")
        if (payload_matches(text, pattern) if r >= 0 else pattern.search(text) is not None):
            out.append(r)
    return out


def accepts_live(timeline: CharacterTimeline, ref: int, flt: TimelineFilter, payload_text: str | None) -> bool:
    """Whether a freshly appended row passes ``flt`` (its payload is at hand, as JSON text)."""
    if not filter_fields(timeline, [ref], flt):
        return False
    pattern = flt.pattern()
    if pattern is None:
        return True
    return payload_text is not None and pattern.search(payload_text) is not None
