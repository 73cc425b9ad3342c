"""EventLog: durable append, ``record_and_save`` (and its async twin), archives, compaction."""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from journal import fs
from journal.appliedset import (
    APPLIED_SET_NAME,
    applied_set_valid,
    read_applied_set,
    remove_applied_set,
    write_applied_set,
)
from journal.codec import dumps_view, renders_as
from journal.compaction import (
    age_days,
    compaction_reason,
    first_line_ts,
)
from journal.errors import InvalidCharacterError, UnappliedTailError, UnknownEventTypeError, ViewCorruptError
from journal.events import (
    JOURNAL_NAME,
    REPLAYABLE_EVENT_TYPES,
    SENTINEL_NAME,
    Clock,
    Event,
    IdSource,
    check_event_type,
    encode_event,
    new_event,
    now_iso,
)
from journal.lastevent import LastEventCache, last_event_id
from journal.outbox import OUTBOX_NAME
from journal.park import PARKED_NAME
from journal.reader import JournalRead, read_journal
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, append_entries, choose_shard, ensure_shard
from journal.stores import Confinement
from journal.views import (
    PERSONA,
    REFLECTIONS,
    VIEW_TYPES,
    SentinelRead,
    load_view,
    read_sentinel,
    write_sentinel,
)

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


# One lock per character folder per process (design record: Write contract), whichever EventLog
# asks: keyed by the folder's resolved path, so two EventLog objects of one root (the README
# makes a fresh one for the Reconciler), or two spellings of one folder, serialise together.
# Held weakly: whoever holds a lock references it, so an entry only goes once nobody can hold it.
_CHARACTER_LOCKS: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
_CHARACTER_LOCKS_GUARD = threading.Lock()


def character_lock(char_dir: str | os.PathLike[str]) -> threading.Lock:
    """The process's lock of the character folder ``char_dir`` (the same object for every path
    that resolves to that folder)."""
    key = os.path.realpath(char_dir)
    with _CHARACTER_LOCKS_GUARD:
        lock = _CHARACTER_LOCKS.get(key)
        if lock is None:
            lock = _CHARACTER_LOCKS[key] = threading.Lock()
        return lock


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
        with fs.open_regular(journal_path) as fh:
            while chunk := fh.read(8 << 20):
                if first is None:  # the first line, even when it is blank: never a later chunk's
                    first = chunk.split(b"\n", 1)[0][: 1 << 20]
                lines += chunk.count(b"\n")
                last_byte = chunk[-1:]
    except FileNotFoundError:
        return CompactionStatus(False, 0, None, None, None)
    if last_byte != b"\n":
        lines += 1
    ts = first_line_ts(first or b"")
    oldest = ts if isinstance(ts, str) else None
    age = age_days(oldest, now)
    reason = compaction_reason(lines, oldest, now)
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


@dataclass(frozen=True, slots=True)
class _SavedView:
    """A view as this process last saved it: the object the mutator left, and the bytes written.

    The next ``record_and_save`` of that view hands ``obj`` to its mutator instead of parsing the
    file, but only while the file holds exactly ``data`` (every byte read and compared) and
    :func:`journal.codec.renders_as` says ``obj`` still renders as ``data``: nobody rewrote the
    file, and whoever kept a reference to the object did not change it (up to what orjson renders
    alike, such as NaN for ``None``; whatever the mutator is handed is saved exactly).
    """

    data: bytes
    obj: Any


