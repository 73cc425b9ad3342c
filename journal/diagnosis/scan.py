"""The journal of one character, read once into the diagnosis's :class:`EventList`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from journal import fs
from journal.diagnosis.eventlist import EventList
from journal.reader import Defect, JournalScanner

#: Bytes read per call (and between two progress reports).
REPORT_EVERY = 4 << 20


@dataclass(slots=True)
class JournalScan:
    """What one read of a journal found.

    Attributes:
        events: every event, pending (the checks give them their states).
        defects: every located defect, in file order.
        lines: physical lines, blank ones included.
        size: bytes read.
        bom_lines: lines whose event follows a UTF-8 BOM (the memory server cannot see them).
    """

    events: EventList = field(default_factory=EventList)
    defects: list[Defect] = field(default_factory=list)
    lines: int = 0
    size: int = 0
    bom_lines: list[int] = field(default_factory=list)


def scan_journal(path: str | os.PathLike[str], report: Callable[[int], None] | None = None) -> JournalScan:
    """Read a journal into :class:`~journal.events.EventSummary` records and located defects.

    ``report(bytes_done)`` is called every :data:`REPORT_EVERY` bytes but at the end; it may raise (to cancel),
    and the exception propagates. Raises ``OSError`` only for the open/read itself.
    """
    kept = EventList()
    defects: list[Defect] = []
    scanner = JournalScanner(summaries=True)
    with fs.open_regular(Path(path)) as fh:
        size = os.fstat(fh.fileno()).st_size
        for events, found in scanner.read_file(fh, REPORT_EVERY):
            kept.take_records(events)
            defects += found
            if report is not None and scanner.offset < size:  # the caller reports the end itself
                report(scanner.offset)
    return JournalScan(kept, defects, scanner.line, scanner.offset, scanner.bom_lines)
