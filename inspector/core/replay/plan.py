"""Step 2: the plan (:func:`make_plan`): which events would apply, where replay would stop and why
(:func:`explain_block`), orphaned archive events, the per-file diff and the bytes a run writes, and
the fingerprints the plan saw; for the ``repair_journal`` scope, what the journal repair
(:mod:`journal.repair`) would move out of the journal instead. The real folder is only read.

The plan reads the journal once, in its diagnosis, whose pass of the tail-decision engine
(:mod:`journal.engine`) over the pending events, on an in-memory overlay of the views, is what a
run decides; the bytes a run writes are predicted from it (:func:`journal.dryrun.predict_run`).
Where that prediction cannot be exact (see there), and for orphan repair, the plan is the real
reconciler run on a scratch copy (:func:`journal.dryrun.dry_run`), as the apply will run it."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.advice import Surface
from inspector.core.reasons import REASONS, ReasonText
from inspector.core.replay.errors import BadInputError, FolderBusyError, PlanningCancelledError
from inspector.core.replay.fingerprints import fingerprint_folder
from inspector.core.replay.stamps import _now_iso
from inspector.core.replay.target import ReplayTarget
from journal.appliedset import read_applied_set
from journal.diagnosis import CharacterDiagnosis, EventInfo, diagnose_character
from journal.diagnosis.eventlist import find_events
from journal.dryrun import DryRun, FolderDiff, dry_run, predict_run
from journal.dryrun import leftover_temp_files as leftover_temp_files
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Clock, Event, entry_ref
from journal.handlers import HandlerRegistry
from journal.park import read_parked
from journal.repair import Fragment, JournalRepair, RepairRefusedError, plan_repair, undecodable_fragments
from journal.replayreport import ReplayReport, ReplayStop
from journal.views import read_sentinel

if TYPE_CHECKING:
    from journal.diagnosis.pending import TailRun
    from journal.diagnosis.scan import JournalScan

#: The engine's decisions (:data:`journal.engine.DECISIONS`) of events a run has still to apply.
UNAPPLIED_DECISIONS = ("applies", "held", "blocked")

# -- events, orphans, blocks ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedEvent:
    """One event of a plan: what it is and which entry it touches.

    Attributes:
        index: 0-based position among the journal's events.
        line: 1-based journal line.
    """

    index: int
    line: int
    event_id: str
    type: str
    ts: str
    entry: str | None

    @classmethod
    def of(cls, index: int, ev: Event) -> PlannedEvent:
        return cls(
            index,
            ev.line,
            ev.event_id,
            ev.type if isinstance(ev.type, str) else "",
            str(ev.ts or ""),
            entry_ref(ev.type, ev.payload),
        )

    @classmethod
    def of_info(cls, info: EventInfo) -> PlannedEvent:
        """From the diagnosis's view of the event (the same fields, already read)."""
        return cls(info.index, info.line, info.event_id, info.type, str(info.ts or ""), info.entry)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "event_id": self.event_id,
            "type": self.type,
            "entry": self.entry,
        }

    def label(self) -> str:
        entry = f" {self.entry}" if self.entry else ""
        return f"#{self.index} (line {self.line}) {self.type}{entry}  [{self.event_id}]"


@dataclass(frozen=True, slots=True)
class BlockExplanation:
    """Why replay cannot apply an event, in words, and what a person can do about it.

    Attributes:
        event_id, index, type: the event.
        reason: ``no_handler`` | ``view_drift`` | ``corrupt_view`` | ``corrupt_shard`` |
            ``bad_shard_name`` | ``handler_error`` | ``sentinel_write``.
        message: the technical message from the handler.
        title: one line.
        why: what it means for the folder.
        words: the reason's words, whose suggestions :meth:`actions` words for a surface.
    """

    event_id: str
    index: int
    type: str
    reason: str
    message: str
    title: str
    why: str
    words: ReasonText

    def actions(self, surface: Surface = "cli") -> tuple[str, ...]:
        """What a person can do, one suggestion per item, worded for ``surface``."""
        return self.words.actions_for(surface)

    def lines(self, surface: Surface = "cli") -> list[str]:
        out = [self.title, f"  reason: {self.reason} — {self.message}", f"  {self.why}", "  What you can do:"]
        out += [f"   - {a}" for a in self.actions(surface)]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "index": self.index,
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "explanation": self.why,
            "actions": list(self.actions("cli")),
        }


