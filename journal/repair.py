"""The journal repair: bytes of ``events.ndjson`` that are not UTF-8 move out of it, into
``events.ndjson.damaged`` (memory-format §9.8 item 1; never automatic).

The memory server opens the journal as UTF-8 text and catches only ``JSONDecodeError`` per line,
so one undecodable byte anywhere (a torn append that cut a multi-byte character, or an append glued
onto such a fragment) makes its whole read raise: nothing is replayed for that character, at this
start and every later one. The rest of the journal is intact. The repair takes out exactly the
bytes that are not UTF-8 and keeps everything else byte for byte.

What a *fragment* is (the one home of that rule): a line of the journal that is not valid UTF-8.
When our reader recovers a record glued onto torn bytes on that line (:mod:`journal.reader`: the
record is always valid UTF-8), the fragment is the bytes before the record, and the record stays,
now at the start of its own line; otherwise the fragment is the whole line, and its ``\\n`` (when it
has one) goes with it. Damage that is valid UTF-8 (malformed JSON, an ASCII torn tail, a duplicate
id, an ASCII fragment glued to a record) is not touched: the memory server skips such lines. So the
repaired journal is the old one with the fragments' bytes cut out, and nothing else changes: every
record (every event, and every damaged line that is UTF-8) keeps its bytes and its order, and no
byte is added, not even a newline.

``events.ndjson.damaged`` (in the character folder; the memory server ignores it) is appended
durably, never rewritten, one JSON object per fragment (ASCII only)::

    {"schema": 1, "kind": "glued", "line": 5, "offset": 1024, "length": 40, "newline": false,
     "reader": "glued", "bad_at": 39, "event_id": "…", "sha256": "…", "bytes": "<base64>",
     "journal_size": 2048, "journal_sha256": "…", "moved_at": "2026-08-20T14:03:11+02:00"}

``kind`` is ``line`` (the fragment was the whole line) or ``glued`` (the bytes before a record
glued onto them; ``event_id`` names that record, which stays in the journal). ``line`` (1-based)
and ``offset`` (0-based, in bytes) locate the fragment in the old journal, whose size and SHA-256
are ``journal_size`` and ``journal_sha256``; ``length`` and ``sha256`` are the fragment's, and
``bytes`` is the fragment itself (standard base64): lossless. ``newline`` says whether the line's
``\\n`` was removed with it. ``reader`` is the reader's defect kind for the line
(``invalid_utf8``, ``torn_tail``, ``glued``), ``bad_at`` the first byte of the fragment that is not
UTF-8. :func:`reassemble` puts the fragments of one old journal back into the repaired journal and
gives the old bytes exactly.

Crash safety: the fragments are appended (one write, fsync, and the folder's fsync when the file is
new) *before* the journal is replaced (a temp file, fsync, ``os.replace``, the folder's fsync, all
through :mod:`journal.fs`), so at any moment the journal is either exactly the old bytes or exactly
the new ones, and whenever it is the new ones every fragment is on disk in the ``.damaged`` file.
A repair run after a crash converges: a fragment is *recorded* once a complete record with the same
old journal, offset and SHA-256 is in the file, and it is never appended twice. A line that is not
a complete record (the torn end of an append a crash cut) is ignored; the next append starts on a
line of its own. Leftover temp files are swept by the next repair (and by the reconciler).

The repair holds the character's lock (:func:`journal.log.character_lock`), and its caller must
know that no other process writes the folder (the guarded replay refuses while the memory server
runs): an append landing between the read and the replace would be lost, as for compaction.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import io
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import loads_exact
from journal.errors import JournalError
from journal.events import JOURNAL_NAME, Clock
from journal.log import character_lock
from journal.reader import Defect, JournalScanner, is_damaged_line
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE

DAMAGED_NAME = "events.ndjson.damaged"
DAMAGED_SCHEMA = 1

#: A ``.damaged`` file larger than this is not read (one short line per fragment ever moved).
DAMAGED_MAX_BYTES = 64 << 20

#: The reader's defect kinds a line that is not UTF-8 gets (and the only ones it can get).
_UNDECODABLE_KINDS = frozenset({"invalid_utf8", "torn_tail", "glued"})

#: UTF-8 is checked in pieces of about this size, cut at newlines (as the reader does).
_PIECE = 1 << 20

#: The reader classifies the journal in chunks of about this size.
_CHUNK = 8 << 20


class JournalRepairError(JournalError):
    """Root of the errors of the journal repair; nothing was written when one is raised."""


class RepairRefusedError(JournalRepairError):
    """The repair cannot run on this folder as it is: the journal or ``events.ndjson.damaged`` is a
    link, not a regular file, cannot be read, or (``.damaged``) is too big."""


class JournalChangedError(JournalRepairError):
    """The journal is not the one the repair was planned on (another writer changed it)."""


def _first_invalid(raw: bytes | memoryview) -> int | None:
    """The offset of the first byte of ``raw`` that is not valid UTF-8, or ``None``."""
    try:
        codecs.utf_8_decode(raw, "strict", True)
    except UnicodeDecodeError as exc:
        return int(exc.start)
    return None


def is_valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (checked in pieces cut at newlines, so memory stays bounded)."""
    if data.isascii():
        return True
    view = memoryview(data)
    pos, size = 0, len(data)
    while pos < size:
        cut = size if size - pos <= _PIECE else data.rfind(b"\n", pos, pos + _PIECE) + 1
        if cut <= pos:
            cut = size
        if _first_invalid(view[pos:cut]) is not None:
            return False
        pos = cut
    return True


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Fragment:
    """Bytes of one journal line that are not UTF-8, as the repair moves them out.

    Attributes:
        line: 1-based line of the old journal.
        offset: byte offset of the fragment's first byte in the old journal (the line's start).
        data: the fragment's bytes (never shown: :meth:`preview` says what they are).
        kind: ``line`` (the whole line) or ``glued`` (the bytes before a record glued onto them).
        newline: the line's ``\\n`` is removed with it (a whole line that had one).
        reader: the reader's defect kind for the line (``invalid_utf8``, ``torn_tail``, ``glued``).
        bad_at: offset of the first byte that is not UTF-8, from the fragment's start.
        event_id: for ``glued``: the id of the record that stays (``None`` otherwise).
    """

    line: int
    offset: int
    data: bytes = field(repr=False)
    kind: str
    newline: bool
    reader: str
    bad_at: int
    event_id: str | None = None

    @property
    def length(self) -> int:
        return len(self.data)

    @property
    def removed(self) -> int:
        """Bytes the repair removes from the journal for this fragment (its ``\\n`` included)."""
        return len(self.data) + (1 if self.newline else 0)

    @property
    def sha256(self) -> str:
        return _sha256(self.data)

    def preview(self) -> str:
        """What the fragment is, never its text: ``‹N bytes, not UTF-8 at +k›``."""
        return f"‹{self.length} bytes, not UTF-8 at +{self.bad_at}›"

    def key(self, journal_sha256: str) -> tuple[str, int, str]:
        """What makes a ``.damaged`` record this fragment: the old journal, the offset, the bytes."""
        return (journal_sha256, self.offset, self.sha256)

    def record(self, journal_size: int, journal_sha256: str, moved_at: str) -> dict[str, Any]:
        """The fragment's ``.damaged`` record (the format is in the module docstring)."""
        return {
            "schema": DAMAGED_SCHEMA,
            "kind": self.kind,
            "line": self.line,
            "offset": self.offset,
            "length": self.length,
            "newline": self.newline,
            "reader": self.reader,
            "bad_at": self.bad_at,
            "event_id": self.event_id,
            "sha256": self.sha256,
            "bytes": base64.b64encode(self.data).decode("ascii"),
            "journal_size": journal_size,
            "journal_sha256": journal_sha256,
            "moved_at": moved_at,
        }

    def to_json(self) -> dict[str, Any]:
        """The fragment for a plan or report: where it is and what it is, never its bytes."""
        return {
            "line": self.line,
            "offset": self.offset,
            "length": self.length,
            "kind": self.kind,
            "newline": self.newline,
            "reader": self.reader,
            "bad_at": self.bad_at,
            "event_id": self.event_id,
            "sha256": self.sha256,
        }


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One ``.damaged`` line: ``json.dumps`` (ASCII only), newline-terminated."""
    return json.dumps(dict(record), ensure_ascii=True).encode("ascii") + b"\n"


def _record_start(raw: bytes, terminated: bool) -> tuple[int, str] | None:
    """Where the reader recovers a record glued onto torn bytes on the line ``raw``, and its id.

    The line is classified alone, by the reader itself, so the split is exactly where a full read
    recovers the record (a line is classified the same wherever it is; only duplicate ids depend
    on the lines before, and they do not move the record's start).
    """
    events: list[Any] = []
    defects: list[Defect] = []
    scanner = JournalScanner(summaries=True)
    if terminated:
        scanner.feed(raw + b"\n", events, defects)
    else:
        scanner.feed(raw, events, defects)
        scanner.finish(events, defects)
    for ev in events:
        if ev.offset > 0:
            return int(ev.offset), str(ev.event_id)
    return None


def _fragment(line: int, offset: int, raw: bytes, terminated: bool, reader: str) -> Fragment | None:
    """The fragment of the line ``raw`` (the rule is in the module docstring), or ``None``."""
    bad = _first_invalid(raw)
    if bad is None:
        return None
    glued = _record_start(raw, terminated)
    if glued is not None and _first_invalid(raw[glued[0] :]) is None:
        start, event_id = glued
        head = raw[:start]
        at = _first_invalid(head)
        return Fragment(line, offset, head, "glued", False, reader, bad if at is None else at, event_id)
    return Fragment(line, offset, raw, "line", terminated, reader, bad)


@dataclass(frozen=True, slots=True)
class _Analysis:
    fragments: tuple[Fragment, ...]
    records: int
    decodable_damage: int


def _scan(data: bytes) -> Iterator[tuple[list[Any], list[Defect]]]:
    """The reader's classification of ``data``, chunk by chunk (memory stays bounded)."""
    return JournalScanner(summaries=True).read_file(io.BytesIO(data), _CHUNK)


def _analyse(data: bytes) -> _Analysis:
    """Read ``data`` as the reader does, then take each line that is not UTF-8 as a fragment."""
    records = 0
    by_line: dict[int, list[Defect]] = {}
    for events, defects in _scan(data):
        records += len(events)
        for d in defects:
            by_line.setdefault(d.line, []).append(d)
    fragments: list[Fragment] = []
    decodable = 0
    for line, found in by_line.items():
        first = found[0]
        frag = None
        if any(d.kind in _UNDECODABLE_KINDS for d in found):
            raw = data[first.offset : first.offset + first.length]
            terminated = data[first.offset + first.length : first.offset + first.length + 1] == b"\n"
            reader = next(d.kind for d in found if d.kind in _UNDECODABLE_KINDS)
            frag = _fragment(line, first.offset, raw, terminated, reader)
        if frag is not None:
            fragments.append(frag)
            # What stays of a split line may still be damage that is UTF-8 (a duplicate id).
            if frag.kind == "glued" and any(d.kind not in _UNDECODABLE_KINDS and is_damaged_line(d) for d in found):
                decodable += 1
        elif any(is_damaged_line(d) for d in found):
            decodable += 1
    fragments.sort(key=lambda f: f.offset)
    return _Analysis(tuple(fragments), records, decodable)


def rewrite(data: bytes, fragments: Iterable[Fragment]) -> bytes:
    """``data`` with each fragment's bytes (and, for a whole line, its ``\\n``) cut out."""
    out: list[bytes] = []
    pos = 0
    for f in sorted(fragments, key=lambda f: f.offset):
        out.append(data[pos : f.offset])
        pos = f.offset + f.removed
    out.append(data[pos:])
    return b"".join(out)


def reassemble(journal: bytes, records: Iterable[Mapping[str, Any]]) -> bytes:
    """The old journal, from the repaired one and the ``.damaged`` records of its fragments.

    ``records`` are the records of one repair (one ``journal_sha256``), each fragment once, as
    :func:`read_damaged` gives them; each is put back at its ``offset`` in the old journal.
    """
    out: list[bytes] = []
    pos = 0
    shift = 0
    for r in sorted(records, key=lambda r: int(r["offset"])):
        data = base64.b64decode(r["bytes"])
        at = int(r["offset"]) - shift
        out.append(journal[pos:at])
        out.append(data + (b"\n" if r["newline"] else b""))
        pos = at
        shift += len(data) + (1 if r["newline"] else 0)
    out.append(journal[pos:])
    return b"".join(out)


# -- events.ndjson.damaged ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DamagedRead:
    """``events.ndjson.damaged`` as read.

    Attributes:
        state: ``missing``, ``ok`` or ``refused`` (a link, not a regular file, unreadable, too big).
        records: every complete record, in file order (its bytes checked against its SHA-256).
        keys: ``(journal_sha256, offset, sha256)`` of each record (:meth:`Fragment.key`).
        bad_lines: lines that are not complete records (the torn end of an interrupted append).
        size: bytes read.
        message: what was wrong, for ``refused``.
    """

    state: str = "missing"
    records: tuple[dict[str, Any], ...] = ()
    keys: frozenset[tuple[str, int, str]] = frozenset()
    bad_lines: int = 0
    size: int = 0
    message: str | None = None


def _valid_record(obj: Any) -> tuple[str, int, str] | None:
    """The key of a complete ``.damaged`` record, or ``None`` when ``obj`` is not one."""
    if not isinstance(obj, dict) or obj.get("schema") != DAMAGED_SCHEMA:
        return None
    offset, length, digest, data, journal = (
        obj.get("offset"),
        obj.get("length"),
        obj.get("sha256"),
        obj.get("bytes"),
        obj.get("journal_sha256"),
    )
    if not (isinstance(offset, int) and isinstance(length, int) and offset >= 0):
        return None
    if not (isinstance(digest, str) and isinstance(data, str) and isinstance(journal, str)):
        return None
    if not isinstance(obj.get("newline"), bool):
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        return None
    if len(raw) != length or _sha256(raw) != digest:
        return None
    return (journal, offset, digest)


def read_damaged(char_dir: str | os.PathLike[str]) -> DamagedRead:
    """Read ``events.ndjson.damaged`` of a character folder; never raises."""
    path = Path(char_dir) / DAMAGED_NAME
    if path.is_symlink():
        return DamagedRead("refused", message=f"{DAMAGED_NAME} is a link; the repair appends to it, so it refuses")
    try:
        with fs.open_regular(path) as fh:
            data = fh.read(DAMAGED_MAX_BYTES + 1)
    except FileNotFoundError:
        return DamagedRead("missing")
    except OSError as exc:
        return DamagedRead("refused", message=f"{DAMAGED_NAME} cannot be read: {exc.strerror or exc}")
    if len(data) > DAMAGED_MAX_BYTES:
        return DamagedRead("refused", message=f"{DAMAGED_NAME} is larger than {DAMAGED_MAX_BYTES >> 20} MiB; not read")
    records: list[dict[str, Any]] = []
    keys: set[tuple[str, int, str]] = set()
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = loads_exact(raw)
        except ValueError:
            bad += 1
            continue
        key = _valid_record(obj)
        if key is None:
            bad += 1
            continue
        records.append(obj)
        keys.add(key)
    return DamagedRead("ok", tuple(records), frozenset(keys), bad, len(data))


# -- the plan and the repair ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JournalRepair:
    """What a repair of the journal as it is now does (a pure value; nothing is written).

    Attributes:
        present: whether there is a journal.
        size, sha256: the journal now.
        fragments: every fragment, in file order.
        new_size, new_sha256: the journal after the repair (the same as now without fragments).
        records: complete records in the journal (the reader's events), all kept byte for byte.
        glued: of those, records glued onto a fragment that then start their own line.
        decodable_damage: damaged lines that are UTF-8, left as they are.
        recorded: offsets of the fragments already in ``events.ndjson.damaged`` (a repair that was
            interrupted after recording them): not recorded again.
        damaged_present: whether ``events.ndjson.damaged`` exists.
        damaged_bad_lines: its lines that are not complete records.
    """

    present: bool
    size: int
    sha256: str
    fragments: tuple[Fragment, ...]
    new_size: int
    new_sha256: str
    records: int
    glued: int
    decodable_damage: int
    recorded: frozenset[int] = frozenset()
    damaged_present: bool = False
    damaged_bad_lines: int = 0

    @property
    def has_work(self) -> bool:
        """Whether the journal has bytes that are not UTF-8 (the repair rewrites it)."""
        return bool(self.fragments)

    @property
    def to_record(self) -> tuple[Fragment, ...]:
        """The fragments the repair appends to ``events.ndjson.damaged`` (not recorded yet)."""
        return tuple(f for f in self.fragments if f.offset not in self.recorded)

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": {"present": self.present, "size": self.size, "sha256": self.sha256},
            "after": {"size": self.new_size, "sha256": self.new_sha256},
            "fragments": [{**f.to_json(), "recorded_already": f.offset in self.recorded} for f in self.fragments],
            "records_kept": self.records,
            "glued_records_split": self.glued,
            "decodable_damage_kept": self.decodable_damage,
            "damaged_file": {
                "name": DAMAGED_NAME,
                "present": self.damaged_present,
                "bad_lines": self.damaged_bad_lines,
            },
        }


