"""The reconciler: replays unapplied events through the handlers, with compare-before-apply and
per-entry holds. Also ``reconcile_all`` / ``areconcile_all`` and the startup sequence helper.

One round (design record: Startup recovery; Concurrency and consistency boundaries):

1. Under the character's lock, read the sentinel, the applied set (:mod:`journal.appliedset`), the
   parked events (:mod:`journal.park`) and the journal. The tail is every event after the
   sentinel; a missing, malformed, null or unknown sentinel means the whole body.
2. Each event, in order, decided by the tail-decision engine (:class:`journal.engine.TailPass`,
   the one home of these decisions, which the diagnosis and the plan read too): a parked one is
   never applied. One the valid applied set names is not run again, unless an event sharing one
   of its entries was applied earlier in this round (then it runs again after it: the newest
   payload for each entry wins). Any other is admitted or held per entry; an admitted one runs,
   after comparing the on-disk sentinel with the value the round expects. A handler that fails
   holds the event's entries (or everything) and the round goes on.
3. The sentinel. While every event so far is settled (applied, already applied, parked) and no
   applied set was valid at the start, it advances after each event, as the server's does. After
   the first held event it stays just before it, so the memory server, reading the same folder,
   stops there as before; what is applied past it is recorded in the applied set bound to that
   sentinel. A round that started with a valid applied set moves the sentinel once, at the end,
   over the longest settled run, then rewrites the set (removed when nothing is left beyond).
   Either way the sentinel never names an event the memory server's reader cannot see (one
   recovered from a glued line, memory-format §9.3; :class:`journal.appliedset.SentinelRun`): it
   stops at the last visible settled event, and the invisible applied ones after it are recorded
   in the applied set. A sentinel found on such an event (the server's own live write) is moved
   back to the last visible event before it the same way.
4. A different sentinel before a handler runs: another writer moved it. Nothing is applied or
   written; the sentinel (and the applied set) is frozen for the rest of the round, and the
   journal is re-read from the round's own position and replayed in order, holds included.
5. After the queue drains, the journal is probed again from the round's position, until a probe
   comes back empty or ``_MAX_FROZEN_RESCANS`` probes were used (logged, with the number left
   behind). The applied set is written under the same lock as the empty probe.

Step 5 also runs in a round that did not freeze but applied something, or holds something, or has
an applied set to keep. Our ``record_and_save`` never moves the sentinel past an unapplied tail: a
live write during a round records itself in the applied set instead, and the probe takes it in.
The round's older payloads may have overwritten its values; then it runs again on top (step 2),
so the newest payload wins before the round ends. A round that applied nothing and has nothing to
record needs no probe.

At a probe (not between two steps, where step 4 applies), a sentinel another writer moved to a
later event is taken over instead of freezing, provided every event up to it was appended after
the round's last write (nothing the round replayed can have overwritten them); likewise a journal
replaced then (a compaction). Holds and the applied set then start afresh from that sentinel: what
lies before it is behind the sentinel now, by that writer's claim. Without this, a round beside
busy writers would freeze and re-apply their events, and under unbroken traffic leave older values
behind the sentinel.
"""

from __future__ import annotations

import errno
import functools
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journal import fs
from journal.appliedset import (
    SentinelRun,
    applied_beyond,
    applied_set_valid,
    read_applied_set,
    record_step,
    remove_applied_set,
    sentinel_run,
    write_applied_set,
)
from journal.engine import TailPass, settles_record
from journal.errors import ViewCorruptError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Clock, Event
from journal.handlers import HandlerRegistry, default_registry, try_apply
from journal.log import EventLog, check_character_name
from journal.park import ParkedRead, is_parked, read_parked
from journal.replayreport import ReplayReport as ReplayReport  # re-exported
from journal.replayreport import ReplayStop as ReplayStop
from journal.serverrules import server_reader
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.stores import FolderStore, Store
from journal.tail import JournalTail

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

#: How many times a round probes the journal for newly appended events after its queue drains
#: (the memory server's newest value). Unbroken write traffic ends the round here.
_MAX_FROZEN_RESCANS = 8

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
        # Lines whose event the memory server's reader cannot see (serverrules.server_reader):
        # of the committed lines, and of the provisional last line.
        self._hidden: set[int] = set()
        self._hidden_provisional: frozenset[int] = frozenset()

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
            self._hidden = set()
        self._add(update.events)
        self._hidden |= server_reader(update.defects, self._tail.bom_lines).hidden_lines
        self._committed = len(self.events)
        provisional, defects = self._tail.provisional()
        self._add(provisional)
        self._hidden_provisional = server_reader(defects).hidden_lines
        return update.reset

    @property
    def size(self) -> int:
        """Bytes read so far (the journal's size at the last refresh)."""
        return self._tail.size

    def index(self, event_id: str) -> int:
        return self._index.get(event_id, -1)

    def visible(self, index: int) -> bool:
        """Whether the memory server's reader can see event number ``index`` (memory-format §9.3)."""
        line = self.events[index].line
        return line not in self._hidden and line not in self._hidden_provisional

    def _behind(self, event_id: str | None) -> Iterator[tuple[str, bool]]:
        i = self._index.get(event_id, -1) if event_id is not None else -1
        while i >= 0:
            yield self.events[i].event_id, self.visible(i)
            i -= 1

    def run_from(self, event_id: str | None) -> SentinelRun:
        """The settled run that starts at sentinel ``event_id`` (:func:`journal.appliedset.sentinel_run`)."""
        return sentinel_run(event_id, self._behind(event_id))

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