def _file_ident(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_O_RDONLY = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO never blocks


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


#: The journal's own files: never a view that record_and_save may replace.
_NOT_VIEWS = frozenset({JOURNAL_NAME, SENTINEL_NAME, OUTBOX_NAME, APPLIED_SET_NAME, PARKED_NAME})


class EventLog:
    """The journal of every character under one memory root.

    One per-character ``threading.Lock`` serialises every write of that character in this
    process (there is no cross-process lock, by design). The lock belongs to the process and the
    character folder's resolved path (:func:`character_lock`), not to this object: every
    ``EventLog`` of the folder, and the reconciler, take the same one.

    Views, archive folders and shards are confined to the character folder by the rule replay's
    stores use (:class:`~journal.stores.Confinement`): a writer refuses a path leading out of it
    before anything is written.

    Every timestamp it writes (an event's ``ts``, ``archived_at``, the sentinel's and the applied
    set's ``ts``) comes from ``clock``, and every fresh id (event ids, the uuid8 of a new shard's
    name) from ``new_id``; nothing else in the process is consulted or changed, so a caller that
    needs reproducible files (the fixture builders) passes its own.

    Args:
        root: the memory root (``memory_dir``).
        clock: the timestamps' source (:data:`journal.events.Clock`); ``None``, the default,
            is :func:`journal.events.now_iso`.
        new_id: the ids' source (:data:`journal.events.IdSource`); ``None``, the default, is
            :func:`journal.events.new_uuid` (a fresh uuid4).

    Attributes:
        root: the memory root (``memory_dir``).
        clock: as given.
        new_id: as given.
    """

    def __init__(
        self, root: str | os.PathLike[str], *, clock: Clock | None = None, new_id: IdSource | None = None
    ) -> None:
        self.root = Path(root)
        self.clock = clock
        self.new_id = new_id
        # Per character, read and written only under that character's lock: where our last
        # append left the journal, and each view as we last saved it (bench/bench_journal.py's
        # 340 KiB view: parsing it costs 0.60 ms a call, checking the saved one 0.15 ms).
        self._ends: dict[str, _JournalEnd] = {}
        self._views: dict[tuple[str, str], _SavedView] = {}
        # The last complete event of each journal, kept exactly and read incrementally.
        self._last_events = LastEventCache()
        # Per valid character name: (root it was made under, folder, journal); pathlib is slow.
        self._paths: dict[str, tuple[Path, Path, Path]] = {}

    def _now(self) -> str:
        return (self.clock or now_iso)()

    def _new_event(self, event_type: str, payload: dict[str, Any]) -> Event:
        return new_event(event_type, payload, clock=self.clock, new_id=self.new_id)

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
        """The per-character lock shared by writers and the reconciler (:func:`character_lock`)."""
        return character_lock(self.char_dir(character))

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
        event = self._new_event(event_type, payload)
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
        event in the journal (:func:`journal.lastevent.last_event_id`, exact), or the journal had no
        events and the sentinel was null/missing. Otherwise events after the sentinel are not all
        applied (a crashed write, or an event replay holds: :mod:`journal.holds`), and moving the
        sentinel would orphan them. The sentinel is then left alone, and this event, which *is*
        applied, is added to the applied set bound to that sentinel
        (:mod:`journal.appliedset`), so no later start runs it again; the next start replays the
        unapplied events before it, and runs this one again only if one of those touching its
        entries is applied then (newest payload wins). That record costs one rewrite of the set
        per write while the sentinel stays behind. A set that is a link leading out of the folder
        is not written: the event then replays next time, as before.

        The sentinel never names an event the memory server's reader cannot see (memory-format
        §9.3; :class:`journal.appliedset.SentinelRun`): the only event this method names is its
        own, and :func:`journal.fs.durable_append` writes a ``\n`` first when the journal ends in a
        torn line, so that event is always a whole line of its own, never glued onto a fragment.
        A sentinel on a glued event (the server's live write) is the last complete event, so this
        write advances it onto the new, visible event.

        Raises:
            UnknownEventTypeError: undeclared ``event_type``; nothing written.
            ViewCorruptError: the view cannot be loaded, or ``view`` is not a file of the
                character folder (``..``, an absolute path, a link leading out of it); nothing
                written.
            ValueError: ``view`` names one of the journal's own files (the journal, the sentinel,
                the outbox); nothing written.
            OSError: append/fsync failed (the view is untouched); or a later step failed (the event
                is durable and will be replayed).
        """
        if view in _NOT_VIEWS:
            raise ValueError(f"{view!r} is not a view: record_and_save would overwrite the journal's own file")
        event = self._new_event(event_type, payload)
        line = encode_event(event)
        expected = VIEW_TYPES.get(view, dict)
        with self.lock(character):
            cd = self.char_dir(character)
            path = Confinement(cd).view_path(view)
            current = self._load_view(character, path, view, expected)
            return self._commit(cd, event, line, path, view, current, mutate, None, character)

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
        """The view as :func:`load_view` gives it: the object we last saved while the file still
        holds exactly its bytes and it still renders as them (no parse), else a fresh parse.
        Caller holds the lock."""
        saved = self._views.get((character, view))
        if (
            saved is not None
            and isinstance(saved.obj, expected)
            and _holds(path, saved.data)
            and renders_as(saved.obj, saved.data)
        ):
            return saved.obj
        return load_view(path, expected)

    def _append(self, character: str, journal: Path, event: Event, line: bytes) -> None:
        """Durably append ``line`` and remember where it left the journal. Caller holds the lock.

        Raises:
            ViewCorruptError: the journal or the sentinel is a link leading out of the character
                folder (nothing written: the sentinel is written after the append).
        """
        own = Confinement(journal.parent)
        own.view_path(JOURNAL_NAME)
        own.view_path(SENTINEL_NAME)
        self._ends.pop(character, None)
        # keep_lines_apart (the default): never glued onto a torn last line, so the sentinel may
        # name this event (the server's reader sees it; memory-format §9.3).
        offset = fs.durable_append(journal, line, keep_lines_apart=True)
        try:
            st = os.stat(journal)
        except OSError:
            return
        if st.st_size == offset + len(line):  # nobody appended after us before the stat
            self._ends[character] = _JournalEnd(_file_ident(st), line, event.event_id)

    def _sentinel_at_end(self, cd: Path, journal: Path, character: str | None = None) -> tuple[bool, SentinelRead]:
        """Whether the sentinel names the journal's last complete event (or the journal has no
        events and the sentinel is null or missing), with the sentinel as read. Caller holds the
        lock."""
        sentinel = read_sentinel(cd)
        cached = None
        if character is not None:
            cached = _journal_end_if_unchanged(journal, self._ends.get(character))
        last = cached if cached is not None else last_event_id(journal, cache=self._last_events)[1]
        if last is None:
            return sentinel.event_id is None, sentinel
        return sentinel.event_id == last, sentinel

    def _commit(
        self,
        cd: Path,
        event: Event,
        line: bytes,
        path: Path,
        view: str,
        current: Any,
        mutate: Mutator,
        after_save: Callable[[], Any] | None,
        character: str,
    ) -> Event:
        # Caller holds the lock, has confined `path` (the view's) and loaded `current` from it.
        journal = self.journal_path(character)
        fs.ensure_dir(cd)
        may_advance, sentinel = self._sentinel_at_end(cd, journal, character)
        applied_set: list[str] | None = None
        if not may_advance:
            # Events after the sentinel are not all applied. This event will be: record it in the
            # applied set bound to this sentinel, so that no later start applies it again.
            aset = read_applied_set(cd, sentinel)
            if aset.state != "refused":
                applied_set = list(aset.applied) if applied_set_valid(aset, sentinel.event_id) else []
        self._append(character, journal, event, line)
        # From here on `current` may change: the saved view comes back only after a good save.
        key = (character, view)
        self._views.pop(key, None)
        replaced = mutate(current)
        if replaced is not None:
            current = replaced
        data = dumps_view(current)
        fs.atomic_write_bytes(path, data)
        self._views[key] = _SavedView(data, current)
        if after_save is not None:
            after_save()
        if may_advance:
            write_sentinel(cd, event.event_id, clock=self.clock)
        elif applied_set is not None:
            write_applied_set(cd, sentinel, [*applied_set, event.event_id], clock=self.clock)
        return event

    # -- archives --------------------------------------------------------------------------

    def archive_reflection(self, character: str, reflection_id: str, *, today: date | None = None) -> Event | None:
        """Archive a reflection: event + removal from ``reflections.json``, then the shard append.

        The shard is chosen and created as ``[]`` first; the sentinel is committed only after the
        shard entry is durable, so a crash in between leaves the event to be replayed (the memory
        server advances the sentinel first and can lose the entry in that window).

        Returns:
            The event, or ``None`` when no reflection has that id.

        Raises:
            ViewCorruptError: ``reflections.json`` cannot be loaded, or is a link leading out of
                the character folder; nothing written.
            ShardCorruptError: ``reflection_archive/`` or the chosen shard is a link leading out
                of the character folder (replay refuses it too); nothing written.
        """
        with self.lock(character):
            cd = self.char_dir(character)
            confined = Confinement(cd)
            view_path = confined.view_path(REFLECTIONS)
            reflections = load_view(view_path, list)
            entry = next((e for e in reflections if isinstance(e, dict) and e.get("id") == reflection_id), None)
            if entry is None:
                return None
            archive_dir, name = self._shard_for(confined, REFLECTION_ARCHIVE, today)
            ensure_shard(archive_dir, name)
            archived_at = self._now()
            snapshot = {**entry, "archived_at": archived_at, "status": "archived", "archive_shard_path": name}
            payload = {
                "reflection_id": reflection_id,
                "from": entry.get("status"),
                "to": "archived",
                "archive_shard_path": name,
                "archived_at": archived_at,
                "entry_snapshot": snapshot,
            }
            event = self._new_event("reflection.state_changed", payload)

            def remove(view: list[Any]) -> list[Any]:
                return [e for e in view if not (isinstance(e, dict) and e.get("id") == reflection_id)]

            return self._commit(
                cd,
                event,
                encode_event(event),
                view_path,
                REFLECTIONS,
                reflections,
                remove,
                lambda: append_entries(archive_dir, name, [snapshot]),
                character,
            )

    def _shard_for(self, confined: Confinement, archive: str, today: date | None) -> tuple[Path, str]:
        """The archive folder and the shard an archive goes to, both confined like replay's: a
        link leading out of the character folder raises ``ShardCorruptError`` before anything is
        written (the folder is checked before it is listed). Caller holds the lock."""
        archive_dir = confined.archive_path(archive)
        name = choose_shard(archive_dir, today, new_id=self.new_id)
        confined.shard_path(archive, name)
        fs.ensure_dir(confined.char_dir)
        return archive_dir, name

    def archive_persona_entry(
        self, character: str, entity_key: str, entry_id: str, *, today: date | None = None
    ) -> Event | None:
        """Archive a persona entry (same order and guarantees as :meth:`archive_reflection`).

        Returns:
            The event, or ``None`` when the section or entry does not exist or is protected.

        Raises:
            ViewCorruptError, ShardCorruptError: as :meth:`archive_reflection` (``persona.json``,
                ``persona_archive/``); nothing written.
        """
        with self.lock(character):
            cd = self.char_dir(character)
            confined = Confinement(cd)
            view_path = confined.view_path(PERSONA)
            persona = load_view(view_path, dict)
            section = persona.get(entity_key)
            facts = section.get("facts") if isinstance(section, dict) else None
            if not isinstance(facts, list):
                return None
            entry = next((e for e in facts if isinstance(e, dict) and e.get("id") == entry_id), None)
            if entry is None or entry.get("protected"):
                return None
            archive_dir, name = self._shard_for(confined, PERSONA_ARCHIVE, today)
            ensure_shard(archive_dir, name)
            archived_at = self._now()
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
            event = self._new_event("persona.fact_added", payload)

            def remove(view: dict[str, Any]) -> None:
                sec = view[entity_key]
                sec["facts"] = [e for e in sec["facts"] if not (isinstance(e, dict) and e.get("id") == entry_id)]

            return self._commit(
                cd,
                event,
                encode_event(event),
                view_path,
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

        Each seed is ``(event_type, payload)``; every seed gets a fresh id and all share one ``ts``.
        The journal is replaced atomically (temp + ``os.replace``), then the sentinel is reset, so
        the seeds replay. A crash between the two leaves a sentinel naming an id that no longer
        exists, which also means a full replay of the seeds.

        Seeds come from the views, so two things would make compaction lose events, and both are
        closed here. An unapplied tail (events after the sentinel) is not in the views yet:
        compaction refuses while there is one, which includes every event replay holds and every
        event applied past the sentinel (the sentinel is then not at the journal end); reconcile,
        or park what can never be applied, first. A stale applied set is removed. A write landing
        between deriving the seeds and replacing the journal would be reverted when the older
        seeds replay: pass a callable, and it is called under the character's lock (after the
        tail check), where no writer of this process can run; a precomputed list is only safe
        when no writer can.

        Raises:
            UnknownEventTypeError: a seed type is undeclared or has no replay handler (it would
                wedge replay); nothing is written.
            UnappliedTailError: events after the sentinel are not applied yet; nothing is written.
        """
        ts = self._now()

        def build(pairs: Sequence[tuple[str, dict[str, Any]]]) -> list[Event]:
            built: list[Event] = []
            for event_type, payload in pairs:
                check_event_type(event_type)
                if event_type not in REPLAYABLE_EVENT_TYPES:
                    raise UnknownEventTypeError(f"seed type {event_type!r} has no replay handler")
                built.append(new_event(event_type, payload, clock=lambda: ts, new_id=self.new_id))
            return built

        events = [] if callable(seeds) else build(seeds)
        with self.lock(character):
            cd = self.char_dir(character)
            if not self._sentinel_at_end(cd, self.journal_path(character))[0]:
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
            write_sentinel(cd, None, clock=self.clock)
            # A record of events applied past the old sentinel names events that are gone (and
            # the reset made it stale): remove it. It is no longer read either way.
            with contextlib.suppress(OSError, ViewCorruptError):
                remove_applied_set(cd)
        return events
