"""Read-only diagnosis of a memory folder: the value shared by ``memory-inspector check`` and the GUI.

This module defines the *values* (what is applied, pending, blocked, orphaned, suspect, damaged)
and :func:`diagnose_character` / :func:`diagnose_path` which compute them. Nothing here writes
inside the folder being diagnosed; a ``.zip`` export is extracted to a private temp folder that
:meth:`Diagnosis.close` removes.

How the event states are decided (issue 4; ``index`` is the 0-based position among the journal's
events in file order, recovered glued events included):

- ``pending``: after the sentinel; every event when the sentinel is not ``ok``.
- ``blocked``: the first pending event at which replay would stop: its type has no handler, or
  its handler, run on an in-memory overlay of the folder after the pending events before it,
  raises. Later events stay ``pending``.
- ``orphaned``: at or before the sentinel, yet replay can never have applied it: no handler for
  its type (``no_handler``; only a live write can have moved the sentinel past it), or an archive
  event whose entry is in neither its view nor any shard its archive events name
  (``archive_entry_lost``).
- ``suspect``: at or before the sentinel, a handled event that is the last event touching its
  entry, whose handler would still change something if applied to the folder now
  (``view_differs``). A heuristic: the effect is not visible, or something outside the journal
  changed the entry since.
- ``applied``: every other event at or before the sentinel.

Handlers are never given the real folder: they run against :class:`ProjectionStore`, a
:class:`~journal.handlers.Store` that serves, for the event being run, only the view entries that
event can touch (every handler selects its target by id), and keeps every write in memory. That
gives the same answers as :class:`~journal.handlers.MemoryStore` without rescanning whole views
for each of thousands of checks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import marshal
import mmap
import operator
import os
import re
import select
import shutil
import signal
import stat
import struct
import sys
import tempfile
import threading
import time
import warnings
import weakref
import zipfile
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, overload

import orjson

from journal.errors import JournalError, ShardCorruptError, ViewCorruptError, ViewDriftError
from journal.events import ALL_EVENT_TYPES, JOURNAL_NAME, SENTINEL_NAME, Event
from journal.handlers import (
    PERSONA_EVIDENCE_KEYS,
    REFLECTION_EVIDENCE_KEYS,
    HandlerRegistry,
    archive_target,
    block_reason,
    default_registry,
    entry_ref,
    persona_evidence_updated,
    reflection_evidence_updated,
    run_handler,
)
from journal.log import COMPACT_DAYS_THRESHOLD, COMPACT_LINES_THRESHOLD
from journal.outbox import MEMORY_LIVENESS_MAX_ATTEMPTS, OUTBOX_NAME, OutboxOp, OutboxRead, parse_outbox
from journal.reader import Defect, JournalScanner
from journal.runtime import LAUNCHER_LOCK as LAUNCHER_LOCK
from journal.runtime import RUNTIME_DIR_ENV as RUNTIME_DIR_ENV
from journal.runtime import LauncherLock, check_launcher_lock
from journal.runtime import runtime_state_dir as runtime_state_dir
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name, load_shard, validate_shard_name
from journal.views import (
    FACTS,
    PERSONA,
    REFLECTIONS,
    SentinelRead,
    copy_json,
    load_view,
    parse_json_bytes,
    read_sentinel,
)

#: Event states, in the order a legend shows them.
EVENT_STATES = ("applied", "pending", "blocked", "orphaned", "suspect")

#: Reasons an event is blocked (replay would stop there).
BLOCK_REASONS = ("no_handler", "view_drift", "corrupt_view", "corrupt_shard", "bad_shard_name", "handler_error")

#: Reasons an event at or before the sentinel is orphaned or suspect.
ORPHAN_REASONS = ("no_handler", "archive_entry_lost")
SUSPECT_REASONS = ("view_differs",)

SEVERITIES = ("info", "warning", "error")

#: The closed set of finding codes (documented in the README). The last one, ``input.refused``,
#: is the issue's "refused with a finding" for unsafe input: zip members that would land outside
#: the extraction folder or are links, symbolic links pointing outside the memory root, files that
#: are not regular files. None of the other codes describes those.
FINDING_CODES = (
    "journal.absent",
    "sentinel.missing",
    "sentinel.malformed",
    "sentinel.unknown_id",
    "tail.pending",
    "replay.blocked",
    "event.orphaned",
    "event.suspect",
    "line.malformed",
    "line.torn_tail",
    "line.glued",
    "line.invalid_utf8",
    "event.duplicate_id",
    "event.unknown_type",
    "view.corrupt",
    "view.drift",
    "shard.corrupt",
    "shard.bad_name",
    "shard.missing_entry",
    "outbox.pending",
    "outbox.dead_letter",
    "tempfile.leftover",
    "compaction.due",
    "server.running",
    "input.refused",
)

#: At most this many findings of one code per character; the rest are summed up in one more.
MAX_FINDINGS_PER_CODE = 100

#: Files and folders whose presence makes a folder a character folder (memory-format §1.2).
CHARACTER_MARKERS = frozenset(
    {
        "facts.json",
        "facts_archive.json",
        "reflections.json",
        "reflection_archive",
        "reflections_archive.json",
        "surfaced.json",
        "synth_backoff.json",
        "persona.json",
        "persona_archive",
        "persona_corrections.json",
        JOURNAL_NAME,
        SENTINEL_NAME,
        OUTBOX_NAME,
        "cursors.json",
        "recent.json",
        "recent_meta.json",
        "settings.json",
        "time_indexed.db",
        "subject_forget_tombstones.json",
    }
)

#: Temp files left by a crashed atomic write (memory-format §4.5): newest and older name shapes.
TEMP_NEW_RE = re.compile(r"\.nkatmp[0-9a-f]{8}\.tmp")
TEMP_OLD_RE = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")


def _now() -> datetime:
    """The clock used for the compaction age (tests replace it)."""
    return datetime.now()


# -- errors ------------------------------------------------------------------------------------


class DiagnosisInputError(JournalError):
    """PATH cannot be diagnosed at all (the CLI exits 2 with this message)."""


class UnreadableInputError(DiagnosisInputError):
    """PATH does not exist, cannot be listed, is not a folder or a zip, or the zip is refused."""


class UnknownCharacterError(DiagnosisInputError, LookupError):
    """``--character NAME`` names no character of PATH."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnosis finding.

    Attributes:
        code: one of :data:`FINDING_CODES`.
        severity: ``info`` | ``warning`` | ``error``.
        message: one line, for people.
        event_id: the event it is about, if any.
        file: the file it is about, relative to the character folder (or the input root), if any.
        line: 1-based journal line, for line defects.
    """

    code: str
    severity: str
    message: str
    event_id: str | None = None
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "event_id": self.event_id,
            "file": self.file,
        }


@dataclass(slots=True)
class EventInfo:
    """What the diagnosis knows about one event (compact: the payload is not kept).

    Attributes:
        index: 0-based position among the journal's events in file order.
        line: 1-based journal line.
        offset: byte offset of the record (re-read the payload from here when needed).
        event_id, type, ts: as in the record.
        entry: the entry the event touches: ``reflection_id`` for reflection events,
            ``"<entity_key>/<entry_id>"`` for persona events, else ``None``.
        state: one of :data:`EVENT_STATES`.
        reason: for blocked / orphaned / suspect: why (``no_handler``, ``view_drift``, ...,
            ``archive_entry_lost``, ``view_differs``), else ``None``.
        message: the reason in words, when there is one.
    """

    index: int
    line: int
    offset: int
    event_id: str
    type: str
    ts: str
    entry: str | None
    state: str = "pending"
    reason: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "state": self.state,
            "reason": self.reason,
        }


@dataclass(slots=True)
class JournalStats:
    present: bool = False
    lines: int = 0
    events: int = 0
    bytes: int = 0


@dataclass(slots=True)
class SentinelInfo:
    """``state`` ∈ ok / missing / malformed / null / unknown_id; ``index`` of the event it names."""

    state: str = "missing"
    event_id: str | None = None
    index: int | None = None


_STATE_CODE = {name: i for i, name in enumerate(EVENT_STATES)}


class EventList(MutableSequence[EventInfo]):
    """The events of a journal, stored column by column; items are :class:`EventInfo` values.

    A 1,000,000-event journal would need a million objects as a plain list; the columns hold the
    same information in a fraction of the memory and time. ``events[i]`` builds the
    :class:`EventInfo` on demand, so treat it as a snapshot: change a state with
    :meth:`set_state`, not by assigning to the returned object. Slices return plain lists.
    ``append`` / ``extend`` accept :class:`EventInfo` (live tailing) and keep ``index`` positional.

    Attributes:
        event_ids, types, ts, entries: one item per event.
        lines, offsets: 1-based line and byte offset of each record.
    """

    __slots__ = ("_notes", "_states", "entries", "event_ids", "lines", "offsets", "ts", "types")

    def __init__(self, items: Iterable[EventInfo] = ()) -> None:
        self.event_ids: list[str] = []
        self.types: list[str] = []
        self.ts: list[str] = []
        self.entries: list[str | None] = []
        self.lines: array[int] = array("q")
        self.offsets: array[int] = array("q")
        self._states = bytearray()
        self._notes: dict[int, tuple[str | None, str | None]] = {}
        self.extend(items)

    # -- Sequence ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.event_ids)

    def _make(self, i: int) -> EventInfo:
        reason, message = self._notes.get(i, (None, None))
        return EventInfo(
            i,
            self.lines[i],
            self.offsets[i],
            self.event_ids[i],
            self.types[i],
            self.ts[i],
            self.entries[i],
            EVENT_STATES[self._states[i]],
            reason,
            message,
        )

    @overload
    def __getitem__(self, i: int) -> EventInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[EventInfo]: ...

    def __getitem__(self, i: int | slice) -> EventInfo | list[EventInfo]:
        n = len(self.event_ids)
        if isinstance(i, slice):
            return [self._make(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("event index out of range")
        return self._make(i)

    def __iter__(self) -> Iterator[EventInfo]:
        for i in range(len(self.event_ids)):
            yield self._make(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventList({len(self)} events)"

    # -- MutableSequence ----------------------------------------------------------------------

    @overload
    def __setitem__(self, i: int, value: EventInfo) -> None: ...

    @overload
    def __setitem__(self, i: slice, value: Iterable[EventInfo]) -> None: ...

    def __setitem__(self, i: int | slice, value: EventInfo | Iterable[EventInfo]) -> None:
        if isinstance(i, slice) or not isinstance(value, EventInfo):
            raise TypeError("EventList supports item assignment of one EventInfo only")
        n = len(self.event_ids)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("event index out of range")
        self.event_ids[j] = value.event_id
        self.types[j] = value.type
        self.ts[j] = value.ts
        self.entries[j] = value.entry
        self.lines[j] = value.line
        self.offsets[j] = value.offset
        self.set_state(j, value.state, value.reason, value.message)

    def __delitem__(self, i: int | slice) -> None:
        raise TypeError("events cannot be removed from a diagnosis")

    def insert(self, i: int, value: EventInfo) -> None:
        if i < len(self):
            raise TypeError("events can only be appended: their index is their position")
        self.append(value)

    def append(self, value: EventInfo) -> None:
        self.event_ids.append(value.event_id)
        self.types.append(value.type)
        self.ts.append(value.ts)
        self.entries.append(value.entry)
        self.lines.append(value.line)
        self.offsets.append(value.offset)
        self._states.append(_STATE_CODE[value.state])
        if value.reason is not None or value.message is not None:
            self._notes[len(self.event_ids) - 1] = (value.reason, value.message)

    # -- states -------------------------------------------------------------------------------

    def state(self, i: int) -> str:
        return EVENT_STATES[self._states[i]]

    def set_state(self, i: int, state: str, reason: str | None = None, message: str | None = None) -> None:
        self._states[i] = _STATE_CODE[state]
        if reason is None and message is None:
            self._notes.pop(i, None)
        else:
            self._notes[i] = (reason, message)

    def fill_states(self, sentinel_index: int) -> None:
        """Everything up to ``sentinel_index`` (inclusive) applied, everything after pending."""
        n = len(self.event_ids)
        upto = max(0, min(n, sentinel_index + 1))
        self._states = bytearray(upto) + bytearray([_STATE_CODE["pending"]]) * (n - upto)
        self._notes.clear()

    def state_counts(self) -> dict[str, int]:
        return {name: self._states.count(code) for name, code in _STATE_CODE.items()}

    def indices(self, state: str) -> list[int]:
        """Indices of the events in ``state``, in order."""
        code = _STATE_CODE[state]
        out: list[int] = []
        find = self._states.find
        i = find(code)
        while i >= 0:
            out.append(i)
            i = find(code, i + 1)
        return out

    def index_of(self, event_id: str) -> int | None:
        """Index of the first event with ``event_id``."""
        try:
            return self.event_ids.index(event_id)
        except ValueError:
            return None

    def iter_json(self) -> Iterator[dict[str, Any]]:
        """``e.to_json()`` of every event, in order, made straight from the columns."""
        names, notes = EVENT_STATES, self._notes
        columns = zip(itertools.count(), self.lines, self.event_ids, self.types, self._states)
        for i, line, event_id, etype, code in columns:
            note = notes.get(i)
            yield {
                "index": i,
                "line": line,
                "event_id": event_id,
                "type": etype,
                "state": names[code],
                "reason": None if note is None else note[0],
            }

    def not_applied(self) -> Iterator[EventInfo]:
        """The events whose state is not ``applied``, in order (C-level scan; fast on big journals)."""
        marks = self._states.translate(_NOT_APPLIED)
        i = marks.find(1)
        while i >= 0:
            yield self._make(i)
            i = marks.find(1, i + 1)


#: bytes.translate table: the applied code → 0, every other state code → 1.
_NOT_APPLIED = bytes([0] + [1] * 255)


#: The launcher-lock probe's value (:class:`journal.runtime.LauncherLock`; ``lock_path`` is its path).
ServerStatus = LauncherLock


@dataclass(slots=True)
class CharacterDiagnosis:
    """Everything ``check`` reports about one character folder.

    Attributes:
        name: the folder name.
        path: absolute path of the folder that was read (inside a private temp copy for zips).
        journal, sentinel: as in the JSON shape.
        events: one :class:`EventInfo` per event, in file order (an :class:`EventList`; any
            sequence of :class:`EventInfo` works for values built by hand).
        defects: located journal defects (:class:`journal.reader.Defect`).
        findings: every finding, in a stable order.
        blocked: the blocked event, if replay would stop.
        blocked_message: the reason in words.
        outbox: pending and dead-letter outbox operations.
        views_only: no journal and no shards: a cloud-save export.
        compaction_due: the journal is due for compaction.
    """

    name: str
    path: str
    journal: JournalStats = field(default_factory=JournalStats)
    sentinel: SentinelInfo = field(default_factory=SentinelInfo)
    events: MutableSequence[EventInfo] = field(default_factory=EventList)
    defects: list[Any] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    blocked: EventInfo | None = None
    blocked_message: str | None = None
    outbox: list[OutboxOp] = field(default_factory=list)
    views_only: bool = False
    compaction_due: bool = False

    def counts(self) -> dict[str, int]:
        if isinstance(self.events, EventList):
            c = self.events.state_counts()
        else:
            c = dict.fromkeys(EVENT_STATES, 0)
            for e in self.events:
                c[e.state] += 1
        c["defects"] = len(self.defects)
        return c

    def worst_severity(self) -> str:
        return _worst(f.severity for f in self.findings)

    def listed_events(self, all_events: bool = False) -> Iterator[EventInfo]:
        """The events the JSON shape lists, in order: every event not ``applied``, or all."""
        if all_events:
            return iter(self.events)
        if isinstance(self.events, EventList):
            return self.events.not_applied()
        return (e for e in self.events if e.state != "applied")

    def listed_json(self, all_events: bool = False) -> Iterator[dict[str, Any]]:
        """``to_json()`` of each of :meth:`listed_events`."""
        if all_events and isinstance(self.events, EventList):
            return self.events.iter_json()
        return (e.to_json() for e in self.listed_events(all_events))

    def to_json(self, all_events: bool = False, *, with_events: bool = True) -> dict[str, Any]:
        """The character's object of the ``--json`` shape; ``with_events=False`` leaves its
        ``events`` list empty (for writers that add the events themselves, a slice at a time)."""
        b = self.blocked
        events = list(self.listed_json(all_events)) if with_events else []
        return {
            "name": self.name,
            "journal": {
                "present": self.journal.present,
                "lines": self.journal.lines,
                "events": self.journal.events,
                "bytes": self.journal.bytes,
            },
            "sentinel": {
                "state": self.sentinel.state,
                "event_id": self.sentinel.event_id,
                "index": self.sentinel.index,
            },
            "counts": self.counts(),
            "blocked": None
            if b is None
            else {
                "event_id": b.event_id,
                "index": b.index,
                "type": b.type,
                "reason": b.reason,
                "message": self.blocked_message or b.message or "",
            },
            "events": events,
            "defects": [
                {"line": d.line, "offset": d.offset, "kind": d.kind, "recovered_event_id": d.recovered_event_id}
                for d in self.defects
            ],
            "findings": [f.to_json() for f in self.findings],
        }


def _worst(severities: Iterable[str]) -> str:
    worst = 0
    for s in severities:
        worst = max(worst, SEVERITIES.index(s))
    return SEVERITIES[worst]


class _TempRoot:
    """Owns a private temp folder; removes it when closed or garbage-collected."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._finalizer = weakref.finalize(self, shutil.rmtree, path, True)

    def close(self) -> None:
        self._finalizer()