def _read_journal_bytes(path: Path) -> bytes | None:
    """The journal's bytes (``None``: no journal).

    Raises:
        RepairRefusedError: it is a link, not a regular file, or cannot be read.
    """
    if path.is_symlink():
        raise RepairRefusedError(f"{JOURNAL_NAME} is a link; the repair replaces the file, so it refuses")
    try:
        with fs.open_regular(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RepairRefusedError(f"{JOURNAL_NAME} cannot be read: {exc.strerror or exc}") from exc


def _plan(char_dir: Path) -> tuple[JournalRepair, bytes, bytes]:
    """The repair of the folder now, the journal's bytes and the repaired bytes."""
    data = _read_journal_bytes(char_dir / JOURNAL_NAME)
    damaged = read_damaged(char_dir)
    if damaged.state == "refused":
        raise RepairRefusedError(damaged.message or f"{DAMAGED_NAME} cannot be used")
    present = data is not None
    data = data or b""
    found = _analyse(data)
    sha = _sha256(data)
    new = rewrite(data, found.fragments) if found.fragments else data
    repair = JournalRepair(
        present=present,
        size=len(data),
        sha256=sha,
        fragments=found.fragments,
        new_size=len(new),
        new_sha256=_sha256(new) if found.fragments else sha,
        records=found.records,
        glued=sum(1 for f in found.fragments if f.kind == "glued"),
        decodable_damage=found.decodable_damage,
        recorded=frozenset(f.offset for f in found.fragments if f.key(sha) in damaged.keys),
        damaged_present=damaged.state == "ok",
        damaged_bad_lines=damaged.bad_lines,
    )
    return repair, data, new


def plan_repair(char_dir: str | os.PathLike[str]) -> JournalRepair:
    """What :func:`repair_journal` would do to the folder now; only reads.

    Raises:
        RepairRefusedError: the journal or ``events.ndjson.damaged`` is a link, not a regular file,
            cannot be read, or (``.damaged``) is too big.
    """
    return _plan(Path(char_dir))[0]


def undecodable_fragments(journal_path: str | os.PathLike[str], defects: Iterable[Defect]) -> list[Fragment]:
    """The fragments of a journal already read, from the reader's ``defects`` of it: only those
    lines are read again (what a plan of another scope tells, to offer the repair)."""
    out: list[Fragment] = []
    seen: set[int] = set()
    try:
        with fs.open_regular(journal_path) as fh:
            for d in defects:
                if d.kind not in _UNDECODABLE_KINDS or d.line in seen:
                    continue
                seen.add(d.line)
                fh.seek(d.offset)
                chunk = fh.read(d.length + 1)
                raw = chunk[: d.length]
                if len(raw) != d.length:
                    continue  # the file changed since it was read
                frag = _fragment(d.line, d.offset, raw, chunk[d.length :] == b"\n", d.kind)
                if frag is not None:
                    out.append(frag)
    except OSError:
        return []
    return out


@dataclass(frozen=True, slots=True)
class RepairResult:
    """What :func:`repair_journal` did.

    Attributes:
        repair: the repair as planned under the lock, right before writing.
        recorded: the fragments appended to ``events.ndjson.damaged`` by this run.
        already: the fragments found there already (an interrupted repair), not appended again.
        temp_files_removed: leftover temp files of interrupted atomic writes swept first.
        rewritten: whether the journal was replaced.
    """

    repair: JournalRepair
    recorded: tuple[Fragment, ...] = ()
    already: tuple[Fragment, ...] = ()
    temp_files_removed: tuple[str, ...] = ()
    rewritten: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "rewritten": self.rewritten,
            "journal_before": {"size": self.repair.size, "sha256": self.repair.sha256},
            "journal_after": {"size": self.repair.new_size, "sha256": self.repair.new_sha256},
            "fragments_recorded": [f.to_json() for f in self.recorded],
            "fragments_already_recorded": [f.to_json() for f in self.already],
            "records_kept": self.repair.records,
            "temp_files_removed": list(self.temp_files_removed),
        }


