"""The last complete event of a journal, found by reading backwards from its end: whether a live
write may advance the sentinel (the design record's known limitation, closed here) costs
O(length of the last lines), not O(journal)."""

from __future__ import annotations

import os

from journal import fs
from journal.events import Event
from journal.reader import JournalScanner


def classify_record(raw: bytes) -> str | None:
    """The event id a single complete line stands for (glued salvage included), else ``None``."""
    scanner = JournalScanner()
    events: list[Event] = []
    scanner._classify_slow(raw, events, [], terminated=True)
    return events[0].event_id if events else None


#: The first block :func:`last_event_id` reads from the end of the journal (doubling after that).
_LAST_EVENT_BLOCK = 64 << 10


def last_event_id(path: str | os.PathLike[str], *, max_back: int = 8 << 20) -> tuple[bool, str | None]:
    """Find the id of the last complete event by reading backwards from the end of the file.

    Costs O(length of the last lines), not O(journal): the end is read in blocks of 64 KiB, doubling
    up to ``max_back``, until one holds a complete record. Returns ``(known, event_id)``: ``(True,
    None)`` when the journal is missing or has no events in a short file, ``(False, None)`` when the
    last ``max_back`` bytes hold no parseable record in a longer file (the answer is unknown, so a
    caller must be conservative).

    A line repeating the id of an earlier record is not an event (the reader reports it as
    ``duplicate_event_id``), so it is skipped here too: otherwise a duplicate of the sentinel's event
    appended after an unapplied tail would make ``record_and_save`` believe the sentinel is at the
    end and orphan that tail. Only earlier records inside the ``max_back`` window are seen: once a
    candidate is found, that whole window is read for the check (bounded, so still O(1) in journal
    size; :class:`journal.EventLog` skips this call when the journal is unchanged since its own
    append).

    Raises:
        OSError: the journal exists but cannot be read, or is not a regular file (never read).
    """
    try:
        fh = fs.open_regular(path)
    except FileNotFoundError:
        return True, None
    with fh:
        fd = fh.fileno()
        size = os.fstat(fd).st_size
        floor = max(0, size - max_back)
        window = min(_LAST_EVENT_BLOCK, size - floor)
        while True:
            start = size - window
            whole = start <= floor
            eid = _last_record(_pread_all(fd, window, start), partial=start > 0, check_duplicates=whole)
            if whole:
                return (True, eid) if eid is not None else (start == 0, None)
            # A record near the end: duplicates are checked against the whole window.
            window = size - floor if eid is not None else min(window * 2, size - floor)


def _last_record(data: bytes, *, partial: bool, check_duplicates: bool) -> str | None:
    """The id of the last line of ``data`` that is a record (and, if asked, no duplicate)."""
    lo = data.find(b"\n") + 1 if partial else 0  # the first piece may be a partial line
    end = len(data)
    while end > lo:
        begin = max(lo, data.rfind(b"\n", lo, end) + 1)
        raw = data[begin:end]
        end = begin - 1
        if not raw.strip():
            continue
        eid = classify_record(raw)
        if eid is not None and not (check_duplicates and _recorded_before(data, lo, begin, eid)):
            return eid
    return None


def _pread_all(fd: int, length: int, offset: int) -> bytes:
    """``length`` bytes at ``offset`` (fewer only when the file ends first)."""
    parts = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        parts.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _recorded_before(data: bytes, lo: int, end: int, event_id: str) -> bool:
    """Whether a line of ``data[lo:end]`` is a record with ``event_id`` (a substring search first)."""
    needle = event_id.encode("utf-8", "surrogatepass")
    pos = data.find(needle, lo, end)
    while pos >= 0:
        begin = data.rfind(b"\n", lo, pos) + 1 or lo
        stop = data.find(b"\n", pos, end)
        stop = end if stop < 0 else stop
        if classify_record(data[max(lo, begin) : stop]) == event_id:
            return True
        pos = data.find(needle, stop, end)
    return False
