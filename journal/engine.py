"""The tail-decision engine: what our replay decides for each event after the sentinel (the one home
of that decision).

Replay takes the events after the sentinel in file order (design record: Startup recovery) and
decides, for each, one of :data:`DECISIONS`:

* ``parked``: a person parked it (:func:`journal.park.is_parked`): never applied, gone past;
* ``already``: the valid applied set names it and nothing of its entries ran earlier in this pass
  (:class:`journal.appliedset.Rerun`): applied before, not run again;
* ``held``: it touches an entry an earlier event that cannot be applied holds, or everything is
  held (:class:`journal.holds.Holds`): it waits, and ``held_by`` names the event it waits behind;
* ``applies``: its handler runs (:func:`journal.handlers.try_apply`) and returns;
* ``blocked``: its handler cannot be run or raises: it holds its entries (or everything).

Along the way the pass keeps where the sentinel goes (never onto an event the memory server's
reader cannot see: :class:`journal.appliedset.SentinelRun`) and what is applied past it (the applied
set a run writes).

Two drivers share :class:`TailPass`, the state of one pass:

* :func:`decide_tail`, a pure function: it runs the handlers on a store it is given (an in-memory
  overlay for the diagnosis) and returns every decision, the sentinel and the applied set a run
  would write. The diagnosis (``check``'s states and counts), the replay plan and the window read
  it.
* :class:`journal.reconcile.Reconciler`, which needs a live folder: it asks :meth:`TailPass.admit`
  for each event and runs the handler itself, under the character lock, after comparing the
  sentinel on disk (compare-and-freeze); it rescans and writes. The dry run is the reconciler on a
  scratch copy.

So every actor that predicts or performs our replay takes its decisions from here; the memory
server's own rules, where they differ, are :mod:`journal.serverrules`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from journal.appliedset import Rerun, SentinelRun
from journal.events import Event
from journal.handlers import HandlerRegistry, try_apply
from journal.holds import Entry, Holds, event_entries, stops_everything
from journal.park import ParkedRead, is_parked
from journal.stores import Store

#: The decisions, one per event after the sentinel.
DECISIONS = ("applies", "already", "held", "blocked", "parked")


@dataclass(frozen=True, slots=True)
class Admission:
    """What the pass says of the next event before any handler runs.

    Attributes:
        kind: ``parked``, ``already``, ``held`` or ``run`` (its handler is to run now).
        entries: the entries it touches (``None``: unknown, or not looked at because everything is
            held).
        payload: the parsed payload when it was looked at (parsed once, for the handler too).
        held_by: for ``held``: the index of the blocked event it waits behind (``None`` when that
            is not known, e.g. a pass continued from a live writer's record).
    """

    kind: str
    entries: frozenset[Entry] | None = None
    payload: Any = None
    held_by: int | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What replay decides for one event after the sentinel.

    Attributes:
        index: 0-based position among the journal's events.
        event_id, type: the record's.
        kind: one of :data:`DECISIONS`.
        reason: for ``blocked``: ``no_handler``, ``view_drift``, ``corrupt_view``,
            ``corrupt_shard``, ``bad_shard_name`` or ``handler_error``; for ``held``: ``held``;
            for ``parked``: ``parked``; else ``None``.
        message: the reason in words (the handler's message for ``blocked``).
        held_by: for ``held``: the index of the blocked event it waits behind.
        entries: the entries it touches (``None``: unknown).
        holds_everything: for ``blocked``: everything after it is held, not only its entries.
        changed: for ``applies``: whether its handler changed the store.
    """

    index: int
    event_id: str
    type: str
    kind: str
    reason: str | None = None
    message: str | None = None
    held_by: int | None = None
    entries: frozenset[Entry] | None = None
    holds_everything: bool = False
    changed: bool = False


class TailPass:
    """What one pass over the journal has settled so far: the state both drivers share.

    Call :meth:`admit` for each event in file order, then exactly one of :meth:`parked`,
    :meth:`applied`, :meth:`blocked` or :meth:`held` with what happened to it.

    Args:
        expected: the sentinel's event id (``None``: missing, malformed, null or unknown).
        skip: the ids the valid applied set names (:func:`journal.appliedset.applied_beyond`).
        run: the settled run that starts at the sentinel (:func:`journal.appliedset.sentinel_run`).
        parked: the parked events (:func:`journal.park.read_parked`); ``None``: none.
        per_entry: an event that cannot be applied holds only its entries (our rule); ``False``:
            it holds everything after it, as the memory server's replay stops at its first failure
            (memory-format §4.1 step 4; the server model runs the engine so).

    Attributes:
        expected: the sentinel the round expects on disk (the reconciler moves it along).
        eager: the sentinel advances after each settled event (no applied set was valid at the
            start); otherwise it moves once, at the end, to :attr:`advance_to`.
        settled: every event processed so far is applied, already applied, or parked.
        run: where the sentinel goes, and the invisible applied events after that point.
        pos: the last event processed (re-reads and probes continue after it).
        rerun: the ids the valid applied set names, and which of them run again.
        beyond: ids settled as applied after the first held event, in order.
        holds: what is held.
    """

    __slots__ = (
        "_holder",
        "_parked",
        "_per_entry",
        "_stopper",
        "beyond",
        "eager",
        "expected",
        "holds",
        "pos",
        "rerun",
        "run",
        "settled",
    )

    def __init__(
        self,
        expected: str | None,
        skip: Iterable[str],
        run: SentinelRun,
        parked: ParkedRead | None = None,
        *,
        per_entry: bool = True,
    ) -> None:
        self.expected = expected
        self.rerun = Rerun(skip)
        self.eager = not self.rerun.applied
        self.settled = True
        self.run = run
        self.pos = expected
        self.beyond: list[str] = []
        self.holds = Holds()
        self._parked = parked
        self._holder: dict[Entry, int] = {}
        self._stopper: int | None = None
        self._per_entry = per_entry

    @classmethod
    def for_server(cls, sentinel_event_id: str | None) -> TailPass:
        """A pass with the memory server's rules: no applied set, no park, and a stop of
        everything at its first failure (memory-format §4.1 step 4)."""
        return cls(sentinel_event_id, (), SentinelRun(sentinel_event_id), None, per_entry=False)

    # -- before the handler -------------------------------------------------------------------

    def admit(self, ev: Event) -> Admission:
        """What to do with the next event ``ev`` (in file order), before any handler runs.

        A ``held`` admission is already recorded (nothing else to call but :meth:`held`, which
        only moves the position).
        """
        eid = ev.event_id
        if self._parked is not None and is_parked(self._parked, eid):
            return Admission("parked")
        payload: Any = None
        entries = None
        if eid in self.rerun or not self.holds.everything:
            payload = ev.payload  # parsed once, for the entries and the handler
            entries = event_entries(ev.type, payload)
        if self.rerun.admit_applied(eid, entries):
            return Admission("already", entries, payload)
        if not self.holds.admit(entries):
            by = self._stopper if self._stopper is not None else self._holder_of(entries)
            for e in entries or ():
                if by is not None:
                    self._holder.setdefault(e, by)
            return Admission("held", entries, payload, by)
        return Admission("run", entries, payload)

    def _holder_of(self, entries: frozenset[Entry] | None) -> int | None:
        for e in entries or ():
            if e in self._holder:
                return self._holder[e]
        return None

    # -- after it -------------------------------------------------------------------------------

    def applied(self, event_id: str, entries: frozenset[Entry] | None, ran: bool, visible: bool) -> None:
        """``event_id`` is applied: run now (``ran``), or already (the applied set)."""
        if ran:
            self.rerun.note_applied(event_id, entries)
        self.settle(event_id, applied=True, visible=visible)

    def parked(self, event_id: str, visible: bool) -> None:
        """``event_id`` is parked: settled, never applied."""
        self.settle(event_id, applied=False, visible=visible)

    def settle(self, event_id: str, *, applied: bool, visible: bool) -> None:
        self.pos = event_id
        if self.settled:
            if self.run.settle(event_id, applied=applied, visible=visible) and self.eager:
                self.expected = event_id
        elif applied:
            self.beyond.append(event_id)

    def blocked(self, event_id: str, index: int, entries: frozenset[Entry] | None, reason: str) -> bool:
        """``event_id`` (number ``index``) could not be applied, for ``reason``: it holds its
        entries, or everything. Returns whether it holds everything after it."""
        everything = entries is None or stops_everything(reason) or not self._per_entry
        self.holds.hold(entries, reason)
        if everything:
            self.holds.hold(None, reason)  # the server's rule, or entries unknown: everything after it
        for e in entries or ():
            self._holder.setdefault(e, index)
        if everything and self._stopper is None:
            self._stopper = index
        self.held(event_id)
        return everything

    def held(self, event_id: str) -> None:
        """``event_id`` stays unapplied (held, or blocked): the sentinel stays before it."""
        self.pos = event_id
        self.settled = False

    def committed(self, beyond: list[str]) -> None:
        """The sentinel was written at :attr:`expected` and ``beyond`` recorded past it: the pass
        goes on from there (a later commit of the same round starts from this one)."""
        self.rerun.applied, self.beyond, self.eager = set(beyond), list(beyond), False
        self.run = SentinelRun(self.expected)

    # -- what a run writes ------------------------------------------------------------------------

    @property
    def advance_to(self) -> str | None:
        """Where the sentinel goes: the last visible event of the settled run."""
        return self.run.at

    @property
    def has_record(self) -> bool:
        """Whether the end of the round has something to write: a sentinel to move, ids beyond it."""
        return bool(self.beyond or self.rerun.applied or self.run.invisible) or self.advance_to != self.expected

    def applied_beyond(self, index: Callable[[str], int], reached: int) -> list[str]:
        """The ids a run records past the sentinel it leaves (:attr:`advance_to`), in journal
        order: the invisible applied events the sentinel could not name, those applied past the
        first held event, and ids of the applied set this pass did not reach (cancelled,
        ``until``, probe bound).

        Args:
            index: an event id's index in the journal (-1 when it is not there).
            reached: the index of the last event the pass processed.
        """
        carried = [sid for sid in self.rerun.applied if index(sid) > reached]
        base = index(self.advance_to) if self.advance_to is not None else -1
        return sorted({e for e in (*self.run.invisible, *self.beyond, *carried) if index(e) > base}, key=index)


def settles_record(record_on_disk: bool, has_record: bool, held: bool) -> bool:
    """Whether the end of a round settles the sentinel and the applied set (moves the one, writes
    or removes the other): when an applied set is on disk, when the pass has something to record
    (:attr:`TailPass.has_record`), or when it holds anything. The reconciler's rule, which the
    prediction of a run takes too."""
    return record_on_disk or has_record or held


@dataclass(slots=True)
class TailDecisions:
    """Every decision of one pass over the tail, and what a run writes.

    Attributes:
        decisions: one per event after the sentinel, in file order.
        sentinel_before: the sentinel the pass started from.
        sentinel_after: where a run leaves the sentinel.
        applied_beyond: the ids a run records in the applied set, in journal order (empty: the
            file is removed, or not written).
        held_entries: the entries held at the end; ``held_everything``: everything is held.
        has_record: the end of a run has something to record (:attr:`TailPass.has_record`): a
            sentinel to move, or ids to keep past it.
        until_reached: the pass stopped on purpose after its ``until`` event (applied, already
            applied or parked), as the reconciler's ``until_reached``.
        run: what the driver kept of the pass to predict a run's files with (the diagnosis's
            :class:`journal.diagnosis.pending.TailRun`, when asked for), else ``None``; not
            compared.
    """

    decisions: list[Decision] = field(default_factory=list)
    sentinel_before: str | None = None
    sentinel_after: str | None = None
    applied_beyond: list[str] = field(default_factory=list)
    held_entries: frozenset[Entry] = frozenset()
    held_everything: bool = False
    has_record: bool = False
    until_reached: bool = False
    run: Any = field(default=None, repr=False, compare=False)

    @property
    def moves_sentinel(self) -> bool:
        """Whether a run writes the sentinel (to :attr:`sentinel_after`)."""
        return self.sentinel_after != self.sentinel_before


#: How one event is applied: ``(index, event, payload) -> (None, changed)`` when it applied, or
#: ``((reason, message), False)`` where replay cannot apply it (:func:`journal.handlers.try_apply`).
Apply = Callable[[int, Event, Any], tuple[tuple[str, str] | None, bool]]


def handler_apply(registry: HandlerRegistry, store: Store, focus: Callable[[Any], None] | None = None) -> Apply:
    """Our replay's apply step: the registered handler on ``store`` (:func:`journal.handlers.try_apply`);
    ``focus`` is called with each payload first (a store that loads lazily)."""

    def apply(index: int, ev: Event, payload: Any) -> tuple[tuple[str, str] | None, bool]:
        del index
        if focus is not None:
            focus(payload)
        return try_apply(registry, store, ev.type, payload)

    return apply


def decide_tail(
    events: Iterable[tuple[int, Event, bool]],
    *,
    apply: Apply,
    tail_pass: TailPass,
    index: Callable[[str], int],
    until: str | None = None,
) -> TailDecisions:
    """Decide every event after the sentinel: the pure driver of :class:`TailPass`.

    The apply step runs the handlers on an overlay that never writes (for a prediction), in file
    order, exactly as the reconciler runs them (ours: :func:`handler_apply`; the memory server's,
    with its deviations: the server model's); nothing else is touched.

    Args:
        events: ``(index, event, visible)`` for each event after the sentinel, in file order
            (``visible``: the memory server's reader can see it, :func:`journal.serverrules.server_reader`).
        apply: how one admitted event is applied.
        tail_pass: the pass, started at the sentinel with the applied set and the parked events.
        index: an event id's index in the journal (-1 when it is not there).
        until: stop after the event with this id, whatever is decided for it, as the reconciler's
            ``until`` does (nothing after it is looked at). When no event has it, every event is
            decided: a caller that means the reconciler's "nothing in scope" passes no events.
    """
    st = tail_pass
    out = TailDecisions(sentinel_before=st.expected)
    add = out.decisions.append
    for i, ev, visible in events:
        eid, etype = ev.event_id, ev.type
        a = st.admit(ev)
        if a.kind == "parked":
            st.parked(eid, visible)
            add(Decision(i, eid, etype, "parked", "parked"))
        elif a.kind == "already":
            st.applied(eid, a.entries, ran=False, visible=visible)
            add(Decision(i, eid, etype, "already", entries=a.entries))
        elif a.kind == "held":
            st.held(eid)
            add(Decision(i, eid, etype, "held", "held", held_by=a.held_by, entries=a.entries))
        else:
            stop, changed = apply(i, ev, a.payload)
            if stop is None:
                st.applied(eid, a.entries, ran=True, visible=visible)
                add(Decision(i, eid, etype, "applies", entries=a.entries, changed=changed))
            else:
                code, message = stop
                everything = st.blocked(eid, i, a.entries, code)
                add(Decision(i, eid, etype, "blocked", code, message, entries=a.entries, holds_everything=everything))
        if until is not None and eid == until:
            out.until_reached = out.decisions[-1].kind in ("applies", "already", "parked")
            break
    out.sentinel_after = st.advance_to
    out.applied_beyond = st.applied_beyond(index, index(st.pos) if st.pos is not None else -1)
    out.held_entries = st.holds.entries
    out.held_everything = st.holds.everything
    out.has_record = st.has_record
    return out