def explain_block(stop: ReplayStop) -> BlockExplanation:
    """Human text for a replay stop: what happened and what a person can do about it."""
    text = REASONS.get(stop.reason, REASONS["handler_error"])
    what = stop.type or "(missing type)"
    return BlockExplanation(
        stop.event_id,
        stop.index,
        stop.type,
        stop.reason,
        stop.message,
        f"Blocked at event #{stop.index} ({what}): it {text.title}.",
        text.why,
        text,
    )


@dataclass(frozen=True, slots=True)
class Orphan:
    """An archive event behind the sentinel whose entry is in neither the view nor its shard.

    Attributes:
        event: the event.
        archive: ``reflection_archive`` or ``persona_archive``.
        shard: the basename named by the event.
        entry_id: the archived entry.
        problem: ``None`` when a repair can put the entry back; else the reason it cannot
            (``bad_shard_name``, ``corrupt_shard``, ``corrupt_view``) and :attr:`block` explains it.
    """

    event: PlannedEvent
    archive: str
    shard: str
    entry_id: str
    problem: str | None = None
    block: BlockExplanation | None = None

    @property
    def repairable(self) -> bool:
        return self.problem is None


def find_orphaned_archive_events(
    char_dir: str | os.PathLike[str], diagnosis: CharacterDiagnosis | None = None
) -> list[Orphan]:
    """Archive events at or before the sentinel whose entry is lost, as the diagnosis finds them
    (:attr:`journal.diagnosis.CharacterDiagnosis.archive_orphans`).

    Only when the sentinel names an event of the journal: otherwise every event is pending and
    replay, not repair, is the way to recover them. Events whose shard name is invalid, whose
    shard is corrupt or whose view is corrupt are returned too, not repairable, with the reason.

    Args:
        diagnosis: the folder's diagnosis when the caller has it already (read otherwise).
    """
    d = diagnosis if diagnosis is not None else diagnose_character(Path(char_dir))
    events = d.events
    out: list[Orphan] = []
    for found in d.archive_orphans:
        if found.index >= len(events) or events[found.index].event_id != found.event_id:
            continue  # cannot happen within one diagnosis; kept against hand-built values
        pe = PlannedEvent.of_info(events[found.index])
        block = None
        if found.problem is not None:
            stop = ReplayStop(pe.event_id, pe.index, pe.type, found.problem, found.message)
            block = explain_block(stop)
        out.append(Orphan(pe, found.archive, found.shard, found.entry_id, found.problem, block))
    return out


# -- the plan -------------------------------------------------------------------------------------


#: What a replay can cover (:class:`Scope`).
SCOPE_KINDS = ("tail", "until", "repair", "park", "repair_journal")


@dataclass(frozen=True, slots=True)
class Scope:
    """What a replay covers.

    Attributes:
        kind: ``tail`` (every pending event, the default), ``until`` (the pending events up to and
            including ``until``), ``repair`` (re-apply orphaned archive events, sentinel unchanged),
            ``park`` (a person goes past the held event ``park``: it is recorded in
            ``events_parked.ndjson`` and never applied, then the tail is replayed) or
            ``repair_journal`` (move the bytes of the journal that are not UTF-8 into
            ``events.ndjson.damaged``, :mod:`journal.repair`; nothing is replayed).
        until: the last event id for ``until``.
        park: the held event id for ``park``.
    """

    kind: str = "tail"
    until: str | None = None
    park: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SCOPE_KINDS:
            raise ValueError(f"unknown scope {self.kind!r}")
        if (self.kind == "until") != (self.until is not None):
            raise ValueError("an 'until' scope needs an event id, and only it")
        if (self.kind == "park") != (self.park is not None):
            raise ValueError("a 'park' scope needs an event id, and only it")
        if self.until == "" or self.park == "":
            raise ValueError(f"an {self.kind!r} scope needs an event id; an empty one names no event")

    def describe(self) -> str:
        if self.kind == "until":
            return f"pending events up to and including {self.until}"
        if self.kind == "repair":
            return "repair orphaned archive events (the sentinel does not move)"
        if self.kind == "park":
            return f"park the held event {self.park} (never applied), then the pending tail"
        if self.kind == "repair_journal":
            return "repair the journal: move what is not UTF-8 into events.ndjson.damaged (nothing is replayed)"
        return "the pending tail"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "until": self.until}
        if self.park is not None:
            out["park"] = self.park
        return out


