"""Redacting ``events.ndjson`` for a support bundle, line by line, as the one reader sees it.

The journal is read by :mod:`journal.reader` (no second parser), and each physical line is written
again so that reading the bundle gives the same events and defects on the same line numbers:

- an event: its record (``event_id``, ``type``, ``ts``, ``payload``) with the payload redacted;
- a repeated event id: the record read again from its line and redacted (the server's start
  replays repeats, so their payload matters);
- a torn fragment with a record glued on: a damaged token, then the redacted record, written as
  both writers write a record (``{"event_id": …``), so it is recovered again;
- any other damaged line: replaced whole by a damaged token that keeps its defect's kind (not JSON,
  not UTF-8, a JSON value that is not an object, an object without an id);
- a blank line: blank; an unterminated last line stays unterminated.

Byte offsets and sizes change; line numbers, event ids and defect kinds do not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from inspector.core.bundle import rules as R
from inspector.core.bundle.redact import BundleRedactor, dumps_json
from inspector.core.redaction import damaged_token
from journal import fs
from journal.codec import loads_exact
from journal.reader import BOM, Defect, JournalScanner

_JOURNAL_RULES = R.KINDS["journal"]

#: Bytes read per batch (the reader's own batch size would do too: this bounds memory).
_CHUNK = 4 << 20


def _damaged(kind: str, length: int) -> bytes:
    token = damaged_token("line", length)
    if kind == "invalid_utf8":
        return b"\xff" + token.encode("utf-8")  # still not UTF-8
    if kind == "not_object":
        return json.dumps(token, ensure_ascii=False).encode("utf-8")  # still JSON, not an object
    if kind == "missing_event_id":
        return json.dumps({"event_id": None, "damaged": token}, ensure_ascii=False).encode("utf-8")
    return token.encode("utf-8")  # malformed, torn_tail: still not JSON


class JournalRedaction:
    """One journal, redacted as the reader reads it (see the module docstring).

    Attributes:
        size: bytes of the original journal.
        lines: physical lines written.
    """

    def __init__(self, path: str | os.PathLike[str], redactor: BundleRedactor) -> None:
        self.path = os.fspath(path)
        self.redactor = redactor
        self.size = 0
        self.lines = 0

    def record(self, obj: dict[str, Any], *, glued: bool = False) -> bytes:
        """A record's line: ``glued`` records keep the writers' exact start (``{"event_id": ``)."""
        return self._encode(self.redactor.value(obj, _JOURNAL_RULES), glued=glued)

    @staticmethod
    def _encode(red: Any, *, glued: bool = False) -> bytes:
        if glued:
            text = json.dumps(red, ensure_ascii=False)
            try:
                return text.encode("utf-8")
            except UnicodeEncodeError:
                return json.dumps(red).encode("ascii")
        return dumps_json(red)

    def _event_line(self, ev: Any, *, glued: bool = False) -> bytes:
        try:
            payload = orjson.loads(memoryview(ev.body)) if ev.parsed is None else ev.parsed
        except orjson.JSONDecodeError:  # beyond what orjson takes (a huge integer): the exact parse
            payload = ev.payload
        try:
            return self._encode(self.redactor.record(ev.event_id, ev.type, ev.ts, payload), glued=glued)
        except RecursionError:
            damaged = damaged_token("payload", len(ev.body))
            return self.record({"event_id": ev.event_id, "type": ev.type, "ts": ev.ts, "payload": damaged}, glued=glued)

    def _reread(self, fh: Any, d: Defect) -> Any:
        """The object on a defect's line, parsed again (for a repeated id), or ``None``."""
        raw = os.pread(fh.fileno(), d.length, d.offset)
        if raw.startswith(BOM):
            raw = raw[3:]
        try:
            return loads_exact(raw)
        except ValueError:
            return None

    def chunks(self, progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
        """The redacted journal in pieces; ``progress(bytes_read)`` after each batch.

        Raises:
            OSError: the journal cannot be opened or read (the caller records it).
        """
        scanner = JournalScanner(summaries=False)
        with fs.open_regular(self.path) as fh:
            size = os.fstat(fh.fileno()).st_size
            ends_open = size > 0 and os.pread(fh.fileno(), 1, size - 1) != b"\n"
            written = 0  # lines emitted so far
            for events, defects in scanner.read_file(fh, _CHUNK):
                if not defects and events and events[0].line == written + 1 == events[-1].line - len(events) + 1:
                    # Every line of the batch an event (line numbers rise, so none is left out).
                    out = list(map(self._event_line, events))
                    written = events[-1].line
                else:
                    out = self._lines(fh, written, events, defects)
                    written = max(written, events[-1].line if events else 0, defects[-1].line if defects else 0)
                self.lines = written
                if out:
                    yield b"\n".join(out) + b"\n"
                if progress is not None:
                    progress(scanner.offset)
            self.size = scanner.offset
            # Blank lines after the last event or defect, then the file's own ending.
            tail = scanner.line - written
            piece = b"\n" * tail
            self.lines = scanner.line
            if ends_open:
                if tail:
                    piece = piece[:-1]
                    yield piece
                else:
                    yield b"\x00"  # marker: strip the last newline (see redact_journal)
            elif piece:
                yield piece

    def _lines(self, fh: Any, written: int, events: list[Any], defects: list[Defect]) -> list[bytes]:
        """The lines after line ``written`` of a batch that holds defects or blank lines."""
        by_line: dict[int, list[Defect]] = {}
        for d in defects:
            by_line.setdefault(d.line, []).append(d)
        out: list[bytes] = []
        evs = iter(events)
        ev = next(evs, None)
        last = max(
            (events[-1].line if events else 0),
            (defects[-1].line if defects else 0),
        )
        for line_no in range(written + 1, last + 1):
            found = by_line.get(line_no)
            if ev is not None and ev.line == line_no:
                glued = next((d for d in found or () if d.kind == "glued"), None)
                if glued is None:
                    body = self._event_line(ev)
                else:  # the torn fragment goes whole; the record glued on stays recoverable
                    body = _damaged("malformed", glued.length) + self._event_line(ev, glued=True)
                ev = next(evs, None)
            elif found:
                body = self._defect_line(fh, found)
            else:
                body = b""
            out.append(body)
        return out

    def _defect_line(self, fh: Any, found: list[Defect]) -> bytes:
        kinds = {d.kind for d in found}
        d = found[0]
        if "duplicate_event_id" in kinds:
            dup = next(x for x in found if x.kind == "duplicate_event_id")
            if "glued" in kinds:
                # Never replayed and invisible to the server's reader: only its id matters.
                glued = next(x for x in found if x.kind == "glued")
                rec = self.record({"event_id": dup.event_id, "type": "", "payload": {}}, glued=True)
                return _damaged("malformed", glued.length) + rec
            obj = self._reread(fh, dup)
            if isinstance(obj, dict):
                return self.record(obj)
            return self.record({"event_id": dup.event_id, "type": "", "payload": {}})
        return _damaged(d.kind, d.length)


def redact_journal(
    path: str | os.PathLike[str], redactor: BundleRedactor, progress: Callable[[int], None] | None = None
) -> Iterator[bytes]:
    """The redacted bytes of the journal at ``path``, in pieces (see :class:`JournalRedaction`).

    Raises:
        OSError: the journal cannot be opened or read.
    """
    pending = b""
    for piece in JournalRedaction(path, redactor).chunks(progress):
        if piece == b"\x00":  # the original's last line is unterminated: so is ours
            pending = pending[:-1]
            continue
        if pending:
            yield pending
        pending = piece
    if pending:
        yield pending
