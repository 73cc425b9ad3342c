"""The timeline filter: event types, states, free text or regex over payloads, entry id."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.jobs import CancelToken
from inspector.core.payloads import RecordReader, compile_search, payload_matches, search_payloads
from inspector.core.timeline import DAMAGED, CharacterTimeline

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
    """

    types: frozenset[str] | None = None
    states: frozenset[str] | None = None
    text: str = ""
    regex: bool = False
    entry: str = ""

    @property
    def active(self) -> bool:
        return self.types is not None or self.states is not None or bool(self.text) or bool(self.entry)

    @property
    def by_fields(self) -> bool:
        """Whether it filters on anything but payload text."""
        return self.types is not None or self.states is not None or bool(self.entry)

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
    state = timeline.state
    damaged_ok = (wanted_types is None or DAMAGED_TYPE in wanted_types) and (
        wanted_states is None or DAMAGED in wanted_states
    ) and not needle
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
        out.append(r)
    return out


def apply_filter(
    timeline: CharacterTimeline,
    refs: Sequence[int],
    flt: TimelineFilter,
    token: CancelToken | None = None,
) -> list[int]:
    """The refs that pass ``flt``, in file order.

    Raises:
        FilterError: an invalid regular expression.
        Cancelled: the token was cancelled during the payload search.
    """
    pattern = flt.pattern()
    if pattern is None:
        return filter_fields(timeline, refs, flt)
    # Without field filters the payload search takes the refs as they are (no million-item copy).
    kept = filter_fields(timeline, refs, flt) if flt.by_fields else refs
    if not len(kept):
        return []
    journal = os.path.join(timeline.path, "events.ndjson")
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
