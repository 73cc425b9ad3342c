"""The last complete event of a journal, exactly as the reader sees it: whether a live write may
advance the sentinel (the design record's known limitation, closed here).

Exact means: the event :func:`journal.reader.read_journal` would list last. A line repeating the
id of an earlier record anywhere in the file is not an event (the reader reports it as
``duplicate_event_id``), so it is never the answer, however far back the earlier copy is:
otherwise a duplicate of the sentinel's record appended after an unapplied tail would make
``record_and_save`` believe the sentinel is at the end and orphan that tail.

Exactness needs every earlier id, so the answer is kept per journal (:class:`LastEventCache`): the
first question reads the whole file once; after that only the bytes appended since are read (the
file's identity, size and mtime say whether it changed, and the last bytes already read must
still be in place). The ids read are kept as 64-bit digests in a sorted array (8 bytes per event);
a digest match, which a true duplicate or a collision gives, is settled by reading the file whole
again. Each question therefore costs O(bytes appended since the last one): O(1) amortised in
journal size.
"""

from __future__ import annotations

import os
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from journal import fs
from journal.events import Event
from journal.reader import _CHUNK, JournalScanner


def classify_record(raw: bytes) -> str | None:
    """The event id a single complete line stands for (glued salvage included), else ``None``."""
    scanner = JournalScanner()
    events: list[Event] = []
    scanner._classify_slow(raw, events, [], terminated=True)
    return events[0].event_id if events else None


class _Digests:
    """A set of 64-bit digests of event ids: a sorted array plus a small unsorted set of recent
    additions, merged when it grows past an eighth of the array (amortised O(log n) per add)."""

    __slots__ = ("_recent", "_sorted")

    def __init__(self, digests: Iterable[int] = ()) -> None:
        self._sorted = array("q", sorted(set(digests)))
        self._recent: set[int] = set()

    def __contains__(self, digest: int) -> bool:
        if digest in self._recent:
            return True
        i = bisect_left(self._sorted, digest)
        return i < len(self._sorted) and self._sorted[i] == digest

    def add(self, digest: int) -> None:
        self._recent.add(digest)
        if len(self._recent) > max(1024, len(self._sorted) >> 3):
            self._sorted = array("q", sorted({*self._sorted, *self._recent}))
            self._recent.clear()


def _digest(event_id: str) -> int:
    # The process's own string hash (64-bit SipHash on 64-bit builds): the cache lives in memory only.
    return hash(event_id)


#: Bytes before the read position that must still be in place for the cache to extend.
_ANCHOR = 4096


@dataclass(slots=True)
class _End:
    """What is known of one journal: read up to ``offset`` (complete lines), the last event there,
    the digests of every id read, and the answer for the file as it was (``size``, ``mtime``)."""

    ident: tuple[int, int]
    size: int
    mtime_ns: int
    offset: int
    line: int
    anchor: bytes
    last: str | None
    answer: str | None
    digests: _Digests


class _Stale(Exception):
    """An appended id matched a digest: read the file whole again."""