@dataclass(frozen=True, slots=True)
class ParkChoice:
    """The held event a ``park`` plan goes past, and why it was held.

    Attributes:
        event: the event.
        reason: why it is held, in words (recorded in ``events_parked.ndjson``).
        block: its own block explanation, when it could not be applied itself (not only held
            behind another event of its entry).
        released: held events that apply once it is parked.
    """

    event: PlannedEvent
    reason: str
    block: BlockExplanation | None
    released: list[PlannedEvent] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.event.to_json(),
            "reason": self.reason,
            "block": None if self.block is None else self.block.to_json(),
            "released": [e.event_id for e in self.released],
        }


@dataclass(slots=True)
class Plan:
    """What a guarded replay would do, predicted by a dry run of the engine (on a scratch copy only
    where the prediction cannot be exact; a pure value).

    Attributes:
        target: the character folder.
        scope: what is covered.
        created_at: when the plan was made (local ISO-8601).
        fingerprints: what the plan saw (:func:`fingerprint_folder`).
        sentinel_state: ``ok`` / ``missing`` / ``malformed`` / ``null`` / ``unknown_id``.
        sentinel_id: the sentinel's event id, when it names one.
        sentinel_index: its index among the events, when found.
        total_events: events in the journal.
        journal_present: whether there is a journal at all (a cloud-save export has none).
        pending: events after the sentinel.
        events: what would be applied (re-applied for ``repair``), in order.
        block: the first event replay cannot apply, and why (the first held event), if any.
        blocks: every event replay cannot apply, each explained (``block`` is the first).
        held: events that would stay held (not applied): those of ``blocks`` and every later one
            touching an entry they hold.
        applied_beyond: events after the sentinel already applied (the applied set), not run again.
        park: for ``park``: the event gone past and what that releases.
        journal_last: the journal's last event when the plan was made (the real run stops there).
        diff: the per-file diff of the dry run.
        predicted: relative path → bytes of each replay file after the dry run.
        dry_report: the dry run's reconciler report.
        orphans: orphaned archive events (repairable or not), shown in every scope.
        unrepairable: for ``repair``: orphans that cannot be repaired, each explained.
        temp_files: leftover temp files of interrupted atomic writes that the real run removes
            (the reconciler sweeps them before replaying; not for ``repair``).
        unapplied: the events after the sentinel not applied yet (neither in the applied set nor
            parked), in order: the choices for an ``until`` scope, from the engine's decisions.
        writes: the dry run writes something (a view, a shard, the sentinel, the applied set).
        predicted_applied_set: the bytes of ``events_applied_set.json`` after the dry run.
        journal_repair: for ``repair_journal``: what the repair moves out of the journal (no dry
            run is made: nothing is replayed).
        undecodable: the journal's fragments that are not UTF-8, in every scope (they stop the
            memory server's replay of the character; the ``repair_journal`` scope moves them out).
        predicted_by: ``engine`` (the diagnosis's pass predicted the bytes) or ``dry_run`` (the
            reconciler on a scratch copy), for ``repair_journal``: ``""``.
        journal_read: the journal as the plan's diagnosis read it, so that the look at the folder
            after the apply need not read it again while its fingerprint is the plan's
            (:func:`~inspector.core.replay.execute.folder_state`); not part of the JSON. It is big
            (~300 MB for a million events): :func:`~inspector.core.replay.execute.execute` lets it
            go once used, and the flow when a newer plan replaces this one.
    """

    target: ReplayTarget
    scope: Scope
    created_at: str
    fingerprints: dict[str, str | None]
    sentinel_state: str
    sentinel_id: str | None
    sentinel_index: int | None
    total_events: int
    journal_present: bool
    pending: int
    events: list[PlannedEvent]
    block: BlockExplanation | None
    diff: FolderDiff
    predicted: dict[str, bytes]
    dry_report: ReplayReport
    orphans: list[Orphan] = field(default_factory=list)
    unrepairable: list[Orphan] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)
    blocks: list[BlockExplanation] = field(default_factory=list)
    held: list[PlannedEvent] = field(default_factory=list)
    applied_beyond: list[str] = field(default_factory=list)
    park: ParkChoice | None = None
    journal_last: str | None = None
    unapplied: list[PlannedEvent] = field(default_factory=list)
    writes: bool = False
    predicted_applied_set: bytes | None = None
    journal_repair: JournalRepair | None = None
    undecodable: list[Fragment] = field(default_factory=list)
    predicted_by: str = ""
    journal_read: JournalScan | None = field(default=None, repr=False, compare=False)

    @property
    def char_dir(self) -> Path:
        assert self.target.char_dir is not None
        return self.target.char_dir

    @property
    def has_work(self) -> bool:
        """Whether applying would run at least one handler, record a park, or write anything (the
        sentinel moved off an event the server cannot see, a stale applied set removed, the journal
        repaired)."""
        if self.journal_repair is not None:
            return self.journal_repair.has_work
        return bool(self.events) or self.park is not None or self.writes

    @property
    def complete(self) -> bool:
        """Whether everything in scope would be applied (nothing blocked or unrepairable)."""
        return self.block is None and not self.unrepairable

    @property
    def apply_until(self) -> str | None:
        """The ``until`` the real run uses, so it never applies more than the plan shows: the
        requested event, or the journal's last event when the plan was made."""
        if self.scope.kind in ("repair", "repair_journal"):
            return None
        if self.scope.until is not None:
            return self.scope.until
        return self.journal_last

    @property
    def predicted_exit_code(self) -> int:
        """The exit code an apply of this plan would give: 0 when complete, else 1."""
        return 0 if self.complete else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope.to_json(),
            "created_at": self.created_at,
            "sentinel": {"state": self.sentinel_state, "event_id": self.sentinel_id, "index": self.sentinel_index},
            "events_in_journal": self.total_events,
            "pending": self.pending,
            "events": [e.to_json() for e in self.events],
            "stop": None if self.block is None else self.block.to_json(),
            "blocks": [b.to_json() for b in self.blocks],
            "held": [e.to_json() for e in self.held],
            "applied_beyond": list(self.applied_beyond),
            "park": None if self.park is None else self.park.to_json(),
            "unrepairable": [o.block.to_json() for o in self.unrepairable if o.block is not None],
            "temp_files_removed": list(self.temp_files),
            "diff": diff_to_json(self.diff),
            "journal_repair": None if self.journal_repair is None else self.journal_repair.to_json(),
            "undecodable_fragments": len(self.undecodable),
        }


