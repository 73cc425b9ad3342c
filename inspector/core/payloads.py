"""Payloads on demand: the timeline keeps no payloads in memory, so they are re-read by offset.

A million-event journal does not fit in memory with its payloads, and the table only ever shows a
few dozen rows. :class:`RecordReader` reads the records of the rows on screen in one short
open/read/close (readers must not hold the file open: on Windows that makes the writer's
``os.replace`` fail), and :class:`SummaryCache` keeps the one-line summaries it derived.
:func:`search_payloads` is the free-text / regex filter over payloads, run in a worker.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from inspector.core.jobs import CancelToken
from inspector.core.timeline import CharacterTimeline, Row, defect_summary, summarize
from journal.codec import loads_exact as parse_json_bytes
from journal.reader import Defect

_READ_STEP = 4096
#: Records longer than this are not parsed for a summary (the detail pane still shows them).
_SUMMARY_LIMIT = 1 << 20


def _line_at(fh: Any, offset: int, limit: int | None) -> bytes:
    """Bytes from ``offset`` up to (not including) the next newline, at most ``limit`` bytes."""
    fh.seek(offset)
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(_READ_STEP if limit is None else min(_READ_STEP, limit - total + 1))
        if not chunk:
            break
        cut = chunk.find(b"\n")
        if cut >= 0:
            parts.append(chunk[:cut])
            break
        parts.append(chunk)
        total += len(chunk)
        if limit is not None and total > limit:
            break
    return b"".join(parts).rstrip(b"\r")


class RecordReader:
    """Reads journal records back by byte offset.

    Attributes:
        path: the journal file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def raw_records(self, offsets: Iterable[int], limit: int | None = None) -> dict[int, bytes]:
        """The record starting at each offset (to its newline), in one open of the file."""
        out: dict[int, bytes] = {}
        wanted = sorted(set(offsets))
        if not wanted:
            return out
        try:
            with open(self.path, "rb") as fh:
                for off in wanted:
                    if off >= 0:
                        out[off] = _line_at(fh, off, limit)
        except OSError:
            pass
        return out

    def record(self, row: Row) -> tuple[Any, bytes]:
        """``(parsed record or None, raw bytes)`` for one row (a damaged line gives ``None``)."""
        raw = self.raw_records([row.offset]).get(row.offset, b"")
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if row.__class__ is Defect:
            return None, raw
        try:
            return parse_json_bytes(raw), raw
        except ValueError:
            return None, raw


class SummaryCache:
    """One-line summaries of a timeline's events, computed from payloads read in batches around
    the rows asked for. Live appends bring their payload along, so they are :meth:`put` directly.
    """

    def __init__(
        self, timeline: CharacterTimeline, reader: RecordReader, *, capacity: int = 50_000, redact: bool = False
    ) -> None:
        self.timeline = timeline
        self.reader = reader
        self.capacity = capacity
        self.redact = redact
        self._cache: OrderedDict[int, str] = OrderedDict()

    def set_redact(self, redact: bool) -> None:
        if redact != self.redact:
            self.redact = redact
            self._cache.clear()

    def put(self, index: int, event_type: str, payload: Any) -> None:
        self._store(index, summarize(event_type, payload, redact=self.redact))

    def _store(self, index: int, text: str) -> None:
        self._cache[index] = text
        if len(self._cache) > self.capacity:
            self._cache.popitem(last=False)

    def summary(self, refs: Sequence[int], pos: int, window: int = 100) -> str:
        """The summary of row ``refs[pos]``, reading the uncached rows around it in one go."""
        ref = refs[pos]
        tl = self.timeline
        if ref < 0:
            return defect_summary(tl.defects[~ref])
        text = self._cache.get(ref)
        if text is not None:
            return text
        lo, hi = max(0, pos - window), min(len(refs), pos + window)
        todo = [r for r in refs[lo:hi] if r >= 0 and r not in self._cache]
        events = tl.events
        raw = self.reader.raw_records((events.offset(r) for r in todo), limit=_SUMMARY_LIMIT)
        for r in todo:
            data = raw.get(events.offset(r))
            if data is None:
                text = "(record not readable)"
            elif len(data) > _SUMMARY_LIMIT:
                text = f"(record of more than {_SUMMARY_LIMIT >> 20} MiB)"
            else:
                try:
                    record = parse_json_bytes(data.lstrip(b"\xef\xbb\xbf"))
                    payload = record.get("payload") if isinstance(record, dict) else None
                    text = summarize(events.type(r), {} if payload is None else payload, redact=self.redact)
                except ValueError:
                    text = "(record no longer parses: the journal changed)"
            self._store(r, text)
        return self._cache.get(ref, "")


# -- searching payloads ------------------------------------------------------------------------

_CHUNK = 8 << 20
PAYLOAD_KEY = '"payload"'


def compile_search(text: str, regex: bool) -> re.Pattern[str]:
    """The pattern for a free-text (case-insensitive literal) or regex search.

    Raises:
        re.error: an invalid regex.
    """
    return re.compile(text if regex else re.escape(text), re.IGNORECASE)


def search_payloads(
    path: str | os.PathLike[str],
    timeline: CharacterTimeline,
    refs: Sequence[int],
    pattern: re.Pattern[str],
    token: CancelToken | None = None,
) -> set[int]:
    """Positions (in ``refs``) of rows whose payload matches ``pattern``.

    For an event, the text searched is its record's JSON from the ``"payload"`` key on (so ids,
    types and timestamps do not match by accident); for a damaged line, the whole line. The file
    is read in chunks; a chunk with no match anywhere is skipped without splitting it into lines.
    """
    hits: set[int] = set()
    if not len(refs):
        return hits
    by_line: dict[int, list[int]] = {}
    line_of = timeline.line
    for pos, ref in enumerate(refs):
        by_line.setdefault(line_of(ref), []).append(pos)
    line_no = 0
    rest = b""
    try:
        fh = open(path, "rb")
    except OSError:
        return hits
    with fh:
        while True:
            if token is not None:
                token.check()
            chunk = fh.read(_CHUNK)
            data = rest + chunk
            if not chunk:
                cut = len(data)
                rest = b""
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    continue
                rest = data[cut:]
            text = data[:cut].decode("utf-8", "replace")
            if pattern.search(text) is None:
                line_no += text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            else:
                line_no = _search_lines(text, line_no, pattern, refs, by_line, hits)
            if not chunk:
                break
    return hits


def _search_lines(
    text: str,
    line_no: int,
    pattern: re.Pattern[str],
    refs: Sequence[int],
    by_line: dict[int, list[int]],
    hits: set[int],
) -> int:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    for line in lines:
        line_no += 1
        positions = by_line.get(line_no)
        if positions is None or pattern.search(line) is None:
            continue
        for pos in positions:
            if refs[pos] < 0 or payload_matches(line, pattern):
                hits.add(pos)
    return line_no


def payload_matches(record_text: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` matches a record's text from its ``"payload"`` key on."""
    start = record_text.find(PAYLOAD_KEY)
    return start >= 0 and pattern.search(record_text, start + len(PAYLOAD_KEY)) is not None
