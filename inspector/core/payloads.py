"""Payloads on demand: the timeline keeps no payloads in memory, so they are re-read by offset.

A million-event journal does not fit in memory with its payloads, and the table only ever shows a
few dozen rows. :class:`RecordReader` reads the records of the rows on screen in one short
open/read/close (readers must not hold the file open: on Windows that makes the writer's
``os.replace`` fail), and :class:`SummaryCache` keeps the one-line summaries it derived.
:func:`search_payloads` is the free-text / regex filter over payloads, run in a worker; it reads
the journal in chunks and looks at the few lines that can match, not at every line.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import re
import sys
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from inspector.core.jobs import CancelToken
from inspector.core.timeline import CharacterTimeline, Row, defect_summary, summarize
from journal.codec import loads_exact
from journal.reader import Defect

_READ_STEP = 4096
#: Records longer than this are not parsed for a summary (the detail pane still shows them).
SUMMARY_LIMIT = 1 << 20


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
            return loads_exact(raw), raw
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
            return defect_summary(tl.defects[~ref], redact=self.redact)
        text = self._cache.get(ref)
        if text is not None:
            return text
        lo, hi = max(0, pos - window), min(len(refs), pos + window)
        todo = [r for r in refs[lo:hi] if r >= 0 and r not in self._cache]
        events = tl.events
        raw = self.reader.raw_records((events.offset(r) for r in todo), limit=SUMMARY_LIMIT)
        for r in todo:
            self._store(r, record_summary(events.type(r), raw.get(events.offset(r)), redact=self.redact))
        return self._cache.get(ref, "")


def record_summary(event_type: str, data: bytes | None, *, redact: bool = False) -> str:
    """The summary column of an event from its journal line (``None``: it could not be read),
    read with ``limit=SUMMARY_LIMIT`` (the table's, and the copies' and exports')."""
    if data is None:
        return "(record not readable)"
    if len(data) > SUMMARY_LIMIT:
        return f"(record of more than {SUMMARY_LIMIT >> 20} MiB)"
    try:
        record = loads_exact(data.lstrip(b"\xef\xbb\xbf"))
        payload = record.get("payload") if isinstance(record, dict) else None
        return summarize(event_type, {} if payload is None else payload, redact=redact)
    except ValueError:
        return "(record no longer parses: the journal changed)"


# -- searching payloads ------------------------------------------------------------------------

#: Bytes read at a time by the search (1 to 8 MiB measured alike; a small one keeps less alive).
_CHUNK = 2 << 20
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
) -> list[int]:
    r"""The refs of ``refs`` (file-ordered) whose payload matches ``pattern``, in the same order.

    The text searched is the row's journal line, decoded as UTF-8 with invalid bytes replaced:
    for an event, from the line's first ``"payload"`` key on (so ids, types and timestamps do not
    match by accident; see :func:`payload_matches`); for a damaged line, the whole line.

    The file is read in chunks, and only the lines that can match are ever looked at one by one:

    - a free-text search (the case-insensitive literal :func:`compile_search` makes) runs on the
      bytes: each chunk is lower-cased (ASCII) and searched for the text's UTF-8 bytes, with the
      other spellings ``re.IGNORECASE`` accepts for a character (``K`` for ``k``, ``ſ`` for ``s``,
      ``É`` for ``é``...) added only when the chunk holds them; nothing is decoded;
    - a regular expression that holds plain characters every match must hold (``tea$``,
      ``\d+:00:00``) looks for them so, and decodes and searches only the lines that hold them;
    - any other regular expression runs on each decoded chunk (``^`` and ``$`` at every line),
      and each line it finds something in is searched again alone; a pattern that looks at the
      start or end of the text (``\A``, ``\Z``) or around itself (lookarounds) is tried on every
      line.

    A matching line is mapped to its rows by bisecting the events' offsets (or line numbers).
    Memory stays at a few chunks plus one list entry per event.

    Raises:
        Cancelled: ``token`` was cancelled (checked between chunks).
    """
    if not len(refs):
        return []
    rows = _RowIndex(timeline, refs)
    literal = _literal_text(pattern)
    try:
        fh = open(path, "rb")
    except OSError:
        return []
    verify: re.Pattern[str] | None = None
    if literal is None:
        literal, verify = _required_text(pattern), pattern
    with fh:
        # U+FFFD also stands for the bytes that are not UTF-8: only the decoded text has it.
        if literal and "\ufffd" not in literal:
            if "\n" in literal:
                return []  # no line holds a newline
            spelled = _Literal.of(literal)
            return [] if spelled is None else _search_bytes(fh, spelled, rows, token, verify)
        return _search_text(fh, pattern, rows, token)