@dataclass(slots=True)
class Diagnosis:
    """The diagnosis of one input PATH (memory root, character folder, or zip export).

    For a zip, :attr:`root` is a private temp folder holding the extracted copy. It stays on disk
    while the value is alive, so a viewer (the GUI keeps the diagnosis it shows open) can read the
    files behind it; call :meth:`close`, or use the value as a context manager, to remove it. It
    is also removed when the value is garbage-collected.

    Attributes:
        path: the PATH as given.
        root: the folder actually read (a private temp folder for a zip).
        characters: one entry per character folder, sorted by name.
        is_zip: the input was a zip export (read-only; replay must refuse it).
        kind: ``root`` (a memory root) or ``character`` (PATH was one character folder).
        memory_root: the folder holding the character folders (inside :attr:`root` for a zip).
        findings: findings about the input as a whole (refused zip members); each is also
            copied into every character's findings, because the JSON shape has no other place.
        server: the launcher-lock probe, shared by all characters.
    """

    path: str
    root: str
    characters: list[CharacterDiagnosis] = field(default_factory=list)
    is_zip: bool = False
    kind: str = "root"
    memory_root: str | None = None
    findings: list[Finding] = field(default_factory=list)
    server: ServerStatus | None = None
    _temp: _TempRoot | None = field(default=None, repr=False, compare=False)

    def to_json(self, all_events: bool = False, *, with_events: bool = True) -> dict[str, Any]:
        return {
            "schema": 1,
            "path": self.path,
            "characters": [c.to_json(all_events, with_events=with_events) for c in self.characters],
        }

    def worst_severity(self) -> str:
        return _worst([f.severity for c in self.characters for f in c.findings] + [f.severity for f in self.findings])

    def close(self) -> None:
        """Remove the private temp folder of a zip export (no-op otherwise; idempotent)."""
        if self._temp is not None:
            self._temp.close()

    def __enter__(self) -> Diagnosis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the memory server's launcher lock (memory-format §6.2) -------------------------------------------


def server_status(environ: Mapping[str, str] | None = None) -> ServerStatus:
    """Probe the launcher lock without creating anything (see :func:`journal.runtime.check_launcher_lock`).

    Contention means the app is running; getting the lock means it is not (the lock is released
    at once); a missing lock file means it is not; any other error means unknown.
    """
    return check_launcher_lock(env=environ)


# -- careful file access ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Probe:
    """``kind``: ``missing`` | ``file`` | ``dir`` | ``refused`` (not read, for safety) | ``error``."""

    kind: str
    reason: str = ""


def _within(path: str, root_real: str) -> bool:
    try:
        return os.path.commonpath([path, root_real]) == root_real
    except ValueError:
        return False


