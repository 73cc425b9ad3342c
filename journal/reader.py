"""Tolerant, incremental reader of ``events.ndjson`` that locates every defect.

The reader never raises on content. Each physical line (split on ``\\n``) becomes either an
:class:`~journal.events.Event`, a :class:`Defect`, both (``unknown_type``, ``glued``), or nothing
(a blank line). Line numbers are 1-based, byte offsets 0-based from the start of the file.

A record whose ``event_id`` is not valid Unicode (an escaped lone surrogate, which Python's
``json`` reads) is a ``missing_event_id`` defect, never an event: no sentinel or view could hold
its id, so it can never be replayed or pointed at.

Glued lines. A crash that tears an append leaves a fragment without its ``\\n``, and the memory
server's next append is glued onto it. The bytes alone cannot always tell that apart from one
torn record: a line torn right after ``"payload": `` with a record glued on looks exactly like a
record whose payload is that object, torn after it. So a record is recovered from a line that is
not JSON only when:

1. it starts with ``{"event_id": `` exactly as both writers start a record, and runs to the end
   of the line as one JSON object with a usable ``event_id``; and
2. no record that may have started earlier on the line (at the line start, or at an earlier
   ``{"event_id": ``) can hold it: read as JSON from there, the bytes before it break the grammar
   first, or end where no value may begin (inside a string, a number or a literal, after a key,
   after ``{``, after a ``,`` between members, after a complete value). A fragment ending where a
   value may begin (after ``:``, ``[`` or a ``,`` in an array) could hold it: the line is then
   refused, never guessed. Invalid UTF-8 or a control character inside a string is damage, not a
   break: a record damaged there still reaches what follows.

The parser says where a value may begin: each such earlier start is parsed up to the first bytes
of the next ``{"event_id": ``, and the parse either stops before them or reads through them. The
bytes handed to the parser while salvaging one line are at most twice the line's length, and at
most ``_GLUE_MAX_STARTS`` starts are tried; past either bound the line is refused.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, BinaryIO, cast

import msgspec

from journal import fs
from journal.codec import loads_exact
from journal.events import (
    ALL_EVENT_TYPES,
    PARSED_BODY,
    DeclaredType,
    EntryKeys,
    Event,
    EventSummary,
    SummaryRecord,
    is_unicode,
)

BOM = b"\xef\xbb\xbf"

#: Defect kinds, a closed set.
DEFECT_KINDS = (
    "malformed",
    "torn_tail",
    "glued",
    "not_object",
    "missing_event_id",
    "duplicate_event_id",
    "unknown_type",
    "invalid_utf8",
)

#: Defect kinds whose line still yields an event (``unknown_type``): the event carries the problem
#: (``blocked``, reason ``no_handler``), so the line is not also a damaged line.
EVENT_CARRIED_KINDS = frozenset({"unknown_type"})


def is_damaged_line(defect: Defect) -> bool:
    """Whether a defect is a damaged line, a record that is not an event (the one home of that rule:
    every record is an event or a damaged line, never both)."""
    return defect.kind not in EVENT_CARRIED_KINDS


#: How both writers start a record (``json.dumps``, default separators, ``event_id`` first): the
#: only place a glued record is looked for.
_RECORD_START = b'{"event_id": '

#: Glued-line salvage tries at most this many record starts on one line (a real glued line has one
#: or two torn fragments before its record); see the module docstring.
_GLUE_MAX_STARTS = 64

_CHUNK = 8 << 20

#: Lines are decoded in batches of about this many bytes (one msgspec call per batch; measured
#: fastest between 256 KiB and 4 MiB on a 500 MB journal).
_BATCH = 1 << 20

#: What the reader makes of each record: a whole :class:`Event`, or an :class:`EventSummary`.
Record = Event | EventSummary

#: What msgspec raises for a line it does not take (a deeply nested value exceeds its recursion limit).
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

_EVENT_DECODER = msgspec.json.Decoder(Event)
#: Summaries decode into their type's own record (:data:`journal.events.SUMMARY_TYPES`), which
#: checks the fields that name the entry; a record it refuses takes the exact path.
_SUMMARY_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(SummaryRecord)


@dataclass(frozen=True, slots=True)
class Defect:
    """A located problem in the journal.

    Attributes:
        kind: one of :data:`DEFECT_KINDS`.
        line: 1-based line number.
        offset: byte offset of the line's first byte.
        length: length of the line in bytes (without its ``\\n``).
        message: what is wrong, in words.
        event_id: for ``duplicate_event_id`` / ``unknown_type``: the record's id.
        recovered_event_id: for ``glued``: the id of the intact event recovered from the line.
        server_reads: for ``missing_event_id``: the line is an object with an ``event_id`` key
            (null, or an id that is not valid Unicode), which the memory server's reader takes as
            a record although ours does not (memory-format §4.1 step 2:
            :func:`journal.serverrules.server_reader`).
    """

    kind: str
    line: int
    offset: int
    length: int
    message: str
    event_id: str | None = None
    recovered_event_id: str | None = None
    server_reads: bool = False


def _loads(raw: bytes) -> tuple[Any, int]:
    """Parse ``raw`` with :func:`journal.codec.loads_exact`: ``(value, -1)``, or ``(_BAD, stop)``.

    ``stop`` is the byte offset where the parse stopped: ``raw[:stop]`` is the most that can be
    the beginning of one JSON value (an unterminated string counts from its opening quote). Bytes
    that can only be damage inside a string (invalid UTF-8, a control character) do not stop it:
    a record damaged there still reaches as far as it did. Nesting too deep to parse gives
    ``len(raw)``: nothing is known. Every exact parse of a line, or of a piece of one, is made here.
    """
    try:
        return loads_exact(raw), -1
    except UnicodeDecodeError:
        pass
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Invalid control character"):
            return _BAD, _byte_offset(raw, exc.doc, exc.pos)
    except ValueError:
        return _BAD, len(raw)
    text = raw.decode("utf-8", "surrogateescape")  # each bad byte: one character, inside a string
    try:
        _READ_ON.decode(text)
    except json.JSONDecodeError as exc:
        return _BAD, _byte_offset(raw, text, exc.pos)
    except RecursionError:
        pass
    return _BAD, len(raw)


#: Reads strings holding control characters (and the lone surrogates that stand for invalid UTF-8)
#: as strings: only to learn where a damaged line's parse stops, never to take a value.
_READ_ON = json.JSONDecoder(strict=False)


def _byte_offset(raw: bytes, text: str, pos: int) -> int:
    """The byte offset in ``raw`` of character ``pos`` of ``text`` (``raw`` decoded)."""
    return pos if raw.isascii() else len(text[:pos].encode("utf-8", "surrogateescape"))


class _Bad:
    __slots__ = ()


_BAD: Any = _Bad()


def _preview(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("utf-8", "replace")
    return text + ("…" if len(raw) > limit else "")


_event_id = attrgetter("event_id")

#: UTF-8 is checked in pieces of about this size (cut at newlines): decoding a piece that stays in
#: the CPU's cache measured 3x faster than decoding 1 MiB at once.
_UTF8_PIECE = 256 << 10


def _valid_utf8(data: bytes, view: memoryview, start: int, stop: int, ascii: bool | None = None) -> bool:
    """Whether ``data[start:stop]`` is valid UTF-8.

    msgspec checks the UTF-8 of the strings it decodes, not of the fields it skips; Python's
    ``json`` (the reference) refuses a line with invalid UTF-8 anywhere in it. ``ascii`` is
    ``data.isascii()`` when the caller knows it already (it checks a whole read once, not once
    for each of its batches).
    """
    if data.isascii() if ascii is None else ascii:  # stops at the first non-ASCII byte
        return True
    if stop - start <= _UTF8_PIECE:
        try:
            codecs.utf_8_decode(view[start:stop], "strict", True)
        except UnicodeDecodeError:
            return False
        return True
    pos = start
    while pos < stop:
        cut = stop if stop - pos <= _UTF8_PIECE else data.rfind(b"\n", pos, pos + _UTF8_PIECE)
        if cut <= pos:
            cut = stop
        try:
            codecs.utf_8_decode(view[pos:cut], "strict", True)
        except UnicodeDecodeError:
            return False
        pos = cut
    return True


class JournalScanner:
    """Stateful line classifier: feed it bytes in order, get events and defects back.

    It keeps the position (line number, byte offset), the ids seen so far (for duplicate
    detection) and an unterminated remainder between calls, so it can tail a growing file.

    Lines are decoded a batch at a time by msgspec into :class:`~journal.events.Event` values
    (or :class:`~journal.events.EventSummary` values, ``summaries=True``), which check the
    record's shape as they decode: an object with a string ``event_id``, a declared ``type``, a
    string ``ts`` if any. A batch is taken whole only when every line of it is one such record
    (see :meth:`_place`) with a new, non-empty id. Any other batch is read line by line: a line
    msgspec decodes alone is taken as it is, and every other line goes to the exact path
    (:meth:`_classify_slow`), which parses as Python's ``json`` does and says what is wrong.

    Attributes:
        offset: bytes consumed so far (complete lines only).
        line: number of complete lines consumed so far.
        lines_total: lines classified so far, blank ones included.
        bom_lines: lines whose event follows a UTF-8 BOM. Ours reads past it; the memory server's
            reader does not (its ``json.loads`` rejects the line, memory-format §9.8.5), so it
            never sees that event (:func:`journal.serverrules.server_reader`).
    """

    def __init__(
        self,
        *,
        offset: int = 0,
        line: int = 0,
        seen_ids: set[str] | None = None,
        summaries: bool = False,
    ) -> None:
        self.offset = offset
        self.line = line
        self.seen_ids: set[str] = seen_ids if seen_ids is not None else set()
        self.summaries = summaries
        self._decoder: msgspec.json.Decoder[Any] = _SUMMARY_DECODER if summaries else _EVENT_DECODER
        self._rest = b""
        self.bom_lines: list[int] = []

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unterminated last line held back until it is completed or finished."""
        return len(self._rest)

    def feed(self, data: bytes, events: list[Any], defects: list[Defect]) -> None:
        """Classify every complete line in ``self``'s remainder + ``data``; append results."""
        if self._rest:
            data = self._rest + data
            self._rest = b""
        cut = data.rfind(b"\n")
        if cut < 0:
            self._rest = data
            return
        if cut + 1 < len(data):
            self._rest = data[cut + 1 :]
        self._scan(data, cut, events, defects)

    def finish(self, events: list[Any], defects: list[Defect]) -> None:
        """Classify the held-back unterminated last line (the file is complete)."""
        raw, self._rest = self._rest, b""
        if raw:
            self._classify_slow(raw, events, defects, terminated=False)
            self.offset += len(raw)
            self.line += 1

    def read_file(self, fh: BinaryIO, chunk_size: int) -> Iterator[tuple[list[Any], list[Defect]]]:
        """Classify a whole file from its current position, yielding each chunk's results.

        Like :meth:`feed` and :meth:`finish`, without copying: each read ends at its last
        newline (the file is moved back to there), so every byte is read into one buffer only.
        """
        size = chunk_size
        while True:
            data = fh.read(size)
            events: list[Any] = []
            defects: list[Defect] = []
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) == size:  # one line longer than the chunk: read it whole
                    fh.seek(-len(data), os.SEEK_CUR)
                    size *= 2
                    continue
                if data:
                    self._rest = data
                    self.finish(events, defects)
                    yield events, defects
                return
            if cut + 1 < len(data):
                fh.seek(cut + 1 - len(data), os.SEEK_CUR)
            self._scan(data, cut, events, defects)
            size = chunk_size
            yield events, defects

    def _scan(self, data: bytes, end: int, events: list[Any], defects: list[Defect]) -> None:
        # Complete lines data[:end] (data[end] is their last newline), in batches of about
        # _BATCH bytes cut at line ends; a line longer than that is a batch of its own.
        view = memoryview(data)
        ascii = data.isascii()  # once per read: it stops at the first non-ASCII byte
        pos = 0
        while True:
            cut = end if end - pos <= _BATCH else data.rfind(b"\n", pos, pos + _BATCH)
            if cut < pos:
                cut = data.find(b"\n", pos + _BATCH, end + 1)
            self._scan_batch(data, view, pos, cut, ascii, events, defects)
            if cut >= end:
                return
            pos = cut + 1

    def _scan_batch(
        self,
        data: bytes,
        view: memoryview,
        start: int,
        stop: int,
        ascii: bool,
        events: list[Any],
        defects: list[Defect],
    ) -> None:
        """``data[start:stop]``: complete lines, without the newline after the last one."""
        try:
            decoded: list[Any] = self._decoder.decode_lines(view[start:stop])
        except _DECODE_ERRORS:
            pass
        else:
            if (
                decoded
                and _valid_utf8(data, view, start, stop, ascii)
                and self._place(data, start, stop, decoded)
                and self._take_ids(decoded)
            ):
                events.extend(decoded)
                self.line = decoded[-1].line
                self.offset += stop - start + 1
                return
        self._scan_lines(data[start:stop], events, defects)

    def _place(self, data: bytes, start: int, stop: int, decoded: list[Any]) -> bool:
        """Give each decoded record its line and offset; whether every line of ``data[start:stop]``
        is one.

        ``decode_lines`` reads values, not lines: it skips blank lines, reads two glued records
        on one line as two, and a record may run over a newline. So the batch counts only when
        each line starts with ``{`` and ends with ``}`` (a ``\\r`` may follow), and there are as
        many records as lines. Then no record runs over a newline (a ``}`` that does not end a
        record must be followed by ``,``, ``}`` or ``]``, not by the next line's ``{``), every
        line holds at least one record, and so exactly one.
        """
        find = data.find
        shift = self.offset - start
        line = self.line
        pos = start
        for rec in decoded:
            if pos >= stop or data[pos] != 0x7B:
                return False
            nl = find(b"\n", pos, stop)
            if nl < 0:
                nl = stop
            if data[nl - 1] != 0x7D and not (data[nl - 1] == 0x0D and data[nl - 2] == 0x7D):
                return False
            line += 1
            rec.line = line
            rec.offset = pos + shift
            pos = nl + 1
        return pos == stop + 1

    def _take_ids(self, decoded: list[Any]) -> bool:
        """Add the batch's ids to those seen, if all are new and distinct (the decoder refused
        empty ones)."""
        ids = list(map(_event_id, decoded))
        seen = self.seen_ids
        if not seen.isdisjoint(ids):
            return False
        before = len(seen)
        seen.update(ids)
        if len(seen) - before == len(ids):
            return True
        seen.difference_update(ids)  # a repeat inside the batch; none of these was seen before
        return False

    def _scan_lines(self, chunk: bytes, events: list[Any], defects: list[Defect]) -> None:
        """The batch line by line: what msgspec decodes alone is taken, the rest goes to the
        exact path."""
        decode = self._decoder.decode
        seen = self.seen_ids
        offset = self.offset
        line = self.line
        for raw in chunk.split(b"\n"):
            line += 1
            rec: Any = None
            if raw[:1] == b"{" and _valid_utf8(raw, memoryview(raw), 0, len(raw)):
                try:
                    rec = decode(raw)
                except _DECODE_ERRORS:
                    rec = None
            if rec is not None and rec.event_id not in seen:
                seen.add(rec.event_id)
                rec.line = line
                rec.offset = offset
                events.append(rec)
            else:
                self.line, self.offset = line - 1, offset
                self._classify_slow(raw, events, defects, terminated=True)
            offset += len(raw) + 1
        self.line, self.offset = line, offset

    # -- slow path: anything that is not a clean, new, declared record ------------------------

    def _classify_slow(
        self,
        raw: bytes,
        events: list[Any],
        defects: list[Defect],
        *,
        terminated: bool,
    ) -> None:
        line_no = self.line + 1
        offset = self.offset
        length = len(raw)
        body = raw
        skip = 0
        if body.startswith(BOM):
            body, skip = body[3:], 3
        if not body.strip():
            return  # blank line: counted, not a defect
        obj, stop = _loads(body)
        if obj is not _BAD:
            before = len(events)
            self._accept(obj, body, line_no, offset, offset + skip, length, events, defects)
            if skip and len(events) > before:
                self.bom_lines.append(line_no)
            return
        recovered = _salvage_glued(body, stop)
        if recovered is not None:
            pos, rec = recovered
            defects.append(
                Defect(
                    "glued",
                    line_no,
                    offset,
                    length,
                    f"torn fragment of {pos + skip} bytes glued to an intact record",
                    recovered_event_id=rec["event_id"],
                )
            )
            self._accept(rec, body[pos:], line_no, offset, offset + skip + pos, length, events, defects)
            return
        if not terminated:
            defects.append(
                Defect("torn_tail", line_no, offset, length, f"unterminated last line: {_preview(body)!r}")
            )
            return
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            defects.append(
                Defect("invalid_utf8", line_no, offset, length, f"invalid UTF-8 at byte {exc.start + skip}")
            )
            return
        defects.append(Defect("malformed", line_no, offset, length, f"not valid JSON: {_preview(body)!r}"))

    def _record(self, eid: str, etype: str, obj: dict[str, Any], raw: bytes, line_no: int, offset: int) -> Record:
        """The reader's value for a record the exact path parsed from ``raw``.

        What msgspec decodes from the same bytes, when it can (so a record read here equals the
        same record read in a clean batch); else built from the parsed object.
        """
        if _valid_utf8(raw, memoryview(raw), 0, len(raw)):
            try:
                rec: Record = self._decoder.decode(raw)
            except _DECODE_ERRORS:
                pass
            else:
                rec.line, rec.offset = line_no, offset
                return rec
        ts = obj.get("ts")
        ts = ts if isinstance(ts, str) else ""
        payload = obj.get("payload")
        payload = {} if payload is None else payload
        name = cast(DeclaredType, etype)  # may be undeclared: the caller reports unknown_type
        if self.summaries:
            return EventSummary(eid, name, ts, EntryKeys.of(payload), line_no, offset)
        try:
            # ASCII-escaped: the payload may hold lone surrogates (valid JSON, not valid UTF-8).
            body = msgspec.Raw(json.dumps(payload).encode("ascii"))
        except RecursionError:
            return Event(eid, name, ts, PARSED_BODY, line_no, offset, payload)
        return Event(eid, name, ts, body, line_no, offset)

    def _accept(
        self,
        obj: Any,
        raw: bytes,
        line_no: int,
        offset: int,
        record_offset: int,
        length: int,
        events: list[Any],
        defects: list[Defect],
    ) -> None:
        # Defects are located at the line's first byte (``offset``); the event at its record's
        # first byte (``record_offset``: after a BOM, or after a glued fragment).
        if not isinstance(obj, dict):
            defects.append(
                Defect("not_object", line_no, offset, length, f"a JSON {type(obj).__name__}, not an object")
            )
            return
        eid = obj.get("event_id")
        # The server's reader keeps any object with the key, from a line it parses whole (no BOM,
        # no torn fragment before it: then the record starts where the line does).
        server_reads = "event_id" in obj and record_offset == offset
        if not isinstance(eid, str) or not eid:
            defects.append(
                Defect(
                    "missing_event_id",
                    line_no,
                    offset,
                    length,
                    "object without a string event_id",
                    server_reads=server_reads,
                )
            )
            return
        if not is_unicode(eid):
            defects.append(
                Defect("missing_event_id", line_no, offset, length, _NOT_UNICODE_ID, server_reads=server_reads)
            )
            return
        if eid in self.seen_ids:
            defects.append(
                Defect(
                    "duplicate_event_id",
                    line_no,
                    offset,
                    length,
                    f"event id {eid} already appeared earlier; this copy is not replayed",
                    event_id=eid,
                )
            )
            return
        self.seen_ids.add(eid)
        etype = obj.get("type")
        event = self._record(eid, etype if isinstance(etype, str) else "", obj, raw, line_no, record_offset)
        if not (isinstance(etype, str) and etype in ALL_EVENT_TYPES):
            what = "missing or non-string type" if not isinstance(etype, str) else f"undeclared type {etype!r}"
            defects.append(Defect("unknown_type", line_no, offset, length, what, event_id=eid))
        events.append(event)