def _moved_at() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _sweep(char_dir: Path) -> list[str]:
    """Remove leftover temp files (the folder and its archive folders, as the reconciler sweeps).

    Unlike the reconciler's, this sweep is not best effort: it runs before anything is written, so
    a failure stops the repair with nothing written, and the next run sweeps again.
    """
    removed: list[str] = []
    for sub in ("", REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        removed += [f"{sub}/{n}" if sub else n for n in fs.sweep_temp_files(char_dir / sub)]
    return removed


def _records_of(data: bytes) -> Iterator[tuple[str, memoryview]]:
    """``(event_id, record bytes to the end of its line)`` of every event, in file order."""
    view = memoryview(data)
    for events, _defects in _scan(data):
        for ev in events:
            end = data.find(b"\n", ev.offset)
            yield ev.event_id, view[ev.offset : len(data) if end < 0 else end]


def _check(old: bytes, new: bytes) -> None:
    """The repaired journal is UTF-8 and keeps every record byte for byte, in order (else nothing
    is written: a rule of the reader and of this module disagree)."""
    if not is_valid_utf8(new):
        raise JournalRepairError("the repaired journal would still not be UTF-8; nothing was written")
    missing = object()
    for a, b in itertools.zip_longest(_records_of(old), _records_of(new), fillvalue=missing):
        if a is missing or b is missing or a != b:
            raise JournalRepairError("the repaired journal would not keep every record as it is; nothing was written")


def repair_journal(
    char_dir: str | os.PathLike[str],
    *,
    expect_sha256: str | None = None,
    clock: Clock | None = None,
) -> RepairResult:
    """Move every fragment out of the journal into ``events.ndjson.damaged`` (see the module
    docstring), holding the character's lock.

    In order: read the journal and ``.damaged`` and plan (:func:`plan_repair`); refuse if the
    journal is not the one expected; sweep leftover temp files (a failure stops the repair there,
    nothing else written); append the fragments not recorded
    yet to ``.damaged`` durably; replace the journal with the repaired bytes (temp file, fsync,
    ``os.replace``, folder fsync). A journal without fragments is not written (temp files are
    still swept). Never touches the sentinel, the applied set, the views or any other file.

    Args:
        expect_sha256: the SHA-256 of the journal the repair was planned on; another journal is
            refused (:class:`JournalChangedError`), nothing written.
        clock: gives ``moved_at`` (default: now, local time with its offset).

    Raises:
        JournalChangedError: the journal is not the expected one.
        RepairRefusedError: as :func:`plan_repair`.
        JournalRepairError: the repaired bytes would not be UTF-8 or would not keep every record.
        OSError: the sweep, a write or an fsync failed: the journal is then exactly the old one or exactly the
            repaired one, and when it is the repaired one every fragment is in ``.damaged``.
    """
    cd = Path(char_dir)
    with character_lock(cd):
        repair, data, new = _plan(cd)
        if expect_sha256 is not None and repair.sha256 != expect_sha256:
            raise JournalChangedError(
                f"{JOURNAL_NAME} changed since the repair was planned (sha256 {repair.sha256[:12]}…, "
                f"planned on {expect_sha256[:12]}…); nothing was written"
            )
        if not repair.has_work:
            return RepairResult(repair, temp_files_removed=tuple(_sweep(cd)))
        _check(data, new)
        swept = _sweep(cd)
        moved_at = (clock or _moved_at)()
        todo = repair.to_record
        lines = b"".join(encode_record(f.record(repair.size, repair.sha256, moved_at)) for f in todo)
        if lines:
            fs.durable_append(cd / DAMAGED_NAME, lines)
        fs.atomic_write_bytes(cd / JOURNAL_NAME, new)
        already = tuple(f for f in repair.fragments if f.offset in repair.recorded)
        return RepairResult(repair, todo, already, tuple(swept), True)


__all__ = [
    "DAMAGED_MAX_BYTES",
    "DAMAGED_NAME",
    "DAMAGED_SCHEMA",
    "DamagedRead",
    "Fragment",
    "JournalChangedError",
    "JournalRepair",
    "JournalRepairError",
    "RepairRefusedError",
    "RepairResult",
    "encode_record",
    "is_valid_utf8",
    "plan_repair",
    "read_damaged",
    "reassemble",
    "repair_journal",
    "rewrite",
    "undecodable_fragments",
]