def _stop(ev: Event, index: int, reason: str, message: str) -> ReplayStop:
    return ReplayStop(ev.event_id, index, ev.type, reason, message)


def _read_parked(char_dir: Path) -> ParkedRead:
    """The parked events; a file that exists but cannot be read stops the round before anything is
    applied: which events a person parked would be unknown, and a parked event is never applied.

    Raises:
        OSError: ``events_parked.ndjson`` is a link leading out of the folder, not a regular
            file, or unreadable.
    """
    parked = read_parked(char_dir)
    if parked.state == "refused":
        raise OSError(errno.EACCES, f"{parked.message}; replay refuses to guess which events are parked")
    return parked


class Reconciler:
    """Replays each character's unapplied events in file order (design record: Startup recovery).

    Args:
        event_log: gives the folders and the per-character locks shared with live writers.
        registry: event type → handler (default: the five production handlers).
        store_factory: builds the store for a character folder (default: the durable folder).
            Called once per round.
        hooks: test seams.
        clock: gives the ``ts`` of the sentinel and the applied set the round writes (default:
            :func:`journal.events.now_iso`); the default store takes it too.
    """

    def __init__(
        self,
        event_log: EventLog,
        registry: HandlerRegistry | None = None,
        *,
        store_factory: Callable[[Path], Store] | None = None,
        hooks: ReconcileHooks | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.event_log = event_log
        self.registry = registry if registry is not None else default_registry()
        self.store_factory = store_factory or (lambda cd: FolderStore(cd, clock=clock))
        self.hooks = hooks or ReconcileHooks()
        self.clock = clock

    def reconcile(
        self,
        character: str,
        *,
        until: str | None = None,
        should_continue: Callable[[], bool] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ReplayReport:
        """Replay the events after the sentinel, holding per entry what cannot be applied.

        See the module docstring for the whole round (holds, the applied set, compare-before-apply,
        freezing, probes).

        Args:
            until: stop after this event id (applied, or held: nothing after it is looked at).
                When it is not among the pending events, nothing is applied (the sentinel and the
                applied set are still settled, as a round without ``until`` settles them).
            should_continue: polled between events; returning False cancels the round. Every
                completed step is the reconciler's own, so a cancelled folder is consistent.
            on_progress: ``(applied, total)`` after each applied event; ``total`` grows if probes
                find more.

        Raises:
            OSError: the journal exists but cannot be read, ``events_parked.ndjson`` exists but
                cannot be read (which events a person parked is then unknown), or
                ``events_applied.json`` is not a regular file (a FIFO, a device: where the
                sentinel stands is unknown); nothing was applied.
        """
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        durable = bool(getattr(store, "durable", True))
        lock = self.event_log.lock(character)
        follower = _JournalFollower(cd / JOURNAL_NAME)
        report = ReplayReport(character)
        hooks = self.hooks
        with lock:
            if isinstance(store, FolderStore):
                # Crash recovery includes the temp files of interrupted atomic writes: nothing else
                # removes them. Under the lock, no atomic write of this process is in flight.
                report.temp_files_removed = _sweep_temp_files(cd, store.durable)
            # One consistent starting point: no writer of this process between these reads.
            sentinel = store.read_sentinel()
            if sentinel.state == "refused":
                raise OSError(
                    errno.EINVAL,
                    f"{SENTINEL_NAME} {sentinel.message}: where the sentinel stands is unknown, so replay refuses "
                    "to run (nothing was applied)",
                    str(cd / SENTINEL_NAME),
                )
            parked = _read_parked(cd)
            aset = read_applied_set(cd, sentinel)
            follower.refresh()
        # Journal bytes that existed when this round last wrote: only events appended before that
        # can have been overwritten by the round's older payloads.
        own_end = follower.size
        report.sentinel_before = sentinel.event_id
        st = TailPass(
            sentinel.event_id, applied_beyond(aset, sentinel.event_id), follower.run_from(sentinel.event_id), parked
        )
        queue = follower.after(st.expected)
        report.tail = len(queue)
        if until is not None and all(ev.event_id != until for ev in queue):
            # Nothing in scope to apply; what the pass settles without running anything (a sentinel
            # on an event the server cannot see, a stale applied set) is still written.
            if settles_record(aset.state != "missing", st.has_record, False):
                with lock:
                    self._commit(cd, store, durable, follower, st, report)
            report.sentinel_after = store.read_sentinel().event_id
            return report

        frozen = False
        record = aset.state != "missing"  # a file is on disk: the end of the round rewrites or removes it
        committed = False
        done = 0
        i = 0
        while True:
            if i < len(queue):
                ev = queue[i]
                eid = ev.event_id
                if should_continue is not None and not should_continue():
                    report.cancelled = True
                    break
                if hooks.before_event is not None:
                    hooks.before_event(ev)
                index = follower.index(eid)
                admission = st.admit(ev)
                parked_now, skip = admission.kind == "parked", admission.kind == "already"
                payload, entries = admission.payload, admission.entries
                if admission.kind == "held":
                    report.held.append(eid)
                    st.held(eid)
                    i += 1
                    if until is not None and eid == until:
                        break
                    continue
                stop: ReplayStop | None = None
                conflict = False
                changed = False
                run = not (parked_now or skip)
                visible = follower.visible(index)
                # The sentinel never names an event the memory server cannot see (SentinelRun).
                advance = not frozen and st.eager and st.settled and visible
                if run or advance:  # a step that writes: compare first
                    with lock:
                        if not frozen and store.read_sentinel().event_id != st.expected:
                            conflict = True  # another writer moved it: apply nothing, write nothing
                        else:
                            if run:
                                stop, changed = self._apply(store, ev, index, payload)
                                if stop is None:
                                    own_end = _size(follower.path)
                            if stop is None and advance:
                                try:
                                    store.write_sentinel(eid)
                                except OSError as exc:
                                    stop = _stop(
                                        ev,
                                        index,
                                        "sentinel_write",
                                        f"the event is applied, but the sentinel write failed: {exc}; "
                                        "it replays (idempotently) next time",
                                    )
                if conflict:
                    frozen = report.frozen = True
                    log.warning(
                        "%s: another writer moved the sentinel before event %s; the sentinel is frozen for the "
                        "rest of the round, which replays the journal from its own position",
                        character,
                        eid,
                    )
                    follower.refresh()
                    queue, i = follower.after(st.pos), 0
                    continue
                if stop is not None and stop.reason == "sentinel_write":
                    report.blocks.append(stop)
                    report.stopped = report.stopped or stop
                    break  # the round stops here, as it always did (the event replays next time)
                if stop is not None:
                    st.blocked(eid, index, entries, stop.reason)
                    report.blocks.append(stop)
                    report.stopped = report.stopped or stop
                    report.held.append(eid)
                    log.warning(
                        "%s: event #%d (%s) cannot be applied: %s: %s; %s",
                        character,
                        index,
                        ev.type or "(missing type)",
                        stop.reason,
                        stop.message,
                        "everything after it is held" if st.holds.everything else "the entries it touches are held",
                    )
                    i += 1
                    if until is not None and eid == until:
                        break
                    continue
                i += 1
                if parked_now:
                    report.parked.append(eid)
                    st.parked(eid, visible)
                elif skip:
                    report.skipped.append(eid)
                    st.applied(eid, entries, ran=False, visible=visible)
                else:
                    report.applied.append(eid)
                    report.changed += changed
                    st.applied(eid, entries, ran=True, visible=visible)
                    done += 1
                    if on_progress is not None:
                        on_progress(done, done + len(queue) - i)
                    if hooks.after_event is not None:
                        hooks.after_event(ev)
                if until is not None and eid == until:
                    report.until_reached = True
                    break
                continue
            # The queue drained. A round that applied nothing and has nothing to record needs no
            # probe (see the module doc).
            if not frozen and not report.applied and not (record or st.has_record or report.held):
                break
            if report.rescans >= _MAX_FROZEN_RESCANS:
                follower.refresh()
                report.left_behind = len(follower.after(st.pos))
                if report.left_behind:
                    log.warning(
                        "%s: new events kept arriving through all %d probes; %d event(s) are left %s",
                        character,
                        _MAX_FROZEN_RESCANS,
                        report.left_behind,
                        "behind the frozen sentinel and no later boot replays them"
                        if frozen
                        else "pending after the sentinel for the next round",
                    )
                break
            if hooks.before_probe is not None:
                hooks.before_probe(report.rescans + 1)
            report.rescans += 1
            with lock:
                replaced = follower.refresh()
                if not frozen:
                    now = store.read_sentinel()
                    current = now.event_id
                    if replaced or (current != st.expected and _claimed_after(follower, st.pos, current, own_end)):
                        # Another writer moved the sentinel (or compacted the journal) after this
                        # round's last write: its claim covers only events this round could not
                        # have overwritten, so the round continues from there instead of freezing.
                        report.rebased += 1
                        log.info("%s: continuing from the sentinel another writer set after the last step", character)
                        st = TailPass(current, (), follower.run_from(current), parked)
                        record = True
                        if replaced:
                            own_end = 0
                    elif current == st.expected:
                        # A live write of ours recorded itself in the applied set meanwhile.
                        fresh = read_applied_set(cd, now)
                        if applied_set_valid(fresh, current):
                            st.rerun.add(fresh.applied)
                            record = True
                queue, i = follower.after(st.pos), 0
                if not queue and not frozen:
                    self._commit(cd, store, durable, follower, st, report)
                    committed = True
            if not queue:
                break
        sentinel_failed = any(b.reason == "sentinel_write" for b in report.blocks)
        if not (committed or frozen or sentinel_failed) and settles_record(record, st.has_record, bool(report.held)):
            with lock:
                self._commit(cd, store, durable, follower, st, report)
        hs = st.holds
        report.held_entries = sorted(hs.entries)
        report.held_everything = hs.everything
        report.sentinel_after = store.read_sentinel().event_id
        return report

    def _commit(
        self, cd: Path, store: Store, durable: bool, follower: _JournalFollower, st: TailPass, report: ReplayReport
    ) -> None:
        """The end of a round that did not freeze (caller holds the lock): move the sentinel over
        the settled run, then record what stays applied past it, or remove the record."""
        on_disk = store.read_sentinel()
        if on_disk.event_id != st.expected:
            log.warning(
                "%s: another writer moved the sentinel at the end of the round; the applied set is not written",
                report.character,
            )
            return
        if st.advance_to != st.expected:
            try:
                store.write_sentinel(st.advance_to)
            except OSError as exc:
                self._record_failed(report, follower, st.advance_to, f"the sentinel write failed: {exc}")
                return
            st.expected = st.advance_to
            on_disk = store.read_sentinel()
        # What stays beyond the sentinel: the invisible applied events the sentinel could not name,
        # applied past the first held event, and ids of the applied set this round did not reach
        # (cancelled, until, probe bound).
        reached = follower.index(st.pos) if st.pos is not None else -1
        beyond = st.applied_beyond(follower.index, reached)
        st.committed(beyond)
        report.applied_beyond = beyond
        current = read_applied_set(cd, on_disk)
        try:
            step = record_step(current, on_disk, beyond)
            if step == "remove":
                remove_applied_set(cd)
            elif step == "write":
                write_applied_set(cd, on_disk, beyond, durable=durable, clock=self.clock)
        except (OSError, ViewCorruptError) as exc:
            report.applied_beyond = []
            self._record_failed(report, follower, st.expected, f"the applied set could not be written: {exc}")

    @staticmethod
    def _record_failed(report: ReplayReport, follower: _JournalFollower, at: str | None, why: str) -> None:
        i = follower.index(at) if at is not None else -1
        ev = follower.events[i] if i >= 0 else None
        stop = ReplayStop(
            at or "", i, ev.type if ev is not None else "", "sentinel_write",
            f"{why}; the events applied past the sentinel replay (idempotently) next time",
        )
        report.blocks.append(stop)
        report.stopped = report.stopped or stop
        log.warning("%s: %s", report.character, stop.message)

    def _apply(self, store: Store, ev: Event, index: int, payload: Any = None) -> tuple[ReplayStop | None, bool]:
        stop, changed = try_apply(self.registry, store, ev.type, ev.payload if payload is None else payload)
        if stop is not None:
            return ReplayStop(ev.event_id, index, ev.type, *stop), False
        return None, changed

    def repair(self, character: str, event_ids: Iterable[str]) -> ReplayReport:
        """Re-apply the handlers of the given events (orphaned archive events) in journal order,
        without reading or moving the sentinel. Stops at the first failure. A parked event is
        never applied: it is listed in ``parked`` instead.

        Raises:
            OSError: the journal, or ``events_parked.ndjson``, exists but cannot be read.
        """
        cd = self.event_log.char_dir(character)
        store = self.store_factory(cd)
        wanted = set(event_ids)
        report = ReplayReport(character)
        with self.event_log.lock(character):
            parked = _read_parked(cd)
            follower = _JournalFollower(cd / JOURNAL_NAME)
            follower.refresh()
            report.sentinel_before = report.sentinel_after = store.read_sentinel().event_id
            chosen = [(i, ev) for i, ev in enumerate(follower.events) if ev.event_id in wanted]
            report.parked = [ev.event_id for _, ev in chosen if is_parked(parked, ev.event_id)]
            todo = [(i, ev) for i, ev in chosen if not is_parked(parked, ev.event_id)]
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