_NOT_UNICODE_ID = "event_id is not valid Unicode (a lone surrogate): the record cannot be replayed"


def _usable_id(obj: Any) -> bool:
    eid = obj.get("event_id") if obj.__class__ is dict else None
    return isinstance(eid, str) and bool(eid) and is_unicode(eid)


def _salvage_glued(body: bytes, stop: int) -> tuple[int, dict[str, Any]] | None:
    """The record glued onto torn fragments at the end of ``body``, and where it starts; ``None``
    when none can be recovered for sure (the rule is in the module docstring).

    ``stop`` is where the exact parse of the whole line stopped. The starts are walked left to
    right, and ``stop`` is always where the parse from the latest start not held by an earlier one
    stopped. A start whose first bytes lie before ``stop`` was read through, so it may be held:
    skipped, and so is every start it may hold (the parse that read through it reads through
    those too). Any other start is parsed up to the next start's first bytes; only when that parse
    reads through them (the next start may be held) is it parsed to the end of the line, to learn
    where it stops. Each byte is handed to the parser at most twice this way, except by starts
    that hold the next one and still fail: the budget (twice the line) refuses the line then.
    """
    size = len(body)
    budget = 2 * size
    head = len(_RECORD_START)
    start = body.find(_RECORD_START, 1)
    tries = 0
    while start > 0:
        if start + head <= stop:
            start = body.find(_RECORD_START, stop - head + 1)
            continue
        tries += 1
        nxt = body.find(_RECORD_START, start + 1)
        end = size if nxt < 0 else nxt + head
        if tries > _GLUE_MAX_STARTS or end - start > budget:
            return None
        budget -= end - start
        obj, at = _loads(body[start:end])
        if nxt < 0:  # the last start: the rest of the line, parsed whole
            return (start, obj) if obj is not _BAD and _usable_id(obj) else None
        if start + at < end:  # stopped before the next start: that one is not held by this one
            stop = start + at
            start = nxt
            continue
        if size - start > budget:
            return None
        budget -= size - start
        obj, at = _loads(body[start:])
        if obj is not _BAD:  # every later start lies inside this record
            return (start, obj) if _usable_id(obj) else None
        stop = start + at
        start = body.find(_RECORD_START, start + 1)
    return None


