"""Following a growing journal: the one incremental reader (the window's live tail, the
reconciler's rescans)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from journal import fs
from journal.events import Event
from journal.reader import _CHUNK, Defect, JournalScanner


@dataclass(slots=True)
class TailUpdate:
    """What :meth:`JournalTail.poll` found.

    Attributes:
        reset: the file shrank, or was replaced by another file (compaction): the caller must
            discard what it had; ``events``/``defects`` then start from the beginning of the new file.
        events: new events since the previous poll.
        defects: new defects since the previous poll.
        size: bytes consumed so far.
        present: whether the file exists.
    """

    reset: bool
    events: list[Event]
    defects: list[Defect]
    size: int
    present: bool


class JournalTail:
    """Follows a growing journal: each :meth:`poll` reads only the bytes appended since the last one.

    An unterminated last line is held back until its ``\\n`` arrives (a writer may be mid-write).
    Truncation (size below what was consumed) or replacement (a different inode/device) is
    reported as ``reset`` and reading restarts from offset 0.

    Args:
        path: the journal.
        offset, line: where to start, when the first ``offset`` bytes (``line`` lines) were already
            read by someone else (e.g. a diagnosis); duplicate ids are then checked among the new
            events only. The file found there now is taken as the one that was read.
    """

    def __init__(self, path: str | os.PathLike[str], *, offset: int = 0, line: int = 0) -> None:
        self.path = Path(path)
        self._identity: tuple[int, int] | None = None
        self._scanner = JournalScanner(offset=offset, line=line)
        self._read_pos = offset
        if offset:
            try:
                st = os.stat(self.path)
            except OSError:
                return
            if st.st_size >= offset:
                self._identity = (st.st_dev, st.st_ino)

    @property
    def lines(self) -> int:
        return self._scanner.line

    @property
    def bom_lines(self) -> list[int]:
        """Lines read so far whose event follows a UTF-8 BOM (:attr:`JournalScanner.bom_lines`)."""
        return self._scanner.bom_lines

    @property
    def size(self) -> int:
        """Bytes read so far, an unterminated last line included."""
        return self._read_pos

    def provisional(self) -> tuple[list[Event], list[Defect]]:
        """The held-back unterminated last line, classified as if the file ended there: the event
        it already is (a complete record whose newline has not arrived), or a ``torn_tail``.

        Nothing is committed: the next :meth:`poll` classifies that line again, completed or not.
        """
        rest = self._scanner._rest
        if not rest:
            return [], []
        seen = self._scanner.seen_ids
        probe = JournalScanner(offset=self._scanner.offset, line=self._scanner.line, seen_ids=seen)
        probe._rest = rest
        events: list[Event] = []
        defects: list[Defect] = []
        probe.finish(events, defects)
        for ev in events:
            seen.discard(ev.event_id)  # an event is new to ``seen``: only the probe added it
        return events, defects

    def poll(self, max_bytes: int | None = None) -> TailUpdate:
        """Read what was appended since the last poll (at most ``max_bytes`` when given).

        Raises:
            OSError: the journal exists but cannot be read, or is not a regular file (never
                read, so a FIFO cannot block).
        """
        events: list[Event] = []
        defects: list[Defect] = []
        reset = False
        try:
            fh = fs.open_regular(self.path)
        except FileNotFoundError:
            if self._identity is not None:
                self._restart()
                return TailUpdate(True, events, defects, 0, False)
            return TailUpdate(False, events, defects, 0, False)
        with fh:
            st = os.fstat(fh.fileno())
            identity = (st.st_dev, st.st_ino)
            if self._identity is not None and (identity != self._identity or st.st_size < self._read_pos):
                self._restart()
                reset = True
            self._identity = identity
            fh.seek(self._read_pos)
            remaining = st.st_size - self._read_pos
            if max_bytes is not None:
                remaining = min(remaining, max_bytes)
            while remaining > 0:
                chunk = fh.read(min(_CHUNK, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                self._read_pos += len(chunk)
                self._scanner.feed(chunk, events, defects)
        return TailUpdate(reset, events, defects, self._scanner.offset, True)

    def _restart(self) -> None:
        self._identity = None
        self._scanner = JournalScanner()
        self._read_pos = 0
