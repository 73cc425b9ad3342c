"""EventLog: durable append, ``record_and_save`` (and its async twin), archives, compaction."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson

from journal import fs, handlers
from journal.errors import InvalidCharacterError, UnappliedTailError, UnknownEventTypeError
from journal.events import (
    JOURNAL_NAME,
    REPLAYABLE_EVENT_TYPES,
    Event,
    check_event_type,
    encode_event,
    make_event,
    new_event,
    now_iso,
)
from journal.handlers import _encode_entry
from journal.reader import JournalRead, last_event_id, read_journal
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, append_entries, choose_shard, ensure_shard
from journal.views import (
    PERSONA,
    REFLECTIONS,
    VIEW_TYPES,
    SentinelRead,
    copy_json,
    load_view,
    read_sentinel,
    save_view,
    write_sentinel,
)

COMPACT_LINES_THRESHOLD = 10_000
COMPACT_DAYS_THRESHOLD = 90

Mutator = Callable[[Any], Any]


def check_character_name(name: object) -> str:
    """Return ``name`` if it can be a character folder name (Unicode and dots allowed).

    Raises:
        InvalidCharacterError: empty, ``.``/``..``, or containing a path separator or NUL.
    """
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or any(c in name for c in ("/", "\\", "\0"))
        or os.path.isabs(name)
    ):
        raise InvalidCharacterError(f"invalid character name {name!r}")
    return name


@dataclass(frozen=True, slots=True)
class CompactionStatus:
    """Whether a journal is due for compaction (memory-format §4.4).

    Attributes:
        due: ``lines >= 10,000`` or the first line's ``ts`` is at least 90 days old.
        lines: physical lines, blank and corrupt ones included.
        oldest_ts: the ``ts`` of the first line, when it parses.
        age_days: age of ``oldest_ts`` in days, when known.
        reason: why it is due, in words (``None`` when not due).
    """

    due: bool
    lines: int
    oldest_ts: str | None
    age_days: float | None
    reason: str | None


def compaction_status(journal_path: str | os.PathLike[str], now: datetime | None = None) -> CompactionStatus:
    """Count lines and read the first line's ``ts``; never raises on content."""
    lines = 0
    first: bytes | None = None
    last_byte = b"\n"
    try:
        with open(journal_path, "rb") as fh:
            while chunk := fh.read(8 << 20):
                if first is None:  # the first line, even when it is blank: never a later chunk's
                    first = chunk.split(b"\n", 1)[0][: 1 << 20]
                lines += chunk.count(b"\n")
                last_byte = chunk[-1:]
    except FileNotFoundError:
        return CompactionStatus(False, 0, None, None, None)
    if last_byte != b"\n":
        lines += 1
    oldest: str | None = None
    age: float | None = None
    try:
        from journal.views import parse_json_bytes

        obj = parse_json_bytes((first or b"").lstrip(b"\xef\xbb\xbf"))
        if isinstance(obj, dict) and isinstance(obj.get("ts"), str):
            oldest = obj["ts"]
            age = ((now or datetime.now()) - datetime.fromisoformat(oldest)).total_seconds() / 86400
    except (ValueError, TypeError):
        age = None
    reason = None
    if lines >= COMPACT_LINES_THRESHOLD:
        reason = f"{lines} lines (threshold {COMPACT_LINES_THRESHOLD})"
    elif age is not None and age >= COMPACT_DAYS_THRESHOLD:
        reason = f"oldest event is {age:.0f} days old (threshold {COMPACT_DAYS_THRESHOLD})"
    return CompactionStatus(reason is not None, lines, oldest, age, reason)


@dataclass(slots=True)
class _JournalEnd:
    """The journal as this process left it after its own fsync'd append.

    While the file still has this identity and size and still ends with ``line``, its last complete
    event is ``event_id`` (a fresh uuid4, so no duplicate of an earlier record) without reading it.
    """

    ident: tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns
    line: bytes
    event_id: str