def diff_to_json(diff: FolderDiff) -> dict[str, Any]:
    """A :class:`journal.dryrun.FolderDiff` as plain JSON."""
    return {
        "entries": [
            {
                "file": c.file,
                "entry": c.entry,
                "kind": c.kind,
                "fields": [{"field": f.field, "before": f.before, "after": f.after} for f in c.fields],
            }
            for c in diff.entries
        ],
        "shard_entries_added": [{"file": s.file, "entry_id": s.entry_id} for s in diff.shard_entries_added],
        "sentinel_before": diff.sentinel_before,
        "sentinel_after": diff.sentinel_after,
        "files_changed": list(diff.files_changed),
    }


def make_plan(
    target: ReplayTarget,
    scope: Scope | None = None,
    *,
    registry: HandlerRegistry | None = None,
    attempts: int = 3,
    clock: Clock | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Plan:
    """Plan a replay; the real folder is only read.

    The folder is fingerprinted before and after planning; if it changed meanwhile the plan is
    made again (at most ``attempts`` times), so a plan always describes one state of the folder.

    Raises:
        BadInputError: a zip target, an ``until`` event that is not pending, an
            ``events_parked.ndjson`` / ``events_applied_set.json`` that cannot be read (a FIFO, a
            folder, a link leading out of the folder, or too big), or, for ``repair_journal``, a
            journal or ``events.ndjson.damaged`` the repair cannot use (a link, not a regular
            file, unreadable): nothing is written.
        FolderBusyError: the folder kept changing.
        PlanningCancelledError: ``should_continue`` said stop (polled while the journal is read,
            every few MiB, and then between the steps of the plan); nothing was written.

    ``clock`` gives the ``ts`` the predicted run writes (the apply takes the same one, so a test
    can compare the bytes it writes with the plan's). ``on_progress(done, total)`` follows the
    read of the journal, in bytes.
    """
    scope = scope or Scope()
    if target.char_dir is None:
        raise BadInputError(f"{target.source} is a zip export: extract it to a folder first")
    cd = target.char_dir
    whole = scope.kind == "repair_journal"  # its plan names the journal it expects by its SHA-256

    def fingerprints() -> dict[str, str | None]:
        return fingerprint_folder(cd, whole_journal=True) if whole else fingerprint_folder(cd)

    for _ in range(attempts):
        before = fingerprints()
        plan = _plan_once(target, scope, registry, before, clock, _Progress(should_continue, on_progress))
        if fingerprints() == before:
            return plan
    raise FolderBusyError(f"{target.char_dir} kept changing while it was planned: a writer is active")


class _Progress:
    """How the plan reports progress and honours a cancel: as the diagnosis's ``progress`` callback
    (every few MiB of the journal; raising stops its read), and between the later steps of a plan
    that reported any. A quick plan (a small journal) neither reports nor polls: its caller's
    ``should_continue`` is polled between the events of the apply only, as before."""

    def __init__(
        self, should_continue: Callable[[], bool] | None, on_progress: Callable[[int, int], None] | None
    ) -> None:
        self.should_continue = should_continue
        self.on_progress = on_progress
        self.reported = False

    def check(self) -> None:
        if self.reported and self.should_continue is not None and not self.should_continue():
            raise PlanningCancelledError("planning was cancelled; nothing was written")

    def __call__(self, done: int, total: int) -> None:
        self.reported = True
        self.check()
        if self.on_progress is not None:
            self.on_progress(done, total)


def _named_events(scope: Scope, events: Any) -> Scope:
    """``scope`` with the event its ``until`` or ``park`` names, in the one event syntax of every
    command and the window (``#index``, an id, or the start of one:
    :func:`journal.diagnosis.eventlist.find_events`), written as that event's id. A name that fits
    several events is refused with them; one that fits none is left for the scope's own checks."""
    for name in ("until", "park"):
        text = getattr(scope, name)
        if text is None:
            continue
        found = find_events(events, text)
        if len(found) > 1:
            ids = ", ".join(f"#{i} {events[i].event_id}" for i in found[:5])
            raise BadInputError(
                f"{text!r} names {len(found)} events ({ids}{', …' if len(found) > 5 else ''}): give "
                "more of the id; nothing was written"
            )
        if found:
            scope = dataclasses.replace(scope, **{name: events[found[0]].event_id})
    return scope


def _plan_once(
    target: ReplayTarget,
    scope: Scope,
    registry: HandlerRegistry | None,
    fingerprints: dict[str, str | None],
    clock: Clock | None = None,
    progress: _Progress | None = None,
) -> Plan:
    cd = target.char_dir
    assert cd is not None
    progress = progress or _Progress(None, None)
    # One read of the journal for the plan: the diagnosis (events, the sentinel's position, the
    # orphaned archive events, and our replay's pass over the tail on an in-memory overlay).
    d = diagnose_character(cd, keep_run=True, progress=progress)
    progress.check()
    if d.journal.unreadable is not None:
        raise BadInputError(d.journal.unreadable)
    if d.sentinel.state == "refused":
        why = next((f.message for f in d.findings if f.code == "input.refused" and f.file == SENTINEL_NAME), "")
        raise BadInputError(
            f"{why or SENTINEL_NAME + ' is not a regular file'} (in {cd}): where the sentinel stands is unknown, so "
            "replay refuses to run; nothing was written"
        )
    events = d.events
    scope = _named_events(scope, events)
    run: TailRun | None = d.tail.run if d.tail is not None else None
    index_of = _event_index(d, run)
    sentinel = read_sentinel(cd)
    at_sentinel = d.sentinel
    state, sid, sindex = at_sentinel.state, at_sentinel.event_id, at_sentinel.index
    if scope.kind == "repair_journal":
        return _journal_repair_plan(target, scope, fingerprints, d)
    parked_read = read_parked(cd)
    if parked_read.state == "refused":
        raise BadInputError(_refused_file(cd, parked_read.message, "which events a person parked"))
    aset = read_applied_set(cd, sentinel)
    if aset.state == "refused":
        raise BadInputError(_refused_file(cd, aset.message, "which events are already applied past the sentinel"))
    # The tail's decisions are the engine's, as the diagnosis took them (journal.engine).
    decisions = d.tail.decisions if d.tail is not None else []
    already = [x.event_id for x in decisions if x.kind == "already"]
    parked = parked_read.ids
    unapplied = [PlannedEvent.of_info(events[x.index]) for x in decisions if x.kind in UNAPPLIED_DECISIONS]
    journal_last = events[-1].event_id if events else None
    orphans = find_orphaned_archive_events(cd, d)
    unrepairable: list[Orphan] = []
    park: ParkChoice | None = None
    if scope.kind == "until":
        assert scope.until is not None
        at = index_of(scope.until)
        if at is None:
            raise BadInputError(f"no event {scope.until} in the journal")
        if sindex is not None and at <= sindex:
            raise BadInputError(f"event {scope.until} (#{at}) is already applied (the sentinel is at #{sindex})")
        if scope.until in already:
            raise BadInputError(f"event {scope.until} (#{at}) is already applied (recorded past the sentinel)")
    # The engine's pass, for the scope (its bytes predicted without a copy), where it can be exact.
    fast = run if registry is None else None
    dry: DryRun | None = None
    predicted_by = "engine"
    if scope.kind == "repair":
        unrepairable = [o for o in orphans if not o.repairable]
        ids = [o.event.event_id for o in orphans if o.repairable]
        dry, predicted_by = dry_run(cd, registry, repair=ids, clock=clock), "dry_run"
    elif scope.kind == "park":
        assert scope.park is not None
        now = predict_run(fast, clock=clock) if fast is not None else None
        progress.check()
        dry = predict_run(fast.again(park=scope.park), clock=clock) if now is not None and fast is not None else None
        if now is None or dry is None:
            now = dry_run(cd, registry, clock=clock)
            progress.check()
            dry, predicted_by = dry_run(cd, registry, park=scope.park, clock=clock), "dry_run"
        park = _park_choice(scope.park, index_of, events, now.report, parked)
        released = set(now.report.held) & set(dry.report.applied)
        park.released.extend(_planned(events, index_of, [e for e in dry.report.applied if e in released]))
    else:
        # The same bound the real run takes (Plan.apply_until), so the prediction is that run.
        until = scope.until if scope.until is not None else journal_last
        if fast is not None:
            dry = predict_run(fast, until=until, clock=clock)
        if dry is None:
            dry, predicted_by = dry_run(cd, registry, until=until, clock=clock), "dry_run"
    progress.check()

    blocks = [explain_block(b) for b in dry.report.blocks]
    return Plan(
        target=target,
        scope=scope,
        created_at=_now_iso(),
        fingerprints=fingerprints,
        sentinel_state=state,
        sentinel_id=sid,
        sentinel_index=sindex,
        total_events=len(events),
        journal_present=d.journal.present,
        pending=len(unapplied),
        events=_planned(events, index_of, dry.report.applied),
        block=blocks[0] if blocks else None,
        diff=dry.diff,
        predicted=dry.predicted,
        dry_report=dry.report,
        orphans=orphans,
        unrepairable=unrepairable,
        temp_files=[] if scope.kind == "repair" else leftover_temp_files(cd),
        blocks=blocks,
        held=_planned(events, index_of, dry.report.held),
        applied_beyond=already,
        park=park,
        journal_last=journal_last,
        writes=dry.writes,
        predicted_applied_set=dry.applied_set,
        unapplied=unapplied,
        undecodable=undecodable_fragments(cd / JOURNAL_NAME, d.defects),
        predicted_by=predicted_by,
        journal_read=run.scan if run is not None else None,
    )


def _event_index(d: CharacterDiagnosis, run: TailRun | None) -> Callable[[str], int | None]:
    """An event id's index among the diagnosis's events (``None``: not there): the pass's own
    index when there is one (a table of the tail, a scan for the rest), else a table."""
    if run is not None:
        return lambda event_id: i if (i := run.index(event_id)) >= 0 else None
    table: dict[str, int] = {ev.event_id: ev.index for ev in d.events}  # few events: no journal was read
    return table.get


def _planned(events: Sequence[EventInfo], index_of: Callable[[str], int | None], ids: list[str]) -> list[PlannedEvent]:
    out = []
    for event_id in ids:
        i = index_of(event_id)
        if i is not None:
            out.append(PlannedEvent.of_info(events[i]))
    return out


def _journal_repair_plan(
    target: ReplayTarget, scope: Scope, fingerprints: dict[str, str | None], d: CharacterDiagnosis
) -> Plan:
    """The ``repair_journal`` plan: what :func:`journal.repair.repair_journal` would move out of
    the journal now, beside the sentinel and the tail as the diagnosis reads them (no dry run:
    the repair replays nothing and touches no other file)."""
    cd = target.char_dir
    assert cd is not None
    try:
        repair = plan_repair(cd)
    except RepairRefusedError as exc:
        raise BadInputError(f"{exc} (in {cd}); nothing was written") from exc
    events = d.events
    decisions = d.tail.decisions if d.tail is not None else []
    unapplied = [PlannedEvent.of_info(events[x.index]) for x in decisions if x.kind in UNAPPLIED_DECISIONS]
    return Plan(
        target=target,
        scope=scope,
        created_at=_now_iso(),
        fingerprints=fingerprints,
        sentinel_state=d.sentinel.state,
        sentinel_id=d.sentinel.event_id,
        sentinel_index=d.sentinel.index,
        total_events=len(events),
        journal_present=d.journal.present,
        pending=len(unapplied),
        events=[],
        block=None,
        diff=FolderDiff(),
        predicted={},
        dry_report=ReplayReport(target.character),
        temp_files=leftover_temp_files(cd),
        journal_last=events[-1].event_id if events else None,
        unapplied=unapplied,
        journal_repair=repair,
        undecodable=list(repair.fragments),
    )


def _refused_file(cd: Path, message: str | None, unknown: str) -> str:
    """Why a plan is refused when ``events_parked.ndjson`` or ``events_applied_set.json`` cannot be
    read (a FIFO, a folder, a link leading out, too big): ``unknown`` would be unknown, and replay
    would apply a parked event, or apply an event a second time (``message`` names the file)."""
    return f"{message} (in {cd}); replay cannot know {unknown}, so it refuses: nothing was written"


def _park_choice(
    event_id: str,
    index_of: Callable[[str], int | None],
    events: Sequence[EventInfo],
    now: ReplayReport,
    parked: frozenset[str],
) -> ParkChoice:
    """The event a person asked to park, if it is held now (else why it cannot be parked).

    Raises:
        BadInputError: the event is not in the journal, or replay does not hold it (it applies,
            is already applied or parked, or lies behind the sentinel).
    """
    at = index_of(event_id)
    if at is None:
        raise BadInputError(f"no event {event_id} in the journal")
    pe = PlannedEvent.of_info(events[at])
    if event_id not in now.held:
        if event_id in parked:
            why = "it is already parked"
        elif event_id in now.applied or event_id in now.skipped:
            why = "replay applies it (or already did)"
        else:
            why = "it is not pending (the sentinel is past it)"
        raise BadInputError(
            f"event {event_id} (#{at}, {pe.type or '(missing type)'}) is not held: {why}; only an event replay "
            "holds can be parked (nothing was written)"
        )
    own = next((b for b in now.blocks if b.event_id == event_id), None)
    if own is not None:
        block: BlockExplanation | None = explain_block(own)
        reason = f"{own.reason}: {own.message}"
    else:
        block = None
        first = now.stopped
        cause = f" behind event #{first.index} ({first.reason})" if first is not None else ""
        reason = f"held{cause}: it touches an entry an earlier event that cannot be applied holds"
    return ParkChoice(pe, reason, block)
