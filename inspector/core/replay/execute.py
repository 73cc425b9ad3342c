"""Steps 4 to 6: carry out a plan (:func:`execute`): server re-check, backup, fingerprint check,
the reconciler on the real folder (for the ``repair_journal`` scope: the journal repair of
:mod:`journal.repair` instead), a fresh look at the folder (:func:`folder_state`) and the JSON
report beside the backup."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.replay.backup import Backup, check_backup_root, create_backup
from inspector.core.replay.errors import BackupError, BadInputError
from inspector.core.replay.fingerprints import backup_fingerprints, fingerprint_changes, fingerprint_folder
from inspector.core.replay.plan import BlockExplanation, Plan, explain_block
from inspector.core.replay.preflight import Preflight, check_launcher_lock
from inspector.core.replay.stamps import _now_iso, _tool_version, _who
from journal import fs
from journal.appliedset import APPLIED_SET_NAME, applied_set_valid, read_applied_set
from journal.diagnosis import diagnose_character
from journal.diagnosis.scan import JournalScan
from journal.dryrun import replay_files, sentinel_id
from journal.errors import ViewCorruptError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Clock
from journal.handlers import HandlerRegistry
from journal.log import EventLog
from journal.park import ParkRecord, record_park
from journal.reconcile import Reconciler
from journal.repair import (
    DAMAGED_NAME,
    JournalChangedError,
    JournalRepairError,
    RepairResult,
    read_damaged,
    repair_journal,
)
from journal.replayreport import ReplayReport
from journal.views import read_sentinel


def compare_with_prediction(plan: Plan) -> list[str]:
    """Files whose content after the apply differs from what the dry run predicted.

    The sentinel is compared by the id it names (its ``ts`` is the time of writing), the applied
    set by the ids it records (against the dry run's ``applied_beyond``). After a journal repair:
    the journal by its SHA-256 (the plan's ``new_sha256``), ``events.ndjson.damaged`` by whether it
    records every fragment, and every other watched file by its fingerprint (none may change).
    """
    if plan.journal_repair is not None:
        return _compare_repair(plan)
    actual = replay_files(plan.char_dir)
    out = []
    for rel in sorted(set(actual) | set(plan.predicted)):
        if rel == SENTINEL_NAME:
            if sentinel_id(actual.get(rel)) != sentinel_id(plan.predicted.get(rel)):
                out.append(rel)
        elif actual.get(rel) != plan.predicted.get(rel):
            out.append(rel)
    sentinel = read_sentinel(plan.char_dir)
    aset = read_applied_set(plan.char_dir, sentinel)
    recorded = list(aset.applied) if applied_set_valid(aset, sentinel.event_id) else []
    if recorded != plan.dry_report.applied_beyond:
        out.append(APPLIED_SET_NAME)
    return out


def _compare_repair(plan: Plan) -> list[str]:
    repair = plan.journal_repair
    assert repair is not None
    now = fingerprint_folder(plan.char_dir, whole_journal=True)
    out = [k for k in fingerprint_changes(plan.fingerprints, now) if k not in (JOURNAL_NAME, DAMAGED_NAME)]
    if now.get(JOURNAL_NAME) != f"sha256:{repair.new_sha256}":
        out.append(JOURNAL_NAME)
    keys = read_damaged(plan.char_dir).keys
    if any(f.key(repair.sha256) not in keys for f in repair.fragments):
        out.append(DAMAGED_NAME)
    return sorted(out)


@dataclass(frozen=True, slots=True)
class FolderState:
    """A fresh look at a character folder after a run (shown next to the plan).

    Attributes:
        sentinel_state, sentinel_id, sentinel_index: as in the plan.
        events: events in the journal.
        pending: events after the sentinel not applied yet (not in the applied set, not parked).
        orphaned_archive: archive events whose entry is lost (repairable or not); ``None`` when
            the diagnosis failed (its error is in ``diagnosis``).
        diagnosis: counts from :func:`journal.diagnosis.diagnose_character` when it is available.
        applied_beyond: events after the sentinel the applied set records as applied.
        parked: parked events in the journal.
    """

    sentinel_state: str
    sentinel_id: str | None
    sentinel_index: int | None
    events: int
    pending: int
    orphaned_archive: int | None
    diagnosis: dict[str, Any] | None = None
    applied_beyond: int = 0
    parked: int = 0

    def describe(self) -> str:
        where = f"at #{self.sentinel_index}" if self.sentinel_index is not None else self.sentinel_state
        orphaned = "unknown" if self.orphaned_archive is None else self.orphaned_archive
        text = f"sentinel {where}; {self.events} events, {self.pending} pending, {orphaned} orphaned archive"
        if self.applied_beyond:
            text += f", {self.applied_beyond} applied past the sentinel"
        if self.parked:
            text += f", {self.parked} parked"
        if self.diagnosis and self.diagnosis.get("blocked"):
            b = self.diagnosis["blocked"]
            text += f"; blocked at #{b.get('index')} ({b.get('reason')})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "sentinel": {"state": self.sentinel_state, "event_id": self.sentinel_id, "index": self.sentinel_index},
            "events": self.events,
            "pending": self.pending,
            "orphaned_archive": self.orphaned_archive,
            "applied_beyond": self.applied_beyond,
            "parked": self.parked,
            "diagnosis": self.diagnosis,
        }


def folder_state(char_dir: str | os.PathLike[str], journal: JournalScan | None = None) -> FolderState:
    """Look at the folder once more after a run, through one diagnosis: the sentinel's position,
    the events not applied yet (pending and blocked), those applied past the sentinel and the
    parked ones, by the diagnosis's own states, and the orphaned archive events.

    Args:
        journal: the journal as the plan read it (:attr:`Plan.journal_read`), when the caller knows
            it is unchanged since (its fingerprint is the plan's): the diagnosis then reads only the
            tail again, not the whole journal (``None``: it reads the journal).
    """
    cd = Path(char_dir)
    try:
        d = diagnose_character(cd, journal=journal)
    except Exception as exc:  # the fresh look must never turn a finished replay into a failure
        return FolderState("unknown", None, None, 0, 0, None, {"error": f"{type(exc).__name__}: {exc}"})
    start = d.sentinel.replay_start
    states = [(ev.index, ev.state, ev.reason) for ev in d.events]
    pending = sum(1 for _i, state, _r in states if state in ("pending", "blocked"))
    parked = sum(1 for _i, state, reason in states if state == "applied" and reason == "parked")
    beyond = sum(1 for i, state, reason in states if i >= start and state == "applied" and reason != "parked")
    data = d.to_json()
    return FolderState(
        d.sentinel.state,
        d.sentinel.event_id,
        d.sentinel.index,
        len(d.events),
        pending,
        len(d.archive_orphans),
        {"counts": data.get("counts"), "blocked": data.get("blocked")},
        beyond,
        parked,
    )


#: Outcome statuses: what happened to a run.
OUTCOME_STATUSES = ("applied", "nothing_to_do", "stopped", "cancelled", "changed", "refused", "failed")


@dataclass(slots=True)
class ReplayOutcome:
    """What a guarded replay did (a value for the command line, the window and the report).

    Attributes:
        status: ``applied`` (everything planned was applied), ``nothing_to_do``, ``stopped``
            (applied up to a blocked event, or some orphans could not be repaired), ``cancelled``
            (between events; the folder is consistent), ``changed`` (the folder differs from the
            plan: nothing applied, re-plan), ``refused`` (a guard refused before writing),
            ``failed`` (an error; restore the backup if needed).
        plan: the plan it carried out.
        backup: the backup taken before writing, when one was.
        report: the reconciler's report of the real run.
        applied: ids of the events whose handler ran, in order.
        block: where it stopped and why.
        changed_files: for ``changed``: what differs from the plan.
        mismatches: files whose content differs from the dry run's prediction (should be empty).
        fingerprints_before: fingerprints right before applying.
        fingerprints_after: fingerprints after applying.
        after: a fresh look at the folder.
        message: one line for people.
        started_at, finished_at: local ISO-8601 with offset.
        report_path: the JSON report beside the backup.
        parked: for a ``park`` plan: the decision recorded in ``events_parked.ndjson``.
        journal_repair: for a ``repair_journal`` plan: what the repair did.
    """

    status: str
    plan: Plan
    backup: Backup | None = None
    report: ReplayReport | None = None
    applied: list[str] = field(default_factory=list)
    block: BlockExplanation | None = None
    changed_files: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    fingerprints_before: dict[str, str | None] | None = None
    fingerprints_after: dict[str, str | None] | None = None
    after: FolderState | None = None
    message: str = ""
    started_at: str = ""
    finished_at: str = ""
    report_path: Path | None = None
    parked: ParkRecord | None = None
    journal_repair: RepairResult | None = None

    @property
    def exit_code(self) -> int:
        """0 when everything planned was applied (or nothing was pending), else 1."""
        return 0 if self.status in ("applied", "nothing_to_do") else 1

    def to_json(self) -> dict[str, Any]:
        r = self.report
        return {
            "status": self.status,
            "message": self.message,
            "applied": list(self.applied),
            "changed": r.changed if r else 0,
            "stopped": None if self.block is None else self.block.to_json(),
            "held": list(r.held) if r else [],
            "held_entries": [list(e) for e in r.held_entries] if r else [],
            "skipped": list(r.skipped) if r else [],
            "applied_beyond": list(r.applied_beyond) if r else [],
            "parked": None if self.parked is None else self.parked.to_json(),
            "cancelled": bool(r and r.cancelled),
            "frozen": bool(r and r.frozen),
            "left_behind": r.left_behind if r else 0,
            "temp_files_removed": list(getattr(r, "temp_files_removed", []) or []) if r else [],
            "changed_since_plan": list(self.changed_files),
            "matches_plan": not self.mismatches,
            "mismatches": list(self.mismatches),
            "journal_repair": None if self.journal_repair is None else self.journal_repair.to_json(),
        }


def _write_report(outcome: ReplayOutcome, preflight_: Preflight | None) -> None:
    """Write (or rewrite) ``report.json`` beside the backup."""
    if outcome.backup is None:
        return
    plan = outcome.plan
    report = {
        "schema": 1,
        "kind": "replay",
        "tool": _tool_version(),
        "who": _who(),
        "host": socket.gethostname(),
        "started_at": outcome.started_at,
        "finished_at": outcome.finished_at or None,
        "character": plan.target.character,
        "folder": str(plan.char_dir.resolve()),
        "backup": str(outcome.backup.path),
        "overrides": {"server_lock": bool(preflight_ and preflight_.override_server_lock)},
        "preflight": None if preflight_ is None else preflight_.to_json(),
        "plan": plan.to_json(),
        "fingerprints": {
            "plan": plan.fingerprints,
            "before_apply": outcome.fingerprints_before,
            "after": outcome.fingerprints_after,
        },
        "outcome": outcome.to_json(),
        "after": None if outcome.after is None else outcome.after.to_json(),
    }
    path = outcome.backup.report_path
    fs.atomic_write_bytes(path, json.dumps(report, indent=2, ensure_ascii=False, default=str).encode("utf-8"))
    outcome.report_path = path


def execute(
    plan: Plan,
    *,
    backup_root: str | os.PathLike[str],
    preflight_: Preflight | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    registry: HandlerRegistry | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    before_check: Callable[[], None] | None = None,
    index_path: str | os.PathLike[str] | None = None,
    clock: Clock | None = None,
) -> ReplayOutcome:
    """Carry out a plan: server re-check, backup, fingerprint check, apply, fresh look, report.

    Safe to run in a worker thread (it asks nothing). Nothing is written into the character folder
    unless the server is still stopped (or the override was recorded) and every watched file still
    has the fingerprint the plan saw — in the live folder *and* in the backup just taken.

    Args:
        backup_root: where the backup folder goes (outside the character folder).
        preflight_: the preflight the plan was made under (its override flag is honoured and
            recorded).
        should_continue: polled between events; returning False cancels.
        on_progress: ``(done, total)`` after each event.
        before_check: test seam, called after the backup and before the fingerprint check.
        index_path: the index of backups the backup is recorded in (default:
            :func:`~inspector.core.replay.backup.default_index_path`); restore finds its folder there.
        clock: gives the ``ts`` the replay writes (the sentinel's, the applied set's), as the
            plan's dry run took it.
    """
    outcome = ReplayOutcome("refused", plan, started_at=_now_iso())
    override = bool(preflight_ and preflight_.override_server_lock)
    if not plan.has_work:
        outcome.block = plan.block
        if plan.block is not None or plan.unrepairable:
            outcome.status, outcome.message = (
                "stopped",
                "nothing can be applied: every pending event in scope is held",
            )
        elif plan.journal_repair is not None:
            outcome.status, outcome.message = "nothing_to_do", "nothing to repair: the journal is valid UTF-8"
        else:
            outcome.status, outcome.message = "nothing_to_do", "nothing to apply"
        outcome.finished_at = _now_iso()
        return outcome
    server = check_launcher_lock(state_dir)
    if server.state != "free" and not override:
        outcome.message = f"{server.message}: the memory server started after the plan; nothing was written"
        outcome.finished_at = _now_iso()
        return outcome
    cd = plan.char_dir
    target = plan.target
    assert target.root is not None
    try:
        check_backup_root(backup_root, target)
        outcome.backup = create_backup(
            cd, backup_root, character=target.character, kind="replay", index_path=index_path
        )
    except (BackupError, BadInputError) as exc:
        outcome.status, outcome.message = "failed", f"no backup, nothing written: {exc}"
        outcome.finished_at = _now_iso()
        return outcome
    if before_check is not None:
        before_check()
    current = _fingerprints(plan)
    outcome.fingerprints_before = current
    in_backup = backup_fingerprints(plan.fingerprints, outcome.backup.hashes(), outcome.backup.files_dir)
    changed = sorted(
        set(fingerprint_changes(plan.fingerprints, current)) | set(fingerprint_changes(plan.fingerprints, in_backup))
    )
    if changed:
        outcome.status = "changed"
        outcome.changed_files = changed
        outcome.message = "the folder changed since the plan (" + ", ".join(changed) + "); nothing was written: re-plan"
        outcome.finished_at = _now_iso()
        _write_report(outcome, preflight_)
        return outcome
    outcome.status, outcome.message = "failed", "applying (interrupted before the end)"
    _write_report(outcome, preflight_)  # a crash mid-apply still leaves a report naming the backup
    if plan.journal_repair is not None:
        return _repair_journal(outcome, preflight_, clock)
    if plan.park is not None:
        # The person's decision, recorded before replay goes past the event (never automatic).
        pe = plan.park.event
        decision = ParkRecord(
            pe.event_id, pe.type, pe.index, pe.line, pe.ts, _now_iso(), _who(), socket.gethostname(), plan.park.reason
        )
        try:
            record_park(cd, decision)
        except (OSError, ViewCorruptError) as exc:
            outcome.message = f"the park could not be recorded, nothing was applied: {exc}"
            outcome.finished_at = _now_iso()
            _write_report(outcome, preflight_)
            return outcome
        outcome.parked = decision
    reconciler = Reconciler(EventLog(target.root), registry, clock=clock)
    total = len(plan.events)

    def progress(done: int, _total: int) -> None:
        if on_progress is not None:
            on_progress(min(done, total), total)

    try:
        if plan.scope.kind == "repair":
            report = _repair(reconciler, plan, should_continue, progress)
        else:
            report = reconciler.reconcile(
                target.character, until=plan.apply_until, should_continue=should_continue, on_progress=progress
            )
    except Exception as exc:
        outcome.message = f"replay failed: {type(exc).__name__}: {exc}; the backup can undo any partial change"
        outcome.finished_at = _now_iso()
        with contextlib.suppress(Exception):
            outcome.fingerprints_after = _fingerprints(plan)
            outcome.after = folder_state(cd)
        _write_report(outcome, preflight_)
        return outcome
    outcome.report = report
    outcome.applied = list(report.applied)
    planned_ids = [e.event_id for e in plan.events]
    if report.stopped is not None:
        outcome.block = explain_block(report.stopped)
    if report.cancelled:
        outcome.status = "cancelled"
        outcome.message = f"cancelled after {len(report.applied)} of {total} event(s); the folder is consistent"
    elif report.stopped is not None:
        outcome.status = "stopped"
        outcome.message = (
            f"applied {len(report.applied)} event(s); {len(report.held)} held behind "
            f"{len(report.blocks)} event(s) that cannot be applied"
        )
    elif report.left_behind or report.frozen or outcome.applied != planned_ids:
        outcome.status = "stopped"
        outcome.message = "another writer changed the folder during the replay; see the report"
    elif plan.unrepairable:
        outcome.status = "stopped"
        outcome.message = f"repaired {len(report.applied)} event(s); {len(plan.unrepairable)} could not be repaired"
        outcome.block = plan.unrepairable[0].block
    else:
        outcome.status = "applied"
        outcome.message = f"applied {len(report.applied)} event(s) as planned"
    if outcome.parked is not None:
        outcome.message = f"parked event #{outcome.parked.index}; " + outcome.message
    if outcome.applied == planned_ids and not report.cancelled:
        outcome.mismatches = compare_with_prediction(plan)
        if outcome.mismatches:
            outcome.message += "; some files differ from the dry run's prediction (see the report)"
    outcome.fingerprints_after = _fingerprints(plan)
    outcome.after = folder_state(cd, _unchanged_journal(plan, outcome.fingerprints_after))
    plan.journal_read = None  # let the read go (a million events hold ~300 MB): it served its purpose
    outcome.finished_at = _now_iso()
    _write_report(outcome, preflight_)
    return outcome


def _fingerprints(plan: Plan) -> dict[str, str | None]:
    """The folder's fingerprints, taken as the plan took them (the journal's whole SHA-256 only for a
    journal repair, whose plan names the journal by it)."""
    return fingerprint_folder(plan.char_dir, whole_journal=plan.journal_repair is not None)


def _unchanged_journal(plan: Plan, now: dict[str, str | None]) -> JournalScan | None:
    """The plan's read of the journal, when the journal still has the plan's fingerprint (a replay
    never writes it), so that the look after the run need not read it whole again."""
    if plan.journal_read is None or now.get(JOURNAL_NAME) != plan.fingerprints.get(JOURNAL_NAME):
        return None
    return plan.journal_read


def _repair_journal(outcome: ReplayOutcome, preflight_: Preflight | None, clock: Clock | None) -> ReplayOutcome:
    """Carry out a ``repair_journal`` plan (after the backup and the fingerprint check): the journal
    repair on the real folder, refused if the journal is not the one planned on."""
    plan = outcome.plan
    repair = plan.journal_repair
    assert repair is not None
    cd = plan.char_dir
    try:
        result = repair_journal(cd, expect_sha256=repair.sha256, clock=clock)
    except JournalChangedError:
        outcome.status = "changed"
        outcome.changed_files = [JOURNAL_NAME]
        outcome.message = f"the folder changed since the plan ({JOURNAL_NAME}); nothing was written: re-plan"
    except (JournalRepairError, OSError) as exc:
        outcome.message = (
            f"the repair failed: {type(exc).__name__}: {exc}; {JOURNAL_NAME} is exactly as it was or exactly as "
            "planned, never a mix, and the backup can undo either"
        )
    else:
        outcome.journal_repair = result
        moved = len(repair.fragments)
        already = f", {len(result.already)} of them recorded there already" if result.already else ""
        outcome.status = "applied"
        outcome.message = (
            f"repaired {JOURNAL_NAME}: moved {moved} fragment(s) that are not UTF-8 to {DAMAGED_NAME}{already}; "
            f"{repair.records} record(s) kept byte for byte"
        )
        outcome.mismatches = compare_with_prediction(plan)
        if outcome.mismatches:
            outcome.message += "; some files differ from the plan (see the report)"
    outcome.finished_at = _now_iso()
    with contextlib.suppress(Exception):
        outcome.fingerprints_after = _fingerprints(plan)
        outcome.after = folder_state(cd)
    _write_report(outcome, preflight_)
    return outcome


def _repair(
    reconciler: Reconciler,
    plan: Plan,
    should_continue: Callable[[], bool] | None,
    progress: Callable[[int, int], None],
) -> ReplayReport:
    """Re-apply the planned orphaned archive events one at a time (progress and cancel between)."""
    character = plan.target.character
    merged = ReplayReport(character)
    merged.tail = len(plan.events)
    for done, ev in enumerate(plan.events, start=1):
        if should_continue is not None and not should_continue():
            merged.cancelled = True
            break
        one = reconciler.repair(character, [ev.event_id])
        merged.sentinel_before = merged.sentinel_before or one.sentinel_before
        merged.sentinel_after = one.sentinel_after
        merged.applied += one.applied
        merged.changed += one.changed
        if one.stopped is not None:
            merged.stopped = one.stopped
            break
        progress(done, len(plan.events))
    return merged
