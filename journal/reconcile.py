"""The reconciler: replays unapplied events through the handlers, with compare-before-apply.

Also: ``reconcile_all`` / ``areconcile_all`` for a memory root, the startup sequence helper, and
``dry_run`` (replay into a scratch copy and diff it against the original).

How one round runs (design record: Startup recovery; Concurrency and consistency boundaries):

1. Under the character's lock, read the sentinel and the journal (one consistent snapshot). The
   tail is every event after the sentinel in file order; a missing, malformed, null or unknown
   sentinel means the whole body (handlers are idempotent).
2. For each event: under the lock, compare the on-disk sentinel with the value this round expects
   (the start value, then the id of the previous event) *before* running the handler. Equal: run
   the handler, then advance the sentinel to the event. A type without a handler, or a handler
   that raises, stops the round; the sentinel stays at the last success.
3. Different: another writer moved the sentinel. Nothing is applied or written; the sentinel is
   frozen for the rest of the round (rewinding it would return that writer's events to the tail),
   and the journal is re-read from this round's own last-applied position to the end and replayed
   in order, so queued repairs land first and newer payloads land after them.
4. After the queue drains, the journal is probed again from the round's own last-applied position;
   new events are replayed the same way, until a probe comes back empty or ``_MAX_FROZEN_RESCANS``
   probes were used (hitting the bound is logged with the number of events left behind).

Step 4 also runs in a round that did not freeze but replayed something. This package's
``record_and_save`` never moves the sentinel past an unapplied tail (README: no silent
orphaning), so a live write that lands while a round is replaying leaves the sentinel alone and
never triggers step 3; the round's older queued payloads may then overwrite its values. Probing
after the drain replays those newer events on top, so the newest payload for each entry wins
before the round ends, and the sentinel ends at the journal end. A round whose tail was empty
applied nothing and needs no probe.

Once such a round has caught up, that same writer legitimately moves the sentinel again. So at a
probe (not between two steps, where step 3 applies unchanged), a sentinel that another writer
moved to a later event is taken over instead of freezing the round, provided every event up to it
was appended after the round's last write: nothing the round replayed can have overwritten those
events, and their writers applied them on top. Likewise a journal replaced at that point (a
compaction, which our ``compact`` allows only with nothing pending) is taken over with its reset
sentinel. Anything else still freezes the round, as step 3 says. Without this, a round running
beside busy writers would freeze and re-apply their events, and under unbroken traffic leave
older values behind the sentinel.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journal import fs
from journal.events import JOURNAL_NAME, Event
from journal.handlers import HandlerRegistry, default_registry, try_apply
from journal.log import EventLog, check_character_name
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.stores import FolderStore, Store
from journal.tail import JournalTail

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

#: How many times a round probes the journal for newly appended events after its queue drains
#: (the memory server's newest value). Unbroken write traffic ends the round here.
_MAX_FROZEN_RESCANS = 8

#: Every ``ReplayStop.reason``: the diagnosis block reasons, plus ``sentinel_write`` (the handler
#: succeeded and persisted, but the sentinel could not be written; the event replays next time).
STOP_REASONS = (
    "no_handler",
    "handler_error",
    "view_drift",
    "corrupt_view",
    "corrupt_shard",
    "bad_shard_name",
    "sentinel_write",
)



@dataclass(frozen=True, slots=True)
class ReplayStop:
    """Where and why a round stopped before the end of the journal.

    Attributes:
        event_id: the event replay stopped at (it was not applied).
        index: its 0-based position among the journal's events in file order.
        type: its type (``""`` when the record had none).
        reason: one of :data:`STOP_REASONS`.
        message: the reason in words (for ``view_drift``: the entry and both hashes).
    """

    event_id: str
    index: int
    type: str
    reason: str
    message: str


@dataclass(slots=True)
class ReplayReport:
    """The outcome of one reconciliation round of one character (a value for the CLI and GUI).

    Attributes:
        character: the folder name.
        sentinel_before: the sentinel id read at the start (``None`` for missing/null/malformed).
        sentinel_after: the sentinel id on disk at the end.
        tail: events that were pending when the round started.
        applied: ids of the events whose handler returned, in order (an id repeats when a frozen
            round replays it again).
        changed: how many of those reported a change.
        stopped: where replay stopped, if it did.
        frozen: another writer moved the sentinel during the round; the round froze it.
        rescans: journal probes made after a drain (at most ``_MAX_FROZEN_RESCANS``).
        left_behind: events after this round's own last-applied position when the probe bound was
            hit. With a frozen sentinel they sit behind it and no later boot replays them; without,
            they are still pending.
        rebased: times a probe found that another writer had moved the sentinel (or replaced the
            journal) after this round's last step, and the round continued from that sentinel
            instead of freezing (see the module docstring).
        cancelled: the caller asked to stop between events.
        until_reached: replay stopped on purpose after the requested event.
        temp_files_removed: leftover temp files of interrupted atomic writes removed before the
            round (relative to the character folder).
    """

    character: str
    sentinel_before: str | None = None
    sentinel_after: str | None = None
    tail: int = 0
    applied: list[str] = field(default_factory=list)
    changed: int = 0
    stopped: ReplayStop | None = None
    frozen: bool = False
    rescans: int = 0
    left_behind: int = 0
    rebased: int = 0
    cancelled: bool = False
    until_reached: bool = False
    temp_files_removed: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Nothing stopped the round and nothing was left behind or cancelled."""
        return self.stopped is None and not self.cancelled and self.left_behind == 0


