"""The memory server's own rules where they differ from this library's: one function per deviation.

The diagnosis predicts what the memory server's next start does to a folder
(:mod:`journal.diagnosis.server`) by running *our* handlers with these deviations, each citing
the section of the format notes (``shared/spec/memory-format.md``) it implements. Everything else
(the handlers' effects, the sentinel's fallbacks, where a handler raises) is the same rule for both
actors and has its one home in this library. Nothing here writes anything.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import msgspec

from journal import fs
from journal.codec import loads_exact
from journal.events import Event, is_unicode
from journal.sentinel import SentinelInfo, locate_sentinel
from journal.shards import shard_entry_ids
from journal.views import SentinelRead, undecodable_at

#: Where the server's list of characters lives, relative to the memory root (§9.1).
CHARACTERS_RELPATH = os.path.join("..", "config", "characters.json")

#: The key of ``characters.json`` whose object's keys are the characters (§9.1).
CHARACTERS_KEY = "猫娘"

#: The characters of the server's default ``characters.json``, which it uses when its file cannot be
#: read or is not a dict (§9.8 item 10; ``config/character_defaults.py:53-54``).
DEFAULT_CHARACTERS = frozenset({"test"})

#: A ``characters.json`` larger than this is not read (it is a small config file).
_CHARACTERS_MAX = 16 << 20

_USES_DEFAULTS = "the memory server uses its default characters instead, which list only 'test'"


# -- §9.1: which characters the server reconciles ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class CharacterList:
    """``characters.json`` as the server reads it.

    Attributes:
        path: the file (absolute), or ``None`` when none was found or given.
        names: the characters its start ensures and reconciles (``None``: not known, because no
            file was found or it was not read).
        error: why the file is not used as it is, in words (also when ``names`` is known: an
            unreadable file gives the defaults' ``test``, a dict without a ``猫娘`` object none).
        document: the parsed file, when it is a dict (persona ensure's cards come from it).
        defaults: the server uses its localized default characters (the file cannot be read or
            is not a dict), whose content is not known here.
    """

    path: str | None = None
    names: frozenset[str] | None = None
    error: str | None = None
    document: Any = field(default=None, compare=False, repr=False)
    defaults: bool = False


def find_characters_file(memory_root: str | os.PathLike[str]) -> str | None:
    """``<app_docs>/config/characters.json`` beside the memory root ``<app_docs>/memory`` (§9.1)."""
    candidate = os.path.normpath(os.path.join(os.path.abspath(memory_root), CHARACTERS_RELPATH))
    return candidate if os.path.lexists(candidate) else None


def read_characters(path: str | os.PathLike[str]) -> CharacterList:
    """The characters the server's start ensures and reconciles; never raises (§9.1, §9.8 item 10).

    The keys of the ``猫娘`` object (``runtime.py:705-708``). A file the server cannot read (any
    ``open``/``json.load`` error: not JSON, not UTF-8, a folder, no permission) or whose top
    level is not a dict makes it use its default characters, which list only ``test``
    (``utils/config_manager/characters.py:80-99``). A dict without a ``猫娘`` object lists none
    (its ``.keys()`` fails or is empty, and the start goes on without characters). A FIFO, socket
    or device, or a file too big, is not read: ``names`` is ``None``.
    """
    p = os.path.abspath(path)

    def defaults(why: str) -> CharacterList:
        return CharacterList(p, DEFAULT_CHARACTERS, f"{why}: {_USES_DEFAULTS}", defaults=True)

    try:
        with fs.open_regular(p) as fh:
            data = fh.read(_CHARACTERS_MAX + 1)
    except fs.NotRegularFileError as exc:
        return CharacterList(p, None, f"is not read: {exc.strerror or exc} (the server's open of a FIFO blocks)")
    except OSError as exc:
        return defaults(f"cannot be read ({exc.strerror or exc})")
    if len(data) > _CHARACTERS_MAX:
        return CharacterList(p, None, f"is larger than {_CHARACTERS_MAX >> 20} MiB: not read")
    try:
        doc = loads_exact(data)
    except ValueError as exc:
        return defaults(f"is not JSON ({exc})")
    if not isinstance(doc, dict):
        kind = {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(doc), "number")
        return defaults(f"is a JSON {kind}, not an object")
    section = doc.get(CHARACTERS_KEY)
    if not isinstance(section, dict):
        return CharacterList(
            p, frozenset(), f"has no {CHARACTERS_KEY!r} object: the memory server lists no character", doc
        )
    return CharacterList(p, frozenset(k for k in section if isinstance(k, str)), None, doc)


def reconciles(characters: CharacterList, name: str) -> bool | None:
    """Whether the server's start reconciles character ``name`` (``None``: not known) (§4.2 step 5, §9.1)."""
    return None if characters.names is None else name in characters.names


# -- §4.1 step 2, §9.3: the server's reader ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerRecord:
    """A record the server's reader yields that ours does not replay: a later copy of an event id
    (``duplicate``), or a line ours does not take as an event at all (``only_server``: an object
    whose ``event_id`` is null, or not valid Unicode).

    Attributes:
        event_id: its id (``None`` for an ``only_server`` record: read it again for its id).
        offset: the byte offset of its line (for reading its payload again).
        line: the 1-based line.
        kind: ``duplicate`` or ``only_server``.
    """

    event_id: str | None
    offset: int
    line: int
    kind: str = "duplicate"


@dataclass(frozen=True, slots=True)
class ServerReader:
    """How the server's reader's records differ from our reader's events (§4.1 step 2, §9.3).

    Attributes:
        hidden_lines: lines where our reader recovers an event the server cannot see.
        duplicates: records the server replays that ours does not, in file order.
    """

    hidden_lines: frozenset[int] = frozenset()
    duplicates: tuple[ServerRecord, ...] = ()


def server_reader(defects: Iterable[Any], bom_lines: Iterable[int] = ()) -> ServerReader:
    """The server's reader, as the difference from ours, given our reader's located defects and
    the lines whose event follows a UTF-8 BOM (§4.1 step 2, §9.3, §9.8.5).

    The server parses each stripped line as a whole and skips what does not parse, so an event
    our reader recovers from a glued line is invisible to it, and so is one after a BOM
    (``json.loads`` rejects it; ``str.strip`` keeps it). A later copy of an event id is a record
    like any other to it: it replays it again; so is an object whose ``event_id`` is null or not
    valid Unicode (it checks only that the key is there, ``memory/event_log.py:300``), which ours
    does not take as an event. Lines neither reader can parse are skipped by both.
    """
    hidden: set[int] = set(bom_lines)
    extra: list[ServerRecord] = []
    for d in defects:
        if d.kind == "glued" and d.recovered_event_id is not None:
            hidden.add(d.line)
        elif d.kind == "duplicate_event_id" and d.event_id is not None:
            extra.append(ServerRecord(d.event_id, d.offset, d.line))
        elif d.kind == "missing_event_id" and getattr(d, "server_reads", False):
            extra.append(ServerRecord(None, d.offset, d.line, "only_server"))
    extra.sort(key=lambda r: r.offset)
    return ServerReader(frozenset(hidden), tuple(extra))


def server_reads_journal(unreadable: str | None) -> bool:
    """Whether what the server's reader finds in ``events.ndjson`` can be predicted, given why our
    read of it failed (``None``: it did not, or there is no journal). A missing journal is no records
    to the server (``_read_all_records`` returns ``[]`` when the file does not exist,
    ``memory/event_log.py:284-285``; §4.1 step 2), so its start goes on as for an empty one: persona
    ensure, a reconcile that replays nothing, then the migrations after it (§9.8.7). A journal that
    is there but cannot be read, or is not followed, is not predicted past persona ensure."""
    return unreadable is None


class EventPositions(Protocol):
    """Where our reader's events are (what :class:`journal.diagnosis.EventList` offers)."""

    def __len__(self) -> int: ...
    def index_of(self, event_id: str) -> int | None: ...
    def line(self, i: int) -> int: ...
    def offset(self, i: int) -> int: ...


# -- §9.8.1-2: bytes its reconcile cannot decode ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Undecodable:
    """Where the server's reconcile of a character raises on bytes that are not UTF-8.

    Attributes:
        file: ``events.ndjson`` or ``events_applied.json``.
        offset: the first such byte's offset in the file.
        line: its 1-based line (the journal's), or ``None``.
    """

    file: str
    offset: int
    line: int | None = None


def sentinel_undecodable(sentinel: SentinelRead) -> Undecodable | None:
    """Whether the server's read of ``events_applied.json`` raises on bytes that are not UTF-8
    (§3.2, §9.8.2: it catches only ``JSONDecodeError``/``OSError``): then its reconcile replays
    nothing for the character."""
    if sentinel.undecodable is None:
        return None
    return Undecodable("events_applied.json", sentinel.undecodable)


def server_records_at(path: str | os.PathLike[str], records: Iterable[ServerRecord]) -> dict[int, Event]:
    """The ``only_server`` records, read again from their lines as the server's reader parses them
    (§4.1 step 2: the stripped line as JSON, an object with an ``event_id`` key; ``payload or {}``),
    by offset; a line that no longer parses so is left out.

    Raises:
        OSError: the journal cannot be read again.
    """
    out: dict[int, Event] = {}
    with fs.open_regular(path) as fh:
        for r in records:
            fh.seek(r.offset)
            raw = fh.readline().strip()
            try:
                obj = loads_exact(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict) or "event_id" not in obj:
                continue
            eid, etype, ts = obj.get("event_id"), obj.get("type"), obj.get("ts")
            payload = obj.get("payload") or {}
            try:
                body = msgspec.Raw(json.dumps(payload).encode("ascii"))  # lone surrogates stay escaped
            except (TypeError, ValueError, RecursionError):
                continue
            out[r.offset] = Event(
                eid if isinstance(eid, str) else "",
                cast(Any, etype if isinstance(etype, str) else ""),
                ts if isinstance(ts, str) else "",
                body,
                r.line,
                r.offset,
            )
    return out


@dataclass(frozen=True, slots=True)
class SentinelAfter:
    """What ``events_applied.json`` names once the start is done (§3.2, who writes it).

    Attributes:
        by: ``none`` (nothing writes it: the file stays as it is), ``replay`` (its replay wrote it
            after each record it processed, last after ``event_id``'s) or ``live_write`` (a live
            write after reconcile, the evidence migration's, set it to the id of the event it
            appended: a new uuid4, not known here).
        event_id: the id it names, for ``replay`` (``None``: that record's id is null).
    """

    by: str = "none"
    event_id: str | None = None


def sentinel_after(processed: int, last_id: str | None, live_writes: int) -> SentinelAfter:
    """The sentinel after the start (§3.2): its replay advances it after each of the ``processed``
    records whose handler returned (``last_id``: the last one's; a pass over a corrupt shard
    included), and every live write after reconcile then sets it to the event it appended,
    unconditionally (§4.3, §9.8.7), whatever replay left."""
    if live_writes:
        return SentinelAfter("live_write")
    if processed:
        return SentinelAfter("replay", last_id)
    return SentinelAfter()


def server_sentinel_writable(event_id: str) -> bool:
    """Whether the server can write a sentinel naming ``event_id`` after applying its record: it
    encodes the file as UTF-8, so an id holding a lone surrogate fails the write
    (``SentinelAdvanceError``) after the handler ran, and its replay stops there (§4.1 step 5)."""
    return is_unicode(event_id)


# -- §4.5 (correction): the sweep of its atomic writes ------------------------------------------------

#: A temp file its sweep deletes (``utils/file_utils.py:528-529``): any ``.nkatmp…tmp`` name without
#: a dot in the middle, ours and every mid-2026 or newer server's.
_SWEPT_RE = re.compile(r"\.nkatmp[^.]+\.tmp")

#: Its sweep deletes such a file once it is older than this (``utils/file_utils.py:570-571``).
SWEEP_AGE_SECONDS = 86_400


def swept_temp_files(folder: str | os.PathLike[str], now: float) -> list[str]:
    r"""The temp files the server's first atomic write into ``folder`` deletes (§4.5 correction):
    every ``atomic_write_text`` first sweeps the target's folder of names matching
    ``^\.nkatmp[^.]+\.tmp$`` older than 24 h (by ``mtime``, at time ``now``, seconds since the
    epoch). Regular files only; nothing here deletes anything. Names in folder order."""
    out: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if _SWEPT_RE.fullmatch(entry.name) is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and now - st.st_mtime > SWEEP_AGE_SECONDS:
            out.append(entry.name)
    return out


# -- §9.8.9: its handlers compare with != -------------------------------------------------------------


def server_assigns(before: Any, after: Any) -> Any:
    """The part of a view the server's handler leaves, given ``before`` (what it loaded) and
    ``after`` (what our handler made of it): §9.8.9, its handlers assign each payload field only
    where the entry's value ``!=`` the payload's (``memory/evidence_handlers.py:104``, ``:155``,
    ``:214``, ``:277``), so a field Python finds equal (``0`` in the view against ``0.0`` in the
    event, ``1`` against ``True``) keeps the view's value, even when another field of the same
    event changes and the view is saved. Returns ``before`` itself when no field changes for its
    ``!=`` (then it saves nothing). Our handlers compare JSON values strictly
    (:func:`journal.codec.same_json`), so our replay does rewrite such a field.

    The views are walked down to their entries (a reflections list, the persona's sections and
    their ``facts``); an entry's fields are compared whole, as the server does."""
    if before == after:
        return before
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [server_assigns(b, a) for b, a in zip(before, after, strict=True)]
    if isinstance(before, dict) and isinstance(after, dict):
        if "facts" not in after and isinstance(after.get("id"), str):  # an entry: its fields, whole
            return {k: before[k] if k in before and before[k] == v else v for k, v in after.items()}
        return {k: server_assigns(before[k], v) if k in before else v for k, v in after.items()}
    return after


def server_reads_sentinel(sentinel: SentinelRead) -> bool:
    """Whether what the server's read of the sentinel finds can be known (§3.2).

    The server opens ``events_applied.json`` with a plain ``open()``: a FIFO blocks that open
    until a writer comes (the start waits for every character's reconcile, so it hangs), a link
    is followed wherever it leads, and a device is read as it is. Where our reader refuses the file
    (``refused``: not a regular file, or a link leading out of the memory root), the server's next
    start is therefore not predicted: its sentinel is ``unknown``."""
    return sentinel.state != "refused"


def server_sentinel(
    sentinel: SentinelRead, ours: SentinelInfo, events: EventPositions, reader: ServerReader
) -> tuple[SentinelInfo, int, int]:
    """The sentinel as the server's reader finds it (§3.2, §9.3): our one rule
    (:func:`journal.sentinel.locate_sentinel`) over the records the server sees. Returns it, our
    index its replay starts from, and the byte offset its replay starts after.

    The first record with the id wins. When our reader's first match is a line the server cannot
    see (glued), the server finds the id only in a later copy, if there is one; else it replays
    the whole journal."""
    if ours.state == "ok" and ours.index is not None and events.line(ours.index) not in reader.hidden_lines:
        info = ours  # our reader found it, and the server's sees that line: the same first match
    else:

        def index_of(event_id: str) -> int | None:
            i = events.index_of(event_id)
            return i if i is not None and events.line(i) not in reader.hidden_lines else None

        info = locate_sentinel(sentinel, index_of)
    if info.state == "ok" and info.index is not None:
        return info, info.index + 1, events.offset(info.index) + 1
    dup = next((r for r in reader.duplicates if r.event_id == info.event_id), None)
    if info.state == "unknown_id" and dup is not None:
        nxt = next((i for i in range(len(events)) if events.offset(i) > dup.offset), len(events))
        return SentinelInfo("ok", info.event_id, None), nxt, dup.offset + 1
    return info, 0, 0


# -- §3.5 (d)/(e), §9.7: archive handlers without our checks ------------------------------------------


def server_outcome(reason: str) -> str:
    """What the server's replay does where ours stops for ``reason`` (§3.5 (d), §9.7):

    - ``pass``: a corrupt target shard (``corrupt_shard``). Its handler reports "no change"
      without touching the view, and the sentinel moves past the event. Ours raises and pauses.
    - ``write``: a shard basename we refuse (``bad_shard_name``). It writes the shard where the
      name leads (:func:`server_shard_path`), then removes the entry from the view.
    - ``stop``: every other reason; the server pauses there too (§4.1 steps 3 and 4).
    """
    if reason == "corrupt_shard":
        return "pass"
    if reason == "bad_shard_name":
        return "write"
    return "stop"


def server_shard_path(char_dir: str | os.PathLike[str], archive: str, basename: str) -> str:
    """Where the server writes the shard a payload names: ``<char>/<archive>/<basename>``, the
    basename unvalidated (§3.5 (d), §9.7), as the path the OS resolves."""
    return os.path.normpath(os.path.join(os.path.abspath(char_dir), archive, basename))


#: A file a hostile basename leads to is read (to say what the server does with it) only up to this size.
_SHARD_READ_MAX = 64 << 20


def server_shard_state(char_dir: str | os.PathLike[str], path: str, entry_id: object) -> tuple[str, str]:
    """What the server's archive step finds at ``path`` (§3.5 (d) step 1), and the detail in words:

    - ``missing``: it creates the file (and its folder);
    - ``holds``: the id is there, it writes nothing;
    - ``list``: it appends the entry;
    - ``corrupt``: not JSON, or not a list: it reports no change, keeps the view, and moves on;
    - ``undecodable``: bytes that are not UTF-8: its read raises ``UnicodeDecodeError``, which its
      archive step does not turn into "corrupt" (it catches only ``JSONDecodeError``/``OSError``),
      so its handler raises and its replay stops there (§9.8.4);
    - ``fails``: the path cannot be opened or written at all (a NUL byte, a name too long, a folder):
      its handler raises and its replay stops there (not verified against the server's code);
    - ``unknown``: outside the character folder, or too big: not read, for safety.
    """
    if "\x00" in path:
        return "fails", "the name holds a NUL byte, which no file name can"
    if outside(char_dir, path):
        return "unknown", "outside the character folder: not read"
    try:
        with fs.open_regular(path) as fh:
            data = fh.read(_SHARD_READ_MAX + 1)
    except FileNotFoundError:
        return "missing", ""
    except (OSError, ValueError) as exc:
        return "fails", getattr(exc, "strerror", None) or str(exc)
    if len(data) > _SHARD_READ_MAX:
        return "unknown", "too big to read"
    bad = undecodable_at(data)
    if bad is not None:
        return "undecodable", f"not UTF-8 at byte {bad}"
    try:
        value = loads_exact(data)
    except ValueError:
        return "corrupt", "not JSON"
    if not isinstance(value, list):
        return "corrupt", f"a JSON {type(value).__name__}, not a list"
    return ("holds" if entry_id in shard_entry_ids(value) else "list"), ""


def shard_write_place(char_dir: str | os.PathLike[str], archive: str, path: str) -> str:
    """Where a shard write the server makes for a payload basename lands (§9.7): ``outside`` the
    character folder, ``folder`` (inside it, but out of the shard folder: over a view, say), or
    ``shard_folder`` (in the shard folder, under a name no shard reader reads)."""
    if outside(char_dir, path):
        return "outside"
    if outside(os.path.join(os.path.abspath(char_dir), archive), path):
        return "folder"
    return "shard_folder"


def outside(char_dir: str | os.PathLike[str], path: str) -> bool:
    """Whether ``path`` (normalised) lies outside the character folder."""
    base = os.path.normpath(os.path.abspath(char_dir))
    return os.path.commonpath([base, path]) != base


def without_shard(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload our handler runs for the server's view step of an archive event whose shard name
    we refuse: the server writes the shard (recorded by :func:`server_shard_path`) and then removes
    the entry from the view, which is what our handler does for an event without a shard (§3.5 (d))."""
    return {k: v for k, v in payload.items() if k != "archive_shard_path"}


# -- §3.1, §4.3, §9.6, §9.7: the server's live writes -------------------------------------------------


def append_glues(torn_tail: bool) -> bool:
    """The server's next append is glued onto an unterminated last line, and both are lost as one
    bad line (§3.1, §9.7). Ours writes a newline first."""
    return torn_tail


def live_write_orphans(unapplied_after_start: int) -> bool:
    """The server's next live write moves the sentinel to the journal end unconditionally, so every
    event its start left unapplied is orphaned (§4.3, §9.6)."""
    return unapplied_after_start > 0


def relpath_or_abs(char_dir: str | os.PathLike[str], path: str) -> str:
    """``path`` relative to the character folder when inside it, else absolute."""
    if outside(char_dir, path):
        return path
    return Path(os.path.relpath(path, os.path.abspath(char_dir))).as_posix()