def payload_matches(record_text: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` matches a record's text from its ``"payload"`` key on."""
    start = record_text.find(PAYLOAD_KEY)
    return start >= 0 and pattern.search(record_text, start + len(PAYLOAD_KEY)) is not None


# -- the rows of a line ---------------------------------------------------------------------------


class _RowIndex:
    """The rows of ``refs`` by where they are in the journal: a line's rows, without a dict of
    every line (events by bisecting their offsets or lines; damaged lines, few, in dicts)."""

    def __init__(self, timeline: CharacterTimeline, refs: Sequence[int]) -> None:
        events = timeline.events
        self.offsets = events.offsets()  # one list entry per event; the ints are the records'
        self._lines: list[int] | None = None
        self._events = events
        self.count = len(self.offsets)
        self.defects_at: dict[int, list[int]] = {}  # a damaged line's first byte -> its rows
        self.defects_on: dict[int, list[int]] = {}  # its line number -> its rows
        damaged = [r for r in refs if r < 0]
        for ref in damaged:  # in file order
            defect = timeline.defects[~ref]
            self.defects_at.setdefault(defect.offset, []).append(ref)
            self.defects_on.setdefault(defect.line, []).append(ref)
        self.wanted: bytearray | None = None  # None: every event is a row
        if len(refs) - len(damaged) != self.count:  # refs hold no repeats
            wanted = bytearray(self.count)
            any(map(wanted.__setitem__, (r for r in refs if r >= 0), itertools.repeat(1)))
            self.wanted = wanted

    @property
    def lines(self) -> list[int]:
        if self._lines is None:
            self._lines = self._events.lines()
        return self._lines

    def events_between(self, start: int, stop: int) -> list[int]:
        """The event rows whose record starts in ``[start, stop)`` (file offsets)."""
        offsets, wanted = self.offsets, self.wanted
        i = bisect.bisect_left(offsets, start)
        out = []
        while i < self.count and offsets[i] < stop:
            if wanted is None or wanted[i]:
                out.append(i)
            i += 1
        return out

    def events_on(self, line: int) -> list[int]:
        """The event rows of journal line ``line``."""
        lines, wanted = self.lines, self.wanted
        i = bisect.bisect_left(lines, line)
        out = []
        while i < self.count and lines[i] == line:
            if wanted is None or wanted[i]:
                out.append(i)
            i += 1
        return out


def _chunks(fh: Any, token: CancelToken | None) -> Iterator[tuple[int, bytes, bool]]:
    """``(file offset, data, last)``: the file in pieces of whole lines (the last may be
    unterminated)."""
    base = 0
    rest = b""
    while True:
        if token is not None:
            token.check()
        chunk = fh.read(_CHUNK)
        if not chunk:
            if rest:
                yield base, rest, True
            return
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            rest = data
            continue
        rest = data[cut:]
        yield base, data[:cut] if rest else data, False
        base += cut


# -- free text, on bytes ----------------------------------------------------------------------------

_PAYLOAD_BYTES = PAYLOAD_KEY.encode()
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def _literal_text(pattern: re.Pattern[str]) -> str | None:
    """The text of a :func:`compile_search` free-text pattern (``None`` for any other pattern)."""
    if pattern.flags != re.IGNORECASE | re.UNICODE:
        return None
    text = _ESCAPED.sub(r"\1", pattern.pattern)
    return text if text and re.escape(text) == pattern.pattern else None


#: Characters that mean something in a pattern (and a newline, which no line holds).
_SPECIAL = frozenset(".^$*+?{}[]\\|()\n")
#: What may follow a character and make it optional (``{`` may be a literal one: taken as optional).
_OPTIONAL_AFTER = frozenset("*?{")


def _required_text(pattern: re.Pattern[str]) -> str:
    """The longest run of plain characters that every match of ``pattern`` holds (``""`` when
    unsure): plain characters in the pattern's top-level sequence, outside groups, classes,
    escapes and quantifier bounds, each not made optional by a quantifier. With a top-level
    alternative or verbose whitespace, there is none."""
    source = pattern.pattern
    if pattern.flags & re.VERBOSE:
        return ""
    runs: list[str] = []
    run: list[str] = []
    depth = 0
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c not in _SPECIAL and depth == 0:
            if i + 1 < n and source[i + 1] in _OPTIONAL_AFTER:
                runs.append("".join(run))
                run = []
            else:
                run.append(c)
            i += 1
            continue
        runs.append("".join(run))
        run = []
        if c == "\\":
            i = _after_escape(source, i)
        elif c == "{":
            close = source.find("}", i)
            i = i + 1 if close < 0 else close + 1  # a quantifier's bounds are not text
        elif c == "[":
            i += 1
            if i < n and source[i] == "^":
                i += 1
            if i < n and source[i] == "]":
                i += 1  # a ] first in a class is one of its characters
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
            i += 1
        else:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "|" and depth == 0:
                return ""  # every match holds one alternative or the other
            i += 1
    runs.append("".join(run))
    return max(runs, key=len)


#: Escapes followed by a fixed number of hex digits.
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _after_escape(source: str, i: int) -> int:
    """Where the escape that starts at ``source[i]`` (a backslash) ends."""
    kind = source[i + 1 : i + 2]
    if kind in _HEX_ESCAPES:
        return i + 2 + _HEX_ESCAPES[kind]
    end = i + 2  # \N{NAME}: its braces are skipped like a quantifier's
    if kind.isdigit():  # a group reference or an octal escape: up to three digits
        while end < len(source) and end < i + 4 and source[end].isdigit():
            end += 1
    return end


#: Every character each character matches under ``re.IGNORECASE``, itself included (filled as
#: searches need them).
_VARIANTS: dict[str, tuple[str, ...]] = {}


def _case_variants(chars: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The characters ``re.IGNORECASE`` lets each of ``chars`` match, asked of the regex engine
    itself: one case-insensitive class of them all over every code point, then each hit sorted
    out to the characters it matches."""
    todo = sorted(set(chars) - _VARIANTS.keys())
    if todo:
        every = _every_character()
        hits = re.compile("[" + "".join(map(re.escape, todo)) + "]", re.IGNORECASE).findall(every)
        for c in todo:
            one = re.compile(re.escape(c), re.IGNORECASE).fullmatch
            _VARIANTS[c] = tuple(x for x in hits if one(x))
    return {c: _VARIANTS[c] for c in chars}


def _every_character() -> str:
    """Every code point but the surrogates (which decoded text never holds), in order."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
    points = array("I", range(0xD800))
    points.extend(range(0xE000, sys.maxunicode + 1))
    return points.tobytes().decode(codec)


class _Literal:
    """A case-insensitive literal as bytes to find in a lower-cased (ASCII) chunk.

    Attributes:
        spellings: per character, its lower-cased UTF-8 spellings; the first is the usual one
            (ASCII when there is one), the others are searched for only where a chunk holds them.
    """

    def __init__(self, spellings: list[tuple[bytes, ...]]) -> None:
        self.spellings = spellings
        self.plain = b"".join(s[0] for s in spellings)
        self._others = sorted({o for s in spellings for o in s[1:]})

    @classmethod
    def of(cls, text: str) -> _Literal | None:
        """The literal for ``text``; ``None`` when no decoded text can hold it (a lone surrogate)."""
        variants = _case_variants(text)
        spellings = []
        for c in text:
            if not variants[c]:
                return None
            encoded = list(dict.fromkeys(x.encode("utf-8").lower() for x in (c, *variants[c])))
            encoded.sort(key=lambda b: not b.isascii())  # the ASCII spelling first, else c's own
            spellings.append(tuple(encoded))
        return cls(spellings)

    def finder(self, data: bytes) -> Callable[[int, int], int]:
        """``find(start, stop)``: where the literal first starts in ``data[start:stop]``, or -1."""
        ascii_data = data.isascii()
        if ascii_data and not self.plain.isascii():
            return _nowhere  # every spelling of some character is non-ASCII
        # Lower-cased only when the literal has ASCII letters (positions do not move).
        low = data.lower() if self.plain != self.plain.upper() else data
        present = set()
        if not ascii_data:  # every other spelling is non-ASCII
            present = {o for o in self._others if o[:1] in low and o in low}
        if not present:
            return functools.partial(low.find, self.plain)
        parts = []
        for s in self.spellings:
            kept = [s[0], *(o for o in s[1:] if o in present)]
            parts.append(re.escape(kept[0]) if len(kept) == 1 else b"(?:" + b"|".join(map(re.escape, kept)) + b")")
        search = re.compile(b"".join(parts)).search

        def find(start: int, stop: int) -> int:
            m = search(low, start, stop)
            return -1 if m is None else m.start()

        return find


def _nowhere(start: int, stop: int) -> int:
    return -1


def _search_bytes(
    fh: Any, literal: _Literal, rows: _RowIndex, token: CancelToken | None, verify: re.Pattern[str] | None
) -> list[int]:
    """The rows whose line holds ``literal`` (after the payload key, for an event), or, with
    ``verify``, whose line holds it and, decoded, matches ``verify`` (as :func:`payload_matches`
    says, for an event)."""
    hits: list[int] = []
    key = _PAYLOAD_BYTES
    after_key = len(key)
    offsets, wanted, count, defects_at = rows.offsets, rows.wanted, rows.count, rows.defects_at
    bisect_left = bisect.bisect_left
    i = 0  # the events before offsets[i] are behind the search
    for base, data, _last in _chunks(fh, token):
        find = literal.finder(data)
        end = len(data)
        at = find(0, end)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            if stop < 0:
                stop = end
            damaged = defects_at.get(base + start) if defects_at else None
            if i < count and offsets[i] < base + start:  # (dense hits: usually the next event already)
                i = bisect_left(offsets, base + start, i + 1)
            # The event of this line, if it has one (a line holds one event at most) and it is a row.
            event = i < count and offsets[i] < base + stop and (wanted is None or wanted[i])
            if verify is not None:
                if damaged or event:
                    text = data[start:stop].decode("utf-8", "replace")
                    if damaged and verify.search(text) is not None:
                        hits += damaged
                    if event and payload_matches(text, verify):
                        hits.append(i)
            else:
                if damaged:
                    hits += damaged  # the whole line is searched: it holds the text
                if event:
                    payload = data.find(key, start, stop)
                    if payload >= 0 and (at >= payload + after_key or find(payload + after_key, stop) >= 0):
                        hits.append(i)
            at = find(stop + 1, end) if stop < end else -1
    return hits


# -- regular expressions, on text ----------------------------------------------------------------------

#: What makes a pattern's match on a line depend on the text beyond the line.
_LOOKS_BEYOND = re.compile(r"\\[AZ]|\(\?<?[=!]")


def _search_text(fh: Any, pattern: re.Pattern[str], rows: _RowIndex, token: CancelToken | None) -> list[int]:
    if _LOOKS_BEYOND.search(pattern.pattern):
        finder = re.compile("^", re.MULTILINE)  # every line is a candidate
    else:
        # Whatever the pattern finds in a line alone it also finds in the chunk, with ^ and $ at
        # every line: so the chunk search only skips lines it cannot match.
        finder = re.compile(pattern.pattern, pattern.flags | re.MULTILINE)
    hits: list[int] = []
    line = 1
    for _base, data, last in _chunks(fh, token):
        text = data.decode("utf-8", "replace")
        end = len(text)
        counted = 0
        pos = 0
        while pos <= end:
            m = finder.search(text, pos)
            if m is None:
                break
            at = m.start()
            if at == end and not last:
                break  # after the chunk's last newline: the next chunk's first line
            start = text.rfind("\n", 0, at) + 1
            stop = text.find("\n", at)
            if stop < 0:
                stop = end
            line += text.count("\n", counted, start)
            counted = start
            pos = stop + 1
            damaged = rows.defects_on.get(line) if rows.defects_on else None
            events = rows.events_on(line)
            if not damaged and not events:
                continue
            record = text[start:stop]
            if damaged and pattern.search(record) is not None:
                hits += damaged
            if events and payload_matches(record, pattern):
                hits += events
        line += text.count("\n", counted)
    return hits
