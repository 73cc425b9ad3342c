"""The guarded-replay flow: the one order of the steps, as generators that the command line and
the window both drive.

:func:`replay_flow` and :func:`restore_flow` yield *steps* and receive each step's answer:

- :class:`Tell` — something to show; answer ``None``. Its ``kind`` says what it is, so a driver
  that shows the same text elsewhere (the window shows the plan in the review) may skip it.
- :class:`Ask` — a yes/no :class:`~inspector.core.prompter.Question`; answer ``bool``.
- :class:`Review` — the plan to confirm; answer ``True`` (go ahead), ``False`` (decline) or a
  :class:`~inspector.core.replay.plan.Scope` (plan that scope instead: every change of scope
  re-plans at once).
- :class:`ChooseBackup` — which backup to restore; answer a path or ``None``.
- :class:`Work` — slow work (plan, apply, restore, extract); answer its result. A driver may run
  it in another thread; an exception it raises is thrown back into the flow
  (``generator.throw``), which handles the ones it expects and lets the rest out.

The flow ends by returning a :class:`ReplayRun` / :class:`RestoreRun` whose ``lines`` are the
result in words. Drivers never re-sequence the steps; they only answer them:
:func:`drive` is the synchronous driver (the command line, scripts, tests), and
:class:`inspector.controllers.replay.ReplayController` drives the same flows from the window.
Replay, ``--until``, ``--repair-orphans``, park, the journal repair (``--repair-journal``, the
``repair_journal`` scope) and restore (``--dry-run`` included) are all paths of these two
generators. Only this module sequences the step modules; drivers import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from inspector.core.dirs import default_backup_root, default_index_path
from inspector.core.prompter import (
    ASK_APPLY,
    ASK_EXTRACT,
    ASK_RECENT_WRITES,
    Prompter,
    Question,
)
from inspector.core.replay.backup import BackupSummary, check_backup_root, list_backups
from inspector.core.replay.describe import (
    describe_diff,
    describe_journal_repair,
    describe_outcome,
    describe_plan,
    describe_preflight,
    describe_restore_outcome,
    describe_restore_plan,
)
from inspector.core.replay.errors import BadInputError, FolderBusyError, GuardedReplayError, PlanningCancelledError
from inspector.core.replay.execute import ReplayOutcome, execute
from inspector.core.replay.plan import SCOPE_KINDS, Plan, PlannedEvent, Scope, make_plan
from inspector.core.replay.preflight import Preflight, folder_writable, preflight
from inspector.core.replay.restore import RestoreOutcome, RestorePlan, execute_restore, plan_restore, restore_question
from inspector.core.replay.target import ReplayTarget, extract_export, suggest_extract_dir, target_of
from journal.events import JOURNAL_NAME
from journal.handlers import HandlerRegistry

#: How often a run re-plans after the folder changed under it before giving up (both drivers).
MAX_REPLANS = 3

# -- the steps -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tell:
    """Something to show the person; needs no answer.

    Attributes:
        text: what to say (lines separated by newlines).
        kind: ``preflight``, ``plan``, ``replan``, ``extracted`` or ``restore_plan``.
        title, level: how a window shows it (``info`` or ``warning``).
    """

    text: str
    kind: str
    title: str = "Guarded replay"
    level: str = "info"


@dataclass(frozen=True, slots=True)
class Ask:
    """A yes/no question."""

    question: Question


@dataclass(frozen=True, slots=True)
class Review:
    """The plan to confirm, with what a richer driver shows beside it.

    Attributes:
        question: the plan as a yes/no question (``confirm_apply``), for drivers that only ask.
        plan: the plan.
        preflight: the first guard (its warnings are shown on top).
        notice: one line on top (e.g. why this is a new plan).
        can_apply: whether the plan has work; when not, there is nothing to confirm and a
            driver that only asks goes ahead without asking (the flow then records "nothing to
            do"), while the window still shows the plan so another scope can be chosen.
    """

    question: Question
    plan: Plan
    preflight: Preflight | None
    notice: str = ""
    can_apply: bool = True

    def asked(self, ask: Callable[[Question], bool]) -> bool:
        """The answer of a driver that only asks yes/no: the question for a plan with work; a
        plan without work has nothing to confirm (go ahead, which records "nothing to do")."""
        return ask(self.question) if self.can_apply else True


@dataclass(frozen=True, slots=True)
class ChooseBackup:
    """Which backup to restore: ``backups`` are listed, any other folder may be chosen."""

    backups: list[BackupSummary]
    start: Path


@dataclass(frozen=True, slots=True)
class Control:
    """What slow work gets from its driver: cancel (between events, and while the plan reads the
    journal), and progress (in the work's :attr:`Work.unit`).

    Attributes:
        begin, end: called by :func:`drive` with each :class:`Work` before and after it runs (a
            terminal draws and clears its progress line there).
    """

    should_continue: Callable[[], bool] = lambda: True
    on_progress: Callable[[int, int], None] = lambda done, total: None
    begin: Callable[[Work], None] = lambda work: None
    end: Callable[[Work], None] = lambda work: None


@dataclass(frozen=True, slots=True)
class Work:
    """Slow work for the driver to run (in a worker thread, if it likes).

    Attributes:
        label: what is being done, for a progress dialog.
        run: the work; called with a :class:`Control`.
        total: how many steps its progress counts (0: none is reported, or not known yet).
        cancellable: whether ``Control.should_continue`` is honoured.
        unit: what its progress counts: ``events`` (applied) or ``bytes`` (of the journal, read by
            the plan).
    """

    label: str
    run: Callable[[Control], Any]
    total: int = 0
    cancellable: bool = False
    unit: str = "events"


Step = Tell | Ask | Review | ChooseBackup | Work
R = TypeVar("R")
Flow = Generator[Step, Any, R]


# -- what a run went through ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """What a person asked for.

    Attributes:
        path: memory root, character folder or zip export.
        character: the character; ``None`` when ``path`` is the character folder itself.
        scope: what to replay.
        backup_root: where backups go (default: :func:`default_backup_root`).
        override_server_lock: the command-line override (never offered by the window).
        dry_run: plan only.
        state_dir: where ``launcher.lock`` lives (default: ``NEKO_RUNTIME_STATE_DIR`` / platform).
        index_path: the index of backups each backup is recorded in (default:
            :func:`~inspector.core.replay.backup.default_index_path`).
        max_replans: how often to re-plan after the folder changed under the run.
    """

    path: Path
    character: str | None = None
    scope: Scope = field(default_factory=Scope)
    backup_root: Path | None = None
    override_server_lock: bool = False
    dry_run: bool = False
    state_dir: Path | None = None
    max_replans: int = MAX_REPLANS
    index_path: Path | None = None


@dataclass(slots=True)
class ReplayRun:
    """Everything a replay flow went through.

    Attributes:
        preflight: the first guard.
        plans: every plan made (more than one after re-planning or a change of scope).
        outcomes: every execution (a ``changed`` one is followed by a new plan).
        status: ``applied`` / ``nothing_to_do`` / ``stopped`` / ``cancelled`` (while applying, or
            while planning: then nothing was written) / ``refused`` / ``failed`` / ``declined``
            (the person said no) / ``planned`` (dry run).
        message: one line for people.
        extracted_to: where a zip export was extracted, when the person accepted that offer.
    """

    preflight: Preflight | None = None
    plans: list[Plan] = field(default_factory=list)
    outcomes: list[ReplayOutcome] = field(default_factory=list)
    status: str = "refused"
    message: str = ""
    extracted_to: Path | None = None

    @property
    def plan(self) -> Plan | None:
        return self.plans[-1] if self.plans else None

    @property
    def outcome(self) -> ReplayOutcome | None:
        return self.outcomes[-1] if self.outcomes else None

    @property
    def exit_code(self) -> int:
        """0 when everything planned was applied (or would be, for a dry run), else 1."""
        if self.status in ("applied", "nothing_to_do"):
            return 0
        if self.status == "planned":
            assert self.plan is not None
            return self.plan.predicted_exit_code if self.preflight is None or self.preflight.ok else 1
        return 1

    @property
    def wrote(self) -> bool:
        """Whether the character folder may have been written (a reload is due)."""
        o = self.outcome
        return o is not None and (bool(o.applied) or o.status in ("applied", "stopped", "cancelled", "failed"))

    @property
    def lines(self) -> list[str]:
        """The result in words."""
        if self.outcome is not None:
            return describe_outcome(self.outcome)
        if self.status == "planned":
            verdict = "would apply everything planned" if self.exit_code == 0 else "would not apply everything"
            if self.plan is not None and self.plan.journal_repair is not None and self.exit_code == 0:
                verdict = "would repair the journal as planned"
            return [f"Dry run: {self.message}; an apply {verdict} (exit {self.exit_code})."]
        return [f"{self.status}: {self.message}"]


@dataclass(frozen=True, slots=True)
class RestoreRequest:
    """A restore a person asked for.

    Attributes:
        backup: the backup folder; ``None`` lets the person choose among ``character``'s backups.
        character: whose backups to list when ``backup`` is ``None``.
        to: the character folder to restore into (``--to``); default: the index of backups.
        dry_run: compare only, and say what would change.
        backup_root, index_path, state_dir: as for :class:`ReplayRequest`.
    """

    backup: Path | None = None
    character: str | None = None
    to: Path | None = None
    dry_run: bool = False
    backup_root: Path | None = None
    index_path: Path | None = None
    state_dir: Path | None = None


@dataclass(slots=True)
class RestoreRun:
    """Everything a restore flow went through.

    Attributes:
        status: ``restored`` / ``nothing_to_do`` / ``refused`` / ``failed`` / ``declined`` /
            ``planned`` (dry run).
        plan: what putting the backup back does (``None`` when no backup was chosen).
        outcome: what the restore did, when it ran.
        message: one line for people.
    """

    status: str = "declined"
    plan: RestorePlan | None = None
    outcome: RestoreOutcome | None = None
    message: str = ""

    @property
    def exit_code(self) -> int:
        """0 when restored, nothing to do, or (dry run) a restore would go ahead; else 1."""
        return 0 if self.status in ("restored", "nothing_to_do", "planned") else 1

    @property
    def wrote(self) -> bool:
        o = self.outcome
        return o is not None and bool(o.written or o.removed)

    @property
    def level(self) -> str:
        """How the result is shown: a warning unless it restored or had nothing to do."""
        return "info" if self.status in ("restored", "nothing_to_do", "planned") else "warning"

    @property
    def lines(self) -> list[str]:
        """The result in words (a dry run: the plan, then what it would do)."""
        if self.outcome is not None:
            return describe_restore_outcome(self.outcome)
        if self.status == "planned":
            return [f"Dry run: {self.message} (exit {self.exit_code})."]
        return [f"Result: {self.status} — {self.message}"]


# -- the flows ---------------------------------------------------------------------------------------


def confirm_question(plan: Plan, backup_root: Path, preflight_: Preflight | None, replanned: bool = False) -> Question:
    """The "apply this plan?" question (the plan itself is in ``details``)."""
    verb = "Re-apply" if plan.scope.kind == "repair" else "Apply"
    text = f"{verb} {len(plan.events)} event(s) to {plan.target.character}? A backup goes to {backup_root} first."
    if plan.park is not None:
        text = (
            f"Park event #{plan.park.event.index} ({plan.park.event.type}) for good, so that it is never applied, "
            f"and apply {len(plan.events)} event(s) to {plan.target.character}? A backup goes to {backup_root} first."
        )
    if plan.journal_repair is not None:
        text = (
            f"Rewrite events.ndjson of {plan.target.character}, moving {len(plan.journal_repair.fragments)} "
            f"fragment(s) that are not UTF-8 to events.ndjson.damaged? A backup goes to {backup_root} first."
        )
    if replanned:
        text = "The folder changed, so this is a new plan. " + text
    if preflight_ is not None and preflight_.warnings:
        text += " Warnings: " + "; ".join(w.message for w in preflight_.warnings)
    return Question(ASK_APPLY, "Guarded replay", text, "\n".join(describe_plan(plan)), default=False)


def _planning(target: ReplayTarget, scope: Scope, registry: HandlerRegistry | None) -> Work:
    def run(c: Control) -> Plan:
        return make_plan(target, scope, registry=registry, should_continue=c.should_continue, on_progress=c.on_progress)

    total = 0
    if target.char_dir is not None:
        try:
            total = os.stat(target.char_dir / JOURNAL_NAME).st_size
        except OSError:
            total = 0
    return Work("Planning: reading the journal…", run, total=total, cancellable=True, unit="bytes")


def _applying(
    plan: Plan, request: ReplayRequest, backup_root: Path, pf: Preflight, registry: HandlerRegistry | None
) -> Work:
    def run(c: Control) -> ReplayOutcome:
        return execute(
            plan,
            backup_root=backup_root,
            preflight_=pf,
            state_dir=request.state_dir,
            registry=registry,
            should_continue=c.should_continue,
            on_progress=c.on_progress,
            index_path=request.index_path,
        )

    return Work("Backing up and applying…", run, total=len(plan.events), cancellable=True)


def replay_flow(
    request: ReplayRequest,
    *,
    registry: HandlerRegistry | None = None,
    now: float | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> Flow[ReplayRun]:
    """Guarded replay, in order: target, backup folder, preflight (zip → offer to extract),
    plan, (dry run ends here), the recent-writes question, review, apply; re-plan when the folder
    changed under the apply (at most ``request.max_replans`` times).

    Raises:
        BadInputError: bad path, character, event id or backup folder (exit code 2); raised from
            the first step or from the plan's work.
    """
    run = ReplayRun()
    target = target_of(request.path, request.character)
    backup_root = Path(request.backup_root) if request.backup_root is not None else default_backup_root()
    if target.char_dir is not None:
        check_backup_root(backup_root, target)
    pf = preflight(
        target,
        override_server_lock=request.override_server_lock,
        state_dir=request.state_dir,
        now=now,
        writable=writable,
    )
    run.preflight = pf
    yield Tell("\n".join(describe_preflight(pf)), "preflight")
    if target.zip_path is not None:
        zip_path = target.zip_path
        run.status = "refused"
        run.message = next(r.message for r in pf.refusals if r.code == "input.zip_export")
        dest = suggest_extract_dir(zip_path)
        question = Question(
            ASK_EXTRACT,
            "Zip export",
            f"{zip_path} is a zip export and replay writes. Extract it to {dest} first?",
            "The zip is left as it is; replay the extracted folder afterwards.",
        )
        if (yield Ask(question)):
            run.extracted_to = yield Work("Extracting…", lambda _c: extract_export(zip_path, dest))
            run.message += f". Extracted to {dest}: replay that folder."
            yield Tell(f"Extracted to {dest}.", "extracted")
        return run
    blocking = list(pf.refusals)
    if blocking and not request.dry_run:
        run.status, run.message = "refused", "; ".join(r.message for r in blocking)
        return run
    scope, notice, replans, asked_recent = request.scope, "", 0, False
    while True:
        try:
            plan: Plan = yield _planning(target, scope, registry)
        except FolderBusyError as exc:
            run.status, run.message = "refused", str(exc)
            return run
        except PlanningCancelledError as exc:
            run.status, run.message = "cancelled", str(exc)
            return run
        for superseded in run.plans:
            superseded.journal_read = None  # only the plan carried out keeps its read of the journal
        run.plans.append(plan)
        yield Tell("\n".join(describe_plan(plan)), "plan")
        if request.dry_run:
            run.status, run.message = "planned", "nothing was changed"
            if blocking:
                run.message += "; an apply would be refused: " + "; ".join(r.message for r in blocking)
            return run
        if plan.has_work and pf.recent and not asked_recent:
            asked_recent = True
            recent = next(w.message for w in pf.warnings if w.code == "files.recent")
            if not (yield Ask(Question(ASK_RECENT_WRITES, "A writer may be active", recent + ". Go on anyway?"))):
                run.status, run.message = "declined", "not applied: files changed recently"
                return run
        question = confirm_question(plan, backup_root, pf, replanned=replans > 0)
        answer = yield Review(question, plan, pf, notice, can_apply=plan.has_work)
        if isinstance(answer, Scope):
            scope, notice = answer, ""
            continue
        if not answer:
            run.status, run.message = "declined", "not applied: the plan was not confirmed"
            return run
        outcome: ReplayOutcome = yield _applying(plan, request, backup_root, pf, registry)
        run.outcomes.append(outcome)
        if outcome.status != "changed":
            run.status, run.message = outcome.status, outcome.message
            return run
        replans += 1
        if replans > request.max_replans:
            run.status = "refused"
            run.message = f"the folder kept changing; gave up after {request.max_replans} re-plans"
            return run
        yield Tell(f"Refused: {outcome.message}. Re-planning.", "replan", level="warning")
        notice = f"Refused: {outcome.message}. This is a new plan of the folder as it is now."


def restore_flow(request: RestoreRequest, *, writable: Callable[[Path], bool] = folder_writable) -> Flow[RestoreRun]:
    """Restore, in order: choose a backup (unless given), verify and compare it, (dry run ends
    here), ask, put it back after a pre-restore backup.

    Raises:
        BadInputError: not a backup folder, or the folder cannot take it (exit code 2).
    """
    run = RestoreRun()
    backup = request.backup
    if backup is None:
        root = Path(request.backup_root) if request.backup_root is not None else default_backup_root()
        listed = list_backups(root, request.character, index_path=request.index_path) if request.character else []
        backup = yield ChooseBackup(listed, root)
        if backup is None:
            run.message = "no backup was chosen"
            return run
    chosen = Path(backup)
    rp: RestorePlan = yield Work(
        "Verifying the backup…", lambda _c: plan_restore(chosen, request.to, index_path=request.index_path)
    )
    run.plan = rp
    yield Tell("\n".join(describe_restore_plan(rp)), "restore_plan", title="Restore backup")
    if not rp.ok:
        run.status, run.message = "refused", rp.refused_because
        return run
    if not rp.has_work:
        run.status, run.message = "nothing_to_do", "the folder already equals the backup"
        return run
    if request.dry_run:
        run.status = "planned"
        run.message = (
            f"nothing was changed; a restore would replace {len(rp.replace)}, create {len(rp.create)} and "
            f"remove {len(rp.remove)} file(s) in {rp.target}"
        )
        return run
    if not (yield Ask(restore_question(rp))):
        run.status, run.message = "declined", "not restored: not confirmed"
        return run
    outcome: RestoreOutcome = yield Work(
        "Restoring…",
        lambda _c: execute_restore(
            rp,
            backup_root=request.backup_root,
            index_path=request.index_path,
            state_dir=request.state_dir,
            writable=writable,
        ),
    )
    run.outcome = outcome
    run.status, run.message = outcome.status, outcome.message
    return run


# -- the synchronous driver ----------------------------------------------------------------------------


def drive(flow: Flow[R], prompter: Prompter, control: Control | None = None) -> R:
    """Run a flow to its end on this thread, answering through ``prompter``; returns its result.

    Work runs here, with ``control`` (default: never cancelled, no progress). An exception that
    work raises goes back into the flow; one the flow does not handle comes out of here.
    """
    ctl = control or Control()
    answer: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = flow.throw(error) if error is not None else flow.send(answer)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        answer, error = None, None
        if isinstance(step, Tell):
            prompter.notify(step.text, title=step.title, level=step.level)
        elif isinstance(step, Ask):
            answer = prompter.ask(step.question)
        elif isinstance(step, Review):
            answer = prompter.review(step)
        elif isinstance(step, ChooseBackup):
            answer = prompter.choose_backup(step.backups, step.start)
        else:
            ctl.begin(step)
            try:
                answer = step.run(ctl)
            except Exception as exc:  # back into the flow, which decides
                error = exc
            finally:
                ctl.end(step)


def run_guarded_replay(
    request: ReplayRequest,
    prompter: Prompter,
    *,
    registry: HandlerRegistry | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    now: float | None = None,
    writable: Callable[[Path], bool] = folder_writable,
    control: Control | None = None,
) -> ReplayRun:
    """:func:`replay_flow` driven synchronously (the command line, scripts, tests); ``control``,
    when given, is used as it is (``should_continue`` and ``on_progress`` are then ignored)."""
    if control is None:
        control = Control(should_continue or (lambda: True), on_progress or (lambda done, total: None))
    return drive(replay_flow(request, registry=registry, now=now, writable=writable), prompter, control)


def run_guarded_restore(
    backup_path: str | os.PathLike[str],
    prompter: Prompter,
    *,
    to: str | os.PathLike[str] | None = None,
    index_path: str | os.PathLike[str] | None = None,
    backup_root: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    writable: Callable[[Path], bool] = folder_writable,
) -> RestoreRun:
    """:func:`restore_flow` for one backup, driven synchronously."""
    request = RestoreRequest(
        backup=Path(backup_path),
        to=Path(to) if to is not None else None,
        dry_run=dry_run,
        backup_root=Path(backup_root) if backup_root is not None else None,
        index_path=Path(index_path) if index_path is not None else None,
        state_dir=Path(state_dir) if state_dir is not None else None,
    )
    return drive(restore_flow(request, writable=writable), prompter)


# Besides the flow: the values the steps hand over and their texts, which drivers and the
# window's dialogs import from here, never from the step modules.
__all__ = [
    "MAX_REPLANS",
    "SCOPE_KINDS",
    "Ask",
    "BackupSummary",
    "BadInputError",
    "ChooseBackup",
    "Control",
    "Flow",
    "GuardedReplayError",
    "Plan",
    "PlannedEvent",
    "Preflight",
    "ReplayOutcome",
    "ReplayRequest",
    "ReplayRun",
    "RestoreOutcome",
    "RestorePlan",
    "RestoreRequest",
    "RestoreRun",
    "Review",
    "Scope",
    "Step",
    "Tell",
    "Work",
    "confirm_question",
    "default_backup_root",
    "default_index_path",
    "describe_diff",
    "describe_journal_repair",
    "describe_outcome",
    "drive",
    "replay_flow",
    "restore_flow",
    "run_guarded_replay",
    "run_guarded_restore",
]