def _probe(path: Path, root_real: str) -> _Probe:
    """What ``path`` is, without following a link that leaves the memory root or opening a FIFO."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _Probe("missing")
    except OSError as exc:
        return _Probe("error", exc.strerror or str(exc))
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        if not _within(target, root_real):
            return _Probe("refused", "a symbolic link pointing outside the memory root; not followed")
        try:
            st = os.stat(path)
        except OSError:
            return _Probe("refused", "a dangling symbolic link; not followed")
    if stat.S_ISREG(st.st_mode):
        return _Probe("file")
    if stat.S_ISDIR(st.st_mode):
        return _Probe("dir")
    return _Probe("refused", "not a regular file (a FIFO, socket or device); not read")


def _first_line(path: Path, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as fh:
        return fh.readline(limit)


# -- findings ----------------------------------------------------------------------------------------

_CODE_RANK = {code: i for i, code in enumerate(FINDING_CODES)}


class _Findings:
    """Collects findings in a stable order (by code, then as added), at most N per code."""

    def __init__(self) -> None:
        self._items: list[tuple[int, int, Finding]] = []
        self._per_code: dict[str, int] = {}
        self._overflow: dict[str, list[str]] = {}

    def add(
        self,
        code: str,
        severity: str,
        message: str,
        *,
        event_id: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        assert code in _CODE_RANK and severity in SEVERITIES, (code, severity)
        n = self._per_code.get(code, 0)
        self._per_code[code] = n + 1
        if n >= MAX_FINDINGS_PER_CODE:
            self._overflow.setdefault(code, []).append(severity)
            return
        self._items.append((_CODE_RANK[code], len(self._items), Finding(code, severity, message, event_id, file, line)))

    def result(self) -> list[Finding]:
        items = list(self._items)
        for code, severities in self._overflow.items():
            items.append(
                (
                    _CODE_RANK[code],
                    sys.maxsize,
                    Finding(code, _worst(severities), f"… and {len(severities)} more {code} findings, not listed"),
                )
            )
        items.sort(key=lambda t: (t[0], t[1]))
        return [f for _, _, f in items]


# -- the journal scan --------------------------------------------------------------------------------

_DECLARED: dict[str, str] = {name: name for name in ALL_EVENT_TYPES}
_CHUNK = 8 << 20


@dataclass(slots=True)
class _Scan:
    events: EventList
    defects: list[Defect]
    lines: int = 0
    size: int = 0
    archives: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _add_reader_events(scan: _Scan, evs: list[Event], intern: dict[str, str]) -> None:
    events = scan.events
    for ev in evs:
        index = len(events.event_ids)
        ref = entry_ref(ev.type, ev.payload)
        events.event_ids.append(ev.event_id)
        events.types.append(_DECLARED.get(ev.type, ev.type))
        events.ts.append(ev.ts)
        events.entries.append(None if ref is None else intern.setdefault(ref, ref))
        events.lines.append(ev.line)
        events.offsets.append(ev.offset)
        if isinstance(ev.payload, dict) and "archive_shard_path" in ev.payload:
            scan.archives.append((index, ev.payload))


def _scan_with_reader(fh: BinaryIO, report: Callable[[int], None] | None = None) -> _Scan:
    """The reference path: :class:`~journal.reader.JournalScanner` over the whole file."""
    scan = _Scan(EventList(), [])
    scanner = JournalScanner()
    intern: dict[str, str] = {}
    while True:
        chunk = fh.read(_CHUNK)
        evs: list[Event] = []
        if chunk:
            scanner.feed(chunk, evs, scan.defects)
            if report is not None:
                report(scanner.offset)
        else:
            scanner.finish(evs, scan.defects)
        _add_reader_events(scan, evs, intern)
        if not chunk:
            break
    scan.lines, scan.size = scanner.line, scanner.offset
    scan.events._states = bytearray(len(scan.events.event_ids))
    return scan


#: Journals at least this big are scanned by two processes when that is safe (see scan_journal).
PARALLEL_MIN_BYTES = 64 << 20

#: Set to ``1`` to never fork for a scan.
JOBS_ENV = "MEMORY_INSPECTOR_JOBS"


def scan_journal(
    path: str | os.PathLike[str],
    report: Callable[[int], None] | None = None,
    *,
    fork_with_threads: bool = False,
) -> _Scan:
    """Read a journal into columns: every event (compact) and every located defect.

    ``report(bytes_done)`` is called every few MiB (from this process only) and may raise to
    abandon the scan (a forked child is then killed).

    The result equals what :func:`journal.reader.read_journal` finds; only faster. A line that
    is a clean record (a JSON object with a non-empty string ``event_id`` and a declared
    ``type``) is taken in an inlined loop; every other line is handed, on its own, to the
    reader's :class:`~journal.reader.JournalScanner`, which classifies it. Duplicate ids are
    checked once at the end; if there are any, the file is read again through the reader alone,
    which decides which copy counts.

    A big journal (≥ :data:`PARALLEL_MIN_BYTES`) is split at a line boundary and its second half
    scanned by a forked child process, on the second core, when that is safe and useful: POSIX,
    more than one CPU with one of them idle (1-minute load average ≤ CPUs − 1), and a process with
    a single thread (the ``check`` command), unless ``fork_with_threads``.
    ``MEMORY_INSPECTOR_JOBS=1`` turns it off. Any failure of the child falls back to scanning
    that half here.

    ``fork_with_threads`` (the window sets it): fork even while other threads run. A fork copies
    only the calling thread, so a child that touched a lock another thread held at that moment
    would hang; the child here runs nothing but this module's scanning code over modules already
    imported (file reads, orjson, marshal, a shared map, pipe writes: no imports, logging, stdio
    or Qt), and leaves with ``os._exit``. While this process waits for it, ``report`` is called
    every fraction of a second, so a cancel still works (and kills it) should it ever hang.
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        split = _split_point(fh, size) if _may_fork(size, fork_with_threads) else None
        if split is None:
            scan = _fast_scan(fh, report=report)
            unique = len(set(scan.events.event_ids)) == len(scan.events.event_ids)
        else:
            scan, unique = _parallel_scan(fh, Path(path), split, report)
        if not unique:
            fh.seek(0)
            scan = _scan_with_reader(fh, report)
    return scan


def _may_fork(size: int, with_threads: bool = False) -> bool:
    cpus = os.cpu_count() or 1
    if not (
        size >= PARALLEL_MIN_BYTES
        and hasattr(os, "fork")
        and cpus > 1
        and (with_threads or threading.active_count() == 1)
        and os.environ.get(JOBS_ENV, "") != "1"
    ):
        return False
    # The split costs ~15 % more CPU in total; it only pays when a core is idle for the child.
    busy = _busy_cpus()
    return busy is not None and busy + 2 <= cpus + 0.5


def _busy_cpus(samples: int = 5) -> float | None:
    """How many CPUs other work occupies now, besides this thread.

    Linux: the kernel's count of runnable threads (``/proc/loadavg``), less this one, at its
    lowest over a few samples 2 ms apart (one snapshot may catch a thread that is about to
    sleep). Elsewhere: the 1-minute load average, which lags (a burst of work that just ended
    still counts). ``None``: unknown.
    """
    counts = []
    for i in range(samples):
        if i:
            time.sleep(0.002)
        try:
            with open("/proc/loadavg", "rb") as fh:
                counts.append(int(fh.read().split()[3].split(b"/")[0]) - 1)
        except (OSError, ValueError, IndexError):
            break
    if counts:
        return max(0, min(counts))
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


#: The share of a split journal this process scans (the rest goes to the child). The child
#: packs its slices, and this process unpacks and merges them, about the same work: half.
PARENT_SHARE = 0.5


def _split_point(fh: BinaryIO, size: int) -> int | None:
    """The start of the first line after :data:`PARENT_SHARE` of the file, if there is one."""
    middle = int(size * PARENT_SHARE)
    fh.seek(middle)
    data = fh.read(1 << 20)
    fh.seek(0)
    cut = data.find(b"\n")
    if cut < 0 or middle + cut + 1 >= size:
        return None
    return middle + cut + 1


#: Where the child cuts its range into slices (fractions of the range; the last slice runs to
#: the end of the file). It sends each slice back as soon as it is scanned, so this process takes
#: in the first ones while the child still scans; the last slice is the smallest, because taking
#: it in is all that is left to do once the child is done.
CHILD_CUTS = (0.35, 0.65, 0.85)

#: At most this much shared memory carries the child's slices back (virtual until written).
SHARED_MAX = 1 << 30

_FRAME = struct.Struct("<qq")  # (offset in the shared map, length); length -1: the child is done