@dataclass(slots=True)
class JournalRead:
    """A whole journal, read once.

    Attributes:
        events: every event in file order (recovered glued events included).
        defects: every located defect in file order.
        lines: physical lines, blank ones included.
        size: bytes read.
        present: whether the file existed.
        error: an ``OSError`` message when the file could not be read.
    """

    events: list[Event] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    lines: int = 0
    size: int = 0
    present: bool = False
    error: str | None = None


def iter_journal(
    path: str | os.PathLike[str], chunk_size: int = _BATCH, *, summaries: bool = False
) -> Iterator[tuple[list[Any], list[Defect]]]:
    """Read a journal in chunks, yielding ``(events, defects)`` batches in file order.

    ``events`` are :class:`~journal.events.Event` values, or :class:`~journal.events.EventSummary`
    values with ``summaries=True``. Memory stays bounded by the chunk size plus the longest line.

    Raises:
        OSError: only for the open/read itself: a missing or unreadable file, or one that is not a
            regular file (never read, so a FIFO cannot block: :func:`journal.fs.open_regular`).
    """
    with fs.open_regular(path) as fh:
        for events, defects in JournalScanner(summaries=summaries).read_file(fh, chunk_size):
            if events or defects:
                yield events, defects


def read_journal(path: str | os.PathLike[str]) -> JournalRead:
    """Read a whole journal; never raises.

    A missing file gives ``present=False``. One that cannot be read, or is not a regular file
    (never read, so a FIFO cannot block), gives ``present=True`` and ``error``.
    """
    result = JournalRead()
    scanner = JournalScanner()
    try:
        with fs.open_regular(path) as fh:
            result.present = True
            for events, defects in scanner.read_file(fh, _CHUNK):
                result.events += events
                result.defects += defects
    except FileNotFoundError:
        result.present = False
    except OSError as exc:
        result.present = True
        result.error = f"cannot read {os.fspath(path)}: {exc.strerror or exc}"
    result.lines = scanner.line
    result.size = scanner.offset
    return result