@dataclass(slots=True)
class _SavedView:
    """A view as this process last saved it: the bytes on disk and what they were made of.

    ``obj`` is the object the caller's mutator changed and that was saved; it is handed to the next
    mutator as long as the file still holds ``data`` and :meth:`intact` holds.

    ``compact`` is ``orjson.dumps(obj)`` as saved: ``[`` or ``{``, then one *segment* per top-level
    element (list item, or ``"key":value`` under ``keys``) with the delimiter after it (``,``, or
    the closing bracket for the last). ``seglens`` are their lengths, so segment ``i`` starts at
    ``1 + sum(seglens[:i])``. Each element is also kept as its rendering inside the view (``parts``;
    for a dict, ``"key": value``) and as a private deep copy (``shadow``).
    """

    data: bytes
    obj: Any
    keys: list[str] | None
    compact: bytes
    seglens: list[int]
    parts: list[bytes]
    shadow: list[Any]

    def intact(self) -> bool:
        """Whether ``obj`` still serialises as saved (nobody kept and changed it since).

        One ``orjson.dumps`` and one ``memcmp``. Like every check by bytes it cannot see NaN or
        Infinity put where ``None`` was (orjson writes all three as ``null``), nor a tuple or a
        UUID put where the list or string it renders like was; :func:`_encode_view` compares those
        with ``==`` before it reuses anything, so the file is still exactly ``dumps_view(obj)``.
        """
        try:
            return orjson.dumps(self.obj) == self.compact
        except TypeError:  # orjson.JSONEncodeError included
            return False


