"""Journals the memory server cannot read, made the way crashes make them (issue 24).

Most memory texts are Chinese, so a torn append usually cuts a multi-byte character: the fragment
is not UTF-8. What happens next depends on who appends:

* the memory server appends without looking, so its next record is glued onto the fragment
  (:func:`glue_onto_torn_utf8`);
* our writers (``fs.durable_append``) first end the fragment's line, so the fragment becomes a
  whole line of its own that is not UTF-8 (:func:`torn_utf8_line`);
* nobody appends: the fragment is the journal's last line (:func:`torn_utf8_tail`).

Each helper takes a character folder whose journal ends with a newline and appends the damage.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from journal.events import JOURNAL_NAME, encode_event, new_event

#: The text the torn records carry: every character is three bytes in UTF-8.
TEXT = "主人喜欢猫和绿茶，晚上喜欢看书"


def torn_record(rid: str = "ref_00000000000000a1", *, cut_after: str = "猫") -> bytes:
    """A record with Chinese text, cut one byte into the character after ``cut_after``'s first
    byte: the bytes end inside a multi-byte character, so they are not UTF-8."""
    line = encode_event(new_event("reflection.evidence_updated", {"reflection_id": rid, "text": TEXT}))
    return line[: line.index(cut_after.encode("utf-8")) + 1]


def record(rid: str = "ref_00000000000000a2", reinforcement: float = 2.75) -> tuple[str, bytes]:
    """A complete record (id, line), as the memory server appends it."""
    ev = new_event("reflection.evidence_updated", {"reflection_id": rid, "reinforcement": reinforcement})
    return ev.event_id, encode_event(ev)


def _append(cd: Path, data: bytes) -> None:
    with open(cd / JOURNAL_NAME, "ab") as fh:  # the memory server appends without checking for "\n"
        fh.write(data)


def torn_utf8_tail(cd: Path) -> None:
    """A torn last line that cut a multi-byte character."""
    _append(cd, torn_record())


def glue_onto_torn_utf8(cd: Path) -> str:
    """A torn append that cut a multi-byte character, then the memory server's next append glued
    onto it; returns the glued record's id."""
    eid, line = record()
    _append(cd, torn_record() + line)
    return eid


def torn_utf8_line(cd: Path) -> None:
    """A torn fragment that is not UTF-8 on a line of its own, followed by one more record (what
    our writers leave: they end the torn line before appending)."""
    _append(cd, torn_record("ref_00000000000000a3", cut_after="喜") + b"\n" + record("ref_00000000000000a3", 1.25)[1])


def ascii_damage(cd: Path) -> bytes:
    """A malformed line that is UTF-8 (damage the repair must leave alone); returns it."""
    line = b'{"event_id": "d1a2", "type": "reflection.evidence_updated", "payload": {"trunc\n'
    _append(cd, line)
    return line


def several(cd: Path) -> str:
    """A whole line that is not UTF-8, an ASCII damaged line, a record glued onto a torn UTF-8
    fragment, one more record and a torn UTF-8 last line; returns the glued record's id."""
    torn_utf8_line(cd)
    ascii_damage(cd)
    eid = glue_onto_torn_utf8(cd)
    _append(cd, record("ref_00000000000000a1", 3.5)[1])
    torn_utf8_tail(cd)
    return eid


def hash_files(root: Path) -> dict[str, str]:
    """Relative path → SHA-256 of every regular file under ``root``."""
    out: dict[str, str] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def records_of(data: bytes) -> list[tuple[str, bytes]]:
    """``(event_id, record bytes to the end of its line)`` of every event the reader finds."""
    from journal.reader import JournalScanner

    events: list[Any] = []
    scanner = JournalScanner()
    scanner.feed(data, events, [])
    scanner.finish(events, [])
    out = []
    for ev in events:
        end = data.find(b"\n", ev.offset)
        out.append((ev.event_id, data[ev.offset : len(data) if end < 0 else end]))
    return out