@dataclass
class ReconcileHooks:
    """Test seams, each called *outside* the character lock, so a test can run a live writer (which
    takes that lock) at an exact point of a round.

    Attributes:
        before_event: before the compare-and-apply step of an event.
        after_event: after an event was applied (and the sentinel advanced, unless frozen).
        before_probe: before probe number ``n`` (1-based) re-reads the journal.
    """

    before_event: Callable[[Event], None] | None = None
    after_event: Callable[[Event], None] | None = None
    before_probe: Callable[[int], None] | None = None


def _sweep_temp_files(char_dir: Path, durable: bool) -> list[str]:
    """Best effort: a leftover temp file is harmless to replay, so a failure to remove one is
    logged and the round goes on (the next round retries)."""
    removed: list[str] = []
    for sub in ("", REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        try:
            removed += [f"{sub}/{n}" if sub else n for n in fs.sweep_temp_files(char_dir / sub, durable=durable)]
        except OSError as exc:
            log.warning("%s: could not remove leftover temp files: %s", char_dir / sub, exc)
    return removed


class _JournalFollower:
    """The events of one journal, followed by a :class:`~journal.tail.JournalTail`.

    A journal that shrank or was replaced (compaction) is read again from the start. An
    unterminated last line is offered as an event when it parses (as :func:`read_journal` does),
    but stays uncommitted: the next refresh classifies it again, completed or not. The events are
    always those :func:`journal.reader.read_journal` would return for the file at that moment.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tail = JournalTail(path)
        self.events: list[Event] = []
        self._index: dict[str, int] = {}
        self._committed = 0

    def _add(self, events: list[Event]) -> None:
        for ev in events:
            self._index[ev.event_id] = len(self.events)
            self.events.append(ev)

    def refresh(self) -> bool:
        """Take in what was appended since the last refresh.

        Returns:
            Whether the journal was replaced, shrank or disappeared since (it was read afresh).

        Raises:
            OSError: the journal exists but cannot be read.
        """
        for ev in self.events[self._committed :]:
            self._index.pop(ev.event_id, None)
        del self.events[self._committed :]
        update = self._tail.poll()
        if update.reset:
            self.events, self._index = [], {}
        self._add(update.events)
        self._committed = len(self.events)
        self._add(self._tail.provisional()[0])
        return update.reset

    @property
    def size(self) -> int:
        """Bytes read so far (the journal's size at the last refresh)."""
        return self._tail.size

    def index(self, event_id: str) -> int:
        return self._index.get(event_id, -1)

    def after(self, event_id: str | None) -> list[Event]:
        """Events after ``event_id``; the whole body when it is ``None`` or not in the journal."""
        i = self._index.get(event_id, -1) if event_id is not None else -1
        return self.events[i + 1 :]


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _claimed_after(follower: _JournalFollower, own_last: str | None, current: str | None, own_end: int) -> bool:
    """Whether sentinel ``current`` is later in the journal than ``own_last`` and every event up to
    it was appended after byte ``own_end`` (after the round's last write, so nothing the round
    replayed can have overwritten it: its writer applied it on top)."""
    pos = follower.index(current) if current is not None else -1
    start = follower.index(own_last) if own_last is not None else -1
    if pos < 0 or (own_last is not None and start < 0) or pos <= start:
        return False
    return all(ev.offset >= own_end for ev in follower.events[start + 1 : pos + 1])


class Reconciler:
    """Replays each character's unapplied events in file order (design record: Startup recovery).

    Args:
        event_log: gives the folders and the per-character locks shared with live writers.
        registry: event type → handler (default: the five production handlers).
        store_factory: builds the store for a character folder (default: the durable folder).
            Called once per round.
        hooks: test seams.
    """

    def __init__(
        self,
        event_log: EventLog,
        registry: HandlerRegistry | None = None,
        *,
        store_factory: Callable[[Path], Store] | None = None,
        hooks: ReconcileHooks | None = None,
    ) -> None:
        self.event_log = event_log
        self.registry = registry if registry is not None else default_registry()
        self.store_factory = store_factory or (lambda cd: FolderStore(cd))
        self.hooks = hooks or ReconcileHooks()

    def reconcile(
        self,
        character: str,
        *,
        until: str | None = None,
        should_continue: Callable[[], bool] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ReplayReport:
        """Replay the events after the sentinel, stopping at the first one that cannot be applied.

        See the module docstring for the whole round (compare-before-apply, freezing, probes).

        Args:
            until: stop (successfully) after applying this event id. When it is not among the
                pending events, nothing is applied.
            should_continue: polled between events; returning False cancels the round. Every
                completed step is the reconciler's own, so a cancelled folder is consistent.
            on_progress: ``(done, total)`` after each event; ``total`` grows if probes find more.

        Raises:
            OSError: the journal exists but cannot be read (nothing was applied).
        """
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        lock = self.event_log.lock(character)
        follower = _JournalFollower(cd / JOURNAL_NAME)
        report = ReplayReport(character)
        hooks = self.hooks
        with lock:
            if isinstance(store, FolderStore):
                # Crash recovery includes the temp files of interrupted atomic writes: nothing else
                # removes them. Under the lock, no atomic write of this process is in flight.
                report.temp_files_removed = _sweep_temp_files(cd, store.durable)
            # One consistent starting point: no writer of this process between these two reads.
            expected = store.read_sentinel().event_id
            follower.refresh()
        # Journal bytes that existed when this round last wrote: only events appended before that
        # can have been overwritten by the round's older payloads.
        own_end = follower.size
        report.sentinel_before = own_last = expected
        queue = follower.after(expected)
        report.tail = len(queue)
        if until is not None and all(ev.event_id != until for ev in queue):
            report.sentinel_after = expected
            return report

        frozen = False
        done = 0
        i = 0
        while True:
            if i < len(queue):
                ev = queue[i]
                if should_continue is not None and not should_continue():
                    report.cancelled = True
                    break
                if hooks.before_event is not None:
                    hooks.before_event(ev)
                stop: ReplayStop | None = None
                conflict = False
                with lock:
                    if not frozen and store.read_sentinel().event_id != expected:
                        conflict = True  # another writer moved it: apply nothing, write nothing
                    else:
                        stop, changed = self._apply(store, ev, follower.index(ev.event_id))
                        if stop is None and not frozen:
                            try:
                                store.write_sentinel(ev.event_id)
                                own_end = _size(follower.path)
                            except OSError as exc:
                                stop = ReplayStop(
                                    ev.event_id,
                                    follower.index(ev.event_id),
                                    ev.type,
                                    "sentinel_write",
                                    f"the handler succeeded and persisted, but the sentinel write failed: {exc}; "
                                    "the event replays (idempotently) next time",
                                )
                if conflict:
                    frozen = report.frozen = True
                    log.warning(
                        "%s: another writer moved the sentinel before event %s; the sentinel is frozen for the "
                        "rest of the round, which replays the journal from its own last-applied position",
                        character,
                        ev.event_id,
                    )
                    follower.refresh()
                    queue, i = follower.after(own_last), 0
                    continue
                if stop is not None:
                    report.stopped = stop
                    if frozen:
                        log.warning(
                            "%s: replay stopped at %s (%s) behind a sentinel another writer moved: %s",
                            character,
                            ev.event_id,
                            stop.reason,
                            stop.message,
                        )
                    break
                report.applied.append(ev.event_id)
                report.changed += changed
                own_last = ev.event_id
                if not frozen:
                    expected = own_last
                done += 1
                i += 1
                if on_progress is not None:
                    on_progress(done, done + len(queue) - i)
                if hooks.after_event is not None:
                    hooks.after_event(ev)
                if until is not None and ev.event_id == until:
                    report.until_reached = True
                    break
                continue
            # The queue drained. A round that replayed nothing needs no probe (see module doc).
            if not frozen and report.tail == 0:
                break
            if report.rescans >= _MAX_FROZEN_RESCANS:
                follower.refresh()
                report.left_behind = len(follower.after(own_last))
                if report.left_behind:
                    if frozen:
                        log.warning(
                            "%s: new events kept arriving through all %d probes; %d event(s) are left behind the "
                            "frozen sentinel and no later boot replays them",
                            character,
                            _MAX_FROZEN_RESCANS,
                            report.left_behind,
                        )
                    else:
                        log.warning(
                            "%s: new events kept arriving through all %d probes; %d event(s) are left pending "
                            "after the sentinel for the next round",
                            character,
                            _MAX_FROZEN_RESCANS,
                            report.left_behind,
                        )
                break
            if hooks.before_probe is not None:
                hooks.before_probe(report.rescans + 1)
            report.rescans += 1
            with lock:
                replaced = follower.refresh()
                if not frozen:
                    current = store.read_sentinel().event_id
                    if replaced or (current != expected and _claimed_after(follower, own_last, current, own_end)):
                        # Another writer moved the sentinel (or compacted the journal) after this
                        # round's last write: its claim covers only events this round could not
                        # have overwritten, so the round continues from there instead of freezing.
                        report.rebased += 1
                        log.info("%s: continuing from the sentinel another writer set after the last step", character)
                        expected = own_last = current
                        if replaced:
                            own_end = 0
            queue, i = follower.after(own_last), 0
            if not queue:
                break
        report.sentinel_after = store.read_sentinel().event_id
        return report

    def _apply(self, store: Store, ev: Event, index: int) -> tuple[ReplayStop | None, bool]:
        stop, changed = try_apply(self.registry, store, ev.type, ev.payload)
        if stop is not None:
            return ReplayStop(ev.event_id, index, ev.type, *stop), False
        return None, changed

    def repair(self, character: str, event_ids: Iterable[str]) -> ReplayReport:
        """Re-apply the handlers of the given events (orphaned archive events) in journal order,
        without reading or moving the sentinel. Stops at the first failure.

        Raises:
            OSError: the journal exists but cannot be read.
        """
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        wanted = set(event_ids)
        report = ReplayReport(character)
        with self.event_log.lock(character):
            follower = _JournalFollower(cd / JOURNAL_NAME)
            follower.refresh()
            report.sentinel_before = report.sentinel_after = store.read_sentinel().event_id
            todo = [(i, ev) for i, ev in enumerate(follower.events) if ev.event_id in wanted]
            report.tail = len(todo)
            for i, ev in todo:
                stop, changed = self._apply(store, ev, i)
                if stop is not None:
                    report.stopped = stop
                    break
                report.applied.append(ev.event_id)
                report.changed += changed
        return report

    async def areconcile(self, character: str, **kwargs: Any) -> ReplayReport:
        """Async twin of :meth:`reconcile`, run in a worker thread.

        It returns only when the round has finished, even if the awaiting task is cancelled
        meanwhile (the cancellation is re-raised afterwards): a round is never left running
        behind a caller that moved on.
        """
        import asyncio  # here, not at the top: only the async twins need it (~35 ms to import)

        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, functools.partial(self.reconcile, character, **kwargs))
        results = await _finish_all([future])
        result = results[0]
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, ReplayReport)
        return result

    def characters(self) -> list[str]:
        """Character folders under the root (dot-folders, links, files and invalid names ignored)."""
        try:
            entries = sorted(os.scandir(self.event_log.root), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        names = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                check_character_name(entry.name)
            except ValueError:
                continue
            names.append(entry.name)
        return names

    def reconcile_all(self, characters: Iterable[str] | None = None) -> dict[str, ReplayReport]:
        """Reconcile every character (or the given ones), one after another."""
        return {c: self.reconcile(c) for c in (self.characters() if characters is None else characters)}

    async def areconcile_all(self, characters: Iterable[str] | None = None) -> dict[str, ReplayReport]:
        """Reconcile every character (or the given ones) concurrently, each in a worker thread, and
        return only when every round has finished.

        A failing round does not cut the others short; cancelling the awaiting task does not
        either (it is re-raised once all rounds have finished).

        Raises:
            ExceptionGroup: after all rounds finished, when any of them raised (e.g. an unreadable
                journal); it holds every such exception.
        """
        import asyncio

        names = list(self.characters() if characters is None else characters)
        loop = asyncio.get_running_loop()
        futures = [loop.run_in_executor(None, functools.partial(self.reconcile, c)) for c in names]
        results = await _finish_all(futures)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            failed = [n for n, r in zip(names, results, strict=True) if isinstance(r, BaseException)]
            raise BaseExceptionGroup(f"reconciliation failed for {', '.join(failed)}", errors)
        return {n: r for n, r in zip(names, results, strict=True) if isinstance(r, ReplayReport)}


async def _finish_all(futures: list[asyncio.Future[ReplayReport]]) -> list[ReplayReport | BaseException]:
    """Wait until every future is done, even across cancellation of the caller (re-raised after)."""
    import asyncio

    if not futures:
        return []
    gathered = asyncio.gather(*futures, return_exceptions=True)
    cancelled = False
    while True:
        try:
            results: list[ReplayReport | BaseException] = await asyncio.shield(gathered)
            break
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return results


async def startup_sequence(
    reconciler: Reconciler,
    resume_outbox: Callable[[], Awaitable[Any] | Any],
    characters: Iterable[str] | None = None,
) -> tuple[dict[str, ReplayReport], Any]:
    """The startup order of the design record: reconcile every character, *then* resume the outbox.

    The order is load-bearing. Replay and outbox operations write the same view files, but their
    read points differ: a replay handler loads, mutates and saves inside the journal lock, while
    the memory server's live writers load the whole view *outside* that lock and only then hand it
    to ``record_and_save``. If the two overlapped, a live writer could save a pre-replay snapshot
    over a just-completed repair, with the sentinel already past the event: silent, permanent loss.
    Resumed outbox operations are background tasks and reconciliation is awaited to completion
    (every character, even when one fails or the caller is cancelled), so running reconciliation
    first removes the overlap entirely. The reverse dependency does not exist: a resumed operation
    emits its own events through ``record_and_save``, which applies them itself.

    ``resume_outbox`` is called only after every round has finished. If it returns an awaitable
    (the scan that spawns the outbox tasks), that is awaited; the tasks it spawns are not (as
    upstream: they may overlap later startup steps). Its result is returned with the reports.

    Raises:
        ExceptionGroup: a round raised; the outbox is then not resumed (the caller decides).
    """
    reports = await reconciler.areconcile_all(characters)
    resumed = resume_outbox()
    if inspect.isawaitable(resumed):
        resumed = await resumed
    return reports, resumed