def _file_ident(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_O_RDONLY = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


def _journal_end_if_unchanged(path: Path, end: _JournalEnd | None) -> str | None:
    """``end.event_id`` if the journal is byte-for-byte where our last append left it."""
    if end is None:
        return None
    try:
        fd = os.open(path, _O_RDONLY)
        try:
            st = os.fstat(fd)
            if _file_ident(st) != end.ident:
                return None
            tail = os.pread(fd, len(end.line), st.st_size - len(end.line))
        finally:
            os.close(fd)
    except OSError:
        return None
    return end.event_id if tail == end.line else None


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data`` (every byte read and compared)."""
    try:
        fd = os.open(path, _O_RDONLY)
        try:
            if os.fstat(fd).st_size != len(data):
                return False
            # One byte more than expected: a file that grew meanwhile reads differently. A short
            # read also compares unequal, which only costs a fresh load.
            return os.read(fd, len(data) + 1) == data
        finally:
            os.close(fd)
    except OSError:
        return False


def _matching_run(new: bytes, at: int, old: memoryview, starts: list[int], j: int, limit: int) -> int:
    """How many old segments from ``j`` on (at most ``limit``) ``new`` holds, in order, from ``at``.

    ``at`` must be where an element starts in ``new``. Segments include their delimiter, and JSON
    parses deterministically from the start of an element: when ``new`` holds the text of old
    segments ``j..j+t-1`` there, its next ``t`` elements are exactly those (the delimiter settles
    numbers: ``1,`` is not a prefix of ``12,``). Matching is monotone in ``t``, so a binary search
    over windows finds the longest run comparing about ``len(new)`` bytes in all.
    """
    if limit <= 0:
        return 0
    base = starts[j]
    if not new.startswith(old[base : starts[j + 1]], at):
        return 0
    if new.startswith(old[base : starts[j + limit]], at):
        return limit
    lo, hi = 1, limit  # segments j..j+lo-1 match; j..j+hi-1 do not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        a = starts[j + lo]
        if new.startswith(old[a : starts[j + mid]], at + a - base):
            lo = mid
        else:
            hi = mid
    return lo


def _segment(key: str | None, item: Any) -> bytes:
    """An element's compact segment without its delimiter: ``value`` or ``"key":value``."""
    value = orjson.dumps(item)
    return value if key is None else orjson.dumps(key) + b":" + value


def _encode_view(obj: Any, old: _SavedView | None) -> _SavedView | None:
    """``fs.dumps_view(obj)`` as a :class:`_SavedView`, re-encoding only elements that changed.

    ``obj`` is serialised once with orjson (compact). An element whose segment has the bytes of an
    old element's is a candidate for reuse (runs of them are found with a few ``memcmp``), and a
    candidate is reused only if it is also ``==`` that element's private copy: bytes tell
    ``1``/``1.0``/``True``, ``0.0``/``-0.0`` and key order apart; ``==`` tells NaN/Infinity from
    ``None`` (orjson writes all of them as ``null``) and a tuple, UUID or enum from the list or
    value it renders like. Old and new elements are lined up by position, across runs inserted or
    removed (a dict whose keys changed: by key). ``None`` when only the stdlib can render ``obj``
    (non-string keys, big integers, other types): the caller falls back.
    """
    if type(obj) is list:
        keys: list[str] | None = None
        items: list[Any] = obj
    elif type(obj) is dict:
        keys = list(obj)
        if not all(type(k) is str for k in keys):
            return None
        items = list(obj.values())
    else:
        return None
    try:
        compact = orjson.dumps(obj)
    except TypeError:  # orjson.JSONEncodeError included
        return None
    n = len(items)
    if old is not None and (old.keys is None) != (keys is None):
        old = None
    # Per element: its segment's length with the delimiter, the rendering of the old element it
    # may reuse (None: to encode) and that element's private copy (else the item itself until the
    # comparison below, where identical objects compare equal at once).
    names = keys or []
    seglens = [0] * n
    parts: list[bytes | None] = [None] * n
    shadow = items.copy()
    i = j = 0
    at = 1  # where element i starts in `compact`
    if old is not None:
        m = len(old.seglens)
        starts = list(accumulate(old.seglens, initial=1))
        was = memoryview(old.compact)
        # A dict whose keys changed is lined up by key; anything else by position.
        by_key = None if keys is None or keys == old.keys else {k: x for x, k in enumerate(old.keys or ())}
        while i < n:
            if by_key is not None:
                j = by_key.get(names[i], m)
            t = _matching_run(compact, at, was, starts, j, min(n - i, m - j))
            if t:
                seglens[i : i + t] = old.seglens[j : j + t]
                parts[i : i + t] = old.parts[j : j + t]
                shadow[i : i + t] = old.shadow[j : j + t]
                at += starts[j + t] - starts[j]
                i += t
                j += t
                continue
            seg = _segment(names[i] if names else None, items[i])
            if not compact.startswith(seg, at):
                return None  # cannot happen: orjson renders a container as its elements joined
            if j < m and len(seg) + 1 == old.seglens[j] and old.compact.startswith(seg, starts[j]):
                parts[i], shadow[i] = old.parts[j], old.shadow[j]  # only the delimiter differed
                j += 1
            elif by_key is not None:
                pass  # a new key, or a changed value
            elif n - i < m - j:
                j += 1  # old element j was removed: line element i up with the next one
                continue
            elif n - i == m - j:
                j += 1  # element i replaced old element j
            seglens[i] = len(seg) + 1  # (n - i > m - j: element i was inserted)
            at += seglens[i]
            i += 1
    else:
        for i in range(n):
            seglens[i] = len(_segment(names[i] if names else None, items[i])) + 1
    if (sum(seglens) + 1 if n else 2) != len(compact):
        return None  # cannot happen (see above)
    if items != shadow:  # a candidate differs where its bytes cannot tell
        for i in range(n):
            if items[i] != shadow[i]:
                parts[i] = None
    for i in range(n):
        if parts[i] is None:
            part = _encode_entry(items[i], 1)
            if names:
                part = json.dumps(names[i], ensure_ascii=False).encode() + b": " + part
            parts[i] = part
            shadow[i] = copy_json(items[i])
    done: list[bytes] = parts  # type: ignore[assignment]  # every slot is filled now
    head, tail = (b"[\n  ", b"\n]") if keys is None else (b"{\n  ", b"\n}")
    if n > 1:  # one copy of the whole: the brackets go on the first and last parts
        data = b",\n  ".join([head + done[0], *done[1:-1], done[-1] + tail])
    else:
        data = head + done[0] + tail if n else head[:1] + tail[-1:]
    return _SavedView(data, obj, keys, compact, seglens, done, shadow)


class EventLog:
    """The journal of every character under one memory root.

    One per-character ``threading.Lock`` serialises every write of that character in this
    process (there is no cross-process lock, by design). The reconciler takes the same lock.

    Attributes:
        root: the memory root (``memory_dir``).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # Per character, read and written only under that character's lock: where our last
        # append left the journal, and each view as we last saved it.
        self._ends: dict[str, _JournalEnd] = {}
        self._views: dict[tuple[str, str], _SavedView] = {}
        # Per valid character name: (root it was made under, folder, journal); pathlib is slow.
        self._paths: dict[str, tuple[Path, Path, Path]] = {}

    # -- paths and locks ------------------------------------------------------------------

    def char_dir(self, character: str) -> Path:
        """The folder of ``character`` (validated; not created)."""
        return self._folder_and_journal(character)[0]

    def journal_path(self, character: str) -> Path:
        return self._folder_and_journal(character)[1]

    def _folder_and_journal(self, character: str) -> tuple[Path, Path]:
        cached = self._paths.get(character) if type(character) is str else None
        if cached is None or cached[0] is not self.root:
            cd = self.root / check_character_name(character)
            cached = self._paths[character] = (self.root, cd, cd / JOURNAL_NAME)
        return cached[1], cached[2]

    def lock(self, character: str) -> threading.Lock:
        """The per-character lock shared by writers and the reconciler."""
        with self._locks_guard:
            lock = self._locks.get(character)
            if lock is None:
                lock = self._locks[character] = threading.Lock()
            return lock

    # -- reading ---------------------------------------------------------------------------

    def read(self, character: str) -> JournalRead:
        """Read the whole journal of ``character`` (tolerant; never raises on content)."""
        return read_journal(self.journal_path(character))

    def sentinel(self, character: str) -> SentinelRead:
        return read_sentinel(self.char_dir(character))

    # -- writing ---------------------------------------------------------------------------

    def append(self, character: str, event_type: str, payload: dict[str, Any]) -> Event:
        """Durably append one event (no view change, no sentinel move).

        Raises:
            UnknownEventTypeError: before anything is written.
            OSError: the append or its fsync failed.
        """
        event = new_event(event_type, payload)
        line = encode_event(event)
        with self.lock(character):
            cd, journal = self._folder_and_journal(character)
            fs.ensure_dir(cd)
            self._append(character, journal, event, line)
        return event

    def record_and_save(
        self,
        character: str,
        event_type: str,
        payload: dict[str, Any],
        mutate: Mutator,
        *,
        view: str,
    ) -> Event:
        """Record a covered mutation, then apply it to a view (the write contract).

        Under the character's lock: load ``view`` → append the event with fsync → ``mutate`` the
        loaded view (in place, or return a replacement) → save the view atomically → advance the
        sentinel.

        The sentinel advances only if, before the append, it equalled the id of the last complete
        event in the journal (or the journal had no events and the sentinel was null/missing):
        otherwise an unapplied tail is on disk, and moving the sentinel would orphan it. The
        sentinel is then left alone so the tail, this event included, is replayed next time.

        Raises:
            UnknownEventTypeError: undeclared ``event_type``; nothing written.
            ViewCorruptError: the view cannot be loaded; nothing written.
            OSError: append/fsync failed (the view is untouched); or a later step failed (the event
                is durable and will be replayed).
        """
        event = new_event(event_type, payload)
        line = encode_event(event)
        expected = VIEW_TYPES.get(view, dict)
        with self.lock(character):
            cd = self.char_dir(character)
            current = self._load_view(character, cd / view, view, expected)
            return self._commit(cd, event, line, view, current, mutate, None, character)

    async def arecord_and_save(
        self,
        character: str,
        event_type: str,
        payload: dict[str, Any],
        mutate: Mutator,
        *,
        view: str,
    ) -> Event:
        """Async twin of :meth:`record_and_save`: the whole block runs in one worker thread.

        The threading lock is taken and released inside that thread, never held across an await.
        """
        import asyncio  # here, not at the top: only the async twin needs it (~35 ms to import)

        return await asyncio.to_thread(self.record_and_save, character, event_type, payload, mutate, view=view)

    def _load_view(self, character: str, path: Path, view: str, expected: type) -> Any:
        """The view as :func:`load_view` gives it; the object we last saved if the file still holds
        exactly its bytes (no parse), else a fresh parse. Caller holds the lock."""
        saved = self._views.get((character, view))
        if saved is not None:
            if isinstance(saved.obj, expected) and _holds(path, saved.data) and saved.intact():
                return saved.obj
            # Not ours any more (or changed behind our back): keep only the encoding memo.
            saved.obj = None
        return load_view(path, expected)

    def _append(self, character: str, journal: Path, event: Event, line: bytes) -> None:
        """Durably append ``line`` and remember where it left the journal. Caller holds the lock."""
        self._ends.pop(character, None)
        offset = fs.durable_append(journal, line)
        try:
            st = os.stat(journal)
        except OSError:
            return
        if st.st_size == offset + len(line):  # nobody appended after us before the stat
            self._ends[character] = _JournalEnd(_file_ident(st), line, event.event_id)

    def _sentinel_at_end(self, cd: Path, journal: Path, character: str | None = None) -> bool:
        sentinel = read_sentinel(cd)
        cached = None
        if character is not None:
            cached = _journal_end_if_unchanged(journal, self._ends.get(character))
        known, last = (True, cached) if cached is not None else last_event_id(journal)
        if not known:
            return False
        if last is None:
            return sentinel.event_id is None
        return sentinel.event_id == last

    def _commit(
        self,
        cd: Path,
        event: Event,
        line: bytes,
        view: str,
        current: Any,
        mutate: Mutator,
        after_save: Callable[[], Any] | None,
        character: str,
    ) -> Event:
        # Caller holds the lock and has loaded `current`.
        journal = self.journal_path(character)
        fs.ensure_dir(cd)
        may_advance = self._sentinel_at_end(cd, journal, character)
        self._append(character, journal, event, line)
        # From here on `current` may change: the cached view comes back only after a good save.
        key = (character, view)
        old = self._views.pop(key, None)
        replaced = mutate(current)
        if replaced is not None:
            current = replaced
        saved = _encode_view(current, old)
        path = cd / view
        if saved is None:
            save_view(path, current)
        else:
            if handlers.VERIFY_INCREMENTAL_SAVES and saved.data != fs.dumps_view(current):
                raise AssertionError(f"incremental serialisation of {view} differs from dumps_view")
            fs.atomic_write_bytes(path, saved.data)
            self._views[key] = saved
        if after_save is not None:
            after_save()
        if may_advance:
            write_sentinel(cd, event.event_id)
        return event

    # -- archives --------------------------------------------------------------------------

    def archive_reflection(self, character: str, reflection_id: str, *, today: date | None = None) -> Event | None:
        """Archive a reflection: event + removal from ``reflections.json``, then the shard append.

        The shard is chosen and created as ``[]`` first; the sentinel is committed only after the
        shard entry is durable, so a crash in between leaves the event to be replayed (the memory
        server advances the sentinel first and can lose the entry in that window).

        Returns:
            The event, or ``None`` when no reflection has that id.
        """
        with self.lock(character):
            cd = self.char_dir(character)
            reflections = load_view(cd / REFLECTIONS, list)
            entry = next((e for e in reflections if isinstance(e, dict) and e.get("id") == reflection_id), None)
            if entry is None:
                return None
            archive_dir = cd / REFLECTION_ARCHIVE
            fs.ensure_dir(cd)
            name = choose_shard(archive_dir, today)
            ensure_shard(archive_dir, name)
            archived_at = now_iso()
            snapshot = {**entry, "archived_at": archived_at, "status": "archived", "archive_shard_path": name}
            payload = {
                "reflection_id": reflection_id,
                "from": entry.get("status"),
                "to": "archived",
                "archive_shard_path": name,
                "archived_at": archived_at,
                "entry_snapshot": snapshot,
            }
            event = new_event("reflection.state_changed", payload)

            def remove(view: list[Any]) -> list[Any]:
                return [e for e in view if not (isinstance(e, dict) and e.get("id") == reflection_id)]

            return self._commit(
                cd,
                event,
                encode_event(event),
                REFLECTIONS,
                reflections,
                remove,
                lambda: append_entries(archive_dir, name, [snapshot]),
                character,
            )

    def archive_persona_entry(
        self, character: str, entity_key: str, entry_id: str, *, today: date | None = None
    ) -> Event | None:
        """Archive a persona entry (same order and guarantees as :meth:`archive_reflection`).

        Returns:
            The event, or ``None`` when the section or entry does not exist or is protected.
        """
        with self.lock(character):
            cd = self.char_dir(character)
            persona = load_view(cd / PERSONA, dict)
            section = persona.get(entity_key)
            facts = section.get("facts") if isinstance(section, dict) else None
            if not isinstance(facts, list):
                return None
            entry = next((e for e in facts if isinstance(e, dict) and e.get("id") == entry_id), None)
            if entry is None or entry.get("protected"):
                return None
            archive_dir = cd / PERSONA_ARCHIVE
            fs.ensure_dir(cd)
            name = choose_shard(archive_dir, today)
            ensure_shard(archive_dir, name)
            archived_at = now_iso()
            snapshot = {**entry, "archived_at": archived_at, "archive_shard_path": name}
            payload = {
                "entity_key": entity_key,
                "entry_id": entry_id,
                "archive_shard_path": name,
                "archived_at": archived_at,
                "text": entry.get("text"),
                "source": entry.get("source"),
                "entry_snapshot": snapshot,
            }
            event = new_event("persona.fact_added", payload)

            def remove(view: dict[str, Any]) -> None:
                sec = view[entity_key]
                sec["facts"] = [e for e in sec["facts"] if not (isinstance(e, dict) and e.get("id") == entry_id)]

            return self._commit(
                cd,
                event,
                encode_event(event),
                PERSONA,
                persona,
                remove,
                lambda: append_entries(archive_dir, name, [snapshot]),
                character,
            )

    # -- compaction ------------------------------------------------------------------------

    def compaction_status(self, character: str, now: datetime | None = None) -> CompactionStatus:
        return compaction_status(self.journal_path(character), now)

    def compact(
        self,
        character: str,
        seeds: Sequence[tuple[str, dict[str, Any]]] | Callable[[], Sequence[tuple[str, dict[str, Any]]]],
    ) -> list[Event]:
        """Replace the journal with ``seeds`` and reset the sentinel to null (never called for you).

        Each seed is ``(event_type, payload)``; every seed gets a new uuid4 and all share one ``ts``.
        The journal is replaced atomically (temp + ``os.replace``), then the sentinel is reset, so
        the seeds replay. A crash between the two leaves a sentinel naming an id that no longer
        exists, which also means a full replay of the seeds.

        Seeds come from the views, so two things would make compaction lose events, and both are
        closed here. An unapplied tail (events after the sentinel) is not in the views yet:
        compaction refuses while there is one; reconcile first. A write landing between deriving
        the seeds and replacing the journal would be reverted when the older seeds replay: pass a
        callable, and it is called under the character's lock (after the tail check), where no
        writer of this process can run; a precomputed list is only safe when no writer can.

        Raises:
            UnknownEventTypeError: a seed type is undeclared or has no replay handler (it would
                wedge replay); nothing is written.
            UnappliedTailError: events after the sentinel are not applied yet; nothing is written.
        """
        ts = now_iso()

        def build(pairs: Sequence[tuple[str, dict[str, Any]]]) -> list[Event]:
            built: list[Event] = []
            for event_type, payload in pairs:
                check_event_type(event_type)
                if event_type not in REPLAYABLE_EVENT_TYPES:
                    raise UnknownEventTypeError(f"seed type {event_type!r} has no replay handler")
                ev = new_event(event_type, payload)
                built.append(make_event(ev.event_id, ev.type, ts, ev.payload))
            return built

        events = [] if callable(seeds) else build(seeds)
        with self.lock(character):
            cd = self.char_dir(character)
            if not self._sentinel_at_end(cd, self.journal_path(character)):
                raise UnappliedTailError(
                    f"{character}: the journal has events after the sentinel that are not applied yet; "
                    "compacting now would discard them (reconcile first)"
                )
            if callable(seeds):
                events = build(seeds())
            data = b"".join(encode_event(e) for e in events)
            fs.ensure_dir(cd)
            self._ends.pop(character, None)
            fs.atomic_write_bytes(cd / JOURNAL_NAME, data)
            write_sentinel(cd, None)
        return events
