"""The synchronous driver (command line, scripts, tests): :func:`run_guarded_replay` runs every
guard in order, asking through a :class:`~inspector.core.replay.prompter.ReplayPrompter`.

Parking a held event is a scope like the others (``Scope("park", park=EVENT_ID)``): the window,
which runs :func:`~inspector.core.replay.plan.make_plan` and
:func:`~inspector.core.replay.execute.execute` itself, parks through the same two calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.replay.backup import check_backup_root, default_backup_root
from inspector.core.replay.describe import describe_plan, describe_preflight
from inspector.core.replay.errors import FolderBusyError
from inspector.core.replay.execute import ReplayOutcome, execute
from inspector.core.replay.plan import Plan, Scope, make_plan
from inspector.core.replay.preflight import Preflight, folder_writable, preflight
from inspector.core.replay.prompter import ASK_APPLY, ASK_EXTRACT, ASK_RECENT_WRITES, Question, ReplayPrompter
from inspector.core.replay.target import extract_export, resolve_target, suggest_extract_dir
from journal.handlers import HandlerRegistry

#: How often a run re-plans after the folder changed under it before giving up.
MAX_REPLANS = 3


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """What a person asked for.

    Attributes:
        path: memory root, character folder or zip export.
        character: the character.
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
    character: str
    scope: Scope = field(default_factory=Scope)
    backup_root: Path | None = None
    override_server_lock: bool = False
    dry_run: bool = False
    state_dir: Path | None = None
    max_replans: int = MAX_REPLANS
    index_path: Path | None = None


@dataclass(slots=True)
class ReplayRun:
    """Everything a driven run went through.

    Attributes:
        preflight: the first guard.
        plans: every plan made (more than one after re-planning).
        outcomes: every execution (a ``changed`` one is followed by a new plan).
        status: ``applied`` / ``nothing_to_do`` / ``stopped`` / ``cancelled`` / ``refused`` /
            ``failed`` / ``declined`` (the person said no) / ``planned`` (dry run).
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


def confirm_question(plan: Plan, backup_root: Path, preflight_: Preflight | None, replanned: bool = False) -> Question:
    """The "apply this plan?" question (the plan itself is in ``details``)."""
    verb = "Re-apply" if plan.scope.kind == "repair" else "Apply"
    text = f"{verb} {len(plan.events)} event(s) to {plan.target.character}? A backup goes to {backup_root} first."
    if plan.park is not None:
        text = (
            f"Park event #{plan.park.event.index} ({plan.park.event.type}) for good, so that it is never applied, "
            f"and apply {len(plan.events)} event(s) to {plan.target.character}? A backup goes to {backup_root} first."
        )
    if replanned:
        text = "The folder changed, so this is a new plan. " + text
    if preflight_ is not None and preflight_.warnings:
        text += " Warnings: " + "; ".join(w.message for w in preflight_.warnings)
    return Question(ASK_APPLY, "Guarded replay", text, "\n".join(describe_plan(plan)), default=False)


def run_guarded_replay(
    request: ReplayRequest,
    prompter: ReplayPrompter,
    *,
    registry: HandlerRegistry | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    now: float | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> ReplayRun:
    """Run every guard in order, asking through ``prompter``; re-plan when the folder changed.

    Raises:
        BadInputError: bad path, character, event id or backup folder (exit code 2).
    """
    run = ReplayRun()
    target = resolve_target(request.path, request.character)
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
    prompter.notify("\n".join(describe_preflight(pf)))
    if target.zip_path is not None:
        run.status = "refused"
        run.message = next(r.message for r in pf.refusals if r.code == "input.zip_export")
        dest = suggest_extract_dir(target.zip_path)
        q = Question(
            ASK_EXTRACT,
            "Zip export",
            f"{target.zip_path} is a zip export and replay writes. Extract it to {dest} first?",
            "The zip is left as it is; replay the extracted folder afterwards.",
        )
        if prompter.ask(q):
            run.extracted_to = extract_export(target.zip_path, dest)
            run.message += f". Extracted to {dest}: replay that folder."
            prompter.notify(f"Extracted to {dest}.")
        return run
    blocking = list(pf.refusals)
    if blocking and not request.dry_run:
        run.status, run.message = "refused", "; ".join(r.message for r in blocking)
        return run
    try:
        plan = make_plan(target, request.scope, registry=registry)
    except FolderBusyError as exc:
        run.status, run.message = "refused", str(exc)
        return run
    run.plans.append(plan)
    prompter.notify("\n".join(describe_plan(plan)))
    if request.dry_run:
        run.status = "planned"
        run.message = "dry run: nothing was changed"
        if blocking:
            run.message += "; an apply would be refused: " + "; ".join(r.message for r in blocking)
        return run
    def nothing_to_apply(plan: Plan) -> ReplayRun:
        # A plan with no work still goes through execute: it records the outcome and the report.
        outcome = execute(
            plan,
            backup_root=backup_root,
            preflight_=pf,
            state_dir=request.state_dir,
            registry=registry,
            index_path=request.index_path,
        )
        run.outcomes.append(outcome)
        run.status, run.message = outcome.status, outcome.message
        return run

    if not plan.has_work:
        return nothing_to_apply(plan)
    if pf.recent and not prompter.ask(
        Question(
            ASK_RECENT_WRITES,
            "A writer may be active",
            next(w.message for w in pf.warnings if w.code == "files.recent") + ". Go on anyway?",
        )
    ):
        run.status, run.message = "declined", "not applied: files changed recently"
        return run
    replans = 0
    while True:
        if not prompter.ask(confirm_question(plan, backup_root, pf, replanned=replans > 0)):
            run.status, run.message = "declined", "not applied: the plan was not confirmed"
            return run
        outcome = execute(
            plan,
            backup_root=backup_root,
            preflight_=pf,
            state_dir=request.state_dir,
            registry=registry,
            should_continue=should_continue,
            on_progress=on_progress,
            index_path=request.index_path,
        )
        run.outcomes.append(outcome)
        if outcome.status != "changed":
            run.status, run.message = outcome.status, outcome.message
            return run
        prompter.notify(f"Refused: {outcome.message}. Re-planning.")
        replans += 1
        if replans > request.max_replans:
            run.status, run.message = (
                "refused",
                f"the folder kept changing; gave up after {request.max_replans} re-plans",
            )
            return run
        try:
            plan = make_plan(target, request.scope, registry=registry)
        except FolderBusyError as exc:
            run.status, run.message = "refused", str(exc)
            return run
        run.plans.append(plan)
        prompter.notify("\n".join(describe_plan(plan)))
        if not plan.has_work:
            return nothing_to_apply(plan)
