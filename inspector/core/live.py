"""Live watching: which files changed (watchdog, or polling when it fails) and what that means.

:class:`FolderWatcher` collects changed paths under the opened folder and hands them over in
debounced batches, in its own thread. :class:`LiveFolder` turns a batch into
:class:`LiveUpdate` values, one per character: rows read from the journal's new bytes only
(:class:`journal.tail.JournalTail`), the re-read sentinel, the view / shard / outbox files that
were replaced. Nothing here writes anywhere.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.timeline import CharacterTimeline, Row
from journal.diagnosis import EventInfo
from journal.events import JOURNAL_NAME, SENTINEL_NAME, entry_ref
from journal.outbox import OUTBOX_NAME
from journal.reader import Defect
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.tail import JournalTail
from journal.views import FACTS, PERSONA, REFLECTIONS, SentinelRead, read_sentinel

#: Files whose replacement changes what the diagnosis says (so states are recomputed).
VIEW_FILES = frozenset({REFLECTIONS, PERSONA, FACTS})
ARCHIVES = frozenset({REFLECTION_ARCHIVE, PERSONA_ARCHIVE})

#: watchdog event types that mean a file's content or presence changed. ``opened`` and
#: ``closed_no_write`` are left out on purpose: our own reads would otherwise wake us up again.
_CHANGE_EVENTS = frozenset({"created", "deleted", "modified", "moved", "closed"})


@dataclass(frozen=True, slots=True)
class WatchStatus:
    """How the folder is being watched, for the status bar.

    Attributes:
        mode: ``watching`` (filesystem notifications), ``polling`` (the fallback), or ``off``.
        detail: why polling is used, or what is watched.
    """

    mode: str
    detail: str = ""

    def text(self) -> str:
        if self.mode == "watching":
            return "live: watching"
        if self.mode == "polling":
            return f"live: polling ({self.detail})" if self.detail else "live: polling"
        return f"not watching{f' ({self.detail})' if self.detail else ''}"


class _Handler:
    """The watchdog event handler: records the paths of relevant events (in the observer thread)."""

    def __init__(self, sink: Callable[[Iterable[str]], None]) -> None:
        self._sink = sink

    def dispatch(self, event: Any) -> None:
        if event.event_type not in _CHANGE_EVENTS:
            return
        paths = [os.fsdecode(event.src_path)]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(os.fsdecode(dest))
        self._sink(paths)


def _snapshot(root: Path, depth: int = 3) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of every file down to ``depth`` levels (root/character/archive/file)."""
    out: dict[str, tuple[int, int, int]] = {}
    stack = [(str(root), 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if level + 1 < depth:
                        stack.append((entry.path, level + 1))
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            out[entry.path] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


#: Builds a started-to-be watchdog observer (``schedule``/``start``/``stop``/``join``); raising
#: makes the watcher poll instead. ``None`` means watchdog's own.
ObserverFactory = Callable[[], Any] | None


def watchdog_observer() -> Any:
    """Watchdog's observer for this platform (inotify, FSEvents, ...)."""
    from watchdog.observers import Observer

    return Observer()


def no_observer() -> Any:
    """An observer factory that always fails, so the watcher polls (notifications disabled)."""
    raise OSError("filesystem notifications are disabled")


class FolderWatcher:
    """Watches a folder recursively and calls ``on_batch(paths)`` with debounced batches.

    Batches are delivered in the watcher's own thread once no change arrived for ``debounce``
    seconds, or ``max_delay`` seconds after the first change of a burst, whichever comes first.
    If the filesystem observer cannot start (or dies), a polling thread takes over and
    ``on_status`` reports it.

    Args:
        root: the folder.
        on_batch: receives the set of changed paths.
        on_status: receives the :class:`WatchStatus` whenever it changes.
        observer_factory: builds a watchdog observer (injectable for tests); ``None`` means polling.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        on_batch: Callable[[set[str]], None],
        *,
        on_status: Callable[[WatchStatus], None] | None = None,
        debounce: float = 0.03,
        max_delay: float = 0.15,
        poll_interval: float = 0.5,
        observer_factory: ObserverFactory = None,
    ) -> None:
        self.root = Path(root)
        self._on_batch = on_batch
        self._on_status = on_status
        self.debounce = debounce
        self.max_delay = max_delay
        self.poll_interval = poll_interval
        self._observer_factory = observer_factory if observer_factory is not None else watchdog_observer
        self._observer: Any = None
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first_at = 0.0
        self._last_at = 0.0
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._polling = False
        self._snapshot: dict[str, tuple[int, int, int]] = {}
        self.status = WatchStatus("off")

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> WatchStatus:
        """Start the observer (or polling if it fails) and the delivery thread."""
        try:
            observer = self._observer_factory()
            observer.schedule(_Handler(self.notify), str(self.root), recursive=True)
            observer.start()
            self._observer = observer
            self._set_status(WatchStatus("watching", str(self.root)))
        except Exception as exc:  # inotify limits, unsupported filesystems, injected failures
            self._observer = None
            self._start_polling(f"watcher failed: {exc}")
        self._thread = threading.Thread(target=self._run, name=f"watch:{self.root.name}")
        self._thread.start()
        return self.status

    def stop(self) -> None:
        """Stop observing and join every thread this watcher started."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        observer, self._observer = self._observer, None
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=5)
            except Exception:
                pass
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._set_status(WatchStatus("off"))

    def _set_status(self, status: WatchStatus) -> None:
        if status != self.status:
            self.status = status
            if self._on_status is not None:
                self._on_status(status)

    def _start_polling(self, why: str) -> None:
        self._polling = True
        self._snapshot = _snapshot(self.root)
        self._set_status(WatchStatus("polling", f"every {self.poll_interval:g} s; {why}"))

    # -- collecting ---------------------------------------------------------------------------------

    def notify(self, paths: Iterable[str]) -> None:
        """Report changed paths (the observer does; callers may too, e.g. to read once at start)."""
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first_at = now
            self._pending.update(paths)
            self._last_at = now
            self._cond.notify_all()

    def _poll_once(self) -> None:
        current = _snapshot(self.root)
        previous, self._snapshot = self._snapshot, current
        changed = {p for p in current.keys() | previous.keys() if current.get(p) != previous.get(p)}
        if changed:
            self.notify(changed)

    # -- delivering ---------------------------------------------------------------------------------

    def _run(self) -> None:
        next_poll = time.monotonic() + self.poll_interval
        next_health = time.monotonic() + 1.0
        while True:
            with self._cond:
                while not self._stopped:
                    now = time.monotonic()
                    # Wake for whichever comes first: a batch being due, a poll, a health check.
                    due = next_poll if self._polling else next_health
                    if self._pending:
                        due = min(due, self._last_at + self.debounce, self._first_at + self.max_delay)
                    if now >= due:
                        break
                    self._cond.wait(due - now)
                if self._stopped:
                    return
                now = time.monotonic()
                batch: set[str] = set()
                if self._pending and now >= min(self._last_at + self.debounce, self._first_at + self.max_delay):
                    batch, self._pending = self._pending, set()
            if self._polling and now >= next_poll:
                next_poll = now + self.poll_interval
                self._poll_once()
            elif not self._polling and now >= next_health:
                next_health = now + 1.0
                observer = self._observer
                if observer is not None and not observer.is_alive():
                    self._start_polling("the watcher stopped")
                    next_poll = now + self.poll_interval
            if batch:
                try:
                    self._on_batch(batch)
                except Exception:  # a bad batch must not end live updates
                    import traceback

                    traceback.print_exc()


# -- turning changed paths into updates -------------------------------------------------------------


@dataclass(slots=True)
class LiveUpdate:
    """What changed in one character folder, read from disk in the watcher thread.

    Attributes:
        character: the folder name.
        reset: the journal shrank or was replaced (compaction): reload everything.
        rows: rows read from the journal's new bytes, in file order (they read "not yet checked"
            in the window until the next diagnosis: no state is worked out from them).
            An unterminated last line comes last, provisionally, as the reader classifies it were
            the file to end there (a ``torn_tail``, usually): a writer may still complete it. A
            line the reader would already make an event of is held back until its newline comes
            (an event, once shown, is never taken back; a record glued onto it would unmake it).
        size: journal bytes read so far, an unterminated last line included.
        reread_from: the journal was read further from this line (1-based): the provisional row
            shown for an unterminated last line gives way to :attr:`rows` (``None``: no new bytes).
        payloads: event id → (type, payload) of the new events (summaries, live filtering).
        sentinel: the re-read sentinel, when its file changed.
        files: relative paths of replaced view, shard or outbox files.
        restate: something the diagnosis depends on changed (rows, the sentinel, a file); the
            states need recomputing.
    """

    character: str
    reset: bool = False
    rows: list[Row] = field(default_factory=list)
    size: int = 0
    payloads: dict[str, tuple[str, Any]] = field(default_factory=dict)
    sentinel: SentinelRead | None = None
    files: set[str] = field(default_factory=set)
    restate: bool = False
    reread_from: int | None = None

    @property
    def empty(self) -> bool:
        return not (self.reset or self.rows or self.sentinel or self.files or self.reread_from is not None)


def resume_tail(journal: Path, offset: int, line: int) -> JournalTail:
    """A :class:`JournalTail` that continues after the part of the journal already read.

    ``JournalTail`` starts at byte 0; the diagnosis has read ``offset`` bytes (``line`` lines), so
    the tail is positioned there and reads only what is appended afterwards. Duplicate ids are
    checked among the new events only (the next diagnosis checks the whole file).
    """
    return JournalTail(journal, offset=offset, line=line)


class LiveFolder:
    """Maps changed paths to characters and reads what changed (call it from one thread only).

    Args:
        timelines: the loaded timelines, by character name; only their size and folders are read
            here (the GUI thread owns the rows).
    """

    def __init__(self, timelines: dict[str, CharacterTimeline]) -> None:
        self._dirs: dict[str, str] = {}
        self._tails: dict[str, JournalTail] = {}
        self._next_index = {name: len(tl.events) for name, tl in timelines.items()}
        # The sentinel as last seen (state as the reader gives it), so a re-read that finds it
        # unchanged is not reported.
        self._sentinels: dict[str, tuple[str, str | None]] = {
            name: ("ok" if tl.sentinel.event_id is not None else tl.sentinel.state, tl.sentinel.event_id)
            for name, tl in timelines.items()
        }
        #: Journal bytes read so far per character (an unterminated last line included): a poll
        #: that reads nothing new changes nothing.
        self._sizes = {name: tl.live_size for name, tl in timelines.items()}
        for name, tl in timelines.items():
            char_dir = Path(tl.path)
            self._dirs[os.path.realpath(char_dir)] = name
            self._dirs[os.path.abspath(char_dir)] = name
            offset, line = tl.live_size, tl.diagnosis.journal.lines
            last = tl.row(tl.refs[-1]) if len(tl.refs) else None
            if isinstance(last, Defect) and last.offset + last.length >= tl.live_size:
                # An unterminated last line (a torn tail): re-read it, as the live tail holds it back
                # until its newline; a writer may still complete it, or isolate it with "\n".
                offset, line = last.offset, last.line - 1
            self._tails[name] = resume_tail(char_dir / JOURNAL_NAME, offset, line)

    def classify(self, path: str) -> tuple[str, str] | None:
        """``(character, relative path)`` for a changed path that matters, else ``None``."""
        p = os.path.abspath(path)
        parent, name = os.path.split(p)
        if name.startswith(".") or name.endswith(".tmp"):
            return None  # atomic-write temp files; their os.replace reports the real name
        character = self._dirs.get(parent)
        if character is not None:
            if name in (JOURNAL_NAME, SENTINEL_NAME, OUTBOX_NAME) or name in VIEW_FILES:
                return character, name
            return None
        grand, archive = os.path.split(parent)
        character = self._dirs.get(grand)
        if character is not None and archive in ARCHIVES:
            return character, f"{archive}/{name}"
        return None

    def process(self, paths: Iterable[str]) -> list[LiveUpdate]:
        """Read what changed for every character touched by ``paths``."""
        touched: dict[str, set[str]] = {}
        for path in paths:
            hit = self.classify(path)
            if hit is not None:
                touched.setdefault(hit[0], set()).add(hit[1])
        updates = []
        for character, names in touched.items():
            update = self._read(character, names)
            if not update.empty:
                updates.append(update)
        return updates

    def poll_all(self) -> list[LiveUpdate]:
        """Read every character's journal tail and sentinel (used after (re)starting to watch)."""
        updates = []
        for character in self._tails:
            update = self._read(character, {JOURNAL_NAME, SENTINEL_NAME})
            if not update.empty:
                updates.append(update)
        return updates

    def _read(self, character: str, names: set[str]) -> LiveUpdate:
        update = LiveUpdate(character)
        char_dir = Path(self._tails[character].path).parent
        if JOURNAL_NAME in names:
            tail = self._tails[character]
            committed = tail.lines  # the next line read is line committed + 1
            polled = tail.poll()
            if polled.reset:
                update.reset = True
                return update
            update.size = tail.size
            rows: list[Row] = []
            index = self._next_index[character]
            for ev in polled.events:
                rows.append(
                    EventInfo(index, ev.line, ev.offset, ev.event_id, ev.type, ev.ts, entry_ref(ev.type, ev.payload))
                )
                update.payloads[ev.event_id] = (ev.type, ev.payload)
                index += 1
            self._next_index[character] = index
            rows.extend(polled.defects)
            rows.sort(key=lambda r: (r.offset, 1 if isinstance(r, EventInfo) else 0))
            if tail.size != self._sizes[character]:
                self._sizes[character] = tail.size
                update.reread_from = committed + 1
                held_events, held_defects = tail.provisional()
                if not held_events:
                    rows.extend(held_defects)
            update.rows = rows
        if SENTINEL_NAME in names or update.rows:
            # A live writer moves the sentinel right after its append: read it with the rows.
            sentinel = read_sentinel(char_dir)
            if (sentinel.state, sentinel.event_id) != self._sentinels.get(character):
                update.sentinel = sentinel
                self._sentinels[character] = (sentinel.state, sentinel.event_id)
        update.files = {n for n in names if n != JOURNAL_NAME and n != SENTINEL_NAME}
        update.restate = bool(update.files or update.rows or update.sentinel or update.reread_from is not None)
        return update