def _parallel_scan(
    fh: BinaryIO, path: Path, split: int, report: Callable[[int], None] | None = None
) -> tuple[_Scan, bool]:
    """Scan the start of the file here and the rest in a forked child; returns the merged scan
    and whether all event ids are distinct.

    The child scans its range in slices (:data:`CHILD_CUTS`), numbering lines from 0, and writes
    each slice (packed) into an anonymous shared map, announcing it with a 16-byte frame on a
    pipe; this process takes the slices in as they come, after its own part, and checks that all
    ids are distinct as they arrive (it would wait for the child otherwise). If the child fails,
    runs out of room or sends something unreadable, this process scans whatever it did not take
    in yet and checks every id itself. ``report`` sees this process's own progress scaled to the
    whole file, and is called every 0.25 s while waiting for the child; when it (or anything
    here) raises, the child is killed rather than waited for.
    """
    size = os.fstat(fh.fileno()).st_size
    shared = mmap.mmap(-1, max(1, min(SHARED_MAX, 2 * (size - split) + (16 << 20))))
    from_child, to_parent = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about any fork in a process with threads; scan_journal says why
        # this one is safe, and only forks with threads when the caller asked for it.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: scan the rest, slice by slice, and leave at once
        status = 1
        try:
            os.close(from_child)
            _child_work(path, split, size, shared, to_parent)
            status = 0
        finally:
            os._exit(status)
    os.close(to_parent)
    scaled = None if report is None else (lambda done: report(done * size // split))
    child_done = False
    try:
        scan = _fast_scan(fh, end=split, report=scaled)
        base = scan.lines
        seen = set(scan.events.event_ids)
        unique = len(seen) == len(scan.events.event_ids)
        with os.fdopen(from_child, "rb", buffering=0) as frames:
            from_child = -1
            while True:
                if report is not None:
                    while not select.select([frames], [], [], 0.25)[0]:
                        report(size)  # nothing new from the child yet: a chance to cancel
                frame = _read_exactly(frames, _FRAME.size)
                if frame is None:
                    break  # the child died before it was done
                at, length = _FRAME.unpack(frame)
                if length < 0:
                    child_done = True
                    break
                try:
                    with memoryview(shared)[at : at + length] as packed:
                        part = _unpack(packed)
                except Exception:
                    break
                _shift_lines(part, base)
                before = len(seen)
                seen.update(part.events.event_ids)
                unique = unique and len(seen) == before + len(part.events.event_ids)
                _merge(scan, part)
    finally:
        if from_child >= 0:
            os.close(from_child)
        if not child_done:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        shared.close()
    if not child_done:  # scan here what the child did not deliver, and check every id here
        _merge(scan, _scan_rest(path, scan.size, scan.lines))
        unique = len(set(scan.events.event_ids)) == len(scan.events.event_ids)
    return scan, unique


def _child_work(path: Path, split: int, size: int, shared: mmap.mmap, out: int) -> None:
    """The forked child's work: scan from ``split`` to the end, slice by slice, into ``shared``."""
    ends = [split + int((size - split) * cut) for cut in CHILD_CUTS] + [sys.maxsize]
    at = 0
    with open(path, "rb") as own:
        own.seek(split)
        start, line = split, 0
        for end in ends:
            if end <= start:
                continue  # the previous slice ended past this one (a long line)
            part = _fast_scan(own, start=start, end=end, line=line)
            blob = _pack(part)
            if at + len(blob) > len(shared):
                raise MemoryError("no room left in the shared map")
            shared[at : at + len(blob)] = blob
            os.write(out, _FRAME.pack(at, len(blob)))
            at += len(blob)
            start, line = part.size, part.lines
            del part, blob  # before the next slice, which can then reuse their memory
    os.write(out, _FRAME.pack(0, -1))


def _read_exactly(fh: BinaryIO, n: int) -> bytes | None:
    """``n`` bytes from an unbuffered pipe, or ``None`` at its end."""
    data = b""
    while len(data) < n:
        more = fh.read(n - len(data))
        if not more:
            return None
        data += more
    return data


def _scan_rest(path: Path, start: int, line: int) -> _Scan:
    """Scan from byte ``start`` (a line start, after ``line`` lines) to the end, here."""
    with open(path, "rb") as fh:
        fh.seek(start)
        return _fast_scan(fh, start=start, line=line)




def _shift_lines(part: _Scan, base: int) -> None:
    """Renumber a part scanned from line 0 so that it starts after ``base`` lines."""
    part.events.lines = array("q", map(operator.add, part.events.lines, itertools.repeat(base)))
    part.defects = [dataclasses.replace(d, line=d.line + base) for d in part.defects]
    part.lines += base


def _pack(part: _Scan) -> bytes:
    """The child's columns, cheap to send: :mod:`marshal` (only between this program's own
    processes), whose references keep the few distinct types and entries shared and which keeps
    lone surrogates; defects as plain tuples."""
    ev = part.events
    defects = [dataclasses.astuple(d) for d in part.defects]
    return marshal.dumps(
        (
            ev.event_ids,
            ev.ts,
            ev.types,
            ev.entries,
            ev.lines.tobytes(),
            ev.offsets.tobytes(),
            defects,
            part.lines,
            part.size,
            part.archives,
        )
    )


def _unpack(data: bytes | memoryview) -> _Scan:
    """A slice of the child's scan, from :func:`_pack`."""
    ids, ts, types, entries, lines, offsets, defects, nlines, size, archives = marshal.loads(data)
    events = EventList()
    events.event_ids, events.ts, events.types, events.entries = ids, ts, types, entries
    events.lines.frombytes(lines)
    events.offsets.frombytes(offsets)
    n = len(ids)
    if {len(ts), len(types), len(entries), len(events.lines), len(events.offsets)} != {n}:
        raise ValueError("inconsistent columns from the scanning child")
    events._states = bytearray(n)
    return _Scan(events, [Defect(*d) for d in defects], nlines, size, archives)


def _merge(first: _Scan, second: _Scan) -> _Scan:
    a, b = first.events, second.events
    shift = len(a.event_ids)
    a.event_ids.extend(b.event_ids)
    a.types.extend(b.types)
    a.ts.extend(b.ts)
    a.entries.extend(b.entries)
    a.lines.extend(b.lines)
    a.offsets.extend(b.offsets)
    a._states = bytearray(len(a.event_ids))
    first.defects.extend(second.defects)
    first.archives.extend((i + shift, payload) for i, payload in second.archives)
    first.lines, first.size = second.lines, second.size
    return first


#: How often (in bytes) a scan calls its ``report`` callback.
REPORT_EVERY = 4 << 20


def _fast_scan(
    fh: BinaryIO,
    *,
    start: int = 0,
    end: int = sys.maxsize,
    line: int = 0,
    report: Callable[[int], None] | None = None,
) -> _Scan:
    """Scan from the current position (byte ``start``, after ``line`` lines) up to ``end``.

    ``report(bytes_done_since_start)`` is called about every :data:`REPORT_EVERY` bytes; it may
    raise (cancel). The check costs nothing per line: it shares the comparison with ``end``.
    """
    scan = _Scan(EventList(), [])
    # Move the (still empty) column lists to the oldest generation at once: a young list is walked
    # item by item by every young collection, and these grow to a million items while the
    # collector is paused; the first two collections after the diagnosis then cost ~0.1 s, on
    # whichever thread allocates next (the window's). Only young objects are walked here.
    gc.collect(1)
    events = scan.events
    loads = orjson.loads
    known = _DECLARED
    intern: dict[str, str] = {}
    isetdefault = intern.setdefault
    ids_append = events.event_ids.append
    types_append = events.types.append
    ts_append = events.ts.append
    entries_append = events.entries.append
    lines_append = events.lines.append
    offsets_append = events.offsets.append
    archives = scan.archives
    defects = scan.defects
    off = start
    stop = end if report is None else min(end, start + REPORT_EVERY)
    for line, raw in enumerate(fh, line + 1):  # noqa: B020 -- `line` continues from the argument
        try:
            obj = loads(raw)
            eid = obj["event_id"]
            etype = known[obj["type"]]
        except Exception:
            eid = None
        if eid.__class__ is not str or not eid:
            # Not a clean record: the reader classifies this line (it may still hold an event).
            evs: list[Event] = []
            scanner = JournalScanner(offset=off, line=line - 1, seen_ids=set())
            scanner.feed(raw, evs, defects)
            scanner.finish(evs, defects)
            _add_reader_events(scan, evs, intern)
        else:
            payload = obj.get("payload")
            entry = None
            if payload.__class__ is dict:
                first = etype[0]
                if first == "r":
                    rid = payload.get("reflection_id")
                    if rid.__class__ is str and rid:
                        entry = isetdefault(rid, rid)
                elif first == "p":
                    key = payload.get("entity_key")
                    eid2 = payload.get("entry_id")
                    if key.__class__ is str and eid2.__class__ is str and key and eid2:
                        ref = key + "/" + eid2
                        entry = isetdefault(ref, ref)
                if "archive_shard_path" in payload:
                    archives.append((len(events.event_ids), payload))
            ts = obj.get("ts")
            ids_append(eid)
            types_append(etype)
            ts_append(ts if ts.__class__ is str else "")
            entries_append(entry)
            lines_append(line)
            offsets_append(off)
        off += len(raw)
        if off >= stop:
            if off >= end:
                break
            assert report is not None
            report(off - start)
            stop = min(end, off + REPORT_EVERY)
    scan.lines, scan.size = line, off
    events._states = bytearray(len(events.event_ids))
    return scan


def _iter_events_from(path: Path, events: EventList, start: int) -> Iterator[tuple[int, Event]]:
    """Re-read the events from index ``start`` on, with payloads, streaming (bounded memory)."""
    n = len(events)
    if start >= n:
        return
    j = start
    offsets = events.offsets
    scanner = JournalScanner(offset=offsets[start], line=events.lines[start] - 1)
    with open(path, "rb") as fh:
        fh.seek(offsets[start])
        while j < n:
            chunk = fh.read(_CHUNK)
            batch: list[Event] = []
            if chunk:
                scanner.feed(chunk, batch, [])
            else:
                scanner.finish(batch, [])
            for ev in batch:
                while j < n and offsets[j] < ev.offset:
                    j += 1  # not found again: the file changed under us; skip it
                if j < n and offsets[j] == ev.offset and events.event_ids[j] == ev.event_id:
                    yield j, ev
                    j += 1
            if not chunk:
                return


def _read_payloads(path: Path, offsets: Iterable[int]) -> dict[int, Any]:
    """Payloads of the records starting at ``offsets`` (random access; the line is re-parsed)."""
    out: dict[int, Any] = {}
    with open(path, "rb") as fh:
        for off in sorted(set(offsets)):
            fh.seek(off)
            buf = fh.read(2048)
            while b"\n" not in buf:
                more = fh.read(max(len(buf), 8192))
                if not more:
                    break
                buf += more
            cut = buf.find(b"\n")
            try:
                obj = parse_json_bytes(buf if cut < 0 else buf[:cut])
            except ValueError:
                continue
            if isinstance(obj, dict):
                payload = obj.get("payload")
                out[off] = {} if payload is None else payload
    return out


# -- views and shards of one folder, loaded once ---------------------------------------------------


@dataclass(slots=True)
class _View:
    name: str
    expected: type
    exists: bool = False
    value: Any = None
    error: str | None = None


def _hashable(value: object) -> bool:
    return isinstance(value, Hashable) and not isinstance(value, (list, dict))


class _Folder:
    """The views and shards of one character folder, read once, never written."""

    def __init__(self, char_dir: Path, root_real: str, findings: _Findings) -> None:
        self.dir = char_dir
        self.root_real = root_real
        self.findings = findings
        self.views: dict[str, _View] = {}
        self.reflection_ids: dict[Hashable, list[dict[str, Any]]] = {}
        self.persona_ids: dict[tuple[str, Hashable], list[dict[str, Any]]] = {}
        self._shards: dict[tuple[str, str], list[Any] | ShardCorruptError | None] = {}
        self._shard_ids: dict[tuple[str, str], frozenset[Hashable]] = {}
        self.archive_dirs: dict[str, bool] = {}

    # views

    def load_views(self) -> None:
        for name, expected in ((REFLECTIONS, list), (PERSONA, dict), (FACTS, list)):
            view = self.views[name] = _View(name, expected)
            probe = _probe(self.dir / name, self.root_real)
            if probe.kind == "missing":
                continue
            if probe.kind == "refused":
                self.findings.add("input.refused", "warning", f"{name} is {probe.reason}", file=name)
                continue
            view.exists = True
            try:
                if probe.kind != "file":
                    raise IsADirectoryError(21, "Is a directory")
                view.value = load_view(self.dir / name, expected)
            except OSError as exc:
                view.error = f"{name} cannot be read: {exc.strerror or exc}"
            except ViewCorruptError as exc:
                view.error = str(exc)  # the reconciler's own words
            if view.error is not None:
                self.findings.add("view.corrupt", "error", view.error, file=name)
        refl = self.views[REFLECTIONS].value
        for e in refl if isinstance(refl, list) else []:
            if isinstance(e, dict) and _hashable(e.get("id")):
                self.reflection_ids.setdefault(e.get("id"), []).append(e)
        persona = self.views[PERSONA].value
        for key, section in persona.items() if isinstance(persona, dict) else ():
            facts = section.get("facts") if isinstance(section, dict) else None
            for e in facts if isinstance(facts, list) else []:
                if isinstance(e, dict) and _hashable(e.get("id")):
                    self.persona_ids.setdefault((key, e.get("id")), []).append(e)

    def view(self, name: str, expected: type) -> _View:
        view = self.views.get(name)
        if view is None:  # a view the diagnosis does not preload: read it now
            view = _View(name, expected)
            probe = _probe(self.dir / name, self.root_real)
            if probe.kind in ("file", "dir", "error"):
                view.exists = True
                try:
                    view.value = parse_json_bytes((self.dir / name).read_bytes())
                except (OSError, ValueError) as exc:
                    view.error = f"{name} cannot be read: {exc}"
            self.views[name] = view
        return view

    def has_entry(self, view_name: str, entity_key: str | None, entry_id: Hashable) -> bool | None:
        """Whether the view holds the entry (``None``: the view is unreadable, so unknown)."""
        view = self.views.get(view_name)
        if view is None or view.error is not None:
            return None
        if view_name == REFLECTIONS:
            return entry_id in self.reflection_ids
        return entity_key is not None and (entity_key, entry_id) in self.persona_ids

    # shards

    def scan_archives(self) -> None:
        """Look at every file of both shard folders: corrupt shards, bad names, temp litter."""
        for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
            folder = self.dir / archive
            probe = _probe(folder, self.root_real)
            self.archive_dirs[archive] = probe.kind == "dir"
            if probe.kind == "refused":
                self.findings.add("input.refused", "warning", f"{archive}/ is {probe.reason}", file=archive)
                continue
            if probe.kind == "error" or probe.kind == "file":
                self.findings.add("shard.corrupt", "error", f"{archive} is not a readable folder", file=archive)
                continue
            if probe.kind != "dir":
                continue
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                self.findings.add(
                    "shard.corrupt", "error", f"{archive}/ cannot be listed: {exc.strerror or exc}", file=archive
                )
                continue
            for name in names:
                rel = f"{archive}/{name}"
                if TEMP_NEW_RE.fullmatch(name) or TEMP_OLD_RE.fullmatch(name):
                    self.findings.add(
                        "tempfile.leftover", "info", f"{rel} is left over from a crashed atomic write", file=rel
                    )
                elif name == ".migrated_from_flat":
                    continue
                elif is_shard_name(name):
                    result = self.shard(archive, name)
                    if isinstance(result, ShardCorruptError):
                        self.findings.add("shard.corrupt", "error", str(result), file=rel)
                else:
                    self.findings.add(
                        "shard.bad_name",
                        "warning",
                        f"{rel} does not match YYYY-MM-DD_<8 hex>.json: every shard reader ignores it",
                        file=rel,
                    )

    def shard(self, archive: str, name: str) -> list[Any] | ShardCorruptError | None:
        """A valid shard's entries, ``None`` when absent, or the corruption (not raised)."""
        key = (archive, name)
        if key in self._shards:
            return self._shards[key]
        result: list[Any] | ShardCorruptError | None
        path = self.dir / archive / name
        probe = _probe(path, self.root_real)
        folder = _probe(self.dir / archive, self.root_real)
        if folder.kind == "refused" or probe.kind in ("missing", "refused"):
            result = None
            if probe.kind == "refused" and folder.kind == "dir":
                self.findings.add(
                    "input.refused", "warning", f"{archive}/{name} is {probe.reason}", file=f"{archive}/{name}"
                )
        else:
            try:
                if probe.kind != "file":
                    raise IsADirectoryError(21, "Is a directory")
                result = load_shard(path)  # the reconciler's own reader and words
            except OSError as exc:
                result = ShardCorruptError(f"shard {archive}/{name} cannot be read: {exc.strerror or exc}")
            except ShardCorruptError as exc:
                result = exc
        self._shards[key] = result
        return result

    def shard_holds(self, archive: str, name: object, entry_id: Hashable) -> bool | None:
        """Whether shard ``name`` holds ``entry_id``: False when it is absent or the name is
        invalid (nothing can be there), ``None`` when it is corrupt (unknown)."""
        if not isinstance(name, str) or not is_shard_name(name):
            return False
        result = self.shard(archive, name)
        if isinstance(result, ShardCorruptError):
            return None
        if result is None:
            return False
        key = (archive, name)
        ids = self._shard_ids.get(key)
        if ids is None:
            ids = self._shard_ids[key] = frozenset(
                e.get("id") for e in result if isinstance(e, dict) and _hashable(e.get("id"))
            )
        return entry_id in ids


class ProjectionStore:
    """A :class:`~journal.handlers.Store` over a folder's views that shows each event only the
    entries it can touch, and keeps every write in memory (it never writes to disk).

    Every replay handler selects its target by id: the reflection with ``reflection_id``, or
    the persona entry ``entity_key``/``entry_id`` (memory-format §3.5). Before running a handler,
    :meth:`focus` is given the payload; :meth:`load_view` then returns a view holding only the
    matching entries (shallow copies), which costs O(1) instead of a scan of the whole view.
    What the handler writes is kept per target, so a sequence of events sees the effect of the
    ones before it, exactly as on disk. Corrupt views and shards raise as the files would.

    Attributes:
        written: names of the views / ``archive/basename`` shards written since :meth:`focus`.
    """

    def __init__(self, folder: _Folder) -> None:
        self.char_dir = folder.dir
        self._folder = folder
        self._overlay: dict[tuple[Any, ...], Any] = {}
        self._shards: dict[tuple[str, str], list[Any]] = {}
        self._saved: set[str] = set()
        self._target: dict[str, tuple[Any, ...]] = {}
        self.written: set[str] = set()

    def focus(self, payload: Any) -> None:
        """Aim at the entries an event with ``payload`` can touch."""
        p = payload if isinstance(payload, dict) else {}
        rid = p.get("reflection_id")
        key, eid = p.get("entity_key"), p.get("entry_id")
        self._target = {
            REFLECTIONS: (REFLECTIONS, rid) if _hashable(rid) else (REFLECTIONS, object()),
            PERSONA: (PERSONA, key, eid) if _hashable(key) and _hashable(eid) else (PERSONA, object()),
        }
        self.written = set()

    def view_exists(self, name: str) -> bool:
        return name in self._saved or self._folder.view(name, object).exists

    def load_view(self, name: str, expected: type) -> Any:
        view = self._folder.view(name, expected)
        if view.error is not None:
            raise ViewCorruptError(view.error)
        if view.exists and not isinstance(view.value, expected):
            raise ViewCorruptError(
                f"{name} has a top-level {type(view.value).__name__}, expected a {expected.__name__}"
            )
        target = self._target.get(name, (name,))
        if target in self._overlay:
            return self._overlay[target]
        mini = self._project(name, expected, view.value if view.exists else expected(), target)
        self._overlay[target] = mini
        return mini

    def _project(self, name: str, expected: type, value: Any, target: tuple[Any, ...]) -> Any:
        if name == REFLECTIONS and len(target) == 2:
            matches = self._folder.reflection_ids.get(target[1], []) if _hashable(target[1]) else []
            return [dict(e) for e in matches]
        if name == PERSONA and len(target) == 3:
            key, eid = target[1], target[2]
            if not isinstance(key, str) or key not in value:
                return {}
            section = value[key]
            if not isinstance(section, dict):
                return {key: section}
            if not isinstance(section.get("facts"), list):
                return {key: dict(section)}
            matches = self._folder.persona_ids.get((key, eid), [])
            return {key: {**section, "facts": [dict(e) for e in matches]}}
        if name == PERSONA:
            return {}
        if name == REFLECTIONS:
            return []
        return copy_json(value)

    def save_view(self, name: str, obj: Any) -> None:
        self._overlay[self._target.get(name, (name,))] = obj
        self._saved.add(name)
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        validate_shard_name(basename)
        key = (archive, basename)
        if key in self._shards:
            return self._shards[key]
        result = self._folder.shard(archive, basename)
        if isinstance(result, ShardCorruptError):
            raise ShardCorruptError(str(result))
        return None if result is None else list(result)

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        validate_shard_name(basename)
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        self.written.add(SENTINEL_NAME)


# -- one character ------------------------------------------------------------------------------------

#: The files a cloud-save export copies (memory-format §6.1, newest list).
MANAGED_MEMORY_FILENAMES = frozenset(
    {
        "recent.json",
        "theater_runs.json",
        "settings.json",
        "facts.json",
        "facts_archive.json",
        "subject_forget_tombstones.json",
        "external_import_state.json",
        "prompt_locale.json",
        "scoped_prompt_locales.json",
        "persona.json",
        "persona_corrections.json",
        "reflections.json",
        "reflections_archive.json",
        "surfaced.json",
        "time_indexed.db",
    }
)

_DEFECT_FINDINGS = {
    "malformed": ("line.malformed", "warning"),
    "not_object": ("line.malformed", "warning"),
    "missing_event_id": ("line.malformed", "warning"),
    "torn_tail": ("line.torn_tail", "warning"),
    "glued": ("line.glued", "warning"),
    "invalid_utf8": ("line.invalid_utf8", "warning"),
    "duplicate_event_id": ("event.duplicate_id", "warning"),
    "unknown_type": ("event.unknown_type", "warning"),
}


def _defect_message(d: Defect) -> str:
    """The defect in words, without quoting the line (journal lines hold private text)."""
    size = f"{d.length:,} bytes"
    if d.kind == "malformed":
        return f"line {d.line} is not valid JSON ({size}); replay skips it"
    if d.kind == "torn_tail":
        return (
            f"line {d.line} is an unterminated last line ({size}), torn by a crash during an append; "
            "the memory server glues its next event onto it and loses both"
        )
    if d.kind == "glued":
        return (
            f"line {d.line}: {d.message} (a crash tore an append and the next one was glued on); event "
            f"{d.recovered_event_id} was recovered, but the memory server's replay skips the whole line"
        )
    return f"line {d.line}: {d.message}"


def diagnose_character(
    char_dir: str | os.PathLike[str],
    *,
    registry: HandlerRegistry | None = None,
    server: ServerStatus | None = None,
    now: datetime | None = None,
    root: str | os.PathLike[str] | None = None,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    fork_with_threads: bool = False,
) -> CharacterDiagnosis:
    """Diagnose one character folder; read-only, never raises on content.

    Args:
        char_dir: the character folder.
        registry: the handlers replay would use (default: the five production handlers).
        server: the launcher-lock probe (default: probe now, honouring ``NEKO_RUNTIME_STATE_DIR``).
        now: the time the compaction age is measured against (default: now).
        root: the memory root: symbolic links that point outside it are not followed (default:
            the character folder itself).
        name: the character name (default: the folder name).
        progress: called as ``progress(bytes_read, journal_bytes)`` every few MiB of the journal
            scan; it may raise (to cancel), and the exception propagates.
        fork_with_threads: let a big journal's scan fork while other threads run (see
            :func:`scan_journal`).
    """
    cd = Path(char_dir)
    diag = CharacterDiagnosis(name if name is not None else cd.name, str(cd.absolute()))
    findings = _Findings()
    root_real = os.path.realpath(root if root is not None else cd)
    reg = registry if registry is not None else default_registry()
    # Millions of short-lived parse results: pausing the cycle collector roughly halves the time of
    # the scan (it finds no cycles there). The previous setting is always restored.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        report = None if progress is None else _bounded(progress, _journal_size(cd))
        server = server if server is not None else server_status()
        _diagnose(diag, cd, root_real, reg, findings, server, now, report, fork_with_threads)
    finally:
        if gc_was_enabled:
            gc.enable()
    diag.findings = findings.result()
    return diag


def _journal_size(cd: Path) -> int:
    try:
        return os.stat(cd / JOURNAL_NAME).st_size
    except OSError:
        return 0


def _bounded(progress: Callable[[int, int], None], total: int) -> Callable[[int], None]:
    def report(done: int) -> None:
        progress(min(done, total), total)

    return report


def _diagnose(
    diag: CharacterDiagnosis,
    cd: Path,
    root_real: str,
    registry: HandlerRegistry,
    findings: _Findings,
    server: ServerStatus,
    now: datetime | None,
    report: Callable[[int], None] | None = None,
    fork_with_threads: bool = False,
) -> None:
    add = findings.add
    try:
        names = set(os.listdir(cd))
    except OSError as exc:
        add("journal.absent", "error", f"the character folder cannot be listed: {exc.strerror or exc}")
        return

    for fname in sorted(names):
        if TEMP_NEW_RE.fullmatch(fname) or TEMP_OLD_RE.fullmatch(fname):
            add("tempfile.leftover", "info", f"{fname} is left over from a crashed atomic write", file=fname)

    # -- journal ---------------------------------------------------------------------------------
    journal_path = cd / JOURNAL_NAME
    probe = _probe(journal_path, root_real)
    scan = _Scan(EventList(), [])
    journal_ok = False
    if probe.kind == "refused":
        add("input.refused", "warning", f"{JOURNAL_NAME} is {probe.reason}", file=JOURNAL_NAME)
    elif probe.kind != "missing":
        diag.journal.present = True
        try:
            if probe.kind != "file":
                raise IsADirectoryError(21, "Is a directory" if probe.kind == "dir" else probe.reason)
            scan = scan_journal(journal_path, report, fork_with_threads=fork_with_threads)
            journal_ok = True
        except OSError as exc:
            add(
                "journal.absent",
                "error",
                f"{JOURNAL_NAME} exists but cannot be read: {exc.strerror or exc}",
                file=JOURNAL_NAME,
            )
    events = scan.events
    diag.events = events
    diag.defects = scan.defects
    n = len(events)
    diag.journal.lines, diag.journal.events, diag.journal.bytes = scan.lines, n, scan.size

    # -- sentinel -------------------------------------------------------------------------------
    sprobe = _probe(cd / SENTINEL_NAME, root_real)
    if sprobe.kind == "refused":
        add("input.refused", "warning", f"{SENTINEL_NAME} is {sprobe.reason}", file=SENTINEL_NAME)
        sentinel = SentinelRead("missing")
    else:
        sentinel = read_sentinel(cd)
    sindex = -1
    diag.sentinel.state = sentinel.state
    if sentinel.state == "ok" and sentinel.event_id is not None:
        diag.sentinel.event_id = sentinel.event_id
        found = events.index_of(sentinel.event_id)
        if found is None:
            diag.sentinel.state = "unknown_id"
        else:
            sindex = diag.sentinel.index = found
    if sentinel.state == "missing" and n:
        add(
            "sentinel.missing", "warning", f"no {SENTINEL_NAME}: replay starts from the first event", file=SENTINEL_NAME
        )
    elif sentinel.state == "malformed":
        add(
            "sentinel.malformed",
            "warning",
            f"{SENTINEL_NAME} is unusable ({sentinel.message}): replay starts from the first event",
            file=SENTINEL_NAME,
        )
    elif diag.sentinel.state == "unknown_id":
        add(
            "sentinel.unknown_id",
            "warning" if n else "info",
            f"the sentinel names event {sentinel.event_id}, which is not in the journal "
            "(a restored or compacted folder?): replay starts from the first event",
            event_id=sentinel.event_id,
            file=SENTINEL_NAME,
        )

    # -- views and shards --------------------------------------------------------------------------
    folder = _Folder(cd, root_real, findings)
    folder.load_views()
    folder.scan_archives()

    # -- event states ----------------------------------------------------------------------------
    events.fill_states(sindex)
    handled = registry.names()
    if sindex >= 0 and not set(events.types[: sindex + 1]) <= handled:
        for i, etype in enumerate(events.types[: sindex + 1]):
            if etype not in handled:
                what = repr(etype) if etype else "(missing type)"
                message = (
                    f"type {what} has no replay handler, yet the sentinel is past it: a live write moved the "
                    "sentinel over an unapplied tail (the design record's known limitation); it was never applied"
                )
                events.set_state(i, "orphaned", "no_handler", message)
                add("event.orphaned", "error", f"event #{i} ({what}): {message}", event_id=events.event_ids[i])
    _check_archives(events, scan, sindex, folder, findings)
    if journal_ok:
        _check_suspects(events, journal_path, sindex, folder, registry, findings)
        _dry_run_tail(diag, journal_path, sindex, folder, registry, findings)

    pending = n - (sindex + 1)
    if pending > 0:
        first = sindex + 1
        if diag.blocked is not None:
            behind = n - diag.blocked.index - 1
            tail = f"; replay stops at event #{diag.blocked.index} ({diag.blocked.reason})"
            if behind:
                tail += f" and the {behind} after it wait{'s' if behind == 1 else ''} behind it"
        else:
            tail = "; the next startup replays them"
        add(
            "tail.pending",
            "warning",
            f"{pending} event{'s' if pending != 1 else ''} after the sentinel "
            f"{'are' if pending != 1 else 'is'} not applied yet{tail}",
            event_id=events.event_ids[first],
        )

    for d in scan.defects:
        code, severity = _DEFECT_FINDINGS.get(d.kind, ("line.malformed", "warning"))
        add(
            code,
            severity,
            _defect_message(d),
            event_id=d.recovered_event_id or d.event_id,
            file=JOURNAL_NAME,
            line=d.line,
        )

    # -- outbox ------------------------------------------------------------------------------------
    oprobe = _probe(cd / OUTBOX_NAME, root_real)
    if oprobe.kind == "refused":
        add("input.refused", "warning", f"{OUTBOX_NAME} is {oprobe.reason}", file=OUTBOX_NAME)
    elif oprobe.kind != "missing":
        try:
            if oprobe.kind != "file":
                raise IsADirectoryError(21, "Is a directory")
            outbox = parse_outbox((cd / OUTBOX_NAME).read_bytes())
        except OSError as exc:
            add("outbox.pending", "warning", f"{OUTBOX_NAME} cannot be read: {exc.strerror or exc}", file=OUTBOX_NAME)
        else:
            _outbox_findings(diag, outbox, findings)

    # -- compaction ----------------------------------------------------------------------------------
    if journal_ok:
        reason = _compaction_reason(journal_path, scan.lines, now)
        if reason is not None:
            diag.compaction_due = True
            add(
                "compaction.due",
                "info",
                f"the journal is due for compaction: {reason} (nothing compacts it automatically)",
                file=JOURNAL_NAME,
            )

    # -- journal absent / views only -------------------------------------------------------------------
    if not diag.journal.present:
        has_shards = any(folder.archive_dirs.values())
        if SENTINEL_NAME in names:
            add(
                "journal.absent",
                "warning",
                f"no {JOURNAL_NAME}, but {SENTINEL_NAME} exists: the journal was deleted or not copied",
                file=JOURNAL_NAME,
            )
        elif not has_shards and OUTBOX_NAME not in names and names & MANAGED_MEMORY_FILENAMES:
            diag.views_only = True
            add(
                "journal.absent",
                "info",
                "views only: no journal, sentinel or shard archives, as in a cloud-save export "
                "(memory-format §6.1); there is nothing to replay",
                file=JOURNAL_NAME,
            )
        else:
            add(
                "journal.absent",
                "info",
                f"no {JOURNAL_NAME}: this character has not recorded any event",
                file=JOURNAL_NAME,
            )

    # -- server --------------------------------------------------------------------------------------
    if server.state == "running":
        add("server.running", "warning", f"{server.message}; replay must not run now", file=server.lock_path)
    elif server.state == "unknown":
        add("server.running", "info", f"whether the memory server is running is unknown: {server.message}")


def _check_archives(events: EventList, scan: _Scan, sindex: int, folder: _Folder, findings: _Findings) -> None:
    """Archive events: bad shard names anywhere; lost entries and missing shard entries at or
    before the sentinel."""
    targets = []
    names_by_entry: dict[tuple[str, Hashable], list[object]] = {}
    for index, payload in scan.archives:
        target = archive_target(events.types[index], payload)
        if target is None:
            continue
        targets.append((index, target))
        names_by_entry.setdefault((target.archive, target.entry_id), []).append(target.shard)
        if not (isinstance(target.shard, str) and is_shard_name(target.shard)):
            findings.add(
                "shard.bad_name",
                "error",
                f"event #{index} names the shard {target.shard!r}, which is not a shard basename "
                "(YYYY-MM-DD_<8 hex>.json): nothing may be written there",
                event_id=events.event_ids[index],
            )
    for index, target in targets:
        if index > sindex:
            continue  # pending: the dry run of the tail says what replay would do
        in_named = folder.shard_holds(target.archive, target.shard, target.entry_id)
        elsewhere = [
            folder.shard_holds(target.archive, other, target.entry_id)
            for other in names_by_entry[(target.archive, target.entry_id)]
            if other != target.shard
        ]
        if in_named is not False or any(r is not False for r in elsewhere):
            continue  # found in a shard, or a corrupt shard may hold it (shard.corrupt says so)
        eid = events.event_ids[index]
        shard_rel = f"{target.archive}/{target.shard}" if isinstance(target.shard, str) else target.archive
        in_view = folder.has_entry(target.view, target.entity_key, target.entry_id)
        what = target.entry_id if target.entity_key is None else f"{target.entity_key}/{target.entry_id}"
        lost = in_view is False
        findings.add(
            "shard.missing_entry",
            "error" if lost else "warning",
            f"event #{index} archived {what} into {shard_rel}, which does not hold it"
            + ("" if lost else f" (it is still in {target.view})"),
            event_id=eid,
            file=shard_rel if isinstance(target.shard, str) and is_shard_name(target.shard) else None,
        )
        if lost:
            message = (
                f"{what} is in neither {target.view} nor {shard_rel}: the archive stopped between the journal "
                "event and the shard append; only this event's payload still holds the entry"
            )
            events.set_state(index, "orphaned", "archive_entry_lost", message)
            findings.add("event.orphaned", "error", f"event #{index}: {message}", event_id=eid, file=shard_rel)


def _evidence_already_there(folder: _Folder, handler: object, payload: Any) -> bool:
    """A shortcut for the two evidence handlers (most of a journal): True only when running the
    handler could not change anything, because every evidence value of the payload is already on
    the entry it finds (or it finds none). Anything else runs the real handler."""
    if not isinstance(payload, dict):
        return False
    keys: tuple[str, ...]
    if handler is reflection_evidence_updated:
        view, keys = folder.views.get(REFLECTIONS), REFLECTION_EVIDENCE_KEYS
        rid = payload.get("reflection_id")
        if not rid:
            return True
        if not _hashable(rid):
            return False
        matches = folder.reflection_ids.get(rid)
    elif handler is persona_evidence_updated:
        view, keys = folder.views.get(PERSONA), PERSONA_EVIDENCE_KEYS
        key, eid = payload.get("entity_key"), payload.get("entry_id")
        if not key or not eid:
            return True
        if not (isinstance(key, str) and _hashable(eid)):
            return False
        matches = folder.persona_ids.get((key, eid))
    else:
        return False
    if view is None or view.error is not None:
        return False
    if not matches:
        return True
    entry = matches[0]
    for k in keys:
        if k in payload:
            have, want = entry.get(k, _ABSENT), payload[k]
            # Same JSON scalar only (1, 1.0 and True differ; NaN and containers go to the handler).
            if type(have) is not type(want) or type(want) not in _SCALARS or have != want:
                return False
    return True


_ABSENT = object()
_SCALARS = (str, int, float, bool, type(None))


def _check_suspects(
    events: EventList, path: Path, sindex: int, folder: _Folder, registry: HandlerRegistry, findings: _Findings
) -> None:
    """The last event of each entry, at or before the sentinel: would its handler still change
    something in the folder as it is now?"""
    if sindex < 0:
        return
    last = dict(zip(events.entries, range(len(events)), strict=True))
    last.pop(None, None)
    types = events.types
    handled = registry.names()
    candidates = [i for i in last.values() if i <= sindex and types[i] in handled and events.state(i) == "applied"]
    if not candidates:
        return
    payloads = _read_payloads(path, (events.offsets[i] for i in candidates))
    store = ProjectionStore(folder)
    for i in sorted(candidates):
        payload = payloads.get(events.offsets[i])
        handler = registry.get(types[i])
        if payload is None or handler is None:
            continue
        if _evidence_already_there(folder, handler, payload):
            continue
        store.focus(payload)
        eid = events.event_ids[i]
        try:
            changed = run_handler(handler, store, payload)
        except ViewDriftError as exc:
            message = (
                f"applying it now would fail the text-hash check ({exc}): the text was changed outside the "
                "journal since (a heuristic)"
            )
            events.set_state(i, "suspect", "view_differs", message)
            findings.add("event.suspect", "warning", f"event #{i} ({types[i]}): {message}", event_id=eid)
            findings.add("view.drift", "warning", str(exc), event_id=eid, file=PERSONA)
            continue
        except Exception:
            continue  # a corrupt view or shard, or a bad name: their own findings say so
        if changed:
            files = ", ".join(sorted(store.written)) or "the folder"
            message = (
                f"applying it to the folder now would still change {files}: its effect is not visible, or the "
                "entry was changed outside the journal since (a heuristic)"
            )
            events.set_state(i, "suspect", "view_differs", message)
            findings.add(
                "event.suspect",
                "warning",
                f"event #{i} ({types[i]}, {events.entries[i]}): {message}",
                event_id=eid,
                file=files if store.written else None,
            )


def _dry_run_tail(
    diag: CharacterDiagnosis,
    path: Path,
    sindex: int,
    folder: _Folder,
    registry: HandlerRegistry,
    findings: _Findings,
) -> None:
    """Run the pending events' handlers in order, in memory, up to the first that would stop replay."""
    events = diag.events
    assert isinstance(events, EventList)
    n = len(events)
    start = sindex + 1
    if start >= n:
        return
    store = ProjectionStore(folder)
    blocked: int | None = None
    later_updates: dict[str, tuple[int, Any]] = {}
    look_further = False
    for i, ev in _iter_events_from(path, events, start):
        if blocked is not None:
            if ev.type == "persona.entry_updated" and events.entries[i] is not None:
                later_updates[events.entries[i] or ""] = (i, ev.payload)
            continue
        handler = registry.get(ev.type)
        reason: str | None = None
        message = ""
        if handler is None:
            what = repr(ev.type) if ev.type else "(missing type)"
            reason, message = "no_handler", f"no replay handler is registered for {what}"
        else:
            store.focus(ev.payload)
            try:
                run_handler(handler, store, ev.payload)
            except Exception as exc:
                reason, message = block_reason(exc)
        if reason is None:
            continue
        blocked = i
        events.set_state(i, "blocked", reason, message)
        diag.blocked = events[i]
        diag.blocked_message = message
        findings.add(
            "replay.blocked",
            "error",
            f"replay stops at event #{i} ({ev.type or '(missing type)'}): {reason}: {message}",
            event_id=ev.event_id,
        )
        if reason == "view_drift":
            findings.add("view.drift", "error", message, event_id=ev.event_id, file=PERSONA)
        look_further = "persona.entry_updated" in events.types[i + 1 :]
        if not look_further:
            break
    # Pending merges after the stop that will fail the same text-hash check once replay gets there.
    check = ProjectionStore(folder)
    entry_updated = registry.get("persona.entry_updated")
    for i, payload in sorted(later_updates.values(), key=lambda t: t[0]):
        if entry_updated is None:
            break
        check.focus(payload)
        try:
            run_handler(entry_updated, check, payload)
        except ViewDriftError as exc:
            findings.add(
                "view.drift", "warning", f"pending event #{i}: {exc}", event_id=events.event_ids[i], file=PERSONA
            )
        except Exception:
            continue


def _outbox_findings(diag: CharacterDiagnosis, outbox: OutboxRead, findings: _Findings) -> None:
    diag.outbox = [*outbox.pending, *outbox.dead_letters]

    def summary(ops: list[OutboxOp]) -> str:
        counts: dict[str, int] = {}
        for op in ops:
            counts[op.type or "(no type)"] = counts.get(op.type or "(no type)", 0) + 1
        return ", ".join(f"{t} ×{c}" for t, c in sorted(counts.items()))

    if outbox.pending:
        k = len(outbox.pending)
        doomed = sum(1 for op in outbox.pending if op.attempts >= MEMORY_LIVENESS_MAX_ATTEMPTS)
        extra = (
            f"; {doomed} already failed {MEMORY_LIVENESS_MAX_ATTEMPTS} times and will be abandoned unrun"
            if doomed
            else ""
        )
        findings.add(
            "outbox.pending",
            "info",
            f"{k} outbox operation{'s' if k != 1 else ''} pending ({summary(outbox.pending)}): "
            f"the next startup runs them{extra}",
            file=OUTBOX_NAME,
        )
    if outbox.dead_letters:
        k = len(outbox.dead_letters)
        findings.add(
            "outbox.dead_letter",
            "warning",
            f"{k} outbox operation{'s' if k != 1 else ''} abandoned after {MEMORY_LIVENESS_MAX_ATTEMPTS} failed "
            f"attempts ({summary(outbox.dead_letters)}): their work was never done",
            file=OUTBOX_NAME,
        )


def _compaction_reason(path: Path, lines: int, now: datetime | None) -> str | None:
    """memory-format §4.4: ≥ 10,000 lines, or the first line's ``ts`` ≥ 90 days old."""
    if lines >= COMPACT_LINES_THRESHOLD:
        return f"{lines:,} lines (threshold {COMPACT_LINES_THRESHOLD:,})"
    try:
        first = _first_line(path)
        obj = parse_json_bytes(first.strip().removeprefix(b"\xef\xbb\xbf"))
        ts = obj.get("ts") if isinstance(obj, dict) else None
        if not isinstance(ts, str):
            return None
        age = ((now or _now()) - datetime.fromisoformat(ts)).total_seconds() / 86400
    except (OSError, ValueError, TypeError):
        return None  # a corrupt first line disables the age check, as upstream
    if age >= COMPACT_DAYS_THRESHOLD:
        return f"the oldest event is {age:.0f} days old (threshold {COMPACT_DAYS_THRESHOLD})"
    return None


# -- the input: a memory root, a character folder, or a zip export -----------------------------------


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """What a zip export may expand to before it is refused as a zip bomb.

    Attributes:
        max_total_bytes: uncompressed bytes in all (declared sizes are checked first, then the
            bytes actually written are counted, so a lying header does not help).
        max_members: entries in the archive.
    """

    max_total_bytes: int = 2 << 30
    max_members: int = 100_000


class _ZipBombError(Exception):
    pass


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member must not be extracted, or ``None``."""
    name = info.filename
    if "\x00" in name:
        return "a NUL byte in its name"
    mode = info.external_attr >> 16
    if mode and stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "it is not a regular file or folder"
    norm = name.replace("\\", "/")
    # A colon in the first part is a drive letter ("C:x", "C:/x") or a Windows stream: never a folder.
    if norm.startswith("/") or re.match(r"[A-Za-z]:", norm) or ":" in norm.split("/")[0]:
        return "an absolute path"
    if ".." in norm.split("/"):
        return "'..' would put it outside the extraction folder"
    if info.flag_bits & 0x1:
        return "it is encrypted"
    return None


def _member_parts(info: zipfile.ZipInfo) -> list[str]:
    return [p for p in info.filename.replace("\\", "/").split("/") if p not in ("", ".")]


def extract_zip(
    zip_path: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    limits: ZipLimits | None = None,
    *,
    strict: bool = False,
    private: bool = True,
) -> list[Finding]:
    """Extract a zip export into ``dest`` safely: the one extractor of ``check`` and of replay.

    Refused members: a NUL byte, a link, a special file (FIFO, device, socket), an absolute path
    or drive letter, ``..``, encryption, a second member of the same name, a member whose folder
    would resolve outside ``dest``, a member larger than its header declares. :class:`ZipLimits`
    bounds the member count and the uncompressed bytes (declared sizes first, then the bytes
    actually written).

    Args:
        zip_path: the archive.
        dest: the folder to fill (created when missing).
        limits: the zip-bomb bounds (default :class:`ZipLimits`).
        strict: refuse the whole archive at the first refused member, instead of skipping the
            member and reporting it. The members' names are all checked before anything is
            written.
        private: create folders ``0o700`` and files ``0o600`` (a private temp copy); otherwise
            the umask's defaults.

    Returns:
        One ``input.refused`` finding per skipped member (always empty when ``strict``).

    Raises:
        UnreadableInputError: not a readable zip, over a limit, or (``strict``) a refused member.
    """
    limits = ZipLimits() if limits is None else limits
    dest = Path(dest)
    dir_mode, file_mode = (0o700, 0o600) if private else (0o777, 0o666)
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UnreadableInputError(f"{zip_path}: not a readable zip file: {exc}") from exc
    refused: list[Finding] = []

    def refuse(name: str, why: str) -> None:
        if strict:
            raise UnreadableInputError(f"{zip_path}: zip member {name!r} refused: {why}")
        refused.append(Finding("input.refused", "error", f"zip member {name!r} refused: {why}", file=name))

    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise UnreadableInputError(
                f"{zip_path}: {len(infos):,} members, over the limit of {limits.max_members:,}: refused as a zip bomb"
            )
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_total_bytes:
            raise UnreadableInputError(
                f"{zip_path}: expands to {declared:,} bytes, over the limit of {limits.max_total_bytes:,}: "
                "refused as a zip bomb"
            )
        if strict:  # every name is judged before the first byte is written
            names: set[str] = set()
            for info in infos:
                problem = _member_problem(info)
                if problem is not None:
                    refuse(info.filename, problem)
                key = "/".join(_member_parts(info))
                if key and not info.is_dir():
                    if key in names:
                        refuse(info.filename, "a second member with the same name")
                    names.add(key)
        dest_real = os.path.realpath(dest)
        seen: set[str] = set()
        written = 0
        for info in infos:
            problem = _member_problem(info)
            if problem is not None:
                refuse(info.filename, problem)
                continue
            parts = _member_parts(info)
            if not parts:
                continue
            key = "/".join(parts)
            target = dest.joinpath(*parts)
            if info.is_dir():
                try:
                    target.mkdir(parents=True, exist_ok=True, mode=dir_mode)
                except OSError as exc:
                    refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            if key in seen:
                refuse(info.filename, "a second member with the same name")
                continue
            seen.add(key)
            try:
                target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
            except OSError as exc:
                refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            if not _within(os.path.realpath(target.parent), dest_real):
                refuse(info.filename, "it would land outside the extraction folder")
                continue
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), file_mode)
            except OSError as exc:
                refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            member_written = 0
            try:
                with zf.open(info) as src, os.fdopen(fd, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        member_written += len(chunk)
                        if written > limits.max_total_bytes:
                            raise _ZipBombError
                        if member_written > info.file_size:
                            raise ValueError("it is larger than its header declares")
                        dst.write(chunk)
            except _ZipBombError:
                raise UnreadableInputError(
                    f"{zip_path}: expands beyond the limit of {limits.max_total_bytes:,} bytes: refused as a zip bomb"
                ) from None
            except Exception as exc:  # damaged member (CRC, truncated, unsupported method): skip it
                with contextlib.suppress(OSError):
                    target.unlink()
                refuse(info.filename, f"cannot be extracted: {exc}")
    return refused


def _is_character_folder(path: Path) -> bool:
    try:
        return bool(CHARACTER_MARKERS & set(os.listdir(path)))
    except OSError:
        return False


_IGNORED_ROOT_NAMES = frozenset({"__MACOSX"})


def _descend(folder: Path) -> Path:
    """In an extracted zip, go down through single wrapper folders (``export/memory/...``)."""
    cur = folder
    for _ in range(16):
        if _is_character_folder(cur):
            break
        try:
            kids = [e for e in os.scandir(cur) if not e.name.startswith(".") and e.name not in _IGNORED_ROOT_NAMES]
        except OSError:
            break
        dirs = [e for e in kids if e.is_dir(follow_symlinks=False)]
        if len(dirs) == 1 and len(kids) == 1:
            cur = Path(dirs[0].path)
            continue
        break
    return cur


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    path: Path
    refusal: Finding | None = None


def _characters_in(root: Path, root_real: str) -> list[_Entry]:
    """Character folders of a memory root: every sub-folder but dot-folders; files are ignored.

    A cloud-save staging layout ``<name>/memory/<files>`` counts as character ``<name>``.
    Symbolic links to folders are not followed: they are listed with an ``input.refused`` finding.
    """
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        raise UnreadableInputError(f"{root}: cannot be listed: {exc.strerror or exc}") from exc
    out: list[_Entry] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _IGNORED_ROOT_NAMES:
            continue
        path = Path(entry.path)
        if entry.is_symlink():
            if not path.is_dir():
                continue
            inside = _within(os.path.realpath(path), root_real)
            why = (
                "a symbolic link to another folder of the memory root; not followed (that folder is checked under "
                "its own name)"
                if inside
                else "a symbolic link pointing outside the memory root; not followed"
            )
            out.append(
                _Entry(
                    entry.name,
                    path,
                    Finding("input.refused", "info" if inside else "warning", f"{entry.name} is {why}"),
                )
            )
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        nested = path / "memory"
        if (
            not _is_character_folder(path)
            and nested.is_dir()
            and not nested.is_symlink()
            and _is_character_folder(nested)
        ):
            out.append(_Entry(entry.name, nested))
        else:
            out.append(_Entry(entry.name, path))
    return out


def diagnose_path(
    path: str | os.PathLike[str],
    *,
    character: str | None = None,
    registry: HandlerRegistry | None = None,
    server: ServerStatus | None = None,
    now: datetime | None = None,
    zip_limits: ZipLimits | None = None,
    progress: Callable[[int, int], None] | None = None,
    fork_with_threads: bool = False,
) -> Diagnosis:
    """Diagnose a memory root, one character folder, or a ``.zip`` export of either.

    ``progress(bytes_read, total_bytes)`` follows the journal scans of all characters together
    (never backwards); it may raise to cancel, and the exception propagates (a zip's extracted copy
    is removed first). ``fork_with_threads``: see :func:`scan_journal`.

    A folder holding memory files (``events.ndjson``, ``persona.json``, …) is one character;
    any other folder is a memory root whose sub-folders are characters (files and dot-folders
    ignored). A zip is extracted to a private temp folder (see :class:`Diagnosis` for its
    lifetime); members that would land outside it, links and special files are refused with an
    ``input.refused`` finding; :class:`ZipLimits` stops a zip bomb.

    Raises:
        UnreadableInputError: PATH does not exist or cannot be read, is neither a folder nor a
            zip, or the zip is corrupt or too big.
        UnknownCharacterError: ``character`` is not among PATH's characters.
    """
    given = os.fspath(path)
    p = Path(given)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UnreadableInputError(f"{given}: no such file or folder") from None
    except OSError as exc:
        raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
    probe = server if server is not None else server_status()
    if stat.S_ISDIR(st.st_mode):
        try:
            os.listdir(p)
        except OSError as exc:
            raise UnreadableInputError(f"{given}: cannot be listed: {exc.strerror or exc}") from exc
        diag = Diagnosis(given, str(p.absolute()), server=probe)
        base = p
        zip_name = None
    elif stat.S_ISREG(st.st_mode):
        try:
            is_zip = zipfile.is_zipfile(p)
        except OSError as exc:
            raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
        if not is_zip:
            raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")
        temp = _TempRoot(tempfile.mkdtemp(prefix="memory-inspector-zip-"))
        try:
            refused = extract_zip(p, temp.path, zip_limits)
        except BaseException:
            temp.close()
            raise
        diag = Diagnosis(given, temp.path, is_zip=True, findings=refused, server=probe, _temp=temp)
        base = _descend(Path(temp.path))
        zip_name = p.stem
    else:
        raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")

    try:
        _fill(diag, base, zip_name, character, registry, probe, now, progress, fork_with_threads)
    except BaseException:
        diag.close()
        raise
    return diag


def _fill(
    diag: Diagnosis,
    base: Path,
    zip_name: str | None,
    character: str | None,
    registry: HandlerRegistry | None,
    server: ServerStatus,
    now: datetime | None,
    progress: Callable[[int, int], None] | None = None,
    fork_with_threads: bool = False,
) -> None:
    root_real = os.path.realpath(diag.root if diag.is_zip else base)
    if _is_character_folder(base):
        diag.kind = "character"
        diag.memory_root = str(base.parent.absolute())
        name = base.name
        if diag.is_zip and Path(diag.root) == base:
            name = zip_name or name
        elif base.name == "memory" and (
            (base.parent / "profile.json").exists() or (base.parent / "meta.json").exists()
        ):
            name = base.parent.name  # cloud-save staging: <name>/memory/<files>
        entries = [_Entry(name, base)]
    else:
        diag.kind = "root"
        diag.memory_root = str(base.absolute())
        entries = _characters_in(base, root_real)
    if character is not None:
        entries = [e for e in entries if e.name == character]
        if not entries:
            raise UnknownCharacterError(f"{diag.path}: no character named {character!r}")
    sizes = [0 if e.refusal is not None else _journal_size(e.path) for e in entries]
    total = sum(sizes)
    shown = 0
    before = 0

    def overall(done: int) -> None:
        nonlocal shown
        shown = max(shown, min(done, total))  # a re-read (duplicate ids) never moves it back
        if progress is not None:
            progress(shown, total)

    def from_character(at: int) -> Callable[[int, int], None] | None:
        return None if progress is None else (lambda done, _total: overall(at + done))

    overall(0)
    for entry, size in zip(entries, sizes, strict=True):
        if entry.refusal is not None:
            cdiag = CharacterDiagnosis(entry.name, str(entry.path.absolute()))
            cdiag.findings = [entry.refusal]
        else:
            cdiag = diagnose_character(
                entry.path,
                registry=registry,
                server=server,
                now=now,
                root=root_real,
                name=entry.name,
                progress=from_character(before),
                fork_with_threads=fork_with_threads,
            )
        before += size
        overall(before)
        if diag.findings:
            cdiag.findings = [*cdiag.findings, *diag.findings]
        diag.characters.append(cdiag)