def _pread_all(fd: int, length: int, offset: int) -> bytes:
    """``length`` bytes at ``offset`` (fewer only when the file ends first)."""
    parts = []
    while length > 0:
        chunk = os.pread(fd, min(length, _CHUNK), offset)
        if not chunk:
            break
        parts.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _scan(fd: int, st: os.stat_result, start: _End | None) -> _End:
    """Read from ``start`` (or the beginning) to ``st.st_size``; exact."""
    if start is None:
        scanner = JournalScanner()
        digests: _Digests | None = None
        last: str | None = None
        pos = 0
    else:
        scanner = JournalScanner(offset=start.offset, line=start.line)
        digests, last, pos = start.digests, start.last, start.offset
    end = st.st_size
    while pos < end:
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        events: list[Event] = []
        scanner.feed(chunk, events, [])
        for ev in events:
            if digests is not None:
                d = _digest(ev.event_id)
                if d in digests:
                    raise _Stale
                digests.add(d)
            last = ev.event_id
    # The unterminated last line, classified as if the file ended there (as the reader does), not
    # committed: the next question reads it again, completed or not.
    answer = last
    rest = scanner._rest
    if rest:
        probe = JournalScanner(offset=scanner.offset, line=scanner.line, seen_ids=scanner.seen_ids)
        probe._rest = rest
        found: list[Event] = []
        probe.finish(found, [])
        for ev in found:
            scanner.seen_ids.discard(ev.event_id)
            if digests is not None and _digest(ev.event_id) in digests:
                raise _Stale
            answer = ev.event_id
    if digests is None:
        digests = _Digests(_digest(i) for i in scanner.seen_ids)
    offset = scanner.offset
    anchor = _pread_all(fd, min(_ANCHOR, offset), offset - min(_ANCHOR, offset))
    return _End((st.st_dev, st.st_ino), end, st.st_mtime_ns, offset, scanner.line, anchor, last, answer, digests)


class LastEventCache:
    """The last complete event of each journal asked about, kept up to date incrementally.

    Thread-safe; questions about one journal are answered one at a time.

    Args:
        max_journals: how many journals to remember (least recently asked go first); ``None``:
            no bound.
    """

    def __init__(self, max_journals: int | None = None) -> None:
        self._max = max_journals
        self._guard = threading.Lock()
        self._slots: OrderedDict[str, tuple[threading.Lock, list[_End | None]]] = OrderedDict()

    def _slot(self, key: str) -> tuple[threading.Lock, list[_End | None]]:
        with self._guard:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = (threading.Lock(), [None])
                if self._max is not None and len(self._slots) > self._max:
                    self._slots.popitem(last=False)
            else:
                self._slots.move_to_end(key)
            return slot

    def forget(self, path: str | os.PathLike[str]) -> None:
        """Drop what is known of ``path`` (the next question reads it whole)."""
        with self._guard:
            self._slots.pop(os.fspath(path), None)

    def last_event_id(self, path: str | os.PathLike[str]) -> tuple[bool, str | None]:
        """``(True, id)`` of the last event the reader would list, or ``(True, None)`` when the
        journal is missing or has no events. (The first item is always ``True``: the answer is
        exact.)

        Raises:
            OSError: the journal exists but cannot be read, or is not a regular file (never read).
        """
        lock, cell = self._slot(os.fspath(path))
        with lock:
            try:
                fh = fs.open_regular(path)
            except FileNotFoundError:
                cell[0] = None
                return True, None
            with fh:
                fd = fh.fileno()
                st = os.fstat(fd)
                known = cell[0]
                if known is not None and known.ident == (st.st_dev, st.st_ino):
                    if known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
                        return True, known.answer
                    grew = st.st_size > known.size
                    if not grew or _pread_all(fd, len(known.anchor), known.offset - len(known.anchor)) != known.anchor:
                        known = None
                else:
                    known = None
                try:
                    state = _scan(fd, st, known)
                except _Stale:
                    state = _scan(fd, st, None)
                cell[0] = state
                return True, state.answer


_DEFAULT = LastEventCache(max_journals=64)


def last_event_id(path: str | os.PathLike[str], *, cache: LastEventCache | None = None) -> tuple[bool, str | None]:
    """The id of the last complete event of a journal, exactly as :func:`journal.read_journal`
    lists it (the one home of that rule): ``(True, id)``, or ``(True, None)`` when the journal is
    missing or has no events.

    Costs O(bytes appended since ``cache`` last answered for this path); the first answer reads
    the file whole. ``cache``: whose memory to use (default: a module-wide cache of 64 journals).

    Raises:
        OSError: the journal exists but cannot be read, or is not a regular file (never read).
    """
    return (cache or _DEFAULT).last_event_id(path)