def iter_journal_from(
    path: str | os.PathLike[str], offset: int, line: int, chunk_size: int = _BATCH
) -> Iterator[tuple[list[Event], list[Defect]]]:
    """:func:`iter_journal` from byte ``offset``, the start of line ``line + 1`` (as read before).

    Duplicate ids are checked among the events read from there on only.

    Raises:
        OSError: as :func:`iter_journal`.
    """
    with fs.open_regular(path) as fh:
        fh.seek(offset)
        for events, defects in JournalScanner(offset=offset, line=line).read_file(fh, chunk_size):
            if events or defects:
                yield events, defects


def events_at(path: str | os.PathLike[str], offsets: Iterable[int]) -> dict[int, Event]:
    """The events whose records start at ``offsets`` (as the reader located them), by offset.

    Each line is read again from its offset and classified alone, the way a full read classifies
    it (msgspec first, the exact path for anything it does not take; a duplicate id is not
    recognised as one here); an offset where no record starts any more is left out.

    Raises:
        OSError: as :func:`iter_journal`.
    """
    out: dict[int, Event] = {}
    with fs.open_regular(path) as fh:
        for off in sorted(set(offsets)):
            fh.seek(off)
            raw = fh.readline()
            scanner = JournalScanner(offset=off)
            found: list[Event] = []
            if raw.endswith(b"\n"):
                scanner._scan_lines(raw[:-1], found, [])
            else:
                scanner._classify_slow(raw, found, [], terminated=False)
            for ev in found:
                if ev.offset == off:
                    out[off] = ev
    return out
